// The console's in-page proof check (admin-ui/js/proof.js) against a Merkle tree built here
// from RFC 9162's definitions, and a signed head signed here with a fresh Ed25519 key.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {webcrypto} from 'node:crypto';
import {bytesToHex, checkInclusion, headSigningBytes, leafHash, rootFromPath} from '../../admin-ui/js/proof.js';

const subtle = webcrypto.subtle;

async function node(left, right) {
  const both = new Uint8Array(1 + left.length + right.length);
  both[0] = 1;
  both.set(left, 1);
  both.set(right, 1 + left.length);
  return new Uint8Array(await subtle.digest('SHA-256', both));
}

function split(n) {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

// MTH(D[0:n]) and PATH(m, D[0:n]) of RFC 9162 2.1.1 and 2.1.3.1, written from the definitions.
async function mth(leaves) {
  if (leaves.length === 1) return leaves[0];
  const k = split(leaves.length);
  return node(await mth(leaves.slice(0, k)), await mth(leaves.slice(k)));
}

async function path(m, leaves) {
  if (leaves.length === 1) return [];
  const k = split(leaves.length);
  if (m < k) return [...await path(m, leaves.slice(0, k)), await mth(leaves.slice(k))];
  return [...await path(m - k, leaves.slice(k)), await mth(leaves.slice(0, k))];
}

const records = Array.from({length: 9}, (_, seq) => JSON.stringify({seq, action: 'http.models'}));

test('the root recomputed from every leaf and its path is the tree head, for every tree size', async () => {
  const leaves = await Promise.all(records.map((r) => leafHash(subtle, r)));
  for (let size = 1; size <= leaves.length; size += 1) {
    const root = bytesToHex(await mth(leaves.slice(0, size)));
    for (let m = 0; m < size; m += 1) {
      const p = await path(m, leaves.slice(0, size));
      assert.equal(bytesToHex(await rootFromPath(subtle, m, size, leaves[m], p)), root, 'leaf ' + m + ' of ' + size);
      if (p.length > 0) {
        await assert.rejects(rootFromPath(subtle, m, size, leaves[m], p.slice(1)));
        const bent = p.map((h) => h.slice());
        bent[0][0] ^= 1;
        assert.notEqual(bytesToHex(await rootFromPath(subtle, m, size, leaves[m], bent)), root);
      }
    }
  }
});

test('a proof with a signed head checks in full; a changed record or signature does not', async () => {
  const leaves = await Promise.all(records.map((r) => leafHash(subtle, r)));
  const keys = await subtle.generateKey({name: 'Ed25519'}, true, ['sign', 'verify']);
  const publicKey = new Uint8Array(await subtle.exportKey('raw', keys.publicKey));
  const head = {format: 'kimi-audit-sth/1', tree_size: 9, timestamp_ms: 1764489600123,
                root_hash: bytesToHex(await mth(leaves)),
                key_id: bytesToHex(new Uint8Array(await subtle.digest('SHA-256', publicKey)))};
  head.signature = bytesToHex(new Uint8Array(await subtle.sign({name: 'Ed25519'}, keys.privateKey,
                                                               headSigningBytes(head))));
  const proof = {format: 'kimi-audit-inclusion/1', leaf_index: 5, tree_size: 9, record: records[5],
                 leaf_hash: bytesToHex(leaves[5]), audit_path: (await path(5, leaves)).map(bytesToHex), signed_head: head};
  const good = await checkInclusion(subtle, proof, bytesToHex(publicKey));
  assert.deepEqual([good.leaf.ok, good.root.ok, good.signature.ok], [true, true, true]);

  const changed = await checkInclusion(subtle, {...proof, record: records[5].replace('models', 'chat')}, bytesToHex(publicKey));
  assert.equal(changed.leaf.ok, false);
  assert.equal(changed.root.ok, false);
  const forged = await checkInclusion(subtle, {...proof, signed_head: {...head, timestamp_ms: head.timestamp_ms + 1}},
                                      bytesToHex(publicKey));
  assert.equal(forged.signature.ok, false);
});
