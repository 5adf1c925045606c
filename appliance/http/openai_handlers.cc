#include "http/openai_handlers.h"

#include <httplib.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>

#include "api/background_generation.h"
#include "api/backend.h"
#include "api/chat_response_builder.h"
#include "api/chat_sse_encoder.h"
#include "api/model_rules_table.h"
#include "api/prompt_estimate.h"
#include "api/completion_encoder.h"
#include "api/request_gate.h"
#include "api/response_meta.h"
#include "auth/authenticator.h"
#include "http/dispatcher.h"
#include "http/error_response.h"
#include "http/generation_audit.h"
#include "http/readiness.h"
#include "http/request_audit.h"
#include "kimi/log.h"
#include "policy/request_policy.h"

namespace kimi::http {
namespace {

using Json = nlohmann::ordered_json;

// How often a streaming response with no new event checks that its client is still there.
constexpr std::chrono::milliseconds kClientCheckInterval{250};

std::string ModelNotReadyReason(const GenerationServices& services) {
  if (services.readiness != nullptr) {
    for (const ComponentState& c : services.readiness->Snapshot()) {
      if (c.name == "model" && !c.ready) return "the model is not ready: " + c.detail;
    }
  }
  return "the model is not ready";
}

// The key may use every model, or names this one among its allowed models.
bool MayUse(const RequestContext& ctx, const std::string& model) {
  return !ctx.principal || auth::Authenticator::CheckModelAllowed(*ctx.principal, model).ok();
}

// A model the key may not use is answered like an unknown one, before anything (its rules, the
// policy, its readiness) says whether it is served, so a key cannot learn what else is served.
Status CheckModelAccess(const RequestContext& ctx, const std::string& model) {
  if (MayUse(ctx, model)) return Status::OK();
  return Status::NotFound("the model '" + model + "' does not exist or this API key may not use it");
}

// The model a request is for: the one it names (the request rules require one). The hint of an
// unknown model's error names only a served model the key may use.
Result<std::string> ResolveModel(const GenerationServices& services, const RequestContext& ctx,
                                 const std::string& model) {
  if (services.backend == nullptr) return Status::Unavailable(ModelNotReadyReason(services));
  const std::vector<std::string> served = services.backend->Models();
  if (served.empty()) return Status::Unavailable(ModelNotReadyReason(services));
  if (std::find(served.begin(), served.end(), model) == served.end()) {
    auto usable = std::find_if(served.begin(), served.end(), [&](const std::string& m) { return MayUse(ctx, m); });
    return Status::NotFound("the model '" + model + "' does not exist" +
                            (usable == served.end() ? std::string() : " (served: " + *usable + ")"));
  }
  if (!services.backend->Healthy(model)) {
    // A served model that no backend takes now (unhealthy, breakers open): the backends' own
    // account, not the embedded model's readiness, which may not be what serves it.
    const std::string why = services.backend->UnavailableReason(model);
    return Status::Unavailable(why.empty() ? ModelNotReadyReason(services) : why);
  }
  return model;
}

// How long a finished stream waits for its backend to return, to name who served it.
constexpr std::chrono::milliseconds kOutcomeWait{1000};

using Lease = auth::UsageMeter::Lease;

// Hands the request's token counts (the audit facts: one source for the record and the
// quotas) to its lease and records them; nothing when the backend emitted nothing.
void Meter(Lease* lease, const GenerationTally& tally, const AuditFacts& facts, const std::string& request_id) {
  if (lease == nullptr || !tally.generated) return;
  lease->Count(facts.prompt_tokens, facts.completion_tokens);
  Status s = lease->Finish();
  if (!s.ok()) log::Warn("cannot record the request's token usage", {{"request_id", request_id}, {"error", s.ToString()}});
}

// The request rules of the model a body asks for (the first served one the key may use when it
// names none), looked up before validation so that a malformed body still gets its 400 without
// a model. A model the key may not use gets the rules of a model without an entry, as an
// unknown one does: its own bounds would say that it is served.
api::RulesLookup RulesFor(const GenerationServices& services, const RequestContext& ctx) {
  if (services.request_rules == nullptr) return nullptr;
  return [table = services.request_rules, &ctx](const std::string& model) -> const api::ModelRequestRules& {
    return MayUse(ctx, model) ? table->For(model) : table->Unlisted();
  };
}

std::string FirstServedModel(const GenerationServices& services, const RequestContext& ctx) {
  if (services.request_rules == nullptr || services.backend == nullptr) return std::string();
  for (const std::string& m : services.backend->Models()) {
    if (MayUse(ctx, m)) return m;
  }
  return std::string();
}

// Which model version served the response, when the backend knows: the same value as the
// request's audit record, so a client can tell across an activation which weights answered.
void SetServedVersionHeaders(const api::BackendOutcome& outcome, httplib::Response& res) {
  if (outcome.model_digest.empty()) return;
  res.set_header("X-Model-Digest", outcome.model_digest);
  res.set_header("X-Model-Version", std::to_string(outcome.model_version));
}

// False once the client has hung up (or its connection failed). A client waiting for a whole
// response sends nothing more, so its closing the connection is what there is to see; like a
// proxy's "client closed request", even a half-close ends the work done for it.
bool ClientConnected(const httplib::Stream* stream) {
  if (stream == nullptr) return true;
  pollfd p{stream->socket(), POLLRDHUP, 0};
  if (::poll(&p, 1, 0) < 0) return true;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) == 0;
}

// Folds a whole response's events into its builder, noting them for the audit record.
template <typename Builder>
class WholeResponseDelivery final : public api::BackgroundGeneration::Delivery {
 public:
  WholeResponseDelivery(Builder& builder, std::chrono::steady_clock::time_point start, GenerationTally* tally,
                        AuditFacts* facts)
      : builder_(builder), recording_(builder, start, tally, facts) {}
  bool Deliver(const api::StreamEvent* events, size_t count) override {
    for (size_t i = 0; i < count; ++i) recording_.Emit(events[i]);
    return true;
  }
  bool complete() const override { return builder_.finished(); }

 private:
  Builder& builder_;
  RecordingSink recording_;
};

// The generation runs on its own thread while this one watches the client, as a stream's
// does: a client that hangs up cancels its request (499, outcome client_disconnected) instead
// of leaving the engine to finish work nobody will read.
template <typename Builder>
Status RespondWhole(api::Backend& backend, api::BackendRequest request, const api::ResponseMeta& meta, bool logprobs,
                    GenerationTally tally, RequestContext& ctx, Lease* lease, httplib::Response& res) {
  Builder builder(logprobs);
  WholeResponseDelivery<Builder> delivery(builder, ctx.start, &tally, &ctx.audit);
  const std::string request_id = request.request_id;
  api::BackgroundGeneration generation(backend, std::move(request));
  const httplib::Stream* client = ActiveResponseStream();
  Status generated;
  const api::BackgroundGeneration::Delivered delivered =
      generation.Deliver(delivery, &generated, kClientCheckInterval, [client] { return ClientConnected(client); });
  api::BackendOutcome outcome;
  if (generation.WaitOutcome(&outcome, kOutcomeWait)) NoteBackendOutcome(outcome, &ctx.audit);
  Meter(lease, tally, ctx.audit, request_id);  // a failure after some events is counted too
  if (delivered == api::BackgroundGeneration::Delivered::kClientGone) {
    return Status::Cancelled("the client closed the connection before the response was complete");
  }
  KIMI_RETURN_IF_ERROR(generated);
  if (!builder.finished()) return Status::Internal("the backend ended without a finish event");
  SetServedVersionHeaders(outcome, res);
  res.status = 200;
  res.set_content(api::DumpJson(builder.Build(meta)), "application/json");
  return Status::OK();
}

// Writes `bytes` to the client as one chunk of the chunked response and notes them as sent;
// false when the client is gone. With the connection's stream at hand the chunk is framed
// here ("<hex size>\r\n<bytes>\r\n", what the library writes for a DataSink write) in a
// buffer reused across frames, and goes out in one write without the library's per-frame
// allocations and copies; otherwise the library frames it.
bool SendFrames(httplib::DataSink& sink, httplib::Stream* stream, std::string* chunk, StreamAudit& audit,
                const std::string& bytes) {
  if (bytes.empty()) return true;
  if (stream == nullptr) {
    if (!sink.write(bytes.data(), bytes.size())) return false;
  } else {
    char size_hex[2 * sizeof(size_t) + 1];
    int hex_len = std::snprintf(size_hex, sizeof size_hex, "%zx", bytes.size());
    chunk->clear();
    chunk->append(size_hex, static_cast<size_t>(hex_len)).append("\r\n").append(bytes).append("\r\n");
    for (std::string_view left = *chunk; !left.empty();) {
      ssize_t n = stream->write(left.data(), left.size());
      if (n <= 0) return false;
      left.remove_prefix(static_cast<size_t>(n));
    }
  }
  audit.Sent(bytes);
  return true;
}

// Encodes a started stream's events and writes their frames to the client, on the thread
// that delivers them (api::BackgroundGeneration::Delivery). The frames of the finish event
// are kept as the tail, which FinishStream() sends once the audit record is committed.
class StreamWriter final : public api::BackgroundGeneration::Delivery {
 public:
  StreamWriter(httplib::DataSink& sink, httplib::Stream* stream, api::StreamEncoder& encoder, StreamAudit& audit,
               Lease* lease)
      : sink_(sink), stream_(stream), encoder_(encoder), audit_(audit), lease_(lease) {}

  bool Deliver(const api::StreamEvent* events, size_t count) override {
    // Not a byte more once the audit store fails: the stream ends here (audit_failure()).
    if (Status writable = audit_.CheckWritable(); !writable.ok()) {
      audit_failure_ = writable;
      return true;
    }
    frames_.clear();
    for (size_t i = 0; i < count && !encoder_.finished(); ++i) {
      audit_.NoteEvent(events[i]);
      encoder_.Encode(events[i], &frames_);
    }
    if (lease_ != nullptr) lease_->Count(audit_.facts().prompt_tokens, audit_.facts().completion_tokens);
    if (encoder_.finished()) return true;  // the frames are the tail
    return SendFrames(sink_, stream_, &chunk_, audit_, frames_);
  }
  bool complete() const override { return encoder_.finished() || !audit_failure_.ok(); }
  std::string TakeTail() { return std::move(frames_); }
  // Not OK when the stream stopped because the audit store cannot write.
  const Status& audit_failure() const { return audit_failure_; }

 private:
  httplib::DataSink& sink_;
  httplib::Stream* stream_;  // null: frames go through the library's sink
  api::StreamEncoder& encoder_;
  StreamAudit& audit_;
  Lease* lease_;
  std::string frames_;  // reused: one allocation per stream, not per frame
  std::string chunk_;   // reused likewise: frames_ with its chunk framing
  Status audit_failure_;
};

// Ends the stream with `tail`: its end record is committed first, so the client sees the
// final frames only once the record is durable. When it cannot be committed (fail-closed)
// the client gets an error frame in their place (StreamAudit::Finish).
void FinishStream(httplib::DataSink& sink, api::BackgroundGeneration& generation, StreamAudit& audit,
                  std::string_view outcome, std::string tail) {
  api::BackendOutcome served;
  if (generation.WaitOutcome(&served, kOutcomeWait)) audit.NoteOutcome(served);
  (void)audit.Finish(outcome, &tail);
  sink.write(tail.data(), tail.size());
  sink.done();
}

// `lease` is held by the response's content provider, so its stream slot is released when the
// stream ends or the client goes away. Its counts follow the stream's audit facts and are
// recorded (in memory, where the quotas read them; usage_ledger.h writes the rows) before the
// final frames go out; a stream that ends any other way records them when the provider, and
// with it the lease, is destroyed.
Status RespondStream(api::Backend& backend, api::BackendRequest request, std::unique_ptr<api::StreamEncoder> encoder,
                     GenerationTally tally, RequestContext& ctx, std::shared_ptr<Lease> lease,
                     httplib::Response& res) {
  const std::string request_id = request.request_id;
  auto generation = std::make_shared<api::BackgroundGeneration>(backend, std::move(request));
  Status before_first;
  const httplib::Stream* client = ActiveResponseStream();
  if (!generation->WaitForFirstEvent(&before_first, kClientCheckInterval,
                                     [client] { return ClientConnected(client); })) {
    api::BackendOutcome served;
    if (generation->WaitOutcome(&served, kOutcomeWait)) NoteBackendOutcome(served, &ctx.audit);
    return before_first.ok() ? Status::Internal("the backend ended without any event") : before_first;
  }
  ctx.audit.ttft_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - ctx.start).count();
  // Who serves is known once the backend has emitted: the record (also of a client that
  // leaves mid-stream) and the headers name the version that produced these events.
  const api::BackendOutcome serving = generation->OutcomeAtFirstEvent();
  NoteBackendOutcome(serving, &ctx.audit);
  // The start record's prompt count: the backend's own when its first event carries one.
  if (const int64_t counted = generation->PromptTokensAtFirstEvent(); counted > 0) ctx.audit.prompt_tokens = counted;
  SetServedVersionHeaders(serving, res);
  auto audit = std::make_shared<StreamAudit>(ctx.audit, tally, ctx.start);
  ctx.stream_audit = audit;
  std::shared_ptr<api::StreamEncoder> shared_encoder = std::move(encoder);
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  // The provider runs inside the dispatcher's processing of this request, while the
  // connection's stream and `res` are valid. A compressed response (the library chose an
  // encoding: a Content-Encoding header) goes through the library's sink.
  httplib::Stream* stream = ActiveResponseStream();
  const httplib::Response* response = &res;
  res.set_chunked_content_provider(
      "text/event-stream",
      [generation, shared_encoder, request_id, audit, lease, stream, response](size_t, httplib::DataSink& sink) {
        StreamWriter writer(sink, response->has_header("Content-Encoding") ? nullptr : stream, *shared_encoder, *audit,
                            lease.get());
        Status result;
        // From here on the generation thread encodes and writes each event as it comes; this
        // thread wakes only to check its client now and then, and to end the stream.
        switch (generation->Deliver(writer, &result, kClientCheckInterval,
                                    [&sink, stream] { return sink.is_writable() && ClientConnected(stream); })) {
          case api::BackgroundGeneration::Delivered::kClientGone:
            Meter(lease.get(), audit->tally(), audit->facts(), request_id);
            (void)audit->Finish(kOutcomeClientDisconnected, nullptr);
            return false;
          case api::BackgroundGeneration::Delivered::kEnded: {
            // The backend failed after the stream began: say so in-band, then end.
            if (!result.ok() && result.code() != Status::Code::kCancelled) {
              log::Warn("generation failed mid-stream", {{"request_id", request_id}, {"status", result.ToString()}});
            }
            std::string tail =
                RenderErrorFrame(FromStatus(result.ok() ? Status::Internal("stream ended early") : result, request_id)) +
                std::string(api::kSseDone);
            Meter(lease.get(), audit->tally(), audit->facts(), request_id);
            FinishStream(sink, *generation, *audit, kOutcomeStreamError, std::move(tail));
            return true;
          }
          case api::BackgroundGeneration::Delivered::kComplete:
            if (!writer.audit_failure().ok()) {
              // The audit store failed mid-stream: the generation stops, the client gets the
              // error frame, and the end record waits for the store (StreamAudit::Finish).
              generation->Abandon();
              Meter(lease.get(), audit->tally(), audit->facts(), request_id);
              FinishStream(sink, *generation, *audit, kOutcomeAuditUnavailable,
                           AuditErrorFrame(writer.audit_failure().message()));
              return true;
            }
            Meter(lease.get(), audit->tally(), audit->facts(), request_id);
            FinishStream(sink, *generation, *audit, kOutcomeCompleted, writer.TakeTail());
            return true;
        }
        return false;
      });
  return Status::OK();
}

Status ServeGeneration(api::Endpoint endpoint, const GenerationServices& services, RequestContext& ctx,
                       const httplib::Request& req, httplib::Response& res) {
  // The one parse of the body: everything after reads the typed request.
  KIMI_ASSIGN_OR_RETURN(api::ApiRequest parsed,
                        api::ParseRequest(endpoint, req.body, RulesFor(services, ctx), FirstServedModel(services, ctx)));
  if (const std::string ignored = api::IgnoredFieldList(parsed); !ignored.empty()) {
    // The names are the caller's text: a key may hold what the policy redacts before storage.
    log::Info("request fields ignored",
              {{"request_id", ctx.request_id},
               {"fields", services.shown_client_text ? services.shown_client_text(ignored) : ignored}});
  }
  KIMI_RETURN_IF_ERROR(CheckModelAccess(ctx, parsed.validated.model));
  // The one policy decision step, before any backend is chosen or called.
  policy::RequestCaller caller;
  caller.principal = ctx.principal ? &*ctx.principal : nullptr;
  caller.header = [&req](const std::string& name) -> std::optional<std::string> {
    if (!req.has_header(name)) return std::nullopt;
    return req.get_header_value(name);
  };
  policy::AppliedPolicy decided = policy::ApplyRequestPolicy(services.policy, caller, &parsed);
  // The request's audit record names the policy version and every decision (refusals too).
  ctx.audit.policy = std::move(decided.audit_entries);
  if (decided.stored_content) ctx.audit.stored_content = std::move(decided.stored_content);
  KIMI_RETURN_IF_ERROR(decided.refusal);
  KIMI_ASSIGN_OR_RETURN(std::string model, ResolveModel(services, ctx, parsed.validated.model));
  const int64_t estimated_prompt_tokens = api::EstimatePromptTokens(parsed.serving);
  std::shared_ptr<Lease> lease;
  if (services.authenticator != nullptr && ctx.principal) {
    const int64_t most_tokens =
        estimated_prompt_tokens + parsed.serving.generation.max_tokens.value_or(services.assumed_max_tokens);
    Result<std::unique_ptr<Lease>> begun =
        services.authenticator->BeginGeneration(*ctx.principal, &ctx.retry_after_s, most_tokens);
    if (!begun.ok()) {
      ctx.auth_failure = "quota: " + begun.status().message();
      return begun.status();
    }
    lease = std::move(begun).value();
  }
  const api::ResponseMode mode = api::ReadResponseMode(parsed);
  const api::ResponseMeta meta = api::NewResponseMeta(endpoint, ctx.request_id, model);
  api::BackendRequest request =
      api::ToBackendRequest(std::move(parsed), ctx.request_id, model, std::move(decided.workload_class),
                            decided.priority, std::move(decided.prompt));
  if (ctx.principal) {
    const bool key = ctx.principal->kind == auth::Principal::Kind::kApiKey;
    request.prefix_cache_scope = (key ? "key:" : "user:") + ctx.principal->id;
  }
  api::Backend& backend = *services.backend;
  ctx.audit.model = model;
  ctx.audit.backend = std::string(backend.name());
  // ctx.audit.model_digest comes from the backend's outcome (the version its engine reference
  // belongs to), not from what is active now: an activation may switch between the two.
  GenerationTally tally;
  tally.estimated_prompt_tokens = estimated_prompt_tokens;
  tally.keep_completion_text = ctx.audit.stored_content != nullptr || services.audit_stores_content;
  const bool chat = endpoint == api::Endpoint::kChatCompletions;
  if (!mode.stream) {
    return chat ? RespondWhole<api::ChatResponseBuilder>(backend, std::move(request), meta, mode.logprobs, tally, ctx,
                                                         lease.get(), res)
                : RespondWhole<api::TextCompletionBuilder>(backend, std::move(request), meta, mode.logprobs, tally,
                                                           ctx, lease.get(), res);
  }
  std::unique_ptr<api::StreamEncoder> encoder;
  if (chat) {
    encoder = std::make_unique<api::ChatSseEncoder>(
        meta, api::ChatStreamOptions{mode.thinking, mode.include_usage, services.stream_argument_chunk_bytes,
                                     mode.logprobs});
  } else {
    encoder = std::make_unique<api::CompletionSseEncoder>(meta, mode.include_usage, mode.logprobs);
  }
  return RespondStream(backend, std::move(request), std::move(encoder), tally, ctx, std::move(lease), res);
}

// The creation time reported for served models: when this process started serving.
int64_t ServedSince() {
  static const int64_t since = static_cast<int64_t>(std::time(nullptr));
  return since;
}

Json ModelObject(const ModelListServices& services, const std::string& id) {
  std::optional<ServedModelDetails> details;
  if (services.describe_model) details = services.describe_model(id);
  Json object{{"id", id}, {"object", "model"}, {"created", details ? details->created : ServedSince()},
              {"owned_by", "kimi-appliance"}};
  // Which signed weights answer under this id, so that a client sees an activation.
  if (details) {
    object["digest"] = details->digest;
    object["version"] = details->version;
  }
  return object;
}

// The served models the request's key may use.
std::vector<std::string> ServedModels(const ModelListServices& services, const RequestContext& ctx) {
  std::vector<std::string> out = services.backend == nullptr ? std::vector<std::string>{} : services.backend->Models();
  std::erase_if(out, [&](const std::string& id) { return !MayUse(ctx, id); });
  return out;
}

}  // namespace

Status HandleChatCompletions(const GenerationServices& services, RequestContext& ctx, const httplib::Request& req,
                             httplib::Response& res) {
  return ServeGeneration(api::Endpoint::kChatCompletions, services, ctx, req, res);
}

Status HandleCompletions(const GenerationServices& services, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res) {
  return ServeGeneration(api::Endpoint::kCompletions, services, ctx, req, res);
}

Status HandleListModels(const ModelListServices& services, RequestContext& ctx, const httplib::Request&,
                        httplib::Response& res) {
  Json data = Json::array();
  for (const std::string& id : ServedModels(services, ctx)) data.push_back(ModelObject(services, id));
  res.status = 200;
  res.set_content(api::DumpJson(Json{{"object", "list"}, {"data", std::move(data)}}), "application/json");
  return Status::OK();
}

Status HandleGetModel(const ModelListServices& services, RequestContext& ctx, const httplib::Request&,
                      httplib::Response& res) {
  const std::string& id = ctx.path_params["id"];
  const std::vector<std::string> served = ServedModels(services, ctx);
  if (std::find(served.begin(), served.end(), id) == served.end()) {
    return Status::NotFound("the model '" + id + "' does not exist");
  }
  res.status = 200;
  res.set_content(api::DumpJson(ModelObject(services, id)), "application/json");
  return Status::OK();
}

void AddOpenAiRoutes(RouteTable& table, GenerationServices generation, ModelListServices models) {
  using P = auth::Permission;
  table.Add({"POST", "/v1/chat/completions", "chat_completions", BindRoute(generation, &HandleChatCompletions), false,
             P::kInference});
  table.Add({"POST", "/v1/completions", "completions", BindRoute(std::move(generation), &HandleCompletions), false,
             P::kInference});
  // Status reads (routes.h): the console polls the model list; a call with a key is audited.
  table.Add({"GET", "/v1/models", "models", BindRoute(models, &HandleListModels), false, P::kModelsRead,
             /*body_has_password=*/false, /*status_read=*/true});
  table.Add({"GET", "/v1/models/{id...}", "model", BindRoute(std::move(models), &HandleGetModel), false,
             P::kModelsRead, /*body_has_password=*/false, /*status_read=*/true});
}

}  // namespace kimi::http
