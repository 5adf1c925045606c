// Playground: a conversation with a served model for testing after an update or a policy
// change. The conversation is kept while the screen is open and sent whole each turn (system
// prompt first); the sampling settings offered are the ones the model's request rules allow,
// with their ranges (a value outside is refused on its field, nothing is sent); the reasoning
// streams apart from the answer, in a collapsible block; tool calls show as calls (function
// name and arguments), and their results go back as `tool` messages. Each turn is an ordinary,
// audited /v1/chat/completions call made with the session. Nothing is kept after leaving the
// screen. Request building and the stream's folding are pure modules (chat_request.js,
// chat_stream.js).

import {call, errorOf, get} from '../api.js';
import {assistantMessage, buildRequest, checkSetting, parseTools, samplingSettings, toolMessage}
  from '../chat_request.js';
import {emptyTurn, reduceData} from '../chat_stream.js';
import {errorLine, field, h, replace} from '../dom.js';
import {sseData} from '../sse.js';

const ROLE_NAMES = {system: 'System', user: 'You', assistant: 'Model', tool: 'Tool result'};

function toolCallView(c) {
  return h('li', {class: 'tool-call'}, h('code', {class: 'call'}, c.name + '(' + c.arguments + ')'),
           c.id ? h('small', {class: 'hint'}, ' ' + c.id) : null);
}

// One message of the conversation; an assistant message as the stream left it (`turn`) or as
// kept (`message`).
function messageView(message, turn = null) {
  const role = message.role;
  const body = [];
  if (role === 'assistant') {
    const reasoning = turn ? turn.reasoning : message.reasoning_content || '';
    const calls = turn ? turn.toolCalls : (message.tool_calls || []).map((c) => ({id: c.id, ...c.function}));
    const content = turn ? turn.content : message.content;
    if (reasoning) {
      // Collapsed once there is an answer or a call to read; open while it is all there is.
      body.push(h('details', {class: 'reasoning', open: !content && !calls.length ? true : null},
                  h('summary', {}, 'Reasoning'), h('pre', {class: 'stream'}, reasoning)));
    }
    if (content) body.push(h('pre', {class: 'stream answer'}, content));
    if (calls.length) body.push(h('ul', {class: 'tool-calls', 'aria-label': 'Tool calls'}, calls.map(toolCallView)));
    if (!reasoning && !content && !calls.length) body.push(h('p', {class: 'detail'}, turn ? '…' : '(empty)'));
  } else {
    if (role === 'tool') body.push(h('small', {class: 'hint'}, 'for ' + message.tool_call_id));
    body.push(h('pre', {class: 'stream'}, message.content));
  }
  return h('li', {class: 'message msg-' + role}, h('strong', {class: 'who'}, ROLE_NAMES[role] || role), body);
}

export function render(container) {
  const model = h('select', {id: 'play-model'});
  const system = h('textarea', {id: 'play-system', rows: 2, placeholder: 'Optional: sent first, every turn'});
  const prompt = h('textarea', {id: 'play-prompt', rows: 3});
  const thinking = h('input', {id: 'play-thinking', type: 'checkbox', checked: true});
  const maxTokens = h('input', {id: 'play-max-tokens', type: 'number', min: 1, max: 4096, value: 128});
  const settingsArea = h('div', {id: 'play-settings', class: 'row'});
  const fixed = h('p', {class: 'detail', id: 'play-fixed'});
  const tools = h('textarea', {id: 'play-tools', rows: 4, spellcheck: 'false',
                               placeholder: '[{"type": "function", "function": {"name": "get_time", "parameters": ' +
                                            '{"type": "object", "properties": {}}}}]'});
  const toolsError = h('small', {class: 'error', id: 'play-tools-error', role: 'alert'});
  const send = h('button', {type: 'submit', class: 'primary'}, 'Send');
  const stop = h('button', {type: 'button', disabled: true}, 'Stop');
  const clear = h('button', {type: 'button', class: 'quiet', id: 'play-clear'}, 'Clear conversation');
  const status = h('div', {class: 'status', id: 'play-status', role: 'status'});
  const messages = h('ol', {id: 'play-messages', class: 'conversation'});
  const toolResults = h('form', {id: 'play-tool-results', class: 'card', hidden: true, novalidate: true});
  const form = h('form', {class: 'card', 'aria-labelledby': 'play-title', novalidate: true},
                 h('h2', {id: 'play-title'}, 'Chat'),
                 h('div', {class: 'row'}, field('Model', model), field('Output tokens at most', maxTokens)),
                 field('System prompt', system),
                 field('Message', prompt),
                 h('div', {class: 'field inline'}, thinking, h('label', {for: thinking.id}, 'Thinking')),
                 h('details', {id: 'play-sampling'}, h('summary', {}, 'Sampling settings (what this model allows)'),
                   settingsArea, fixed),
                 h('details', {id: 'play-tools-area'}, h('summary', {}, 'Tools'),
                   field('Tools (JSON array of functions)', tools), toolsError),
                 h('div', {class: 'actions'}, send, stop, clear), status);
  container.append(form, h('section', {class: 'card', 'aria-labelledby': 'conversation-title'},
                           h('h2', {id: 'conversation-title'}, 'Conversation'), messages,
                           h('p', {class: 'detail', id: 'play-empty'}, 'Nothing sent yet.')),
                   toolResults);

  let conversation = [];  // user, assistant and tool messages, in order
  let settings = [];      // samplingSettings() of the selected model's rules
  let controller = null;

  function showConversation(live = null) {
    replace(messages, conversation.map((m) => messageView(m)), live ? messageView({role: 'assistant'}, live) : null);
    container.querySelector('#play-empty').hidden = conversation.length > 0 || live !== null;
  }

  // The settings fields of the model's rules; a pinned one is named, not offered.
  async function loadRules() {
    replace(settingsArea);
    replace(fixed);
    settings = [];
    if (!model.value) return;
    try {
      const reply = await get('/admin/v1/request-rules', {query: {model: model.value}});
      settings = samplingSettings(reply.rules);
    } catch (e) {
      replace(fixed, errorLine(e, 'This model’s request rules'), ' Sampling settings are not offered.');
      return;
    }
    for (const s of settings.filter((x) => x.pinned === undefined)) {
      const input = s.kind === 'stop'
        ? h('textarea', {id: 'play-' + s.name, rows: 2, placeholder: 'one per line'})
        : h('input', {id: 'play-' + s.name, type: 'number', min: s.min, max: s.max, step: s.step,
                      placeholder: 'model default'});
      const hint = s.kind === 'stop'
        ? 'at most ' + s.maxCount + ', each up to ' + s.maxBytes + ' bytes'
        : (s.minExclusive ? '(' : '[') + s.min + ', ' + (s.max > 1e9 ? '…' : s.max) + ']' + (s.hint ? '; ' + s.hint : '');
      const error = h('small', {class: 'error', id: 'play-' + s.name + '-error', role: 'alert'});
      input.setAttribute('aria-describedby', error.id);
      input.addEventListener('input', () => settingValue(s));
      settingsArea.append(h('div', {class: 'field'}, h('label', {for: input.id}, s.label), input,
                            h('small', {class: 'hint'}, hint), error));
    }
    const pinned = settings.filter((x) => x.pinned !== undefined);
    if (pinned.length) {
      replace(fixed, 'Fixed by this model’s rules (any other value is refused): ',
              pinned.map((s) => s.label.toLowerCase() + ' ' + s.pinned).join(', '), '.');
    }
  }

  // The setting's value, or an error shown on its field (and `null` returned).
  function settingValue(s) {
    const input = container.querySelector('#play-' + s.name);
    const error = container.querySelector('#play-' + s.name + '-error');
    const checked = checkSetting(s, input.value);
    input.setCustomValidity(checked.error ? s.label + ' ' + checked.error : '');
    input.toggleAttribute('aria-invalid', Boolean(checked.error));
    replace(error, checked.error ? s.label + ' ' + checked.error + '.' : '');
    return checked.error ? null : checked;
  }

  // Every offered setting's value, or null after showing the first refusal.
  function settingValues() {
    const values = {};
    let first = null;
    for (const s of settings.filter((x) => x.pinned === undefined)) {
      const checked = settingValue(s);
      if (!checked) first = first || s;
      else if (checked.value !== undefined) values[s.name] = checked.value;
    }
    if (!first) return values;
    container.querySelector('#play-' + first.name).focus();
    replace(status, h('p', {class: 'error', role: 'alert'}, 'Not sent: ' + first.label.toLowerCase() +
                      ' is outside what this model allows.'));
    return null;
  }

  function toolList() {
    replace(toolsError);
    try {
      return parseTools(tools.value);
    } catch (e) {
      replace(toolsError, e.message);
      form.querySelector('#play-tools-area').open = true;
      tools.focus();
      replace(status, h('p', {class: 'error', role: 'alert'}, 'Not sent: the tools field is not valid.'));
      return null;
    }
  }

  // Sends the conversation with `added` appended (a user message or tool results) and streams
  // the answer; a turn that fails leaves the conversation as it was.
  async function turn(added) {
    const values = settingValues();
    if (!values) return false;
    const toolDefs = toolList();
    if (!toolDefs) return false;
    const kept = conversation;
    conversation = conversation.concat(added);
    toolResults.hidden = true;
    const request = buildRequest({model: model.value, system: system.value, conversation, settings: values,
                                  tools: toolDefs, thinking: thinking.checked,
                                  maxTokens: Number(maxTokens.value) || 128});
    let streamed = emptyTurn();
    showConversation(streamed);
    replace(status, 'Waiting for the first token…');
    controller = new AbortController();
    send.disabled = true;
    stop.disabled = false;
    try {
      const res = await call('POST', '/v1/chat/completions', {body: request, as: 'response', signal: controller.signal});
      if (!res.ok) throw await errorOf(res);
      replace(status, 'Streaming…');
      for await (const data of sseData(res.body)) {
        streamed = reduceData(streamed, data);
        if (streamed.error) throw new Error(streamed.error);
        if (streamed.done) break;
        showConversation(streamed);
      }
      conversation = conversation.concat([assistantMessage(streamed)]);
      showConversation();
      const usage = streamed.usage;
      replace(status, h('p', {id: 'play-finished'}, 'Finished: ' + (streamed.finish || 'stream ended') +
                        (usage ? ', ' + usage.prompt_tokens + ' prompt and ' + usage.completion_tokens +
                                 ' completion tokens' : '') + '.'));
      if (streamed.toolCalls.length) offerToolResults(streamed.toolCalls);
      return true;
    } catch (e) {
      conversation = kept;
      showConversation();
      replace(status, e.name === 'AbortError' ? h('p', {}, 'Stopped; the turn was not kept.') : errorLine(e, 'The request'));
      return false;
    } finally {
      controller = null;
      send.disabled = false;
      stop.disabled = true;
    }
  }

  // A result field per tool call of the last answer; sent back as `tool` messages.
  function offerToolResults(calls) {
    const fields = calls.map((c, i) => ({c, input: h('textarea', {id: 'play-tool-result-' + i, rows: 2})}));
    const submit = h('button', {type: 'submit', class: 'primary'}, 'Send tool results');
    replace(toolResults, h('h2', {}, 'Answer the tool calls'),
            h('p', {class: 'detail'}, 'Each result goes back as a tool message for its call, then the model continues.'),
            fields.map(({c, input}) => field('Result of ' + c.name + ' (' + c.id + ')', input)), submit);
    toolResults.hidden = false;
    toolResults.onsubmit = (event) => {
      event.preventDefault();
      turn(fields.map(({c, input}) => toolMessage(c.id, input.value)));
    };
  }

  get('/v1/models').then((list) => {
    replace(model, (list.data || []).map((m) => h('option', {value: m.id}, m.id)));
    if (!model.options.length) replace(status, h('p', {class: 'unavailable'}, 'No model is served.'));
    else loadRules();
  }).catch((e) => replace(status, errorLine(e, 'The model list')));
  model.addEventListener('change', loadRules);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (prompt.value.trim() === '') {
      replace(status, h('p', {class: 'error', role: 'alert'}, 'Write a message first.'));
      prompt.focus();
      return;
    }
    if (await turn([{role: 'user', content: prompt.value}])) prompt.value = '';
  });
  stop.addEventListener('click', () => controller && controller.abort());
  clear.addEventListener('click', () => {
    if (controller) controller.abort();
    conversation = [];
    toolResults.hidden = true;
    showConversation();
    replace(status, 'Conversation cleared.');
  });
  showConversation();
  return () => controller && controller.abort();
}
