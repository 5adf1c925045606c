// kimi-bench-policy: what the policy decision step costs per request with every detector on,
// for docs/benchmarks.md. The prompt is about 32k tokens (96 KiB: English, Vietnamese and
// Chinese prose with an e-mail, phone, IBAN, card, SSN, date of birth, record number and IP
// address every few hundred bytes; 33k tokens with Kimi's ranks, 36k once redacted), one chat
// message.
//
//   BM_DecideRequest    the whole step: access rules, then redaction before the model (every
//                       built-in category, the medical record pattern and one custom pattern)
//   BM_DecideRequestWithPromptLimit/<limit>
//                       the same with max_prompt_tokens = <limit> for the caller, counted with
//                       Kimi's real tokenizer and the K3 chat format (kimi::CountPromptTokens):
//                       40000 must tokenise the whole prompt; 200000 is above the rendered
//                       prompt's byte count, so only the render is needed
//   BM_CountPromptTokens  the count alone (render and tokenise, the redacted prompt)
//   BM_Detector/<i>     one built-in detector alone over the same text (BuiltinCategories order)
//   BM_ReadingText      the text as the detectors read it (policy/reading_text.h), once
//
// The tokenizer: Kimi's 163,584 ranks from data/kimi-k3 (KimiDataDir()); should they fail to
// load, the benchmarks that count tokens are skipped, saying so.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <optional>
#include <string>

#include "kimi/chat_service.h"
#include "policy/policy_decision.h"
#include "policy/reading_text.h"
#include "kimi/kimi_data.h"

namespace kimi::policy {
namespace {

constexpr size_t kPromptBytes = 96 * 1024;  // about 33k tokens with Kimi's ranks (2.9 bytes a token)

std::string Prompt() {
  static const char* kPieces[] = {
      "The quarterly report covers revenue, costs and the outlook for the coming year. ",
      "Khách hàng yêu cầu chuyển khoản vào tài khoản GB82 WEST 1234 5698 7654 32 trước thứ Sáu. ",
      "客户的电话号码是13800138000，邮箱是zhang.san@example.cn，请尽快联系。 ",
      "Card 4111 1111 1111 1111 was declined; SSN 123-45-6789 on file, DOB: 1985-03-14. ",
      "Patient MRN-0012345 was seen by the on-call team; the server 10.20.30.40 logged it. ",
      "Please call +84 28 3822 1234 or write to support@bank.example.com with ticket EMP-00042. ",
      "Nothing sensitive here, only numbers like 2024, 3.14159 and version 1.2.3 of the tool. ",
  };
  std::string out;
  for (size_t i = 0; out.size() < kPromptBytes; ++i) out += kPieces[i % std::size(kPieces)];
  return out;
}

std::shared_ptr<ActivePolicy> EveryDetector(const auth::ServerSecret* secret) {
  auto active = std::make_shared<ActivePolicy>();
  Policy& p = active->policy;
  p.name = "bench";
  p.access.rules.push_back(AccessRule{"user", "", {"*"}});
  p.redaction.before_model = true;
  p.redaction.medical_record_pattern = R"(\bMRN[-: ]?[0-9]{6,10}\b)";
  for (std::string_view category : BuiltinCategories()) {
    p.redaction.rules.push_back({std::string(category), category == kIban ? Action::kHash : Action::kMask});
  }
  p.redaction.custom_patterns.push_back({"employee_id", R"(\bEMP-[0-9]{5}\b)", Action::kMask});
  active->redactor = std::move(Redactor::Create(p.redaction, secret).value());
  return active;
}

// Null when data/kimi-k3/tiktoken.model does not load.
const Tokenizer* BenchTokenizer() {
  static const std::optional<Tokenizer> tokenizer = []() -> std::optional<Tokenizer> {
    const std::filesystem::path real = std::filesystem::path(KimiDataDir()) / "tiktoken.model";
    Result<Tokenizer> loaded = Tokenizer::LoadFiles(real.string(), "");
    if (!loaded.ok()) return std::nullopt;
    return std::move(loaded).value();
  }();
  return tokenizer ? &*tokenizer : nullptr;
}

constexpr const char* kNoRanks = "Kimi's ranks (data/kimi-k3/tiktoken.model, or $KIMI_DATA_DIR) do not load";

PromptTokenCounter EngineCounter() {
  return [](EncodedRequestPrompt* prompt, bool chat, int64_t bound) -> Result<PromptTokens> {
    KIMI_ASSIGN_OR_RETURN(PromptTokenCount counted,
                          CountPromptTokens(*BenchTokenizer(),
                                            chat ? ServingEndpoint::kChatCompletions : ServingEndpoint::kCompletions,
                                            prompt, bound));
    return PromptTokens{counted.tokens, counted.exact};
  };
}

// The typed request of the benchmark's body, as the API hands it to the policy step.
api::ApiRequest BenchRequest() {
  Result<api::ApiRequest> parsed = api::ParseRequest(
      api::Endpoint::kChatCompletions,
      nlohmann::ordered_json{{"model", "kimi-k3"},
                             {"messages", nlohmann::ordered_json::array({{{"role", "user"}, {"content", Prompt()}}})}});
  if (!parsed.ok()) std::abort();
  return std::move(parsed).value();
}

void BM_DecideRequestWithPromptLimit(benchmark::State& state) {
  if (BenchTokenizer() == nullptr) return state.SkipWithError(kNoRanks);
  const auth::ServerSecret secret = auth::ServerSecret::FromBytes({1});
  auto active = EveryDetector(&secret);
  active->policy.access.rules[0].max_prompt_tokens = state.range(0);
  const api::ApiRequest request = BenchRequest();
  RequestFacts facts{"user", "", "kimi-k3", true, std::nullopt, EngineCounter()};
  std::string counted;
  for (auto _ : state) {
    api::ApiRequest copy = request;
    PolicyDecision d = DecideRequest(*active, facts, &copy);
    if (!d.allowed()) {
      state.SkipWithError(d.reason.ToString().c_str());
      break;
    }
    counted = d.checks.empty() ? "" : d.checks.front();
    benchmark::DoNotOptimize(copy);
  }
  state.SetLabel(counted);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kPromptBytes));
}
BENCHMARK(BM_DecideRequestWithPromptLimit)->Arg(40000)->Arg(200000)->Unit(benchmark::kMillisecond);

void BM_CountPromptTokens(benchmark::State& state) {
  if (BenchTokenizer() == nullptr) return state.SkipWithError(kNoRanks);
  const api::ApiRequest request = BenchRequest();
  int64_t tokens = 0;
  for (auto _ : state) {
    Result<EncodedRequestPrompt> prompt = RenderRequestPrompt(request.serving);
    Result<PromptTokenCount> counted =
        prompt.ok() ? CountPromptTokens(*BenchTokenizer(), ServingEndpoint::kChatCompletions, &*prompt)
                    : Result<PromptTokenCount>(prompt.status());
    tokens = counted.ok() ? counted->tokens : -1;
  }
  state.counters["prompt_tokens"] = static_cast<double>(tokens);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kPromptBytes));
}
BENCHMARK(BM_CountPromptTokens)->Unit(benchmark::kMillisecond);

void BM_DecideRequest(benchmark::State& state) {
  const auth::ServerSecret secret = auth::ServerSecret::FromBytes({1});
  auto active = EveryDetector(&secret);
  const api::ApiRequest request = BenchRequest();
  int64_t findings = 0;
  for (auto _ : state) {
    api::ApiRequest copy = request;
    PolicyDecision d = DecideRequest(*active, {"user", "", "kimi-k3", true}, &copy);
    if (!d.allowed()) {  // a refusal ends the step early: its time would not be the step's
      state.SkipWithError(d.reason.ToString().c_str());
      break;
    }
    for (const RedactionDecision& r : d.redactions) findings += r.count;
    benchmark::DoNotOptimize(copy);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kPromptBytes));
  state.counters["findings_per_request"] = static_cast<double>(findings) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_DecideRequest)->Unit(benchmark::kMillisecond);

void BM_Detector(benchmark::State& state) {
  const std::string_view category = BuiltinCategories()[static_cast<size_t>(state.range(0))];
  BuiltinDetector detector = BuiltinDetectorFor(category);
  const std::string text = Prompt();
  state.SetLabel(std::string(category));
  std::vector<Finding> found;
  for (auto _ : state) {
    found.clear();
    if (detector != nullptr) detector(text, &found);
    benchmark::DoNotOptimize(found);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_Detector)->DenseRange(0, 7)->Unit(benchmark::kMicrosecond);

// The text as the detectors read it (ReadingText), once per text they scan.
void BM_ReadingText(benchmark::State& state) {
  const std::string text = Prompt();
  for (auto _ : state) {
    ReadingText reading(text);
    benchmark::DoNotOptimize(reading.text().data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ReadingText)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kimi::policy

BENCHMARK_MAIN();
