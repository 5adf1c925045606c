// The console's line diff (admin-ui/js/diff.js) under node's test runner.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {formatDiff, lineDiff} from '../../admin-ui/js/diff.js';

test('identical texts give no diff', () => {
  assert.equal(formatDiff(lineDiff('a\nb', 'a\nb')), '');
});

test('a changed line is one removal and one addition, with context', () => {
  const before = ['{', '  "a": 1,', '  "name": "default",', '  "b": 2', '}'].join('\n');
  const after = before.replace('"default"', '"other"');
  assert.deepEqual(formatDiff(lineDiff(before, after), 1).split('\n'),
                   ['…', '    "a": 1,', '-   "name": "default",', '+   "name": "other",', '    "b": 2', '…']);
});

test('far-apart changes are separated by an ellipsis', () => {
  const lines = Array.from({length: 20}, (_, k) => 'line ' + k);
  const after = lines.slice();
  after[1] = 'first';
  after[18] = 'second';
  const text = formatDiff(lineDiff(lines.join('\n'), after.join('\n')), 1);
  assert.deepEqual(text.split('\n'), ['  line 0', '- line 1', '+ first', '  line 2', '…', '  line 17', '- line 18',
                                      '+ second', '  line 19']);
});

test('additions and removals at the ends', () => {
  assert.deepEqual(lineDiff('x', 'x\ny'), [{op: ' ', line: 'x'}, {op: '+', line: 'y'}]);
  assert.deepEqual(lineDiff('w\nx', 'x'), [{op: '-', line: 'w'}, {op: ' ', line: 'x'}]);
});
