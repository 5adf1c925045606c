#include "http/dispatcher.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/request/request_validator.h"
#include "http/body_checks.h"
#include "http/error_response.h"
#include "http/generation_audit.h"
#include "http/request_audit.h"
#include "http/request_auth.h"
#include "http/security_headers.h"
#include "kimi/log.h"

namespace kimi::http {
namespace {

struct ActiveRequest {
  RequestContext* ctx = nullptr;
  httplib::Stream* stream = nullptr;
  int status = 0;
};
thread_local ActiveRequest* t_active = nullptr;

// Turns a finished response into the fail-closed 503. The library already set the framing
// headers for the old body, so the new one gets its own; the connection headers stay.
void ReplaceWithAuditError(const Status& audited, const RequestContext& ctx, httplib::Response& res) {
  std::string connection = res.get_header_value("Connection");
  std::string keep_alive = res.get_header_value("Keep-Alive");
  res = httplib::Response();
  WriteError(AuditUnavailable(audited.message()), res);
  res.set_header("Content-Length", std::to_string(res.body.size()));
  res.set_header("X-Request-Id", ctx.request_id);
  if (!connection.empty()) res.set_header("Connection", connection);
  if (!keep_alive.empty()) res.set_header("Keep-Alive", keep_alive);
}

// What the request context knows of the route that takes the request (its record and metrics
// depend on it, a refusal from the head included).
void NoteRoute(const Route& r, const httplib::Request& req, RequestContext& ctx) {
  ctx.route = std::string(r.name);
  ctx.probe = r.probe;
  ctx.body_has_password = r.body_has_password;
  ctx.status_read = r.status_read;
  MatchRoutePath(r.path, req.path, &ctx.path_params);
}

// A refusal: the error JSON, and the headers a 401 or a 429 carries.
void WriteRefusal(const ApiError& error, const RequestContext& ctx, httplib::Response& res) {
  res = httplib::Response();
  WriteError(error, res);
  if (error.http_status == 401) res.set_header("WWW-Authenticate", "Bearer realm=\"kimi\"");
  if (error.http_status == 429 && ctx.retry_after_s > 0) res.set_header("Retry-After", std::to_string(ctx.retry_after_s));
}

void WriteAccessRefusal(const Status& denied, const RequestContext& ctx, httplib::Response& res) {
  WriteRefusal(FromStatus(denied, ctx.request_id), ctx, res);
}

// The field or query parameter a refusal's message names, when the handler did not say: "field
// 'x' ..." (also "unknown field 'x'"), "query parameter 'x' ...", "\"x\" is required", or a
// message that starts with the name of a top-level field of the body or a parameter of the
// query ("requests_per_minute must not be negative").
std::optional<std::string> NamedParameter(const std::string& message, const httplib::Request& req) {
  for (std::string_view lead : {"field '", "unknown field '", "query parameter '"}) {
    if (message.rfind(lead, 0) != 0) continue;
    const size_t end = message.find('\'', lead.size());
    if (end != std::string::npos) return message.substr(lead.size(), end - lead.size());
  }
  if (message.size() > 2 && message[0] == '"') {
    const size_t end = message.find('"', 1);
    if (end != std::string::npos && end > 1) return message.substr(1, end - 1);
  }
  const std::string first = message.substr(0, message.find_first_of(" :"));
  if (first.empty() || first.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos) return std::nullopt;
  if (req.has_param(first)) return first;
  const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_object() && body.contains(first)) return first;
  return std::nullopt;
}

// Every admin API (/admin/) response: JSON the console reads, never to be cached; every
// other response at least not sniffed.
void AddSecurityHeaders(const httplib::Request& req, httplib::Response& res) {
  if (req.path.rfind("/admin/", 0) == 0) SetBrowserSecurityHeaders(res, kNoContentSecurityPolicy, "no-store");
  SetNoSniff(res);
}

}  // namespace

httplib::Stream* ActiveResponseStream() { return t_active != nullptr ? t_active->stream : nullptr; }

Dispatcher::Library::Library() {
  placeholder_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (placeholder_fd_ < 0) {
    log::Error("eventfd failed: streamed responses will be cut short", {{"error", std::strerror(errno)}});
    return;
  }
  svr_sock_ = placeholder_fd_;
}

Dispatcher::Library::~Library() {
  svr_sock_ = INVALID_SOCKET;
  if (placeholder_fd_ >= 0) ::close(placeholder_fd_);
}

Dispatcher::Dispatcher(DispatcherServices services, RouteTable routes, HttpMetrics& metrics,
                       const config::LimitsConfig& limits)
    : services_(std::move(services)), routes_(std::move(routes)), metrics_(metrics), limits_(limits) {
  library_.set_payload_max_length(static_cast<size_t>(limits.max_body_bytes));
  library_.set_keep_alive_max_count(static_cast<size_t>(limits.max_requests_per_connection));
  library_.set_keep_alive_timeout(std::max<time_t>(1, static_cast<time_t>(limits.idle_timeout_ms / 1000)));
  RegisterRoutes();

  // Every response with status >= 400 passes here; bodies already set by the route wrapper
  // (from a handler's Status) are left alone, library-made ones get their JSON here.
  library_.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                         httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    RequestContext* ctx = t_active ? t_active->ctx : nullptr;
    ApiError error;
    if (ctx != nullptr && ctx->body_limit_hit) {
      error = PayloadTooLarge(ctx->max_body_bytes > 0 ? ctx->max_body_bytes : limits_.max_body_bytes);
    } else if (ctx != nullptr && ctx->read_deadline_hit) {
      error = RequestTimeout();
    } else if (ctx != nullptr && ctx->malformed_chunk) {
      error = MalformedRequest("the chunked body's framing is malformed (RFC 9112: a chunk size is hexadecimal digits "
                               "alone, with optional extensions, and every line ends with CRLF)");
      ctx->library_refused = true;
    } else if (Status denied = res.status == 404 && (ctx == nullptr || !ctx->authenticated_from_head)
                                   ? AuthenticateUnrouted(req, ctx)
                                   : Status::OK();
               !denied.ok()) {
      // An unknown path or method says nothing to a client without credentials: 401 first.
      WriteAccessRefusal(denied, ctx != nullptr ? *ctx : RequestContext(), res);
      return httplib::Server::HandlerResponse::Handled;
    } else if (res.status == 404 && !routes_.AllowedMethods(req.path).empty()) {
      std::string allowed = routes_.AllowedMethods(req.path);
      res.set_header("Allow", allowed);
      error = MethodNotAllowed(req.method, req.path, allowed);
    } else {
      error = FromLibraryStatus(res.status, req.method, req.path);
      if (ctx != nullptr && res.status == 400) ctx->library_refused = true;
    }
    WriteError(error, res);
    return httplib::Server::HandlerResponse::Handled;
  }));

  // Before the body is read: a caller that may not use the route is refused on its head, and
  // told so instead of "100 Continue" when it waits for one.
  library_.set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
    return RefusedFromHead(req, res) ? res.status : 100;
  });
  library_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return RefusedFromHead(req, res) ? httplib::Server::HandlerResponse::Handled
                                     : httplib::Server::HandlerResponse::Unhandled;
  });

  library_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    std::string id = t_active && t_active->ctx ? t_active->ctx->request_id : "";
    log::Error("handler threw an exception", {{"request_id", id}, {"what", what}});
    WriteError(FromStatus(Status::Internal(what), id), res);
  });

  // The library calls this after the response is complete (error bodies included) and
  // before its first byte is written: the audit hook's place.
  library_.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    RequestContext* ctx = t_active ? t_active->ctx : nullptr;
    AddSecurityHeaders(req, res);
    // The library offers ranges in every answer to HEAD; none is served (request_head.h).
    res.headers.erase("Accept-Ranges");
    // After a refused request with a chunked body the connection is closed (connection.cc: the
    // body's end may not have been read); the response says so rather than offering keep-alive.
    if (res.status >= 400 && (req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos ||
                              (ctx != nullptr && ctx->refused_before_body && req.has_header("Content-Length") &&
                               req.get_header_value("Content-Length") != "0"))) {
      // One Connection line, and no Keep-Alive offer beside it (the library may have added both).
      res.headers.erase("Connection");
      res.headers.erase("Keep-Alive");
      res.set_header("Connection", "close");
    }
    if (ctx == nullptr) return;
    res.set_header("X-Request-Id", ctx->request_id);
    if (services_.auditor == nullptr) return;
    if (ctx->stream_audit != nullptr) {
      // A stream's start record is committed here, before its first byte, and its end record
      // when it ends (generation_audit.h); a stream whose start is not committed does not start.
      if (!services_.auditor->Records(*ctx)) return;
      Status started = ctx->stream_audit->Start(
          services_.auditor, services_.auditor->RecordOf(Exchange{ctx, req.method, req.path, res.status, req.body, {}}));
      if (!started.ok()) {
        ctx->stream_audit.reset();
        ReplaceWithAuditError(started, *ctx, res);
      }
      return;
    }
    // A HEAD response carries no body, so none is hashed.
    std::string_view sent_body = req.method == "HEAD" ? std::string_view() : std::string_view(res.body);
    Status audited = services_.auditor->Commit(Exchange{ctx, req.method, req.path, res.status, req.body, sent_body});
    if (!audited.ok() && ctx->change_in_outbox && res.status < 400) {
      // A 503 here would say "not served" of a change that stands: a created key's only copy of
      // its secret lost, a rotated key locked out. Its own event reaches the log from the outbox.
      log::Error("request record not stored; the change it made stands and its event waits in the auth outbox",
                 {{"request_id", ctx->request_id}, {"route", ctx->route}, {"error", audited.ToString()}});
    } else if (!audited.ok()) {
      ReplaceWithAuditError(audited, *ctx, res);
    }
  });

  library_.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    if (t_active == nullptr || t_active->ctx == nullptr) return;
    t_active->status = res.status;
    RecordRequest(metrics_, *t_active->ctx, req.method,
                  services_.auditor ? services_.auditor->ClientText(req.path) : req.path, res.status);
  });
}

Status Dispatcher::AuthenticateUnrouted(const httplib::Request& req, RequestContext* ctx) const {
  if (routes_.IsPublicPath(req.path)) return Status::OK();
  RequestContext scratch;
  if (ctx == nullptr) ctx = &scratch;
  // Any authenticated principal may learn that a path does not exist.
  return AuthenticateRequest(services_.authentication, req, auth::Permission::kSessionSelf, *ctx);
}

Status Dispatcher::AuthenticateHead(const httplib::Request& req, RequestContext& ctx) const {
  if (ctx.authenticated_from_head) return Status::OK();
  const Route* r = routes_.Find(req.method, req.path);
  if (r != nullptr) NoteRoute(*r, req, ctx);
  Status status = r == nullptr ? AuthenticateUnrouted(req, &ctx)
                               : AuthenticateRequest(services_.authentication, req, r->permission, ctx);
  ctx.authenticated_from_head = status.ok();
  return status;
}

bool Dispatcher::RefusedFromHead(const httplib::Request& req, httplib::Response& res) const {
  RequestContext* ctx = t_active ? t_active->ctx : nullptr;
  if (ctx == nullptr) return false;
  const Status denied = AuthenticateHead(req, *ctx);
  if (!denied.ok()) {
    ctx->refused_before_body = true;
    WriteAccessRefusal(denied, *ctx, res);
    return true;
  }
  if (!ctx->principal) ctx->max_body_bytes = std::min(ctx->max_body_bytes, kAnonymousBodyBytes);
  if (ctx->declared_body_bytes <= static_cast<uint64_t>(std::max<int64_t>(ctx->max_body_bytes, 0))) return false;
  ctx->refused_before_body = true;
  WriteRefusal(PayloadTooLarge(ctx->max_body_bytes), *ctx, res);
  return true;
}

void Dispatcher::RegisterRoutes() {
  for (const Route& route : routes_.routes()) {
    const Route* r = &route;
    httplib::Server::Handler wrapper = [this, r](const httplib::Request& req, httplib::Response& res) {
      RequestContext* ctx = t_active ? t_active->ctx : nullptr;
      RequestContext fallback;
      if (ctx == nullptr) ctx = &fallback;
      NoteRoute(*r, req, *ctx);
      Status status = ctx->authenticated_from_head ? Status::OK()
                                                   : AuthenticateRequest(services_.authentication, req, r->permission, *ctx);
      if (status.ok()) status = CheckRequestBody(req.body);
      if (status.ok()) status = r->handler(*ctx, req, res);
      if (!status.ok()) {
        ApiError error = FromStatus(status, ctx->request_id);
        if (status.code() == Status::Code::kInvalidArgument) {
          error.param = ctx->error_param ? ctx->error_param : api::RequestErrorParam(status);
          if (!error.param) error.param = NamedParameter(status.message(), req);
        }
        if (error.http_status >= 500) {
          log::Error("request failed", {{"request_id", ctx->request_id}, {"route", ctx->route},
                                        {"status", status.ToString()}});
        }
        WriteRefusal(error, *ctx, res);
      }
    };
    std::string pattern = RoutePathRegex(r->path);
    if (r->method == "GET") library_.Get(pattern, wrapper);
    else if (r->method == "POST") library_.Post(pattern, wrapper);
    else if (r->method == "PUT") library_.Put(pattern, wrapper);
    else if (r->method == "PATCH") library_.Patch(pattern, wrapper);
    else if (r->method == "DELETE") library_.Delete(pattern, wrapper);
    else if (r->method == "OPTIONS") library_.Options(pattern, wrapper);
    else log::Error("route with an unsupported method is not served", {{"method", r->method}, {"path", r->path}});
  }
}

Dispatcher::Outcome Dispatcher::Process(httplib::Stream& stream, RequestContext& ctx, bool close_connection) {
  ActiveRequest active{&ctx, &stream, 0};
  t_active = &active;
  Outcome out;
  out.ok = library_.process_request(stream, close_connection, out.connection_closed, nullptr);
  t_active = nullptr;
  if (ctx.stream_audit != nullptr && !ctx.stream_audit->finished()) {
    // The stream ended without its provider finishing it: the server stopped or the library
    // gave up writing. Its record is written now, before the connection is released.
    Status audited = ctx.stream_audit->Finish(kOutcomeInterrupted, nullptr);
    if (!audited.ok()) log::Error("interrupted stream not recorded", {{"request_id", ctx.request_id}, {"error", audited.ToString()}});
  }
  ctx.stream_audit.reset();
  out.status = active.status;
  return out;
}

}  // namespace kimi::http
