// The fields an API key carries that the keys screen creates and edits: its role (one of the
// roles of auth/roles.h) and its quotas (auth/key_limits.h; 0 or empty: no limit); the state
// badges of keys and users, and the earliest expiry date.

import {h} from '../dom.js';

export const LIMITS = [
  {name: 'requests_per_minute', label: 'Requests per minute'},
  {name: 'tokens_per_minute', label: 'Tokens per minute'},
  {name: 'tokens_per_day', label: 'Tokens per UTC day'},
  {name: 'tokens_per_month', label: 'Tokens per UTC month'},
  {name: 'max_concurrent_streams', label: 'Requests in flight at once'},
];

export const ROLES = ['user', 'operator', 'auditor', 'admin', 'scrape'];

export function roleSelect(id, roles, selected) {
  const select = h('select', {id}, roles.map((r) => h('option', {value: r}, r)));
  if (selected) select.value = selected;
  return select;
}

export function limitInputs(prefix, values = {}) {
  return Object.fromEntries(LIMITS.map((l) => [l.name, h('input', {
    id: prefix + l.name.replaceAll('_', '-'), type: 'number', min: 0, step: 1, placeholder: 'no limit',
    value: values[l.name] ? String(values[l.name]) : ''})]));
}

// The fields that were filled in, as numbers; `cleared` (for a change) sends 0 for empty ones.
export function limitValues(inputs, cleared) {
  const out = {};
  for (const l of LIMITS) {
    const text = inputs[l.name].value.trim();
    if (text !== '') out[l.name] = Number(text);
    else if (cleared) out[l.name] = 0;
  }
  return out;
}

// "a, b" -> ['a', 'b']; empty entries dropped.
export function modelList(text) {
  return text.split(',').map((m) => m.trim()).filter(Boolean);
}

// The states of auth/lifecycle_state.h, as the daemon names them for keys and users, with the
// words the console shows.
const STATE_LABELS = {
  active: 'active', revoked: 'revoked', expired: 'expired', owner_disabled: 'owner disabled',
  disabled: 'disabled', locked: 'locked', password_change_due: 'password change due',
};

export function stateBadge(state) {
  return h('span', {class: 'badge state-' + state.replaceAll('_', '-')}, STATE_LABELS[state] || state);
}

// Today's date in UTC (YYYY-MM-DD): the earliest expiry date a key may have.
export function todayUtc(now = new Date()) {
  return now.toISOString().slice(0, 10);
}
