// The console's shell: who is signed in, which screens that role may see, the hash router
// (#/overview, #/keys, ...), and the way back to sign-in when the session ends.
// Each screen module exports render(container, context) and may return a cleanup function
// that runs when the operator leaves it (to stop polling). Once the session's idle timeout
// (GET /admin/v1/session) passes without a request, the console clears the screen and
// returns to sign-in by itself (idle.js).

import {del, get, onActivity, onSessionExpired, setCsrfToken} from './api.js';
import {BUDGET_ROLES, budgetBanner} from './budget_banner.js';
import {h, replace} from './dom.js';
import {idleText, idleWatch} from './idle.js';
import * as audit from './screens/audit.js';
import * as keys from './screens/keys.js';
import * as models from './screens/models.js';
import * as overview from './screens/overview.js';
import * as playground from './screens/playground.js';
import * as policies from './screens/policies.js';
import * as signin from './screens/signin.js';
import * as usage from './screens/usage.js';

// Which roles see which screen; the API enforces the same (docs/security.md), this only
// keeps screens a role cannot use out of its way.
const SCREENS = [
  {id: 'overview', label: 'Overview', module: overview, roles: ['admin', 'operator', 'auditor', 'user']},
  {id: 'models', label: 'Models', module: models, roles: ['admin', 'operator', 'auditor']},
  // Auditors get the key inventory read-only (keys.read); the users part is admin-only.
  {id: 'keys', label: 'Keys and users', module: keys, roles: ['admin', 'auditor']},
  {id: 'audit', label: 'Audit', module: audit, roles: ['admin', 'auditor']},
  {id: 'usage', label: 'Usage', module: usage, roles: BUDGET_ROLES},
  {id: 'policies', label: 'Policies', module: policies, roles: ['admin', 'operator', 'auditor']},
  {id: 'playground', label: 'Playground', module: playground, roles: ['admin', 'operator', 'user']},
];

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
const signOutButton = document.getElementById('sign-out');
const notice = document.getElementById('notice');

let principal = null;
let cleanup = null;
let idle = null;

const browserClock = {now: () => Date.now(), setTimeout: (fn, ms) => setTimeout(fn, ms),
                      clearTimeout: (id) => clearTimeout(id)};

function stopIdleWatch() {
  if (idle) idle.stop();
  idle = null;
}

// The daemon ends a session idle for idle_timeout_s; the console then leaves nothing on screen.
function startIdleWatch(timeoutS) {
  stopIdleWatch();
  if (!(timeoutS > 0)) return;
  const ms = timeoutS * 1000;
  idle = idleWatch(ms, () => {
    idle = null;
    setCsrfToken(null);
    showSignIn('Signed out after ' + idleText(ms) + ' without activity. Sign in again.');
  }, browserClock);
}

function notify(message) {
  notice.hidden = !message;
  replace(notice, message || '');
}

function leaveScreen() {
  if (cleanup) cleanup();
  cleanup = null;
}

function allowedScreens() {
  return principal ? SCREENS.filter((s) => s.roles.includes(principal.role)) : [];
}

function showSignIn(message) {
  leaveScreen();
  stopIdleWatch();
  principal = null;
  nav.hidden = who.hidden = signOutButton.hidden = true;
  notify(message);
  cleanup = signin.render(main, {onSignedIn: enter});
}

// Called with the principal after sign-in (and the password change, when one was due).
function enter(signedIn) {
  principal = signedIn;
  startIdleWatch(signedIn.idle_timeout_s);
  notify('');
  replace(who, principal.owner ? principal.owner + ' (' + principal.role + ')' : principal.role);
  replace(nav, allowedScreens().map((s) => h('a', {href: '#/' + s.id, dataset: {screen: s.id}}, s.label)));
  nav.hidden = who.hidden = signOutButton.hidden = false;
  route();
}

function route() {
  if (!principal) return;
  const screens = allowedScreens();
  const wanted = location.hash.replace(/^#\//, '');
  const screen = screens.find((s) => s.id === wanted) || screens[0];
  if (!screen) {
    replace(main, h('p', {}, 'This role has no console screens.'));
    return;
  }
  if (wanted !== screen.id) history.replaceState(null, '', '#/' + screen.id);
  for (const link of nav.querySelectorAll('a')) {
    if (link.dataset.screen === screen.id) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  leaveScreen();
  document.title = screen.label + ' · Kimi appliance console';
  replace(main, h('h1', {}, screen.label));
  const body = h('div', {class: 'screen', id: 'screen-' + screen.id});
  main.append(body);
  if (screen.id === 'overview' && BUDGET_ROLES.includes(principal.role)) body.before(budgetBanner());
  cleanup = screen.module.render(body, {principal, notify}) || null;
  main.focus({preventScroll: true});
}

async function signOut() {
  try {
    await del('/admin/v1/session');
  } catch {
    // the session may already be gone; the console forgets it either way
  }
  setCsrfToken(null);
  showSignIn('Signed out.');
}

async function boot() {
  onActivity(() => {
    if (idle) idle.activity();
  });
  onSessionExpired(() => {
    setCsrfToken(null);
    showSignIn('Your session has ended (it expired or was signed out). Sign in again.');
  });
  signOutButton.addEventListener('click', signOut);
  // The skip link moves focus to the screen; following its #main would go through the router.
  document.querySelector('.skip').addEventListener('click', (e) => {
    e.preventDefault();
    main.focus();
  });
  window.addEventListener('hashchange', route);
  try {
    const current = await get('/admin/v1/session', {signIn: true});
    if (current.kind === 'session' && !current.must_change_password) enter(current);
    else if (current.kind === 'session') cleanup = signin.renderPasswordChange(main, {onSignedIn: enter});
    else showSignIn('');
  } catch {
    showSignIn('');
  }
}

boot();
