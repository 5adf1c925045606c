// The one time a secret is on screen (a new or rotated API key, a one-time password): a
// read-only field, a copy button, and a button that removes it for good.

import {field, h, replace} from '../dom.js';

export function shownOnce(title, label, secret, onDismiss) {
  const input = h('input', {id: 'secret-once', readonly: true, value: secret, class: 'secret', spellcheck: 'false'});
  const copied = h('span', {class: 'detail', role: 'status'});
  const copy = h('button', {type: 'button', onclick: async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(secret);
      replace(copied, 'Copied.');
    } catch {
      replace(copied, 'Copy was refused by the browser; select the text and copy it.');
    }
  }}, 'Copy');
  return h('section', {class: 'card once', 'aria-labelledby': 'once-title'},
           h('h2', {id: 'once-title'}, title),
           h('p', {}, 'It is shown this once and cannot be shown again. Store it now.'),
           field(label, input), h('div', {class: 'actions'}, copy, copied,
                                  h('button', {type: 'button', class: 'primary', onclick: onDismiss}, 'Done')));
}
