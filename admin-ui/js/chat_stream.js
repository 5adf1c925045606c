// One streamed chat turn (POST /v1/chat/completions with stream: true) folded into what the
// playground shows: the answer, the reasoning (reasoning_content deltas) and the tool calls
// (tool_calls deltas: the id, type and name come once, the arguments in pieces, each call by
// its index), apart from each other; the finish reason and usage. Pure functions, no DOM: each
// returns a new turn and leaves the old one as it was.

export function emptyTurn() {
  return {content: '', reasoning: '', toolCalls: [], finish: null, usage: null, error: null, done: false};
}

function mergeToolCall(calls, delta) {
  const index = delta.index ?? calls.length;
  const next = calls.slice();
  const before = next[index] || {index, id: '', type: 'function', name: '', arguments: ''};
  const fn = delta.function || {};
  next[index] = {index,
                 id: delta.id || before.id,
                 type: delta.type || before.type,
                 name: before.name + (fn.name || ''),
                 arguments: before.arguments + (fn.arguments || '')};
  return next;
}

// `chunk`: one parsed chat.completion.chunk (or an error frame {error: {...}}).
export function reduceChunk(turn, chunk) {
  const next = {...turn};
  if (chunk.error) {
    next.error = chunk.error.message || 'the stream reported an error';
    return next;
  }
  if (chunk.usage) next.usage = chunk.usage;
  for (const choice of chunk.choices || []) {
    if (choice.index) continue;  // the playground asks for one choice
    const delta = choice.delta || {};
    if (delta.reasoning_content) next.reasoning += delta.reasoning_content;
    if (delta.content) next.content += delta.content;
    for (const call of delta.tool_calls || []) next.toolCalls = mergeToolCall(next.toolCalls, call);
    if (choice.finish_reason) next.finish = choice.finish_reason;
    if (choice.usage) next.usage = choice.usage;  // the appliance's end frame carries it too
  }
  return next;
}

// `data`: one SSE event's data as sse.js yields it; "[DONE]" ends the turn.
export function reduceData(turn, data) {
  if (data === '[DONE]') return {...turn, done: true};
  return reduceChunk(turn, JSON.parse(data));
}
