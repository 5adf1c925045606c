// A policy document (policies/schema.json, docs/policies.md) in plain language, for people who
// do not read JSON: what is stored and for how long, what is redacted, who may use which models,
// and the service-level targets. Pure functions, no DOM; the policies screen renders the
// sections. Every field of the schema is either read here (SUMMARISED) or deliberately left
// out (NOT_SUMMARISED, with the reason); tests/browser/policy_summary_test.mjs fails when the
// schema gains a field that is in neither list.

// Schema paths, "/" between property names and "*" for an array's items.
export const SUMMARISED = [
  '/name', '/description',
  '/content_logging/store_prompts', '/content_logging/store_completions', '/content_logging/retention_days',
  '/redaction/before_model', '/redaction/before_storage', '/redaction/medical_record_pattern',
  '/redaction/rules/*/category', '/redaction/rules/*/action',
  '/redaction/custom_patterns/*/name', '/redaction/custom_patterns/*/pattern', '/redaction/custom_patterns/*/action',
  '/access/long_context_threshold_tokens',
  '/access/rules/*/subject', '/access/rules/*/models', '/access/rules/*/tools', '/access/rules/*/long_context',
  '/access/rules/*/thinking_max', '/access/rules/*/max_prompt_tokens', '/access/rules/*/max_output_tokens',
  '/service_levels/ttft_targets/*/max_prompt_tokens', '/service_levels/ttft_targets/*/target_ms',
  '/service_levels/itl_targets/chat', '/service_levels/itl_targets/agentic',
  '/service_levels/class_header', '/service_levels/default_class',
  '/service_levels/key_classes/*/key', '/service_levels/key_classes/*/class',
];

export const NOT_SUMMARISED = {
  '/schema_version': 'the version of the document format (always 1), not a rule',
};

const CATEGORY_NAMES = {
  email: 'e-mail addresses', phone: 'phone numbers', iban: 'IBANs', payment_card: 'payment card numbers',
  us_ssn: 'US social security numbers', date_of_birth: 'dates of birth', medical_record: 'medical record numbers',
  ip_address: 'IP addresses',
};

const ACTIONS = {
  mask: 'replaced by [REDACTED:…]',
  hash: 'replaced by a keyed hash (the same value gives the same token on this appliance)',
  block: 'refused: a request containing one is answered 400',
};

const ROLE_SUBJECT = /^role:(.+)$/;

function count(n, one, many = one + 's') {
  return n + ' ' + (n === 1 ? one : many);
}

function tokens(n) {
  return Number(n).toLocaleString('en-US') + ' tokens';
}

function milliseconds(ms) {
  return ms >= 1000 && ms % 100 === 0 ? (ms / 1000).toLocaleString('en-US') + ' s' : ms + ' ms';
}

function listOf(items) {
  return items.length < 2 ? items.join('') : items.slice(0, -1).join(', ') + ' and ' + items[items.length - 1];
}

function storedSection(doc) {
  const c = doc.content_logging || {};
  const r = doc.redaction || {};
  const kinds = [c.store_prompts && 'prompts (the request body)', c.store_completions && 'completions'].filter(Boolean);
  const lines = [];
  if (kinds.length === 0) {
    lines.push('No prompt or completion text is stored: audit records keep who called which model, when, ' +
               'token counts and timings, never the text.');
  } else {
    lines.push('The audit log stores the text of ' + listOf(kinds) + '.');
    if (!c.store_prompts) lines.push('Prompt text is not stored.');
    if (!c.store_completions) lines.push('Completion text is not stored.');
    lines.push(r.before_storage
      ? 'Stored text is redacted first by the rules under "What is redacted".'
      : 'Stored text is kept as it was sent: the redaction rules do not run before storage.');
  }
  lines.push('Stored text is kept ' + count(c.retention_days, 'day') + ', then purged' +
             (kinds.length === 0 ? ' (applies once text is stored).' : '.'));
  return lines;
}

function redactedSection(doc) {
  const r = doc.redaction || {};
  const rules = r.rules || [];
  const custom = r.custom_patterns || [];
  const lines = [];
  if (rules.length === 0 && custom.length === 0) {
    lines.push('Nothing is looked for: prompts and stored text are not redacted.');
    return lines;
  }
  for (const rule of rules) {
    let what = CATEGORY_NAMES[rule.category] || rule.category;
    if (rule.category === 'medical_record' && r.medical_record_pattern) {
      what += ' (this site’s pattern ' + r.medical_record_pattern + ')';
    }
    lines.push(what[0].toUpperCase() + what.slice(1) + ': ' + (ACTIONS[rule.action] || rule.action) + '.');
  }
  for (const p of custom) {
    lines.push('Custom “' + p.name + '” (pattern ' + p.pattern + '): ' + (ACTIONS[p.action] || p.action) + '.');
  }
  if (r.medical_record_pattern && !rules.some((rule) => rule.category === 'medical_record')) {
    lines.push('A medical record pattern (' + r.medical_record_pattern + ') is set but no rule uses it.');
  }
  lines.push(r.before_model
    ? 'Masked and hashed values are rewritten before the prompt reaches the model.'
    : 'Prompts reach the model unchanged (only block refuses a request).');
  lines.push(r.before_storage
    ? 'Text the audit log stores is redacted by these rules.'
    : 'Text the audit log stores is not redacted.');
  return lines;
}

function subjectName(subject) {
  const role = ROLE_SUBJECT.exec(subject);
  return role ? 'Role ' + role[1] : 'Key ' + subject.replace(/^key:/, '');
}

function accessSection(doc) {
  const a = doc.access || {};
  const lines = [];
  for (const rule of a.rules || []) {
    const models = (rule.models || []).includes('*') ? 'every served model' : listOf(rule.models || []);
    const limits = [];
    if (rule.tools === false) limits.push('no tools');
    if (rule.long_context === false) limits.push('no prompts over ' + tokens(a.long_context_threshold_tokens));
    if (rule.thinking_max === false) limits.push('thinking effort “max” lowered to “high”');
    if (rule.max_prompt_tokens !== undefined) limits.push('prompts of at most ' + tokens(rule.max_prompt_tokens));
    if (rule.max_output_tokens !== undefined) limits.push('answers of at most ' + tokens(rule.max_output_tokens));
    lines.push(subjectName(rule.subject) + ': ' + models + (limits.length ? '; ' + limits.join(', ') : '') + '.');
  }
  lines.push('Anyone else is refused (403). A key’s own rule wins over its role’s.');
  lines.push('Long context means a prompt over ' + tokens(a.long_context_threshold_tokens) + '.');
  return lines;
}

function serviceSection(doc) {
  const s = doc.service_levels || {};
  const lines = [];
  const tiers = s.ttft_targets || [];
  lines.push('First token within: ' + tiers.map((t) => milliseconds(t.target_ms) + ' for prompts up to ' +
                                                    tokens(t.max_prompt_tokens)).join('; ') + '.');
  const itl = s.itl_targets || {};
  lines.push('Between tokens at most: ' + milliseconds(itl.chat) + ' for chat, ' + milliseconds(itl.agentic) +
             ' for agentic work.');
  lines.push('A request’s class comes from its key, else the header ' + (s.class_header || 'x-kimi-workload') +
             ', else it is ' + (s.default_class || 'chat') + '.');
  for (const k of s.key_classes || []) lines.push('Key ' + k.key + ' is always ' + k.class + '.');
  return lines;
}

// [{id, title, lines: [string]}] for a policy document as the appliance returns it.
export function summarisePolicy(doc) {
  return [
    {id: 'about', title: 'This policy', lines: ['“' + doc.name + '”' + (doc.description ? ': ' + doc.description : '.')]},
    {id: 'stored', title: 'What is stored, and for how long', lines: storedSection(doc)},
    {id: 'redacted', title: 'What is redacted', lines: redactedSection(doc)},
    {id: 'access', title: 'Who may use which models', lines: accessSection(doc)},
    {id: 'service', title: 'Service-level targets', lines: serviceSection(doc)},
  ];
}

// Every field path of a JSON Schema's properties, in SUMMARISED's notation.
export function schemaFields(schema, prefix = '') {
  const out = [];
  for (const [key, sub] of Object.entries(schema.properties || {})) {
    const path = prefix + '/' + key;
    const inner = sub.type === 'array' && sub.items ? sub.items : sub;
    const nested = inner.properties ? schemaFields(inner, path + (inner === sub ? '' : '/*')) : [];
    if (nested.length) out.push(...nested);
    else out.push(path);
  }
  return out;
}
