// The keys screen's lifecycle: user states with their precedence (a locked user reads
// "locked", not "password change due") and the acts each allows (Unlock, Re-enable, Reset
// password; no Disable on one's own account), key expiry (today is the earliest date and
// means the end of that UTC day; an Expires column with expired keys badged), search, key
// rotation with a grace period, the auditor's read-only key inventory, and the idle sign-out
// that clears the screen without a click (on the page's fake clock).
import {adminSession, apiStatusWith, assert, changePassword, check, openScreen, runSuite, screenshot, signIn,
        WAIT_MS} from '../harness.mjs';

// An admin API call made by the page with its session (and CSRF token for changes).
async function adminApi(page, method, path, body) {
  return page.evaluate(async ([m, p, b]) => {
    const headers = {'Content-Type': 'application/json'};
    if (m !== 'GET') headers['X-CSRF-Token'] = sessionStorage.getItem('kimi.console.csrf');
    const res = await fetch(p, {method: m, headers, body: b === undefined ? undefined : JSON.stringify(b)});
    return {status: res.status, body: await res.json().catch(() => ({}))};
  }, [method, path, body]);
}

function userRow(page, name) {
  return page.locator('#user-list tbody tr').filter({has: page.locator('td:first-child', {hasText: new RegExp('^' + name + '$')})});
}

function keyRow(page, name) {
  return page.locator('#key-list tbody tr').filter({has: page.locator('td:first-child', {hasText: new RegExp('^' + name + '$')})});
}

async function openKeys(page) {
  await openScreen(page, 'Keys and users', '#screen-keys');
  await page.locator('#key-list table, #key-list .empty').first().waitFor({timeout: WAIT_MS});
}

// Types a search and waits until the list shows that search's answer (list_pager.js marks it).
async function search(page, list, text) {
  await page.locator('#' + list + '-search').fill(text);
  await page.locator('#' + list + '-list[data-search="' + text + '"]').waitFor({timeout: WAIT_MS});
  // Left focused, the field made headless Chromium scroll the page by ~130 px on the next press
  // of a button below it, between mousedown and mouseup, so that the click was lost (seen on the
  // users list's Unlock; the cause in the browser is not known).
  await page.locator('#' + list + '-search').blur();
}

async function searchUsers(page, text) {
  await search(page, 'user', text);
  await userRow(page, text).waitFor({timeout: WAIT_MS});
}

const stamp = Date.now().toString(36);
const lockedUser = 'locked-' + stamp;
const auditorUser = 'inventory-' + stamp;
const shots = async (page, name) => {
  for (const [width, height] of [[1440, 900], [1024, 768]]) {
    await page.setViewportSize({width, height});
    await screenshot(page, name + '-' + width);
  }
  await page.setViewportSize({width: 1280, height: 800});
};

await runSuite(async (page) => {
  await page.clock.install();  // time runs as usual until the idle check moves it on
  await adminSession(page);

  await check('a locked user reads "locked" and Unlock returns it to "password change due"', async () => {
    const added = await adminApi(page, 'POST', '/admin/v1/users', {username: lockedUser, role: 'operator'});
    assert(added.status === 201, 'add user: ' + JSON.stringify(added));
    for (let i = 0; i < 5; i++) {
      await page.evaluate(async (u) => fetch('/admin/v1/session', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                                     body: JSON.stringify({username: u, password: 'wrong-password-1'})}),
                          lockedUser);
    }
    await openKeys(page);
    await searchUsers(page, lockedUser);
    const row = userRow(page, lockedUser);
    await row.locator('.badge', {hasText: /^locked$/}).waitFor({timeout: WAIT_MS});
    await screenshot(page, 'locked-user');
    await row.getByRole('button', {name: 'Unlock user ' + lockedUser}).click();
    await row.locator('.badge', {hasText: 'password change due'}).waitFor({timeout: WAIT_MS});
  });

  await check('Reset password shows a new one-time password once; Disable then Re-enable', async () => {
    const row = userRow(page, lockedUser);
    await row.getByRole('button', {name: 'Reset password of user ' + lockedUser}).click();
    await page.getByRole('dialog').getByRole('button', {name: 'Reset password'}).click();
    const secret = await page.locator('#secret-once').inputValue({timeout: WAIT_MS});
    assert(secret.length >= 12, 'one-time password shown: ' + secret);
    await page.getByRole('button', {name: 'Done'}).click();
    await row.getByRole('button', {name: 'Disable user ' + lockedUser}).click();
    await page.getByRole('dialog').getByRole('button', {name: 'Disable user'}).click();
    await row.locator('.badge', {hasText: /^disabled$/}).waitFor({timeout: WAIT_MS});
    await row.getByRole('button', {name: 'Re-enable user ' + lockedUser}).click();
    await row.locator('.badge', {hasText: 'password change due'}).waitFor({timeout: WAIT_MS});
  });

  await check('Disable and Reset password are not offered on your own account', async () => {
    await searchUsers(page, 'admin');
    const own = userRow(page, 'admin');
    assert((await own.getByRole('button', {name: /Disable/}).count()) === 0, 'Disable offered on the own account');
    assert((await own.getByRole('button', {name: /Reset password/}).count()) === 0, 'Reset offered on the own account');
  });

  await check('the expiry picker starts today (UTC), today is accepted, and the list has an Expires column', async () => {
    const today = new Date().toISOString().slice(0, 10);
    assert((await page.locator('#key-expires').getAttribute('min')) === today, 'the picker allows dates before today');
    const name = 'expires-today-' + stamp;
    await page.locator('#key-name').fill(name);
    await page.locator('#key-expires').fill(today);
    await page.getByRole('button', {name: 'Create key'}).click();
    await page.locator('#secret-once').waitFor({timeout: WAIT_MS});
    await page.getByRole('button', {name: 'Done'}).click();
    await search(page, 'key', name);
    const row = keyRow(page, name);
    await row.waitFor({timeout: WAIT_MS});
    const headers = await page.locator('#key-list th').allTextContents();
    const column = headers.indexOf('Expires (UTC)');
    assert(column >= 0, 'no Expires column: ' + headers.join(', '));
    const tomorrow = new Date(Date.parse(today + 'T00:00:00Z') + 86400000).toISOString().slice(0, 10);
    const cell = await row.locator('td').nth(column).textContent();
    assert(cell.startsWith(tomorrow + ' 00:00:00'), 'expires cell: ' + cell);
  });

  await check('an expired key is badged in the Expires column', async () => {
    const name = 'expiring-' + stamp;
    const soon = new Date(Date.now() + 1500).toISOString();
    const made = await adminApi(page, 'POST', '/admin/v1/keys', {name, role: 'user', expires_at: soon});
    assert(made.status === 201, 'create: ' + JSON.stringify(made));
    let badged = 0;
    for (let i = 0; i < 40 && !badged; i++) {  // bounded: until the daemon calls it expired
      await search(page, 'key', i % 2 ? name : name.toUpperCase());
      await keyRow(page, name).waitFor({timeout: WAIT_MS});
      badged = await keyRow(page, name).locator('.badge.state-expired').count();
      if (!badged) await page.waitForTimeout(500);
    }
    assert(badged >= 1, 'the expired key has no badge');
    await screenshot(page, 'expired-key');
  });

  await check('search narrows the key list (partial, any case)', async () => {
    await search(page, 'key', 'EXPIRES-TODAY-' + stamp.toUpperCase());
    await keyRow(page, 'expires-today-' + stamp).waitFor({timeout: WAIT_MS});
    const rows = await page.locator('#key-list tbody tr').count();
    assert(rows === 1, rows + ' rows for one key\'s name');
    const count = await page.locator('#key-count').textContent();
    assert(/of 1$/.test(count), 'count: ' + count);
  });

  await check('rotate a key: the new secret is shown once, old and new both work in the grace period', async () => {
    const name = 'rotated-' + stamp;
    const made = await adminApi(page, 'POST', '/admin/v1/keys', {name, role: 'user'});
    assert(made.status === 201, 'create: ' + JSON.stringify(made));
    await search(page, 'key', name);
    const row = keyRow(page, name);
    await row.getByRole('button', {name: 'Rotate key ' + name}).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/Grace period/).fill('1');
    await shots(page, 'rotate-dialog');
    await dialog.getByRole('button', {name: 'Rotate key'}).click();
    const fresh = await page.locator('#secret-once').inputValue({timeout: WAIT_MS});
    assert(fresh.startsWith('sk-kimi-') && fresh !== made.body.key, 'new secret: ' + fresh);
    assert((await apiStatusWith(made.body.key)) === 200, 'the old secret is refused during the grace period');
    assert((await apiStatusWith(fresh)) === 200, 'the new secret is refused');
    await page.getByRole('button', {name: 'Done'}).click();
    await row.getByText(/old secret until/).waitFor({timeout: WAIT_MS});
    await search(page, 'key', '');
    await shots(page, 'screen');
  });

  await check('an auditor sees the key inventory with no control that changes anything', async () => {
    const added = await adminApi(page, 'POST', '/admin/v1/users', {username: auditorUser, role: 'auditor'});
    assert(added.status === 201, 'add auditor: ' + JSON.stringify(added));
    await page.getByRole('button', {name: 'Sign out'}).click();
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
    await signIn(page, auditorUser, added.body.one_time_password);
    await changePassword(page);
    await page.getByRole('heading', {name: 'Overview', level: 1}).waitFor({timeout: WAIT_MS});
    await openKeys(page);
    await keyRow(page, 'rotated-' + stamp).waitFor({timeout: WAIT_MS});
    const controls = await page.locator('#keys-area button, #keys-area form').evaluateAll(
        (els) => els.filter((e) => !['Previous', 'Next'].includes(e.textContent)).map((e) => e.outerHTML.slice(0, 80)));
    assert(controls.length === 0, 'controls shown to an auditor: ' + controls.join(' | '));
    assert((await page.locator('#users-area').count()) === 0, 'the users part rendered for an auditor');
    await shots(page, 'auditor-inventory');
    await page.getByRole('button', {name: 'Sign out'}).click();
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
  });

  await check('idle past the session timeout: the screen clears and sign-in says why, without a click', async () => {
    await adminSession(page);
    await openKeys(page);
    const session = await adminApi(page, 'GET', '/admin/v1/session');
    const idleS = session.body.idle_timeout_s;
    assert(idleS > 0, 'the session reports no idle timeout: ' + JSON.stringify(session.body));
    // The daemon would end the session itself after idleS; end it now, then let the page's time pass.
    const ended = await adminApi(page, 'DELETE', '/admin/v1/session');
    assert(ended.status === 200, 'logout: ' + ended.status);
    await page.clock.fastForward((idleS + 1) * 1000);
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
    const notice = await page.locator('#notice').textContent();
    assert(/without activity/.test(notice), 'notice: ' + notice);
    assert((await page.locator('#key-list').count()) === 0, 'key data left on screen');
  });
});
