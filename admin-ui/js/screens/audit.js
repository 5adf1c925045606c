// Audit: search the audit log with filters (time, actor, action, model, outcome, request
// id), page through the results with the server's cursor, and export the selected time range
// as the signed JSONL bundle (records, signed heads and inclusion proofs) or as CSV (records
// and signed heads, no proofs), verify the whole log (GET /admin/v1/audit/verify), and open one
// record with its inclusion proof (GET /admin/v1/audit/records/{seq}/proof), checked again in
// the page (proof.js). Shown as not available when the appliance has no audit routes.

import {call, get} from '../api.js';
import {busy, errorLine, field, formatTime, h, replace, table} from '../dom.js';
import {checkInclusion} from '../proof.js';

const PAGE = 100;

function filterInputs() {
  return {
    since: h('input', {id: 'audit-since', type: 'datetime-local', step: 1}),
    until: h('input', {id: 'audit-until', type: 'datetime-local', step: 1}),
    actor: h('input', {id: 'audit-actor'}),
    action: h('input', {id: 'audit-action', placeholder: 'auth.login'}),
    model: h('input', {id: 'audit-model'}),
    requestId: h('input', {id: 'audit-request-id', placeholder: 'X-Request-Id of a reply'}),
    clientRequestId: h('input', {id: 'audit-client-request-id', placeholder: 'X-Request-Id a client sent'}),
    outcome: h('select', {id: 'audit-outcome'}, ['', 'ok', 'denied', 'invalid', 'error', 'client_disconnected', 'started', 'interrupted',
                                              'audit_unavailable'].map((o) =>
      h('option', {value: o}, o || 'any'))),
  };
}

// datetime-local values are local time; the API takes UTC.
function utc(local) {
  return local ? new Date(local).toISOString() : '';
}

function query(inputs) {
  return {since: utc(inputs.since.value), until: utc(inputs.until.value), actor: inputs.actor.value.trim(),
          action: inputs.action.value.trim(), model: inputs.model.value.trim(), outcome: inputs.outcome.value,
          request_id: inputs.requestId.value.trim(), client_request_id: inputs.clientRequestId.value.trim()};
}

// A record as GET /admin/v1/audit returns it (audit/record.h: RecordToJson).
// The verification report: ok with its figures, or the problems and the first bad record.
function verifyReport(report) {
  const figures = report.records + ' records, ' + report.signed_heads + ' signed heads, ' + report.covered_size +
                  ' covered by the newest head';
  if (report.ok) {
    return h('div', {id: 'audit-verify', class: 'ok', role: 'status'},
             h('p', {}, 'The log verifies: ' + figures + '.'), h('ul', {}, (report.notes || []).map((n) => h('li', {}, n))));
  }
  return h('div', {id: 'audit-verify', class: 'error', role: 'alert'},
           h('p', {}, 'The log does NOT verify' + (report.first_bad_seq === null ? '' : ': first bad record ' +
             report.first_bad_seq) + ' (' + figures + ').'),
           h('ul', {}, (report.problems || []).map((p) => h('li', {}, p))));
}

function recordRow(r, open) {
  const seq = h('button', {type: 'button', class: 'link', 'aria-label': 'Show record ' + r.seq + ' with its proof',
                           onclick: () => open(r.seq)}, String(r.seq));
  return [seq, formatTime(r.time), r.actor || '–', r.role || '–', r.action || '–', r.model || '–',
          r.outcome || '–', r.http_status ? String(r.http_status) : '', r.request_id || '', r.detail || ''];
}

const RECORD_FIELDS = ['seq', 'time', 'actor', 'role', 'source', 'action', 'target', 'model', 'model_digest', 'outcome',
                       'http_status', 'request_id', 'client_request_id', 'start_seq', 'detail', 'policy', 'prompt_tokens', 'completion_tokens'];

function facts(pairs) {
  return h('dl', {class: 'facts'}, pairs.filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function checkLine(id, step) {
  const mark = step.ok === true ? 'ok' : step.ok === false ? 'error' : 'unavailable';
  const word = step.ok === true ? 'Verified: ' : step.ok === false ? 'FAILED: ' : 'Not checked here: ';
  return h('li', {class: mark, id}, word + step.text);
}

// The record, its proof and both checks: the page's own (Web Crypto) and the appliance's.
async function recordDetail(reply) {
  const {proof, record} = reply;
  const head = proof.signed_head;
  let steps;
  if (globalThis.crypto && crypto.subtle) {
    steps = await checkInclusion(crypto.subtle, proof, reply.public_key.public_key);
  } else {
    const none = {ok: null, text: 'this page is not in a secure context (HTTPS), so it has no Web Crypto'};
    steps = {leaf: none, root: none, signature: none};
  }
  const server = reply.check || {};
  const saved = h('a', {href: URL.createObjectURL(new Blob([JSON.stringify(proof, null, 2) + '\n'],
                                                            {type: 'application/json'})),
                        download: 'audit-proof-' + proof.leaf_index + '.json'}, 'Download the proof');
  return h('section', {class: 'card', id: 'audit-record', 'aria-labelledby': 'audit-record-title', tabindex: '-1'},
           h('h2', {id: 'audit-record-title'}, 'Record ' + proof.leaf_index),
           facts(RECORD_FIELDS.map((k) => [k, record[k] === undefined || (k === 'start_seq' && record[k] < 0) ?
             undefined : String(record[k])])),
           h('h3', {}, 'Inclusion proof'),
           facts([['Leaf index', String(proof.leaf_index)], ['Tree size', String(proof.tree_size)],
                  ['Leaf hash', h('code', {}, proof.leaf_hash)], ['Root', h('code', {id: 'proof-root'}, reply.root_hash)],
                  ['Signed head', formatTime(head.time) + ', key id ' + head.key_id.slice(0, 16) + '…'],
                  ['Signature', h('code', {}, head.signature)]]),
           h('p', {class: 'detail'}, 'Audit path, from the leaf up (' + proof.audit_path.length + ' hashes):'),
           h('ol', {class: 'path'}, proof.audit_path.map((p) => h('li', {}, h('code', {}, p)))),
           h('h3', {}, 'Checked in this page'),
           h('ul', {class: 'checks', id: 'proof-checks'}, checkLine('check-leaf', steps.leaf),
             checkLine('check-root', steps.root), checkLine('check-signature', steps.signature)),
           h('h3', {}, 'Checked by the appliance'),
           h('p', {class: server.ok ? 'ok' : 'error', id: 'proof-server-check'},
             server.ok ? 'Verified: ' + (server.facts || []).join('; ') + '.' : 'FAILED: ' + (server.error || 'no answer')),
           h('p', {class: 'detail'}, 'Compare the key id with the audit public key you hold (audit-ed25519.pub.json in the data directory); ',
             saved, ' to check it offline with kimi-audit-verify.'));
}

// The export covers a time range only; the other filters do not narrow it.
async function download(format, q, status) {
  const blob = await call('GET', '/admin/v1/audit/export',
                          {query: {since: q.since, until: q.until, format}, as: 'blob'});
  const link = h('a', {href: URL.createObjectURL(blob), download: 'audit-export.' + format});
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  replace(status, h('p', {class: 'ok', role: 'status'}, 'Exported ' + blob.size + ' bytes as ' + format + '.'));
}

export function render(container) {
  const inputs = filterInputs();
  const search = h('button', {type: 'submit', class: 'primary'}, 'Search');
  const status = h('div', {class: 'status'});
  const results = h('div', {id: 'audit-results'});
  const detail = h('div', {});
  const more = h('div', {});
  const exportJsonl = h('button', {type: 'button'}, 'Export JSONL');
  const exportCsv = h('button', {type: 'button'}, 'Export CSV');
  const verify = h('button', {type: 'button'}, 'Verify the log');
  const form = h('form', {class: 'card', 'aria-labelledby': 'audit-filter-title'},
                 h('h2', {id: 'audit-filter-title'}, 'Search the audit log'),
                 h('div', {class: 'row'}, field('From', inputs.since), field('Until', inputs.until),
                   field('Actor', inputs.actor)),
                 h('div', {class: 'row'}, field('Action', inputs.action), field('Model', inputs.model),
                   field('Outcome', inputs.outcome), field('Request ID', inputs.requestId),
                   field('Client request ID', inputs.clientRequestId)),
                 h('div', {class: 'actions'}, search, exportJsonl, exportCsv, verify), status);
  container.append(form, detail, results, more);

  async function open(seq) {
    replace(detail, h('p', {class: 'detail', role: 'status'}, 'Proving record ' + seq + '…'));
    try {
      const section = await recordDetail(await get('/admin/v1/audit/records/' + seq + '/proof'));
      replace(detail, section);
      section.focus();
    } catch (e) {
      replace(detail, errorLine(e, 'Record ' + seq));
    }
  }
  let rows = [];

  async function page(cursor) {
    const reply = await get('/admin/v1/audit', {query: {...query(inputs), cursor, limit: PAGE}});
    const records = reply.records || [];
    rows = cursor ? rows.concat(records) : records;
    replace(results, table(['Seq', 'Time (UTC)', 'Actor', 'Role', 'Action', 'Model', 'Outcome', 'Status', 'Request ID',
                            'Detail'],
                           rows.map((r) => recordRow(r, open)), 'No records match.'));
    const next = reply.next_cursor || null;
    if (!next) {
      replace(more);
      return;
    }
    const button = h('button', {type: 'button'}, 'Load more');
    button.addEventListener('click', busy(button, status, () => page(next)));
    replace(more, button);
  }

  form.addEventListener('submit', busy(search, status, async () => {
    try {
      await page(null);
    } catch (e) {
      replace(results);
      throw e;
    }
  }));
  exportJsonl.addEventListener('click', busy(exportJsonl, status, () => download('jsonl', query(inputs), status)));
  exportCsv.addEventListener('click', busy(exportCsv, status, () => download('csv', query(inputs), status)));
  verify.addEventListener('click', busy(verify, status, async () => {
    replace(status, verifyReport(await get('/admin/v1/audit/verify')));
  }));
  // A first page at once, which also tells whether the route exists: without it, the
  // screen is only the notice.
  page(null).catch((e) => {
    if (e.unavailable) replace(container, errorLine(e, 'The audit log'));
    else replace(status, errorLine(e, 'Search'));
  });
}
