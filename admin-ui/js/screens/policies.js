// Policies: the active policy in plain language (policy_summary.js) with its document, every
// stored version viewable with its diff against the version before it and against the active
// one, a revert (re-activate an older version after a confirmation showing what changes), and,
// for experts, a new policy as JSON (the active one to edit, a file, or pasted) whose validation
// errors the appliance returns are listed one per JSON pointer. Shown as not available when
// the appliance has no policy routes. Before anything is sent, the change against the active
// policy is shown as a line diff and must be confirmed.

import {ApiError, get, post} from '../api.js';
import {formatDiff, lineDiff} from '../diff.js';
import {busy, confirmAction, errorLine, field, formatTime, h, replace, table} from '../dom.js';
import {summarisePolicy} from '../policy_summary.js';

// Two documents as the line diff of their indented JSON; empty when they are the same.
function documentDiff(before, after) {
  return formatDiff(lineDiff(JSON.stringify(before, null, 2), JSON.stringify(after, null, 2)));
}

function summaryCard(doc) {
  return h('div', {id: 'policy-summary', class: 'policy-summary'},
           summarisePolicy(doc).map((section) =>
             h('section', {'aria-labelledby': 'summary-' + section.id, dataset: {section: section.id}},
               h('h3', {id: 'summary-' + section.id}, section.title),
               h('ul', {}, section.lines.map((line) => h('li', {}, line))))));
}

function diffBlock(id, diff) {
  return diff ? h('pre', {class: 'diff', id}, diff) : h('p', {class: 'detail', id}, 'No difference.');
}

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
  const viewer = h('section', {class: 'card', id: 'policy-version', 'aria-live': 'polite', hidden: true});
  const status = h('div', {class: 'status', id: 'policy-status'});
  container.append(status, current, viewer);

  let active = {version: 0, text: '', document: null};
  const documents = new Map();  // version -> document; stored versions never change
  let editor = null;

  async function documentOf(version) {
    if (version === active.version) return active.document;
    if (!documents.has(version)) documents.set(version, (await get('/admin/v1/policies/' + version)).document);
    return documents.get(version);
  }

  async function load() {
    try {
      const policy = await get('/admin/v1/policies');
      const previousText = active.text;
      active = {version: policy.active_version, text: JSON.stringify(policy.active, null, 2), document: policy.active};
      const versions = (policy.versions || []).slice().reverse();
      replace(current,
              h('section', {class: 'card', 'aria-labelledby': 'policy-title'},
                h('h2', {id: 'policy-title'}, 'Active policy: version ' + policy.active_version),
                summaryCard(policy.active),
                h('details', {}, h('summary', {}, 'The policy document (JSON)'),
                  h('pre', {class: 'json'}, active.text))),
              h('section', {class: 'card', 'aria-labelledby': 'policy-versions-title'},
                h('h2', {id: 'policy-versions-title'}, 'Versions'),
                table(['Version', 'Name', 'Installed (UTC)', 'By', 'Active', ''],
                      versions.map((v) => [String(v.version), v.name || '', formatTime(v.created_at), v.actor || '',
                                           v.active ? 'yes' : '',
                                           h('button', {type: 'button', class: 'small',
                                                        'aria-label': 'View version ' + v.version,
                                                        onclick: () => view(v.version)}, 'View')]),
                      'No version stored.')));
      if (principal.role === 'admin' && !editor) {
        editor = uploadForm();
        container.append(editor);
      } else if (editor && editor.text.value === previousText) {
        editor.text.value = active.text;
      }
    } catch (e) {
      replace(current, errorLine(e, 'Policies'));
    }
  }

  // Version `version`: its summary, its diff against the version before it and against the
  // active one, its document, and (admin, not the active one) a revert.
  async function view(version) {
    viewer.hidden = false;
    replace(viewer, h('p', {}, 'Loading version ' + version + '…'));
    try {
      const doc = await documentOf(version);
      const before = version > 1 ? await documentOf(version - 1) : null;
      const revert = principal.role === 'admin' && version !== active.version
        ? h('button', {type: 'button', class: 'primary', onclick: () => revertTo(version, doc)},
            'Revert to version ' + version)
        : null;
      replace(viewer,
              h('h2', {id: 'policy-version-title'}, 'Version ' + version + (version === active.version ? ' (active)' : '')),
              h('h3', {}, before ? 'Changes from version ' + (version - 1) : 'The first version'),
              before ? diffBlock('policy-diff-previous', documentDiff(before, doc)) : null,
              h('h3', {}, 'Against the active version ' + active.version),
              diffBlock('policy-diff-active', documentDiff(active.document, doc)),
              h('details', {}, h('summary', {}, 'Version ' + version + ' in plain language'), summaryCard(doc)),
              h('details', {}, h('summary', {}, 'Version ' + version + ' as JSON'),
                h('pre', {class: 'json'}, JSON.stringify(doc, null, 2))),
              h('div', {class: 'actions'}, revert,
                h('button', {type: 'button', class: 'quiet', onclick: () => { viewer.hidden = true; }}, 'Close')));
      viewer.setAttribute('aria-labelledby', 'policy-version-title');
    } catch (e) {
      replace(viewer, errorLine(e, 'Version ' + version));
    }
  }

  async function revertTo(version, doc) {
    const sure = await confirmAction({
      title: 'Revert to version ' + version + '?',
      body: ['What changes against the active version ' + active.version + ':',
             h('pre', {class: 'diff', id: 'policy-diff'}, documentDiff(active.document, doc) || 'Nothing.'),
             'Version ' + version + '’s document is installed as the next version and applies from the next ' +
             'request; the change is audited. Every version stays listed.'],
      confirmLabel: 'Revert to version ' + version});
    if (!sure) return;
    try {
      const restored = await post('/admin/v1/policies/' + version + '/activate');
      replace(status, h('p', {class: 'ok', role: 'status'}, 'Version ' + version + ' restored as version ' +
                        restored.version + ', active now.'));
      viewer.hidden = true;
      await load();
    } catch (e) {
      replace(status, errorLine(e, 'Revert'));
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
                   h('h2', {id: 'policy-upload-title'}, 'New policy (JSON, for experts)'),
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
    form.text = text;
    return form;
  }

  load();
}
