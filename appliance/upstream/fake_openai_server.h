// FakeOpenAiServer (tests only): an in-process HTTP server on a loopback port that plays an
// OpenAI-compatible upstream with scripted replies. It stands in for vLLM where the tests need
// vLLM's quirks that `kimi-engine serve` does not have (a `reasoning` field, reasoning and
// content in one delta, whole tool calls, SSE split at arbitrary bytes, comments), and for
// failures no healthy worker produces on demand (refused connections, 4xx/5xx, silence, a
// stream cut before its end).
// Public header of upstream/: the tests of other folders use it too.
// Owns: the httplib server and its listening thread.
// Thread safety: setters and readers may be called from any thread while requests run.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace kimi::upstream::testing {

struct FakeReply {
  int status = 200;
  std::string content_type = "text/event-stream";
  std::vector<std::string> pieces;  // written as separate chunks, in order
  // After the pieces, keep writing this piece until the client disconnects.
  std::string repeat_until_disconnect;
  bool stall = false;  // send nothing until the server stops
};

// "data: <json>\n\n"
std::string SseData(const nlohmann::json& chunk);
// One chat.completion.chunk with the given delta and finish_reason (null when empty).
nlohmann::json Chunk(const nlohmann::json& delta, const std::string& finish_reason = "");

class FakeOpenAiServer {
 public:
  FakeOpenAiServer();
  ~FakeOpenAiServer();
  FakeOpenAiServer(const FakeOpenAiServer&) = delete;
  FakeOpenAiServer& operator=(const FakeOpenAiServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  void SetReply(FakeReply reply);
  void SetHealthStatus(int status);
  // GET /health answers one byte at a time without end.
  void SetHealthTrickles(bool trickles);
  void SetModels(std::vector<std::string> models);

  std::vector<nlohmann::json> bodies() const;  // request bodies received, in order
  int chat_requests() const;
  // Blocks until a repeating reply saw its client disconnect (or the bound passes).
  bool WaitForDisconnect(int bound_ms = 10'000);
  void Stop();

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  FakeReply reply_;                   // guarded by mu_
  int health_status_ = 200;           // guarded by mu_
  bool health_trickles_ = false;      // guarded by mu_
  std::vector<std::string> models_ = {"kimi-k3"};  // guarded by mu_
  std::vector<nlohmann::json> bodies_;  // guarded by mu_
  bool disconnected_ = false;         // guarded by mu_
  bool stopping_ = false;             // guarded by mu_
};

}  // namespace kimi::upstream::testing
