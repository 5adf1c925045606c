// Models: what the engine serves now and where it comes from (a store version, or the
// configured model.dir outside the store), the model store (versions, digests, signers,
// verification state, dates), import of a signed model from one of the configured import roots
// with its verification progress, and activate, roll back and remove, each behind a
// confirmation that says what will happen; and the trust store (trust.js).

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
  return h('code', {class: 'nowrap', title: digest || ''}, (digest || '').replace(/^sha256:/, '').slice(0, 12) || '–');
}

// A signer as the store names it ("key sha256:<64 hex> (<trust file>)", or a certificate's
// identity), short enough for the table: long hex runs cut to 12 digits and the trust file left
// out; the whole name is the title.
function signerCell(signer) {
  if (!signer) return '–';
  const short = signer.replace(/ \(.*\)$/, '').replace(/([0-9a-f]{12})[0-9a-f]{4,}/g, '$1…');
  return h('span', {title: signer}, short);
}

// A size in the table, kept on one line.
function figure(text) {
  return h('span', {class: 'nowrap'}, text);
}

// A date in the table: a narrow table may break it between its day and its time, never inside
// a number.
function dateFigure(iso) {
  return formatTime(iso).split(' ').map((word, i) => [i ? ' ' : '', figure(word)]);
}

// "a", "a or b", "a, b or c".
function listOf(items) {
  return items.length < 2 ? items.join('') : items.slice(0, -1).join(', ') + ' or ' + items[items.length - 1];
}

// What the engine serves (GET /admin/v1/models "serving"), where it comes from and how its
// versions are managed: a model.dir outside the store is served only until a store version of
// model.store_id is activated.
function servingLines(serving, models) {
  const title = h('h2', {id: 'serving-title'}, 'Serving now');
  if (!serving) {
    return [title, h('p', {class: 'detail'}, 'No model is serving. Import a signed version and activate it, or ' +
                     'set model.dir in the configuration (see Readiness on the overview for why nothing loads).')];
  }
  const fromStore = serving.origin === 'store';
  const installed = models.filter((m) => m.model === serving.store_id && m.state !== 'removed').length;
  const origin = fromStore
    ? 'version ' + serving.version + ' of ' + serving.store_id + ' from the model store'
    : 'the signed directory ' + serving.origin + ' (model.dir in the configuration), outside the model store';
  const next = fromStore
    ? 'Activate, roll back or remove versions of ' + serving.store_id + ' in the list below.'
    : installed > 0
      ? 'Activating a store version of ' + serving.store_id + ' below replaces it: an active store version ' +
        'always wins over model.dir.'
      : 'To manage versions, import a signed copy into the store below (model id ' + serving.store_id +
        ') and activate it: the store’s active version then takes over from model.dir.';
  return [title,
          h('p', {id: 'serving-summary'}, h('strong', {}, serving.model), ' is served from ', origin, '.'),
          h('dl', {class: 'facts'},
            h('dt', {}, 'Digest'), h('dd', {}, shortDigest(serving.digest)),
            h('dt', {}, 'Signer'), h('dd', {}, serving.signer || '–'),
            h('dt', {}, 'Serving since (UTC)'), h('dd', {}, formatTime(serving.since))),
          h('p', {class: 'detail', id: 'serving-next'}, next)];
}

export function render(container, {principal}) {
  const manage = principal.role === 'admin' || principal.role === 'operator';
  const serving = h('section', {class: 'card', id: 'model-serving', 'aria-labelledby': 'serving-title'});
  const list = h('div', {id: 'model-list'});
  const status = h('div', {class: 'status'});
  const importArea = h('div', {});
  let stopped = false;
  let importTimer = null;
  container.append(status, serving, list, importArea);
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
      replace(serving, ...servingLines(store.serving, models));
      replace(list, table(['Model', 'Version', 'Digest', 'State', 'Signer', 'Size', 'Imported (UTC)', 'Verified (UTC)', ''],
                          models.map((m) => [m.model, m.version || '–', shortDigest(m.digest), m.state,
                                             signerCell(m.signer), figure(formatBytes(m.bytes)), dateFigure(m.imported_at),
                                             dateFigure(m.verified_at), actions(m)]),
                          'No version is installed in the model store yet.'));
      if (manage && !importArea.hasChildNodes()) importArea.append(importForm(store.import_roots || [], store.serving ? store.serving.store_id : ''));
    } catch (e) {
      if (!stopped) replace(list, errorLine(e, 'The model store'));
    }
  }

  // The import form with the roots the daemon is configured with (model.import_roots); with
  // none, imports are refused, so the card says how to turn them on instead of offering a form.
  function importForm(roots, storeId) {
    if (roots.length === 0) {
      return h('section', {class: 'card', id: 'import-off', 'aria-labelledby': 'import-title'},
               h('h2', {id: 'import-title'}, 'Import a signed model'),
               h('p', {class: 'detail', id: 'import-hint'}, 'Import is off: model.import_roots is empty in the ' +
                 'configuration. To turn it on, list the directories where removable media are mounted, e.g. ' +
                 '"model": {"import_roots": ["/media"]}, and restart the appliance (README.md, "Importing models").'));
    }
    const model = h('input', {id: 'import-model', required: true, placeholder: storeId || 'k3'});
    const source = h('input', {id: 'import-source', required: true,
                               placeholder: roots[0].replace(/\/$/, '') + '/usb/kimi-k3'});
    const submit = h('button', {type: 'submit', class: 'primary'}, 'Import and verify');
    const progress = h('div', {id: 'import-progress'});
    const form = h('form', {class: 'card', 'aria-labelledby': 'import-title'},
                   h('h2', {id: 'import-title'}, 'Import a signed model'),
                   h('p', {class: 'detail', id: 'import-hint'}, 'From a mounted medium: a directory under ' +
                     listOf(roots) + ' (model.import_roots). The copy is verified against the trust store ' +
                     'before it is installed; nothing is activated.'),
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
