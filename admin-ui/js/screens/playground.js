// Playground: one chat turn with a served model, streamed, with the reasoning and the answer
// shown apart, for a quick check after an update. Nothing is kept: the turn is gone when the
// operator leaves the screen. The request is an ordinary, audited /v1/chat/completions call
// made with the session.

import {call, errorOf, get} from '../api.js';
import {errorLine, field, h, replace} from '../dom.js';
import {sseData} from '../sse.js';

export function render(container) {
  const model = h('select', {id: 'play-model'});
  const prompt = h('textarea', {id: 'play-prompt', rows: 4, required: true});
  const thinking = h('input', {id: 'play-thinking', type: 'checkbox', checked: true});
  const maxTokens = h('input', {id: 'play-max-tokens', type: 'number', min: 1, max: 4096, value: 128});
  const send = h('button', {type: 'submit', class: 'primary'}, 'Send');
  const stop = h('button', {type: 'button', disabled: true}, 'Stop');
  const status = h('div', {class: 'status', id: 'play-status', role: 'status'});
  const reasoning = h('pre', {id: 'play-reasoning', class: 'stream'});
  const answer = h('pre', {id: 'play-answer', class: 'stream'});
  const form = h('form', {class: 'card', 'aria-labelledby': 'play-title'},
                 h('h2', {id: 'play-title'}, 'One chat turn'),
                 h('div', {class: 'row'}, field('Model', model), field('Output tokens at most', maxTokens)),
                 field('Message', prompt),
                 h('div', {class: 'field inline'}, thinking, h('label', {for: thinking.id}, 'Thinking')),
                 h('div', {class: 'actions'}, send, stop), status);
  container.append(form, h('div', {class: 'columns'},
                           h('section', {class: 'card', 'aria-labelledby': 'reasoning-title'},
                             h('h2', {id: 'reasoning-title'}, 'Reasoning'), reasoning),
                           h('section', {class: 'card', 'aria-labelledby': 'answer-title'},
                             h('h2', {id: 'answer-title'}, 'Answer'), answer)));
  let controller = null;

  get('/v1/models').then((list) => {
    replace(model, (list.data || []).map((m) => h('option', {value: m.id}, m.id)));
    if (!model.options.length) replace(status, h('p', {class: 'unavailable'}, 'No model is served.'));
  }).catch((e) => replace(status, errorLine(e, 'The model list')));

  async function turn() {
    replace(reasoning);
    replace(answer);
    replace(status, 'Waiting for the first token…');
    controller = new AbortController();
    send.disabled = true;
    stop.disabled = false;
    const request = {model: model.value, stream: true, stream_options: {include_usage: true},
                     max_tokens: Number(maxTokens.value) || 128,
                     thinking: {type: thinking.checked ? 'enabled' : 'disabled'},
                     messages: [{role: 'user', content: prompt.value}]};
    let finish = null;
    let usage = null;
    try {
      const res = await call('POST', '/v1/chat/completions', {body: request, as: 'response', signal: controller.signal});
      if (!res.ok) throw await errorOf(res);
      replace(status, 'Streaming…');
      for await (const data of sseData(res.body)) {
        if (data === '[DONE]') break;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message);
        if (chunk.usage) usage = chunk.usage;
        for (const choice of chunk.choices || []) {
          const delta = choice.delta || {};
          if (delta.reasoning_content) reasoning.append(delta.reasoning_content);
          if (delta.content) answer.append(delta.content);
          if (choice.finish_reason) finish = choice.finish_reason;
        }
      }
      replace(status, h('p', {id: 'play-finished'}, 'Finished: ' + (finish || 'stream ended') +
                        (usage ? ', ' + usage.prompt_tokens + ' prompt and ' + usage.completion_tokens +
                                 ' completion tokens' : '') + '.'));
    } catch (e) {
      replace(status, e.name === 'AbortError' ? h('p', {}, 'Stopped.') : errorLine(e, 'The request'));
    } finally {
      controller = null;
      send.disabled = false;
      stop.disabled = true;
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    turn();
  });
  stop.addEventListener('click', () => controller && controller.abort());
  return () => controller && controller.abort();
}
