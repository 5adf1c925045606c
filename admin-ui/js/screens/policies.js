// Policies: the active policy as the appliance reports it, the stored versions, and a new
// policy (the active one to edit, a file, or pasted JSON) whose validation errors the
// appliance returns are listed one per JSON pointer. Shown as not available when the
// appliance has no policy routes. Before anything is sent, the change against the active policy
// is shown as a line diff and must be confirmed.

import {ApiError, get, post} from '../api.js';
import {formatDiff, lineDiff} from '../diff.js';
import {busy, confirmAction, errorLine, field, formatTime, h, replace, table} from '../dom.js';

// The appliance refuses a policy with one message, "the policy is invalid (N errors): /a: x;
// /b: y" (policy/policy.cc); each error starts with its JSON pointer or "(document)".
function validationErrors(message) {
  const colon = message.indexOf('): ');
  if (!message.startsWith('the policy is invalid') || colon < 0) return [];
  return message.slice(colon + 3).split(/; (?=\/|\(document\))/);
}

function refusal(error) {
  const errors = error instanceof ApiError && error.status === 400 ? validationErrors(error.message) : [];
  if (errors.length === 0) throw error;
  return h('div', {class: 'error', role: 'alert', id: 'policy-errors'},
           h('p', {}, 'The policy was refused; nothing changed. ' + errors.length + ' problem' +
             (errors.length === 1 ? '' : 's') + ':'),
           h('ul', {}, errors.map((e) => h('li', {}, e))));
}

export function render(container, {principal}) {
  const current = h('div', {id: 'policy-current'});
  container.append(current);

  let active = {version: 0, text: ''};

  async function load() {
    try {
      const policy = await get('/admin/v1/policies');
      active = {version: policy.active_version, text: JSON.stringify(policy.active, null, 2)};
      const versions = (policy.versions || []).slice().reverse();
      replace(current,
              h('section', {class: 'card', 'aria-labelledby': 'policy-title'},
                h('h2', {id: 'policy-title'}, 'Active policy: version ' + policy.active_version),
                h('pre', {class: 'json'}, JSON.stringify(policy.active, null, 2))),
              h('section', {class: 'card', 'aria-labelledby': 'policy-versions-title'},
                h('h2', {id: 'policy-versions-title'}, 'Versions'),
                table(['Version', 'Name', 'Installed', 'By', 'Active'],
                      versions.map((v) => [String(v.version), v.name || '', formatTime(v.created_at), v.actor || '',
                                           v.active ? 'yes' : '']),
                      'No version stored.')));
      if (principal.role === 'admin' && !container.querySelector('#policy-upload')) {
        container.append(uploadForm());
      }
    } catch (e) {
      replace(current, errorLine(e, 'Policies'));
    }
  }

  function uploadForm() {
    const file = h('input', {id: 'policy-file', type: 'file', accept: 'application/json,.json'});
    const text = h('textarea', {id: 'policy-text', rows: 14, spellcheck: 'false'});
    text.value = active.text;
    const submit = h('button', {type: 'submit', class: 'primary'}, 'Validate and activate');
    const status = h('div', {class: 'status'});
    file.addEventListener('change', async () => {
      if (file.files[0]) text.value = await file.files[0].text();
    });
    const form = h('form', {id: 'policy-upload', class: 'card', 'aria-labelledby': 'policy-upload-title'},
                   h('h2', {id: 'policy-upload-title'}, 'New policy'),
                   field('From a file', file), field('Policy (JSON)', text),
                   h('p', {class: 'detail'}, 'Starts as the active policy. The appliance validates it; an invalid policy changes nothing and ' +
                     'its errors are listed here. A valid one takes effect on the next request and is audited.'),
                   submit, status);
    form.addEventListener('submit', busy(submit, status, async () => {
      let submitted;
      try {
        submitted = JSON.parse(text.value);
      } catch (e) {
        replace(status, h('p', {class: 'error', role: 'alert'}, 'Not JSON: ' + e.message));
        return;
      }
      // Compared as the appliance stores it (parsed), so that layout alone is no change.
      const diff = formatDiff(lineDiff(active.text, JSON.stringify(submitted, null, 2)));
      if (!diff) {
        replace(status, h('p', {class: 'ok', role: 'status'}, 'No change from the active policy.'));
        return;
      }
      const sure = await confirmAction({
        title: 'Activate this policy?',
        body: ['The changes against the active version ' + active.version + ':',
               h('pre', {class: 'diff', id: 'policy-diff'}, diff),
               'If the appliance accepts it, it becomes the next version and applies from the next request; ' +
               'the change is audited. The earlier versions stay listed.'],
        confirmLabel: 'Activate policy'});
      if (!sure) return;
      let accepted;
      try {
        accepted = await post('/admin/v1/policies', text.value);
      } catch (e) {
        replace(status, refusal(e));
        return;
      }
      replace(status, h('p', {class: 'ok', role: 'status'}, 'Policy accepted: version ' + accepted.version + ' is active.'));
      load();
    }));
    return form;
  }

  load();
}
