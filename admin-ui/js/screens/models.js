// Models: the model store (versions, digests, signers, verification state, dates), import of
// a signed model from a mounted medium with its verification progress, and activate, roll
// back and remove, each behind a confirmation that says what will happen; and the trust store
// (trust.js).

import {del, get, post} from '../api.js';
import {busy, confirmAction, errorLine, field, formatBytes, formatTime, h, replace, table} from '../dom.js';
import {trustSection} from './trust.js';

const IMPORT_POLL_MS = 1000;

// A version as the store reports it (models/model_versions.cc: VersionToJson), or its number.
function versionNumber(v) {
  return v && typeof v === 'object' ? v.version : v;
}

function percent(done, total) {
  return total > 0 ? Math.floor((done * 100) / total) + '%' : '0%';
}

function shortDigest(digest) {
  return h('code', {title: digest || ''}, (digest || '').replace(/^sha256:/, '').slice(0, 12) || '–');
}

export function render(container, {principal}) {
  const manage = principal.role === 'admin' || principal.role === 'operator';
  const list = h('div', {id: 'model-list'});
  const status = h('div', {class: 'status'});
  const importArea = h('div', {});
  let stopped = false;
  let importTimer = null;
  container.append(status, list, importArea);
  // Users may list models but not the trust store (trust.read).
  const trust = principal.role === 'user' ? null : trustSection(principal);
  if (trust) container.append(trust.area);

  async function act(what, request) {
    replace(status);
    try {
      const result = await request();
      replace(status, h('p', {class: 'ok', role: 'status'}, what + ' done' +
                        (result && result.version ? ': version ' + versionNumber(result.version) : '') + '.'));
    } catch (e) {
      replace(status, errorLine(e, what));
    }
    load();
  }

  // An older version is refused as a downgrade unless forced: the operator is asked again.
  async function activate(m) {
    const request = {model: m.model, digest: m.digest};
    try {
      return await post('/admin/v1/models/activate', request);
    } catch (e) {
      if (!/downgrade|older/i.test(e.message)) throw e;
      const anyway = await confirmAction({
        title: 'Activate an older version?', body: [e.message, 'Activating it anyway serves an older version ' +
          'than the newest installed one; “Roll back” is the usual way back.'],
        confirmLabel: 'Activate older version', danger: true});
      if (!anyway) throw e;
      return post('/admin/v1/models/activate', {...request, force: true});
    }
  }

  function actions(m) {
    if (!manage) return '';
    const name = m.model + ' ' + (m.version || m.digest);
    const buttons = [];
    // States (docs/model-lifecycle.md): verified, active, retired, failed, removed.
    if (m.state === 'verified' || m.state === 'retired') {
      buttons.push(h('button', {type: 'button', class: 'small', onclick: async () => {
        const sure = await confirmAction({
          title: 'Activate ' + name + '?',
          body: ['The appliance re-verifies this version’s signature against the trust store, then serves new ' +
                 'requests of ' + m.model + ' with it. Requests already running finish on the current version.',
                 'The current version stays installed; “Roll back” makes it active again.'],
          confirmLabel: 'Activate'});
        if (sure) act('Activation', () => activate(m));
      }}, 'Activate'));
    }
    if (m.state === 'verified' || m.state === 'retired' || m.state === 'failed') {
      buttons.push(h('button', {type: 'button', class: 'small danger', onclick: async () => {
        const sure = await confirmAction({
          title: 'Remove ' + name + '?',
          body: ['Its files are deleted from the model store. It can come back only by importing it again.'],
          confirmLabel: 'Remove', danger: true});
        if (sure) act('Removal', () => del('/admin/v1/models', {query: {model: m.model, digest: m.digest}}));
      }}, 'Remove'));
    }
    if (m.state === 'active') {
      buttons.push(h('button', {type: 'button', class: 'small', onclick: async () => {
        const sure = await confirmAction({
          title: 'Roll back ' + m.model + '?',
          body: ['The previously active version of ' + m.model + ' is re-verified and serves new requests; ' +
                 'this version (' + (m.version || m.digest) + ') stays installed but inactive.'],
          confirmLabel: 'Roll back'});
        if (sure) act('Rollback', () => post('/admin/v1/models/rollback', {model: m.model}));
      }}, 'Roll back'));
    }
    return h('span', {class: 'actions'}, buttons);
  }

  async function load() {
    if (trust) trust.load();
    try {
      const store = await get('/admin/v1/models');
      if (stopped) return;
      const models = store.models || [];
      replace(list, table(['Model', 'Version', 'Digest', 'State', 'Signer', 'Size', 'Imported', 'Verified', ''],
                          models.map((m) => [m.model, m.version || '–', shortDigest(m.digest), m.state,
                                             m.signer || '–', formatBytes(m.bytes), formatTime(m.imported_at),
                                             formatTime(m.verified_at), actions(m)]),
                          'The model store is empty.'));
      if (manage && !importArea.hasChildNodes()) importArea.append(importForm());
    } catch (e) {
      if (!stopped) replace(list, errorLine(e, 'The model store'));
    }
  }

  function importForm() {
    const model = h('input', {id: 'import-model', required: true, placeholder: 'kimi-k3'});
    const source = h('input', {id: 'import-source', required: true, placeholder: '/media/usb/kimi-k3'});
    const submit = h('button', {type: 'submit', class: 'primary'}, 'Import and verify');
    const progress = h('div', {id: 'import-progress'});
    const form = h('form', {class: 'card', 'aria-labelledby': 'import-title'},
                   h('h2', {id: 'import-title'}, 'Import a signed model'),
                   h('p', {class: 'detail'}, 'From a mounted medium (a directory under /media, /mnt or /run/media). ' +
                     'The copy is verified against the trust store before it is installed; nothing is activated.'),
                   h('div', {class: 'row'}, field('Model id', model), field('Source directory', source)),
                   submit, progress);
    form.addEventListener('submit', busy(submit, progress, async () => {
      const job = await post('/admin/v1/models/import', {model: model.value.trim(), source: source.value.trim()});
      follow(job.job, progress);
    }));
    return form;
  }

  async function follow(jobId, area) {
    try {
      const job = await get('/admin/v1/models/import', {query: {job: jobId}});
      if (stopped) return;
      // The daemon's finished job reports phase "done" with every copied byte.
      const succeeded = job.state === 'succeeded';
      const total = job.bytes_total || 0;
      const done = job.bytes_done || 0;
      const bar = h('progress', {max: total || 1, value: done, 'aria-label': 'Import progress'});
      const eta = succeeded || !job.eta_seconds ? '' : ', ' + Math.ceil(job.eta_seconds) + ' s left';
      replace(area, bar, h('p', {class: 'detail', id: 'import-figures'}, (job.phase || job.state) +
                           ': ', percent(done, total), ', ', formatBytes(done), ' of ', formatBytes(total), ' at ',
                           formatBytes(job.bytes_per_second), '/s', eta));
      if (job.state === 'failed' || job.error) {
        // Nothing was installed: the refusal alone, not the figures of the phase it stopped in.
        replace(area, h('p', {class: 'error', role: 'alert'}, 'Refused: ' + (job.error || 'failed')));
        return;
      }
      if (succeeded) {
        area.append(h('p', {class: 'ok', role: 'status'}, 'Imported and verified' +
                      (job.version ? ': version ' + versionNumber(job.version) : '') +
                      '. Activate it above when ready.'));
        load();
        return;
      }
      importTimer = setTimeout(() => follow(jobId, area), IMPORT_POLL_MS);
    } catch (e) {
      if (!stopped) replace(area, errorLine(e, 'Import'));
    }
  }

  load();
  return () => {
    stopped = true;
    clearTimeout(importTimer);
  };
}
