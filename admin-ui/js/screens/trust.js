// The trust store, on the models screen: the public keys and CA certificates models are
// verified with (GET /admin/v1/trust; admin, operator, auditor), and for an admin adding one
// (POST, PEM text) and removing one (DELETE), the removal behind a confirmation that says
// what happens to the active versions that entry verified.

import {del, get, post} from '../api.js';
import {busy, confirmAction, errorLine, field, h, replace, table} from '../dom.js';

function describeVersions(versions) {
  return versions.map((v) => v.model + ' version ' + v.version).join(', ');
}

// What removing `entry` does, for its confirmation.
function removalConsequences(entry) {
  const what = entry.kind === 'key' ? 'this key' : 'this CA';
  const lines = ['Models signed ' + (entry.kind === 'key' ? 'with ' : 'under ') + what + ' can no longer be imported, ' +
                 'activated or rolled back to. The file ' + entry.file + ' is deleted.'];
  if (entry.signs_active.length > 0) {
    lines.push(h('p', {class: 'error', id: 'trust-active-warning'},
                 'The active ' + describeVersions(entry.signs_active) + ' was verified with ' + what + '. It keeps ' +
                 'serving for now, but its next re-verification (an activation, a rollback, or the next start of the ' +
                 'appliance) fails: it is then marked failed and deactivated, and its model serves nothing until a ' +
                 'version signed by a trusted key is activated.'));
  }
  return lines;
}

// The section, and load(), which the models screen calls again after each change of the model
// store (an activation changes which versions an entry verified).
export function trustSection(principal) {
  const admin = principal.role === 'admin';
  const list = h('div', {id: 'trust-list'});
  const status = h('div', {class: 'status'});
  const area = h('section', {class: 'area', id: 'trust-area', 'aria-labelledby': 'trust-title'},
                 h('h2', {id: 'trust-title'}, 'Trust store'),
                 h('p', {class: 'detail'}, 'Models are verified against these public keys and CA certificates ' +
                   'before they are installed and each time they are activated.'), status, list);

  function removeButton(entry) {
    const label = (entry.kind === 'key' ? 'key ' : 'CA ') + entry.id.slice(0, 16);
    return h('button', {type: 'button', class: 'danger small', 'aria-label': 'Remove ' + label, onclick: async () => {
      const sure = await confirmAction({title: 'Remove ' + label + ' from the trust store?', body: removalConsequences(entry),
                                        confirmLabel: 'Remove from trust store', danger: true});
      if (!sure) return;
      try {
        await del('/admin/v1/trust/' + encodeURIComponent(entry.id));
        const result = area.querySelector('#trust-result');
        if (result) replace(result);
        replace(status, h('p', {class: 'ok', role: 'status'}, 'Removed ' + label + ' from the trust store.'));
      } catch (e) {
        replace(status, errorLine(e, 'Remove'));
      }
      load();
    }}, 'Remove');
  }

  async function load() {
    try {
      const store = await get('/admin/v1/trust');
      const changeable = admin && store.editable;
      replace(list, table(['Kind', 'Fingerprint (SHA-256)', 'Description', 'File', 'Verified active', ''],
                          store.entries.map((e) => [e.kind === 'key' ? 'key' : 'CA', h('code', {title: e.id}, e.id),
                                                    e.description, e.file, describeVersions(e.signs_active) || '–',
                                                    changeable ? removeButton(e) : '']),
                          'The trust store is empty: every model is refused.'));
      if (admin && !store.editable) {
        list.append(h('p', {class: 'detail'}, 'The trust store is the single file ' + store.path +
                      '; set model.trust_store to a directory to change it here.'));
      }
      if (changeable && !area.querySelector('#trust-form')) area.append(addForm());
    } catch (e) {
      replace(list, errorLine(e, 'The trust store'));
    }
  }

  function addForm() {
    const label = h('input', {id: 'trust-label', placeholder: 'vendor-2026'});
    const pem = h('textarea', {id: 'trust-pem', rows: 6, required: true, spellcheck: 'false',
                               placeholder: '-----BEGIN PUBLIC KEY-----'});
    const submit = h('button', {type: 'submit', class: 'primary'}, 'Add to trust store');
    const result = h('div', {id: 'trust-result'});
    const form = h('form', {class: 'card', id: 'trust-form', 'aria-labelledby': 'trust-form-title'},
                   h('h3', {id: 'trust-form-title'}, 'Trust a signing key or CA'),
                   field('Public key or CA certificate (PEM)', pem,
                         'One ECDSA P-256/P-384/P-521 PUBLIC KEY or one CERTIFICATE. Never a private key.'),
                   field('Label (names the file)', label), submit, result);
    form.addEventListener('submit', busy(submit, result, async () => {
      const added = await post('/admin/v1/trust', {pem: pem.value, label: label.value.trim()});
      form.reset();
      replace(result, h('p', {class: 'ok', role: 'status'}, 'Trusted ' + (added.kind === 'key' ? 'key ' : 'CA ') +
                        added.id + ' (' + added.description + ').'));
      load();
    }));
    return form;
  }

  return {area, load};
}
