// Throughput of the K3 prompt renderer and output parser, on the committed golden data.
// Run: ./build/engine/chat/kimi_chat_bench
#include <benchmark/benchmark.h>

#include "chat/chat_test_data.h"
#include "kimi/chat_format.h"
#include "kimi/log.h"
#include "kimi/output_parser.h"

namespace kimi {
namespace {

using chat::testing::ReadJsonFile;
using chat::testing::TestDataDir;

void BM_RenderAgenticSession(benchmark::State& state) {
  const auto golden = ReadJsonFile(TestDataDir() / "golden/65_long_agentic_session.json");
  Result<ChatRequest> request = ParseChatRequest(golden["request"]);
  if (!request.ok()) return state.SkipWithError(request.status().ToString().c_str());
  size_t bytes = 0;
  for (auto _ : state) {
    Result<RenderedPrompt> prompt = ChatFormat::Render(*request);
    bytes += prompt->text.size();
    benchmark::DoNotOptimize(prompt);
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_RenderAgenticSession);

// Parses a recorded tool-calling turn cut into pieces of `range(0)` bytes, like BPE tokens.
void BM_ParseToolCallOutput(benchmark::State& state) {
  log::Configure(log::Level::kError, log::Format::kAuto);
  const auto recorded = ReadJsonFile(TestDataDir() / "outputs/05_one_call_mapping_args.json");
  const auto tokens = SplitAtSpecialTokens(recorded["output"].get<std::string>(), SpecialTokenIds::K3(),
                                           static_cast<size_t>(state.range(0)));
  const auto generated = AsGeneratedTokens(tokens);
  for (auto _ : state) {
    auto parser = OutputParserRegistry::Create("kimi_k3");
    ParsedOutput out = ParseOutput(**parser, generated);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * generated.size()));
  state.counters["tokens"] = static_cast<double>(generated.size());
}
BENCHMARK(BM_ParseToolCallOutput)->Arg(1)->Arg(4);

}  // namespace
}  // namespace kimi
