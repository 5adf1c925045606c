// Policies: the active policy as the appliance reports it, and a new policy uploaded from a
// file or pasted (JSON), whose validation errors the appliance returns are shown as sent.
// Shown as not available when the appliance has no policy routes.

import {get, post} from '../api.js';
import {busy, errorLine, field, formatTime, h, replace, table} from '../dom.js';

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
      if (principal.role === 'admin' && !container.querySelector('#policy-upload')) container.append(uploadForm());
    } catch (e) {
      replace(current, errorLine(e, 'Policies'));
    }
  }

  function uploadForm() {
    const file = h('input', {id: 'policy-file', type: 'file', accept: 'application/json,.json'});
    const text = h('textarea', {id: 'policy-text', rows: 14, spellcheck: 'false'});
    const submit = h('button', {type: 'submit', class: 'primary'}, 'Validate and activate');
    const status = h('div', {class: 'status'});
    file.addEventListener('change', async () => {
      if (file.files[0]) text.value = await file.files[0].text();
    });
    const form = h('form', {id: 'policy-upload', class: 'card', 'aria-labelledby': 'policy-upload-title'},
                   h('h2', {id: 'policy-upload-title'}, 'New policy'),
                   field('From a file', file), field('Policy (JSON)', text),
                   h('p', {class: 'detail'}, 'The appliance validates it; an invalid policy changes nothing and ' +
                     'its errors are listed here. A valid one takes effect on the next request and is audited.'),
                   submit, status);
    form.addEventListener('submit', busy(submit, status, async () => {
      try {
        JSON.parse(text.value);
      } catch (e) {
        replace(status, h('p', {class: 'error', role: 'alert'}, 'Not JSON: ' + e.message));
        return;
      }
      await post('/admin/v1/policies', text.value);
      replace(status, h('p', {class: 'ok', role: 'status'}, 'Policy accepted and active.'));
      load();
    }));
    return form;
  }

  load();
}
