// Conformance through the official `openai` npm client (v4 to v6): chat completions, streaming,
// tools and structured output against the real daemon. Started by run_openai_client.py, which
// installs the package and the daemon; reads KIMI_BASE_URL, KIMI_MODEL, KIMI_API_KEY and
// KIMI_CHECKS: "api" (requests, errors, streaming) or "constrained" (forced tool calls and
// json_schema answers, which need constrained decoding with a random-weight model).
// Exits 0 when every check of the group passed, 1 otherwise, printing one line per check.
import assert from "node:assert/strict";
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: process.env.KIMI_BASE_URL,
  apiKey: process.env.KIMI_API_KEY || "unused",
  maxRetries: 0,
  timeout: 120_000,
});
const model = process.env.KIMI_MODEL;
const ask = [{ role: "user", content: "Say 'OK' and nothing else." }];
// Enums keep the instances bounded, so a constrained random model finishes within max_tokens.
// Tool calls get 160 tokens: the demo tokenizer spells K3's tool-call markup (call tool="..."
// index="0", json type="object") in many small tokens where the K3 tokenizer needs few.
const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the weather of a city.",
    parameters: { type: "object", properties: { city: { type: "string", enum: ["Beijing", "Paris"] } },
                  required: ["city"], additionalProperties: false },
  },
};

const group = process.env.KIMI_CHECKS || "api";
const checks = [];
function check(name, fn, checkGroup = "api") {
  if (checkGroup === group) checks.push({ name, fn });
}

check("chat completion answers with one assistant message and usage", async () => {
  const completion = await client.chat.completions.create({ model, messages: ask, max_tokens: 4 });
  assert.equal(completion.object, "chat.completion");
  assert.equal(completion.choices.length, 1);
  assert.equal(completion.choices[0].message.role, "assistant");
  assert.ok(completion.usage.prompt_tokens > 0);
});

check("thinking controls pass through extra body fields", async () => {
  for (const extra of [{ thinking: { type: "enabled", keep: "all", effort: "low" } },
                       { chat_template_kwargs: { thinking: false } }]) {
    const completion = await client.chat.completions.create({ model, messages: ask, max_tokens: 4, ...extra });
    assert.equal(completion.choices.length, 1);
  }
});

check("temperature 2.0 is a BadRequestError naming temperature", async () => {
  await assert.rejects(
    client.chat.completions.create({ model, messages: ask, temperature: 2.0 }),
    (err) => {
      assert.ok(err instanceof OpenAI.BadRequestError, `got ${err && err.constructor && err.constructor.name}`);
      assert.equal(err.status, 400);
      assert.match(err.message, /temperature/);
      if (err.param !== null && err.param !== undefined) assert.equal(err.param, "temperature");
      return true;
    });
});

check("tool_choice required without tools is a BadRequestError", async () => {
  await assert.rejects(client.chat.completions.create({ model, messages: ask, tool_choice: "required" }),
                       OpenAI.BadRequestError);
});

check("streaming: role first, usage once at the end, chunks with one id", async () => {
  const stream = await client.chat.completions.create({
    model, messages: ask, max_tokens: 8, stream: true, stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.ok(chunks.length >= 2, `only ${chunks.length} chunks`);
  assert.equal(chunks[0].choices[0].delta.role, "assistant");
  assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
  const last = chunks[chunks.length - 1];
  assert.deepEqual(last.choices, []);
  assert.ok(last.usage && last.usage.completion_tokens >= 1);
  const finishes = chunks.flatMap((c) => c.choices).filter((c) => c.finish_reason);
  assert.equal(finishes.length, 1);
});

check("tools: required forces a call of the declared tool with JSON arguments", async () => {
  const completion = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "What is the weather in Beijing?" }],
    tools: [weatherTool], tool_choice: "required", max_tokens: 160,
  });
  const choice = completion.choices[0];
  assert.equal(choice.finish_reason, "tool_calls");
  const call = choice.message.tool_calls[0];
  assert.equal(call.type, "function");
  assert.equal(call.function.name, "get_weather");
  JSON.parse(call.function.arguments);
}, "constrained");

check("tools streamed: the joined argument chunks are JSON", async () => {
  const stream = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "What is the weather in Beijing?" }],
    tools: [weatherTool], tool_choice: "required", max_tokens: 160, stream: true,
  });
  let name = "";
  let args = "";
  let finish = null;
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      for (const call of choice.delta.tool_calls || []) {
        if (call.function && call.function.name) name = call.function.name;
        if (call.function && call.function.arguments) args += call.function.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  assert.equal(name, "get_weather");
  assert.equal(finish, "tool_calls");
  JSON.parse(args);
}, "constrained");

check("structured output: json_schema answers compact JSON with the required key", async () => {
  const completion = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "Is Beijing the capital of China? Answer in JSON." }],
    max_tokens: 64, thinking: { type: "disabled" },
    response_format: {
      type: "json_schema",
      json_schema: {
        name: "capital_answer", strict: true,
        schema: { type: "object", properties: { capital: { type: "string", enum: ["Beijing", "Shanghai"] } },
                  required: ["capital"], additionalProperties: false },
      },
    },
  });
  const content = completion.choices[0].message.content;
  assert.ok(!/[\n\t]/.test(content), `not compact: ${JSON.stringify(content)}`);
  const value = JSON.parse(content);
  assert.equal(typeof value.capital, "string");
}, "constrained");

let failed = 0;
for (const { name, fn } of checks) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (err) {
    failed += 1;
    console.log(`FAIL ${name}\n     ${String(err && err.stack ? err.stack : err).split("\n").slice(0, 4).join("\n     ")}`);
  }
}
console.log(`${checks.length - failed}/${checks.length} checks passed`);
process.exit(failed === 0 ? 0 : 1);
