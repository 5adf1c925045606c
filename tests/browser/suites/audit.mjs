// The audit screen for auditors: newest first with both orders, key name and owner as filters
// and columns, partial match, the action picker, one-line details with the full detail and the
// stored (redacted) content, tokens and latencies in the record view, From/Until in UTC, and
// exports that hold what the filters select; as the admin and as an auditor made through the
// admin API. Leaves the policy as it found it (a new version with the same document).
import fs from 'node:fs';

import {adminSession, assert, base, changePassword, check, openScreen, runSuite, screenshot, signIn,
  WAIT_MS} from '../harness.mjs';

const OWNER = 'auditcarol';
const KEY_NAME = 'audit-suite-bot';
const AUDITOR = 'auditsuite';

// An admin API call from the page, with the session's CSRF token; returns {status, body}.
async function api(page, method, path, body) {
  return page.evaluate(async ([m, p, b]) => {
    const headers = {'X-CSRF-Token': sessionStorage.getItem('kimi.console.csrf') || ''};
    if (b !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(p, {method: m, headers, body: b === undefined ? undefined : JSON.stringify(b)});
    return {status: res.status, body: await res.json().catch(() => ({}))};
  }, [method, path, body]);
}

async function must(page, method, path, body) {
  const reply = await api(page, method, path, body);
  assert(reply.status >= 200 && reply.status < 300, method + ' ' + path + ': ' + reply.status + ' ' +
         JSON.stringify(reply.body));
  return reply.body;
}

// The result rows' cells (the table is replaced whole when a search answers).
async function rows(page) {
  return page.locator('#audit-results tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
}

// Searches with the form as it stands and waits until the table has rows and every row has
// the value `want` gives for each column index ({} : any rows); returns the rows' cells.
async function searchUntil(page, want = {}) {
  await page.getByRole('button', {name: 'Search'}).click();
  const handle = await page.waitForFunction((expected) => {
    const found = [...document.querySelectorAll('#audit-results tbody tr')]
        .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent));
    const fits = (cells) => Object.entries(expected).every(([col, value]) => cells[Number(col)] === value);
    return found.length > 0 && found.every(fits) ? found : null;
  }, want, {timeout: WAIT_MS});
  return handle.jsonValue();
}

// Column indexes of the results table (screens/audit.js COLUMNS).
const COL = {seq: 0, time: 1, actor: 2, action: 4, requestId: 8, keyName: 9, owner: 10, tokens: 11, ttft: 12,
             total: 13, detail: 14};

await runSuite(async (page, context) => {
  let chatRequestId = '';

  await check('set-up: a key owned by a user makes a chat request while the policy stores content', async () => {
    await adminSession(page);
    const users = await must(page, 'GET', '/admin/v1/users');
    if (!(users.users || []).some((u) => u.username === OWNER)) {
      await must(page, 'POST', '/admin/v1/users', {username: OWNER, role: 'user'});
    }
    const {key} = await must(page, 'POST', '/admin/v1/keys', {name: KEY_NAME, role: 'user', owner: OWNER});
    const models = await (await fetch(base + '/v1/models', {headers: {Authorization: 'Bearer ' + key}})).json();
    const model = models.data[0].id;
    const before = (await must(page, 'GET', '/admin/v1/policies')).active;
    const keeping = {...before, name: 'audit-suite-keeps-content',
                     content_logging: {...before.content_logging, store_prompts: true, store_completions: true}};
    await must(page, 'POST', '/admin/v1/policies', keeping);
    try {
      const res = await fetch(base + '/v1/chat/completions', {
        method: 'POST', headers: {'Authorization': 'Bearer ' + key, 'Content-Type': 'application/json'},
        body: JSON.stringify({model, max_tokens: 4, temperature: 0,
                              messages: [{role: 'user', content: 'write to carol@example.com'}]})});
      assert(res.status === 200, 'chat: ' + res.status);
      chatRequestId = res.headers.get('x-request-id') || '';
    } finally {
      await must(page, 'POST', '/admin/v1/policies', before);  // the document every other suite expects
    }
    assert(chatRequestId !== '', 'the chat reply has no request id');
  });

  await check('the audit list is newest first, and oldest first on request', async () => {
    await page.setViewportSize({width: 1440, height: 900});
    await openScreen(page, 'Audit', '#screen-audit');
    await page.locator('#audit-results tbody tr').first().waitFor({timeout: WAIT_MS});
    const newest = (await rows(page)).map((cells) => Number(cells[COL.seq]));
    assert(newest.length > 2 && newest[0] > newest[newest.length - 1], 'not newest first: ' + newest.slice(0, 5));
    assert(newest.every((s, i) => i === 0 || s < newest[i - 1]), 'not in descending order: ' + newest.join(','));
    await page.getByLabel('Order').selectOption('oldest');  // searches at once
    await page.waitForFunction(() => document.querySelector('#audit-results tbody td')?.textContent === '0',
                               null, {timeout: WAIT_MS});
    await screenshot(page, 'oldest-first-1440');
    await page.getByLabel('Order').selectOption('newest');
    await page.waitForFunction(() => document.querySelector('#audit-results tbody td')?.textContent !== '0',
                               null, {timeout: WAIT_MS});
  });

  await check('a key name filter lists that key\'s records with its name and owner as columns', async () => {
    await page.getByLabel('Key name').fill(KEY_NAME);
    const found = await searchUntil(page, {[COL.keyName]: KEY_NAME});
    assert(found.every((cells) => cells[COL.owner] === OWNER), 'owner column: ' + found.map((c) => c[COL.owner]));
    assert(found.some((cells) => cells[COL.requestId] === chatRequestId), 'the chat request is not listed');
    const chat = found.find((cells) => cells[COL.requestId] === chatRequestId);
    assert(/^\d[\d,]* \/ \d[\d,]*$/.test(chat[COL.tokens]), 'tokens: ' + chat[COL.tokens]);
    assert(/ ms$/.test(chat[COL.ttft]) && / ms$/.test(chat[COL.total]), 'latencies: ' + chat[COL.ttft] + ' ' + chat[COL.total]);
    await page.getByLabel('Key name').fill('');
    await page.getByLabel('Owner').fill(OWNER);
    await searchUntil(page, {[COL.owner]: OWNER});
    await page.getByLabel('Owner').fill('');
  });

  await check('a partial match in any case finds the key by part of its name', async () => {
    await page.getByLabel('Contains').fill('SUITE-B');
    await searchUntil(page, {[COL.keyName]: KEY_NAME});
    await page.getByLabel('Contains').fill('');
  });

  await check('the action picker offers the actions in the log; a policy change is one line', async () => {
    const offered = await page.locator('#audit-action option').allTextContents();
    assert(offered.includes('policy.update') && offered.includes('http.chat_completions'), 'actions: ' + offered);
    await page.getByLabel('Action').selectOption('policy.update');
    const found = await searchUntil(page, {[COL.action]: 'policy.update'});
    assert(found.every((cells) => cells[COL.detail].length <= 120 && !cells[COL.detail].includes('\n')),
           'detail: ' + found[0][COL.detail]);
    const heights = await page.locator('#audit-results tbody tr').evaluateAll((trs) => trs.map((tr) => tr.offsetHeight));
    const line = await page.locator('#audit-results tbody td').first().evaluate((td) => parseFloat(getComputedStyle(td).lineHeight) || 20);
    assert(heights.every((px) => px < 5 * line), 'row heights ' + heights.join(',') + ' px, line ' + line + ' px');
    await screenshot(page, 'policy-rows-1440');
    await page.locator('#audit-results tbody tr').first().locator('button.link').click();
    const full = await page.locator('#audit-detail-full').textContent({timeout: WAIT_MS});
    assert(full.includes('\n  "diff": ['), 'the full detail is not indented JSON: ' + full.slice(0, 120));
    await page.getByLabel('Action').selectOption('');
  });

  await check('the record view shows the stored (redacted) content, tokens, TTFT and total latency', async () => {
    await page.getByLabel('Request ID', {exact: true}).fill(chatRequestId);
    await searchUntil(page, {[COL.keyName]: KEY_NAME});
    const row = page.locator('#audit-results tbody tr', {hasText: chatRequestId}).first();
    await row.locator('button.link').click();
    const record = page.locator('#audit-record');
    await record.waitFor({timeout: WAIT_MS});
    const prompt = await page.locator('#audit-content-prompt').textContent({timeout: WAIT_MS});
    assert(prompt.includes('[REDACTED:EMAIL]') && !prompt.includes('carol@example.com'), 'prompt: ' + prompt);
    const text = await record.textContent();
    for (const term of ['time to first token', 'total latency', 'tokens (prompt / completion)', 'key_name', OWNER]) {
      assert(text.includes(term), 'the record view lacks ' + term);
    }
    await screenshot(page, 'record-1440');
    await page.setViewportSize({width: 1024, height: 768});
    await screenshot(page, 'record-1024');
    await page.getByLabel('Request ID', {exact: true}).fill('');
  });

  await check('at 1024 px numbers and times stay on one line', async () => {
    await openScreen(page, 'Overview', '#screen-overview');  // the list alone, no record open
    await openScreen(page, 'Audit', '#screen-audit');
    await page.getByLabel('Key name').fill(KEY_NAME);
    await searchUntil(page, {[COL.keyName]: KEY_NAME});
    // A cell's content on two lines or more is at least twice its font size tall.
    const wrapped = await page.locator('#audit-results td.num, #audit-results td.time').evaluateAll((tds) =>
      tds.filter((td) => {
        const range = document.createRange();
        range.selectNodeContents(td);
        return range.getBoundingClientRect().height > 1.9 * parseFloat(getComputedStyle(td).fontSize);
      }).map((td) => td.textContent));
    assert(wrapped.length === 0, 'wrapped cells: ' + wrapped.join(' | '));
    await screenshot(page, 'list-1024');
    await page.setViewportSize({width: 1440, height: 900});
    await screenshot(page, 'list-1440');
  });

  await check('the exports hold only what the filters select', async () => {
    const [download] = await Promise.all([page.waitForEvent('download', {timeout: WAIT_MS}),
                                          page.getByRole('button', {name: 'Export CSV'}).click()]);
    const lines = fs.readFileSync(await download.path(), 'utf8').split('\n').filter((l) => l.startsWith('record,'));
    const listed = (await rows(page)).length;
    assert(lines.length === listed, 'CSV records ' + lines.length + ', listed ' + listed);
    const [bundle] = await Promise.all([page.waitForEvent('download', {timeout: WAIT_MS}),
                                        page.getByRole('button', {name: 'Export JSONL'}).click()]);
    const records = fs.readFileSync(await bundle.path(), 'utf8').split('\n').filter((l) => l !== '')
        .map((l) => JSON.parse(l)).filter((o) => o.type === 'record');
    assert(records.length === listed, 'bundle records ' + records.length + ', listed ' + listed);
    const keyIds = new Set(records.map((r) => r.actor));
    assert(keyIds.size === 1, 'the bundle holds records of ' + [...keyIds].join(', '));
  });

  await check('an auditor made through the admin API searches by key name and owner and opens records', async () => {
    const made = await api(page, 'POST', '/admin/v1/users', {username: AUDITOR, role: 'auditor'});
    assert(made.status === 201, 'add auditor: ' + made.status + ' ' + JSON.stringify(made.body));
    await page.getByRole('button', {name: 'Sign out'}).click();
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
    await signIn(page, AUDITOR, made.body.one_time_password);
    await changePassword(page);
    await page.getByRole('heading', {name: 'Overview', level: 1}).waitFor({timeout: WAIT_MS});
    await openScreen(page, 'Audit', '#screen-audit');
    await page.getByLabel('Owner').fill(OWNER);
    const found = await searchUntil(page, {[COL.owner]: OWNER, [COL.keyName]: KEY_NAME});
    const offered = await page.locator('#audit-action option').allTextContents();
    assert(offered.includes('http.chat_completions'), 'the auditor gets no action list: ' + offered);
    await page.locator('#audit-results tbody tr').first().locator('button.link').click();
    await page.locator('#audit-record').waitFor({timeout: WAIT_MS});
    assert((await page.locator('#check-leaf').textContent()).startsWith('Verified'), 'the proof is not checked');
    const [download] = await Promise.all([page.waitForEvent('download', {timeout: WAIT_MS}),
                                          page.getByRole('button', {name: 'Export CSV'}).click()]);
    const lines = fs.readFileSync(await download.path(), 'utf8').split('\n').filter((l) => l.startsWith('record,'));
    assert(lines.length === found.length, 'auditor CSV ' + lines.length + ', listed ' + found.length);
    await screenshot(page, 'auditor-1440');
    await page.getByRole('button', {name: 'Sign out'}).click();
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
  });
  await check('From and Until are UTC whatever the browser\'s zone', async () => {
    // A second browser context in India's zone (UTC+05:30): a local reading of Until would
    // move it 5.5 hours back, before this daemon's first record.
    const zoned = await context.browser().newContext({viewport: {width: 1440, height: 900}, timezoneId: 'Asia/Kolkata'});
    const other = await zoned.newPage();
    const errors = [];
    other.on('pageerror', (e) => errors.push(e.message));
    try {
      await adminSession(other);
      await openScreen(other, 'Audit', '#screen-audit');
      await other.locator('#audit-results tbody tr').first().waitFor({timeout: WAIT_MS});
      const newest = (await rows(other))[0];
      const time = newest[COL.time].replace(' ', 'T').replace('Z', '');  // "2026-12-01T23:20:04"
      const until = new Date(Date.parse(time + 'Z') + 2000).toISOString().slice(0, 19);
      await other.getByLabel('Until (UTC)').fill(until);
      await other.getByLabel('From (UTC)').waitFor({timeout: WAIT_MS});
      const found = await searchUntil(other);
      assert(found.some((cells) => cells[COL.seq] === newest[COL.seq]), 'record ' + newest[COL.seq] + ' before ' +
             until + ' UTC is missing');
      assert(found.every((cells) => cells[COL.time].replace(' ', 'T') < until + 'Z'), 'a record after ' + until);
      assert(errors.length === 0, errors.join('\n'));
    } finally {
      await zoned.close();
    }
  });

});
