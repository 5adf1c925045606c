// Unit test of the console's one rule for text (admin-ui/js/dom.js shown()), run by node's own
// test runner: every text child of an element passes through it.
import assert from 'node:assert/strict';
import {readdirSync, readFileSync} from 'node:fs';
import {join} from 'node:path';
import test from 'node:test';
import {fileURLToPath} from 'node:url';

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

// A stand-in for the few DOM calls the console's element builders make, enough to read back
// what a chart or an h() element would show.
class FakeNode {}
class FakeText extends FakeNode {
  constructor(data) {
    super();
    this.data = data;
  }
  get textContent() {
    return this.data;
  }
}
class FakeElement extends FakeNode {
  constructor(tag) {
    super();
    this.tag = tag;
    this.attributes = {};
    this.children = [];
    this.dataset = {};
  }
  setAttribute(name, value) {
    this.attributes[name] = value;
  }
  addEventListener() {}
  append(...nodes) {
    this.children.push(...nodes);
  }
  prepend(...nodes) {
    this.children.unshift(...nodes);
  }
  replaceChildren(...nodes) {
    this.children = nodes;
  }
  set textContent(text) {
    this.children = [new FakeText(text)];
  }
  get textContent() {
    return this.children.map((c) => c.textContent).join('');
  }
}
globalThis.Node = FakeNode;
globalThis.document = {createElement: (tag) => new FakeElement(tag), createElementNS: (ns, tag) => new FakeElement(tag),
                       createTextNode: (data) => new FakeText(data)};

// Every text a tree shows: its text nodes and the attributes a reader sees or hears.
function shownTexts(node, out = []) {
  if (node instanceof FakeText) out.push(node.data);
  if (!(node instanceof FakeElement)) return out;
  for (const name of ['title', 'aria-label', 'placeholder', 'alt', 'label']) {
    if (name in node.attributes) out.push(node.attributes[name]);
  }
  for (const child of node.children) shownTexts(child, out);
  return out;
}

const OVERRIDE = '\u202e';

test('tooltips and labels of elements and the charts follow the rule; values sent back do not change', async () => {
  const {h} = await import('../../admin-ui/js/dom.js');
  const {timeChart, lineChart} = await import('../../admin-ui/js/chart.js');
  const {stackedBars} = await import('../../admin-ui/js/usage_chart.js');
  // A model name an upstream's model list gave, a key name an admin gave, a signer's file name.
  const name = 'prod-' + OVERRIDE + 'yek-tset';
  const option = h('option', {value: name, title: name, 'aria-label': 'Use ' + name}, name);
  assert.equal(option.value, name, 'the value goes back to the appliance as it came');
  assert.deepEqual(shownTexts(option), ['prod-\\u202eyek-tset', 'Use prod-\\u202eyek-tset', 'prod-\\u202eyek-tset']);
  const trees = [
    timeChart({title: 'Requests per second', unit: '', unitLabel: 'requests/s', from: 0, to: 120000, maxGap: 60000,
               series: [{name, points: [[0, 1], [60000, 2]]}]}),
    lineChart([{values: [1, 2], className: 'a'}], 'Requests of ' + name),
    stackedBars({dates: ['2026-12-01', '2026-12-02'], series: [{label: name, values: [5, 7]}], unit: 'tokens',
                 title: 'Tokens per day by key', id: 'c'}),
  ];
  for (const tree of trees) {
    const texts = shownTexts(tree);
    assert.ok(texts.some((t) => t.includes('prod-\\u202eyek-tset')), texts.join(' | '));
    assert.ok(!texts.some((t) => t.includes(OVERRIDE)), texts.join(' | '));
  }
});

// The rule holds for every text only if no module writes text or a shown attribute past it:
// text is set through h(), replace(), setText() and setAttribute() of dom.js alone.
test('no console module writes text or markup but through dom.js', () => {
  const root = fileURLToPath(new URL('../../admin-ui/js/', import.meta.url));
  const files = readdirSync(root, {recursive: true}).filter((f) => f.endsWith('.js') && f !== 'dom.js');
  assert.ok(files.length > 20, 'the modules were found');
  const forbidden = /\.(textContent|innerText|outerText|innerHTML|outerHTML|nodeValue)\s*=|(?<!document)\.(title|ariaLabel|ariaDescription|placeholder|alt|label)\s*=|insertAdjacent(HTML|Text)|createTextNode|document\.write|\.setAttribute\(\s*(?!'(aria-(current|pressed|invalid|labelledby|describedby))')/;
  for (const file of files) {
    readFileSync(join(root, file), 'utf8').split('\n').forEach((line, i) => {
      assert.ok(!forbidden.test(line), `${file}:${i + 1} writes past dom.js: ${line.trim()}`);
    });
  }
});
