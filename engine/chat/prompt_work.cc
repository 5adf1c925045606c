// The process-wide prompt work counts (kimi/prompt_work.h).
#include "kimi/prompt_work.h"

#include <atomic>

#include "chat/prompt_work_count.h"

namespace kimi {
namespace {

std::atomic<uint64_t> g_renders{0};
std::atomic<uint64_t> g_tokenizations{0};

}  // namespace

namespace chat {

void CountPromptRender() { g_renders.fetch_add(1, std::memory_order_relaxed); }
void CountPromptTokenization() { g_tokenizations.fetch_add(1, std::memory_order_relaxed); }

}  // namespace chat

PromptWorkCounts PromptWork() {
  return PromptWorkCounts{g_renders.load(std::memory_order_relaxed), g_tokenizations.load(std::memory_order_relaxed)};
}

}  // namespace kimi
