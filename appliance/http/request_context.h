// RequestContext: what the server knows about one request besides its bytes: its id, the
// peer, when it started, which route served it, and transport events (a cap or a deadline
// hit while the HTTP library read the body) that decide the error sent back.
//
// Owned by the connection loop for the duration of one request and passed by reference to
// the handler; never shared between threads.
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace kimi::http {

struct RequestContext {
  std::string request_id;
  std::string remote_addr;  // "127.0.0.1:53422"
  std::chrono::steady_clock::time_point start;
  std::string route = "unmatched";  // the route table's name, the metrics label
  bool probe = false;               // the route is a probe (Route::probe)
  // Values of the route's path parameters: "/v1/models/{id...}" fills "id".
  std::map<std::string, std::string> path_params;
  bool body_limit_hit = false;
  bool read_deadline_hit = false;
};

}  // namespace kimi::http
