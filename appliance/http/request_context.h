// RequestContext: what the server knows about one request besides its bytes, grouped by who
// writes it:
//
//   transport       the connection (connection.cc): its id, the peer, when it started, the
//                   client certificate, and the events (a cap or a deadline hit while the HTTP
//                   library read the body) that decide the error sent back
//   route           the dispatcher, from the route that matched (routes.h)
//   authentication  request_auth.h: who sent it, or why it was refused
//   handler output  what the handler hands back to the dispatcher and the audit record: an
//                   error's param, the model request's AuditFacts, a streamed response's audit
//
// A handler's own services are bound into its route (routes.h), never carried here.
// Public header of http/: other folders include it.
// Owned by the connection loop for the duration of one request and passed by reference to
// the handler; never shared between threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <functional>
#include <string_view>
#include <string>
#include <vector>

#include "audit/record.h"
#include "auth/principal.h"

namespace kimi::http {

class StreamAudit;

// What a model request adds to its audit record beyond the HTTP exchange; the generation
// handler fills it (generation_audit.h), the policy step fills `policy`.
struct AuditFacts {
  std::string model;
  std::string model_digest;    // bundle digest of the served model version
  std::string backend;
  std::string route_decision;
  int64_t attempts = 0;
  // The request's tokens: the backend's counts once its finish event arrived; before that
  // (a request cut short) the estimated prompt and one token per generated delta
  // (generation_audit.h). The one source of counts for the audit record and the key's quotas.
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  std::string finish_reason;   // the finish event's ("stop", "length", "tool_calls")
  int64_t ttft_us = 0;         // from the request's start to the backend's first event
  std::vector<std::string> policy;  // policy decisions taken, in order
  // Answer text, collected only when kept (GenerationTally::keep_completion_text).
  std::string completion_text;
  // Set by the policy step when the active policy stores content: what of the request body
  // and the answer is kept, redacted as that policy says (nullopt: nothing). Unset: the
  // auditor's own AuditPolicy::content applies.
  std::function<std::optional<audit::AuditContent>(std::string_view request_body, std::string_view completion)>
      stored_content;
  // Set by a handler whose body goes out in chunks after the record is committed but is known
  // in advance (an audit export, read twice from one snapshot): the SHA-256 (hex) of the
  // bytes it will send, recorded in place of the empty body the dispatcher sees.
  std::string response_sha256;
};

struct RequestContext {
  // transport
  std::string request_id;         // made by the server (request_id.h), unique
  std::string client_request_id;  // the X-Request-Id header as the client sent it; "" when none
  std::string remote_addr;  // "127.0.0.1:53422"
  std::chrono::steady_clock::time_point start;
  // The connection's TLS client certificate verified against server.tls.admin_client_ca_file.
  bool client_certificate_verified = false;
  bool body_limit_hit = false;
  bool read_deadline_hit = false;
  // The library refused the request as malformed after this server's own head parser let it
  // through: where one request ends is in doubt, so the connection closes after the answer.
  bool library_refused = false;
  // The most body bytes this request may send: limits.max_body_bytes, lowered by the
  // dispatcher when the head authenticates no principal (dispatcher.h).
  int64_t max_body_bytes = 0;
  // The body's size as its Content-Length says (0 without one; a chunked body is counted as
  // it arrives).
  uint64_t declared_body_bytes = 0;
  // Authenticated (or public) from the head alone, before the library read the body; the
  // route does not authenticate again. refused_before_body: refused from the head, its body
  // unread, so the connection closes after the answer.
  bool authenticated_from_head = false;
  bool refused_before_body = false;
  // The chunked body's framing broke RFC 9112 (a chunk-size line with a sign, "0x", spaces
  // or a bare LF): where the request ends is in doubt.
  bool malformed_chunk = false;
  // The handler changed appliance.db (keys, users, roles, sessions, a policy version, a model
  // act), whose records wait in the audit outbox (auth_events) until the audit log takes them:
  // when this response's own record cannot be stored, the change still stands, so the client
  // gets its result, not a 503.
  bool change_in_outbox = false;

  // route
  std::string route = "unmatched";  // the route table's name, the metrics label
  bool probe = false;               // the route is a probe (Route::probe)
  bool body_has_password = false;   // Route::body_has_password: the body is not hashed
  bool status_read = false;         // Route::status_read
  // Values of the route's path parameters: "/v1/models/{id...}" fills "id".
  std::map<std::string, std::string> path_params;

  // authentication
  // Set once the request authenticated; its id and role go into the audit record.
  std::optional<auth::Principal> principal;
  // Why authentication or authorisation refused the request (never the presented secret);
  // the audit record's detail. A handler that refuses for the caller's sake (a quota, a
  // wrong password) sets it too.
  std::string auth_failure;
  // Authentication refused the request because it carried no credential at all (no key, no
  // session cookie): a visitor who has not signed in, not a refused secret.
  bool no_credentials = false;
  // Seconds the client should wait when its key's rate limit refused it (Retry-After).
  int64_t retry_after_s = 0;

  // handler output
  // Set by an admin handler before it refuses a request over one body field: the field's
  // name, sent as OpenAI's error `param` with a 400.
  std::optional<std::string> error_param;
  AuditFacts audit;
  // Set by a handler whose response is streamed: the request's audit record is then written
  // when the stream ends (generation_audit.h), not before the response starts.
  std::shared_ptr<StreamAudit> stream_audit;
};

}  // namespace kimi::http
