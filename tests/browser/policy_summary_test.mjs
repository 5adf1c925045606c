// The plain-language policy summary (admin-ui/js/policy_summary.js) under node's test runner:
// every field of policies/schema.json is summarised or deliberately listed as not, every
// summarised field shows in the text, and the shipped documents read as they should.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {NOT_SUMMARISED, SUMMARISED, schemaFields, summarisePolicy} from '../../admin-ui/js/policy_summary.js';

const SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const readJson = (file) => JSON.parse(fs.readFileSync(path.join(SOURCE, file), 'utf8'));
const text = (doc) => summarisePolicy(doc).map((s) => s.title + '\n' + s.lines.join('\n')).join('\n\n');

// A document that sets every field of the schema, so that each can be changed alone.
function everyField() {
  const doc = readJson('policies/examples/bank.json');
  doc.redaction.rules.push({category: 'medical_record', action: 'mask'});
  doc.redaction.medical_record_pattern = 'MRN-[0-9]{6}';
  doc.service_levels.key_classes = [{key: 'key_batch1', class: 'agentic'}];
  return doc;
}

// A different value of the same type for the field at `pointer` ("*": the last item that sets
// the field).
function changeAt(doc, pointer) {
  const keys = pointer.split('/').slice(1);
  const last = keys[keys.length - 1];
  let at = doc;
  for (const k of keys.slice(0, -1)) at = k === '*' ? at.findLast((item) => last in item) : at[k];
  const value = at[last];
  if (typeof value === 'boolean') at[last] = !value;
  else if (typeof value === 'number') at[last] = value + 7;
  else if (Array.isArray(value)) at[last] = ['other-model'];
  else if (last === 'category') at[last] = value === 'email' ? 'phone' : 'email';
  else if (last === 'action') at[last] = value === 'mask' ? 'block' : 'mask';
  else if (last === 'class' || last === 'default_class') at[last] = value === 'chat' ? 'agentic' : 'chat';
  else if (last === 'subject') at[last] = 'key:key_someone';
  else at[last] = value + 'x';
}

test('every field of the policy schema is summarised or listed as deliberately not', () => {
  const fields = schemaFields(readJson('policies/schema.json'));
  assert.ok(fields.length > 20, 'the schema walk found ' + fields.length + ' fields');
  const unaccounted = fields.filter((f) => !SUMMARISED.includes(f) && !(f in NOT_SUMMARISED));
  assert.deepEqual(unaccounted, [], 'fields neither summarised nor listed in NOT_SUMMARISED');
  const stale = [...SUMMARISED, ...Object.keys(NOT_SUMMARISED)].filter((f) => !fields.includes(f));
  assert.deepEqual(stale, [], 'listed fields the schema no longer has');
});

test('a new schema field fails the check', () => {
  const schema = readJson('policies/schema.json');
  schema.properties.content_logging.properties.store_tool_results = {type: 'boolean'};
  const fields = schemaFields(schema);
  assert.ok(fields.includes('/content_logging/store_tool_results'));
  assert.ok(!SUMMARISED.includes('/content_logging/store_tool_results'));
});

test('changing any summarised field changes the summary', () => {
  const before = text(everyField());
  for (const field of SUMMARISED) {
    const doc = everyField();
    changeAt(doc, field);
    assert.notEqual(text(doc), before, field + ' changed but the summary did not');
  }
});

test('the shipped default: nothing stored, built-ins masked, three roles, the targets', () => {
  const summary = summarisePolicy(readJson('policies/default.json'));
  const section = (id) => summary.find((s) => s.id === id).lines.join('\n');
  assert.match(section('stored'), /No prompt or completion text is stored/);
  assert.match(section('stored'), /kept 30 days/);
  assert.match(section('redacted'), /^E-mail addresses: replaced by \[REDACTED:…\]\.$/m);
  assert.match(section('redacted'), /Prompts reach the model unchanged/);
  assert.match(section('access'), /^Role user: every served model\.$/m);
  assert.doesNotMatch(section('access'), /Role auditor/);
  assert.match(section('service'), /500 ms for prompts up to 4,096 tokens/);
  assert.match(section('service'), /50 ms for chat, 100 ms for agentic/);
});

test('the bank example: blocks, hashes and a restricted teller role', () => {
  const summary = text(readJson('policies/examples/bank.json'));
  assert.match(summary, /Payment card numbers: refused: a request containing one is answered 400\./);
  assert.match(summary, /IBANs: replaced by a keyed hash/);
  assert.match(summary, /stores the text of prompts \(the request body\) and completions/);
  assert.match(summary, /kept 2555 days/);
  assert.match(summary, /Role user: kimi-k3; no tools, no prompts over 32,768 tokens/);
  assert.match(summary, /answers of at most 2,048 tokens/);
});
