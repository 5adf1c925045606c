// Console users on the keys screen: add one (a one-time password shown once), search and page
// the list, each user's state badge (the daemon's: disabled > locked > password change due >
// active), and the acts its state allows: Unlock a locked user, Re-enable a disabled one,
// Reset password (a new one-time password shown once; its sessions end), Disable. Nobody is
// offered Disable or Reset password on their own account (the daemon refuses both too).

import {post} from '../api.js';
import {busy, confirmAction, errorLine, field, formatTime, h, replace, table} from '../dom.js';
import {ROLES, roleSelect, stateBadge} from './key_fields.js';
import {pagedList} from './list_pager.js';
import {shownOnce} from './shown_once.js';

const USER_ROLES = ROLES.filter((r) => r !== 'scrape');

export function usersSection(area, principal) {
  const once = h('div', {});
  const username = h('input', {id: 'user-name', required: true, pattern: '[a-z0-9_][a-z0-9._\\-]{0,63}'});
  const role = roleSelect('user-role', USER_ROLES);
  const submit = h('button', {type: 'submit', class: 'primary'}, 'Add user');
  const status = h('div', {class: 'status'});
  const form = h('form', {class: 'card', 'aria-labelledby': 'user-form-title'},
                 h('h2', {id: 'user-form-title'}, 'New console user'),
                 h('div', {class: 'row'}, field('User name', username, 'lower-case letters, digits, . _ -'),
                   field('Role', role)), submit, status);
  const users = pagedList({id: 'user', path: '/admin/v1/users', what: 'users', searchHint: 'user name',
                           draw: (rows) => table(['User', 'Role', 'Last sign-in (UTC)', 'State', ''],
                                                 rows.map((u) => [u.username, u.role, formatTime(u.last_login_at),
                                                                  stateCell(u), actions(u)]), 'No users match.')});

  function stateCell(u) {
    return h('span', {}, stateBadge(u.state),
             u.state === 'locked' ? ' until ' + formatTime(u.locked_until) : '');
  }

  function actions(u) {
    const self = u.username === principal.owner;
    return h('span', {class: 'actions'},
             u.state === 'locked' ? act(u, 'Unlock', '/admin/v1/users/unlock') : '',
             u.state === 'disabled' ? act(u, 'Re-enable', '/admin/v1/users/enable') : '',
             self ? '' : resetButton(u),
             self || u.state === 'disabled' ? '' : disableButton(u));
  }

  // Unlock and Re-enable: undo a refusal, no confirmation needed.
  function act(user, label, path) {
    return h('button', {type: 'button', class: 'small', 'aria-label': label + ' user ' + user.username,
                        onclick: async () => {
      try {
        await post(path, {username: user.username});
      } catch (e) {
        replace(status, errorLine(e, label));
      }
      users.load();
    }}, label);
  }

  function resetButton(user) {
    return h('button', {type: 'button', class: 'small', 'aria-label': 'Reset password of user ' + user.username,
                        onclick: async () => {
      const sure = await confirmAction({
        title: 'Reset the password of “' + user.username + '”?',
        body: ['A new one-time password replaces the current one and is shown once; the user must change it at ' +
               'the next sign-in. Every session the user has open ends now, and a lock is cleared.'],
        confirmLabel: 'Reset password', danger: true});
      if (!sure) return;
      try {
        const reset = await post('/admin/v1/users/reset-password', {username: user.username});
        replace(once, shownOnce('Password of “' + reset.username + '” reset', 'One-time password',
                                reset.one_time_password, () => replace(once)));
      } catch (e) {
        replace(status, errorLine(e, 'Reset password'));
      }
      users.load();
    }}, 'Reset password');
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
      users.load();
    }}, 'Disable');
  }

  form.addEventListener('submit', busy(submit, status, async () => {
    const created = await post('/admin/v1/users', {username: username.value.trim(), role: role.value});
    form.reset();
    replace(once, shownOnce('User “' + created.username + '” added', 'One-time password', created.one_time_password,
                            () => replace(once)));
    users.load();
  }));

  area.append(h('h2', {}, 'Console users'), once, form, users.element);
  users.load();
}
