// Browser tests of the web console: Debian's Chromium, headless, driven by playwright-core
// against the real daemon that run_console_tests.py started. Each check prints PASS or
// FAIL; the exit status is the number of failures (capped). Every screen visited is saved
// as a PNG under KIMI_SCREENSHOT_DIR.
//
// Environment: KIMI_CONSOLE_URL (http://127.0.0.1:PORT), KIMI_ADMIN_OTP (the bootstrap
// admin's one-time password), KIMI_CHROMIUM (the browser), KIMI_SCREENSHOT_DIR, KIMI_SUITE.
import {chromium} from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';

const base = process.env.KIMI_CONSOLE_URL;
const otp = process.env.KIMI_ADMIN_OTP;
const shots = process.env.KIMI_SCREENSHOT_DIR;
const suite = process.env.KIMI_SUITE || 'admin';
const NEW_PASSWORD = 'console-test-password-1';
// Generous bounds that only stop a hung page; nothing here measures time.
const WAIT_MS = 15000;

let failures = 0;
async function check(name, body) {
  try {
    await body();
    console.log('PASS ' + name);
  } catch (e) {
    failures += 1;
    console.log('FAIL ' + name + '\n  ' + String(e.stack || e).split('\n').slice(0, 6).join('\n  '));
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

async function screenshot(page, name) {
  if (!shots) return;
  fs.mkdirSync(shots, {recursive: true});
  await page.screenshot({path: path.join(shots, suite + '-' + name + '.png'), fullPage: true});
}

async function signIn(page, username, password) {
  await page.goto(base + '/');
  await page.getByLabel('User name').fill(username);
  await page.getByLabel('Password', {exact: true}).fill(password);
  await page.getByRole('button', {name: 'Sign in'}).click();
}

async function changePassword(page) {
  await page.getByRole('heading', {name: 'Choose a new password'}).waitFor({timeout: WAIT_MS});
  await page.getByLabel('New password', {exact: true}).fill(NEW_PASSWORD);
  await page.getByLabel('New password again').fill(NEW_PASSWORD);
  await page.getByRole('button', {name: 'Change password'}).click();
}

// The key as the API sees it: 200 from /v1/models while valid, 401 once revoked.
async function apiStatusWith(key) {
  const res = await fetch(base + '/v1/models', {headers: {Authorization: 'Bearer ' + key}});
  return res.status;
}

async function adminSuite(page) {
  await check('/ redirects to the sign-in page of the console', async () => {
    await page.goto(base + '/');
    assert(new URL(page.url()).pathname === '/console/', 'landed on ' + page.url());
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
    await screenshot(page, 'signin');
  });

  await check('a wrong password is refused on the form', async () => {
    await signIn(page, 'admin', 'not-the-password');
    await page.getByRole('alert').waitFor({timeout: WAIT_MS});
    assert(await page.getByRole('heading', {name: 'Sign in'}).isVisible(), 'left the sign-in form');
  });

  await check('sign in with the one-time password, then the forced password change', async () => {
    await signIn(page, 'admin', otp);
    await screenshot(page, 'password-change');
    await changePassword(page);
    await page.getByRole('heading', {name: 'Overview', level: 1}).waitFor({timeout: WAIT_MS});
  });

  await check('the overview shows the appliance ready, its model and live figures', async () => {
    await page.locator('#readiness', {hasText: /^Ready$/}).waitFor({timeout: WAIT_MS});
    const model = await page.locator('#active-model').textContent();
    assert(model.includes('kimi-k3'), 'active model: ' + model);
    // The second scrape gives the first rates, drawn as charts.
    await page.locator('#figures svg.chart').first().waitFor({timeout: WAIT_MS});
    await screenshot(page, 'overview');
  });

  await check('the playground streams one chat turn and shows how it finished', async () => {
    await page.getByRole('link', {name: 'Playground'}).click();
    await page.locator('#play-model option').first().waitFor({state: 'attached', timeout: WAIT_MS});
    await page.getByLabel('Message').fill('Say hello.');
    await page.getByLabel('Output tokens at most').fill('8');
    await page.getByRole('button', {name: 'Send'}).click();
    // The demo model's weights are random: only the shape of the outcome is checked.
    const finished = page.locator('#play-finished');
    await finished.waitFor({timeout: WAIT_MS * 4});
    assert(/^Finished: \w+, \d+ prompt and \d+ completion tokens\.$/.test(await finished.textContent()),
           'status: ' + await finished.textContent());
    await screenshot(page, 'playground');
  });

  let key = '';
  let auditorPassword = '';
  await check('create a key: its secret is shown once, with a copy button, and works', async () => {
    await page.getByRole('link', {name: 'Keys and users'}).click();
    await page.getByLabel('Name', {exact: true}).fill('browser-test');
    await page.locator('#key-role').selectOption('user');
    await page.getByRole('button', {name: 'Create key'}).click();
    const secret = page.locator('#secret-once');
    await secret.waitFor({timeout: WAIT_MS});
    key = await secret.inputValue();
    assert(/^sk-kimi-[0-9A-Za-z]{43}$/.test(key), 'key shown: ' + key);
    assert(await page.getByRole('button', {name: 'Copy'}).isVisible(), 'no copy button');
    await page.locator('#key-list').getByText('browser-test').waitFor({timeout: WAIT_MS});
    await screenshot(page, 'keys-created');
    assert((await apiStatusWith(key)) === 200, 'the new key is refused by the API');
    await page.getByRole('button', {name: 'Done'}).click();
    assert((await page.locator('#secret-once').count()) === 0, 'the secret is still on screen');
    assert(!(await page.content()).includes(key), 'the secret is still in the page');
  });

  await check('the secret is not shown again after a reload', async () => {
    await page.reload();
    await page.locator('#key-list').getByText('browser-test').waitFor({timeout: WAIT_MS});
    assert(!(await page.content()).includes(key), 'the secret came back');
  });

  await check('revoke the key after a confirmation; the API refuses it', async () => {
    await page.getByRole('button', {name: 'Revoke key browser-test'}).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor({timeout: WAIT_MS});
    assert((await dialog.textContent()).includes('refused'), 'the confirmation does not say what happens');
    await dialog.getByRole('button', {name: 'Revoke key'}).click();
    await page.locator('#key-list tr', {hasText: 'browser-test'}).getByText(/^revoked/).waitFor({timeout: WAIT_MS});
    assert((await apiStatusWith(key)) === 401, 'the revoked key still works');
    await screenshot(page, 'keys-revoked');
  });

  await check('screens whose routes this appliance lacks say so instead of failing', async () => {
    for (const [link, id] of [['Audit', '#screen-audit'], ['Policies', '#screen-policies'],
                              ['Models', '#screen-models']]) {
      await page.getByRole('link', {name: link, exact: true}).click();
      const screen = page.locator(id);
      await screen.waitFor({timeout: WAIT_MS});
      await screen.locator('.unavailable, table, .empty').first().waitFor({timeout: WAIT_MS});
      assert((await screen.locator('.error').count()) === 0, link + ' shows an error: ' + await screen.textContent());
      await screenshot(page, link.toLowerCase());
    }
  });

  await check('add an auditor: its one-time password is shown once', async () => {
    await page.getByRole('link', {name: 'Keys and users'}).click();
    await page.getByLabel('User name').fill('auditor1');
    await page.locator('#user-role').selectOption('auditor');
    await page.getByRole('button', {name: 'Add user'}).click();
    const secret = page.locator('#secret-once');
    await secret.waitFor({timeout: WAIT_MS});
    auditorPassword = await secret.inputValue();
    assert(auditorPassword.length >= 12, 'one-time password shown: ' + auditorPassword);
    await page.locator('#user-list').getByText('auditor1').waitFor({timeout: WAIT_MS});
    await page.getByRole('button', {name: 'Done'}).click();
  });

  await check('a session that ends returns to sign-in with a message', async () => {
    // The session ends on the server (as when it expires); the next call gets 401.
    await page.evaluate(async () => {
      await fetch('/admin/v1/session', {method: 'DELETE',
                                        headers: {'X-CSRF-Token': sessionStorage.getItem('kimi.console.csrf')}});
    });
    await page.getByRole('link', {name: 'Overview'}).click();
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
    assert((await page.locator('#notice').textContent()).includes('session has ended'), 'no expiry message');
  });

  await check('sign in with the new password and sign out', async () => {
    await signIn(page, 'admin', NEW_PASSWORD);
    await page.getByRole('heading', {name: 'Overview', level: 1}).waitFor({timeout: WAIT_MS});
    await page.getByRole('button', {name: 'Sign out'}).click();
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
    const status = await page.evaluate(async () => (await fetch('/admin/v1/session')).status);
    assert(status === 401, 'the session still answers ' + status);
  });

  await check('an auditor sees no keys screen, even by its address', async () => {
    await signIn(page, 'auditor1', auditorPassword);
    await changePassword(page);
    await page.getByRole('heading', {name: 'Overview', level: 1}).waitFor({timeout: WAIT_MS});
    const links = await page.locator('#nav a').allTextContents();
    assert(!links.includes('Keys and users'), 'auditor navigation: ' + links.join(', '));
    assert(links.includes('Audit'), 'auditor navigation lacks Audit: ' + links.join(', '));
    await page.goto(base + '/console/#/keys');
    await page.getByRole('heading', {name: 'Overview', level: 1}).waitFor({timeout: WAIT_MS});
    assert((await page.locator('#keys-area').count()) === 0, 'the keys screen rendered for an auditor');
    await screenshot(page, 'auditor-overview');
    await page.getByRole('button', {name: 'Sign out'}).click();
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
  });
}

const browser = await chromium.launch({executablePath: process.env.KIMI_CHROMIUM || '/usr/bin/chromium',
                                       headless: true});
const context = await browser.newContext({viewport: {width: 1280, height: 800}});
const page = await context.newPage();
const foreign = [];
const problems = [];
const origin = new URL(base).origin;
page.on('request', (req) => {
  const url = req.url();
  if (!url.startsWith(origin + '/') && !url.startsWith('blob:') && !url.startsWith('data:')) foreign.push(url);
});
page.on('pageerror', (e) => problems.push('page error: ' + e.message));
page.on('console', (msg) => {
  if (msg.type() === 'error' && /Content Security Policy|Refused to/.test(msg.text())) problems.push(msg.text());
});

try {
  await adminSuite(page);
  await check('no request left the appliance and the page broke no rule', async () => {
    assert(foreign.length === 0, 'requests to other origins: ' + foreign.join(', '));
    assert(problems.length === 0, problems.join('\n'));
  });
} finally {
  await browser.close();
}
process.exit(Math.min(failures, 50));
