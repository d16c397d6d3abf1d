// Runs generator/verifier/browser/check.js under Node for tests/browser/test_browser_check.py: one JSON request
// on stdin, one JSON answer on stdout. The site's files are read from a folder, as a browser would fetch them
// from the site root; BigInt rationals and Maps are turned into plain JSON here so that Python can compare them.
"use strict";
const fs = require("fs");
const path = require("path");
const { pathToFileURL } = require("url");
const BROWSER = path.join(__dirname, "..", "..", "generator", "verifier", "browser");
const check = require(path.join(BROWSER, "check.js"));

// `modules`: the folder check.js's modules are loaded from (the shipped ones by default), or null for a page that
// cannot load one.
function siteEnv(site, now, modules = BROWSER) {
  return {
    now: () => now || "2026-12-01T00:00:00Z",
    onStep: () => {},
    ...(modules === null ? {} : { importModule: (name) => import(pathToFileURL(path.join(modules, name)).href) }),
    async fetch(url) {
      const file = path.resolve(site, url);
      if (!file.startsWith(path.resolve(site) + path.sep)) throw new Error(`outside the site: ${url}`);
      return fs.existsSync(file) && fs.statSync(file).isFile() ? new Uint8Array(fs.readFileSync(file)) : null;
    },
  };
}

const q = (x) => `${x.n}/${x.d}`;

const OPS = {
  // Scoring functions on many cases: each case is [function name, arguments]; methodology documents are parsed once.
  async scoring({ methodology, cases }) {
    const m = check.parseMethodology(methodology);
    return cases.map(([fn, args]) => {
      switch (fn) {
        case "wilson":
          return check.wilsonInterval(...args);
        case "round":
          return check.roundHalfUp(check.Q(BigInt(args[0]), BigInt(args[1])), args[2]);
        case "grade_counts":
          return check.gradeCounts(args[0], args[1], m);
        case "band_score":
          return check.bandScore(...args);
        case "score_item": {
          const s = check.scoreItem(args.map(([name, tier, sim]) => [name, tier, check.similarityValue(sim)]), m);
          return { score: q(s.score), text: s.text, passed: s.passed, below: s.below };
        }
        case "similarity":
          return check.computedSimilarity(...args);
        case "keep_bullets": {
          const [kept, dropped] = check.keepBullets(args[0], new Set(args[1]));
          return [kept.length, dropped];
        }
        case "isqrt":
          return check.isqrt(BigInt(args[0])).toString();
        default:
          throw new Error(`unknown case ${fn}`);
      }
    });
  },
  // recheck_certificate on given inputs: the certificate, methodology, answers and details by item, the record.
  async recheck({ cert, methodology, public: isPublic, answers, details, record, rules }) {
    const m = check.parseMethodology(methodology);
    const out = check.recheckCertificate(cert, m, isPublic, new Map(Object.entries(answers)), new Map(Object.entries(details)), record, rules);
    return out;
  },
  async check_certificate({ cert, spec, methodology, public: isPublic, spec_path, spec_sha256 }) {
    return check.checkCertificate(cert, spec, check.parseMethodology(methodology), isPublic, spec_path, spec_sha256);
  },
  async page({ site, kind, path: p, now, modules }) {
    return check.checkPage(siteEnv(site, now, modules), { kind, path: p, root: "" });
  },
  async file({ site, file, now, modules }) {
    return check.checkFile(siteEnv(site, now, modules), { data: new Uint8Array(fs.readFileSync(file)), root: "" });
  },
  // The script's constants, and how an outcome names the key of each fingerprint given.
  async constants({ fingerprints }) {
    return { outcomes: check.OUTCOMES, demo_keys: check.PUBLISHED_DEMO_KEYS, key_words: fingerprints.map(check.keyWords) };
  },
  async merkle({ cases }) {
    const out = [];
    for (const c of cases) {
      try {
        if (c.op === "inclusion") {
          const root = await check.rootFromInclusion(BigInt(c.index), BigInt(c.size), check.unhex(c.leaf_hash), c.proof.map(check.unhex));
          out.push(check.hex(root));
        } else {
          await check.verifyConsistency(BigInt(c.old_size), BigInt(c.new_size), c.proof.map(check.unhex), check.unhex(c.old_root), check.unhex(c.new_root));
          out.push("ok");
        }
      } catch (e) {
        if (!(e instanceof check.Failed)) throw e;
        out.push(`error: ${e.message}`);
      }
    }
    return out;
  },
  // PROOF(m, D[n]) made from the hash tiles in a folder (the log prefix): per [m, n], its hashes in hex and the tiles
  // read, or how it ended ("failed: …", "could not check: …").
  async tiles({ folder, cases }) {
    const read = async (p) => siteEnv(folder).fetch(p);
    const out = [];
    for (const [m, n] of cases) {
      try {
        const { proof, tiles } = await check.consistencyFromTiles(read, BigInt(m), BigInt(n));
        out.push({ proof: proof.map(check.hex), tiles });
      } catch (e) {
        if (e instanceof check.Failed) out.push(`failed: ${e.message}`);
        else if (e instanceof check.CannotCheck) out.push(`could not check: ${e.message}`);
        else throw e;
      }
    }
    return out;
  },
  // ML-DSA-44's signed message for each [cosigner, timestamp, origin, size] (the size a decimal string), how one with
  // an origin too long is refused, and each vkey read as any of the three types.
  async ml_dsa({ cases, root, vkeys }) {
    const messages = cases.map(([name, ts, origin, size]) =>
      check.hex(check.subtreeMessage(name, BigInt(ts), origin, BigInt(size), check.unhex(root))));
    let tooLong = null;
    try {
      check.subtreeMessage("w", 0n, "o".repeat(256), 1n, check.unhex(root));
    } catch (e) {
      if (!(e instanceof check.Failed)) throw e;
      tooLong = `failed: ${e.message}`;
    }
    const parsed = [];
    for (const v of vkeys) {
      const k = await check.parseVkey(v, [0x01, 0x04, 0x06]);
      parsed.push({ kind: k.kind, type: k.type, id: check.hex(k.id), fingerprint: k.fingerprint, label: k.label, size: k.pub.length });
    }
    return { messages, too_long: tooLong, vkeys: parsed };
  },
  // Each input a JSON text, or {hex} for bytes that are not UTF-8: its canonical text, or null if refused.
  async canonical({ texts }) {
    return texts.map((t) => {
      try {
        return check.canonical(check.parseCanonical(typeof t === "string" ? new TextEncoder().encode(t) : check.unhex(t.hex)));
      } catch (e) {
        if (!(e instanceof check.Failed)) throw e;
        return null;
      }
    });
  },
};

// A browser whose WebCrypto lacks Ed25519, as older ones do: importKey refuses the algorithm by name.
function withoutEd25519() {
  const real = crypto.subtle.importKey.bind(crypto.subtle);
  crypto.subtle.importKey = (format, key, alg, ...rest) =>
    alg && alg.name === "Ed25519" ? Promise.reject(new DOMException("Unrecognized name", "NotSupportedError")) : real(format, key, alg, ...rest);
}

// A browser whose WebCrypto has ML-DSA-44 (WICG's Modern Algorithms: a "raw-public" key), played by the shipped module;
// "says-no" answers false to every signature, as a broken implementation would.
async function withWebCryptoMlDsa(how) {
  const { ml_dsa44 } = await import(pathToFileURL(path.join(BROWSER, "mldsa44.js")).href);
  const [importKey, verify] = [crypto.subtle.importKey.bind(crypto.subtle), crypto.subtle.verify.bind(crypto.subtle)];
  const keys = new WeakMap();
  crypto.subtle.importKey = async (format, key, alg, ...rest) => {
    if (!(alg && alg.name === "ML-DSA-44")) return importKey(format, key, alg, ...rest);
    if (format !== "raw-public") throw new DOMException("Unsupported format", "NotSupportedError");
    const handle = {};
    keys.set(handle, new Uint8Array(key));
    return handle;
  };
  crypto.subtle.verify = async (alg, key, sig, msg) => {
    if (!(alg && alg.name === "ML-DSA-44")) return verify(alg, key, sig, msg);
    globalThis.webCryptoMlDsaCalls = (globalThis.webCryptoMlDsaCalls || 0) + 1;
    return how === "says-no" ? false : ml_dsa44.verify(new Uint8Array(sig), new Uint8Array(msg), keys.get(key));
  };
}

let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", async () => {
  const request = JSON.parse(input);
  if (request.no_ed25519) withoutEd25519();
  if (request.webcrypto_ml_dsa) await withWebCryptoMlDsa(request.webcrypto_ml_dsa);
  const answer = await OPS[request.op](request);
  process.stdout.write(JSON.stringify(answer, (k, v) => (typeof v === "bigint" ? v.toString() : v)));
});
