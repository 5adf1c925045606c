// The Rotate dialog of an API key: POST /admin/v1/keys/{id}/rotate with the grace period the
// operator chooses (0 to 168 hours), during which the old secret still works so that clients
// can move to the new one; the daemon refuses it afterwards. Keyboard as in key_edit.js.

import {post} from '../api.js';
import {errorLine, field, h, replace} from '../dom.js';
import {keyDialog} from './key_dialog.js';

export const MAX_GRACE_HOURS = 168;  // the daemon's bound: 7 days

// Resolves with the rotated key (its new secret in .key, shown once) or null when cancelled.
export function rotateKeyDialog(key) {
  return new Promise((resolve) => {
    const hours = h('input', {id: 'rotate-grace', type: 'number', min: 0, max: MAX_GRACE_HOURS, step: 'any',
                              value: '24', required: true});
    const status = h('div', {class: 'status'});
    const save = h('button', {type: 'submit', class: 'primary'}, 'Rotate key');
    const {close, show} = keyDialog('rotate-key', resolve);
    const form = h('form', {},
                   h('h2', {id: 'rotate-key-title'}, 'Rotate key “' + key.name + '”'),
                   h('p', {id: 'rotate-key-help'}, 'The key gets a new secret, shown once. Its id, name, owner, role, ' +
                     'models and quotas stay. The old secret keeps working for the grace period, then is refused.'),
                   field('Grace period (hours, 0–' + MAX_GRACE_HOURS + ')', hours,
                         '0: the old secret is refused at once'),
                   status,
                   h('div', {class: 'actions'},
                     h('button', {type: 'button', class: 'quiet', onclick: () => close(null)}, 'Cancel'), save),
                   h('p', {class: 'hint'}, 'Enter: rotate · Escape: cancel'));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const graceSeconds = Math.round(Number(hours.value) * 3600);
      save.disabled = true;
      replace(status);
      try {
        close(await post('/admin/v1/keys/' + encodeURIComponent(key.id) + '/rotate', {grace_seconds: graceSeconds}));
      } catch (e) {
        replace(status, errorLine(e, 'Not rotated'));
        hours.setAttribute('aria-invalid', 'true');
        hours.focus();
      } finally {
        save.disabled = false;
      }
    });
    show(form, hours);
  });
}
