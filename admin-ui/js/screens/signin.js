// Sign-in, and the password change a user must make before anything else (the first login
// with a one-time password, or after an administrator reset).

import {get, post, setCsrfToken} from '../api.js';
import {busy, field, h, replace} from '../dom.js';

export function render(container, {onSignedIn}) {
  const username = h('input', {id: 'signin-username', name: 'username', autocomplete: 'username', required: true});
  const password = h('input', {id: 'signin-password', name: 'password', type: 'password',
                               autocomplete: 'current-password', required: true});
  const submit = h('button', {type: 'submit', class: 'primary'}, 'Sign in');
  const status = h('div', {class: 'status'});
  const form = h('form', {class: 'card narrow', 'aria-labelledby': 'signin-title'},
                 h('h1', {id: 'signin-title'}, 'Sign in'),
                 field('User name', username), field('Password', password), submit, status);
  form.addEventListener('submit', busy(submit, status, async () => {
    const session = await post('/admin/v1/session', {username: username.value, password: password.value},
                               {signIn: true});
    setCsrfToken(session.csrf_token);
    if (session.must_change_password) {
      renderPasswordChange(container, {onSignedIn, currentPassword: password.value});
    } else {
      onSignedIn(session);
    }
  }));
  replace(container, form);
  username.focus();
}

export function renderPasswordChange(container, {onSignedIn, currentPassword = ''}) {
  const current = h('input', {id: 'password-current', type: 'password', autocomplete: 'current-password',
                              required: true, value: currentPassword});
  const fresh = h('input', {id: 'password-new', type: 'password', autocomplete: 'new-password', required: true,
                            minlength: 12});
  const again = h('input', {id: 'password-again', type: 'password', autocomplete: 'new-password', required: true});
  const submit = h('button', {type: 'submit', class: 'primary'}, 'Change password');
  const status = h('div', {class: 'status'});
  const form = h('form', {class: 'card narrow', 'aria-labelledby': 'password-title'},
                 h('h1', {id: 'password-title'}, 'Choose a new password'),
                 h('p', {}, 'This account must change its password before it can do anything else.'),
                 currentPassword ? null : field('Current password', current),
                 field('New password', fresh, 'At least 12 characters, not containing the user name.'),
                 field('New password again', again), submit, status);
  form.addEventListener('submit', busy(submit, status, async () => {
    if (fresh.value !== again.value) {
      replace(status, h('p', {class: 'error', role: 'alert'}, 'The two new passwords differ.'));
      return;
    }
    // The change ends every session of the user, this one too: the reply's cookie and token are
    // the new session's.
    const changed = await post('/admin/v1/session/password', {old_password: current.value, new_password: fresh.value});
    setCsrfToken(changed.csrf_token);
    onSignedIn(await get('/admin/v1/session'));
  }));
  replace(container, form);
  (currentPassword ? fresh : current).focus();
}
