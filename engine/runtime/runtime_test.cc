// Runtime tests on a k3-nano model synthesised into a temp dir: 32 concurrent requests of
// different lengths produce exactly the tokens each produces alone (greedy); cancelling half of
// them frees their memory (runtime counters) and leaves the rest correct; a request larger than
// the memory budget gets a clear error while others complete; stop strings and stop token ids
// through the scheduler with a fake detokeniser; the same seed gives the same sampled tokens.
//
// The exactness tests run on the scalar reference kernels (KIMI_KERNELS=scalar, set before the
// first kernel call, as in model_test.cc): the AVX2 kernels quantise activations, and a
// near-tied argmax can then flip with the composition of the batch.
#include "kimi/runtime.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "io/test_util.h"

namespace kimi {
namespace {

namespace fs = std::filesystem;

const bool kScalarKernels = [] { return setenv("KIMI_KERNELS", "scalar", /*overwrite=*/0) == 0; }();

struct Outcome {
  std::vector<int32_t> tokens;
  std::string text;
  bool finished = false;
  FinishReason reason = FinishReason::kStop;
  RequestStats stats;
  Status error;
};

Outcome Collect(RequestHandle& handle) {
  Outcome out;
  GenerationEvent event;
  while (handle.Next(&event)) {
    switch (event.kind) {
      case GenerationEvent::Kind::kToken:
        out.tokens.push_back(event.token);
        out.text += event.text;
        break;
      case GenerationEvent::Kind::kFinish:
        out.finished = true;
        out.reason = event.finish_reason;
        out.stats = event.stats;
        break;
      case GenerationEvent::Kind::kError:
        out.error = event.error;
        break;
    }
  }
  return out;
}

std::vector<int32_t> Tokens(int n, uint32_t seed, int64_t vocab) {
  std::vector<int32_t> t(n);
  for (auto& x : t) x = int32_t((seed = seed * 1664525u + 1013904223u) >> 8) % int32_t(vocab);
  return t;
}

GenerationRequest Greedy(std::vector<int32_t> prompt, int64_t max_tokens) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  return r;
}

// "<id>" per token: every piece is distinct ASCII, so stop strings can be placed across pieces.
class FakeDetokenizer : public Detokenizer {
 public:
  class Stream : public TokenTextStream {
   public:
    Status Push(int32_t id, std::string* text) override {
      *text += "<" + std::to_string(id) + ">";
      return Status::OK();
    }
    void Flush(std::string*) override {}
  };
  std::unique_ptr<TokenTextStream> NewStream() const override { return std::make_unique<Stream>(); }
};

class RuntimeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(kScalarKernels);
    auto dir = testing_util::WriteTestModel("runtime_test", "k3-nano", /*seed=*/7);
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    dir_ = new std::string(std::move(dir).value());
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }

  static std::unique_ptr<Runtime> Start(RuntimeOptions options) {
    ModelOptions model_options;
    model_options.threads = 2;
    model_options.mla_page_tokens = 16;
    auto model = Model::Load(*dir_, model_options);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    auto runtime = Runtime::Create(std::move(model).value(), std::move(options));
    EXPECT_TRUE(runtime.ok()) << runtime.status().ToString();
    return std::move(runtime).value();
  }

  // Each request run by itself, one after another.
  static std::vector<Outcome> Alone(const std::vector<GenerationRequest>& requests) {
    auto runtime = Start({});
    std::vector<Outcome> out;
    for (const auto& r : requests) {
      auto handle = runtime->Submit(r);
      out.push_back(Collect(*handle));
    }
    return out;
  }

  // 32 requests: prompts of 1..64 tokens, 1..16 output tokens.
  static std::vector<GenerationRequest> Mixed(int64_t vocab) {
    std::vector<GenerationRequest> requests;
    for (int i = 0; i < 32; ++i) requests.push_back(Greedy(Tokens(1 + (i * 37) % 64, 500 + i, vocab), 1 + (i * 7) % 16));
    return requests;
  }
  // Alone(Mixed()), computed once for the tests that share it.
  static const std::vector<Outcome>& MixedAlone(int64_t vocab) {
    static const std::vector<Outcome> alone = Alone(Mixed(vocab));
    return alone;
  }

  // The counters once the scheduler has published the step that ended the last request.
  static RuntimeCounters IdleCounters(const Runtime& runtime) {
    RuntimeCounters c = runtime.Counters();
    while (c.running != 0 || c.waiting != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      c = runtime.Counters();
    }
    return c;
  }

  static std::string* dir_;
};
std::string* RuntimeTest::dir_ = nullptr;

TEST_F(RuntimeTest, ConcurrentRequestsProduceWhatEachProducesAlone) {
  RuntimeOptions options;
  options.max_num_seqs = 12;            // the rest wait and join as others leave
  options.max_num_batched_tokens = 40;  // long prompts prefill in chunks beside the decodes
  auto runtime = Start(options);
  const auto requests = Mixed(runtime->model().config().vocab_size);
  const auto& alone = MixedAlone(runtime->model().config().vocab_size);

  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (const auto& r : requests) handles.push_back(runtime->Submit(r));
  for (size_t i = 0; i < requests.size(); ++i) {
    const Outcome together = Collect(*handles[i]);
    ASSERT_TRUE(together.error.ok()) << together.error.ToString();
    ASSERT_TRUE(together.finished);
    EXPECT_EQ(together.reason, FinishReason::kLength);
    EXPECT_EQ(int64_t(together.tokens.size()), requests[i].max_tokens);
    EXPECT_EQ(together.tokens, alone[i].tokens) << "request " << i;
    EXPECT_EQ(together.stats.prompt_tokens, int64_t(requests[i].prompt.size()));
    EXPECT_EQ(together.stats.completion_tokens, requests[i].max_tokens);
    EXPECT_EQ(together.stats.inter_token_seconds.size(), size_t(requests[i].max_tokens - 1));
  }
  handles.clear();
  const RuntimeCounters c = IdleCounters(*runtime);
  EXPECT_EQ(c.requests_finished, 32);
  EXPECT_EQ(c.running, 0);
  EXPECT_EQ(c.memory_reserved_bytes, 0u);
  EXPECT_EQ(c.memory_used_bytes, 0u);
  int64_t expected_tokens = 0;
  for (const auto& r : requests) expected_tokens += r.max_tokens;
  EXPECT_EQ(c.tokens_generated, expected_tokens);
}

TEST_F(RuntimeTest, CancellingHalfFreesTheirMemoryAndTheRestStayCorrect) {
  RuntimeOptions options;
  options.max_num_seqs = 32;
  options.max_num_batched_tokens = 64;
  auto runtime = Start(options);
  auto requests = Mixed(runtime->model().config().vocab_size);
  for (size_t i = 0; i < requests.size(); i += 2) requests[i].max_tokens = 400;  // cancelled long before
  std::vector<GenerationRequest> kept;
  for (size_t i = 1; i < requests.size(); i += 2) kept.push_back(requests[i]);
  const auto& alone_all = MixedAlone(runtime->model().config().vocab_size);
  std::vector<Outcome> alone;
  for (size_t i = 1; i < requests.size(); i += 2) alone.push_back(alone_all[i]);

  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (const auto& r : requests) handles.push_back(runtime->Submit(r));
  uint64_t kept_bytes = 0;
  for (const auto& r : kept) kept_bytes += runtime->StateBytesFor(int64_t(r.prompt.size()) + r.max_tokens);

  // Cancel each even request mid-stream: after its first token.
  for (size_t i = 0; i < requests.size(); i += 2) {
    GenerationEvent event;
    ASSERT_TRUE(handles[i]->Next(&event));
    ASSERT_EQ(event.kind, GenerationEvent::Kind::kToken);
    handles[i]->Cancel();
  }
  for (size_t i = 0; i < requests.size(); i += 2) {
    const Outcome cancelled = Collect(*handles[i]);
    ASSERT_TRUE(cancelled.finished);
    EXPECT_EQ(cancelled.reason, FinishReason::kCancelled);
    EXPECT_LT(cancelled.stats.completion_tokens, 400);
  }
  // The finish events are pushed inside a step; wait for that step's counters.
  const RuntimeCounters before = runtime->Counters();
  RuntimeCounters c = before;
  while (!(c.steps > before.steps || (c.running == 0 && c.waiting == 0))) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    c = runtime->Counters();
  }
  EXPECT_EQ(c.requests_cancelled, 16);
  EXPECT_LE(c.running, 16);
  EXPECT_LE(c.memory_reserved_bytes, kept_bytes);
  EXPECT_LE(c.memory_used_bytes, kept_bytes);

  for (size_t k = 0; k < kept.size(); ++k) {
    const Outcome rest = Collect(*handles[2 * k + 1]);
    ASSERT_TRUE(rest.error.ok()) << rest.error.ToString();
    EXPECT_EQ(rest.reason, FinishReason::kLength);
    EXPECT_EQ(rest.tokens, alone[k].tokens) << "request " << 2 * k + 1;
  }
  handles.clear();
  c = IdleCounters(*runtime);
  EXPECT_EQ(c.memory_reserved_bytes, 0u);
  EXPECT_EQ(c.memory_used_bytes, 0u);
  EXPECT_EQ(c.requests_finished, 16);
}

TEST_F(RuntimeTest, RequestLargerThanTheBudgetGetsAClearErrorWhileOthersComplete) {
  const int64_t V = Start({})->model().config().vocab_size;
  const uint64_t per_request = Start({})->StateBytesFor(48);
  RuntimeOptions options;
  options.memory_budget_bytes = 2 * per_request;  // two at a time; the rest wait for memory
  auto runtime = Start(options);

  std::vector<GenerationRequest> small;
  for (int i = 0; i < 4; ++i) small.push_back(Greedy(Tokens(20 + i, 900 + i, V), 24 - i));
  const auto alone = Alone(small);
  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (const auto& r : small) handles.push_back(runtime->Submit(r));
  auto huge = runtime->Submit(Greedy(Tokens(30, 1, V), 1000000));

  const Outcome refused = Collect(*huge);
  EXPECT_FALSE(refused.finished);
  EXPECT_EQ(refused.error.code(), Status::Code::kResourceExhausted);
  EXPECT_NE(refused.error.message().find("memory budget"), std::string::npos) << refused.error.message();
  for (size_t i = 0; i < small.size(); ++i) {
    const Outcome out = Collect(*handles[i]);
    ASSERT_TRUE(out.error.ok()) << out.error.ToString();
    EXPECT_EQ(out.tokens, alone[i].tokens) << "request " << i;
  }
  const RuntimeCounters c = IdleCounters(*runtime);
  EXPECT_EQ(c.requests_refused, 1);
  EXPECT_EQ(c.requests_finished, 4);
}

// A budget that holds the worst case of only a few requests at once: admission reserves the
// context and first decode of each, so more run than the worst case allows; when a decode needs
// a page the budget cannot give, the newest sequence is preempted and later recomputes its
// prompt and generated tokens. Every request still produces exactly what it produces alone, and
// the reservations and the prefix cache never exceed the budget.
TEST_F(RuntimeTest, TightBudgetPreemptsTheNewestAndEveryRequestStillProducesWhatItProducesAlone) {
  int64_t vocab = 0;
  uint64_t slot = 0, page = 0;
  {
    auto probe = Start({});
    vocab = probe->model().config().vocab_size;
    slot = probe->StateBytesFor(0);
    page = probe->StateBytesFor(1) - slot;
  }
  // Prompts of 1..40 tokens and 20..36 more: at most 5 pages of 16 tokens each, 1..3 of them at
  // admission. Room for three KDA slots and 6 pages: three run, and they outgrow it.
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < 10; ++i) requests.push_back(Greedy(Tokens(1 + (i * 23) % 40, 2100 + i, vocab), 20 + (i * 5) % 17));
  const auto alone = Alone(requests);

  RuntimeOptions options;
  options.max_num_seqs = 10;
  options.max_num_batched_tokens = 48;
  options.memory_budget_bytes = 3 * slot + 6 * page;
  auto runtime = Start(options);
  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (const auto& r : requests) handles.push_back(runtime->Submit(r));
  for (RuntimeCounters c = runtime->Counters(); c.requests_finished < int64_t(requests.size()); c = runtime->Counters()) {
    ASSERT_LE(c.memory_reserved_bytes + c.prefix_cache_bytes, options.memory_budget_bytes);
    ASSERT_LE(uint64_t(c.mla_pages_used) * c.mla_page_bytes, options.memory_budget_bytes);
    ASSERT_EQ(c.requests_refused + c.requests_cancelled, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    const Outcome together = Collect(*handles[i]);
    ASSERT_TRUE(together.error.ok()) << together.error.ToString();
    EXPECT_EQ(together.reason, FinishReason::kLength);
    EXPECT_EQ(together.tokens, alone[i].tokens) << "request " << i;
    EXPECT_EQ(together.stats.completion_tokens, requests[i].max_tokens);
    EXPECT_EQ(together.stats.inter_token_seconds.size(), size_t(requests[i].max_tokens - 1));
  }
  handles.clear();
  const RuntimeCounters c = IdleCounters(*runtime);
  EXPECT_GT(c.preemptions, 0);
  EXPECT_EQ(c.requests_finished, int64_t(requests.size()));
  EXPECT_EQ(c.memory_reserved_bytes, 0u);
  EXPECT_EQ(c.kda_slots_used, 0);
  EXPECT_EQ(c.end_to_end.count, int64_t(requests.size()));
  EXPECT_EQ(c.queue_time.count, int64_t(requests.size()));  // once per request, not per admission
  int64_t expected_tokens = 0;
  for (const auto& r : requests) expected_tokens += r.max_tokens;
  EXPECT_EQ(c.tokens_generated, expected_tokens);  // recomputed tokens are not emitted twice
  std::printf("preemptions: %lld, prompt tokens processed: %lld\n", (long long)c.preemptions,
              (long long)c.prompt_tokens_processed);
}

// A preempted request that is cancelled while it waits to be readmitted ends cancelled, and
// the others are unaffected.
TEST_F(RuntimeTest, CancellingWhileWaitingEndsTheRequestAndLeavesTheRestCorrect) {
  int64_t vocab = 0;
  uint64_t slot = 0, page = 0;
  {
    auto probe = Start({});
    vocab = probe->model().config().vocab_size;
    slot = probe->StateBytesFor(0);
    page = probe->StateBytesFor(1) - slot;
  }
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < 5; ++i) requests.push_back(Greedy(Tokens(8 + 4 * i, 3100 + i, vocab), 24));
  const auto alone = Alone(requests);
  RuntimeOptions options;
  options.max_num_seqs = 5;
  options.max_num_batched_tokens = 48;
  options.memory_budget_bytes = 2 * slot + 5 * page;
  auto runtime = Start(options);
  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (const auto& r : requests) handles.push_back(runtime->Submit(r));
  handles.back()->Cancel();  // waiting, running or preempted: it ends cancelled all the same
  const Outcome cancelled = Collect(*handles.back());
  ASSERT_TRUE(cancelled.finished);
  EXPECT_EQ(cancelled.reason, FinishReason::kCancelled);
  for (size_t i = 0; i + 1 < requests.size(); ++i) {
    const Outcome out = Collect(*handles[i]);
    ASSERT_TRUE(out.error.ok()) << out.error.ToString();
    EXPECT_EQ(out.tokens, alone[i].tokens) << "request " << i;
  }
  handles.clear();
  const RuntimeCounters c = IdleCounters(*runtime);
  EXPECT_EQ(c.requests_finished, int64_t(requests.size()) - 1);
  EXPECT_EQ(c.requests_cancelled, 1);
  EXPECT_EQ(c.memory_reserved_bytes, 0u);
}

// A repeated system prompt: the requests after the first reuse its cached MLA pages and KDA
// snapshot (counted in the counters) and produce the tokens they produce without the cache.
TEST_F(RuntimeTest, RepeatedSystemPromptHitsThePrefixCacheWithTheSameTokens) {
  const int64_t vocab = [] {
    auto probe = Start({});
    return probe->model().config().vocab_size;
  }();
  const std::vector<int32_t> system = Tokens(50, 900, vocab);  // 3 full pages of 16 tokens
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < 4; ++i) {
    std::vector<int32_t> prompt = system;
    const auto user = Tokens(3 + 5 * i, 950 + i, vocab);
    prompt.insert(prompt.end(), user.begin(), user.end());
    requests.push_back(Greedy(std::move(prompt), 8));
  }
  std::vector<Outcome> uncached;
  {
    RuntimeOptions options;
    options.prefix_caching = false;
    auto runtime = Start(options);
    for (const auto& r : requests) uncached.push_back(Collect(*runtime->Submit(r)));
    const RuntimeCounters c = IdleCounters(*runtime);
    EXPECT_EQ(c.prefix_cache_queries, 0);
    EXPECT_EQ(c.prefix_cache_bytes, 0u);
  }

  RuntimeOptions options;
  options.max_num_seqs = 4;
  options.max_num_batched_tokens = 24;  // chunks stop at page boundaries 16, 32, 48
  auto runtime = Start(options);
  const Outcome first = Collect(*runtime->Submit(requests[0]));
  ASSERT_TRUE(first.error.ok()) << first.error.ToString();
  EXPECT_EQ(first.tokens, uncached[0].tokens);
  RuntimeCounters c = IdleCounters(*runtime);
  EXPECT_EQ(c.prefix_cache_hits, 0);
  EXPECT_GE(c.prefix_cache_pages, 3);
  EXPECT_GT(c.prefix_cache_bytes, 0u);

  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (size_t i = 1; i < requests.size(); ++i) handles.push_back(runtime->Submit(requests[i]));
  for (size_t i = 1; i < requests.size(); ++i) {
    const Outcome cached = Collect(*handles[i - 1]);
    ASSERT_TRUE(cached.error.ok()) << cached.error.ToString();
    EXPECT_EQ(cached.tokens, uncached[i].tokens) << "request " << i;
  }
  handles.clear();
  c = IdleCounters(*runtime);
  EXPECT_EQ(c.prefix_cache_queries, 4);
  EXPECT_EQ(c.prefix_cache_hits, 3);
  EXPECT_EQ(c.prefix_cache_hit_tokens, 3 * 48);  // the three full pages of the system prompt
  EXPECT_EQ(c.memory_reserved_bytes, 0u);
  EXPECT_EQ(c.mla_pages_used, c.prefix_cache_pages);  // what is left in the pool is the cache's
  EXPECT_EQ(c.kda_slots_used, 0);
  EXPECT_EQ(c.time_to_first_token.count, 4);
  EXPECT_EQ(c.inter_token.count, 4 * 7);
}

// The same system prompt sent on behalf of another caller (another prefix-cache scope) finds
// nothing cached: a hit would answer sooner and tell that caller what the first one sent. A
// second request of the first caller still hits.
TEST_F(RuntimeTest, ACachedPrefixIsReusedOnlyWithinItsScope) {
  auto runtime = Start({});
  const int64_t vocab = runtime->model().config().vocab_size;
  std::vector<int32_t> prompt = Tokens(50, 900, vocab);
  const auto user = Tokens(4, 950, vocab);
  prompt.insert(prompt.end(), user.begin(), user.end());
  GenerationRequest alice = Greedy(prompt, 4);
  alice.prefix_cache_scope = PrefixCacheScope("key:key_alice");
  GenerationRequest bob = alice;
  bob.prefix_cache_scope = PrefixCacheScope("key:key_bob");
  const Outcome first = Collect(*runtime->Submit(alice));
  ASSERT_TRUE(first.error.ok()) << first.error.ToString();
  const Outcome other = Collect(*runtime->Submit(bob));
  ASSERT_TRUE(other.error.ok()) << other.error.ToString();
  EXPECT_EQ(other.tokens, first.tokens);
  EXPECT_EQ(IdleCounters(*runtime).prefix_cache_hits, 0);
  const Outcome again = Collect(*runtime->Submit(alice));
  EXPECT_EQ(again.tokens, first.tokens);
  EXPECT_EQ(IdleCounters(*runtime).prefix_cache_hits, 1);
  EXPECT_NE(PrefixCacheScope("key:key_alice"), PrefixCacheScope("key:key_bob"));
  EXPECT_EQ(PrefixCacheScope(""), 0u);
}

// When the budget is full, the prefix cache gives its memory back (LRU) to admit a request,
// which still produces its own tokens.
TEST_F(RuntimeTest, PrefixCacheIsEvictedWhenARequestNeedsItsMemory) {
  uint64_t one_request = 0;
  int64_t vocab = 0;
  {
    auto probe = Start({});
    vocab = probe->model().config().vocab_size;
    one_request = probe->StateBytesFor(64 + 4);
  }
  const auto a = Greedy(Tokens(64, 1200, vocab), 4);
  const auto b = Greedy(Tokens(64, 1300, vocab), 4);
  std::vector<Outcome> uncached;
  {
    RuntimeOptions options;
    options.prefix_caching = false;
    auto runtime = Start(options);
    uncached.push_back(Collect(*runtime->Submit(a)));
    uncached.push_back(Collect(*runtime->Submit(b)));
  }
  RuntimeOptions options;
  options.memory_budget_bytes = one_request;  // one request at a time, nothing left over
  auto runtime = Start(options);
  const Outcome first = Collect(*runtime->Submit(a));
  RuntimeCounters c = IdleCounters(*runtime);
  EXPECT_GT(c.prefix_cache_bytes, 0u);
  EXPECT_LE(c.prefix_cache_bytes, options.memory_budget_bytes);
  const Outcome second = Collect(*runtime->Submit(b));
  ASSERT_TRUE(first.error.ok()) << first.error.ToString();
  ASSERT_TRUE(second.error.ok()) << second.error.ToString();
  EXPECT_EQ(first.tokens, uncached[0].tokens);
  EXPECT_EQ(second.tokens, uncached[1].tokens);
  c = IdleCounters(*runtime);
  EXPECT_GT(c.prefix_cache_evictions, 0);
  EXPECT_LE(c.prefix_cache_bytes, options.memory_budget_bytes);
  EXPECT_LE(uint64_t(c.mla_pages_used) * c.mla_page_bytes, options.memory_budget_bytes);
}

TEST_F(RuntimeTest, InvalidRequestsGetAnErrorEvent) {
  auto runtime = Start({});
  EXPECT_EQ(Collect(*runtime->Submit(Greedy({}, 4))).error.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(Collect(*runtime->Submit(Greedy({-1}, 4))).error.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(Collect(*runtime->Submit(Greedy({1}, 0))).error.code(), Status::Code::kInvalidArgument);
}

TEST_F(RuntimeTest, StopStringsAcrossTokensAndStopTokenIds) {
  RuntimeOptions options;
  options.detokenizer = std::make_shared<FakeDetokenizer>();
  auto runtime = Start(options);
  const int64_t V = runtime->model().config().vocab_size;
  const GenerationRequest base = Greedy(Tokens(12, 77, V), 12);
  const Outcome full = Collect(*runtime->Submit(base));
  ASSERT_EQ(full.tokens.size(), 12u);
  std::string expected_text;
  for (int32_t id : full.tokens) expected_text += "<" + std::to_string(id) + ">";
  EXPECT_EQ(full.text, expected_text);

  // A stop string made of the end of token 4's text and the start of token 5's.
  GenerationRequest stopped = base;
  const std::string stop = std::to_string(full.tokens[4]) + "><" + std::to_string(full.tokens[5]).substr(0, 1);
  stopped.stop = {stop};
  const Outcome out = Collect(*runtime->Submit(stopped));
  ASSERT_TRUE(out.finished);
  EXPECT_EQ(out.reason, FinishReason::kStop);
  EXPECT_EQ(out.text, expected_text.substr(0, expected_text.find(stop)));
  EXPECT_LE(out.tokens.size(), 6u);

  GenerationRequest by_id = base;
  by_id.stop_token_ids = {full.tokens[3]};
  const Outcome eos = Collect(*runtime->Submit(by_id));
  const size_t first = size_t(std::find(full.tokens.begin(), full.tokens.end(), full.tokens[3]) - full.tokens.begin());
  EXPECT_EQ(eos.reason, FinishReason::kStop);
  EXPECT_EQ(eos.tokens.size(), first + 1);
  EXPECT_EQ(eos.text.find("<" + std::to_string(full.tokens[3]) + ">"), std::string::npos);  // no stop-token text
}

TEST_F(RuntimeTest, SameSeedSameSampledTokensWhenBatchedTogether) {
  RuntimeOptions options;
  auto runtime = Start(options);
  GenerationRequest r = Greedy(Tokens(9, 3, runtime->model().config().vocab_size), 16);
  r.sampling.temperature = 1.0f;
  r.sampling.seed = 1234;
  r.sampling.top_logprobs = 2;
  auto a = runtime->Submit(r);
  auto b = runtime->Submit(r);
  const Outcome oa = Collect(*a), ob = Collect(*b);
  EXPECT_EQ(oa.tokens, ob.tokens);
  EXPECT_EQ(oa.tokens.size(), 16u);
}

// Allows only the token after the last one generated (starting at `first`), modulo the vocabulary.
class CountingConstraint : public TokenConstraint {
 public:
  explicit CountingConstraint(int32_t first) : first_(first) {}
  Status FillMask(std::span<const int32_t> generated, int64_t tokens_left, TokenMask* mask) override {
    budgets.push_back(tokens_left);
    const int32_t next = generated.empty() ? first_ : int32_t((generated.back() + 1) % mask->vocab_size());
    for (int64_t i = 0; i < mask->vocab_size(); ++i) {
      if (i != next) mask->Disallow(i);
    }
    return Status::OK();
  }

  std::vector<int64_t> budgets;  // tokens_left at each call

 private:
  int32_t first_;
};

class FailingConstraint : public TokenConstraint {
 public:
  Status FillMask(std::span<const int32_t>, int64_t, TokenMask*) override { return Status::InvalidArgument("grammar rejects"); }
};

TEST_F(RuntimeTest, TokenConstraintDecidesTheTokens) {
  auto runtime = Start({});
  const int64_t V = runtime->model().config().vocab_size;
  GenerationRequest r = Greedy(Tokens(7, 11, V), 5);
  r.sampling.temperature = 1.0f;
  auto counting = std::make_shared<CountingConstraint>(int32_t(V - 2));
  r.constraint = counting;
  const Outcome out = Collect(*runtime->Submit(r));
  EXPECT_EQ(out.tokens, (std::vector<int32_t>{int32_t(V - 2), int32_t(V - 1), 0, 1, 2}));
  EXPECT_EQ(counting->budgets, (std::vector<int64_t>{5, 4, 3, 2, 1}));

  r.constraint = std::make_shared<FailingConstraint>();
  const Outcome failed = Collect(*runtime->Submit(r));
  EXPECT_EQ(failed.error.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(failed.error.message().find("grammar rejects"), std::string::npos);
  EXPECT_EQ(IdleCounters(*runtime).memory_reserved_bytes, 0u);
}

}  // namespace
}  // namespace kimi
