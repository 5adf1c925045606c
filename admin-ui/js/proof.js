// Checks an audit record's inclusion proof in the page (docs/audit.md), with Web Crypto only:
// the leaf hash from the record bytes (SHA-256(0x00 || record)), the root from the leaf and
// its audit path (RFC 9162 2.1.3.2), and the signed head's Ed25519 signature over
// "KIMI-AUDIT-STH/1" || key_id || tree_size (u64 BE) || timestamp_ms (u64 BE) || root_hash.
// Pure: `subtle` is the SubtleCrypto to use (the browser's crypto.subtle, or node's).

export function hexToBytes(hex) {
  if (typeof hex !== 'string' || hex.length % 2 !== 0 || /[^0-9a-f]/i.test(hex)) throw new Error('not hex: ' + hex);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function bytesToHex(bytes) {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function bigEndian64(n) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n));
  return out;
}

async function sha256(subtle, bytes) {
  return new Uint8Array(await subtle.digest('SHA-256', bytes));
}

export async function leafHash(subtle, recordText) {
  return sha256(subtle, concat(Uint8Array.of(0), new TextEncoder().encode(recordText)));
}

// The root the audit path leads to from leaf `index` of a tree of `size` leaves; throws when
// the path has the wrong length for that position.
export async function rootFromPath(subtle, index, size, leaf, path) {
  if (!(index < size)) throw new Error('leaf index ' + index + ' is outside a tree of ' + size);
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const sibling of path) {
    if (sn === 0) throw new Error('the audit path is longer than the tree is deep');
    if (fn % 2 === 1 || fn === sn) {
      r = await sha256(subtle, concat(Uint8Array.of(1), sibling, r));
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = await sha256(subtle, concat(Uint8Array.of(1), r, sibling));
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) throw new Error('the audit path is shorter than the tree is deep');
  return r;
}

export function headSigningBytes(head) {
  return concat(new TextEncoder().encode('KIMI-AUDIT-STH/1'), hexToBytes(head.key_id), bigEndian64(head.tree_size),
                bigEndian64(head.timestamp_ms), hexToBytes(head.root_hash));
}

// Each step's outcome: {leaf, root, signature}, each {ok: true|false|null, text}; null
// when the step could not run here (no Ed25519 in this browser).
export async function checkInclusion(subtle, proof, publicKeyHex) {
  const head = proof.signed_head;
  const out = {};
  const leaf = await leafHash(subtle, proof.record);
  let seq = null;
  try {
    seq = JSON.parse(proof.record).seq;
  } catch {
    // reported below as a mismatch
  }
  const leafOk = bytesToHex(leaf) === proof.leaf_hash && seq === proof.leaf_index;
  out.leaf = {ok: leafOk, text: leafOk ? 'The record’s bytes hash to the leaf hash, and it is record ' + seq + '.'
                                       : 'The record’s bytes do not hash to the leaf hash of record ' + proof.leaf_index + '.'};
  try {
    const root = await rootFromPath(subtle, proof.leaf_index, proof.tree_size, leaf, proof.audit_path.map(hexToBytes));
    const rootOk = bytesToHex(root) === head.root_hash && head.tree_size === proof.tree_size;
    out.root = {ok: rootOk, text: rootOk
      ? 'The audit path (' + proof.audit_path.length + ' hashes) leads from the leaf to the signed root of the ' +
        proof.tree_size + '-record tree.'
      : 'The audit path leads to ' + bytesToHex(root) + ', not to the signed root.'};
  } catch (e) {
    out.root = {ok: false, text: 'The audit path does not fit the tree: ' + e.message + '.'};
  }
  const key = hexToBytes(publicKeyHex);
  if (bytesToHex(await sha256(subtle, key)) !== head.key_id) {
    out.signature = {ok: false, text: 'The signed head names another key than the audit key.'};
    return out;
  }
  let imported;
  try {
    imported = await subtle.importKey('raw', key, {name: 'Ed25519'}, false, ['verify']);
  } catch {
    out.signature = {ok: null, text: 'This browser has no Ed25519 in Web Crypto: the head’s signature is checked ' +
                                     'by the appliance only (below).'};
    return out;
  }
  const good = await subtle.verify({name: 'Ed25519'}, imported, hexToBytes(head.signature), headSigningBytes(head));
  out.signature = {ok: good, text: good ? 'The signed head’s Ed25519 signature verifies with the audit key.'
                                        : 'The signed head’s signature does NOT verify with the audit key.'};
  return out;
}
