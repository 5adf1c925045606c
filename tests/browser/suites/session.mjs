// The console's session edges: what the page shows once a session is over (signed out, or
// ended on the server), so that nothing of the previous role stays usable on the sign-in page.
import {adminSession, assert, check, runSuite, screenshot, WAIT_MS} from '../harness.mjs';

// The screen links the page lays out for a user to see (hidden ones take no room).
async function visibleNavigation(page) {
  return page.evaluate(() => [...document.querySelectorAll('#nav a')]
      .filter((a) => a.getClientRects().length > 0).map((a) => a.textContent));
}

await runSuite(async (page) => {
  await check('after sign-out the sign-in page shows no navigation of the previous role', async () => {
    await adminSession(page);
    assert((await visibleNavigation(page)).includes('Overview'), 'the navigation is not shown while signed in');
    await page.getByRole('button', {name: 'Sign out'}).click();
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
    const links = await visibleNavigation(page);
    assert(links.length === 0, 'navigation left on the sign-in page: ' + links.join(', '));
    await screenshot(page, 'signed-out');
  });

  await check('after the session ends on the server the sign-in page shows no navigation', async () => {
    await adminSession(page);
    await page.evaluate(async () => {
      await fetch('/admin/v1/session', {method: 'DELETE',
                                        headers: {'X-CSRF-Token': sessionStorage.getItem('kimi.console.csrf')}});
    });
    // The next call of the page meets the ended session: a screen change, unless the overview's
    // own polling got there first (then the page is already back at sign-in and the change
    // does nothing).
    await page.evaluate(() => { location.hash = '#/audit'; });
    await page.getByRole('heading', {name: 'Sign in'}).waitFor({timeout: WAIT_MS});
    const links = await visibleNavigation(page);
    assert(links.length === 0, 'navigation left on the sign-in page: ' + links.join(', '));
  });
});
