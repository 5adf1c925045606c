// Keys and users: API keys (search and pages, state and expiry badges; create with role,
// models, quotas and an expiry date, the secret shown once with a copy button, edit role,
// models and quotas, rotate with a grace period, revoke; per key its usage this UTC day and
// month against its quotas) and console users (user_list.js). An auditor gets the key list
// read-only.

import {get, patch, post} from '../api.js';
import {busy, confirmAction, errorLine, field, formatTime, h, replace, table} from '../dom.js';
import {editKeyDialog} from './key_edit.js';
import {LIMITS, ROLES, limitInputs, limitValues, modelList, roleSelect, stateBadge, todayUtc} from './key_fields.js';
import {rotateKeyDialog} from './key_rotate.js';
import {pagedList} from './list_pager.js';
import {shownOnce} from './shown_once.js';
import {usersSection} from './user_list.js';

function usageOf(used, limit) {
  return limit ? used + ' of ' + limit + ' (' + Math.floor((used * 100) / limit) + '%)' : used + ' (no limit)';
}

// One key's usage and quotas: GET /admin/v1/keys/{id}/usage, changed by PATCH /admin/v1/keys/{id}.
async function keyDetail(key, onChanged) {
  const usage = await get('/admin/v1/keys/' + encodeURIComponent(key.id) + '/usage');
  const inputs = limitInputs('limit-', usage.limits);
  const save = h('button', {type: 'submit', class: 'primary'}, 'Save quotas');
  const status = h('div', {class: 'status'});
  const form = h('form', {'aria-labelledby': 'key-limits-title'},
                 h('h3', {id: 'key-limits-title'}, 'Quotas'),
                 h('div', {class: 'row'}, LIMITS.map((l) => field(l.label, inputs[l.name]))), save, status);
  form.addEventListener('submit', busy(save, status, async () => {
    await patch('/admin/v1/keys/' + encodeURIComponent(key.id), limitValues(inputs, true));
    replace(status, h('p', {class: 'ok', role: 'status'}, 'Quotas saved; they apply from the key’s next request.'));
    onChanged();
  }));
  const lim = usage.limits;
  return h('section', {class: 'card', id: 'key-detail', tabindex: '-1', 'aria-labelledby': 'key-detail-title'},
           h('h2', {id: 'key-detail-title'}, 'Key “' + key.name + '”: usage and quotas'),
           h('p', {class: 'detail'}, 'Role ' + key.role + ', models ' + ((key.models || []).join(', ') || 'all') +
             ' (change them with Edit).'),
           table(['Period (UTC)', 'Since', 'Requests', 'Prompt tokens', 'Completion tokens', 'Tokens against quota'],
                 [['Today', formatTime(usage.day.period_start), String(usage.day.requests), String(usage.day.prompt_tokens),
                   String(usage.day.completion_tokens), usageOf(usage.day.total_tokens, lim.tokens_per_day)],
                  ['This month', formatTime(usage.month.period_start), String(usage.month.requests),
                   String(usage.month.prompt_tokens), String(usage.month.completion_tokens),
                   usageOf(usage.month.total_tokens, lim.tokens_per_month)]]),
           h('p', {id: 'key-streams'}, 'Requests in flight now: ' +
             usageOf(usage.streams_in_flight, lim.max_concurrent_streams) + '.'),
           form);
}

// The Expires cell: the time (UTC) or "never", badged once passed.
function expiresCell(key) {
  if (!key.expires_at) return 'never';
  return h('span', {class: 'nowrap'}, formatTime(key.expires_at),
           key.state === 'expired' ? [' ', stateBadge('expired')] : '');
}

function stateCell(key) {
  return h('span', {}, stateBadge(key.state),
           key.state === 'revoked' ? [' ', h('span', {class: 'nowrap'}, formatTime(key.revoked_at))] : '',
           key.previous_secret_expires_at
             ? h('span', {class: 'detail'}, ' old secret until ',
                 h('span', {class: 'nowrap'}, formatTime(key.previous_secret_expires_at))) : '');
}

function keysSection(area, readOnly) {
  const once = h('div', {});
  const detail = h('div', {});
  const edited = h('div', {id: 'key-edited'});
  const status = h('div', {class: 'status'});
  const columns = ['Name', 'Id', 'Role', 'Owner', 'Models', 'Created (UTC)', 'Expires (UTC)', 'Last used (UTC)', 'State'];
  const keys = pagedList({id: 'key', path: '/admin/v1/keys', what: 'API keys', searchHint: 'name, owner or id',
                          draw: (rows) => table(readOnly ? columns : [...columns, ''], rows.map((k) => {
                            const cells = [k.name, h('code', {}, k.id), k.role, k.owner || '–',
                                           (k.models || []).join(', ') || 'all', formatTime(k.created_at),
                                           expiresCell(k), formatTime(k.last_used_at), stateCell(k)];
                            if (!readOnly) cells.push(actions(k));
                            return cells;
                          }), 'No API keys match.')});
  const load = keys.load;

  function actions(k) {
    const live = k.state !== 'revoked';
    return h('span', {class: 'actions'}, usageButton(k), live ? editButton(k) : '',
             live && k.state !== 'expired' ? rotateButton(k) : '', live ? revokeButton(k) : '');
  }

  if (readOnly) {
    area.append(h('h2', {}, 'API keys'),
                h('p', {class: 'detail', id: 'key-inventory-note'},
                  'Read-only inventory: who holds which key, in which role, and its state. Secrets are never shown.'),
                keys.element);
    load();
    return;
  }

  const name = h('input', {id: 'key-name', required: true});
  const role = roleSelect('key-role', ROLES);
  const owner = h('input', {id: 'key-owner'});
  const models = h('input', {id: 'key-models', placeholder: 'all models'});
  // A date means the end of that UTC day on the daemon, so today is the earliest choice.
  const expires = h('input', {id: 'key-expires', type: 'date', min: todayUtc()});
  const quotas = limitInputs('key-');
  const submit = h('button', {type: 'submit', class: 'primary'}, 'Create key');
  const form = h('form', {class: 'card', 'aria-labelledby': 'key-form-title'},
                 h('h2', {id: 'key-form-title'}, 'New API key'),
                 h('div', {class: 'row'}, field('Name', name), field('Role', role), field('Owner', owner)),
                 h('div', {class: 'row'}, field('Models (comma-separated)', models),
                   field('Expires (UTC date)', expires, 'works through the end of that day, UTC; empty: never')),
                 h('div', {class: 'row'}, LIMITS.map((l) => field(l.label, quotas[l.name]))),
                 submit, status);

  function rotateButton(key) {
    return h('button', {type: 'button', class: 'small', dataset: {rotate: key.id}, 'aria-label': 'Rotate key ' + key.name,
                        onclick: async () => {
      const rotated = await rotateKeyDialog(key);
      if (!rotated) return;
      const until = rotated.previous_secret_expires_at
        ? 'The old secret works until ' + formatTime(rotated.previous_secret_expires_at) + '.'
        : 'The old secret is refused from now on.';
      replace(once, shownOnce('Key “' + rotated.name + '” rotated. ' + until, 'New API key', rotated.key,
                              () => replace(once)));
      load();
    }}, 'Rotate');
  }

  function usageButton(key) {
    return h('button', {type: 'button', class: 'small', 'aria-label': 'Usage and quotas of key ' + key.name,
                        onclick: async () => {
      try {
        const section = await keyDetail(key, load);
        replace(detail, section);
        section.focus();
      } catch (e) {
        replace(detail, errorLine(e, 'Usage of ' + key.name));
      }
    }}, 'Usage');
  }

  function editButton(key) {
    return h('button', {type: 'button', class: 'small', dataset: {edit: key.id}, 'aria-label': 'Edit key ' + key.name,
                        onclick: async () => {
      let served = [];
      try {
        served = ((await get('/v1/models')).data || []).map((m) => m.id);
      } catch {
        // the dialog says no model is served; the daemon still checks what is saved
      }
      const updated = await editKeyDialog(key, served);
      if (!updated) return;
      replace(edited, h('p', {class: 'ok', role: 'status'},
                        'Key “' + updated.name + '” now has role ' + updated.role + ' and models ' +
                        ((updated.models || []).join(', ') || 'all') + '; the change applies from its next request.'));
      replace(detail);
      load();
    }}, 'Edit');
  }

  function revokeButton(key) {
    return h('button', {type: 'button', class: 'danger small', dataset: {revoke: key.id},
                        'aria-label': 'Revoke key ' + key.name, onclick: async () => {
      const sure = await confirmAction({
        title: 'Revoke key “' + key.name + '”?',
        body: ['Every request that presents this key is refused from the next request on. ' +
               'A revoked key cannot be restored; make a new one instead.'],
        confirmLabel: 'Revoke key', danger: true});
      if (!sure) return;
      try {
        await post('/admin/v1/keys/revoke', {id: key.id});
      } catch (e) {
        replace(status, errorLine(e, 'Revoke'));
      }
      load();
    }}, 'Revoke');
  }

  form.addEventListener('submit', busy(submit, status, async () => {
    expires.min = todayUtc();
    const spec = {name: name.value.trim(), role: role.value};
    if (owner.value.trim()) spec.owner = owner.value.trim();
    const allowed = modelList(models.value);
    if (allowed.length) spec.models = allowed;
    if (expires.value) spec.expires_at = expires.value;
    Object.assign(spec, limitValues(quotas, false));
    const created = await post('/admin/v1/keys', spec);
    form.reset();
    replace(once, shownOnce('Key “' + created.name + '” created', 'API key', created.key, () => replace(once)));
    load();
  }));

  area.append(h('h2', {}, 'API keys'), once, form, edited, detail, keys.element);
  load();
}

// Admins manage keys and users; auditors (keys.read) see the key inventory with no control
// that changes anything, and no users.
export function render(container, {principal}) {
  const keys = h('section', {class: 'area', id: 'keys-area'});
  container.append(keys);
  const readOnly = principal.role !== 'admin';
  keysSection(keys, readOnly);
  if (readOnly) return;
  const users = h('section', {class: 'area', id: 'users-area'});
  container.append(users);
  usersSection(users, principal);
}
