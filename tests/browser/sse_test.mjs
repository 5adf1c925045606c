// Unit tests of the playground's SSE reader (admin-ui/js/sse.js) under node's test runner:
// events split across reads, CRLF line ends, and U+2028 inside a data line kept whole.
import assert from 'node:assert/strict';
import test from 'node:test';

import {sseData} from '../../admin-ui/js/sse.js';

function bodyOf(...pieces) {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
}

async function collect(body) {
  const out = [];
  for await (const data of sseData(body)) out.push(data);
  return out;
}

test('events split across reads are put back together', async () => {
  assert.deepEqual(await collect(bodyOf('data: {"a":', '1}\n\nda', 'ta: [DONE]\n\n')), ['{"a":1}', '[DONE]']);
});

test('CRLF line ends, comments and multi-line data', async () => {
  assert.deepEqual(await collect(bodyOf(': keep-alive\r\n\r\ndata: one\r\ndata: two\r\n\r\n')), ['one\ntwo']);
});

test('U+2028 inside a data line does not split it', async () => {
  assert.deepEqual(await collect(bodyOf('data: {"t":"a\u2028b"}\n\n')), ['{"t":"a\u2028b"}']);
});
