// What every browser suite of the console shares: the environment run_console_tests.py
// sets, PASS/FAIL checks, screenshots, sign-in, screen navigation, the page's accessibility
// problems, and runSuite, which opens Chromium, watches every request and page error, runs a
// suite and exits with its number of failures. Each suite is its own node process against the
// one daemon; suites run in order (console_test.mjs first, then suites/*.mjs by name), but
// each signs in on its own (adminSession), so any one of them can run alone.
//
// Environment: KIMI_CONSOLE_URL (http://127.0.0.1:PORT), KIMI_ADMIN_OTP (the bootstrap
// admin's one-time password), KIMI_CHROMIUM (the browser), KIMI_SCREENSHOT_DIR, KIMI_SUITE
// (the screenshots' name prefix), KIMI_IMPORT_SIGNED, KIMI_IMPORT_TAMPERED and
// KIMI_IMPORT_SIGNED_V2 (model copies under model.import_roots), KIMI_EXTRA_PUBLIC_KEY (a PEM
// public key the trust store lacks).
import {chromium} from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';

export const base = process.env.KIMI_CONSOLE_URL;
export const otp = process.env.KIMI_ADMIN_OTP;
export const shots = process.env.KIMI_SCREENSHOT_DIR;
const suite = process.env.KIMI_SUITE || 'console';
export const NEW_PASSWORD = 'console-test-password-1';
// The signed model's copies on the stand-in medium (model.import_roots), and the store id the
// daemon serves (model.store_id's default).
export const signedCopy = process.env.KIMI_IMPORT_SIGNED;
export const tamperedCopy = process.env.KIMI_IMPORT_TAMPERED;
export const STORE_ID = 'k3';
export const secondCopy = process.env.KIMI_IMPORT_SIGNED_V2;
export const extraKeyPem = process.env.KIMI_EXTRA_PUBLIC_KEY ? fs.readFileSync(process.env.KIMI_EXTRA_PUBLIC_KEY, 'utf8') : '';
// Generous bounds that only stop a hung page; nothing here measures time.
export const WAIT_MS = 15000;
// The screens, as the navigation names them, for the per-screen checks, with what shows once
// each has its first answers.
export const SCREENS = [['Overview', 'overview', ['#readiness']],
                 ['Models', 'models', ['#model-list table', '#trust-list table']],
                 ['Keys and users', 'keys', ['#key-list table', '#user-list table']],
                 ['Audit', 'audit', ['#audit-results table']],
                 ['Policies', 'policies', ['#policy-current h2']],
                 ['Playground', 'playground', ['#play-model option']]];

export async function openLoadedScreen(page, [link, id, ready]) {
  await openScreen(page, link, '#screen-' + id);
  for (const selector of ready) await page.locator(selector).first().waitFor({state: 'attached', timeout: WAIT_MS});
}

let failures = 0;
export async function check(name, body) {
  try {
    await body();
    console.log('PASS ' + name);
  } catch (e) {
    failures += 1;
    console.log('FAIL ' + name + '\n  ' + String(e.stack || e).split('\n').slice(0, 6).join('\n  '));
  }
}

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

export async function screenshot(page, name) {
  if (!shots) return;
  fs.mkdirSync(shots, {recursive: true});
  await page.screenshot({path: path.join(shots, suite + '-' + name + '.png'), fullPage: true});
}

export async function signIn(page, username, password) {
  await page.goto(base + '/');
  await page.getByLabel('User name').fill(username);
  await page.getByLabel('Password', {exact: true}).fill(password);
  await page.getByRole('button', {name: 'Sign in'}).click();
}

export async function changePassword(page) {
  await page.getByRole('heading', {name: 'Choose a new password'}).waitFor({timeout: WAIT_MS});
  await page.getByLabel('New password', {exact: true}).fill(NEW_PASSWORD);
  await page.getByLabel('New password again').fill(NEW_PASSWORD);
  await page.getByRole('button', {name: 'Change password'}).click();
}

// The key as the API sees it: 200 from /v1/models while valid, 401 once revoked; with the
// request id the daemon gave that request (its audit record carries it).
export async function apiCallWith(key) {
  const res = await fetch(base + '/v1/models', {headers: {Authorization: 'Bearer ' + key}});
  return {status: res.status, requestId: res.headers.get('x-request-id') || ''};
}

export async function apiStatusWith(key) {
  return (await apiCallWith(key)).status;
}

// Waits until the audit results table is non-empty and every row has `value` in cell
// `column` (the table is replaced as a whole when a search answers); returns the rows' cells.
export async function auditRowsWhere(page, column, value) {
  const handle = await page.waitForFunction(([col, want]) => {
    const rows = [...document.querySelectorAll('#audit-results tbody tr')]
        .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent));
    return rows.length > 0 && rows.every((cells) => cells[col] === want) ? rows : null;
  }, [column, value], {timeout: WAIT_MS});
  return handle.jsonValue();
}

// Polls /readyz until the model component is ready again (an activation swaps the engine's
// model); false if it is not within the bound.
export async function modelReady() {
  for (let tries = 0; tries < 240; tries += 1) {
    const res = await fetch(base + '/readyz');
    const body = await res.json().catch(() => ({}));
    if (body.components && body.components.model && body.components.model.ready) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

// The policy's confirmation shows the diff against the active version: `lines` must be in it
// and nothing else may be changed; then it is confirmed.
export async function confirmPolicy(page, lines) {
  const dialog = page.getByRole('dialog');
  await dialog.waitFor({timeout: WAIT_MS});
  // Trailing commas depend on the key order of the stored policy: not compared.
  const diff = (await dialog.locator('#policy-diff').textContent()).split('\n').map((l) => l.replace(/,$/, ''));
  for (const line of lines.map((l) => l.replace(/,$/, ''))) {
    assert(diff.includes(line), 'the diff lacks ' + line + ':\n' + diff.join('\n'));
  }
  const changed = diff.filter((l) => l.startsWith('- ') || l.startsWith('+ '));
  assert(changed.length === lines.length, 'the diff changes more:\n' + diff.join('\n'));
  await screenshot(page, 'policies-diff');
  await dialog.getByRole('button', {name: 'Activate policy'}).click();
}

export async function openScreen(page, link, id) {
  await page.getByRole('link', {name: link, exact: true}).click();
  const screen = page.locator(id);
  await screen.waitFor({timeout: WAIT_MS});
  return screen;
}

// The row of the model list with version `version` (its second cell).
export function versionRow(page, version) {
  return page.locator('#model-list tbody tr').filter({has: page.locator('td:nth-child(2)', {hasText: new RegExp('^' + version + '$')})});
}

// Opens the confirmation with `button`, checks that it says every one of `says`, and answers it
// from the keyboard: Enter confirms, Escape cancels. Returns the dialog's text.
export async function answerConfirmation(page, button, says, key, shot) {
  await button.click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor({timeout: WAIT_MS});
  const text = await dialog.textContent();
  for (const phrase of says) assert(text.includes(phrase), 'the confirmation lacks "' + phrase + '": ' + text);
  if (shot) await screenshot(page, shot);
  await page.keyboard.press(key);
  await dialog.waitFor({state: 'detached', timeout: WAIT_MS});
  return text;
}

// In the page: form controls without an accessible name, and text whose contrast with the
// background behind it is under WCAG AA (4.5:1; 3:1 for large text).
export function accessibilityProblems() {
  const problems = [];
  for (const el of document.querySelectorAll('input, select, textarea')) {
    if (el.type === 'hidden') continue;
    const named = (el.labels && el.labels.length > 0) || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
    if (!named) problems.push('no label: ' + (el.id || el.outerHTML.slice(0, 60)));
  }
  const rgb = (text) => (text.match(/[\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => {
    const lin = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  const background = (el) => {
    for (let at = el; at; at = at.parentElement) {
      const c = rgb(getComputedStyle(at).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  for (const el of document.querySelectorAll('body *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim() !== '');
    if (!own || el.closest('[hidden], dialog:not([open]), .skip') || el.getClientRects().length === 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || Number(style.opacity) < 1) continue;
    const fg = rgb(style.color).slice(0, 3);
    const [a, b] = [luminance(fg), luminance(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) problems.push('contrast ' + ratio.toFixed(2) + ': "' + el.textContent.trim().slice(0, 40) + '"');
  }
  return problems;
}

// Signs the bootstrap admin in wherever the run stands: with NEW_PASSWORD once an earlier
// suite changed it, else with the one-time password and the forced change. Ends on the
// overview.
export async function adminSession(page) {
  await signIn(page, 'admin', NEW_PASSWORD);
  const outcome = await Promise.race([
    page.getByRole('heading', {name: 'Overview', level: 1}).waitFor({timeout: WAIT_MS}).then(() => 'in'),
    page.getByRole('alert').waitFor({timeout: WAIT_MS}).then(() => 'refused')]);
  if (outcome === 'in') return;
  await signIn(page, 'admin', otp);
  await changePassword(page);
  await page.getByRole('heading', {name: 'Overview', level: 1}).waitFor({timeout: WAIT_MS});
}

// Opens Chromium at `viewport`, records requests to other origins, page errors and CSP
// violations, runs body(page, context), checks that none of those happened, and exits with
// the number of failed checks.
export async function runSuite(body, viewport = {width: 1280, height: 800}) {
  const browser = await chromium.launch({executablePath: process.env.KIMI_CHROMIUM || '/usr/bin/chromium',
                                         headless: true});
  const context = await browser.newContext({viewport});
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
    await body(page, context);
    await check('no request left the appliance and the page broke no rule', async () => {
      assert(foreign.length === 0, 'requests to other origins: ' + foreign.join(', '));
      assert(problems.length === 0, problems.join('\n'));
    });
  } finally {
    await browser.close();
  }
  process.exit(Math.min(failures, 50));
}
