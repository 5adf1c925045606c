// Keys and users: API keys (create, the secret shown once with a copy button, revoke) and
// console users (add with a one-time password shown once, disable), with their roles.

import {get, post} from '../api.js';
import {busy, confirmAction, errorLine, field, formatTime, h, replace, table} from '../dom.js';

const ROLES = ['user', 'operator', 'auditor', 'admin', 'scrape'];
const USER_ROLES = ROLES.filter((r) => r !== 'scrape');

function roleSelect(id, roles) {
  return h('select', {id}, roles.map((r) => h('option', {value: r}, r)));
}

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
  const name = h('input', {id: 'key-name', required: true});
  const role = roleSelect('key-role', ROLES);
  const owner = h('input', {id: 'key-owner'});
  const models = h('input', {id: 'key-models', placeholder: 'all models'});
  const expires = h('input', {id: 'key-expires', type: 'date'});
  const rpm = h('input', {id: 'key-rpm', type: 'number', min: 0, placeholder: 'no limit'});
  const submit = h('button', {type: 'submit', class: 'primary'}, 'Create key');
  const status = h('div', {class: 'status'});
  const form = h('form', {class: 'card', 'aria-labelledby': 'key-form-title'},
                 h('h2', {id: 'key-form-title'}, 'New API key'),
                 h('div', {class: 'row'}, field('Name', name), field('Role', role), field('Owner', owner)),
                 h('div', {class: 'row'}, field('Models (comma-separated)', models), field('Expires', expires),
                   field('Requests per minute', rpm)),
                 submit, status);

  async function load() {
    try {
      const keys = (await get('/admin/v1/keys')).data || [];
      replace(list, table(['Name', 'Id', 'Role', 'Owner', 'Models', 'Created', 'Last used', 'State', ''],
                          keys.map((k) => [k.name, h('code', {}, k.id), k.role, k.owner || '–',
                                           (k.models || []).join(', ') || 'all', formatTime(k.created_at),
                                           formatTime(k.last_used_at),
                                           k.revoked_at ? 'revoked ' + formatTime(k.revoked_at) : 'active',
                                           k.revoked_at ? '' : revokeButton(k)]),
                          'No API keys.'));
    } catch (e) {
      replace(list, errorLine(e, 'API keys'));
    }
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
    const modelList = models.value.split(',').map((m) => m.trim()).filter(Boolean);
    if (modelList.length) spec.models = modelList;
    if (expires.value) spec.expires_at = expires.value;
    if (rpm.value !== '') spec.requests_per_minute = Number(rpm.value);
    const created = await post('/admin/v1/keys', spec);
    form.reset();
    replace(once, shownOnce('Key “' + created.name + '” created', 'API key', created.key, () => replace(once)));
    load();
  }));

  area.append(h('h2', {}, 'API keys'), once, form, list);
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
        body: ['The user can no longer sign in, and every session it has open ends now.'],
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
