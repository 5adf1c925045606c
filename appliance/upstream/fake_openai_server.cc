#include "upstream/fake_openai_server.h"

#include <chrono>

namespace kimi::upstream::testing {

std::string SseData(const nlohmann::json& chunk) { return "data: " + chunk.dump() + "\n\n"; }

nlohmann::json Chunk(const nlohmann::json& delta, const std::string& finish_reason) {
  return {{"id", "chatcmpl-fake"},
          {"object", "chat.completion.chunk"},
          {"created", 1},
          {"model", "kimi-k3"},
          {"choices",
           {{{"index", 0},
             {"delta", delta},
             {"finish_reason", finish_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(finish_reason)}}}}};
}

FakeOpenAiServer::FakeOpenAiServer() {
  server_.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu_);
    res.status = health_status_;
    if (!health_trickles_) return;
    // One byte every 50 ms for as long as the client reads (or the server runs).
    res.set_chunked_content_provider("text/plain", [this](size_t, httplib::DataSink& sink) {
      std::unique_lock<std::mutex> wait(mu_);
      while (!stopping_ && sink.is_writable()) {
        wait.unlock();
        if (!sink.write("x", 1)) break;
        wait.lock();
        cv_.wait_for(wait, std::chrono::milliseconds(50), [this] { return stopping_; });
      }
      return false;
    });
  });
  server_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    nlohmann::json list = {{"object", "list"}, {"data", nlohmann::json::array()}};
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& m : models_) list["data"].push_back({{"id", m}, {"object", "model"}});
    res.set_content(list.dump(), "application/json");
  });
  server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    FakeReply reply;
    {
      std::lock_guard<std::mutex> lock(mu_);
      bodies_.push_back(nlohmann::json::parse(req.body, nullptr, false));
      reply = reply_;
    }
    if (reply.stall) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_; });
      res.status = 503;
      return;
    }
    res.status = reply.status;
    res.set_chunked_content_provider(reply.content_type, [this, reply](size_t, httplib::DataSink& sink) {
      for (const std::string& piece : reply.pieces) {
        if (!sink.write(piece.data(), piece.size())) return false;
      }
      if (!reply.repeat_until_disconnect.empty()) {
        while (sink.is_writable() &&
               sink.write(reply.repeat_until_disconnect.data(), reply.repeat_until_disconnect.size())) {
          std::unique_lock<std::mutex> lock(mu_);
          if (cv_.wait_for(lock, std::chrono::milliseconds(5), [this] { return stopping_; })) break;
        }
        std::lock_guard<std::mutex> lock(mu_);
        disconnected_ = true;
        cv_.notify_all();
        return false;
      }
      sink.done();
      return true;
    });
  });
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  // stop() only acts on a running server, so the constructor returns once it runs.
  while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeOpenAiServer::~FakeOpenAiServer() { Stop(); }

void FakeOpenAiServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  server_.stop();
  if (thread_.joinable()) thread_.join();
}

void FakeOpenAiServer::SetReply(FakeReply reply) {
  std::lock_guard<std::mutex> lock(mu_);
  reply_ = std::move(reply);
}

void FakeOpenAiServer::SetHealthStatus(int status) {
  std::lock_guard<std::mutex> lock(mu_);
  health_status_ = status;
}

void FakeOpenAiServer::SetHealthTrickles(bool trickles) {
  std::lock_guard<std::mutex> lock(mu_);
  health_trickles_ = trickles;
}

void FakeOpenAiServer::SetModels(std::vector<std::string> models) {
  std::lock_guard<std::mutex> lock(mu_);
  models_ = std::move(models);
}

std::vector<nlohmann::json> FakeOpenAiServer::bodies() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bodies_;
}

int FakeOpenAiServer::chat_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(bodies_.size());
}

bool FakeOpenAiServer::WaitForDisconnect(int bound_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::milliseconds(bound_ms), [this] { return disconnected_; });
}

}  // namespace kimi::upstream::testing
