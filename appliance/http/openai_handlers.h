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
//
// Thread safety: each handler may run on many threads at once.
#pragma once

#include "http/routes.h"

namespace kimi::http {

Status HandleChatCompletions(const Services& services, RequestContext& ctx, const httplib::Request& req,
                             httplib::Response& res);
Status HandleCompletions(const Services& services, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res);
Status HandleListModels(const Services& services, RequestContext& ctx, const httplib::Request& req,
                        httplib::Response& res);
Status HandleGetModel(const Services& services, RequestContext& ctx, const httplib::Request& req,
                      httplib::Response& res);

}  // namespace kimi::http
