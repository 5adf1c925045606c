// Every screen of every console role (admin, operator, auditor) at 1440x900 and 1024x768, idle
// and under a load of chat requests: each must fit its width, no table may run out of its box or
// under its neighbour, and none may break a word or a number where no line may break. Its
// screenshots (walkthrough-ROLE-SCREEN-WIDTH-idle|load.png) are the ones docs/console.md walks
// through. Runs last (its name sorts after the other suites), so the screens show what the
// earlier suites left: keys, versions, policies, audit records.
import {adminSession, assert, base, changePassword, check, runSuite, screenshot, signIn, WAIT_MS} from '../harness.mjs';

const SIZES = [{width: 1440, height: 900}, {width: 1024, height: 768}];
const LOAD_WORKERS = 3;
// Bounds only: the load stops when the screenshots are done, or after this many requests.
const LOAD_REQUESTS_AT_MOST = 400;
const SETTLE_MS = 1500;

// Runs in the page: words of table cells broken across lines where no line may break — inside
// a number, a unit, a name or a plain word ("32,76 / 8", "agenti c") — and whether the page
// scrolls sideways. A line may break after a hyphen or a slash, and anywhere inside a long
// identifier (letters and digits, over 16 characters: request ids, digests, paths). Also a
// table wider than a box that does not scroll.
function layoutProblems() {
  const problems = [];
  if (document.scrollingElement.scrollWidth > window.innerWidth + 1) {
    problems.push('scrolls sideways: ' + document.scrollingElement.scrollWidth + ' > ' + window.innerWidth);
  }
  // A table wider than the box it sits in runs under its neighbours, unless that box scrolls.
  for (const table of document.querySelectorAll('#main table')) {
    const box = table.parentElement;
    if (table.closest('[hidden]') || table.getClientRects().length === 0) continue;
    if (['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) continue;
    const name = 'table ' + (table.id || table.className || table.querySelector('th')?.textContent || '?');
    const own = table.getBoundingClientRect();
    const overflow = own.right - box.getBoundingClientRect().right;
    if (overflow > 1) problems.push(name + ' overflows its box by ' + Math.round(overflow) + ' px');
    // Side by side in a grid or a row, it must not run under the next item either.
    for (const other of box.children) {
      if (other === table || other.getClientRects().length === 0) continue;
      const r = other.getBoundingClientRect();
      const across = Math.min(own.right, r.right) - Math.max(own.left, r.left);
      const down = Math.min(own.bottom, r.bottom) - Math.max(own.top, r.top);
      if (across > 1 && down > 1) problems.push(name + ' runs under its neighbour by ' + Math.round(across) + ' px');
    }
  }
  const lineOf = (node, at) => {
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + 1);
    const rect = [...range.getClientRects()].find((r) => r.width > 0);
    return rect ? Math.round(rect.top) : null;
  };
  const walker = document.createTreeWalker(document.getElementById('main'), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const cell = node.parentElement && node.parentElement.closest('td, th');
    if (!cell || cell.closest('[hidden]') || cell.getClientRects().length === 0) continue;
    for (const match of node.textContent.matchAll(/\S+/g)) {
      const word = match[0];
      if (word.length > 16 && /[0-9]/.test(word) && /[a-z]/i.test(word)) continue;
      let previous = lineOf(node, match.index);
      for (let i = 1; i < word.length; i += 1) {
        const line = lineOf(node, match.index + i);
        if (line !== null && previous !== null && line !== previous && !'-/'.includes(word[i - 1])) {
          problems.push('"' + word + '" breaks after "' + word.slice(0, i) + '" in ' + cell.tagName.toLowerCase());
          break;
        }
        if (line !== null) previous = line;
      }
    }
  }
  return problems;
}

// Chat requests from node with an API key, LOAD_WORKERS at a time, until the returned stop()
// is called.
async function startLoad(key) {
  const auth = {Authorization: 'Bearer ' + key};
  const model = (await (await fetch(base + '/v1/models', {headers: auth})).json()).data[0].id;
  let stopped = false;
  let sent = 0;
  const worker = async () => {
    while (!stopped && sent < LOAD_REQUESTS_AT_MOST) {
      sent += 1;
      const body = {model, messages: [{role: 'user', content: 'Describe the weather. '.repeat(8)}],
                    max_tokens: 16, stream: sent % 2 === 0};
      await fetch(base + '/v1/chat/completions', {method: 'POST', body: JSON.stringify(body),
                                                   headers: {'Content-Type': 'application/json', ...auth}})
          .then((res) => res.text()).catch(() => '');
    }
  };
  const running = Promise.all(Array.from({length: LOAD_WORKERS}, worker));
  return async () => {
    stopped = true;
    await running;
    return sent;
  };
}

// Calls the admin API with the page's console session.
async function adminCall(page, method, url, body) {
  return page.evaluate(async ([m, u, b]) => {
    const headers = {'Content-Type': 'application/json', 'X-CSRF-Token': sessionStorage.getItem('kimi.console.csrf')};
    const res = await fetch(u, {method: m, headers, body: b === undefined ? undefined : JSON.stringify(b)});
    return {status: res.status, body: await res.json().catch(() => ({}))};
  }, [method, url, body]);
}

// Visits each screen the navigation offers, at each size, takes its screenshot and checks its
// layout. Returns the screens visited and the layout problems found.
async function walkScreens(page, role, load) {
  const links = await page.locator('#nav a').evaluateAll((as) => as.map((a) => [a.textContent, a.dataset.screen]));
  const problems = [];
  for (const size of SIZES) {
    await page.setViewportSize(size);
    for (const [label, id] of links) {
      await page.getByRole('link', {name: label, exact: true}).click();
      await page.locator('#screen-' + id).waitFor({timeout: WAIT_MS});
      // Lets the screen's first answers arrive; the screenshot is the only thing that waits on it.
      await page.waitForTimeout(SETTLE_MS);
      await screenshot(page, [role, id, size.width, load].join('-'));
      for (const p of await page.evaluate(layoutProblems)) problems.push(id + ' at ' + size.width + ' px: ' + p);
    }
  }
  return {screens: links.map(([, id]) => id), problems};
}

// A user of `role` made by the admin, signed in (with its forced password change) in `page`.
async function signInAsNewUser(adminPage, page, role) {
  const username = role + '-walkthrough';
  const made = await adminCall(adminPage, 'POST', '/admin/v1/users', {username, role});
  assert(made.status === 201, 'adding the ' + role + ' answered ' + made.status + ': ' + JSON.stringify(made.body));
  await signIn(page, username, made.body.one_time_password);
  await changePassword(page);
  await page.getByRole('heading', {name: 'Overview', level: 1}).waitFor({timeout: WAIT_MS});
}

await runSuite(async (page, context) => {
  await adminSession(page);
  const made = await adminCall(page, 'POST', '/admin/v1/keys', {name: 'walkthrough-load', role: 'user'});
  const loadKey = made.body.key;

  await check('admin: every screen fits 1440 and 1024 px without breaking a word, idle', async () => {
    const {screens, problems} = await walkScreens(page, 'admin', 'idle');
    assert(screens.includes('keys') && screens.includes('audit'), 'admin screens: ' + screens.join(', '));
    assert(problems.length === 0, problems.join('\n'));
  });

  await check('admin: every screen fits 1440 and 1024 px without breaking a word, under load', async () => {
    assert(made.status === 201, 'the load key was not made: ' + made.status + ' ' + JSON.stringify(made.body));
    const stop = await startLoad(loadKey);
    let walk = null;
    try {
      walk = await walkScreens(page, 'admin', 'load');
    } finally {
      const sent = await stop();
      console.log('  (' + sent + ' chat requests sent during the walk)');
    }
    assert(walk.problems.length === 0, walk.problems.join('\n'));
  });

  for (const role of ['operator', 'auditor']) {
    await check(role + ': every screen of the role fits 1440 and 1024 px, idle and under load', async () => {
      // A context of its own: the console's session cookie is per context.
      const own = await context.browser().newContext({viewport: SIZES[0]});
      const other = await own.newPage();
      try {
        await signInAsNewUser(page, other, role);
        const problems = (await walkScreens(other, role, 'idle')).problems;
        const stop = await startLoad(loadKey);
        try {
          problems.push(...(await walkScreens(other, role, 'load')).problems);
        } finally {
          await stop();
        }
        assert(problems.length === 0, problems.join('\n'));
      } finally {
        await own.close();
      }
    });
  }
});
