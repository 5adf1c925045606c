// The playground's pure modules under node's test runner: the stream reducer
// (admin-ui/js/chat_stream.js) over SSE streams in the appliance's frame layout (the rules
// appliance/api/api_encoders_test.cc holds the chat SSE encoder to: a first frame with the role,
// reasoning then an empty reasoning boundary then the answer, a tool call opened with its id,
// type and name and then argument pieces, the end frame with finish_reason and usage, the
// include_usage frame, [DONE]), read through the console's own SSE reader; and the request
// building (admin-ui/js/chat_request.js): messages, settings from a model's rules, tools.
import assert from 'node:assert/strict';
import test from 'node:test';

import {assistantMessage, buildRequest, checkSetting, parseTools, samplingSettings, toolMessage}
  from '../../admin-ui/js/chat_request.js';
import {emptyTurn, reduceData} from '../../admin-ui/js/chat_stream.js';
import {sseData} from '../../admin-ui/js/sse.js';

const K3_RULES = {temperature: [0, 1], top_p: 0.95, presence_penalty: 0, frequency_penalty: 0, n: 1,
                  max_stop: 4, max_stop_bytes: 256, vocab_size: 163840};

function frame(delta, extra = {}) {
  return 'data: ' + JSON.stringify({id: 'chatcmpl-req_1', object: 'chat.completion.chunk', created: 1700000000,
                                    model: 'kimi-k3', choices: [{index: 0, delta, ...extra}]}) + '\n\n';
}

const USAGE = {prompt_tokens: 36, completion_tokens: 20, total_tokens: 56,
               completion_tokens_details: {reasoning_tokens: 8}};

// Reasoning, the answer and two tool calls, the first one's arguments in 16-byte pieces,
// delivered in reads that cut frames in the middle.
const TOOL_STREAM = [
  frame({role: 'assistant', content: ''}),
  frame({reasoning_content: 'Let me '}), frame({reasoning_content: 'think.'}), frame({reasoning_content: ''}),
  frame({content: 'Calling '}), frame({content: 'tools.'}),
  frame({tool_calls: [{index: 0, id: 'functions.get_weather:0', type: 'function',
                       function: {name: 'get_weather', arguments: ''}}]}),
  frame({tool_calls: [{index: 0, function: {arguments: '{"city":"Zürich'}}]}),
  frame({tool_calls: [{index: 0, function: {arguments: '","days":3}'}}]}),
  frame({tool_calls: [{index: 1, id: 'functions.get_time:1', type: 'function',
                       function: {name: 'get_time', arguments: ''}}]}),
  frame({tool_calls: [{index: 1, function: {arguments: '{"tz":'}}]}),
  frame({tool_calls: [{index: 1, function: {arguments: '"UTC"}'}}]}),
  frame({}, {finish_reason: 'tool_calls', usage: USAGE}),
  'data: ' + JSON.stringify({id: 'chatcmpl-req_1', object: 'chat.completion.chunk', choices: [], usage: USAGE}) + '\n\n',
  'data: [DONE]\n\n',
].join('');

function bodyOf(text, pieceBytes) {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += pieceBytes) controller.enqueue(bytes.slice(at, at + pieceBytes));
      controller.close();
    },
  });
}

async function replay(text, pieceBytes = 37) {
  let turn = emptyTurn();
  for await (const data of sseData(bodyOf(text, pieceBytes))) turn = reduceData(turn, data);
  return turn;
}

test('reasoning, answer and tool calls are kept apart, whatever the read boundaries', async () => {
  for (const pieceBytes of [1, 7, 37, 4096]) {
    const turn = await replay(TOOL_STREAM, pieceBytes);
    assert.equal(turn.reasoning, 'Let me think.');
    assert.equal(turn.content, 'Calling tools.');
    assert.deepEqual(turn.toolCalls.map((c) => [c.id, c.name, c.arguments]),
                     [['functions.get_weather:0', 'get_weather', '{"city":"Zürich","days":3}'],
                      ['functions.get_time:1', 'get_time', '{"tz":"UTC"}']]);
    assert.equal(turn.finish, 'tool_calls');
    assert.equal(turn.usage.completion_tokens, 20);
    assert.ok(turn.done);
  }
});

test('an error frame in the stream is the turn\'s error', async () => {
  const turn = await replay(frame({content: 'par'}) +
                            'data: {"error":{"message":"the model was unloaded","type":"server_error"}}\n\n');
  assert.equal(turn.content, 'par');
  assert.equal(turn.error, 'the model was unloaded');
  assert.ok(!turn.done);
});

test('the reducer leaves the turn it was given unchanged', () => {
  const before = emptyTurn();
  reduceData(before, JSON.stringify({choices: [{index: 0, delta: {content: 'x', reasoning_content: 'y'}}]}));
  assert.deepEqual(before, emptyTurn());
});

test('a second turn sends the system prompt first, then the whole conversation', async () => {
  const first = await replay(TOOL_STREAM);
  const conversation = [{role: 'user', content: 'weather?'}, assistantMessage(first),
                        toolMessage('functions.get_weather:0', '{"temp":3}'),
                        toolMessage('functions.get_time:1', '12:00')];
  const body = buildRequest({model: 'kimi-k3', system: 'Be brief.', conversation, settings: {temperature: 0.3},
                             tools: [], thinking: true, maxTokens: 64});
  assert.deepEqual(body.messages.map((m) => m.role), ['system', 'user', 'assistant', 'tool', 'tool']);
  assert.equal(body.messages[0].content, 'Be brief.');
  assert.deepEqual(body.messages[2].tool_calls[1], {id: 'functions.get_time:1', type: 'function',
                                                    function: {name: 'get_time', arguments: '{"tz":"UTC"}'}});
  assert.equal(body.messages[2].reasoning_content, 'Let me think.');
  assert.equal(body.messages[3].tool_call_id, 'functions.get_weather:0');
  assert.equal(body.temperature, 0.3);
  assert.equal(body.max_tokens, 64);
  assert.equal(body.stream, true);
  assert.ok(!('tools' in body) && !('top_p' in body));
});

test('no system message when the system prompt is blank; tools are sent when given', () => {
  const tools = parseTools('[{"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}]');
  const body = buildRequest({model: 'm', system: '  ', conversation: [{role: 'user', content: 'hi'}], tools});
  assert.deepEqual(body.messages, [{role: 'user', content: 'hi'}]);
  assert.equal(body.tools[0].function.name, 'get_time');
  assert.deepEqual(parseTools(''), []);
  assert.throws(() => parseTools('{"type":"function"}'), /must be a JSON array/);
  assert.throws(() => parseTools('[{"type":"function"}]'), /tools\[0\]/);
  assert.throws(() => parseTools('[nope'), /not JSON/);
});

test('K3\'s rules: temperature in [0, 1] is offered; pinned settings are not', () => {
  const settings = samplingSettings(K3_RULES);
  const byName = Object.fromEntries(settings.map((s) => [s.name, s]));
  assert.deepEqual([byName.temperature.min, byName.temperature.max], [0, 1]);
  assert.equal(byName.top_p.pinned, 0.95);
  assert.equal(byName.presence_penalty.pinned, 0);
  assert.equal(byName.frequency_penalty.pinned, 0);
  assert.ok(!('n' in byName));
  assert.deepEqual(checkSetting(byName.temperature, '0.6'), {value: 0.6});
  assert.deepEqual(checkSetting(byName.temperature, ''), {value: undefined});
  assert.match(checkSetting(byName.temperature, '1.1').error, /\[0, 1\]/);
  assert.match(checkSetting(byName.temperature, '-0.1').error, /\[0, 1\]/);
  assert.match(checkSetting(byName.top_k, '2.5').error, /whole number/);
  assert.deepEqual(checkSetting(byName.top_k, '-1'), {value: -1});
  assert.match(checkSetting(byName.stop, 'a\nb\nc\nd\ne').error, /at most 4/);
  assert.match(checkSetting(byName.stop, 'x'.repeat(257)).error, /256 bytes/);
  assert.deepEqual(checkSetting(byName.stop, 'END\n\nSTOP'), {value: ['END', 'STOP']});
});

test('a model without pins gets OpenAI\'s ranges; top_p excludes 0 as the engine does', () => {
  const open = Object.fromEntries(samplingSettings({...K3_RULES, temperature: [0, 2], top_p: null,
                                                    presence_penalty: null}).map((s) => [s.name, s]));
  assert.deepEqual(checkSetting(open.temperature, '1.5'), {value: 1.5});
  assert.match(checkSetting(open.top_p, '0').error, /\(0, 1\]/);
  assert.deepEqual(checkSetting(open.top_p, '0.8'), {value: 0.8});
  assert.deepEqual(checkSetting(open.presence_penalty, '-2'), {value: -2});
  assert.match(checkSetting(open.presence_penalty, '2.5').error, /\[-2, 2\]/);
  assert.equal(open.frequency_penalty.pinned, 0);
});
