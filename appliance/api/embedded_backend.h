// EmbeddedBackend: the in-process engine as an api::Backend. A request's typed value (and
// the prompt the policy step rendered, when it did) goes to ChatService::Start(); the
// service's output events become StreamEvents (tool calls get K3's ids,
// "functions.<name>:<index>"), and its finish becomes kFinish with usage. When
// the sink refuses an event (the client left) the generation is cancelled at once, which
// frees its sequence in the runtime.
//
// The service is attached once the model is verified and loaded; until then the backend
// serves no model and is not healthy, so the API answers 503. It is attached with the
// identity of the model version it was loaded from, and the two are replaced together: a
// request copies both under one lock when it starts, so its BackendOutcome names exactly the
// version whose engine served it, even when an activation re-attaches meanwhile.
// Public header of api/: other folders include it.
// Owns: a shared reference to the ChatService and its version's identity. Thread safety:
// every method may be called from any thread; Generate() runs concurrently for many requests.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "api/backend.h"
#include "kimi/chat_service.h"

namespace kimi::api {

// Which model version an attached ChatService was loaded from.
struct ServedVersionId {
  std::string digest;    // OMS subject digest, hex
  int64_t version = 0;   // the model store's version number; 0 when not from the store
};

class EmbeddedBackend : public Backend {
 public:
  explicit EmbeddedBackend(std::string served_model_id);

  // Makes the backend serve `service`, loaded from model version `id`, under the served
  // model id. Requests already running keep what they started with.
  void Attach(std::shared_ptr<ChatService> service, ServedVersionId id = {});
  std::shared_ptr<ChatService> service() const;

  std::string_view name() const override { return "embedded"; }
  std::vector<std::string> Models() const override;
  bool Healthy(std::string_view model) const override;
  Status Generate(const BackendRequest& request, EventSink& sink, BackendOutcome* outcome) override;

 private:
  const std::string model_id_;
  // What one request takes at its start: the engine and the version it belongs to.
  struct Attached {
    std::shared_ptr<ChatService> service;
    ServedVersionId id;
  };
  Attached attached() const;

  mutable std::mutex mu_;
  Attached attached_;  // guarded by mu_; service null until attached
};

// One ChatService output event as the backend contract's StreamEvent.
StreamEvent ToStreamEvent(const OutputEvent& output);

}  // namespace kimi::api
