// The Models and Policies screens: the import hint names the configured import roots; the
// model that serves shows with where it comes from, also on a first run whose store is empty
// (model.dir); the active policy reads in plain language; every stored version opens with its
// diff against the version before it and against the active one; a revert re-activates an older
// version after a confirmation showing the diff, and is audited. Leaves the policy's content as
// it found it (the revert restores it, as a new version).
import path from 'node:path';

import {adminSession, assert, check, openScreen, runSuite, screenshot, signedCopy, STORE_ID, WAIT_MS}
  from '../harness.mjs';

const SIZES = [{width: 1440, height: 900}, {width: 1024, height: 768}];

async function screenshots(page, name) {
  for (const size of SIZES) {
    await page.setViewportSize(size);
    await screenshot(page, name + '-' + size.width + 'x' + size.height);
  }
  await page.setViewportSize(SIZES[0]);
}

// A call with the page's session (and its CSRF token for a change).
async function api(page, method, url, body) {
  return page.evaluate(async ([m, u, b]) => {
    const headers = {'X-CSRF-Token': sessionStorage.getItem('kimi.console.csrf') || ''};
    if (b !== null) headers['Content-Type'] = 'application/json';
    const res = await fetch(u, {method: m, headers, body: b === null ? undefined : JSON.stringify(b)});
    return {status: res.status, body: await res.json().catch(() => null)};
  }, [method, url, body === undefined ? null : body]);
}

async function storeVersions(page) {
  return ((await api(page, 'GET', '/admin/v1/models')).body.models || []).filter((m) => m.model === STORE_ID);
}

await runSuite(async (page) => {
  await adminSession(page);
  await page.setViewportSize(SIZES[0]);

  await check('the import hint lists the configured import roots, not a fixed list', async () => {
    await openScreen(page, 'Models', '#screen-models');
    // The import card's explanation, found as the card is laid out whatever its ids.
    const hint = page.locator('#screen-models [aria-labelledby="import-title"] p.detail');
    await hint.waitFor({timeout: WAIT_MS});
    const text = await hint.textContent();
    const root = path.dirname(signedCopy);  // the suite's only model.import_roots entry
    assert(text.includes(root), 'the hint does not name the import root ' + root + ': ' + text);
    assert(!text.includes('/run/media'), 'the hint names a root that is not configured: ' + text);
  });

  await check('with no import roots configured the card says import is off and how to turn it on', async () => {
    // This daemon has a root; the screen is shown the same reply without one.
    await page.route('**/admin/v1/models', async (route) => {
      const response = await route.fetch();
      await route.fulfill({response, json: {...(await response.json()), import_roots: []}});
    });
    try {
      await openScreen(page, 'Overview', '#screen-overview');
      await openScreen(page, 'Models', '#screen-models');
      const hint = page.locator('#screen-models [aria-labelledby="import-title"] p.detail');
      await hint.waitFor({timeout: WAIT_MS});
      const text = await hint.textContent();
      assert(text.startsWith('Import is off') && text.includes('"import_roots": ["/media"]') && text.includes('restart'),
             'hint: ' + text);
      assert(await page.locator('#import-source').count() === 0, 'the import form is offered while import is off');
    } finally {
      await page.unroute('**/admin/v1/models');
    }
    await openScreen(page, 'Overview', '#screen-overview');
    await openScreen(page, 'Models', '#screen-models');
    await page.locator('#import-source').waitFor({timeout: WAIT_MS});
  });

  await check('the Models screen shows the model that serves and where it comes from', async () => {
    const versions = await storeVersions(page);
    const active = versions.find((v) => v.state === 'active');
    const summary = page.locator('#serving-summary');
    await summary.waitFor({timeout: WAIT_MS});
    const text = await summary.textContent();
    assert(text.startsWith('kimi-k3 is served from'), 'serving: ' + text);
    const next = await page.locator('#serving-next').textContent();
    if (active) {
      assert(text.includes('version ' + active.version + ' of ' + STORE_ID + ' from the model store'), 'serving: ' + text);
    } else {
      assert(text.includes('(model.dir in the configuration), outside the model store'), 'serving: ' + text);
      assert(/import a signed copy|Activating a store version/.test(next), 'what to do next: ' + next);
    }
    const page_text = await page.locator('#screen-models').textContent();
    assert(!page_text.includes('The model store is empty'), 'the screen calls the store empty while a model serves');
    if (versions.length === 0) await screenshots(page, 'models-first-run');
  });

  await check('with versions in the store the screen lists them beside what serves', async () => {
    if ((await storeVersions(page)).length === 0) {
      // A first run (this suite alone): one verified version, not activated.
      await page.getByLabel('Model id').fill(STORE_ID);
      await page.getByLabel('Source directory').fill(signedCopy);
      await page.getByRole('button', {name: 'Import and verify'}).click();
      await page.locator('#import-progress .ok', {hasText: 'Imported and verified'}).waitFor({timeout: WAIT_MS * 4});
    }
    await page.locator('#model-list tbody tr').first().waitFor({timeout: WAIT_MS});
    const next = await page.locator('#serving-next').textContent();
    assert(/Activating a store version|Activate, roll back or remove/.test(next), 'what to do next: ' + next);
    // At 1024 px the version table fits the page and no number (a size, a day, a time, a digest)
    // breaks over lines.
    await page.setViewportSize(SIZES[1]);
    const layout = await page.evaluate(() => ({
      sideways: document.documentElement.scrollWidth - window.innerWidth,
      broken: [...document.querySelectorAll('#model-list td .nowrap')]
          .filter((el) => el.getClientRects().length > 1).map((el) => el.textContent)}));
    assert(layout.sideways <= 0, 'the page scrolls sideways by ' + layout.sideways + ' px at 1024 px');
    assert(layout.broken.length === 0, 'values broken over lines: ' + layout.broken.join(', '));
    await screenshots(page, 'models-versions');
  });

  let before = null;  // the active policy when the suite starts
  await check('the active policy reads in plain language', async () => {
    before = (await api(page, 'GET', '/admin/v1/policies')).body;
    await openScreen(page, 'Policies', '#screen-policies');
    const summary = page.locator('#policy-summary');
    await summary.waitFor({timeout: WAIT_MS});
    const sections = await summary.locator('section h3').allTextContents();
    assert(sections.join('|') === 'This policy|What is stored, and for how long|What is redacted|' +
           'Who may use which models|Service-level targets', 'sections: ' + sections.join('|'));
    const stored = await summary.locator('[data-section="stored"]').textContent();
    const days = before.active.content_logging.retention_days;
    assert(stored.includes('kept ' + days + ' day'), 'retention not in: ' + stored);
    const access = await summary.locator('[data-section="access"]').textContent();
    for (const rule of before.active.access.rules) {
      const role = /^role:(.*)$/.exec(rule.subject);
      if (role) assert(access.includes('Role ' + role[1] + ':'), 'no line for ' + rule.subject + ': ' + access);
    }
    await screenshots(page, 'policies-summary');
  });

  let older = 0;
  let newer = 0;
  await check('a stored version opens with its diff against the one before and the active one', async () => {
    const days = before.active.content_logging.retention_days;
    const changed = {...before.active, content_logging: {...before.active.content_logging, retention_days: days + 1}};
    const submitted = await api(page, 'POST', '/admin/v1/policies', changed);
    assert(submitted.status === 201, 'submit: ' + JSON.stringify(submitted));
    older = before.active_version;
    newer = submitted.body.version;
    await openScreen(page, 'Overview', '#screen-overview');
    await openScreen(page, 'Policies', '#screen-policies');
    await page.locator('#policy-title', {hasText: 'version ' + newer}).waitFor({timeout: WAIT_MS});
    await page.getByRole('button', {name: 'View version ' + newer, exact: true}).click();
    const previous = (await page.locator('#policy-diff-previous').textContent()).split('\n');
    assert(previous.some((l) => /^- +"retention_days": /.test(l) && l.includes(String(days))) &&
           previous.some((l) => /^\+ +"retention_days": /.test(l) && l.includes(String(days + 1))),
           'diff against the version before:\n' + previous.join('\n'));
    assert((await page.locator('#policy-diff-active').textContent()) === 'No difference.', 'the active one differs');
    await page.getByRole('button', {name: 'View version ' + older, exact: true}).click();
    await page.locator('#policy-version-title', {hasText: 'Version ' + older}).waitFor({timeout: WAIT_MS});
    const against = (await page.locator('#policy-diff-active').textContent()).split('\n');
    assert(against.some((l) => /^- +"retention_days": /.test(l) && l.includes(String(days + 1))) &&
           against.some((l) => /^\+ +"retention_days": /.test(l) && l.includes(String(days))),
           'diff against the active version:\n' + against.join('\n'));
    await screenshots(page, 'policies-versions');
  });

  await check('revert: a confirmation shows the diff, the older version is active again and audited', async () => {
    await page.getByRole('button', {name: 'Revert to version ' + older}).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor({timeout: WAIT_MS});
    const diff = (await dialog.locator('#policy-diff').textContent()).split('\n');
    const changed = diff.filter((l) => l.startsWith('- ') || l.startsWith('+ '));
    assert(changed.length === 2 && changed.every((l) => l.includes('"retention_days"')), 'diff:\n' + diff.join('\n'));
    await screenshots(page, 'policies-revert-confirm');
    await dialog.getByRole('button', {name: 'Revert to version ' + older}).click();
    const done = page.locator('#policy-status .ok');
    await done.waitFor({timeout: WAIT_MS});
    const restored = /restored as version (\d+)/.exec(await done.textContent());
    assert(restored && Number(restored[1]) === newer + 1, 'status: ' + await done.textContent());
    await page.locator('#policy-title', {hasText: 'version ' + restored[1]}).waitFor({timeout: WAIT_MS});
    const now = (await api(page, 'GET', '/admin/v1/policies')).body;
    assert(JSON.stringify(now.active) === JSON.stringify(before.active), 'the active document is not the older one');
    const audit = (await api(page, 'GET', '/admin/v1/audit?action=policy.update&limit=1000')).body.records || [];
    const record = audit.find((r) => r.target === 'policy/' + restored[1]);
    assert(record, 'no policy.update record for policy/' + restored[1]);
    const detail = typeof record.detail === 'string' ? JSON.parse(record.detail) : record.detail;
    assert(detail.restores === older && detail.previous === newer, 'audit detail: ' + JSON.stringify(detail));
  });
});
