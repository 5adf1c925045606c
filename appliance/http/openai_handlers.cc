#include "http/openai_handlers.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>

#include "api/background_generation.h"
#include "api/backend.h"
#include "api/chat_response_builder.h"
#include "api/chat_sse_encoder.h"
#include "api/model_rules_table.h"
#include "api/completion_encoder.h"
#include "api/request_gate.h"
#include "api/response_meta.h"
#include "http/error_response.h"
#include "kimi/log.h"

namespace kimi::http {
namespace {

using Json = nlohmann::ordered_json;

// How often a streaming response with no new event checks that its client is still there.
constexpr std::chrono::milliseconds kClientCheckInterval{250};

std::string ModelNotReadyReason(const Services& services) {
  if (services.readiness != nullptr) {
    for (const ComponentState& c : services.readiness->Snapshot()) {
      if (c.name == "model" && !c.ready) return "the model is not ready: " + c.detail;
    }
  }
  return "the model is not ready";
}

// The model a request is for: the one it names, else the only one served.
Result<std::string> ResolveModel(const Services& services, const Json& body) {
  if (services.backend == nullptr) return Status::Unavailable(ModelNotReadyReason(services));
  const std::vector<std::string> served = services.backend->Models();
  if (served.empty()) return Status::Unavailable(ModelNotReadyReason(services));
  std::string model = body.contains("model") ? body["model"].get<std::string>() : served.front();
  if (std::find(served.begin(), served.end(), model) == served.end()) {
    return Status::NotFound("the model '" + model + "' does not exist (served: " + served.front() + ")");
  }
  if (!services.backend->Healthy(model)) return Status::Unavailable(ModelNotReadyReason(services));
  return model;
}

// The request rules of the model a body asks for (the only served one when it names none),
// read before validation so that a malformed body still gets its 400 without a model loaded.
const api::ModelRequestRules& RulesFor(const Services& services, const Json& body) {
  static const api::ModelRequestRules k3 = api::ModelRequestRules::K3();
  if (services.request_rules == nullptr) return k3;
  if (body.is_object() && body.contains("model") && body["model"].is_string()) {
    return services.request_rules->For(body["model"].get<std::string>());
  }
  const std::vector<std::string> served = services.backend == nullptr ? std::vector<std::string>{}
                                                                      : services.backend->Models();
  return services.request_rules->For(served.empty() ? std::string() : served.front());
}

template <typename Builder>
Status RespondWhole(api::Backend& backend, const api::BackendRequest& request, const api::ResponseMeta& meta,
                    api::BackendOutcome* outcome, httplib::Response& res) {
  Builder builder;
  KIMI_RETURN_IF_ERROR(backend.Generate(request, builder, outcome));
  if (!builder.finished()) return Status::Internal("the backend ended without a finish event");
  res.status = 200;
  res.set_content(api::DumpJson(builder.Build(meta)), "application/json");
  return Status::OK();
}

Status RespondStream(api::Backend& backend, api::BackendRequest request, std::unique_ptr<api::StreamEncoder> encoder,
                     api::BackendOutcome* outcome, httplib::Response& res) {
  const std::string request_id = request.request_id;
  auto generation = std::make_shared<api::BackgroundGeneration>(backend, std::move(request));
  Status before_first;
  const bool started = generation->WaitForFirstEvent(&before_first);
  *outcome = generation->outcome();
  if (!started) {
    return before_first.ok() ? Status::Internal("the backend ended without any event") : before_first;
  }
  std::shared_ptr<api::StreamEncoder> shared_encoder = std::move(encoder);
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream", [generation, shared_encoder, request_id](size_t, httplib::DataSink& sink) {
        api::StreamEvent event;
        Status result;
        for (;;) {
          switch (generation->Next(&event, &result, kClientCheckInterval)) {
            case api::BackgroundGeneration::Wait::kTimeout:
              if (!sink.is_writable()) {
                generation->Abandon();
                return false;
              }
              continue;
            case api::BackgroundGeneration::Wait::kEnded: {
              // The backend failed after the stream began: say so in-band, then end.
              if (!result.ok() && result.code() != Status::Code::kCancelled) {
                log::Warn("generation failed mid-stream", {{"request_id", request_id}, {"status", result.ToString()}});
              }
              std::string tail = "data: " + RenderErrorBody(FromStatus(result.ok() ? Status::Internal("stream ended early") : result, request_id)) +
                                 "\n\n" + std::string(api::kSseDone);
              sink.write(tail.data(), tail.size());
              sink.done();
              return true;
            }
            case api::BackgroundGeneration::Wait::kEvent: {
              // Everything already queued goes out in one write: under load the backend runs
              // ahead of this thread, and one write per frame costs a syscall and a wake-up.
              std::string frames;
              shared_encoder->Encode(event, &frames);
              while (!shared_encoder->finished() &&
                     generation->Next(&event, &result, std::chrono::milliseconds(0)) ==
                         api::BackgroundGeneration::Wait::kEvent) {
                shared_encoder->Encode(event, &frames);
              }
              if (!frames.empty() && !sink.write(frames.data(), frames.size())) {
                generation->Abandon();  // the client went away: the backend's next Emit cancels
                return false;
              }
              if (shared_encoder->finished()) sink.done();
              return true;
            }
          }
        }
      });
  return Status::OK();
}

Status ServeGeneration(api::Endpoint endpoint, const Services& services, RequestContext& ctx,
                       const httplib::Request& req, httplib::Response& res) {
  Json body = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return Status::InvalidArgument("the request body is not valid JSON");
  KIMI_RETURN_IF_ERROR(api::PrepareRequest(endpoint, &body, RulesFor(services, body)));
  KIMI_ASSIGN_OR_RETURN(std::string model, ResolveModel(services, body));
  const api::ResponseMode mode = api::ReadResponseMode(endpoint, body);
  const api::ResponseMeta meta = api::NewResponseMeta(endpoint, ctx.request_id, model);
  api::BackendRequest request{ctx.request_id, model, endpoint, std::move(body)};
  api::Backend& backend = *services.backend;
  const bool chat = endpoint == api::Endpoint::kChatCompletions;
  if (!mode.stream) {
    return chat ? RespondWhole<api::ChatResponseBuilder>(backend, request, meta, &ctx.backend_outcome, res)
                : RespondWhole<api::TextCompletionBuilder>(backend, request, meta, &ctx.backend_outcome, res);
  }
  std::unique_ptr<api::StreamEncoder> encoder;
  if (chat) {
    encoder = std::make_unique<api::ChatSseEncoder>(
        meta, api::ChatStreamOptions{mode.thinking, mode.include_usage, services.stream_argument_chunk_bytes});
  } else {
    encoder = std::make_unique<api::CompletionSseEncoder>(meta, mode.include_usage);
  }
  return RespondStream(backend, std::move(request), std::move(encoder), &ctx.backend_outcome, res);
}

// The creation time reported for served models: when this process started serving.
int64_t ServedSince() {
  static const int64_t since = static_cast<int64_t>(std::time(nullptr));
  return since;
}

Json ModelObject(const std::string& id) {
  return Json{{"id", id}, {"object", "model"}, {"created", ServedSince()}, {"owned_by", "kimi-appliance"}};
}

std::vector<std::string> ServedModels(const Services& services) {
  return services.backend == nullptr ? std::vector<std::string>{} : services.backend->Models();
}

}  // namespace

Status HandleChatCompletions(const Services& services, RequestContext& ctx, const httplib::Request& req,
                             httplib::Response& res) {
  return ServeGeneration(api::Endpoint::kChatCompletions, services, ctx, req, res);
}

Status HandleCompletions(const Services& services, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res) {
  return ServeGeneration(api::Endpoint::kCompletions, services, ctx, req, res);
}

Status HandleListModels(const Services& services, RequestContext&, const httplib::Request&, httplib::Response& res) {
  Json data = Json::array();
  for (const std::string& id : ServedModels(services)) data.push_back(ModelObject(id));
  res.status = 200;
  res.set_content(api::DumpJson(Json{{"object", "list"}, {"data", std::move(data)}}), "application/json");
  return Status::OK();
}

Status HandleGetModel(const Services& services, RequestContext& ctx, const httplib::Request&, httplib::Response& res) {
  const std::string& id = ctx.path_params["id"];
  const std::vector<std::string> served = ServedModels(services);
  if (std::find(served.begin(), served.end(), id) == served.end()) {
    return Status::NotFound("the model '" + id + "' does not exist");
  }
  res.status = 200;
  res.set_content(api::DumpJson(ModelObject(id)), "application/json");
  return Status::OK();
}

}  // namespace kimi::http
