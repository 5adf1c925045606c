// The playground: the sampling settings the served model's request rules allow (a pinned one is
// not offered, a value outside a range is refused on its field and nothing is sent), a
// conversation kept and sent whole with the system prompt first, clearing it, and tool calls
// shown as calls whose results go back as `tool` messages. The demo model's weights are random,
// so only shapes are checked (the request bodies the page sends, what the page lays out), never
// the text; it never calls a tool, so the tool-call turn is a recorded stream in the appliance's
// frame layout served to the page, and the tool results then go to the real daemon.
import {adminSession, assert, check, openScreen, runSuite, screenshot, WAIT_MS} from '../harness.mjs';

const SIZES = [{width: 1440, height: 900}, {width: 1024, height: 768}];
const TOOLS = [{type: 'function', function: {name: 'get_time', description: 'The time in a zone',
                                             parameters: {type: 'object', properties: {tz: {type: 'string'}}}}}];

function frame(delta, extra = {}) {
  return 'data: ' + JSON.stringify({id: 'chatcmpl-rec', object: 'chat.completion.chunk', created: 1700000000,
                                    model: 'kimi-k3', choices: [{index: 0, delta, ...extra}]}) + '\n\n';
}
const TOOL_STREAM = [
  frame({role: 'assistant', content: ''}), frame({reasoning_content: 'The user wants the time.'}),
  frame({reasoning_content: ''}),
  frame({tool_calls: [{index: 0, id: 'functions.get_time:0', type: 'function', function: {name: 'get_time', arguments: ''}}]}),
  frame({tool_calls: [{index: 0, function: {arguments: '{"tz":'}}]}),
  frame({tool_calls: [{index: 0, function: {arguments: '"UTC"}'}}]}),
  frame({}, {finish_reason: 'tool_calls', usage: {prompt_tokens: 40, completion_tokens: 12, total_tokens: 52}}),
  'data: [DONE]\n\n'].join('');

async function screenshots(page, name) {
  for (const size of SIZES) {
    await page.setViewportSize(size);
    await screenshot(page, name + '-' + size.width + 'x' + size.height);
  }
  await page.setViewportSize(SIZES[0]);
}

await runSuite(async (page) => {
  await adminSession(page);
  await page.setViewportSize(SIZES[0]);
  const sent = [];  // the chat request bodies the page sends, in order
  page.on('request', (req) => {
    if (req.method() === 'POST' && new URL(req.url()).pathname === '/v1/chat/completions') {
      sent.push(JSON.parse(req.postData()));
    }
  });
  const finishedTurns = async (n) => {
    await page.waitForFunction((count) => document.querySelectorAll('#play-messages li.msg-assistant').length === count &&
                               document.querySelector('#play-finished') !== null, n, {timeout: WAIT_MS * 4});
  };

  await check('only the settings the model allows are offered, with their ranges', async () => {
    await openScreen(page, 'Playground', '#screen-playground');
    const temperature = page.locator('#play-temperature');
    await temperature.waitFor({state: 'attached', timeout: WAIT_MS});
    assert(await temperature.getAttribute('min') === '0' && await temperature.getAttribute('max') === '1',
           'temperature range: ' + await temperature.getAttribute('min') + '..' + await temperature.getAttribute('max'));
    // K3's rules pin top_p to 0.95 and the penalties to 0: not offered, named as fixed.
    for (const pinned of ['top_p', 'presence_penalty', 'frequency_penalty']) {
      assert(await page.locator('#play-' + pinned).count() === 0, pinned + ' is offered though the model pins it');
    }
    const fixed = await page.locator('#play-fixed').textContent();
    assert(fixed.includes('top p 0.95') && fixed.includes('presence penalty 0'), 'fixed: ' + fixed);
  });

  await check('a setting outside the allowed range is refused on its field and nothing is sent', async () => {
    await page.locator('#play-sampling summary').click();
    await page.getByLabel('Temperature').fill('1.5');
    await page.getByLabel('Message', {exact: true}).fill('Hello.');
    await page.getByRole('button', {name: 'Send', exact: true}).click();
    const error = page.locator('#play-temperature-error');
    await error.filter({hasText: '[0, 1]'}).waitFor({timeout: WAIT_MS});
    assert(await page.locator('#play-temperature').getAttribute('aria-invalid') !== null, 'the field is not marked invalid');
    assert(await page.evaluate(() => document.activeElement.id) === 'play-temperature', 'focus is not on the field');
    assert(sent.length === 0, 'a request was sent: ' + JSON.stringify(sent[0]));
  });

  await check('a second turn sends the system prompt first and the whole conversation', async () => {
    await page.getByLabel('Temperature').fill('0.5');
    await page.getByLabel('System prompt').fill('You are terse.');
    await page.getByLabel('Output tokens at most').fill('8');
    await page.getByLabel('Message', {exact: true}).fill('First question.');
    await page.getByRole('button', {name: 'Send', exact: true}).click();
    await finishedTurns(1);
    await page.getByLabel('Message', {exact: true}).fill('Second question.');
    await page.getByRole('button', {name: 'Send', exact: true}).click();
    await finishedTurns(2);
    assert(sent.length === 2, 'requests sent: ' + sent.length);
    const roles = sent[1].messages.map((m) => m.role);
    assert(roles.length >= 3 && roles.join(',') === 'system,user,assistant,user', 'second turn: ' + roles.join(','));
    assert(sent[1].messages[0].content === 'You are terse.', 'system prompt: ' + sent[1].messages[0].content);
    assert(sent[1].messages[1].content === 'First question.' && sent[1].messages[3].content === 'Second question.',
           'user messages: ' + JSON.stringify(sent[1].messages));
    assert(sent[0].temperature === 0.5 && sent[1].temperature === 0.5, 'temperature sent: ' + sent[1].temperature);
    assert(!('top_p' in sent[1]) && !('presence_penalty' in sent[1]), 'a pinned setting was sent');
    assert(/^Finished: \w+, \d+ prompt and \d+ completion tokens\.$/.test(await page.locator('#play-finished').textContent()),
           'status: ' + await page.locator('#play-finished').textContent());
    // What the model wrote as reasoning shows in the collapsible block, not in the answer.
    const first = sent[1].messages[2];
    const view = page.locator('#play-messages li.msg-assistant').first();
    if (first.reasoning_content) {
      assert((await view.locator('details.reasoning pre').textContent()) === first.reasoning_content,
             'the reasoning block does not hold the reasoning');
    }
    assert((await view.locator('pre.answer').count()) === (first.content ? 1 : 0), 'the answer block');
    await screenshots(page, 'playground-multi-turn');
  });

  await check('clearing the conversation starts the next turn afresh', async () => {
    await page.locator('#play-clear').click();
    assert(await page.locator('#play-messages li').count() === 0, 'messages left on screen');
    await page.getByLabel('Message', {exact: true}).fill('Fresh start.');
    await page.getByRole('button', {name: 'Send', exact: true}).click();
    await finishedTurns(1);
    const roles = sent[sent.length - 1].messages.map((m) => m.role);
    assert(roles.join(',') === 'system,user', 'after clearing: ' + roles.join(','));
  });

  await check('tool calls show as calls and their results go back as tool messages', async () => {
    await page.locator('#play-clear').click();
    await page.locator('#play-tools-area summary').click();
    await page.getByLabel('Tools (JSON array of functions)').fill(JSON.stringify(TOOLS));
    let served = 0;
    await page.route('**/v1/chat/completions', async (route) => {
      if (served++ > 0) return route.continue();
      await route.fulfill({status: 200, headers: {'Content-Type': 'text/event-stream'}, body: TOOL_STREAM});
    });
    await page.getByLabel('Message', {exact: true}).fill('What time is it?');
    await page.getByRole('button', {name: 'Send', exact: true}).click();
    await finishedTurns(1);
    const call = page.locator('#play-messages li.msg-assistant .tool-call code.call');
    assert((await call.textContent()) === 'get_time({"tz":"UTC"})', 'call shown: ' + await call.textContent());
    const reasoning = page.locator('#play-messages li.msg-assistant details.reasoning');
    assert((await reasoning.locator('pre').textContent()) === 'The user wants the time.', 'reasoning block');
    assert(sent[sent.length - 1].tools[0].function.name === 'get_time', 'the tools were not sent');
    await page.getByLabel('Result of get_time (functions.get_time:0)').fill('12:00 UTC');
    await screenshots(page, 'playground-tool-call');
    await page.getByRole('button', {name: 'Send tool results'}).click();
    await finishedTurns(2);
    await page.unroute('**/v1/chat/completions');
    const last = sent[sent.length - 1].messages;
    assert(last.map((m) => m.role).join(',') === 'system,user,assistant,tool', 'roles: ' + last.map((m) => m.role));
    assert(last[2].tool_calls[0].function.arguments === '{"tz":"UTC"}' &&
           last[3].tool_call_id === 'functions.get_time:0' && last[3].content === '12:00 UTC',
           'tool turn: ' + JSON.stringify(last.slice(2)));
  });
});
