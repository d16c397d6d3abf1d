/* check.js: "Verify in this browser" and "Check a file you were sent" (FORMAT.md, "In-browser verification").

   One small script, no framework, nothing loaded from elsewhere. With only the browser's WebCrypto (SHA-256,
   Ed25519, ML-DSA-44 where it has it) and the site's own files (mldsa44.js for ML-DSA-44 where WebCrypto lacks it,
   imported only then) it checks what `verify.py proof` checks for one artifact (its hash against its ledger leaf,
   the leaf's inclusion proof, the checkpoint's signatures, the witnesses' cosignatures) and, for a
   certificate, recomputes every derived field with exact rationals (BigInt) as generator/verifier/rules/scoring.py and
   recheck.py do: both must reach the same result to the digit, and the tests compare them. Problems are worded as
   the Python verifier words them.

   Pages work without it: the script only un-hides its controls. The pure functions come first and are exported
   for Node (the tests); the DOM is touched only by init(), run when there is a document. */
(function (exports) {
  "use strict";

  // How a step ends when it does not pass. Anything else thrown is a bug of this script: "could not check".
  class Failed extends Error {} // the file or the site breaks a rule
  class CannotCheck extends Error {} // this browser, this page or a missing file keeps us from telling

  const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const utf8 = (s) => new TextEncoder().encode(s);
  const isObj = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
  const isInt = (v) => typeof v === "number" && Number.isInteger(v);
  // Own members only: "constructor" is a valid item id, and `in` would find it on every object.
  const has = (o, k) => isObj(o) && Object.hasOwn(o, k);

  // A Failed from `fn` said in the words of what was being read ("its inclusion proof is malformed: …").
  async function within(prefix, fn) {
    try {
      return await fn();
    } catch (e) {
      throw e instanceof Failed ? new Failed(prefix + e.message) : e;
    }
  }

  // ------------------------------------------------------------------------------------------------ bytes
  function concat(...parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
    return out;
  }
  const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const unhex = (s) => Uint8Array.from(s.match(/../g) || [], (h) => parseInt(h, 16));
  const sameBytes = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  const latin1 = (b) => Array.from(b, (x) => String.fromCharCode(x)).join("");
  const b64encode = (b) => btoa(latin1(b));
  const B64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

  // Strict base64 (core/public_keys.py b64decode_strict); `loose` is note.py's reading, which allows a non-canonical form.
  function b64decode(text, loose = false) {
    if (!B64_RE.test(text)) throw new Failed(`${show(text.slice(0, 40))} is not standard padded base64`);
    const out = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    if (!loose && b64encode(out) !== text) throw new Failed(`${show(text.slice(0, 40))} is not in canonical base64 form`);
    return out;
  }

  function subtle() {
    const c = globalThis.crypto;
    if (!c || !c.subtle) throw new CannotCheck("this page cannot use the browser's WebCrypto, which needs HTTPS or localhost");
    return c.subtle;
  }
  const sha256 = async (bytes) => new Uint8Array(await subtle().digest("SHA-256", bytes));

  // ---------------------------------------------------------------------------------------------- Ed25519
  const NO_ED25519 =
    "this browser's WebCrypto has no Ed25519 (current Chrome, Edge, Firefox and Safari have it), so no signature can be checked here";
  // RFC 8032 §7.1 TEST 1: a browser that cannot verify it must say so, not report every signature as bad.
  const TEST1 = ["d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"];
  let ed25519Works = null;

  async function ed25519Raw(pub, sig, msg) {
    const key = await subtle().importKey("raw", pub, { name: "Ed25519" }, false, ["verify"]);
    return subtle().verify({ name: "Ed25519" }, key, sig, msg);
  }
  async function ed25519Verify(pub, sig, msg) {
    ed25519Works ||= ed25519Raw(unhex(TEST1[0]), unhex(TEST1[1]), new Uint8Array(0)).catch((e) => {
      if (e instanceof CannotCheck) throw e;
      return false;
    });
    if (!(await ed25519Works)) throw new CannotCheck(NO_ED25519);
    if (pub.length !== 32 || sig.length !== 64) return false;
    return ed25519Raw(pub, sig, msg).catch(() => false); // a key that is no curve point verifies nothing
  }

  // ------------------------------------------------------------------------------------ ML-DSA-44 (FIPS 204)
  // The log's second signature and a witness's cosignature of type 0x06 (c2sp.org/tlog-cosignature): pure ML-DSA-44,
  // empty context. WebCrypto may have it (WICG's "Modern Algorithms in WebCrypto", a key imported as "raw-public");
  // where it does not, the site ships ML_DSA_MODULE beside this script, @noble/post-quantum's ml_dsa44 built into one
  // ES module (tools/make_mldsa_module.py), loaded only when an ML-DSA-44 signature is met. Neither at hand, the
  // signature is "could not check": never valid, never failed.
  const ML_DSA_44_PUBLIC_KEY_SIZE = 1312, ML_DSA_44_SIGNATURE_SIZE = 2420;
  const ML_DSA_MODULE = "mldsa44.js";
  const NO_ML_DSA = "this browser's WebCrypto has no ML-DSA-44 (FIPS 204)";
  let mlDsaModule = null;

  // The browser's own ML-DSA-44: true or false, or null where it has none.
  async function webCryptoMlDsa(pub, sig, msg) {
    let key;
    try {
      key = await subtle().importKey("raw-public", pub, { name: "ML-DSA-44" }, false, ["verify"]);
    } catch (e) {
      if (e instanceof CannotCheck) throw e;
      return null;
    }
    return subtle().verify({ name: "ML-DSA-44" }, key, sig, msg).catch(() => null);
  }

  // The site's module, imported once (env.importModule: a name beside this script to the module); CannotCheck when it
  // cannot be loaded or is not the module this script expects.
  function mlDsaLibrary(env) {
    mlDsaModule ||= (async () => {
      const cannot = (why) => new CannotCheck(`${NO_ML_DSA}, and ${why}`);
      if (!env.importModule) throw cannot(`this page cannot load ${ML_DSA_MODULE}, which verifies it in JavaScript`);
      let mod;
      try {
        mod = await env.importModule(ML_DSA_MODULE);
      } catch (e) {
        throw cannot(`the site's ${ML_DSA_MODULE}, which verifies it in JavaScript, could not be loaded (${e && e.message})`);
      }
      if (!(mod && mod.ml_dsa44 && typeof mod.ml_dsa44.verify === "function"))
        throw cannot(`the site's ${ML_DSA_MODULE} is not the ML-DSA-44 module this script expects`);
      return { verify: mod.ml_dsa44.verify, by: `the site's ${ML_DSA_MODULE} (${typeof mod.source === "string" ? mod.source : "?"})` };
    })();
    return mlDsaModule;
  }

  // Whether `sig` is `pub`'s ML-DSA-44 signature of `msg`, and what checked it: {ok, by}. A "no" of the browser's
  // WebCrypto is asked again of the site's module: a browser's new algorithm alone does not fail a site.
  async function mlDsaVerify(env, pub, sig, msg) {
    if (pub.length !== ML_DSA_44_PUBLIC_KEY_SIZE || sig.length !== ML_DSA_44_SIGNATURE_SIZE) return { ok: false, by: null };
    if ((await webCryptoMlDsa(pub, sig, msg)) === true) return { ok: true, by: "this browser's WebCrypto" };
    const lib = await mlDsaLibrary(env);
    let ok;
    try {
      ok = lib.verify(sig, msg, pub) === true;
    } catch (e) {
      ok = false; // FIPS 204: a signature that does not decode does not verify
    }
    return { ok, by: lib.by };
  }

  // ------------------------------------------------------------------------------- canonical JSON (format v1 §1)
  const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

  function canonical(v) {
    if (v === null || v === true || v === false) return String(v);
    if (typeof v === "number") {
      if (!Number.isSafeInteger(v)) throw new Failed("a number that is not an integer within ±(2^53−1)");
      return String(v);
    }
    if (typeof v === "string") {
      if (LONE_SURROGATE.test(v)) throw new Failed("a string holding a lone surrogate");
      return JSON.stringify(v);
    }
    if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
    // UTF-16 order is code-point order for keys inside the Basic Multilingual Plane, which §1 requires.
    const keys = Object.keys(v).sort();
    if (keys.some((k) => /[\ud800-\udfff]/.test(k))) throw new Failed("an object key outside the Basic Multilingual Plane");
    return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonical(v[k])).join(",") + "}";
  }

  // JSON.parse forgives what §1 forbids (duplicate keys, 1.0, 1e2, whitespace); the bytes must be the canonical
  // form of what was parsed, so each of those shows as a difference.
  function parseCanonical(bytes, what = "the file") {
    let text, value;
    try {
      text = UTF8.decode(bytes);
      value = JSON.parse(text);
    } catch (e) {
      throw new Failed(`${what} is not JSON in UTF-8`);
    }
    if (canonical(value) !== text) throw new Failed(`${what} is not in canonical form (RFC 8785), the form the ledger hashes`);
    return value;
  }

  // Python's json.dumps(value, ensure_ascii=False), cut as text.show cuts it, so messages read as verify.py's.
  function pyJson(v) {
    if (Array.isArray(v)) return "[" + v.map(pyJson).join(", ") + "]";
    if (isObj(v)) return "{" + Object.keys(v).map((k) => JSON.stringify(k) + ": " + pyJson(v[k])).join(", ") + "}";
    return v === undefined ? "null" : JSON.stringify(v);
  }
  function show(v, limit = 80) {
    const chars = Array.from(pyJson(v));
    return chars.length <= limit ? chars.join("") : chars.slice(0, limit - 1).join("") + "…";
  }
  function typeName(v) {
    if (v === null || v === undefined) return "null";
    if (typeof v === "number") return isInt(v) ? "an integer" : "a fraction";
    if (typeof v !== "object") return typeof v === "string" ? "a string" : "a boolean";
    return Array.isArray(v) ? "a list" : "an object";
  }
  // Python sorts strings by code point, JavaScript by UTF-16 unit.
  function cpCompare(a, b) {
    const x = Array.from(a, (c) => c.codePointAt(0)), y = Array.from(b, (c) => c.codePointAt(0));
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  }
  const cpSorted = (list) => [...list].sort(cpCompare);

  const ID_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/, VERSION_RE = /^[0-9A-Za-z][0-9A-Za-z._-]{0,31}$/;
  const DECIMAL_RE = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;
  // ASCII digits only, as the verifier's TIME_RE: a time written in other digits is no time.
  const TIME_RE = /^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z$/u;
  const isTime = (v) => typeof v === "string" && TIME_RE.test(v);
  const isHex64 = (v) => typeof v === "string" && /^[0-9a-f]{64}$/.test(v);
  // Python's str.isspace(): what Go's note package also refuses in a key name.
  const SPACE_RE = /[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;
  const validKeyName = (n) => typeof n === "string" && n !== "" && !n.includes("+") && !SPACE_RE.test(n);

  // ----------------------------------------------------------------------- Merkle proofs (RFC 9162 §2.1)
  const leafHash = (data) => sha256(concat(Uint8Array.of(0), data));
  const nodeHash = (l, r) => sha256(concat(Uint8Array.of(1), l, r));

  // §2.1.3.2 (merkle.py root_from_inclusion_proof); index and size are BigInt.
  async function rootFromInclusion(index, size, leaf, proof) {
    if (size <= 0n || index < 0n || index >= size) throw new Failed(`index ${index} is outside a tree of size ${size}`);
    let fn = index, sn = size - 1n, r = leaf;
    for (const p of proof) {
      if (sn === 0n) throw new Failed(`proof has ${proof.length} hashes, more than a tree of size ${size} needs`);
      if (fn & 1n || fn === sn) {
        r = await nodeHash(p, r);
        while (!(fn & 1n) && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
      } else r = await nodeHash(r, p);
      [fn, sn] = [fn >> 1n, sn >> 1n];
    }
    if (sn !== 0n) throw new Failed(`proof has ${proof.length} hashes, fewer than index ${index} of size ${size} needs`);
    return r;
  }

  // §2.1.4.2 (merkle.py verify_consistency).
  async function verifyConsistency(oldSize, newSize, proof, oldRoot, newRoot) {
    const mismatch = (want, got) => new Failed(`the proof leads to root ${b64encode(got)}, not ${b64encode(want)}`);
    if (oldSize < 0n || newSize < oldSize) throw new Failed(`sizes ${oldSize} → ${newSize}: the new tree must not be smaller`);
    if (oldSize === newSize || oldSize === 0n) {
      if (proof.length) throw new Failed(`a proof ${oldSize ? "between equal sizes" : "from the empty tree"} must be empty`);
      if (oldSize && !sameBytes(oldRoot, newRoot)) throw mismatch(oldRoot, newRoot);
      return;
    }
    if (!proof.length) throw new Failed("empty consistency proof between different sizes");
    const hashes = (oldSize & (oldSize - 1n)) === 0n ? [oldRoot, ...proof] : proof;
    let fn = oldSize - 1n, sn = newSize - 1n, fr = hashes[0], sr = hashes[0];
    while (fn & 1n) [fn, sn] = [fn >> 1n, sn >> 1n];
    for (const c of hashes.slice(1)) {
      if (sn === 0n) throw new Failed(`proof has ${proof.length} hashes, more than ${oldSize} → ${newSize} needs`);
      if (fn & 1n || fn === sn) {
        [fr, sr] = [await nodeHash(c, fr), await nodeHash(c, sr)];
        while (!(fn & 1n) && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
      } else sr = await nodeHash(sr, c);
      [fn, sn] = [fn >> 1n, sn >> 1n];
    }
    if (sn !== 0n) throw new Failed(`proof has ${proof.length} hashes, fewer than ${oldSize} → ${newSize} needs`);
    if (!sameBytes(fr, oldRoot)) throw mismatch(oldRoot, fr);
    if (!sameBytes(sr, newRoot)) throw mismatch(newRoot, sr);
  }

  // ------------------------------------------------------- consistency proofs from the tiles (tile_proofs.py)
  // A proof pinned to an older checkpoint reaches today's by PROOF(m, D[n]), which no file need hold (format v3
  // publishes one proof per release): each of its nodes is an aligned complete subtree of today's tree, and one of
  // height 8L + r is the root of 2^r consecutive hashes of one level-L hash tile (C2SP tlog-tiles). Sizes are BigInt.
  const TILE_WIDTH = 256, TILE_HASH_BYTES = 32, TILE_HEIGHT = 8n;

  // tiles.py tile_number_path: groups of three digits, each but the last prefixed by x (1234067 is x001/x234/067).
  function tileNumberPath(n) {
    const digits = n.toString().padStart(Math.ceil(n.toString().length / 3) * 3, "0");
    const groups = digits.match(/.../g);
    return groups.map((g, i) => (i < groups.length - 1 ? "x" + g : g)).join("/");
  }
  const hashTilePath = (level, index, width) =>
    `tile/${level}/${tileNumberPath(index)}${width === TILE_WIDTH ? "" : `.p/${width}`}`;

  // The leaf ranges [lo, hi) whose roots are PROOF(m, D[n])'s hashes, in the proof's order (consistency_ranges).
  function consistencyRanges(m, n) {
    if (m < 0n || n < m) throw new Failed(`sizes ${m} → ${n}: the new tree must not be smaller`);
    if (m === 0n || m === n) return [];
    const ranges = [];
    let lo = 0n, hi = n, complete = true;
    while (m !== hi - lo) {
      let k = 1n;
      while (k * 2n < hi - lo) k *= 2n;
      if (m <= k) {
        ranges.push([lo + k, hi]);
        hi = lo + k;
      } else {
        ranges.push([lo, lo + k]);
        [lo, m, complete] = [lo + k, m - k, false];
      }
    }
    if (!complete) ranges.push([lo, hi]);
    return ranges.reverse();
  }

  // The aligned complete subtrees [height, index] of a range, largest first (complete_subtrees).
  function completeSubtrees(lo, hi) {
    const out = [];
    while (lo < hi) {
      let h = 0n;
      while (1n << (h + 1n) <= hi - lo) h++;
      while (lo % (1n << h)) h--;
      out.push([h, lo >> h]);
      lo += 1n << h;
    }
    return out;
  }

  // The root of 2^r consecutive hashes: a perfect tree, paired level by level.
  async function perfectRoot(hashes) {
    while (hashes.length > 1) {
      const up = [];
      for (let i = 0; i < hashes.length; i += 2) up.push(nodeHash(hashes[i], hashes[i + 1]));
      hashes = await Promise.all(up);
    }
    return hashes[0];
  }

  // PROOF(m, D[n]) from the hash tiles of the log at size n, through `read` (a path under the log prefix to its bytes,
  // or null), and the paths of the tiles it read. Only the tiles under the proof's nodes are read, each once; a
  // missing one is "could not check", one of the wrong length fails. Nothing here is trusted: the caller checks the
  // proof against both roots, so a tile with wrong hashes makes that check fail.
  async function consistencyFromTiles(read, m, n) {
    const nodes = consistencyRanges(m, n).map(([lo, hi]) => completeSubtrees(lo, hi).map(([h, index]) => {
      const level = h / TILE_HEIGHT, rest = h % TILE_HEIGHT, first = index << rest, tile = first >> TILE_HEIGHT;
      const count = (n >> (TILE_HEIGHT * level)) - tile * BigInt(TILE_WIDTH);
      const width = Number(count < TILE_WIDTH ? count : TILE_WIDTH);
      const start = Number(first % BigInt(TILE_WIDTH));
      return { path: hashTilePath(level, tile, width), width, start, count: 1 << Number(rest) };
    }));
    const widths = new Map(nodes.flat().map((t) => [t.path, t.width])), tiles = new Map();
    // Fetched together; of two bad tiles the first in the proof's order is the one reported, whichever answers first.
    const got = await Promise.allSettled([...widths].map(async ([path, width]) => {
      const data = await read(path), where = `${LEDGER_PREFIX}/${path}`, want = width * TILE_HASH_BYTES;
      if (data === null) throw new CannotCheck(`the site has no ${where}, a hash tile of today's tree`);
      if (data.length !== want) throw new Failed(`${where}: ${data.length} bytes, not the ${want} of its ${width} hashes`);
      tiles.set(path, data);
    }));
    const bad = got.find((r) => r.status === "rejected");
    if (bad) throw bad.reason;
    const proof = [];
    for (const subtrees of nodes) {
      const roots = await Promise.all(subtrees.map(({ path, start, count }) => perfectRoot(Array.from({ length: count },
        (_, i) => tiles.get(path).subarray((start + i) * TILE_HASH_BYTES, (start + i + 1) * TILE_HASH_BYTES)))));
      let node = roots.pop();
      while (roots.length) node = await nodeHash(roots.pop(), node); // RFC 6962 folds from the right
      proof.push(node);
    }
    return { proof, tiles: [...widths.keys()] };
  }

  // ------------------------------------------------------------------------ C2SP tlog-proof (tlogproof.py)
  const TLOG_PROOF_HEADER = "c2sp.org/tlog-proof@v1";
  // A proof is a header, an extra and an index line, at most 63 hashes (RFC 6962: no tree below 2^63 leaves is
  // deeper) and a checkpoint of at most 100 signatures: some kilobytes. A hostile file of a million lines is refused
  // by its size or its line count before any line is decoded.
  const MAX_TLOG_PROOF_BYTES = 1 << 20, MAX_PROOF_HASHES = 63;

  function parseTlogProof(data) {
    if (data.length > MAX_TLOG_PROOF_BYTES)
      throw new Failed(`${data.length} bytes: a proof of at most ${MAX_PROOF_HASHES} hashes and one checkpoint is far smaller than 1 MiB`);
    let cut = -1;
    for (let i = 0, newlines = 0; i + 1 < data.length; i++) {
      if (data[i] !== 10) continue;
      if (data[i + 1] === 10) {
        cut = i;
        break;
      }
      if (++newlines > MAX_PROOF_HASHES + 2)
        throw new Failed(`more than ${MAX_PROOF_HASHES} hashes: no tree below 2^63 leaves needs more than ${MAX_PROOF_HASHES}`);
    }
    if (cut < 0) throw new Failed("no empty line before the checkpoint");
    if (data.subarray(0, cut).some((b) => b > 127)) throw new Failed("the lines before the checkpoint must be ASCII");
    const lines = latin1(data.subarray(0, cut)).split("\n");
    if (lines[0] !== TLOG_PROOF_HEADER) throw new Failed(`line 1 must be '${TLOG_PROOF_HEADER}'`);
    const field = (text, n, what) => {
      try {
        return b64decode(text);
      } catch (e) {
        throw new Failed(`line ${n}: the ${what} is not canonical base64`);
      }
    };
    let k = 1, extra = null;
    if (k < lines.length && lines[k].startsWith("extra ")) extra = field(lines[k++].slice(6), k, "extra");
    if (k >= lines.length || !lines[k].startsWith("index ")) throw new Failed(`line ${k + 1} must be 'index N'`);
    const number = lines[k].slice(6);
    if (!/^(0|[1-9][0-9]{0,18})$/.test(number) || BigInt(number) >= 2n ** 63n)
      throw new Failed(`line ${k + 1}: the index must be a decimal without leading zeros, below 2^63`);
    const hashes = lines.slice(k + 1).map((line, i) => {
      const h = field(line, k + 2 + i, "hash");
      if (h.length !== 32) throw new Failed(`line ${k + 2 + i}: a hash must be 32 bytes, found ${h.length}`);
      return h;
    });
    if (hashes.length > MAX_PROOF_HASHES)
      throw new Failed(`${hashes.length} hashes: no tree below 2^63 leaves needs more than ${MAX_PROOF_HASHES}`);
    return { extra, index: BigInt(number), hashes, checkpoint: data.subarray(cut + 2) };
  }

  // ------------------------------------------------------------ signed notes and checkpoints (note.py)
  function splitNote(data) {
    let msg;
    try {
      msg = UTF8.decode(data);
    } catch (e) {
      throw new Failed("note is not valid UTF-8");
    }
    if (/[\x00-\x09\x0b-\x1f]/.test(msg)) throw new Failed("note holds a control character other than newline");
    const split = msg.lastIndexOf("\n\n");
    if (split < 0) throw new Failed("note has no empty line before its signatures");
    const text = msg.slice(0, split + 1), block = msg.slice(split + 2);
    if (!block.endsWith("\n")) throw new Failed("note's signature block is empty or does not end with a newline");
    const sigs = block.slice(0, -1).split("\n").map((line, i) => {
      if (i >= 100) throw new Failed("note has more than 100 signatures");
      if (!line.startsWith("\u2014 ")) throw new Failed(`signature line ${show(line.slice(0, 40))} does not start with '— '`);
      const rest = line.slice(2), sp = rest.indexOf(" ");
      const name = sp < 0 ? rest : rest.slice(0, sp), b64 = sp < 0 ? "" : rest.slice(sp + 1);
      let raw;
      try {
        raw = b64decode(b64, true);
      } catch (e) {
        throw new Failed(`signature by ${show(name)} is not base64`);
      }
      if (!b64 || !validKeyName(name) || raw.length < 5) throw new Failed(`malformed signature line ${show(line.slice(0, 60))}`);
      return { name, raw };
    });
    return { text, sigs };
  }

  function parseCheckpoint(text) {
    const lines = text.split("\n");
    if (lines.length < 4 || lines[lines.length - 1] !== "")
      throw new Failed("a checkpoint has an origin line, a size line and a root line");
    if (!/^(0|[1-9][0-9]{0,19})$/.test(lines[1]))
      throw new Failed(`checkpoint size ${show(lines[1])} is not a decimal number without leading zeros`);
    const root = b64decode(lines[2]);
    if (root.length !== 32) throw new Failed("checkpoint root is not 32 bytes");
    return { origin: lines[0], size: BigInt(lines[1]), root };
  }
  // A checkpoint note read without its signatures being checked yet: {bytes, origin, size, root}.
  const readCheckpoint = (bytes) => ({ bytes, ...parseCheckpoint(splitNote(bytes).text) });

  // c2sp.org/signed-note signature types: a log's Ed25519 note key, and a cosigner's of either kind (cosignature.py).
  const ED25519 = "ed25519", ML_DSA_44 = "ml-dsa-44";
  const NOTE_KEY = 0x01, COSIGNER_TYPES = { [ED25519]: 0x04, [ML_DSA_44]: 0x06 };
  const KIND_LABEL = { [ED25519]: "Ed25519", [ML_DSA_44]: "ML-DSA-44" };
  const KEY_SIZES = { [ED25519]: 32, [ML_DSA_44]: ML_DSA_44_PUBLIC_KEY_SIZE };
  const SIGNATURE_SIZES = { [ED25519]: 64, [ML_DSA_44]: ML_DSA_44_SIGNATURE_SIZE };
  const KEY_TYPES = {
    [NOTE_KEY]: [ED25519, "an Ed25519 note key (type 0x01)"],
    [COSIGNER_TYPES[ED25519]]: [ED25519, "an Ed25519 cosigner key (type 0x04)"],
    [COSIGNER_TYPES[ML_DSA_44]]: [ML_DSA_44, "an ML-DSA-44 key (type 0x06)"],
  };

  // `<name>+<key ID>+<base64(type ‖ key)>`, key ID = SHA-256(name ‖ 0x0A ‖ type ‖ key)[:4], of one of the `types`
  // (core/public_keys.py parse_verifier_key, cosignature.py parse_cosigner_vkey: a log's keys and a witness's).
  async function parseVkey(vkey, types = [NOTE_KEY]) {
    if (typeof vkey !== "string") throw new Failed(`a verifier key is a string, not ${typeName(vkey)}`);
    const i = vkey.indexOf("+"), j = i < 0 ? -1 : vkey.indexOf("+", i + 1);
    if (j < 0) throw new Failed("a verifier key has the form <name>+<key ID>+<base64 key>");
    const name = vkey.slice(0, i), hexid = vkey.slice(i + 1, j), raw = b64decode(vkey.slice(j + 1));
    if (!validKeyName(name)) throw new Failed(`${show(name)} is not a valid key name`);
    if (!/^[0-9a-f]{8}$/.test(hexid)) throw new Failed(`key ID ${show(hexid)} is not 8 lowercase hex digits`);
    const type = raw[0], kind = types.includes(type) ? KEY_TYPES[type][0] : null;
    if (kind === null || raw.length !== 1 + KEY_SIZES[kind])
      throw new Failed(`the key is not ${types.map((t) => KEY_TYPES[t][1]).join(" or ")}` +
        (kind ? `: ${raw.length - 1} bytes, not ${KEY_SIZES[kind]}` : ""));
    const pub = raw.slice(1), id = (await sha256(concat(utf8(name), Uint8Array.of(10, type), pub))).slice(0, 4);
    if (hex(id) !== hexid) throw new Failed(`key ID ${hexid} does not match the name and key (they give ${hex(id)})`);
    return { name, id, pub, vkey, type, kind, label: KIND_LABEL[kind], fingerprint: "SHA256:" + hex(await sha256(pub)) };
  }

  // As Go's note.Open: unknown keys are ignored, a known key's failing signature rejects the note, a repeated one
  // is dropped unchecked, and one known key must have signed.
  async function openNote(data, keys) {
    const { text, sigs } = splitNote(data);
    const verified = [];
    for (const { name, raw } of sigs) {
      const k = keys.find((key) => key.name === name && sameBytes(key.id, raw.subarray(0, 4)));
      if (!k || verified.includes(k)) continue;
      if (!(await ed25519Verify(k.pub, raw.subarray(4), utf8(text))))
        throw new Failed(`signature by ${name} (key ID ${hex(k.id)}) does not verify`);
      verified.push(k);
    }
    if (!verified.length) throw new Failed("note has no signature by a known key");
    return { text, verified };
  }

  // ---------------------------------------------------------- witness cosignatures and policies (C2SP)
  const SUBTREE_LABEL = "subtree/v1\n\0";
  const MAX_U64 = 2n ** 64n - 1n;
  function u64(n) {
    const out = new Uint8Array(8);
    new DataView(out.buffer).setBigUint64(0, n);
    return out;
  }
  function shortBytes(text, what) {
    const raw = utf8(text);
    if (raw.length < 1 || raw.length > 255)
      throw new Failed(`the ${what} is ${raw.length} bytes; the subtree/v1 message holds 1 to 255`);
    return concat(Uint8Array.of(raw.length), raw);
  }
  // What an ML-DSA-44 cosigner signs of a checkpoint, the subtree [0, size) (subtree_message). Sizes are BigInt.
  function subtreeMessage(cosigner, ts, origin, size, root) {
    if (size > MAX_U64) throw new Failed(`a subtree bound is an unsigned 64-bit integer, not ${size}`);
    return concat(utf8(SUBTREE_LABEL), shortBytes(cosigner, "cosigner name"), u64(ts), shortBytes(origin, "log origin"),
      u64(0n), u64(size), root);
  }

  // `key`'s line among a note's signatures, the first only, as Go's note.Open counts it: {ts, sig, where} or null. A
  // line of the wrong length or with a timestamp beyond 2^63-1 fails (verify_cosignatures), whatever its type.
  function cosignatureLine(sigs, key) {
    const line = sigs.find(({ name, raw }) => name === key.name && sameBytes(raw.subarray(0, 4), key.id));
    if (!line) return null;
    const where = `${key.label} cosignature by ${key.name} (key ID ${hex(key.id)})`, want = SIGNATURE_SIZES[key.kind];
    if (line.raw.length !== 12 + want) throw new Failed(`${where} is ${line.raw.length} bytes, not 4 + 8 + ${want}`);
    const ts = line.raw.subarray(4, 12).reduce((t, b) => (t << 8n) | BigInt(b), 0n);
    if (ts > 2n ** 63n - 1n) throw new Failed(`${where} has timestamp ${ts}, beyond 2^63-1`);
    return { ts, sig: line.raw.subarray(12), where };
  }

  // `key`'s cosignature of the checkpoint note (cosignature.py verify_cosignatures, either type): null without one,
  // {ts, by} when it verifies (ts a BigInt; by, what checked an ML-DSA-44 one), {ts, unchecked} when this browser
  // cannot tell (an ML-DSA-44 signature with neither WebCrypto's nor the site's module); Failed when it does not verify.
  async function cosignedBy(env, note, key) {
    const { text, sigs } = splitNote(note);
    if (text.slice(0, -1).split("\n").some((l) => !l))
      throw new Failed("the cosigned note is not a checkpoint: its text holds an empty line");
    const cp = await within("the cosigned note is not a checkpoint: ", () => parseCheckpoint(text));
    const line = cosignatureLine(sigs, key);
    if (!line) return null;
    if (key.kind === ED25519) {
      const message = concat(utf8(`cosignature/v1\ntime ${line.ts}\n`), utf8(text));
      if (!(await ed25519Verify(key.pub, line.sig, message))) throw new Failed(`${line.where} does not verify`);
      return { ts: line.ts, by: null };
    }
    const message = subtreeMessage(key.name, line.ts, cp.origin, cp.size, cp.root);
    let got;
    try {
      got = await mlDsaVerify(env, key.pub, line.sig, message);
    } catch (e) {
      if (!(e instanceof CannotCheck)) throw e;
      return { ts: line.ts, unchecked: e.message };
    }
    if (!got.ok) throw new Failed(`${line.where} does not verify`);
    return { ts: line.ts, by: got.by };
  }

  // c2sp.org/tlog-policy as policy.py reads it: a name is a group member at most once in the whole file; a log key is an
  // Ed25519 note key (0x01) or the log's ML-DSA-44 key (0x06), a witness's a cosigner key of either type (0x04, 0x06).
  async function parsePolicy(bytes) {
    let text;
    try {
      text = UTF8.decode(bytes);
    } catch (e) {
      throw new CannotCheck("the site's policy holds bytes that are not UTF-8, which this page does not read (verify.py does)");
    }
    const p = { logs: [], witnesses: [], groups: [], quorum: null }, defined = new Set(["none"]), members = new Set();
    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    const fresh = (name) => {
      if (defined.has(name)) throw new Failed(`${show(name)} is already defined (or is 'none'); expected a new name`);
      defined.add(name);
    };
    const url = (rest) => {
      if (rest.length && rest[0].startsWith("#")) throw new Failed("a comment must be on a line of its own");
      return rest[0] || null;
    };
    for (const [n, line] of lines.entries()) {
      await within(`policy line ${n + 1}: `, async () => {
        const bad = line.match(/[\x00-\x08\x0a-\x1f\x7f]/);
        if (bad)
          throw new Failed(`control character 0x${bad[0].charCodeAt(0).toString(16).padStart(2, "0")}; only tab and newline`);
        const [word, ...args] = line.split(/[ \t]+/).filter(Boolean);
        if (!word || word.startsWith("#")) return;
        if (word === "log") {
          if (args.length < 1 || args.length > 2) throw new Failed("a log line is `log <vkey> [<url>]`");
          const key = await within("log key: ", () => parseVkey(args[0], [NOTE_KEY, COSIGNER_TYPES[ML_DSA_44]]));
          if (p.logs.some((l) => sameBytes(l.key.pub, key.pub)))
            throw new Failed("duplicate log: the same public key as an earlier line");
          p.logs.push({ key, url: url(args.slice(1)) });
        } else if (word === "witness") {
          if (args.length < 2 || args.length > 3) throw new Failed("a witness line is `witness <name> <vkey> [<url>]`");
          const key = await within(`witness ${show(args[0])} key: `, () => parseVkey(args[1], Object.values(COSIGNER_TYPES)));
          if (p.witnesses.some((w) => sameBytes(w.key.pub, key.pub)))
            throw new Failed("duplicate witness: the same public key as an earlier line");
          fresh(args[0]);
          p.witnesses.push({ name: args[0], key, url: url(args.slice(2)) });
        } else if (word === "group") {
          const [name, k, ...list] = args;
          if (!list.length) throw new Failed("a group line is `group <name> all|any|<k> <member>...` with at least one member");
          const threshold = k === "all" ? list.length : k === "any" ? 1 : /^([1-9][0-9]{0,8}|0)$/.test(k) ? Number(k) : NaN;
          if (!(threshold >= 1 && threshold <= list.length))
            throw new Failed(`group ${show(name)}: threshold ${show(k)} is out of range`);
          for (const m of list) {
            if (m === "none" || m === name || members.has(m) || !defined.has(m))
              throw new Failed(`group ${show(name)}: ${show(m)} is not a witness or group defined earlier and not yet a member`);
            members.add(m);
          }
          fresh(name);
          p.groups.push({ name, threshold, members: list });
        } else if (word === "quorum") {
          if (args.length !== 1 || p.quorum !== null || !defined.has(args[0]))
            throw new Failed("expected exactly one `quorum <name>` line, naming a witness or group defined earlier");
          p.quorum = args[0];
        } else throw new Failed(`unknown keyword ${show(word)}; expected log, witness, group or quorum`);
      });
    }
    if (p.quorum === null) throw new Failed("policy: no quorum line; expected exactly one `quorum <name>` line");
    return p;
  }

  // [whether the witnesses named satisfy the quorum, the sorted witnesses whose cosignature would help] (policy.py).
  function evaluatePolicy(p, valid) {
    const holds = new Map([["none", true], ...p.witnesses.map((w) => [w.name, valid.has(w.name)])]), groups = new Map();
    for (const g of p.groups) {
      holds.set(g.name, g.members.filter((m) => holds.get(m)).length >= g.threshold);
      groups.set(g.name, g.members);
    }
    if (holds.get(p.quorum)) return [true, []];
    const blocking = new Set(), seen = new Set(), stack = [p.quorum];
    while (stack.length) {
      const name = stack.pop();
      if (seen.has(name) || holds.get(name)) continue;
      seen.add(name);
      if (groups.has(name)) stack.push(...groups.get(name));
      else blocking.add(name);
    }
    return [false, cpSorted(blocking)];
  }

  // -------------------------------------------------------------------------- exact rationals (scoring.py)
  // {n, d}: BigInt numerator and positive denominator, always reduced, as Python's Fraction.
  function Q(n, d = 1n) {
    [n, d] = [BigInt(n), BigInt(d)];
    if (d === 0n) throw new Error("division by zero");
    if (d < 0n) [n, d] = [-n, -d];
    let [a, b] = [n < 0n ? -n : n, d];
    while (b) [a, b] = [b, a % b];
    return { n: n / a, d: d / a };
  }
  const add = (a, b) => Q(a.n * b.d + b.n * a.d, a.d * b.d);
  const mul = (a, b) => Q(a.n * b.n, a.d * b.d);
  const div = (a, b) => Q(a.n * b.d, a.d * b.n);
  const cmp = (a, b) => (a.n * b.d < b.n * a.d ? -1 : a.n * b.d > b.n * a.d ? 1 : 0);
  const ZERO = Q(0), ONE = Q(1), HUNDRED = Q(100);

  function decimalValue(text) {
    const m = DECIMAL_RE.exec(text);
    if (!m || text.length > 1000) throw new Failed(`not a decimal: ${show(text)}`);
    const frac = (m[2] || ".").slice(1);
    return Q(BigInt(m[1] + frac), 10n ** BigInt(frac.length));
  }

  // A non-negative value with exactly `places` decimals, rounded half-up (round_half_up).
  function roundHalfUp(x, places) {
    if (x.n < 0n) throw new Error("round_half_up takes a non-negative value");
    const s = mul(x, Q(10n ** BigInt(places)));
    let n = s.n / s.d;
    if (2n * (s.n - n * s.d) >= s.d) n += 1n;
    const digits = n.toString().padStart(places + 1, "0");
    return places ? `${digits.slice(0, -places)}.${digits.slice(-places)}` : digits;
  }
  const rateText = (x) => roundHalfUp(x, 4);

  // ⌊√n⌋ by Newton's iteration from above, as math.isqrt.
  function isqrt(n) {
    if (n < 2n) return n;
    let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2));
    for (let y = (x + n / x) >> 1n; y < x; y = (x + n / x) >> 1n) x = y;
    return x;
  }

  // The 95 % Wilson interval of format v1 §5, in percent: z = 49/25, √R taken as ⌊√⌊R·10^80⌋⌋ / 10^40.
  function wilsonInterval(x, n) {
    [x, n] = [BigInt(x), BigInt(n)];
    if (x < 0n || x > n) throw new Error("0 ≤ passed ≤ scored");
    if (n === 0n) return ["0.0000", "100.0000"];
    const z = Q(49, 25), z2 = mul(z, z), r = add(z2, Q(4n * x * (n - x), n));
    const root = Q(isqrt((r.n * 10n ** 80n) / r.d), 10n ** 40n);
    return [-1, 1].map((sign) => {
      const b = mul(div(add(add(Q(2n * x), z2), mul(Q(sign), mul(z, root))), mul(Q(2), add(Q(n), z2))), HUNDRED);
      return rateText(cmp(b, ZERO) < 0 ? ZERO : cmp(b, HUNDRED) > 0 ? HUNDRED : b);
    });
  }

  const TIERS = ["critical", "high", "low"], KINDS = ["scalar", "text", "array"];
  const NON_SCORED = ["infra_error", "not_run", "missing_label", "excluded"], STATUSES = ["scored", ...NON_SCORED];

  // certify.max_attempts, optional (methodology.py Methodology.max_attempts): null without a limit. One that is
  // not an integer of at least 1 makes the file one the engine cannot read, as verify.py refuses it.
  function retryLimit(certify) {
    if (!has(certify, "max_attempts")) return null;
    if (!(isInt(certify.max_attempts) && certify.max_attempts >= 1)) throw new Error("max_attempts");
    return certify.max_attempts;
  }

  // The parameter file a certificate pins by hash, read into what the engine needs. verify.py also checks it
  // against its ledger leaf and every rule of §5; here one the engine cannot read stops the check.
  function parseMethodology(doc) {
    try {
      const tiers = Object.fromEntries(TIERS.map((t) => [t,
        { weight: decimalValue(doc.tiers[t].weight), floor: decimalValue(doc.tiers[t].min_similarity) }]));
      const grades = [...doc.grade_cutoffs.map((c) => ({ name: c.grade, min: decimalValue(c.min_pass_rate) })),
        { name: doc.lowest_grade, min: null }].map((g) => ({ ...g, band: doc.bands[g.name] }));
      const rank = new Map(grades.map((g, i) => [g.name, i]));
      const ok = grades.every((g) => typeof g.name === "string" && Array.isArray(g.band) && g.band.length === 2 && g.band.every(isInt));
      if (!ok || rank.size !== grades.length || !rank.has(doc.certify.min_grade)) throw new Error("grades");
      return {
        tiers, grades, rank, minGrade: doc.certify.min_grade,
        threshold: decimalValue(doc.item_threshold), thresholdText: doc.item_threshold,
        minScoredFraction: decimalValue(doc.certify.min_scored_fraction),
        maxAttempts: retryLimit(doc.certify),
        band: (g) => [...grades[rank.get(g)].band],
        reaches: (g, least) => rank.get(g) <= rank.get(least),
      };
    } catch (e) {
      throw new Failed("the methodology parameters are not a parameter file of format v1 §5");
    }
  }

  const REPORTED_RE = /^(0(\.[0-9]+)?|1(\.0+)?)$/, RATIO_RE = /^([1-9][0-9]*)\/([1-9][0-9]*)$/, PROPOSAL_RE = /^-?(0|[1-9][0-9]*)$/;
  const isExact = (kind, tier) => tier === "critical" || kind === "scalar";

  // A similarity string's exact value: a decimal in [0, 1], or a reduced p/q below 1; null if it is neither.
  function similarityValue(text) {
    if (typeof text !== "string" || text.length > 1000) return null;
    if (REPORTED_RE.test(text)) return decimalValue(text);
    const m = RATIO_RE.exec(text), s = m && Q(BigInt(m[1]), BigInt(m[2]));
    return s && cmp(s, ONE) < 0 && `${s.n}/${s.d}` === text ? s : null;
  }

  function similarityFormProblem(kind, tier, text) {
    if (isExact(kind, tier)) return text === "0" || text === "1" ? null : '"0" or "1" (an exact comparison)';
    if (kind === "array")
      return text === "0" || text === "1" || similarityValue(text) && RATIO_RE.test(text)
        ? null : '"0", "1" or a reduced fraction "p/q" with 0 < p < q (a Jaccard similarity)';
    return similarityValue(text) && REPORTED_RE.test(text) ? null : 'a decimal string in [0, 1], as reported (such as "0.93")';
  }

  // Equality of JSON values as format v1 §1 defines it: equal canonical bytes (1 is not true).
  function same(a, b) {
    try {
      return canonical(a) === canonical(b);
    } catch (e) {
      return false;
    }
  }

  function computedSimilarity(kind, tier, output, answer) {
    if (isExact(kind, tier)) return same(output, answer) ? "1" : "0";
    if (kind !== "array") return null;
    if (!Array.isArray(output) || !Array.isArray(answer)) return "0";
    const a = new Set(output.map(canonical)), b = new Set(answer.map(canonical)), union = new Set([...a, ...b]).size;
    const s = union ? Q([...a].filter((x) => b.has(x)).length, union) : ONE;
    return s.n === 0n ? "0" : cmp(s, ONE) === 0 ? "1" : `${s.n}/${s.d}`;
  }

  // Σ S·W / Σ W over [name, tier, S]; passes iff ≥ the threshold and every tier's floor is met.
  function scoreItem(fields, m) {
    let num = ZERO, den = ZERO;
    const below = [];
    for (const [name, tier, s] of fields) {
      [num, den] = [add(num, mul(s, m.tiers[tier].weight)), add(den, m.tiers[tier].weight)];
      if (cmp(s, m.tiers[tier].floor) < 0) below.push(name);
    }
    if (den.n === 0n) throw new Error("an item has at least one field");
    const score = div(num, den);
    return { score, text: roundHalfUp(score, 6), passed: cmp(score, m.threshold) >= 0 && !below.length, below };
  }

  // The pass rate and its worst and best cases over the non-scored results, in percent.
  const passRates = (passed, scored, total) => [
    scored ? Q(100 * passed, scored) : ZERO,
    total ? Q(100 * passed, total) : ZERO,
    total ? Q(100 * (passed + total - scored), total) : ZERO,
  ];
  const gradeFor = (rate, m) => m.grades.find((g) => g.min === null || cmp(rate, g.min) >= 0).name;

  // The fail-closed verdict: the first of format v1 §5's four rules that applies.
  function verdictFor(grade, worst, best, scored, total, m) {
    if (!m.reaches(best, m.minGrade)) return "not-certified";
    if (scored === 0 || cmp(Q(scored, total), m.minScoredFraction) < 0) return "incomplete";
    return m.reaches(grade, m.minGrade) && m.reaches(worst, m.minGrade) ? "certified" : "not-certified";
  }

  // Summary, grades, band and verdict from the status counts and the number passed (grade_counts).
  function gradeCounts(counts, passed, m) {
    const total = STATUSES.reduce((n, s) => n + (counts[s] || 0), 0), scored = counts.scored || 0;
    if (passed < 0 || passed > scored) throw new Error("0 ≤ passed ≤ scored");
    const [rate, worst, best] = passRates(passed, scored, total);
    const summary = { total, scored, passed, ...Object.fromEntries(NON_SCORED.map((s) => [s, counts[s] || 0])),
      pass_rate: rateText(rate), pass_rate_ci95: wilsonInterval(passed, scored),
      worst_case_pass_rate: rateText(worst), best_case_pass_rate: rateText(best) };
    const grade = gradeFor(rate, m), wg = gradeFor(worst, m), bg = gradeFor(best, m);
    return { summary, grade, band: m.band(grade), worst_case_grade: wg, best_case_grade: bg,
      verdict: verdictFor(grade, wg, bg, scored, total, m) };
  }

  // The score inside the band and its rule: the proposal counts only as a plain integer in ±(2^53−1).
  function bandScore(proposedJson, [lo, hi]) {
    let p = null;
    if (typeof proposedJson === "string" && Array.from(proposedJson).length <= 20 && PROPOSAL_RE.test(proposedJson)) {
      const v = BigInt(proposedJson);
      if ((v < 0n ? -v : v) <= 2n ** 53n - 1n) p = Number(v);
    }
    if (p === null) return [Math.floor((lo + hi) / 2), "midpoint-fallback"];
    return lo <= p && p <= hi ? [p, "as-proposed"] : [Math.min(Math.max(p, lo), hi), "clamped"];
  }

  // The bullets kept (exactly `text` and a non-empty `evidence_refs` of scored ids) and how many were dropped.
  function keepBullets(rationale, scoredIds) {
    if (!Array.isArray(rationale)) return [[], 1];
    const kept = rationale.filter((b) => isObj(b) && Object.keys(b).length === 2 && typeof b.text === "string" &&
      Array.isArray(b.evidence_refs) && b.evidence_refs.length > 0 &&
      b.evidence_refs.every((r) => typeof r === "string" && scoredIds.has(r)));
    return [kept, rationale.length - kept.length];
  }

  // ---------------------------------------------------------------- a certificate's rules (certificates.py)
  const problem = (message, where = "", expected, found) => ({ message, where, expected, found });

  function checkKeys(obj, required, optional = [], where = "") {
    if (!isObj(obj)) return [problem("must be an object", where, undefined, typeName(obj))];
    const out = required.filter((k) => !has(obj, k)).map((k) => problem(`missing '${k}'`, where));
    const unknown = cpSorted(Object.keys(obj).filter((k) => !required.includes(k) && !optional.includes(k)));
    if (unknown.length)
      out.push(problem(`unknown member${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `'${k}'`).join(", ")}`, where));
    return out;
  }

  function valueKindProblem(kind, v) {
    const scalar = (x) => x === null || typeof x === "string" || typeof x === "boolean" || isInt(x);
    if (kind === "scalar" && !scalar(v)) return "a string, an integer, a boolean or null";
    if (kind === "text" && typeof v !== "string") return "a string";
    if (kind === "array" && !(Array.isArray(v) && v.every(scalar))) return "a list of strings, integers, booleans or nulls";
    return null;
  }

  const ITEM_SCORE_RE = /^[01]\.[0-9]{6}$/, RATE_RE = /^(0|[1-9][0-9]{0,2})\.[0-9]{4}$/;
  const atMost = (text, limit) => cmp(decimalValue(text), Q(limit)) <= 0;
  const isRate = (x) => typeof x === "string" && RATE_RE.test(x) && atMost(x, 100);

  // ------------------------------------------------------------ attempts and lineage (lineage.py, FORMAT.md v2)
  // A retry is how an operator could re-roll a failure until it passes: only what taught nothing about the subject's
  // answer may be tried again, and every earlier attempt stays on record beside the result.
  const RETRIABLE = ["infra_error", "not_run"], ATTEMPT_STATUSES = ["scored", "infra_error", "not_run", "missing_label"];
  const ATTEMPT_KEYS = ["attempt", "retry_of", "status", "at"], ATTEMPT_OPEN_KEYS = ["note", "native"];
  const ATTEMPT_EVIDENCE = "evidence";
  const isIntOf = (v, want) => isInt(v) && v === want;
  // Times of one form compare as text, by code point as Python compares them.
  const before = (a, b) => cpCompare(a, b) < 0;

  // The members a result may carry besides its v1 ones: none without earlier attempts (lineage_keys).
  function lineageKeys(r) {
    if (!has(r, "attempts")) return [];
    return r.status === "excluded" ? ["attempts", "excludes", "at"] : ["attempts", "attempt", "retry_of", "at"];
  }

  // What a sealed result shows of its chain (lineage_skeleton), members in Python's order so that show() reads alike.
  function lineageSkeleton(r) {
    const out = {};
    for (const k of lineageKeys(r)) if (k !== "attempts" && has(r, k)) out[k] = r[k];
    if (Array.isArray(r.attempts))
      out.attempts = r.attempts.map((a) => isObj(a)
        ? Object.fromEntries([...ATTEMPT_KEYS, ATTEMPT_EVIDENCE].filter((k) => has(a, k)).map((k) => [k, a[k]])) : a);
    else if (has(r, "attempts")) out.attempts = r.attempts;
    return out;
  }

  // How many times the item was tried: the earlier attempts, and the final result unless it is an exclusion.
  const attemptsMade = (r) => (Array.isArray(r.attempts) ? r.attempts.length : 0) + (r.status === "excluded" ? 0 : 1);

  function attemptEvidenceProblems(names, where, listed) {
    if (!(Array.isArray(names) && names.length && names.every((n) => typeof n === "string")))
      return [problem("an attempt's evidence is a non-empty list of evidence file names", where, undefined, show(names))];
    if (!same(names, cpSorted(new Set(names))))
      return [problem("evidence names are sorted and distinct", where, undefined, show(names))];
    const unknown = names.filter((n) => !listed.has(n));
    return unknown.length
      ? [problem("names an evidence file the certificate does not list", where, "names of the evidence list", show(unknown))] : [];
  }

  // Attempts in the order they were made, none before the run was registered, none after it finished (_time_order).
  function timeOrder(times, notBefore, notAfter) {
    const out = [];
    let previous = null;
    for (const [w, t] of times) {
      if (notBefore !== null && before(t, notBefore))
        out.push(problem("an attempt before the run was registered", w, `≥ ${notBefore}`, t));
      if (notAfter !== null && before(notAfter, t)) out.push(problem("an attempt after the run finished", w, `≤ ${notAfter}`, t));
      if (previous !== null && before(t, previous[1]))
        out.push(problem(`an attempt made before the one it follows (${previous[0]})`, w, `≥ ${previous[1]}`, t));
      previous = [w, t];
    }
    return out;
  }

  // Every way a result's attempts break the chain rules (lineage_problems). `o`: {sealed, maxAttempts, notBefore,
  // notAfter, evidenceNames}, null where unknown; the result's own v1 members are its caller's to check.
  function lineageProblems(r, where, { sealed, maxAttempts = null, notBefore = null, notAfter = null, evidenceNames = new Set() }) {
    if (!has(r, "attempts")) {
      const stray = ["at", "attempt", "excludes", "retry_of"].filter((k) => has(r, k));
      return stray.length ? [problem(`${stray.join(", ")} belong(s) to a result with earlier attempts, and this one lists none`,
        where, "an 'attempts' list, or none of these members")] : [];
    }
    const earlier = r.attempts;
    if (!Array.isArray(earlier) || !earlier.length)
      return [problem("attempts is a non-empty list of the earlier attempts, oldest first", `${where}.attempts`, undefined,
        show(earlier))];
    const out = [], times = [], excluded = r.status === "excluded", P = (...a) => out.push(problem(...a));
    earlier.forEach((a, i) => {
      const aw = `${where}.attempts[${i}]`;
      out.push(...checkKeys(a, ATTEMPT_KEYS, sealed ? [ATTEMPT_EVIDENCE] : [ATTEMPT_EVIDENCE, ...ATTEMPT_OPEN_KEYS], aw));
      if (!isObj(a)) return;
      if (has(a, ATTEMPT_EVIDENCE))
        out.push(...attemptEvidenceProblems(a[ATTEMPT_EVIDENCE], `${aw}.${ATTEMPT_EVIDENCE}`, evidenceNames));
      if (has(a, "attempt") && !isIntOf(a.attempt, i + 1))
        P("attempts are numbered 1, 2, … in order, with no gap", `${aw}.attempt`, String(i + 1), show(a.attempt));
      const wantOf = i === 0 ? null : i;
      if (has(a, "retry_of") && !(wantOf === null ? a.retry_of === null : isIntOf(a.retry_of, wantOf)))
        P("the first attempt repeats nothing; every later one repeats the attempt just before it", `${aw}.retry_of`,
          show(wantOf), show(a.retry_of));
      const status = a.status, last = i === earlier.length - 1;
      if (has(a, "status") && !ATTEMPT_STATUSES.includes(status))
        P("an earlier attempt's status is what that attempt came to", `${aw}.status`, ATTEMPT_STATUSES.join(" | "), show(status));
      else if (has(a, "status") && !RETRIABLE.includes(status) && !(last && excluded))
        P(`an attempt that came to ${status} was tried again: only an infrastructure error or an item that did not run may be ` +
          "retried", `${aw}.status`, RETRIABLE.join(" | "), show(status));
      if (has(a, "note") && typeof a.note !== "string") P("a note is text", `${aw}.note`, undefined, show(a.note));
      if (has(a, "at")) {
        if (isTime(a.at)) times.push([`${aw}.at`, a.at]);
        else P("malformed time", `${aw}.at`, "YYYY-MM-DDTHH:MM:SSZ", show(a.at));
      }
    });
    const n = earlier.length;
    if (excluded) {
      if (!has(r, "excludes")) P("missing 'excludes'", where);
      else if (!isIntOf(r.excludes, n))
        P("an exclusion after attempts excludes the last of them, which ended the chain", `${where}.excludes`, String(n),
          show(r.excludes));
    } else {
      for (const [k, want] of [["attempt", n + 1], ["retry_of", n]]) {
        if (!has(r, k)) P(`missing '${k}'`, where);
        else if (!isIntOf(r[k], want))
          P("the final result is the attempt after the last earlier one, and repeats it", `${where}.${k}`, String(want), show(r[k]));
      }
    }
    if (!has(r, "at")) P("missing 'at'", where);
    else if (isTime(r.at)) times.push([`${where}.at`, r.at]);
    else P("malformed time", `${where}.at`, "YYYY-MM-DDTHH:MM:SSZ", show(r.at));
    out.push(...timeOrder(times, notBefore, notAfter));
    const made = attemptsMade(r);
    if (maxAttempts !== null && made > maxAttempts)
      P(`${made} attempts, more than the methodology's retry limit allows`, `${where}.attempts`, `at most ${maxAttempts} attempts`,
        String(made));
    return out;
  }

  // ------------------------------------------------------------------------ evidence files (evidence.py)
  // A name is one path segment the verifier joins to a folder it chose: nothing in it can climb out, hide (a leading
  // dot), pass for a signature or proof of another file, or be Python code (formats.py PYTHON_CODE_SUFFIXES).
  const EVIDENCE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/, EVIDENCE_NAME_MAX = 128;
  const EVIDENCE_KEYS = ["name", "sha256", "size", "items"], MAX_EVIDENCE_SIZE = 2 ** 53 - 1;
  const UNSAFE_SUFFIXES = [".sig", ".tlog-proof", ".py", ".pyc", ".pyo", ".pyw", ".pyd", ".pth", ".so"];
  const isEvidenceName = (n) => typeof n === "string" && Array.from(n).length <= EVIDENCE_NAME_MAX && EVIDENCE_NAME_RE.test(n) &&
    !UNSAFE_SUFFIXES.some((x) => n.toLowerCase().endsWith(x));

  // One evidence file's members other than the list's order (evidence_entry_problems).
  function evidenceEntryProblems(e, w, specItems) {
    const out = [], P = (...a) => out.push(problem(...a));
    if (has(e, "name") && !isEvidenceName(e.name))
      P("an evidence file's name is one safe path segment", `${w}.name`,
        `letters, digits, '_', '-' and inner dots, at most ${EVIDENCE_NAME_MAX} characters`, show(e.name));
    if (has(e, "sha256") && !isHex64(e.sha256)) P("a SHA-256 is 64 lowercase hex digits", `${w}.sha256`, undefined, show(e.sha256));
    if (has(e, "size") && !(isInt(e.size) && e.size >= 0 && e.size <= MAX_EVIDENCE_SIZE))
      P("a size is a count of bytes", `${w}.size`, undefined, show(e.size));
    const c = e.items;
    if (has(e, "items") && !(Array.isArray(c) && c.length && c.every((i) => typeof i === "string" && specItems.has(i)) &&
        new Set(c).size === c.length))
      P("an evidence file names the run's items it concerns, each once", `${w}.items`, "a non-empty list of the run spec's item ids",
        show(c, 120));
    return out;
  }

  // The shape of a certificate's evidence list (evidence_problems). The files themselves, due by the rule of details
  // documents, are verify.py's to hash: a log can be large, and the list's hash is what the signed certificate binds.
  function evidenceProblems(evidence, items, where = "evidence") {
    if (!Array.isArray(evidence) || !evidence.length)
      return [problem("evidence is a non-empty list of files", where, undefined, show(evidence, 80))];
    const out = [], specItems = new Set(items), names = [];
    evidence.forEach((e, i) => {
      const w = `${where}[${i}]`;
      out.push(...checkKeys(e, EVIDENCE_KEYS, [], w));
      if (!isObj(e)) return;
      names.push(e.name);
      out.push(...evidenceEntryProblems(e, w, specItems));
    });
    const texts = names.filter((n) => typeof n === "string");
    if (texts.length === names.length && !same(texts, cpSorted(new Set(texts))))
      out.push(problem("evidence files are sorted by name, each name once", where, undefined, show(names, 200)));
    return out;
  }

  // ---------------------------------------------------------------------- the judge's labels (labelsets.py)
  const JUDGE_LABELS = "judge_labels";
  const isPoint = (v) => isInt(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER;

  // A scored result's judge_labels: rubric dimension -> integer label, at least one (judge_labels_problems). Keys in
  // code-point order, which is the file's order once it passed parseCanonical (Object.keys puts "10" after "9").
  const MAX_DIMENSIONS = 64; // labelsets.py: a rubric has a few dimensions
  function judgeLabelsProblems(value, where) {
    const w = `${where}.${JUDGE_LABELS}`;
    if (!isObj(value) || !Object.keys(value).length)
      return [problem("the judge's labels are an object of rubric dimension -> integer label", w, undefined, show(value))];
    if (Object.keys(value).length > MAX_DIMENSIONS)
      return [problem("too many rubric dimensions", w, `at most ${MAX_DIMENSIONS}`, String(Object.keys(value).length))];
    const out = [];
    for (const k of cpSorted(Object.keys(value))) {
      if (!ID_RE.test(k)) out.push(problem("a rubric dimension is an id", w, ID_RE.source, show(k)));
      else if (!isPoint(value[k])) out.push(problem("a judge's label is an integer on the rubric's scale", `${w}.${k}`, undefined,
        show(value[k])));
    }
    return out;
  }

  // ---------------------------------------------------------------------- score edits (score_edits.py)
  const SCORE_EDITS = "score_edits", SCORE_EDIT_KEYS = ["scorer", "from", "to", "by", "at", "reason"];
  const MAX_SCORE_EDITS = 100, MAX_NAME = 200, MAX_REASON = 2000;
  // Python's str.strip() and len(): white space as str.isspace(), length in code points.
  const isText = (v, limit) => typeof v === "string" && !Array.from(v).every((c) => SPACE_RE.test(c)) &&
    Array.from(v).length <= limit;

  // A result's hand edits of the harness's scores, each with who, when and why (score_edits_problems).
  function scoreEditsProblems(value, where) {
    const w = `${where}.${SCORE_EDITS}`;
    if (!Array.isArray(value) || !value.length)
      return [problem("score edits are a non-empty list of {scorer, from, to, by, at, reason}", w, undefined, show(value))];
    if (value.length > MAX_SCORE_EDITS)
      return [problem("too many score edits", w, `at most ${MAX_SCORE_EDITS}`, String(value.length))];
    const out = [], keys = [];
    value.forEach((e, i) => {
      const ew = `${w}[${i}]`;
      out.push(...checkKeys(e, SCORE_EDIT_KEYS, [], ew));
      if (!isObj(e)) return;
      for (const [k, limit, what] of [["scorer", MAX_NAME, "the name of the scorer whose score was edited"],
        ["by", MAX_NAME, "who edited the score"], ["reason", MAX_REASON, "why the score was edited, in the editor's words"]])
        if (has(e, k) && !isText(e[k], limit))
          out.push(problem(`${k} is ${what}`, `${ew}.${k}`, `text other than white space, at most ${limit} characters`,
            show(e[k])));
      if (has(e, "at") && !isTime(e.at))
        out.push(problem("malformed time: when the score was edited, in UTC", `${ew}.at`, "YYYY-MM-DDTHH:MM:SSZ", show(e.at)));
      if (has(e, "to") && e.to === null) out.push(problem("an edit gives the score a value", `${ew}.to`, undefined, "null"));
      if (typeof e.scorer === "string" && isTime(e.at)) keys.push([e.scorer, e.at]);
    });
    const byKey = (a, b) => cpCompare(a[0], b[0]) || cpCompare(a[1], b[1]);
    if (keys.length === value.length && keys.some((k, i) => i > 0 && byKey(keys[i - 1], k) > 0))
      out.push(problem("score edits are sorted by scorer, and each scorer's in the order they were made", w, undefined,
        show(keys.map(([s, t]) => `${s} ${t}`))));
    return out;
  }

  // One result's shape, open on a public gate and sealed on a secret one, with its attempts checked against `lineage`
  // ({maxAttempts, notBefore, notAfter, evidenceNames}, each null or empty where unknown): [problems, status, passed]
  // (check_result).
  function checkResult(r, where, isPublic, rules, lineage = {}) {
    const [out, status, passed] = shapeOfResult(r, where, isPublic, rules);
    if (status !== null) out.push(...lineageProblems(r, where, { ...lineage, sealed: !isPublic }));
    return [out, status, passed];
  }

  // A result's v1 members, as _check_result: its attempts are checkResult's.
  function shapeOfResult(r, where, isPublic, rules) {
    if (!isObj(r)) return [[problem("a result must be an object", where, undefined, typeName(r))], null, null];
    const status = r.status, out = [];
    if (!STATUSES.includes(status))
      return [[problem("unknown status", `${where}.status`, STATUSES.join(" | "), show(status))], null, null];
    if (!isPublic) {
      out.push(...checkKeys(r, ["item", "status", "details"], lineageKeys(r), where));
      if (has(r, "details") && !isHex64(r.details))
        out.push(problem("a sealed result's details is a SHA-256", `${where}.details`, undefined, show(r.details)));
      return [out, status, null];
    }
    if (status !== "scored") {
      out.push(...checkKeys(r, ["item", "status", "note"],
        [...(status === "excluded" ? ["rule"] : []), ...lineageKeys(r), SCORE_EDITS], where));
      if (has(r, SCORE_EDITS)) out.push(...scoreEditsProblems(r[SCORE_EDITS], where));
      if (has(r, "note") && typeof r.note !== "string")
        out.push(problem("a note is text", `${where}.note`, undefined, show(r.note)));
      if (status === "excluded" && !(isInt(r.rule) && r.rule >= 0 && r.rule < rules))
        out.push(problem("an excluded result names the index of one of the run spec's exclusion rules", `${where}.rule`,
          rules ? `an integer from 0 to ${rules - 1}` : "an exclusion rule (the run spec has none)", show(r.rule)));
      return [out, status, null];
    }
    out.push(...checkKeys(r, ["item", "status", "score", "passed", "fields"], [...lineageKeys(r), JUDGE_LABELS, SCORE_EDITS],
      where));
    if (has(r, JUDGE_LABELS)) out.push(...judgeLabelsProblems(r[JUDGE_LABELS], where));
    if (has(r, SCORE_EDITS)) out.push(...scoreEditsProblems(r[SCORE_EDITS], where));
    if (has(r, "score") && !(typeof r.score === "string" && ITEM_SCORE_RE.test(r.score) && atMost(r.score, 1)))
      out.push(problem("an item score has exactly 6 decimals, in [0, 1]", `${where}.score`, undefined, show(r.score)));
    if (has(r, "passed") && typeof r.passed !== "boolean")
      out.push(problem("must be true or false", `${where}.passed`, undefined, show(r.passed)));
    const fields = Array.isArray(r.fields) && r.fields.length ? r.fields : [];
    if (!fields.length) out.push(problem("a scored result lists its fields", `${where}.fields`, undefined, show(r.fields)));
    const names = [];
    fields.forEach((f, j) => {
      const fw = `${where}.fields[${j}]`;
      out.push(...checkKeys(f, ["name", "kind", "tier", "similarity", "output"], [], fw));
      if (!isObj(f)) return;
      names.push(f.name);
      if (!(typeof f.name === "string" && f.name))
        out.push(problem("a field name is a non-empty string", `${fw}.name`, undefined, show(f.name)));
      if (!KINDS.includes(f.kind) || !TIERS.includes(f.tier))
        out.push(problem("unknown kind or tier", fw, undefined, `${show(f.kind)}, ${show(f.tier)}`));
      if (!(typeof f.similarity === "string" && (REPORTED_RE.test(f.similarity) || RATIO_RE.test(f.similarity))))
        out.push(problem("a similarity is a decimal string in [0, 1] or a fraction p/q", `${fw}.similarity`, undefined,
          show(f.similarity)));
    });
    const texts = names.filter((n) => typeof n === "string");
    if (texts.length === names.length && !same(texts, cpSorted(texts)))
      out.push(problem("fields are sorted by name", `${where}.fields`, undefined, show(names)));
    return [out, status, typeof r.passed === "boolean" ? r.passed : null];
  }

  const CERTIFICATE_KEYS = ["type", "v", "serial", "run", "issued_at", "expires_at", "subject", "gate", "methodology",
    "run_spec", "finished_at", "results", "summary", "grade", "band", "worst_case_grade", "best_case_grade", "grader",
    "score", "score_rule", "verdict"];
  const SUMMARY_KEYS = ["total", "scored", "passed", ...NON_SCORED, "pass_rate", "pass_rate_ci95", "worst_case_pass_rate",
    "best_case_pass_rate"];
  const SCORE_RULES = ["as-proposed", "clamped", "midpoint-fallback"], VERDICTS = ["certified", "not-certified", "incomplete"];

  // Every rule of format v1 §6 a certificate obeys that needs no scoring engine (check_certificate).
  // `runAt`, the run's registration, bounds the attempts' times; the page leaves it null, since it needs the run's
  // leaf, which only verify.py's replay of the ledger has.
  function checkCertificate(cert, spec, m, isPublic, specPath, specSha256, runAt = null) {
    const out = checkKeys(cert, CERTIFICATE_KEYS, ["evidence"]), P = (...a) => out.push(problem(...a));
    if (!isObj(cert)) return out;
    if (has(cert, "evidence")) out.push(...evidenceProblems(cert.evidence, Array.isArray(spec.items) ? spec.items : []));
    if (cert.type !== "certificate" || cert.v !== 1)
      P("wrong type or version", "", '"certificate", v 1', `${show(cert.type)}, v ${show(cert.v)}`);
    for (const k of ["issued_at", "finished_at"])
      if (has(cert, k) && !isTime(cert[k])) P("malformed time", k, "YYYY-MM-DDTHH:MM:SSZ", show(cert[k]));
    if (has(cert, "expires_at") && !(cert.expires_at === null || isTime(cert.expires_at)))
      P("must be a time or null", "expires_at", undefined, show(cert.expires_at));
    const wantSpec = { path: specPath, sha256: specSha256 };
    if (has(cert, "run_spec") && !same(cert.run_spec, wantSpec))
      P("run_spec must name the published run spec and its hash", "run_spec", canonical(wantSpec), show(cert.run_spec, 200));
    const results = Array.isArray(cert.results) ? cert.results : [];
    if (!Array.isArray(cert.results)) P("must be a list", "results", undefined, typeName(cert.results));
    const rules = Array.isArray(spec.exclusion_rules) ? spec.exclusion_rules.length : 0;
    const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])), open = [];
    const lineage = {
      maxAttempts: m ? m.maxAttempts : null, notBefore: runAt, notAfter: isTime(cert.finished_at) ? cert.finished_at : null,
      evidenceNames: new Set((Array.isArray(cert.evidence) ? cert.evidence : []).filter((e) => isObj(e) && typeof e.name === "string")
        .map((e) => e.name)),
    };
    results.forEach((r, i) => {
      const [found, status, passed] = checkResult(r, `results[${i}]`, isPublic, rules, lineage);
      out.push(...found);
      if (status !== null) counts[status] += 1;
      if (status === "scored") open.push(passed);
    });
    const s = cert.summary;
    out.push(...checkKeys(s, SUMMARY_KEYS, [], "summary"));
    if (isObj(s)) {
      for (const [k, v] of Object.entries({ total: results.length, ...counts }))
        if (has(s, k) && !(isInt(s[k]) && s[k] === v))
          P(`${k} does not count the results`, `summary.${k}`, String(v), show(s[k]));
      const openPassed = open.filter(Boolean).length;
      if (has(s, "passed") && !(isInt(s.passed) && s.passed >= 0 && s.passed <= counts.scored))
        P("passed must be an integer between 0 and the scored count", "summary.passed", `0..${counts.scored}`, show(s.passed));
      else if (isPublic && open.length && open.every((p) => p !== null) && s.passed !== openPassed)
        P("passed does not count the results marked passed", "summary.passed", String(openPassed), show(s.passed));
      for (const k of ["pass_rate", "worst_case_pass_rate", "best_case_pass_rate"])
        if (has(s, k) && !isRate(s[k]))
          P("a rate is a percentage with exactly 4 decimals", `summary.${k}`, undefined, show(s[k]));
      const ci = s.pass_rate_ci95;
      if (has(s, "pass_rate_ci95") &&
          !(Array.isArray(ci) && ci.length === 2 && ci.every(isRate) && cmp(decimalValue(ci[0]), decimalValue(ci[1])) <= 0))
        P("the interval is two ordered percentages with 4 decimals", "summary.pass_rate_ci95", undefined, show(ci));
    }
    const g = cert.grader;
    out.push(...checkKeys(g, ["record", "kept", "dropped"], [], "grader"));
    if (has(g, "record") && !isHex64(g.record)) P("the grader record is a SHA-256", "grader.record", undefined, show(g.record));
    for (const k of ["kept", "dropped"])
      if (has(g, k) && !(isInt(g[k]) && g[k] >= 0)) P("must be a count", `grader.${k}`, undefined, show(g[k]));
    if (!SCORE_RULES.includes(cert.score_rule))
      P("unknown score rule", "score_rule", SCORE_RULES.join(" | "), show(cert.score_rule));
    if (!VERDICTS.includes(cert.verdict)) P("unknown verdict", "verdict", VERDICTS.join(" | "), show(cert.verdict));
    for (const k of ["grade", "worst_case_grade", "best_case_grade"])
      if (has(cert, k) && !m.rank.has(cert[k]))
        P("not a grade of the pinned methodology", k, m.grades.map((x) => x.name).join(", "), show(cert[k]));
    if (typeof cert.grade === "string" && m.rank.has(cert.grade)) {
      const band = m.band(cert.grade), score = cert.score, mid = Math.floor((band[0] + band[1]) / 2);
      if (has(cert, "band") && !same(cert.band, band)) P("band is not the grade's band", "band", show(band), show(cert.band));
      if (has(cert, "score") && !(isInt(score) && band[0] <= score && score <= band[1]))
        P("score lies outside the grade's band", "score", `an integer in ${band[0]}..${band[1]}`, show(score));
      else if (cert.score_rule === "midpoint-fallback" && score !== mid)
        P("a midpoint fallback scores the band's midpoint", "score", String(mid), show(score));
      else if (cert.score_rule === "clamped" && !band.includes(score))
        P("a clamped score is a band edge", "score", `${band[0]} or ${band[1]}`, show(score));
    }
    return out;
  }

  // certificate_binding_problems, with the part of the ledger the browser has: the certificate's own leaf (that
  // finished_at follows the run's registration needs the run's leaf: verify.py's).
  function bindingProblems(cert, leaf, spec) {
    const out = [], P = (...a) => out.push(problem(...a));
    if (cert.type !== "certificate" || cert.v !== 1)
      P("wrong type or version", "type", '"certificate", v 1', `${show(cert.type)}, v ${show(cert.v)}`);
    for (const k of ["serial", "run"]) if (cert[k] !== leaf[k]) P(`${k} differs from the ledger`, k, leaf[k], show(cert[k]));
    if (cert.issued_at !== leaf.at)
      P("issued_at differs from the certificate leaf's time", "issued_at", leaf.at, show(cert.issued_at));
    if (!(isTime(cert.finished_at) && cert.finished_at <= leaf.at))
      P("finished_at must lie between the run's registration and the issue time", "finished_at", `finished_at ≤ ${leaf.at}`,
        show(cert.finished_at));
    for (const k of ["subject", "gate", "methodology"])
      if (!same(cert[k], spec[k])) P(`${k} differs from the run spec's`, k, show(spec[k]), show(cert[k]));
    const got = Array.isArray(cert.results) ? cert.results.map((x) => (isObj(x) ? x.item : null)) : null;
    if (!same(got, spec.items))
      P("results do not name the run spec's items in its order", "results", show(spec.items), show(got));
    return out;
  }

  function recheckable(cert) {
    if (!isObj(cert) || typeof cert.serial !== "string" || !Array.isArray(cert.results) || !isObj(cert.summary) || !isObj(cert.grader))
      return false;
    if (!cert.results.every((r) => isObj(r) && typeof r.item === "string" && STATUSES.includes(r.status))) return false;
    const scored = cert.results.filter((r) => r.status === "scored").length, passed = cert.summary.passed;
    return isInt(passed) && passed >= 0 && passed <= scored;
  }

  // An open scored result recomputed: [problems, the recomputed pass or null] (recheck_open_result).
  function recheckOpenResult(r, answer, m, where) {
    const out = [], fields = Array.isArray(r.fields) ? r.fields : [];
    const found = fields.map((f) => (isObj(f) ? f.name : null)), names = found.filter((n) => typeof n === "string");
    if (names.length !== found.length)
      return [[problem("a field name is a non-empty string", `${where}.fields`, undefined, show(found))], null];
    if (answer && !same(cpSorted(names), cpSorted(Object.keys(answer)))) {
      out.push(problem("fields differ from the revealed answer's", `${where}.fields`, cpSorted(Object.keys(answer)).join(", "),
        names.map((n) => show(n)).join(", ")));
      return [out, null];
    }
    const scored = [];
    for (const [j, f] of fields.entries()) {
      if (!isObj(f) || !KINDS.includes(f.kind) || !TIERS.includes(f.tier)) return [out, null]; // reported as its shape
      let { kind, tier, similarity: sim } = f;
      const fw = `${where}.fields[${j}]`, a = answer && has(answer, f.name) ? answer[f.name] : null;
      if (a && (a.kind !== kind || a.tier !== tier)) {
        out.push(problem("kind or tier differs from the revealed answer", fw, `${a.kind}, ${a.tier}`, `${kind}, ${tier}`));
        [kind, tier] = [a.kind, a.tier];
      }
      const badOutput = valueKindProblem(kind, f.output);
      if (badOutput) out.push(problem(`the output of a ${kind} field`, `${fw}.output`, badOutput, show(f.output)));
      const form = similarityFormProblem(kind, tier, sim);
      if (form || typeof sim !== "string") {
        out.push(problem(`malformed similarity for a ${tier} ${kind} field`, `${fw}.similarity`, String(form), show(sim)));
        return [out, null];
      }
      const want = a && !badOutput ? computedSimilarity(kind, tier, f.output, a.value) : null;
      if (want !== null && want !== sim) {
        out.push(problem("similarity does not follow from the output and the revealed answer", `${fw}.similarity`, want, show(sim)));
        sim = want;
      }
      scored.push([f.name, tier, similarityValue(sim)]);
    }
    if (!scored.length) return [out, null];
    const s = scoreItem(scored, m);
    if (r.score !== s.text)
      out.push(problem("item score does not follow from the similarities", `${where}.score`, s.text, show(r.score)));
    if (r.passed !== s.passed) {
      const why = s.below.length ? `below the floor: ${s.below.join(", ")}` : `score ${s.text} against threshold ${m.thresholdText}`;
      out.push(problem(`passed does not follow from the score and the floors (${why})`, `${where}.passed`, String(s.passed),
        show(r.passed)));
    }
    return [out, s.passed];
  }

  // A details document's or grader record's members, type, serial and salt (certificate_documents.py).
  function salted(doc, kind, keys, serial) {
    const out = checkKeys(doc, ["type", "v", "serial", "salt", ...keys]);
    if (!isObj(doc)) return out;
    if (doc.type !== kind || doc.v !== 1)
      out.push(problem("wrong type or version", "", `"${kind}", v 1`, `${show(doc.type)}, v ${show(doc.v)}`));
    if (doc.serial !== serial) out.push(problem("serial differs from the certificate's", "serial", serial, show(doc.serial)));
    if (!isHex64(doc.salt)) out.push(problem("a salt is 64 lowercase hex digits", "salt", undefined, show(doc.salt)));
    return out;
  }
  const at = (p, prefix) => ({ ...p, where: p.where ? `${prefix}.${p.where}` : prefix });

  // Every derived field recomputed (recheck_certificate) from the open results or the published details, the
  // revealed answers and details documents (Maps by item) and the grader record (or null). What cannot be
  // recomputed yet is returned as asserted, in the words verify.py uses.
  function recheckCertificate(cert, m, isPublic, answers, details, record, rules) {
    const out = { problems: [], asserted: [] }, P = (...a) => out.problems.push(problem(...a));
    const serial = cert.serial, counts = Object.fromEntries(STATUSES.map((s) => [s, 0])), scoredIds = new Set();
    let passed = 0, unknown = 0;
    for (const [i, r] of cert.results.entries()) {
      counts[r.status] += 1;
      const where = `results[${i}] (${r.item})`;
      let opened = isPublic ? r : null;
      if (!isPublic && details.has(r.item)) {
        const d = details.get(r.item), found = salted(d, "result-details", ["result"], serial);
        for (const k of ["item", "status"])
          if (isObj(d) && isObj(d.result) && d.result[k] !== r[k])
            found.push(problem(`${k} differs from the sealed result's`, `result.${k}`, show(r[k]), show(d.result[k])));
        // The sealed result shows every attempt's number, status and time; the opened one must tell the same chain, or
        // the published lineage would not be the one that was signed (check_details_document).
        if (isObj(d) && isObj(d.result) && !same(lineageSkeleton(d.result), lineageSkeleton(r)))
          found.push(problem("the attempts differ from the sealed result's", "result", show(lineageSkeleton(r), 200),
            show(lineageSkeleton(d.result), 200)));
        out.problems.push(...found.map((p) => at(p, `${where} details`)));
        const [shape] = checkResult(isObj(d) ? d.result : undefined, `${where} details.result`, true, rules);
        out.problems.push(...shape);
        opened = shape.length ? null : d.result;
      }
      if (r.status !== "scored") continue;
      scoredIds.add(r.item);
      if (!opened) {
        unknown += 1;
        continue;
      }
      const [found, ok] = recheckOpenResult(opened, answers.get(r.item) || null, m, where);
      out.problems.push(...found);
      passed += ok ? 1 : 0;
    }
    const summary = cert.summary;
    if (unknown && !(passed <= summary.passed && summary.passed <= passed + unknown))
      P("passed cannot be: the published results already show how many pass, and only the sealed ones are unknown",
        "summary.passed", `${passed} to ${passed + unknown}`, show(summary.passed));
    if (unknown) {
      passed = summary.passed;
      out.asserted.push(`certificate ${serial}: ${summary.passed} of ${counts.scored} scored results passed, as the certificate ` +
        `states; ${unknown} sealed result(s) can be rechecked once their items are retired`);
    } else if (summary.passed !== passed) {
      P("passed does not count the results that pass", "summary.passed", String(passed), show(summary.passed));
    }
    const g = gradeCounts(counts, passed, m);
    for (const k of ["pass_rate", "pass_rate_ci95", "worst_case_pass_rate", "best_case_pass_rate"])
      if (!same(summary[k], g.summary[k]))
        P(`${k} does not follow from the counts`, `summary.${k}`, show(g.summary[k]), show(summary[k]));
    for (const k of ["grade", "band", "worst_case_grade", "best_case_grade", "verdict"])
      if (!same(cert[k], g[k])) P(`${k} does not follow from the pass rates`, k, show(g[k]), show(cert[k]));
    const grader = cert.grader;
    if (record === null) {
      out.asserted.push(`certificate ${serial}: the grader's proposal behind score ${pyJson(cert.score)} (${cert.score_rule}) ` +
        `and the ${pyJson(grader.kept)} kept / ${pyJson(grader.dropped)} dropped bullets; the grader record is published once ` +
        "every item is revealed");
      return out;
    }
    const rp = salted(record, "grader-record", ["proposed_json", "rationale"], serial);
    if (isObj(record) && !(record.proposed_json === null || typeof record.proposed_json === "string"))
      rp.push(problem("the proposal is kept as its JSON text, or null", "proposed_json", undefined, show(record.proposed_json)));
    out.problems.push(...rp.map((p) => at(p, "grader record")));
    const pj = isObj(record) && typeof record.proposed_json === "string" ? record.proposed_json : null;
    const [score, rule] = bandScore(pj, g.band);
    if (cert.score !== score)
      P(`score does not follow from the proposal ${show(pj)} and the band ${pyJson(g.band)}`, "score", String(score), show(cert.score));
    if (cert.score_rule !== rule) P("score_rule does not follow from the proposal", "score_rule", rule, show(cert.score_rule));
    const [kept, dropped] = keepBullets(isObj(record) ? record.rationale : undefined, scoredIds);
    for (const [k, v] of [["kept", kept.length], ["dropped", dropped]])
      if (grader[k] !== v) P(`${k} does not count the rationale's bullets`, `grader.${k}`, String(v), show(grader[k]));
    return out;
  }

  // ---------------------------------------------------------------------------- the steps, as they run
  class Stop extends Error {}
  const STATUS_WORDS = { running: "checking", passed: "passed", failed: "failed", unavailable: "could not check",
    skipped: "not checkable here", revoked: "revoked" };

  // A list of named steps, each reported to env.onStep as it starts and ends. The first that fails or cannot be
  // checked stops the run: later steps would check something already known to be wrong.
  class Run {
    constructor(env) {
      // key (mlKey): the fingerprint of the Ed25519 (ML-DSA-44) key that signed today's checkpoint; verdict and expired:
      // a certificate's, once checked; stopped: a step ended the run.
      Object.assign(this, { env, steps: [], facts: [], says: "", states: [], key: null, mlKey: null, verdict: null, expired: null,
        stopped: false });
    }
    emit(s) {
      if (this.env.onStep) this.env.onStep({ ...s });
    }
    async step(name, fn) {
      const s = { index: this.steps.length, name, status: "running", detail: "" };
      this.steps.push(s);
      this.emit(s);
      try {
        const value = await fn(s);
        if (s.status === "running") s.status = "passed";
        this.emit(s);
        return value;
      } catch (e) {
        s.status = e instanceof Failed ? "failed" : "unavailable";
        s.detail = e instanceof Failed || e instanceof CannotCheck ? e.message
          : `an error inside this check (${e && e.message}), which proves nothing either way`;
        this.emit(s);
        throw new Stop();
      }
    }
    skip(name, detail) {
      const s = { index: this.steps.length, name, status: "skipped", detail };
      this.steps.push(s);
      this.emit(s);
    }
    // The outcome in words, for the live region: {status, text, steps}, the status one of OUTCOMES.
    async go(noun, body) {
      try {
        await body();
      } catch (e) {
        if (!(e instanceof Stop)) throw e;
        this.stopped = true;
      }
      const failed = this.steps.find((s) => s.status === "failed"), last = this.steps[this.steps.length - 1];
      // A step may end "could not check" and let the others run (an ML-DSA-44 signature this browser cannot verify):
      // the outcome is then "could not check" too, with what did pass, never "valid".
      const unchecked = this.steps.filter((s) => s.status === "unavailable");
      const skipped = this.steps.filter((s) => s.status === "skipped").map((s) => s.detail);
      const rest = (this.key ? ` ${keyWords(this.key)}` : "") + (this.mlKey ? ` ${mlKeyWords(this.mlKey)}` : "") +
        (this.says ? ` It says: ${this.says}.` : "") + this.states.map((x) => ` ${x}`).join("") +
        (skipped.length ? ` Not checkable here: ${skipped.join("; ")}.` : "");
      let status, text;
      if (failed) [status, text] = ["failed", `Not valid: this ${noun} failed "${failed.name}": ${failed.detail}.`];
      else if (this.stopped && last && last.status === "unavailable")
        [status, text] = ["could-not-check",
          `Could not check this ${noun}: ${last.detail}. That says nothing either way; verify.py can check it.`];
      else if (unchecked.length)
        [status, text] = ["could-not-check", `Could not check all of this ${noun}: ` +
          `${unchecked.map((s) => `${s.name}: ${s.detail}`).join("; ")}. What this page could check passed: ${this.facts.join("; ")}.` +
          (this.expired ? ` It expired on ${this.expired} (by this computer's clock).` : "") + rest + " verify.py can check the rest."];
      else {
        // Authentic is all a signature shows; "valid" is said only of a certified, unrevoked, unexpired certificate
        // or of a reveal document or proof. A run that was not certified is a result, not a certificate.
        let head;
        if (this.steps.some((s) => s.status === "revoked")) [status, head] = ["revoked", "Authentic, but revoked"];
        else if (this.expired) [status, head] = ["expired", `Authentic, but expired on ${this.expired} (by this computer's clock)`];
        else if (this.verdict === "incomplete") [status, head] = ["not-certified", "Authentic: this result was not decided (incomplete)"];
        else if (this.verdict === "not-certified") [status, head] = ["not-certified", "Authentic: this result was not certified"];
        else [status, head] = ["valid", "Valid"];
        text = `${head}: ${this.facts.join("; ")}.` + rest;
      }
      return { status, text, steps: this.steps.map((s) => ({ ...s })) };
    }
  }

  // Every status an outcome can have; the page's style colours valid, failed and the warnings.
  const OUTCOMES = ["valid", "revoked", "expired", "not-certified", "failed", "could-not-check"];

  // The fingerprints of the keys whose private half the project publishes (the demo program's). They must be those
  // of PUBLISHED_PRIVATE_KEYS in generator/verifier/core/public_keys.py; tests/browser/test_browser_check.py compares them.
  const PUBLISHED_DEMO_KEYS = [
    "SHA256:1f4dd2f8d7bced8f341897bd961d73084b9ae5ec03a172e574d197012b534c13",
    "SHA256:13fa4089af669bb603a137d0ff19e2ff39fa83fc2fd6947f0454bd6b240a7183",
  ];

  // A signature proves only that the key's holder signed: the reader must know the key is the program's.
  function keyWords(fingerprint) {
    return `Signed by the key this site publishes, ${fingerprint}; compare this fingerprint with one you obtained elsewhere.` +
      (PUBLISHED_DEMO_KEYS.includes(fingerprint) ? " This is the published demo key: its signatures prove nothing." : "");
  }
  const mlKeyWords = (fingerprint) => `Also signed by the ML-DSA-44 key this site publishes, ${fingerprint}.` +
    (PUBLISHED_DEMO_KEYS.includes(fingerprint) ? " This is a published demo key too." : "");

  const KEYS_PATH = "keys.json", CHECKPOINT_PATH = "ledger/checkpoint", POLICY_PATH = "ledger/policy.txt";
  const REVOCATIONS_PATH = "ledger/revocations.json";
  const ML_DSA_KEYS = "ml_dsa_44_keys", ML_DSA_ROW_KEYS = ["fingerprint", "public_key", "status", "valid_from", "valid_until", "vkey"];
  const LEDGER_PREFIX = "ledger"; // the log prefix: the checkpoint and the tiles are under it
  const NOUN = { certificate: "certificate", reveal: "reveal document", proof: "proof" };
  const VERDICT_WORDS = { certified: "certified", "not-certified": "not certified", incomplete: "incomplete (not decisive)" };

  async function need(env, url, what) {
    const data = await env.fetch(url);
    if (data === null) throw new CannotCheck(`the site has no ${what || url}`);
    return data;
  }

  // keys.json: the keys the site says are its own (the reader compares the fingerprint out of band).
  async function readKeys(bytes) {
    const doc = parseCanonical(bytes, KEYS_PATH);
    if (!isObj(doc) || doc.type !== "keys" || !Array.isArray(doc.keys)) throw new Failed("keys.json is not a keys document");
    const keys = [];
    for (const row of doc.keys)
      keys.push({ ...(await parseVkey(isObj(row) ? row.vkey : null)), status: row.status, reason: row.reason,
        validFrom: row.valid_from });
    const active = keys.filter((k) => k.status === "active");
    if (active.length !== 1)
      throw new Failed(`keys.json lists ${active.length} active keys; exactly one signs today's checkpoint`);
    if (keys.some((k) => k.name !== doc.origin)) throw new Failed("a key of keys.json is not named by the program's origin");
    const mlDsa = await readMlDsaKeys(doc);
    return { origin: doc.origin, keys, active: active[0], mlDsa, mlDsaActive: mlDsa.find((k) => k.status === "active") || null };
  }

  // keys.json's `ml_dsa_44_keys`, absent while the log has no ML-DSA-44 key (rotation.py ml_dsa_key_row_problems): each
  // row an ML-DSA-44 vkey named by the origin, its key and fingerprint; exactly one active, the one that signs today's
  // tree beside the Ed25519 key. That the rows follow the ledger's key events is verify.py's to check.
  async function readMlDsaKeys(doc) {
    if (!has(doc, ML_DSA_KEYS)) return [];
    if (!Array.isArray(doc[ML_DSA_KEYS])) throw new Failed(`${KEYS_PATH}: ${ML_DSA_KEYS} must be a list`);
    const keys = [];
    for (const [n, row] of doc[ML_DSA_KEYS].entries()) {
      const w = `${ML_DSA_KEYS}[${n}]`, shape = checkKeys(row, ML_DSA_ROW_KEYS, ["reason"], w);
      if (shape.length) throw new Failed(`${KEYS_PATH}: ${describeProblems(shape)}`);
      const key = await within(`${KEYS_PATH}: ${w}.vkey: not a verifier key: `, () => parseVkey(row.vkey, [COSIGNER_TYPES[ML_DSA_44]]));
      if (key.name !== doc.origin)
        throw new Failed(`${KEYS_PATH}: ${describeProblems([problem("an ML-DSA-44 key (type 0x06) named by the origin",
          `${w}.vkey`, doc.origin)])}`);
      if (row.public_key !== b64encode(key.pub) || row.fingerprint !== key.fingerprint)
        throw new Failed(`${KEYS_PATH}: ${w}: public_key or fingerprint differs from the vkey's key`);
      keys.push({ ...key, status: row.status, reason: row.reason, validFrom: row.valid_from });
    }
    const active = keys.filter((k) => k.status === "active");
    if (keys.length && active.length !== 1)
      throw new Failed(`keys.json lists ${active.length} active ML-DSA-44 keys; exactly one signs today's checkpoint beside ` +
        "the Ed25519 key");
    return keys;
  }

  async function fetchCommon(env, root) {
    const [keys, todayBytes, policy] = await Promise.all([need(env, root + KEYS_PATH), need(env, root + CHECKPOINT_PATH),
      env.fetch(root + POLICY_PATH)]);
    return { site: await readKeys(keys), todayBytes, policy };
  }

  // The signers of a checkpoint under the v2 key rules (keyring.py, rotation.py), as far as the site's files tell
  // them. Today's tree must be signed by the active key, the newest valid for it; a revoked key is valid for no tree
  // that holds its revocation, so for none of today's; a retired key only for its hand-over tree, which only the
  // ledger's key events can tell. Of an older tree (`today` false) only that a key of the site signed it.
  async function checkSigners(run, site, cp, today) {
    const { verified } = await openNote(cp.bytes, site.keys);
    if (cp.origin !== site.origin)
      throw new Failed(`the checkpoint's origin ${show(cp.origin)} is not the site's ${show(site.origin)}`);
    if (!today) return verified;
    const revoked = verified.find((k) => k.status === "revoked");
    if (revoked)
      throw new Failed(`signed by ${revoked.fingerprint}, revoked (${revoked.reason}): that key cannot sign a tree that records its ` +
        `revocation, this one has ${cp.size} entries`);
    if (!verified.includes(site.active))
      throw new Failed(`not signed by ${site.active.fingerprint}, the key valid for a tree of ${cp.size} entries`);
    for (const k of verified.filter((x) => x !== site.active))
      run.skip("Checking the retired key's hand-over", `the checkpoint is also signed by the retired key ${k.fingerprint}, valid only ` +
        "for the tree that hands over to its successor; whether this is that tree needs the ledger's key events (verify.py checks it)");
    return verified;
  }

  // "could not check A and B: why", for [what, why] pairs, grouped by why in the order first met.
  function couldNotCheck(items) {
    const byWhy = new Map();
    for (const [what, why] of items) byWhy.set(why, [...(byWhy.get(why) || []), what]);
    return "could not check " + [...byWhy].map(([why, whats]) => `${whats.join(" and ")}: ${why}`).join("; ");
  }

  // The log's ML-DSA-44 signatures, its second line of keys (rotation.py checkpoint_signers, signer_problems): every
  // line by a key of keys.json must verify; today's tree must carry one by the active ML-DSA-44 key and none by a
  // revoked one; a retired key's only on its hand-over tree, which needs the ledger. `trees`: [checkpoint, is today's].
  // A signature this browser cannot verify ends the step "could not check" and lets the others run.
  async function checkLogMlDsa(run, env, site, trees) {
    if (!site.mlDsa.length) return;
    await run.step("Checking the log's ML-DSA-44 signature", async (s) => {
      const verified = [], unchecked = [], checkers = new Set();
      for (const [cp, today] of trees) {
        const signed = [];
        for (const k of site.mlDsa) {
          const got = await cosignedBy(env, cp.bytes, k);
          if (got === null) continue;
          signed.push(k);
          const what = `the log's ML-DSA-44 signature by ${k.fingerprint} on the tree of ${cp.size} entries`;
          if (got.unchecked) unchecked.push([what, got.unchecked]);
          else {
            verified.push(what);
            checkers.add(got.by);
          }
        }
        if (!today) continue;
        const revoked = signed.find((k) => k.status === "revoked");
        if (revoked)
          throw new Failed(`a signature by ${revoked.fingerprint}, a revoked ML-DSA-44 key (${revoked.reason}): that key cannot sign ` +
            `a tree that records its revocation, this one has ${cp.size} entries`);
        if (!signed.includes(site.mlDsaActive))
          throw new Failed(`not signed by ${site.mlDsaActive.fingerprint}, the ML-DSA-44 key valid for a tree of ${cp.size} entries`);
        for (const k of signed.filter((x) => x !== site.mlDsaActive))
          run.skip("Checking the retired key's hand-over", `the checkpoint is also signed by the retired ML-DSA-44 key ${k.fingerprint}, ` +
            "valid only for the tree that hands over to its successor; whether this is that tree needs the ledger's key events " +
            "(verify.py checks it)");
        if (!unchecked.length) run.mlKey = site.mlDsaActive.fingerprint;
      }
      const passed = verified.length ? `${verified.join(", ")}: verified with ${[...checkers].join(" and ")}` : "";
      if (unchecked.length) [s.status, s.detail] = ["unavailable", couldNotCheck(unchecked) + (passed ? `; ${passed}` : "")];
      else
        s.detail = `signed by ${site.origin} with ${site.mlDsaActive.fingerprint}, the active ML-DSA-44 key of ${KEYS_PATH}, verified ` +
          `with ${[...checkers].join(" and ")}` + (verified.length > 1 ? `; in all, ${verified.join(", ")}` : "");
    });
  }

  // The policy's log keys for the site's origin, per signature type (witnessing.py policy_problems): its Ed25519 keys,
  // if it names any, must hold the site's; one of its ML-DSA-44 keys, if it names any, must have signed. What could
  // not be checked, and what verified an ML-DSA-44 signature the policy requires.
  async function policyLogProblems(env, site, policy, cpBytes) {
    const named = policy.logs.filter((l) => l.key.name === site.origin).map((l) => l.key);
    const ed = named.filter((k) => k.kind === ED25519), ml = named.filter((k) => k.kind === ML_DSA_44);
    if (ed.length && !ed.some((k) => sameBytes(k.pub, site.active.pub)))
      throw new Failed(`the policy names no log key ${site.origin} with this site's key; it trusts another log`);
    if (!named.length) throw new Failed(`the policy names no log key ${site.origin}; it trusts another log`);
    const unchecked = [], checkers = new Set();
    let lines = 0;
    for (const key of ml) {
      const got = await within("the log's ML-DSA-44 signature does not verify: ", () => cosignedBy(env, cpBytes, key));
      if (got === null) continue;
      lines += 1;
      if (got.unchecked) unchecked.push([`the log's ML-DSA-44 signature by ${key.fingerprint}, which the policy requires`, got.unchecked]);
      else checkers.add(got.by);
    }
    if (ml.length && !lines)
      throw new Failed("the policy requires the log's ML-DSA-44 signature and the checkpoint has none by " +
        ml.map((k) => k.fingerprint).join(", "));
    return { unchecked, checkers, mlSigned: lines > unchecked.length };
  }

  // The site's trust policy: the log keys it names, then the quorum of witness cosignatures (witnessing.py). A
  // quorum only an ML-DSA-44 cosignature this browser cannot verify would meet is "could not check", never met or missed.
  async function checkWitnesses(run, env, site, cpBytes, policyBytes) {
    const name = "Checking witness cosignatures";
    if (policyBytes === null)
      return run.skip(name, `the site publishes no witness policy (${POLICY_PATH}), so it asks for no cosignature`);
    await run.step(name, async (s) => {
      const policy = await parsePolicy(policyBytes);
      const { unchecked, checkers, mlSigned } = await policyLogProblems(env, site, policy, cpBytes);
      const cosigned = new Map(), unknown = new Map();
      for (const w of policy.witnesses) {
        const got = await within("a cosignature by a witness of the policy does not verify: ", () => cosignedBy(env, cpBytes, w.key));
        if (got && got.unchecked) unknown.set(w.name, { ...got, key: w.key });
        else if (got) cosigned.set(w.name, got.ts);
        if (got && got.by) checkers.add(got.by);
      }
      const [ok] = evaluatePolicy(policy, new Set(cosigned.keys())), by = cpSorted(cosigned.keys()), maybe = cpSorted(unknown.keys());
      const [could, missing] = evaluatePolicy(policy, new Set([...by, ...maybe]));
      // Missing, not bad: no line fails to verify, so the site's files may well be authentic; the checkpoint is not
      // yet what the site's own policy trusts.
      if (!could)
        throw new Failed(`not yet cosigned by witness${missing.length > 1 ? "es" : ""} ${missing.join(", ")}: the checkpoint does ` +
          `not meet the site's trust policy (${POLICY_PATH}); the file itself may still be authentic. In verify.py's words: the checkpoint lacks the ` +
          `cosignatures the policy's quorum (${policy.quorum}) needs; cosigned by ${cpSorted([...by, ...maybe]).join(", ") || "no witness of the policy"}; ` +
          `missing: ${missing.join(", ")}` + (maybe.length ? ` (${maybe.join(", ")} counted as cosigned: their ML-DSA-44 cosignatures could not be checked here)` : ""));
      for (const n of maybe)
        unchecked.push([`the ML-DSA-44 cosignature by witness ${n} (${unknown.get(n).key.fingerprint})`, unknown.get(n).unchecked]);
      const when = (n) => (cosigned.get(n) < 10n ** 11n ? new Date(Number(cosigned.get(n)) * 1000).toISOString().slice(0, 19) + "Z" : "?");
      const parts = [
        ...(ok ? [] : [`so whether the quorum of ${POLICY_PATH} (${policy.quorum}) holds, which it does only with ${maybe.length > 1 ?
          "those cosignatures" : "that cosignature"}`]),
        ...(mlSigned ? ["the log's ML-DSA-44 signature, which the policy requires, verifies"] : []),
        ...(by.length ? [`cosigned by ${by.map((n) => `${n} (at ${when(n)})`).join(", ")}`] : []),
        ...(ok ? [by.length ? `the quorum of ${POLICY_PATH} holds` : `the quorum of ${POLICY_PATH} is none`] : []),
        ...(checkers.size ? [`ML-DSA-44 verified with ${[...checkers].join(" and ")}`] : []),
      ];
      if (unchecked.length) [s.status, s.detail] = ["unavailable", [couldNotCheck(unchecked), ...parts].join("; ")];
      else s.detail = parts.join("; ");
      if (by.length) run.facts.push(`cosigned by ${by.join(", ")}`);
    });
  }

  // An older checkpoint `c` reached from today's `today`: the same tree (null), or a consistency proof made from today's
  // hash tiles, for a v2 site as for a v3 one (no ledger/consistency/ file is read), checked against both roots; what
  // proved it, in words. Failed for another root at today's size, a larger tree, or a proof the roots refuse.
  // A certificate's revealed items are mostly pinned to the same few releases: each older tree is proven once per
  // checkpoint of today, not once per item (its tiles fetched again each time).
  const reached = new WeakMap();

  function reachToday(env, root, c, today) {
    if (!reached.has(today)) reached.set(today, new Map());
    const proven = reached.get(today), key = `${c.size} ${b64encode(c.root)}`;
    if (!proven.has(key)) proven.set(key, proveReached(env, root, c, today));
    return proven.get(key);
  }

  async function proveReached(env, root, c, today) {
    if (c.size === today.size) {
      if (!sameBytes(c.root, today.root))
        throw new Failed(`a tree of ${c.size} entries with another root than the site's: a fork of its ledger`);
      return null;
    }
    if (c.size > today.size)
      throw new Failed(`the proof's tree has ${c.size} entries, more than the ${today.size} of this site's ledger: it is another ` +
        "program's, or the site was rolled back");
    const { proof: hashes, tiles } = await consistencyFromTiles((p) => env.fetch(`${root}${LEDGER_PREFIX}/${p}`), c.size, today.size);
    const made = `the consistency proof from ${c.size} to ${today.size} entries made from the site's hash ` +
      `tile${tiles.length > 1 ? "s" : ""} ${tiles.map((t) => `${LEDGER_PREFIX}/${t}`).join(", ")}`;
    await within(`${made}: `, () => verifyConsistency(c.size, today.size, hashes, c.root, today.root));
    return made;
  }

  // Which field of a leaf binds a file (history.py leaf_binds), and which leaf a page's artifact has.
  const BINDING = { commit: "commitment", run: "sha256", methodology: "sha256", certificate: "sha256" };
  const LEAF_OF = { reveal: "commit", certificate: "certificate" };

  // One artifact with its proof: hash, inclusion, signature and witnesses against the site's keys and today's
  // checkpoint, as `verify.py proof` checks it with the site's policy; then, for a certificate, its verdict.
  async function artifactSteps(run, env, root, kind, got) {
    const { data, proofBytes, site, todayBytes, policy } = got, noun = NOUN[kind];
    const { proof, leaf, doc } = await run.step("Recomputing its SHA-256", async (s) => {
      const digest = hex(await sha256(data));
      const [pr, lf] = await within("its inclusion proof is malformed: ", () => {
        const p = parseTlogProof(proofBytes);
        if (p.extra === null) throw new Failed("no extra line: the proven leaf is missing");
        return [p, parseCanonical(p.extra, "the proof's leaf")];
      });
      if (!isObj(lf) || lf.type !== LEAF_OF[kind])
        throw new Failed(`the proof's leaf is a ${show(isObj(lf) ? lf.type : lf)} entry, not the ${LEAF_OF[kind]} entry of a ${noun}`);
      if (lf[BINDING[lf.type]] !== digest)
        throw new Failed(`SHA-256 of the file is ${digest} but the ledger leaf binds ${lf[BINDING[lf.type]]}`);
      const d = parseCanonical(data), want = kind === "reveal" ? lf.id : lf.serial;
      if (!isObj(d) || d.type !== (kind === "reveal" ? "item-reveal" : "certificate") || (kind === "reveal" ? d.id : d.serial) !== want)
        throw new Failed(`the file is not the ${noun} its ledger leaf names (${want})`);
      s.detail = `${digest}, the hash that ledger entry ${pr.index} binds`;
      return { proof: pr, leaf: lf, doc: d };
    });
    const cp = await run.step("Checking the inclusion proof", async (s) => {
      const c = readCheckpoint(proof.checkpoint);
      const got = await rootFromInclusion(proof.index, c.size, await leafHash(proof.extra), proof.hashes);
      if (!sameBytes(got, c.root))
        throw new Failed(`the proof leads to root ${b64encode(got)}, but the checkpoint's root is ${b64encode(c.root)}`);
      s.detail = `entry ${proof.index} of a tree of ${c.size} entries, root ${b64encode(c.root)}`;
      if (sameBytes(proof.checkpoint, todayBytes)) return c;
      // Format v3 pins a proof to the release that first published its artifact: an older tree, which today's begins.
      const today = readCheckpoint(todayBytes), via = await reachToday(env, root, c, today);
      s.detail += via ? `; ${via} proves it begins today's tree of ${today.size}` : `; the same tree as today's ${CHECKPOINT_PATH}`;
      return today;
    });
    await run.step("Checking the checkpoint signature", async (s) => {
      await checkSigners(run, site, cp, true);
      run.key = site.active.fingerprint;
      s.detail = `signed by ${site.origin} with ${site.active.fingerprint}, the active key of ${KEYS_PATH}`;
      const what = kind === "certificate" ? (doc.verdict === "certified" ? "certificate" : "result") : noun;
      run.facts.push(`${what} ${kind === "reveal" ? leaf.id : leaf.serial} is entry ${proof.index} of the ledger of ${site.origin}, ` +
        `whose checkpoint of ${cp.size} entries is signed by ${site.active.fingerprint}`);
    });
    await checkLogMlDsa(run, env, site, [[cp, true]]);
    await checkWitnesses(run, env, site, cp.bytes, policy);
    if (kind === "certificate") await certificateSteps(run, env, root, doc, leaf, cp, site);
    else run.says = revealSays(doc);
  }

  // A revealed item's answer, its reveal document checked against its own commit leaf and proof against today's
  // checkpoint; null while the item is sealed (its reveal document is not published).
  async function revealedAnswer(env, root, item, cp) {
    const path = `reveals/${item}.json`, data = await env.fetch(root + path);
    if (data === null) return null;
    const proof = await within(`${path}.tlog-proof: `, async () => parseTlogProof(await need(env, root + path + ".tlog-proof")));
    const leaf = proof.extra && parseCanonical(proof.extra, `the leaf of ${path}.tlog-proof`), digest = hex(await sha256(data));
    // Against today's checkpoint, or (format v3) an older one that today's tree begins.
    const own = sameBytes(proof.checkpoint, cp.bytes) ? cp : await within(`${path}.tlog-proof: `, async () => {
      const c = readCheckpoint(proof.checkpoint);
      await reachToday(env, root, c, cp);
      return c;
    });
    if (!isObj(leaf) || leaf.type !== "commit" || leaf.id !== item)
      throw new Failed(`${path}.tlog-proof does not prove the commit entry of ${item}`);
    if (leaf.commitment !== digest)
      throw new Failed(`SHA-256 of ${path} is ${digest} but its ledger leaf binds ${leaf.commitment}`);
    if (!sameBytes(await rootFromInclusion(proof.index, own.size, await leafHash(proof.extra), proof.hashes), own.root))
      throw new Failed(`the inclusion proof of ${path} does not lead to ${own === cp ? "today's root" : "its checkpoint's root"}`);
    const doc = parseCanonical(data, path), answer = isObj(doc) && isObj(doc.item) ? doc.item.answer : null;
    const field = (f) => !checkKeys(f, ["kind", "tier", "value"]).length && KINDS.includes(f.kind) && TIERS.includes(f.tier) &&
      !valueKindProblem(f.kind, f.value);
    const answers = isObj(answer) && Object.keys(answer).length && Object.values(answer).every(field);
    if (!(doc.type === "item-reveal" && doc.id === item && answers))
      throw new Failed(`${path} is not an item-reveal document of format v1 §3`);
    return answer;
  }

  // fn over `list`, at most `limit` at a time: a certificate of a thousand items should not open a thousand requests.
  async function eachLimited(list, limit, fn) {
    let next = 0;
    const worker = async () => {
      while (next < list.length) await fn(list[next++]);
    };
    await Promise.all(Array.from({ length: Math.min(limit, list.length) }, worker));
  }

  function describeProblems(problems) {
    const one = (p) => `${p.where ? p.where + ": " : ""}${p.message}` +
      (p.expected !== undefined ? ` (expected ${p.expected}${p.found !== undefined ? `, found ${p.found}` : ""})`
        : p.found !== undefined ? ` (found ${p.found})` : "");
    return problems.slice(0, 3).map(one).join("; ") + (problems.length > 3 ? `; and ${problems.length - 3} more` : "");
  }

  function certificateSays(c) {
    const s = isObj(c.subject) ? c.subject : {}, m = c.summary;
    return `${s.name} ${s.version} by ${s.organization}: ${VERDICT_WORDS[c.verdict]}, grade ${c.grade}, band score ${c.score} ` +
      `in ${pyJson(c.band)}, ${m.passed} of ${m.scored} scored items passed (pass rate ${m.pass_rate} %), ${m.total} items in all`;
  }
  function revealSays(doc) {
    const fields = isObj(doc.item) && isObj(doc.item.answer) ? Object.keys(doc.item.answer) : [];
    return `item ${doc.id} of gate ${doc.gate}, its prompt and the expected values of ${fields.length} field(s): ${fields.join(", ")}`;
  }

  // The certificate's run spec, methodology, revealed answers, details and grader record, each against the hash the
  // certificate or its ledger entry pins, then every derived field recomputed (recheck.py examine_certificate).
  async function certificateSteps(run, env, root, cert, leaf, cp, site) {
    const inputs = await run.step("Fetching the run spec, methodology and revealed answers", async (s) => {
      if (!ID_RE.test(cert.run) || !isObj(cert.methodology) || !VERSION_RE.test(cert.methodology.version) || !isObj(cert.grader))
        throw new Failed("the certificate does not name a run, a methodology version and a grader record");
      const specPath = `runs/${cert.run}.json`, mPath = `methodology/${cert.methodology.version}.json`;
      const [specBytes, mBytes] = await Promise.all([need(env, root + specPath), need(env, root + mPath)]);
      const specSha = hex(await sha256(specBytes)), mSha = hex(await sha256(mBytes));
      const pinned = isObj(cert.run_spec) ? cert.run_spec.sha256 : null;
      if (pinned !== specSha) throw new Failed(`SHA-256 of ${specPath} is ${specSha} but the certificate pins ${show(pinned)}`);
      if (cert.methodology.sha256 !== mSha)
        throw new Failed(`SHA-256 of ${mPath} is ${mSha} but the certificate pins ${show(cert.methodology.sha256)}`);
      let spec = parseCanonical(specBytes, specPath);
      const m = parseMethodology(parseCanonical(mBytes, mPath));
      // A drawn run's spec names a beacon round, not its items (FORMAT.md, Draws and timestamps): its items are read
      // from the certificate here, and the draw itself (the round's BLS signature, the items it draws) is left to
      // verify.py, which this page says rather than call it checked.
      const drawn = isObj(spec) && spec.v === 2 && isObj(spec.draw) && !has(spec, "items");
      if (drawn) spec = { ...spec, items: (Array.isArray(cert.results) ? cert.results : []).map((r) => isObj(r) ? r.item : null) };
      if (!isObj(spec) || !Array.isArray(spec.items) || !spec.items.every((i) => typeof i === "string" && ID_RE.test(i)))
        throw new Failed(`${specPath} is not a run spec`);
      // Sealed results mean a secret gate, open ones a public gate (verify.py reads it from the ledger's gate entry).
      const results = Array.isArray(cert.results) ? cert.results : [], sealed = results.filter((r) => has(r, "details"));
      if (sealed.length && sealed.length !== results.length)
        throw new Failed("some results are sealed and some open, but a gate is public or secret");
      const isPublic = !sealed.length, answers = new Map(), details = new Map();
      await eachLimited(spec.items, 6, async (item) => {
        const answer = await revealedAnswer(env, root, item, cp);
        if (answer) answers.set(item, answer);
      });
      if (isPublic && answers.size !== spec.items.length)
        throw new CannotCheck(`${spec.items.length - answers.size} item(s) of this public gate have no published reveal document`);
      await eachLimited(sealed.filter((r) => answers.has(r.item)), 6, async (r) => {
        const path = `certificates/${cert.serial}/details/${r.item}.json`;
        const data = await need(env, root + path, `${path}, due since ${r.item} was revealed`), digest = hex(await sha256(data));
        if (digest !== r.details)
          throw new Failed(`SHA-256 of ${path} is ${digest} but the certificate's result binds ${show(r.details)}`);
        details.set(r.item, parseCanonical(data, path));
      });
      let record = null;
      if (isPublic || spec.items.every((i) => answers.has(i))) {
        const path = `certificates/${cert.serial}/grader-record.json`;
        const data = await need(env, root + path, `${path}, which is due`), digest = hex(await sha256(data));
        if (digest !== cert.grader.record)
          throw new Failed(`SHA-256 of ${path} is ${digest} but the certificate's grader.record is ${show(cert.grader.record)}`);
        record = parseCanonical(data, path);
      }
      s.detail = `${specPath} and ${mPath} have the hashes the certificate pins; ${answers.size} of ${spec.items.length} items revealed, ` +
        "each checked against its own ledger entry" + (drawn ? `; its items were drawn by beacon round ${show(spec.draw.round)}, ` +
        "which this page does not check (verify.py checks the round's signature and draws the items again)" : "");
      return { spec, m, isPublic, answers, details, record, specPath, specSha };
    });
    const asserted = await run.step("Recomputing the verdict", async (s) => {
      const { spec, m, isPublic, answers, details, record, specPath, specSha } = inputs;
      const binding = bindingProblems(cert, leaf, spec);
      const problems = [...binding, ...checkCertificate(cert, spec, m, isPublic, specPath, specSha)];
      const rules = Array.isArray(spec.exclusion_rules) ? spec.exclusion_rules.length : 0;
      const redo = !binding.length && recheckable(cert)
        ? recheckCertificate(cert, m, isPublic, answers, details, record, rules)
        : { problems: problems.length ? [] : [problem("the certificate has no results, summary or grader to recompute")], asserted: [] };
      problems.push(...redo.problems);
      if (problems.length) throw new Failed(describeProblems(problems));
      const c = cert.summary;
      s.detail = `${VERDICT_WORDS[cert.verdict]}: grade ${cert.grade}, pass rate ${c.pass_rate} % ` +
        `(interval ${c.pass_rate_ci95.join("–")} %), ` +
        `band score ${cert.score} (${cert.score_rule}), every derived field recomputed with exact fractions`;
      run.facts.push(`its verdict, ${VERDICT_WORDS[cert.verdict]}, follows from its results and methodology ${cert.methodology.version}`);
      run.says = certificateSays(cert);
      run.verdict = cert.verdict;
      return redo.asserted;
    });
    await checkRevocation(run, env, root, cert, cp, site);
    for (const a of asserted) run.skip("Taken as the certificate states it", a);
    if (isTime(cert.expires_at) && cert.expires_at < env.now()) run.expired = cert.expires_at; // a state, not a failure
  }

  // The signed revocation list of today's tree (FORMAT.md v2). A revoked certificate stays authentic but is no
  // longer valid. That the list holds every revocation entry of the ledger is verify.py's replay to check.
  async function checkRevocation(run, env, root, cert, cp, site) {
    const name = "Checking revocations";
    await run.step(name, async (s) => {
      // Every site publishes the list and its signature, empty or not (FORMAT.md v2): without them a revoked
      // certificate would read as valid, so their absence is a "could not check", never a pass.
      const [list, sig] = await Promise.all([
        need(env, root + REVOCATIONS_PATH, `${REVOCATIONS_PATH}, which every site publishes: whether it was revoked cannot be told`),
        need(env, root + REVOCATIONS_PATH + ".sig",
          `${REVOCATIONS_PATH}.sig, the signature every site publishes beside its revocation list: whether it was revoked cannot be told`),
      ]);
      if (!(await ed25519Verify(site.active.pub, sig, list))) throw new Failed(`${REVOCATIONS_PATH} is not signed by the active key`);
      const doc = parseCanonical(list, REVOCATIONS_PATH);
      if (!isObj(doc) || doc.type !== "certificate-revocations" || !Array.isArray(doc.revocations) || !isInt(doc.tree_size))
        throw new Failed(`${REVOCATIONS_PATH} is not a revocation list`);
      if (BigInt(doc.tree_size) !== cp.size)
        throw new Failed(`${REVOCATIONS_PATH} is of a tree of ${doc.tree_size} entries, the checkpoint of ${cp.size}`);
      const row = doc.revocations.find((r) => isObj(r) && r.serial === cert.serial);
      if (!row) return void (s.detail = `the signed revocation list of the same ${cp.size} entries does not name ${cert.serial}`);
      [s.status, s.detail] = ["revoked", `REVOKED at ${row.at} (ledger entry ${row.index}): ${row.reason}`];
      run.states.push(`It was REVOKED at ${row.at}, and a revoked certificate is no longer valid. The reason given: ${row.reason}`);
    });
  }

  // ------------------------------------------------------------------------------------------ the two checks
  // env: {fetch(url) → Promise<Uint8Array | null> (null: the site has no such file), now() → "YYYY-MM-DDTHH:MM:SSZ",
  // onStep(step)}; `root` is the site root relative to the page ("" or "../../"), `path` a site path.

  // "Verify in this browser": the artifact at `path` and the proof beside it.
  async function checkPage(env, { kind, path, root = "" }) {
    const run = new Run(env);
    return run.go(NOUN[kind], async () => {
      const got = await run.step(`Fetching the ${NOUN[kind]}`, async (s) => {
        const [data, proofBytes, common] = await Promise.all([need(env, root + path), need(env, root + path + ".tlog-proof"),
          fetchCommon(env, root)]);
        s.detail = `${path} (${data.length} bytes), its inclusion proof, the site's keys and checkpoint`;
        return { data, proofBytes, ...common };
      });
      await artifactSteps(run, env, root, kind, got);
    });
  }

  // The program's other files, by their `type`: genuine ones may be sent too, and are verify.py's to check.
  const OTHER_KINDS = {
    "result-details": "details document", "grader-record": "grader record", "run-spec": "run spec",
    methodology: "methodology parameter file", keys: "keys document (keys.json)", "certificate-revocations": "revocation list",
    "checkpoint-history": "checkpoint history", "commitment-list": "commitment list", "ledger-entries": "list of ledger entries",
    "consistency-proof": "consistency proof", "transparency-manifest": "site manifest", "manifest-part": "part of the site manifest",
    "commitment-list-part": "part of the commitment list", commit: "ledger entry (commit)",
    run: "ledger entry (run)", gate: "ledger entry (gate)", revocation: "ledger entry (revocation)",
    "key-addition": "ledger entry (key-addition)", "key-rotation": "ledger entry (key-rotation)",
    "key-revocation": "ledger entry (key-revocation)",
  };
  const otherKind = (kind) =>
    new CannotCheck(`this page checks certificates, reveals and .tlog-proof files; this looks like a ${kind}: verify it with verify.py`);

  function identify(data) {
    if (latin1(data.subarray(0, TLOG_PROOF_HEADER.length + 1)) === TLOG_PROOF_HEADER + "\n")
      return { kind: "proof", proof: parseTlogProof(data) };
    let doc;
    try {
      doc = parseCanonical(data);
    } catch (e) {
      try {
        JSON.parse(UTF8.decode(data));
      } catch (e2) {
        let checkpoint = null;
        try {
          checkpoint = readCheckpoint(data);
        } catch (e3) {
          throw new Failed("this is not a certificate, a reveal document or a .tlog-proof file");
        }
        if (checkpoint) throw otherKind("checkpoint");
      }
      throw new Failed("this JSON is not in canonical form (RFC 8785): the ledger binds the exact bytes the program published, " +
        "so a reformatted or edited copy cannot match");
    }
    if (isObj(doc) && doc.type === "certificate" && ID_RE.test(doc.serial)) return { kind: "certificate", id: doc.serial };
    if (isObj(doc) && doc.type === "item-reveal" && ID_RE.test(doc.id)) return { kind: "reveal", id: doc.id };
    if (isObj(doc) && typeof doc.type === "string" && has(OTHER_KINDS, doc.type)) throw otherKind(OTHER_KINDS[doc.type]);
    throw new Failed("this JSON is neither a certificate nor a reveal document");
  }

  // "Check a file you were sent": a certificate, a reveal document or a .tlog-proof, against this site's ledger.
  async function checkFile(env, { data, root = "" }) {
    const run = new Run(env);
    return run.go("file", async () => {
      const what = await run.step("Reading the file", async (s) => {
        const w = identify(data);
        s.detail = w.kind === "proof" ? "a C2SP tlog-proof" : `a ${NOUN[w.kind]}, ${w.kind === "certificate" ? "serial" : "item"} ${w.id}`;
        return w;
      });
      if (what.kind === "proof") return proofFileSteps(run, env, root, what.proof);
      const path = `${what.kind === "certificate" ? "certificates" : "reveals"}/${what.id}.json`;
      const got = await run.step("Finding it in this program's ledger", async (s) => {
        const [proofBytes, common] = await Promise.all([env.fetch(root + path + ".tlog-proof"), fetchCommon(env, root)]);
        if (proofBytes === null)
          throw new Failed(`this program's ledger has no ${NOUN[what.kind]} ${what.id}: the site has no ${path}.tlog-proof`);
        s.detail = `the site's inclusion proof for ${path}`;
        return { data, proofBytes, ...common };
      });
      await artifactSteps(run, env, root, what.kind, got);
    });
  }

  const LEAF_FILE = {
    commit: (l) => ID_RE.test(l.id) && `reveals/${l.id}.json`,
    certificate: (l) => ID_RE.test(l.serial) && `certificates/${l.serial}.json`,
    run: (l) => ID_RE.test(l.id) && `runs/${l.id}.json`,
    methodology: (l) => VERSION_RE.test(l.version) && `methodology/${l.version}.json`,
  };

  // The key events (keyring.py): a proven one's key must be a row of keys.json, of its line of keys (Ed25519 or ML-DSA-44),
  // entered at the event's time (a key-addition or key-rotation) or revoked (a key-revocation). That the rows follow every
  // key event, in order, needs the whole ledger: verify.py's replay.
  const KEY_EVENTS = { "key-addition": [COSIGNER_TYPES[ML_DSA_44]], "key-rotation": [NOTE_KEY, COSIGNER_TYPES[ML_DSA_44]],
    "key-revocation": [NOTE_KEY, COSIGNER_TYPES[ML_DSA_44]] };

  async function keyEventStep(run, site, leaf) {
    await run.step("Finding its key in keys.json", async (s) => {
      const key = await within(`the ${leaf.type} entry's vkey: `, () => parseVkey(leaf.vkey, KEY_EVENTS[leaf.type]));
      const row = (key.kind === ML_DSA_44 ? site.mlDsa : site.keys).find((k) => k.vkey === key.vkey);
      const list = key.kind === ML_DSA_44 ? `${KEYS_PATH}'s ${ML_DSA_KEYS}` : KEYS_PATH;
      if (!row) throw new Failed(`${list} does not list the ${key.label} key this ${leaf.type} entry names, ${key.fingerprint}`);
      if (leaf.type === "key-revocation" && row.status !== "revoked")
        throw new Failed(`${list} lists ${key.fingerprint} as ${show(row.status)}, but this entry revokes it`);
      if (leaf.type !== "key-revocation" && row.validFrom !== leaf.at)
        throw new Failed(`${list} has ${key.fingerprint} valid from ${show(row.validFrom)}, but this entry enters it at ${show(leaf.at)}`);
      s.detail = `${list} lists the ${key.label} key ${key.fingerprint}, ${row.status}`;
      run.says = `${leaf.type} of the ${key.label} key ${key.fingerprint}`;
    });
  }

  // A .tlog-proof alone: its leaf in its checkpoint's tree, that tree part of today's ledger (by a consistency proof
  // made from the site's hash tiles when it is older), and the file its leaf binds as the site publishes it.
  async function proofFileSteps(run, env, root, proof) {
    const { leaf, cp } = await run.step("Checking the inclusion proof", async (s) => {
      if (proof.extra === null) throw new Failed("no extra line: the proven leaf is missing");
      const l = parseCanonical(proof.extra, "the proof's leaf"), c = readCheckpoint(proof.checkpoint);
      if (!isObj(l) || typeof l.type !== "string") throw new Failed("the proof's leaf is not a ledger entry");
      const got = await rootFromInclusion(proof.index, c.size, await leafHash(proof.extra), proof.hashes);
      if (!sameBytes(got, c.root))
        throw new Failed(`the proof leads to root ${b64encode(got)}, but its checkpoint's root is ${b64encode(c.root)}`);
      s.detail = `a ${show(l.type)} entry, number ${proof.index} of a tree of ${c.size} entries`;
      return { leaf: l, cp: c };
    });
    const { site, policy, today } = await run.step("Fetching the site's keys and checkpoint", async (s) => {
      const c = await fetchCommon(env, root);
      s.detail = `${KEYS_PATH} and ${CHECKPOINT_PATH}`;
      return { ...c, today: readCheckpoint(c.todayBytes) };
    });
    await run.step("Checking the checkpoint signature", async (s) => {
      if (cp.size > today.size)
        throw new Failed(`the proof's tree has ${cp.size} entries, more than the ${today.size} of this site's ledger: it is another ` +
          "program's, or the site was rolled back");
      const todays = await checkSigners(run, site, today, true);
      run.key = site.active.fingerprint;
      const signers = sameBytes(cp.bytes, today.bytes) ? todays : await checkSigners(run, site, cp, cp.size === today.size);
      s.detail = `signed by ${signers.map((k) => k.fingerprint).join(" and ")} of ${KEYS_PATH}`;
      if (cp.size < today.size)
        run.skip("Checking which key may sign an older tree", `which key was valid for a tree of ${cp.size} entries needs the ledger's ` +
          "key events (verify.py checks it); today's checkpoint, which this tree is proved part of, is signed by the active key");
    });
    await checkLogMlDsa(run, env, site, [[today, true], ...(sameBytes(cp.bytes, today.bytes) ? [] : [[cp, cp.size === today.size]])]);
    await run.step("Checking it is part of today's ledger", async (s) => {
      const made = await reachToday(env, root, cp, today);
      s.detail = made ? `${made} proves that the tree of ${cp.size} entries begins today's tree of ${today.size}`
        : "its checkpoint is the site's current one";
      run.facts.push(`its ${leaf.type} entry ${proof.index} is in the ledger of ${site.origin}, whose checkpoint of ${today.size} ` +
        `entries is signed by ${site.active.fingerprint}`);
    });
    await checkWitnesses(run, env, site, today.bytes, policy);
    if (has(KEY_EVENTS, leaf.type)) return keyEventStep(run, site, leaf);
    const where = has(LEAF_FILE, leaf.type) ? LEAF_FILE[leaf.type](leaf) : null;
    if (!where) return run.skip("Fetching the file it proves", `a ${show(leaf.type)} entry binds no published file`);
    const data = await run.step("Fetching the file it proves", async (s) => {
      const bytes = await env.fetch(root + where);
      if (bytes === null && leaf.type === "commit")
        return void (s.status = "skipped", s.detail = `item ${leaf.id} is still sealed: its reveal document is not published yet`);
      if (bytes === null) throw new CannotCheck(`the site has no ${where}`);
      const digest = hex(await sha256(bytes)), want = leaf[BINDING[leaf.type]];
      if (want !== digest) throw new Failed(`SHA-256 of the site's ${where} is ${digest} but the ledger leaf binds ${want}`);
      s.detail = `the site's ${where}, whose SHA-256 the entry binds`;
      return bytes;
    });
    if (!data) return;
    const doc = parseCanonical(data, where);
    if (leaf.type === "certificate") await certificateSteps(run, env, root, doc, leaf, today, site);
    else run.says = leaf.type === "commit" ? revealSays(doc) : `${leaf.type} ${leaf.id || leaf.version}, published as ${where}`;
  }

  // ------------------------------------------------------------------------------ the page (the only DOM code)
  // This script's own URL, known only while it first runs: the modules it loads lie beside it.
  const SCRIPT_URL = typeof document === "undefined" ? null
    : (document.currentScript || document.querySelector(`script[src$="check.js"]`) || {}).src || null;
  const SYMBOL = { running: "…", passed: "✓", failed: "✗", unavailable: "?", skipped: "–", revoked: "!" };

  function browserEnv(onStep) {
    return {
      onStep,
      // A module beside this script, by its URL: loaded only when it is needed.
      importModule: (name) => import(new URL(name, SCRIPT_URL || document.baseURI).href),
      now: () => new Date().toISOString().slice(0, 19) + "Z",
      async fetch(url) {
        let res;
        try {
          res = await fetch(url, { cache: "no-cache" });
        } catch (e) {
          throw new CannotCheck(location.protocol === "file:"
            ? "this page was opened from a file (file://), where the browser does not let it read the site's other files; serve " +
              "the folder over HTTP (python3 -m http.server) or use verify.py"
            : `the browser could not fetch ${url} (${e.message})`);
        }
        if (res.status === 404) return null;
        if (!res.ok) throw new CannotCheck(`the site answered ${res.status} for ${url}`);
        return new Uint8Array(await res.arrayBuffer());
      },
    };
  }

  // Each step as an <li>: a symbol for the eye, the status in words for everyone (never colour alone), its detail.
  function stepList(ol) {
    const items = [];
    const el = (tag, cls, text, hidden) => {
      const e = document.createElement(tag);
      e.className = cls;
      e.textContent = text;
      if (hidden) e.setAttribute("aria-hidden", "true");
      return e;
    };
    return (s) => {
      const li = (items[s.index] ||= ol.appendChild(document.createElement("li")));
      li.className = `check-step check-${s.status}`;
      li.dataset.status = s.status;
      li.replaceChildren(el("span", "check-symbol", SYMBOL[s.status] + " ", true), el("strong", "check-status", STATUS_WORDS[s.status]),
        el("span", "check-name", `: ${s.name}`));
      if (s.detail) li.append(el("span", "check-detail", ` (${s.detail})`));
    };
  }

  async function runInto(section, check) {
    const ol = section.querySelector("[data-check-steps]"), live = section.querySelector("[data-check-outcome]");
    ol.replaceChildren();
    live.textContent = "Checking…";
    section.dataset.outcome = "running";
    const outcome = await check(browserEnv(stepList(ol))).catch((e) => ({ status: "could-not-check",
      text: `Could not check: an error inside this check (${e && e.message}), which proves nothing either way.` }));
    section.dataset.outcome = outcome.status;
    live.textContent = outcome.text;
  }

  // Copy buttons beside the commands of the verify page. Without this script, or where the
  // clipboard is refused (file://, an old browser), the command stays plain selectable text.
  function addCopyButtons(doc) {
    if (!(navigator.clipboard && window.isSecureContext)) return;
    for (const pre of doc.querySelectorAll("pre.cmd")) {
      const button = doc.createElement("button");
      button.type = "button";
      button.className = "copy-button";
      button.textContent = "Copy";
      button.setAttribute("aria-label", `Copy the command: ${pre.textContent}`);
      button.addEventListener("click", async () => {
        try {
          await navigator.clipboard.writeText(pre.textContent);
          button.textContent = "Copied";
        } catch (e) {
          button.textContent = "Copy refused: select the text instead";
        }
      });
      pre.after(button);
    }
  }

  function init(doc) {
    addCopyButtons(doc);
    for (const section of doc.querySelectorAll("[data-browser-check]")) {
      const button = section.querySelector("[data-check-start]"), { kind, path, root } = section.dataset;
      button.hidden = false;
      button.addEventListener("click", async () => {
        button.disabled = true;
        await runInto(section, (env) => checkPage(env, { kind, path, root }));
        button.disabled = false;
      });
    }
    for (const section of doc.querySelectorAll("[data-file-check]")) {
      const input = section.querySelector("input[type=file]"), zone = section.querySelector("[data-check-drop]");
      const take = async (file) => {
        if (!file) return;
        section.querySelector("[data-check-name]").textContent = `Checking ${file.name}`;
        // Nothing the program publishes comes near this size: a bigger file is none of its artifacts.
        const data = file.size > 20e6 ? new Uint8Array(0) : new Uint8Array(await file.arrayBuffer());
        await runInto(section, (env) => checkFile(env, { data, root: section.dataset.root }));
      };
      section.querySelector("[data-check-controls]").hidden = false;
      input.addEventListener("change", () => take(input.files[0]));
      zone.addEventListener("click", () => input.click());
      zone.addEventListener("keydown", (e) => {
        if (e.key !== "Enter" && e.key !== " ") return;
        e.preventDefault();
        input.click();
      });
      zone.addEventListener("dragover", (e) => (e.preventDefault(), zone.classList.add("drop-over")));
      zone.addEventListener("dragleave", () => zone.classList.remove("drop-over"));
      zone.addEventListener("drop", (e) => {
        e.preventDefault();
        zone.classList.remove("drop-over");
        take(e.dataTransfer.files[0]);
      });
    }
  }

  Object.assign(exports, {
    Failed, CannotCheck, canonical, parseCanonical, b64decode, hex, unhex, sha256, leafHash, rootFromInclusion,
    verifyConsistency, consistencyRanges, completeSubtrees, tileNumberPath, consistencyFromTiles, parseTlogProof,
    parseCheckpoint, parseVkey, openNote, cosignedBy, subtreeMessage, mlDsaVerify, parsePolicy, evaluatePolicy, Q,
    decimalValue, roundHalfUp, isqrt, wilsonInterval, passRates, gradeFor, verdictFor, gradeCounts, bandScore, keepBullets,
    scoreItem, similarityValue, computedSimilarity, parseMethodology, checkCertificate, recheckCertificate, bindingProblems,
    recheckable, checkPage, checkFile, show, OUTCOMES, PUBLISHED_DEMO_KEYS, keyWords,
  });
  if (typeof document !== "undefined") {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => init(document));
    else init(document);
  }
})(typeof module !== "undefined" && module.exports ? module.exports : {});
