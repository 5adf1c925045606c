// The playground's requests: which sampling settings a model allows (from its request rules,
// GET /admin/v1/request-rules; docs/api.md "Sampling bounds"), each setting's check as the API
// would make it, the chat-completions body of the next turn (system prompt first, then the
// conversation kept so far), and the messages a turn adds to the conversation (the assistant's
// answer with its tool calls, a tool's result). Pure functions, no DOM.

// Ranges of the settings a model leaves unpinned (OpenAI's; top_p also the engine's (0, 1]).
const OPEN_RANGES = {top_p: {min: 0, max: 1, minExclusive: true},
                     presence_penalty: {min: -2, max: 2}, frequency_penalty: {min: -2, max: 2}};
const LABELS = {temperature: 'Temperature', top_p: 'Top p', presence_penalty: 'Presence penalty',
                frequency_penalty: 'Frequency penalty', top_k: 'Top k', seed: 'Seed', stop: 'Stop sequences'};

// [{name, label, kind: 'number' | 'integer' | 'stop', min, max, minExclusive, step, pinned, ...}].
// A setting the rules pin to one value has `pinned` (the value the model takes) and is not
// offered: sending any other value is refused.
export function samplingSettings(rules) {
  const [tMin, tMax] = rules.temperature;
  const out = [{name: 'temperature', label: LABELS.temperature, kind: 'number', min: tMin, max: tMax, step: 0.05}];
  for (const name of ['top_p', 'presence_penalty', 'frequency_penalty']) {
    const pin = rules[name];
    out.push(pin === null || pin === undefined
      ? {name, label: LABELS[name], kind: 'number', step: 0.05, ...OPEN_RANGES[name]}
      : {name, label: LABELS[name], pinned: pin});
  }
  out.push({name: 'top_k', label: LABELS.top_k, kind: 'integer', min: -1, max: rules.vocab_size, step: 1,
            hint: '-1 or 0: no limit'});
  out.push({name: 'seed', label: LABELS.seed, kind: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER, step: 1});
  out.push({name: 'stop', label: LABELS.stop, kind: 'stop', maxCount: rules.max_stop, maxBytes: rules.max_stop_bytes});
  return out;
}

function rangeText(s) {
  return (s.minExclusive ? '(' : '[') + s.min + ', ' + s.max + ']';
}

// The setting's value from the text of its field: {value} (undefined when the field is empty:
// the model's default), or {error} saying what is allowed.
export function checkSetting(setting, text) {
  const raw = String(text ?? '').trim();
  if (raw === '') return {value: undefined};
  if (setting.kind === 'stop') {
    const list = String(text).split('\n').filter((line) => line !== '');
    if (list.length > setting.maxCount) return {error: 'at most ' + setting.maxCount + ' stop sequences'};
    const long = list.find((line) => new TextEncoder().encode(line).length > setting.maxBytes);
    if (long !== undefined) return {error: 'each stop sequence is at most ' + setting.maxBytes + ' bytes'};
    return {value: list.length ? list : undefined};
  }
  const value = Number(raw);
  if (!Number.isFinite(value)) return {error: 'must be a number'};
  if (setting.kind === 'integer' && !Number.isInteger(value)) return {error: 'must be a whole number'};
  const below = setting.minExclusive ? value <= setting.min : value < setting.min;
  if (below || value > setting.max) return {error: 'must be in ' + rangeText(setting) + ' for this model'};
  return {value};
}

// The tools field's JSON: [] when empty; else an array of {type: 'function', function: {name}}
// objects, or an Error saying what is wrong.
export function parseTools(text) {
  if (String(text ?? '').trim() === '') return [];
  let tools;
  try {
    tools = JSON.parse(text);
  } catch (e) {
    throw new Error('the tools are not JSON: ' + e.message);
  }
  if (!Array.isArray(tools)) throw new Error('the tools must be a JSON array');
  tools.forEach((tool, i) => {
    if (!tool || tool.type !== 'function' || !tool.function || typeof tool.function.name !== 'string') {
      throw new Error('tools[' + i + '] must be {"type": "function", "function": {"name", "parameters"}}');
    }
  });
  return tools;
}

// The body of the next turn. `conversation`: the messages kept so far (user, assistant, tool),
// the new user message already appended; `settings`: {name: value} of the set ones.
export function buildRequest({model, system, conversation, settings = {}, tools = [], thinking, maxTokens}) {
  const messages = [];
  if (system && system.trim() !== '') messages.push({role: 'system', content: system});
  messages.push(...conversation);
  const body = {model, stream: true, stream_options: {include_usage: true}, messages,
                thinking: {type: thinking ? 'enabled' : 'disabled'}};
  if (maxTokens) body.max_tokens = maxTokens;
  for (const [name, value] of Object.entries(settings)) if (value !== undefined) body[name] = value;
  if (tools.length) body.tools = tools;
  return body;
}

// The assistant message a finished turn (chat_stream.js) adds to the conversation.
export function assistantMessage(turn) {
  const message = {role: 'assistant', content: turn.content};
  if (turn.reasoning) message.reasoning_content = turn.reasoning;
  if (turn.toolCalls.length) {
    message.tool_calls = turn.toolCalls.map((c) => ({id: c.id, type: c.type || 'function',
                                                     function: {name: c.name, arguments: c.arguments}}));
  }
  return message;
}

// A tool's result for the call `toolCallId`, sent back as the next turn's last message.
export function toolMessage(toolCallId, content) {
  return {role: 'tool', tool_call_id: toolCallId, content};
}
