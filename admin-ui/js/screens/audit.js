// Audit: search the audit log with filters, page through the results, and export the
// selected time range as JSONL or CSV (with the signed heads that cover it). Shown as not
// available when the appliance has no audit routes.

import {call, get} from '../api.js';
import {busy, errorLine, field, formatTime, h, replace, table} from '../dom.js';

const PAGE = 100;

function filterInputs() {
  return {
    since: h('input', {id: 'audit-since', type: 'datetime-local', step: 1}),
    until: h('input', {id: 'audit-until', type: 'datetime-local', step: 1}),
    actor: h('input', {id: 'audit-actor'}),
    action: h('input', {id: 'audit-action', placeholder: 'auth.login'}),
    model: h('input', {id: 'audit-model'}),
    outcome: h('select', {id: 'audit-outcome'}, ['', 'ok', 'error', 'denied'].map((o) =>
      h('option', {value: o}, o || 'any'))),
  };
}

// datetime-local values are local time; the API takes UTC.
function utc(local) {
  return local ? new Date(local).toISOString() : '';
}

function query(inputs) {
  return {since: utc(inputs.since.value), until: utc(inputs.until.value), actor: inputs.actor.value.trim(),
          action: inputs.action.value.trim(), model: inputs.model.value.trim(), outcome: inputs.outcome.value};
}

function recordRow(r) {
  return [String(r.seq ?? r.sequence ?? ''), formatTime(r.time || r.ts || r.timestamp), r.actor || '–', r.role || '–',
          r.action || '–', r.model || '–', r.outcome || '–', String(r.status ?? r.http_status ?? ''),
          r.detail || ''];
}

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
  const more = h('div', {});
  const exportJsonl = h('button', {type: 'button'}, 'Export JSONL');
  const exportCsv = h('button', {type: 'button'}, 'Export CSV');
  const form = h('form', {class: 'card', 'aria-labelledby': 'audit-filter-title'},
                 h('h2', {id: 'audit-filter-title'}, 'Search the audit log'),
                 h('div', {class: 'row'}, field('From', inputs.since), field('Until', inputs.until),
                   field('Actor', inputs.actor)),
                 h('div', {class: 'row'}, field('Action', inputs.action), field('Model', inputs.model),
                   field('Outcome', inputs.outcome)),
                 h('div', {class: 'actions'}, search, exportJsonl, exportCsv), status);
  container.append(form, results, more);
  let rows = [];

  async function page(cursor) {
    const reply = await get('/admin/v1/audit', {query: {...query(inputs), cursor, limit: PAGE}});
    const records = reply.data || reply.records || [];
    rows = cursor ? rows.concat(records) : records;
    replace(results, table(['Seq', 'Time (UTC)', 'Actor', 'Role', 'Action', 'Model', 'Outcome', 'Status', 'Detail'],
                           rows.map(recordRow), 'No records match.'));
    const next = reply.next_cursor || reply.cursor || null;
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
  // A first page at once, which also tells whether the route exists: without it, the
  // screen is only the notice.
  page(null).catch((e) => {
    if (e.unavailable) replace(container, errorLine(e, 'The audit log'));
    else replace(status, errorLine(e, 'Search'));
  });
}
