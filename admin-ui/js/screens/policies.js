// Policies: the active policy as the appliance reports it, the stored versions, and a new
// policy (the active one to edit, a file, or pasted JSON) whose validation errors the
// appliance returns are listed one per JSON pointer. Shown as not available when the
// appliance has no policy routes.

import {ApiError, get, post} from '../api.js';
import {busy, errorLine, field, formatTime, h, replace, table} from '../dom.js';

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

  async function load() {
    try {
      const policy = await get('/admin/v1/policies');
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
        container.append(uploadForm(JSON.stringify(policy.active, null, 2)));
      }
    } catch (e) {
      replace(current, errorLine(e, 'Policies'));
    }
  }

  function uploadForm(activeText) {
    const file = h('input', {id: 'policy-file', type: 'file', accept: 'application/json,.json'});
    const text = h('textarea', {id: 'policy-text', rows: 14, spellcheck: 'false'});
    text.value = activeText;
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
      try {
        JSON.parse(text.value);
      } catch (e) {
        replace(status, h('p', {class: 'error', role: 'alert'}, 'Not JSON: ' + e.message));
        return;
      }
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
