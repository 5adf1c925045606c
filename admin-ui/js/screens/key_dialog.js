// The modal dialog that the keys screen's forms (Edit key, Rotate key) open in: labelled by
// its `${name}-title` and described by its `${name}-help` element; Escape cancels (null), Tab
// stays inside (the browser's modal dialog), and focus returns to the button that opened it.

import {h} from '../dom.js';

// resolve: the caller's promise's; close(answer) removes the dialog and resolves with answer.
export function keyDialog(name, resolve) {
  const opener = document.activeElement;
  const dialog = h('dialog', {class: 'confirm ' + name, 'aria-labelledby': name + '-title',
                              'aria-describedby': name + '-help'});
  const close = (answer) => {
    dialog.close();
    dialog.remove();
    if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
    resolve(answer);
  };
  dialog.addEventListener('cancel', (e) => {
    e.preventDefault();
    close(null);
  });
  // Shows `form` with focus on `first`.
  const show = (form, first) => {
    dialog.append(form);
    document.body.append(dialog);
    dialog.showModal();
    first.focus();
  };
  return {dialog, close, show};
}
