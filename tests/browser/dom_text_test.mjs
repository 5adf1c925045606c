// Unit test of the console's one rule for text (admin-ui/js/dom.js shown()), run by node's own
// test runner: every text child of an element passes through it.
import assert from 'node:assert/strict';
import test from 'node:test';

import {shown} from '../../admin-ui/js/dom.js';

test('text that would disguise itself is shown as escapes', () => {
  // A key named with a right-to-left override read "prod-test-key" in the keys table.
  assert.equal(shown('prod-\u202eyek-tset'), 'prod-\\u202eyek-tset');
  assert.equal(shown('a\u0085b\u009b31m\u2028c\u2066d\u0007e\u000d'), 'a\\u0085b\\u009b31m\\u2028c\\u2066d\\u0007e\\u000d');
});

test('ordinary text, tabs and newlines are left as they are', () => {
  assert.equal(shown('line one\n\tline two, café 中文 🙂'), 'line one\n\tline two, café 中文 🙂');
  assert.equal(shown(''), '');
});
