// Usage: tokens per UTC day per key and per owner over a chosen range (7, 30 or 90 days) as
// stacked bar charts, the top keys and owners of the range with their share and budget state,
// the monthly token budgets with their alerts, and (for admins) the form that sets a budget.
// Budgets are soft: crossing one alerts here, on the overview, on /metrics and once in the
// audit log; the key quotas are what refuse requests.

import {call, del, get} from '../api.js';
import {busy, confirmAction, errorLine, field, formatTime, h, replace} from '../dom.js';
import {stackedBars} from '../usage_chart.js';
import {budgetState, grouped, percent, stackSeries} from '../usage_model.js';

const RANGES = [7, 30, 90];
const TOP = 10;

// A table whose numeric columns (indexes in `numeric`) stay on one line, right-aligned.
function dataTable(id, columns, rows, numeric, emptyText) {
  if (rows.length === 0) return h('p', {class: 'empty', id}, emptyText);
  return h('table', {id, class: 'usage-table'},
           h('thead', {}, h('tr', {}, columns.map((c, i) => h('th', {scope: 'col', class: numeric.includes(i) ? 'num' : null}, c)))),
           h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((c, i) => h('td', {class: numeric.includes(i) ? 'num' : null}, c))))));
}

// `short`: the state alone, where the figures stand in columns of their own.
function badge(budget, short = false) {
  const state = budgetState(budget);
  return h('span', {class: 'badge budget-' + state.className}, short ? state.text.split(':')[0] : state.text);
}

function alertCallout(budgets) {
  const alerting = budgets.data.filter((b) => b.alerting);
  if (alerting.length === 0) return null;
  return h('div', {class: 'budget-alert', role: 'alert', id: 'usage-alerts-now'},
           h('strong', {}, alerting.length === 1 ? 'A budget is at its alert threshold' :
             alerting.length + ' budgets are at their alert threshold'), ' this month (UTC):',
           h('ul', {}, alerting.map((b) => h('li', {}, b.scope + ' ', h('strong', {}, b.name || b.subject),
                                              b.name ? ' (' + b.subject + ')' : '', ': ', badge(b)))));
}

function topTable(id, top, byKey) {
  const columns = byKey ? ['Key', 'Owner', 'Tokens', 'Requests', 'Share', 'Budget this month']
                        : ['Owner', 'Tokens', 'Requests', 'Share', 'Budget this month'];
  const rows = top.data.map((r) => [
    ...(byKey ? [h('span', {}, r.name || '(no name)', ' ', h('code', {}, r.id)), r.owner] : [r.id]),
    grouped(r.total_tokens), grouped(r.requests), percent(r.share), badge(r.budget)]);
  return dataTable(id, columns, rows, byKey ? [2, 3, 4] : [1, 2, 3], 'No usage in this range.');
}

export function render(container, {principal}) {
  let days = 30;
  const canEdit = principal.role === 'admin';
  const alerts = h('div', {id: 'usage-alert-box'});
  const range = h('p', {class: 'detail', id: 'usage-range'});
  const buttons = RANGES.map((d) => h('button', {type: 'button', class: 'quiet', dataset: {days: String(d)},
                                                 onclick: () => { days = d; load(); }}, 'Last ' + d + ' days'));
  const picker = h('div', {class: 'range-picker', role: 'group', 'aria-label': 'Range'}, buttons);
  const charts = h('div', {class: 'usage-charts', id: 'usage-charts'});
  const tops = h('div', {id: 'usage-tops'});
  const budgetsBox = h('div', {id: 'usage-budgets'});
  const status = h('div', {role: 'status'});
  container.append(alerts, h('div', {class: 'usage-head'}, picker, range), status, charts, tops, budgetsBox);
  if (canEdit) container.append(budgetForm());

  async function load() {
    for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.days === String(days)));
    try {
      const q = '?days=' + days;
      const [keys, owners, topKeys, topOwners, budgets] = await Promise.all([
        get('/admin/v1/usage' + q + '&by=key'), get('/admin/v1/usage' + q + '&by=owner'),
        get('/admin/v1/usage/top' + q + '&by=key&limit=' + TOP), get('/admin/v1/usage/top' + q + '&by=owner&limit=' + TOP),
        get('/admin/v1/budgets')]);
      replace(status);
      replace(range, 'UTC days ', keys.dates[0], ' to ', keys.dates[keys.dates.length - 1], ' · ',
              grouped(topKeys.total_tokens), ' tokens in ', grouped(topKeys.total_requests), ' requests');
      replace(alerts, alertCallout(budgets));
      replace(charts,
              h('section', {class: 'card'}, stackedBars({dates: keys.dates, series: stackSeries(keys.data), unit: 'tokens',
                                                        title: 'Tokens per day by key', id: 'usage-chart-keys'})),
              h('section', {class: 'card'}, stackedBars({dates: owners.dates, series: stackSeries(owners.data),
                                                        unit: 'tokens', title: 'Tokens per day by owner',
                                                        id: 'usage-chart-owners'})));
      replace(tops,
              h('section', {class: 'card', 'aria-labelledby': 'top-keys-title'},
                h('h2', {id: 'top-keys-title'}, 'Top keys, last ' + days + ' days'), topTable('usage-top-keys', topKeys, true)),
              h('section', {class: 'card', 'aria-labelledby': 'top-owners-title'},
                h('h2', {id: 'top-owners-title'}, 'Top owners, last ' + days + ' days'),
                topTable('usage-top-owners', topOwners, false)));
      replace(budgetsBox, budgetsPanel(budgets));
      const subjects = container.querySelector('#budget-subjects');
      if (subjects) {
        const known = new Set([...keys.data.map((l) => l.id), ...owners.data.map((l) => l.id)]);
        replace(subjects, [...known].map((v) => h('option', {value: v})));
      }
    } catch (e) {
      replace(status, errorLine(e, 'Usage'));
    }
  }

  function budgetsPanel(budgets) {
    const rows = budgets.data.map((b) => {
      const cells = [b.scope, b.name ? h('span', {}, b.name, ' ', h('code', {}, b.subject)) : b.subject,
                     grouped(b.used_tokens), grouped(b.tokens_per_month), b.alert_percent + '% (' +
                     grouped(b.threshold_tokens) + ')', badge(b, true)];
      if (canEdit) {
        cells.push(h('button', {type: 'button', class: 'quiet', dataset: {remove: b.scope + '/' + b.subject},
                                onclick: () => remove(b)}, 'Remove'));
      }
      return cells;
    });
    const columns = ['Scope', 'Key or owner', 'Used this month', 'Tokens per month', 'Alert at', 'State'];
    if (canEdit) columns.push('');
    return [
      h('section', {class: 'card', 'aria-labelledby': 'budgets-title'},
        h('h2', {id: 'budgets-title'}, 'Monthly token budgets'),
        h('p', {class: 'hint'}, 'Soft limits: a budget alerts (here, on the overview, on /metrics as ' +
          'kimi_budget_alerts, and once a month in the audit log) but refuses nothing; the key quotas refuse.'),
        dataTable('budget-list', columns, rows, [2, 3, 4], 'No budget set.')),
      h('section', {class: 'card', 'aria-labelledby': 'budget-alerts-title'},
        h('h2', {id: 'budget-alerts-title'}, 'Budget alerts, this month and the two before'),
        dataTable('budget-alerts', ['Month (UTC)', 'Scope', 'Key or owner', 'First seen (UTC)', 'Tokens then', 'Threshold'],
                  budgets.alerts.map((a) => [a.month, a.scope, a.subject, formatTime(a.time), grouped(a.tokens),
                                             grouped(a.threshold_tokens)]), [4, 5], 'No alert.')),
    ];
  }

  async function remove(b) {
    const ok = await confirmAction({title: 'Remove this budget?', confirmLabel: 'Remove',
                                    body: ['The ' + b.scope + ' budget of ' + (b.name || b.subject) +
                                           ' stops alerting. Its past alerts stay in the audit log.']});
    if (!ok) return;
    try {
      await del('/admin/v1/budgets/' + encodeURIComponent(b.scope) + '/' + encodeURIComponent(b.subject));
    } catch (e) {
      replace(status, errorLine(e, 'Remove budget'));
    }
    load();
  }

  function budgetForm() {
    const scope = h('select', {id: 'budget-scope'}, h('option', {value: 'key'}, 'key'), h('option', {value: 'owner'}, 'owner'));
    const subject = h('input', {id: 'budget-subject', required: true, list: 'budget-subjects', autocomplete: 'off'});
    const tokens = h('input', {id: 'budget-tokens', type: 'number', min: '1', step: '1', required: true});
    const percentInput = h('input', {id: 'budget-percent', type: 'number', min: '1', max: '100', step: '1', value: '80'});
    const save = h('button', {type: 'submit', class: 'primary'}, 'Save budget');
    const formStatus = h('div', {role: 'status', id: 'budget-status'});
    const form = h('form', {class: 'card', id: 'budget-form', 'aria-labelledby': 'budget-form-title'},
                   h('h2', {id: 'budget-form-title'}, 'Set a budget'),
                   h('datalist', {id: 'budget-subjects'}),
                   field('Scope', scope, 'a key, or an owner (every key it holds counts)'),
                   field('Key id or owner', subject),
                   field('Tokens per UTC month', tokens),
                   field('Alert at (% of the budget)', percentInput),
                   h('div', {class: 'actions'}, save), formStatus);
    form.addEventListener('submit', busy(save, formStatus, async () => {
      const stored = await call('PUT', '/admin/v1/budgets/' + scope.value + '/' + encodeURIComponent(subject.value.trim()),
                                {body: {tokens_per_month: Number(tokens.value), alert_percent: Number(percentInput.value)}});
      replace(formStatus, h('p', {class: 'ok'}, 'Saved: ', badge(stored)));
      load();
    }));
    return form;
  }

  load();
}
