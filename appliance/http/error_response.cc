#include "http/error_response.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api/sse_frames.h"

namespace kimi::http {
namespace {

ApiError Make(int http_status, std::string type, std::string code, std::string message) {
  return ApiError{http_status, std::move(type), std::move(code), std::move(message), std::nullopt};
}

std::string HiddenDetail(std::string_view what, std::string_view request_id) {
  return std::string(what) + "; the server log has the details under request id " + std::string(request_id);
}

}  // namespace

ApiError FromStatus(const Status& status, std::string_view request_id) {
  using C = Status::Code;
  const std::string& m = status.message();
  switch (status.code()) {
    case C::kOk: return Make(500, "server_error", "internal_error", HiddenDetail("an OK status was sent as an error", request_id));
    case C::kInvalidArgument: return Make(400, "invalid_request_error", "invalid_request", m);
    case C::kFailedPrecondition: return Make(400, "invalid_request_error", "failed_precondition", m);
    case C::kUnauthenticated: return Make(401, "authentication_error", "invalid_api_key", m);
    case C::kPermissionDenied: return Make(403, "permission_error", "permission_denied", m);
    case C::kNotFound: return Make(404, "not_found_error", "not_found", m);
    case C::kAlreadyExists: return Make(409, "invalid_request_error", "conflict", m);
    case C::kResourceExhausted: return Make(429, "rate_limit_error", "rate_limit_exceeded", m);
    case C::kUnimplemented: return Make(501, "invalid_request_error", "not_implemented", m);
    case C::kUnavailable: return Make(503, "server_error", "service_unavailable", m);
    case C::kDeadlineExceeded: return Make(504, "server_error", "timeout", m);
    case C::kBadGateway: return Make(502, "server_error", "bad_gateway", m);
    // nginx's "client closed request": nobody reads it, but the audit record and metrics do.
    case C::kCancelled: return Make(499, "invalid_request_error", "client_closed_request", m);
    case C::kCorruption:
    case C::kIOError:
    case C::kInternal: return Make(500, "server_error", "internal_error", HiddenDetail("internal server error", request_id));
  }
  return Make(500, "server_error", "internal_error", HiddenDetail("internal server error", request_id));
}

ApiError RouteNotFound(std::string_view method, std::string_view path) {
  return Make(404, "not_found_error", "unknown_route",
              "no route for " + std::string(method) + " " + std::string(path));
}

ApiError MethodNotAllowed(std::string_view method, std::string_view path, std::string_view allowed) {
  return Make(405, "invalid_request_error", "method_not_allowed",
              std::string(path) + " does not accept " + std::string(method) + "; allowed: " + std::string(allowed));
}

ApiError PayloadTooLarge(int64_t limit_bytes) {
  return Make(413, "invalid_request_error", "request_too_large",
              "request body exceeds the limit of " + std::to_string(limit_bytes) + " bytes");
}

ApiError HeadersTooLarge(int64_t limit_bytes) {
  return Make(431, "invalid_request_error", "request_header_fields_too_large",
              "request headers exceed the limit of " + std::to_string(limit_bytes) +
                  " bytes (or one header line exceeds 8192 bytes)");
}

ApiError UriTooLong() {
  return Make(414, "invalid_request_error", "uri_too_long", "request line exceeds 8192 bytes");
}

ApiError UnsupportedContentEncoding(std::string_view encoding) {
  return Make(415, "invalid_request_error", "unsupported_content_encoding",
              "request bodies must not be compressed; got Content-Encoding: " + std::string(encoding));
}

ApiError UnsupportedMediaType(std::string_view expected, std::string_view got) {
  return Make(415, "invalid_request_error", "unsupported_media_type",
              "the body must be sent as Content-Type: " + std::string(expected) + "; got " +
                  (got.empty() ? std::string("none") : std::string(got)));
}

ApiError RequestTimeout() {
  return Make(408, "invalid_request_error", "request_timeout", "the request was not received in time");
}

ApiError Overloaded() {
  return Make(503, "server_error", "overloaded", "the server is serving its maximum number of connections; retry later");
}

ApiError MalformedRequest(std::string_view reason) {
  return Make(400, "invalid_request_error", "malformed_request", "malformed HTTP request: " + std::string(reason));
}

ApiError AuditUnavailable(std::string_view reason) {
  return Make(503, "server_error", "audit_unavailable",
              "the request was not served because its audit record could not be stored: " + std::string(reason));
}

ApiError FromLibraryStatus(int http_status, std::string_view method, std::string_view path) {
  switch (http_status) {
    case 404: return RouteNotFound(method, path);
    case 414: return UriTooLong();
    case 416: return Make(416, "invalid_request_error", "range_not_satisfiable", "invalid Range header");
    case 400: return MalformedRequest("the request line, headers or body could not be parsed");
    default:
      if (http_status >= 500) return Make(http_status, "server_error", "internal_error", "internal server error");
      return Make(http_status, "invalid_request_error", "invalid_request", std::string(ReasonPhrase(http_status)));
  }
}

std::string RenderErrorBody(const ApiError& error) {
  nlohmann::ordered_json inner;
  inner["message"] = error.message;
  inner["type"] = error.type;
  inner["param"] = error.param ? nlohmann::ordered_json(*error.param) : nlohmann::ordered_json(nullptr);
  inner["code"] = error.code;
  nlohmann::ordered_json outer;
  outer["error"] = std::move(inner);
  return outer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string RenderErrorFrame(const ApiError& error) { return api::SseDataFrame(RenderErrorBody(error)); }

void WriteError(const ApiError& error, httplib::Response& res) {
  res.status = error.http_status;
  res.set_content(RenderErrorBody(error), "application/json");
}

std::string RenderRawErrorResponse(const ApiError& error, std::string_view request_id) {
  std::string body = RenderErrorBody(error);
  std::string out = "HTTP/1.1 " + std::to_string(error.http_status) + " " + std::string(ReasonPhrase(error.http_status)) +
                    "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n";
  if (!request_id.empty()) out += "X-Request-Id: " + std::string(request_id) + "\r\n";
  out += "\r\n";
  out += body;
  return out;
}

std::string_view ReasonPhrase(int http_status) {
  switch (http_status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Error";
  }
}

}  // namespace kimi::http
