// Audit: search the audit log, newest first or oldest first, with filters (time in UTC, actor,
// key name, key owner, action from the actions the log holds, model, outcome, request ids, and
// a partial match over actor, request id, target, key name and owner), page through the results
// with the server's cursor, and export exactly what the filters select as the signed JSONL
// bundle (records, signed heads and inclusion proofs) or as CSV (records and signed heads, no
// proofs); verify the whole log (GET /admin/v1/audit/verify), and open one record with its
// stored content, latencies and inclusion proof (GET /admin/v1/audit/records/{seq}/proof),
// checked again in the page (proof.js). Shown as not available when the appliance has no audit
// routes.

import {call, get} from '../api.js';
import {detailFull, detailLine, latencyMs, tokens, utcParam} from '../audit_format.js';
import {busy, errorLine, field, formatTime, h, replace} from '../dom.js';
import {checkInclusion} from '../proof.js';

const PAGE = 100;

const OUTCOMES = ['ok', 'denied', 'invalid', 'error', 'client_disconnected', 'started', 'interrupted', 'audit_unavailable'];

function filterInputs() {
  return {
    since: h('input', {id: 'audit-since', type: 'datetime-local', step: 1}),
    until: h('input', {id: 'audit-until', type: 'datetime-local', step: 1}),
    contains: h('input', {id: 'audit-contains', type: 'search', maxlength: 256,
                          placeholder: 'part of an actor, request id, target, key name or owner'}),
    actor: h('input', {id: 'audit-actor'}),
    keyName: h('input', {id: 'audit-key-name'}),
    owner: h('input', {id: 'audit-owner'}),
    // Filled from GET /admin/v1/audit/actions: the actions the log holds.
    action: h('select', {id: 'audit-action'}, h('option', {value: ''}, 'any')),
    model: h('input', {id: 'audit-model'}),
    requestId: h('input', {id: 'audit-request-id', placeholder: 'X-Request-Id of a reply'}),
    clientRequestId: h('input', {id: 'audit-client-request-id', placeholder: 'X-Request-Id a client sent'}),
    outcome: h('select', {id: 'audit-outcome'}, ['', ...OUTCOMES].map((o) => h('option', {value: o}, o || 'any'))),
    order: h('select', {id: 'audit-order'}, h('option', {value: 'newest'}, 'Newest first'),
             h('option', {value: 'oldest'}, 'Oldest first')),
  };
}

// The filters as the API's parameters: the list and the export take the same ones.
function query(inputs) {
  return {since: utcParam(inputs.since.value), until: utcParam(inputs.until.value), q: inputs.contains.value.trim(),
          actor: inputs.actor.value.trim(), key_name: inputs.keyName.value.trim(), owner: inputs.owner.value.trim(),
          action: inputs.action.value, model: inputs.model.value.trim(), outcome: inputs.outcome.value,
          request_id: inputs.requestId.value.trim(), client_request_id: inputs.clientRequestId.value.trim()};
}

async function fillActions(select) {
  const {actions} = await get('/admin/v1/audit/actions');
  const chosen = select.value;
  replace(select, h('option', {value: ''}, 'any'), (actions || []).map((a) => h('option', {value: a}, a)));
  select.value = chosen;
}

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

// The columns of the results table; the class marks numbers (kept on one line) and the detail
// (one line, cut with an ellipsis; the record view has it in full), and a header's tooltip.
const COLUMNS = [['Seq', 'num'], ['Time (UTC)', 'time'], ['Actor'], ['Role'], ['Action'], ['Model'],
                 ['Outcome'], ['Status', 'num'], ['Request ID', 'id'], ['Key name'], ['Owner'],
                 ['Tokens', 'num', 'prompt / completion tokens'], ['TTFT', 'num'], ['Total', 'num'], ['Detail', 'detail']];

function recordRow(r, open) {
  const seq = h('button', {type: 'button', class: 'link', 'aria-label': 'Show record ' + r.seq + ' with its proof',
                           onclick: () => open(r.seq)}, String(r.seq));
  return [seq, formatTime(r.time), r.actor || '–', r.role || '–', r.action || '–', r.model || '–',
          r.outcome || '–', r.http_status ? String(r.http_status) : '', r.request_id || '', r.key_name || '',
          r.key_owner || '', tokens(r), latencyMs(r.ttft_us), latencyMs(r.total_us),
          h('div', {class: 'line'}, detailLine(r.detail))];
}

function resultsTable(rows, open) {
  if (rows.length === 0) return h('p', {class: 'empty'}, 'No records match.');
  return h('div', {class: 'audit-scroll'},
           h('table', {class: 'audit-table'},
             h('thead', {}, h('tr', {}, COLUMNS.map(([name, kind, title]) =>
               h('th', {scope: 'col', class: kind, title}, name)))),
             h('tbody', {}, rows.map((r) => h('tr', {}, recordRow(r, open).map((cell, i) =>
               h('td', {class: COLUMNS[i][1]}, cell)))))));
}

const RECORD_FIELDS = ['seq', 'time', 'actor', 'key_name', 'key_owner', 'role', 'source', 'action', 'target', 'model',
                       'model_digest', 'outcome', 'http_status', 'request_id', 'client_request_id', 'start_seq',
                       'policy', 'backend', 'route_decision'];

// What the record says of the request's size and speed: tokens, time to first token, total.
function measures(record) {
  return [['tokens (prompt / completion)', tokens(record) || undefined], ['time to first token', latencyMs(record.ttft_us) ||
           undefined], ['total latency', latencyMs(record.total_us) || undefined]];
}

// The content as stored: already redacted by the policy in force when it was written.
function storedContent(record) {
  if (!record.content) {
    return h('p', {class: 'detail', id: 'audit-content'}, record.content_sha256 ?
      'The content was stored but has been purged at the retention age; its digest remains: ' + record.content_sha256 :
      'No content stored for this record (the policy in force did not store prompts or completions).');
  }
  return h('div', {id: 'audit-content'},
           h('h4', {}, 'Prompt'), h('pre', {class: 'audit-text', id: 'audit-content-prompt'}, record.content.prompt || '(empty)'),
           h('h4', {}, 'Completion'), h('pre', {class: 'audit-text', id: 'audit-content-completion'},
             record.content.completion || '(empty)'));
}

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
             undefined : String(record[k])]).concat(measures(record))),
           record.detail ? [h('h3', {}, 'Detail'), h('pre', {class: 'audit-text', id: 'audit-detail-full'},
             detailFull(record.detail))] : null,
           h('h3', {}, 'Stored content'),
           storedContent(record),
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

// The export holds every record the filters select (all pages), whatever the order shown.
async function download(format, q, status) {
  const blob = await call('GET', '/admin/v1/audit/export', {query: {...q, format}, as: 'blob'});
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
                 h('div', {class: 'row'}, field('From (UTC)', inputs.since), field('Until (UTC)', inputs.until),
                   field('Contains', inputs.contains, 'any part, upper or lower case'), field('Order', inputs.order)),
                 h('div', {class: 'row'}, field('Actor', inputs.actor), field('Key name', inputs.keyName),
                   field('Owner', inputs.owner), field('Action', inputs.action), field('Model', inputs.model),
                   field('Outcome', inputs.outcome)),
                 h('div', {class: 'row'}, field('Request ID', inputs.requestId),
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

  // The filters of the first page hold for the pages after it (Load more), as the cursor
  // belongs to them.
  // Only the newest search's answers are shown: the first page on arrival may answer after a
  // search made meanwhile.
  let shown = null;
  let searches = 0;
  async function page(cursor) {
    if (!cursor) {
      shown = {...query(inputs), order: inputs.order.value};
      searches += 1;
    }
    const mine = searches;
    const reply = await get('/admin/v1/audit', {query: {...shown, cursor, limit: PAGE}});
    if (mine !== searches) return;
    const records = reply.records || [];
    rows = cursor ? rows.concat(records) : records;
    replace(results, resultsTable(rows, open));
    const next = reply.next_cursor || null;
    // A partial match reads a bounded window of the log per page: say how far it has looked.
    const scanned = reply.scanned && next ?
      h('p', {class: 'detail', id: 'audit-scanned'}, 'Searched records ' + reply.scanned.first_seq + ' to ' +
        reply.scanned.last_seq + '; Load more searches further.') : null;
    if (!next) {
      replace(more);
      return;
    }
    const button = h('button', {type: 'button'}, 'Load more');
    button.addEventListener('click', busy(button, status, () => page(next)));
    replace(more, scanned, button);
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
  inputs.order.addEventListener('change', () => form.requestSubmit());
  fillActions(inputs.action).catch((e) => replace(status, errorLine(e, 'The action list')));
  // A first page at once, which also tells whether the route exists: without it, the
  // screen is only the notice.
  page(null).catch((e) => {
    if (e.unavailable) replace(container, errorLine(e, 'The audit log'));
    else replace(status, errorLine(e, 'Search'));
  });
}
