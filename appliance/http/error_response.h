// The one place where errors become HTTP responses.
//
// Every error the daemon sends, whether it comes from a handler's Status or from the
// transport (unknown route, body or header cap, overload), is an ApiError rendered by
// RenderErrorBody() into OpenAI's shape:
//   {"error":{"message":"...","type":"invalid_request_error","param":null,"code":"..."}}
// FromStatus() is the single mapping from kimi::Status codes to HTTP statuses and OpenAI
// error types. Server-side failures (Internal, IOError, Corruption) never reach the client
// in detail: the client gets a generic message with the request id, the log gets the rest.
// Public header of http/: other folders include it.
// Thread safety: pure functions on values.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kimi/status.h"

namespace httplib {
struct Response;
}

namespace kimi::http {

struct ApiError {
  int http_status = 500;
  std::string type;                  // OpenAI "type": invalid_request_error, server_error, ...
  std::string code;                  // OpenAI "code": a stable machine-readable name
  std::string message;               // for people
  std::optional<std::string> param;  // the request field at fault, when there is one
};

// Status -> ApiError. `request_id` is quoted in messages that hide server-side details.
ApiError FromStatus(const Status& status, std::string_view request_id);

// Errors that arise in the transport rather than in a handler.
ApiError RouteNotFound(std::string_view method, std::string_view path);
ApiError MethodNotAllowed(std::string_view method, std::string_view path, std::string_view allowed);
ApiError PayloadTooLarge(int64_t limit_bytes);
ApiError HeadersTooLarge(int64_t limit_bytes);
ApiError UriTooLong();
ApiError UnsupportedContentEncoding(std::string_view encoding);
// 415: the body is not of the media type the route reads.
ApiError UnsupportedMediaType(std::string_view expected, std::string_view got);
ApiError RequestTimeout();
ApiError Overloaded();
ApiError MalformedRequest(std::string_view reason);
// 503 when the request's audit record could not be committed and the daemon fails closed;
// `reason` is the audit store's own (AuditSink::Reason()), for the operator.
ApiError AuditUnavailable(std::string_view reason);
// An error status produced inside the HTTP library (no body yet): 400, 404, 413, 414, 416...
ApiError FromLibraryStatus(int http_status, std::string_view method, std::string_view path);

// {"error":{...}} as a compact JSON string.
std::string RenderErrorBody(const ApiError& error);

// The error as one SSE frame ("data: {"error":{...}}\n\n", api::SseDataFrame), for a stream
// that fails after its head was sent.
std::string RenderErrorFrame(const ApiError& error);

// Fills `res` (status, JSON body, content type) from `error`.
void WriteError(const ApiError& error, httplib::Response& res);

// A complete HTTP/1.1 response with Connection: close, for paths that answer on the raw
// socket before the HTTP library has parsed a request (431, early 413, 503 on overload).
std::string RenderRawErrorResponse(const ApiError& error, std::string_view request_id);

// "Not Found" and friends for the status line.
std::string_view ReasonPhrase(int http_status);

}  // namespace kimi::http
