// The Usage screen: two keys of two owners make requests, the screen charts them per key and
// per owner with axes, units and legends, the top keys table names each key, its owner, tokens,
// requests and share without wrapping a number; a budget set in the form and crossed shows as
// an alert on the screen and as a banner on the overview. The budget is removed at the end, so
// later suites see no alert.
import {accessibilityProblems, adminSession, assert, base, check, openScreen, runSuite, screenshot, WAIT_MS}
  from '../harness.mjs';

const OWNER = 'usage-owner';

// An admin API call with the console's session (its CSRF token).
async function api(page, method, path, body) {
  return page.evaluate(async ([m, p, b]) => {
    const headers = {'Content-Type': 'application/json', 'X-CSRF-Token': sessionStorage.getItem('kimi.console.csrf')};
    const res = await fetch(p, {method: m, headers, body: b === null ? undefined : JSON.stringify(b)});
    return {status: res.status, body: await res.json().catch(() => null)};
  }, [method, path, body === undefined ? null : body]);
}

async function chatWith(key, model) {
  const res = await fetch(base + '/v1/chat/completions', {
    method: 'POST', headers: {'Content-Type': 'application/json', Authorization: 'Bearer ' + key},
    body: JSON.stringify({model, messages: [{role: 'user', content: 'Say hello.'}], max_tokens: 3})});
  return res.status;
}

// Number cells whose text runs over more than one line.
async function wrappedNumbers(page) {
  return page.evaluate(() => [...document.querySelectorAll('#screen-usage td.num')].filter((td) => {
    const range = document.createRange();
    range.selectNodeContents(td);
    return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
  }).map((td) => td.textContent));
}

// Reloads the screen until the top keys table lists every one of `names` and the chart by key
// shows them, each on its own or among the "others" (the usage writer commits within a second,
// the requests of one key possibly in an earlier batch than the other's, and the screen's
// requests for the chart and for the table may fall on either side of a commit); the table's
// text then.
async function topKeysListing(page, names) {
  for (let tries = 0; tries < 40; tries += 1) {
    await openScreen(page, 'Usage', '#screen-usage');
    const table = page.locator('#usage-top-keys');
    await table.waitFor({state: 'attached', timeout: WAIT_MS});
    const text = await table.textContent();
    const chart = await page.locator('#usage-chart-keys').textContent();
    const charted = names.every((name) => chart.includes(name)) || /\d+ others/.test(chart);
    if (names.every((name) => text.includes(name)) && charted) return text;
    await page.getByRole('link', {name: 'Overview', exact: true}).click();
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('the top keys never listed ' + names.join(' and '));
}

await runSuite(async (page) => {
  await adminSession(page);
  let keys = {};

  await check('requests of two keys of two owners show per key and per owner with axes and legends', async () => {
    const user = await api(page, 'POST', '/admin/v1/users', {username: OWNER, role: 'user'});
    assert(user.status === 201 || user.status === 409, 'adding the owner answered ' + user.status);
    const first = await api(page, 'POST', '/admin/v1/keys', {name: 'usage-batch', role: 'user', owner: OWNER});
    const second = await api(page, 'POST', '/admin/v1/keys', {name: 'usage-chat', role: 'user'});
    assert(first.status === 201 && second.status === 201, 'keys: ' + first.status + ' ' + second.status);
    keys = {batch: first.body, chat: second.body};
    const model = (await (await fetch(base + '/v1/models', {headers: {Authorization: 'Bearer ' + keys.batch.key}}))
        .json()).data[0].id;
    for (const key of [keys.batch.key, keys.batch.key, keys.chat.key]) {
      assert((await chatWith(key, model)) === 200, 'a chat request failed');
    }
    const text = await topKeysListing(page, ['usage-batch', 'usage-chat']);
    assert(text.includes(OWNER) && text.includes(keys.batch.id), 'top keys: ' + text);
    // Keys of other suites may outrank these: then they are among the "others".
    const legend = await page.locator('#usage-chart-keys .usage-legend').textContent();
    assert((legend.includes('usage-batch (' + keys.batch.id + ')') || /\d+ others/.test(legend)) &&
           /\d tokens/.test(legend), 'key legend: ' + legend);
    const owners = await page.locator('#usage-chart-owners .usage-legend').textContent();
    assert((owners.includes(OWNER) || /\d+ others/.test(owners)) && owners.includes('admin'), 'owner legend: ' + owners);
    const bars = await page.locator('#usage-chart-keys svg rect').count();
    assert(bars >= 2, 'bars drawn: ' + bars);
    const axisText = await page.locator('#usage-chart-keys svg').textContent();
    assert(axisText.includes('tokens') && axisText.includes('day (UTC)'), 'axis titles: ' + axisText);
    const range = await page.locator('#usage-range').textContent();
    assert(/^UTC days \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d/.test(range), 'range line: ' + range);
    await page.setViewportSize({width: 1440, height: 900});
    await screenshot(page, '1440');
  });

  await check('the range picker asks for 7 days and the numbers stay on one line at 1024 px', async () => {
    await page.getByRole('button', {name: 'Last 7 days'}).click();
    await page.locator('#top-keys-title', {hasText: 'last 7 days'}).waitFor({timeout: WAIT_MS});
    const pressed = await page.getByRole('button', {name: 'Last 7 days'}).getAttribute('aria-pressed');
    assert(pressed === 'true', 'the 7-day button is not pressed');
    const dates = await page.locator('#usage-chart-keys svg text.tick').allTextContents();
    assert(dates.filter((t) => /^[A-Z][a-z]{2} \d+$/.test(t)).length === 7, 'x labels: ' + dates.join('|'));
    await page.setViewportSize({width: 1024, height: 768});
    await screenshot(page, '1024');
    const wrapped = await wrappedNumbers(page);
    assert(wrapped.length === 0, 'numbers wrapped: ' + wrapped.join(', '));
    await page.setViewportSize({width: 1440, height: 900});
  });

  await check('a budget set in the form and crossed alerts on the screen and on the overview', async () => {
    await page.locator('#budget-scope').selectOption('owner');
    await page.getByLabel('Key id or owner').fill(OWNER);
    await page.getByLabel('Tokens per UTC month').fill('10');
    await page.getByLabel('Alert at (% of the budget)').fill('50');
    await page.getByRole('button', {name: 'Save budget'}).click();
    const saved = await page.locator('#budget-status').textContent({timeout: WAIT_MS});
    await page.locator('#budget-status .badge').waitFor({timeout: WAIT_MS});
    const alert = page.locator('#usage-alerts-now');
    await alert.waitFor({timeout: WAIT_MS});
    const text = await alert.textContent();
    assert(text.includes(OWNER) && /over budget: [\d,]+ of 10/.test(text), 'alert: ' + text + ' / ' + saved);
    const listed = await page.locator('#budget-alerts').textContent();
    assert(listed.includes(OWNER), 'alert list: ' + listed);
    const top = await page.locator('#usage-top-owners').textContent();
    assert(top.includes('over budget'), 'top owners: ' + top);
    await screenshot(page, 'alert-1440');
    const problems = await page.evaluate(accessibilityProblems);
    assert(problems.length === 0, 'accessibility: ' + problems.join('; '));
    await page.setViewportSize({width: 1024, height: 768});
    await screenshot(page, 'alert-1024');
    const wrapped = await wrappedNumbers(page);
    assert(wrapped.length === 0, 'numbers wrapped: ' + wrapped.join(', '));
    await page.setViewportSize({width: 1440, height: 900});

    await page.getByRole('link', {name: 'Overview', exact: true}).click();
    const banner = page.locator('#budget-banner');
    await banner.waitFor({timeout: WAIT_MS});
    const said = await banner.textContent();
    assert(said.includes('owner ' + OWNER) && said.includes('See Usage'), 'banner: ' + said);
    await screenshot(page, 'overview-banner');
    await banner.getByRole('link', {name: 'See Usage'}).click();
    await page.locator('#screen-usage').waitFor({timeout: WAIT_MS});
  });

  await check('the alert was audited once and removing the budget clears the alert', async () => {
    const audit = await api(page, 'GET', '/admin/v1/audit?action=auth.budget_alert&limit=1000');
    assert(audit.status === 200, 'audit answered ' + audit.status);
    const mine = (audit.body.records || []).filter((r) => r.action === 'auth.budget_alert' && r.target === OWNER);
    assert(mine.length === 1, 'budget alert records: ' + mine.length);
    await page.locator('#budget-list button[data-remove="owner/' + OWNER + '"]').click();
    await page.getByRole('dialog').getByRole('button', {name: 'Remove'}).click();
    await page.locator('#budget-list').filter({hasNotText: OWNER}).first().waitFor({timeout: WAIT_MS});
    assert(await page.locator('#usage-alerts-now').count() === 0, 'the alert stayed after the budget went');
  });
});
