// Keys and users: API keys (create with role, models and quotas, the secret shown once with a
// copy button, edit role, models and quotas, revoke; per key its usage this UTC day and month
// against its quotas) and console users (add with a one-time password shown once, disable).

import {get, patch, post} from '../api.js';
import {busy, confirmAction, errorLine, field, formatTime, h, replace, table} from '../dom.js';
import {editKeyDialog} from './key_edit.js';
import {LIMITS, ROLES, limitInputs, limitValues, modelList, roleSelect} from './key_fields.js';

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

const USER_ROLES = ROLES.filter((r) => r !== 'scrape');

// The one time a secret is on screen: a read-only field, a copy button, and a button that
// removes it for good.
function shownOnce(title, label, secret, onDismiss) {
  const input = h('input', {id: 'secret-once', readonly: true, value: secret, class: 'secret', spellcheck: 'false'});
  const copied = h('span', {class: 'detail', role: 'status'});
  const copy = h('button', {type: 'button', onclick: async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(secret);
      copied.textContent = 'Copied.';
    } catch {
      copied.textContent = 'Copy was refused by the browser; select the text and copy it.';
    }
  }}, 'Copy');
  return h('section', {class: 'card once', 'aria-labelledby': 'once-title'},
           h('h2', {id: 'once-title'}, title),
           h('p', {}, 'It is shown this once and cannot be shown again. Store it now.'),
           field(label, input), h('div', {class: 'actions'}, copy, copied,
                                  h('button', {type: 'button', class: 'primary', onclick: onDismiss}, 'Done')));
}

function keysSection(area) {
  const list = h('div', {id: 'key-list'});
  const once = h('div', {});
  const detail = h('div', {});
  const edited = h('div', {id: 'key-edited'});
  const name = h('input', {id: 'key-name', required: true});
  const role = roleSelect('key-role', ROLES);
  const owner = h('input', {id: 'key-owner'});
  const models = h('input', {id: 'key-models', placeholder: 'all models'});
  const expires = h('input', {id: 'key-expires', type: 'date'});
  const quotas = limitInputs('key-');
  const submit = h('button', {type: 'submit', class: 'primary'}, 'Create key');
  const status = h('div', {class: 'status'});
  const form = h('form', {class: 'card', 'aria-labelledby': 'key-form-title'},
                 h('h2', {id: 'key-form-title'}, 'New API key'),
                 h('div', {class: 'row'}, field('Name', name), field('Role', role), field('Owner', owner)),
                 h('div', {class: 'row'}, field('Models (comma-separated)', models), field('Expires', expires)),
                 h('div', {class: 'row'}, LIMITS.map((l) => field(l.label, quotas[l.name]))),
                 submit, status);

  async function load() {
    try {
      const keys = (await get('/admin/v1/keys')).data || [];
      replace(list, table(['Name', 'Id', 'Role', 'Owner', 'Models', 'Created', 'Last used', 'State', ''],
                          keys.map((k) => [k.name, h('code', {}, k.id), k.role, k.owner || '–',
                                           (k.models || []).join(', ') || 'all', formatTime(k.created_at),
                                           formatTime(k.last_used_at),
                                           k.revoked_at ? 'revoked ' + formatTime(k.revoked_at) : 'active',
                                           h('span', {class: 'actions'}, usageButton(k),
                                             k.revoked_at ? '' : editButton(k), k.revoked_at ? '' : revokeButton(k))]),
                          'No API keys.'));
    } catch (e) {
      replace(list, errorLine(e, 'API keys'));
    }
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

  area.append(h('h2', {}, 'API keys'), once, form, edited, detail, list);
  load();
}

function usersSection(area) {
  const list = h('div', {id: 'user-list'});
  const once = h('div', {});
  const username = h('input', {id: 'user-name', required: true, pattern: '[a-z0-9_][a-z0-9._\\-]{0,63}'});
  const role = roleSelect('user-role', USER_ROLES);
  const submit = h('button', {type: 'submit', class: 'primary'}, 'Add user');
  const status = h('div', {class: 'status'});
  const form = h('form', {class: 'card', 'aria-labelledby': 'user-form-title'},
                 h('h2', {id: 'user-form-title'}, 'New console user'),
                 h('div', {class: 'row'}, field('User name', username, 'lower-case letters, digits, . _ -'),
                   field('Role', role)), submit, status);

  async function load() {
    try {
      const users = (await get('/admin/v1/users')).data || [];
      replace(list, table(['User', 'Role', 'Last sign-in', 'State', ''],
                          users.map((u) => [u.username, u.role, formatTime(u.last_login_at),
                                            u.disabled ? 'disabled' : u.must_change_password ? 'password change due'
                                                : u.locked_until ? 'locked until ' + formatTime(u.locked_until)
                                                : 'active',
                                            u.disabled ? '' : disableButton(u)])));
    } catch (e) {
      replace(list, errorLine(e, 'Users'));
    }
  }

  function disableButton(user) {
    return h('button', {type: 'button', class: 'danger small', 'aria-label': 'Disable user ' + user.username,
                        onclick: async () => {
      const sure = await confirmAction({
        title: 'Disable user “' + user.username + '”?',
        body: ['The user can no longer sign in, every session it has open ends now, and every API key it owns is revoked.'],
        confirmLabel: 'Disable user', danger: true});
      if (!sure) return;
      try {
        await post('/admin/v1/users/disable', {username: user.username});
      } catch (e) {
        replace(status, errorLine(e, 'Disable'));
      }
      load();
    }}, 'Disable');
  }

  form.addEventListener('submit', busy(submit, status, async () => {
    const created = await post('/admin/v1/users', {username: username.value.trim(), role: role.value});
    form.reset();
    replace(once, shownOnce('User “' + created.username + '” added', 'One-time password', created.one_time_password,
                            () => replace(once)));
    load();
  }));

  area.append(h('h2', {}, 'Console users'), once, form, list);
  load();
}

export function render(container) {
  const keys = h('section', {class: 'area', id: 'keys-area'});
  const users = h('section', {class: 'area', id: 'users-area'});
  container.append(keys, users);
  keysSection(keys);
  usersSection(users);
}
