// Handlers of the OpenAI-compatible API (docs/api.md):
//
//   POST /v1/chat/completions  chat.completion, or with "stream": true Server-Sent Events of
//                              chat.completion.chunk frames (api/chat_sse_encoder.h)
//   POST /v1/completions       text_completion, streamed or whole
//   GET  /v1/models            the models the backend serves now
//   GET  /v1/models/{id...}    one of them, or 404
//
// A generation request is parsed once into its typed value (api::ParseRequest: the request
// rules, then the engine's typed request; ignored fields logged in one line), passed through
// the policy step, checked against the backend (503 with the model's readiness reason while it
// is not loaded, 404 for a model it does not serve), then run. A streamed request commits
// to `text/event-stream` only once the backend produced its first event, so every error
// before that is ordinary OpenAI error JSON. While streaming, a client that goes away makes
// the backend's next Emit() fail, which cancels the generation.
// Public header of http/: other folders include it.
// Thread safety: each handler may run on many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "http/routes.h"

namespace kimi::api {
class Backend;
class ModelRulesTable;
}  // namespace kimi::api
namespace kimi::auth {
class Authenticator;
}  // namespace kimi::auth
namespace kimi::policy {
class PolicyService;
}  // namespace kimi::policy

namespace kimi::http {

class Readiness;

// What the two generation endpoints use. Pointers are owned by the daemon and outlive the table.
struct GenerationServices {
  api::Backend* backend = nullptr;              // null: 503
  const Readiness* readiness = nullptr;         // the model's not-ready reason in a 503; may be null
  policy::PolicyService* policy = nullptr;      // null: requests pass without a policy step
  auth::Authenticator* authenticator = nullptr;  // the key's quota lease; null: none is taken
  // Per-model request rules; null: K3's for every model.
  const api::ModelRulesTable* request_rules = nullptr;
  // The auditor's content policy stores content: the answer text is collected for the record.
  bool audit_stores_content = false;
  // Caller text as logs may keep it (RequestAuditor::ClientText: the storage redaction); null:
  // as sent.
  std::function<std::string(std::string_view)> shown_client_text;
  size_t stream_argument_chunk_bytes = 64;  // a tool call's arguments per streamed frame
  // The max_tokens assumed of a request that names none, in what it holds against its key's
  // quotas while it runs (usage_meter.h).
  int64_t assumed_max_tokens = 4096;
};

// What /v1/models says of a served model besides its id: the version the engine serves.
struct ServedModelDetails {
  std::string digest;       // OMS subject digest of the weights, hex
  int64_t version = 0;      // the model store's version number; 0 when not from the store
  int64_t created = 0;      // when it began serving, Unix seconds
};

// What the two /v1/models endpoints use.
struct ModelListServices {
  const api::Backend* backend = nullptr;  // null: no model is listed
  // Details of a served model (a request's audit record takes its model digest from the
  // backend that served it instead); may be empty, and may return nothing.
  std::function<std::optional<ServedModelDetails>(const std::string& model)> describe_model;
};

Status HandleChatCompletions(const GenerationServices& services, RequestContext& ctx, const httplib::Request& req,
                             httplib::Response& res);
Status HandleCompletions(const GenerationServices& services, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res);
Status HandleListModels(const ModelListServices& services, RequestContext& ctx, const httplib::Request& req,
                        httplib::Response& res);
Status HandleGetModel(const ModelListServices& services, RequestContext& ctx, const httplib::Request& req,
                      httplib::Response& res);

// The four routes of the API, bound to their services.
void AddOpenAiRoutes(RouteTable& table, GenerationServices generation, ModelListServices models);

}  // namespace kimi::http
