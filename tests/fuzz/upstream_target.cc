// What an upstream (`kimi-engine serve`, vLLM) answers, from the bytes of its response body
// on: the chunked framing (upstream::ChunkedDecoder, lenient, as the upstream reader runs it),
// the event stream (SseParser) and each event's chunk (ChunkNormalizer, the appliance's
// events), or a whole JSON answer (ChunkNormalizer::Consume). The first byte chooses the
// framing and the form; the rest is the body. The event stream is parsed twice, whole and in
// pieces whose sizes come from the input (reads end anywhere): both must give the same events
// and the same verdict. What the normalizer hands out must be events the encoders can write:
// calls opened before their arguments and closed once, one finish, last.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_targets.h"
#include "upstream/chunk_normalizer.h"
#include "upstream/chunked_decoder.h"
#include "upstream/sse_parser.h"

namespace kimi::fuzz {
namespace {

constexpr size_t kMaxLineBytes = 64 * 1024;

struct ParsedStream {
  bool ok = true;
  std::vector<upstream::SseEvent> events;
};

bool SameEvents(const std::vector<upstream::SseEvent>& a, const std::vector<upstream::SseEvent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].event != b[i].event || a[i].data != b[i].data) return false;
  }
  return true;
}

// Feeds `body` in pieces of 1 + piece_sizes[i] % 37 bytes (whole when `piece_sizes` is empty).
ParsedStream ParseEvents(std::string_view body, std::string_view piece_sizes) {
  ParsedStream parsed;
  upstream::SseParser parser(
      [&parsed](const upstream::SseEvent& event) {
        if (event.data.size() > kMaxLineBytes) __builtin_trap();  // the bound holds for joined data
        parsed.events.push_back(event);
        return Status::OK();
      },
      kMaxLineBytes);
  size_t at = 0;
  size_t next_piece = 0;
  while (at < body.size()) {
    size_t piece = body.size() - at;
    if (!piece_sizes.empty()) {
      piece = std::min(piece, size_t{1} + static_cast<uint8_t>(piece_sizes[next_piece++ % piece_sizes.size()]) % 37);
    }
    if (!parser.Feed(body.substr(at, piece)).ok()) {
      parsed.ok = false;
      return parsed;
    }
    at += piece;
  }
  parser.Finish();
  return parsed;
}

// The events a backend may hand the encoders: arguments only inside an open call, each call
// ended once, nothing after the finish.
void CheckEventOrder(const std::vector<api::StreamEvent>& events, bool finished) {
  std::set<int> open;
  std::set<int> ended;
  bool finish_seen = false;
  for (const api::StreamEvent& e : events) {
    if (finish_seen) __builtin_trap();
    switch (e.kind) {
      case api::StreamEventKind::kToolCallBegin:
        if (e.tool_index < 0 || open.count(e.tool_index) || ended.count(e.tool_index)) __builtin_trap();
        open.insert(e.tool_index);
        break;
      case api::StreamEventKind::kToolCallArguments:
        if (!open.count(e.tool_index)) __builtin_trap();
        break;
      case api::StreamEventKind::kToolCallEnd:
        if (!open.count(e.tool_index)) __builtin_trap();
        open.erase(e.tool_index);
        ended.insert(e.tool_index);
        break;
      case api::StreamEventKind::kFinish:
        if (e.finish_reason.empty() || !open.empty()) __builtin_trap();
        if (e.usage.prompt_tokens < 0 || e.usage.completion_tokens < 0) __builtin_trap();
        finish_seen = true;
        break;
      case api::StreamEventKind::kReasoning:
      case api::StreamEventKind::kAnswer:
        break;
    }
  }
  if (finished && !finish_seen) __builtin_trap();
}

}  // namespace

bool FuzzUpstreamStreamOnce(const uint8_t* data, size_t size) {
  if (size == 0) return false;
  const uint8_t form = data[0];
  std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (form & 1) {  // Transfer-Encoding: chunked
    upstream::ChunkedDecoder decoder(upstream::ChunkedDecoder::Framing::kLenient);
    size_t decoded = body.size();
    size_t consumed = 0;
    if (!decoder.Decode(body.data(), &decoded, &consumed).ok()) return false;
    if (decoded > body.size() || consumed > body.size()) __builtin_trap();
    body.resize(decoded);
  }

  upstream::ChunkNormalizer normalizer;
  std::vector<api::StreamEvent> events;
  if (form & 2) {  // a whole chat.completion answer
    nlohmann::json whole = nlohmann::json::parse(body, nullptr, false);
    if (whole.is_discarded() || !normalizer.Consume(whole, &events).ok()) return false;
  } else {
    ParsedStream parsed = ParseEvents(body, {});
    ParsedStream pieces = ParseEvents(body, std::string_view(reinterpret_cast<const char*>(data), size));
    if (parsed.ok != pieces.ok || (parsed.ok && !SameEvents(parsed.events, pieces.events))) __builtin_trap();
    if (!parsed.ok) return false;
    for (const upstream::SseEvent& event : parsed.events) {
      if (event.data == "[DONE]") break;
      if (!normalizer.ConsumeText(event.data, &events).ok()) return false;
    }
  }
  const bool finished = normalizer.Finish(&events).ok();
  CheckEventOrder(events, finished);
  return finished;
}

}  // namespace kimi::fuzz
