// The Edit dialog of an API key: its role, allowed models and quotas, changed with
// PATCH /admin/v1/keys/{id} from the key's next request on (its secret, name, owner and
// expiry stay). Only the fields that differ from the key are sent, so the one audit record
// of the edit lists exactly what changed.
// Keyboard as in confirmAction(): focus starts on the first field, Enter saves, Escape
// cancels, Tab stays inside (the browser's modal dialog), and focus returns to the button
// that opened it. A refused change keeps the dialog open with the reason, and the field the
// daemon names (the error's param) is marked invalid and focused.

import {patch} from '../api.js';
import {errorLine, field, h, replace} from '../dom.js';
import {keyDialog} from './key_dialog.js';
import {LIMITS, ROLES, limitInputs, limitValues, modelList, roleSelect} from './key_fields.js';

function sameList(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

// Resolves with the key as the daemon now has it, or null when nothing was saved.
export function editKeyDialog(key, servedModels) {
  return new Promise((resolve) => {
    const role = roleSelect('edit-key-role', ROLES, key.role);
    const models = h('input', {id: 'edit-key-models', value: (key.models || []).join(', '), placeholder: 'all models',
                               spellcheck: 'false'});
    const quotas = limitInputs('edit-key-', key);
    const byParam = {role, models, ...quotas};
    const status = h('div', {class: 'status'});
    const save = h('button', {type: 'submit', class: 'primary'}, 'Save changes');
    const {dialog, close, show} = keyDialog('edit-key', resolve);
    const served = servedModels.length ? 'served now: ' + servedModels.join(', ') : 'no model is served now';
    const form = h('form', {},
                   h('h2', {id: 'edit-key-title'}, 'Edit key “' + key.name + '”'),
                   h('p', {id: 'edit-key-help'}, 'Changes apply from the key’s next request. Its secret, name, owner ' +
                     'and expiry stay as they are. Empty quotas mean no limit.'),
                   h('div', {class: 'row'}, field('Role', role),
                     field('Models (comma-separated; empty: all)', models, served)),
                   h('div', {class: 'row'}, LIMITS.map((l) => field(l.label, quotas[l.name]))),
                   status,
                   h('div', {class: 'actions'},
                     h('button', {type: 'button', class: 'quiet', onclick: () => close(null)}, 'Cancel'), save),
                   h('p', {class: 'hint'}, 'Enter: save changes · Escape: cancel'));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      for (const input of Object.values(byParam)) input.removeAttribute('aria-invalid');
      const change = {};
      if (role.value !== key.role) change.role = role.value;
      const wanted = modelList(models.value);
      if (!sameList(wanted, key.models || [])) change.models = wanted;
      for (const [name, value] of Object.entries(limitValues(quotas, true))) {
        if (value !== (key[name] || 0)) change[name] = value;
      }
      if (Object.keys(change).length === 0) {
        replace(status, h('p', {class: 'detail', role: 'status'}, 'Nothing to save: no field differs from the key.'));
        return;
      }
      save.disabled = true;
      replace(status);
      try {
        close(await patch('/admin/v1/keys/' + encodeURIComponent(key.id), change));
      } catch (e) {
        replace(status, errorLine(e, 'Not saved'));
        const culprit = byParam[e.param];
        if (culprit) {
          culprit.setAttribute('aria-invalid', 'true');
          culprit.focus();
        }
      } finally {
        save.disabled = false;
      }
    });
    // Inputs submit the form on Enter by themselves; a select does not.
    dialog.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && e.target instanceof HTMLSelectElement) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    show(form, role);
  });
}
