// The overview's dashboards (issue 28): the service-level tables keep their numbers whole, the
// console's own polling and the sign-in page add nothing to the audit log, and the history
// charts come from the appliance (non-zero after a burst of requests, a range picker that
// changes the range, still there after a reload and a new sign-in).
import {adminSession, assert, base, check, modelReady, runSuite, screenshot, WAIT_MS} from '../harness.mjs';

// The history's points are 10 s apart: a burst shows within two of them and a screen refresh.
const HISTORY_WAIT_MS = 45000;
const POLLS = 4;

// Cells of the service-level tables whose text takes more than one line.
async function wrappedSloCells(page) {
  return page.evaluate(() => [...document.querySelectorAll('table.slo th, table.slo td')].filter((cell) => {
    const range = document.createRange();
    range.selectNodeContents(cell);
    const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
    return tops.size > 1;
  }).map((cell) => cell.textContent));
}

// Audit records since `sinceMs`, read with the page's session, less the reads of this check.
async function recordsSince(page, sinceMs) {
  const records = await page.evaluate(async (since) => {
    const res = await fetch('/admin/v1/audit?limit=1000&since=' + since);
    return (await res.json()).records;
  }, sinceMs);
  return records.filter((r) => r.action !== 'http.admin_audit_search');
}

// A few small requests through the console's session.
async function burst(page, count) {
  return page.evaluate(async (n) => {
    const headers = {'Content-Type': 'application/json', 'X-CSRF-Token': sessionStorage.getItem('kimi.console.csrf')};
    const model = (await (await fetch('/v1/models')).json()).data[0].id;
    const statuses = [];
    for (let i = 0; i < n; i += 1) {
      const body = {model, messages: [{role: 'user', content: 'Say hello ' + i}], max_tokens: 2};
      statuses.push((await fetch('/v1/chat/completions', {method: 'POST', headers, body: JSON.stringify(body)})).status);
    }
    return statuses;
  }, count);
}

// Waits until the per-model table counts at least `least` requests (the screen asks the
// appliance again every 10 s, the appliance samples every 10 s).
async function waitForHistoryRequests(page, least) {
  await page.waitForFunction((want) => [...document.querySelectorAll('#history-models tbody tr td:first-of-type')]
      .reduce((total, td) => total + Number(td.textContent.replace(/,/g, '')), 0) >= want, least,
  {timeout: HISTORY_WAIT_MS});
}

// The requests of the last hour in the appliance's history, read with the page's session.
async function requestsInLastHour(page) {
  return page.evaluate(async () => (await (await fetch('/admin/v1/metrics/history?range=1h')).json()).points
      .reduce((total, p) => total + p.requests, 0));
}

// The requests the history holds once the burst is in it (set by the burst's check).
let expected = 1;

await runSuite(async (page, context) => {
  await check('the service-level tables keep every number and label on one line at 1440 and 1024 px', async () => {
    await adminSession(page);
    await page.locator('#slo table.slo').first().waitFor({timeout: WAIT_MS});
    for (const [width, height] of [[1440, 900], [1024, 768]]) {
      await page.setViewportSize({width, height});
      const wrapped = await wrappedSloCells(page);
      assert(wrapped.length === 0, width + ' px: cells wrapped: ' + wrapped.join(' | '));
    }
    await page.setViewportSize({width: 1440, height: 900});
    await page.locator('#history figure.time-chart').first().waitFor({timeout: WAIT_MS});
    await screenshot(page, 'overview-1440-idle');
    await page.setViewportSize({width: 1024, height: 768});
    await screenshot(page, 'overview-1024-idle');
    await page.setViewportSize({width: 1440, height: 900});
  });

  await check('the overview\'s polling and the sign-in page write no audit record', async () => {
    const since = Date.now();
    let scrapes = 0;
    const counted = (res) => {
      if (new URL(res.url()).pathname === '/metrics') scrapes += 1;
    };
    page.on('response', counted);
    // Keep the console awake (the overview pauses polling after a while without input).
    const deadline = Date.now() + 60000;
    while (scrapes < POLLS + 1 && Date.now() < deadline) {
      await page.mouse.move(10 + scrapes, 10);
      await page.waitForTimeout(500);
    }
    page.off('response', counted);
    assert(scrapes > POLLS, 'the overview polled ' + scrapes + ' times');
    // The sign-in page, loaded by someone who has not signed in.
    const visitor = await context.browser().newContext();
    const signInPage = await visitor.newPage();
    for (let i = 0; i < 3; i += 1) {
      await signInPage.goto(base + '/');
      await signInPage.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
    }
    await visitor.close();
    const records = await recordsSince(page, since);
    assert(records.length === 0, 'records written: ' +
           records.map((r) => r.action + ' ' + r.outcome + ' ' + (r.actor || '')).join(', '));
  });

  await check('after a burst of requests the history shows them, per model, from the appliance', async () => {
    assert(await modelReady(), 'the model is not ready');
    const before = await requestsInLastHour(page);
    const statuses = await burst(page, 6);
    assert(statuses.every((s) => s === 200), 'burst answered ' + statuses.join(','));
    expected = before + 6;
    await waitForHistoryRequests(page, expected);
    const chart = page.locator('#history figure[data-chart="requests"]');
    assert(await chart.locator('polyline, circle').count() > 0, 'the requests chart draws nothing');
    const legend = await chart.locator('ul.legend').textContent();
    assert(/all models/.test(legend), 'legend: ' + legend);
    const axis = await chart.locator('svg text').allTextContents();
    assert(axis.includes('time (UTC)') && axis.some((t) => /^\d\d:\d\d$/.test(t)), 'time axis: ' + axis.join(' '));
    await screenshot(page, 'overview-1440-load');
    await page.setViewportSize({width: 1024, height: 768});
    await screenshot(page, 'overview-1024-load');
    await page.setViewportSize({width: 1440, height: 900});
  });

  await check('the range picker changes the range the charts cover', async () => {
    await page.getByRole('button', {name: '6 hours'}).click();
    await page.locator('#history[data-range="6h"]').waitFor({timeout: WAIT_MS});
    assert((await page.locator('#history-status').textContent()).includes('of 60 s'), 'not the 60 s points');
    assert(await page.getByRole('button', {name: '6 hours'}).getAttribute('aria-pressed') === 'true', 'not pressed');
    await page.getByRole('button', {name: '15 min'}).click();
    await page.locator('#history[data-range="15m"]').waitFor({timeout: WAIT_MS});
    assert((await page.locator('#history-status').textContent()).includes('of 10 s'), 'not the 10 s points');
  });

  await check('the history survives a reload and a new sign-in', async () => {
    await page.reload();
    await page.getByRole('heading', {name: 'Overview', level: 1}).waitFor({timeout: WAIT_MS});
    await waitForHistoryRequests(page, expected);
    await page.getByRole('button', {name: 'Sign out'}).click();
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
    await adminSession(page);
    await waitForHistoryRequests(page, expected);
  });
});
