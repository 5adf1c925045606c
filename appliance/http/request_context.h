// RequestContext: what the server knows about one request besides its bytes: its id, the
// peer, when it started, which route served it, who sent it (once authenticated), and
// transport events (a cap or a deadline
// hit while the HTTP library read the body) that decide the error sent back.
//
// Owned by the connection loop for the duration of one request and passed by reference to
// the handler; never shared between threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "api/backend.h"
#include "auth/principal.h"

namespace kimi::http {

struct RequestContext {
  std::string request_id;
  std::string remote_addr;  // "127.0.0.1:53422"
  std::chrono::steady_clock::time_point start;
  std::string route = "unmatched";  // the route table's name, the metrics label
  bool probe = false;               // the route is a probe (Route::probe)
  // Values of the route's path parameters: "/v1/models/{id...}" fills "id".
  std::map<std::string, std::string> path_params;
  bool body_has_password = false;   // Route::body_has_password: the body is not hashed
  bool body_limit_hit = false;
  bool read_deadline_hit = false;
  // Set once the request authenticated; its id and role go into the audit record.
  std::optional<auth::Principal> principal;
  // Why authentication or authorisation refused the request (never the presented secret);
  // the audit record's detail.
  std::string auth_failure;
  // Seconds the client should wait when its key's rate limit refused it (Retry-After).
  int64_t retry_after_s = 0;
  // Which backend served a generation request, after how many attempts, and the router's
  // decision line, for the audit record. Whole responses: final. Streams: as of the first
  // event (or the error before it), since the record may be written while the stream runs.
  api::BackendOutcome backend_outcome;
};

}  // namespace kimi::http
