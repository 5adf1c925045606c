// EmbeddedBackend: the in-process engine as an api::Backend. A request's body goes to
// ChatService::Start(); the service's output events become StreamEvents (tool calls get
// K3's ids, "functions.<name>:<index>"), and its finish becomes kFinish with usage. When
// the sink refuses an event (the client left) the generation is cancelled at once, which
// frees its sequence in the runtime.
//
// The service is attached once the model is verified and loaded; until then the backend
// serves no model and is not healthy, so the API answers 503.
//
// Owns: a shared reference to the ChatService. Thread safety: every method may be called
// from any thread; Generate() runs concurrently for many requests.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "api/backend.h"
#include "kimi/chat_service.h"

namespace kimi::api {

class EmbeddedBackend : public Backend {
 public:
  explicit EmbeddedBackend(std::string served_model_id);

  // Makes the backend serve `service` under the served model id.
  void Attach(std::shared_ptr<ChatService> service);
  std::shared_ptr<ChatService> service() const;

  std::string_view name() const override { return "embedded"; }
  std::vector<std::string> Models() const override;
  bool Healthy(std::string_view model) const override;
  Status Generate(const BackendRequest& request, EventSink& sink, BackendOutcome* outcome) override;

 private:
  const std::string model_id_;
  mutable std::mutex mu_;
  std::shared_ptr<ChatService> service_;  // guarded by mu_; null until attached
};

// One ChatService output event as the backend contract's StreamEvent.
StreamEvent ToStreamEvent(const OutputEvent& output);

}  // namespace kimi::api
