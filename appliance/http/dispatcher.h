// Dispatcher: the bridge to cpp-httplib for one request whose head already passed the
// server's checks. The library parses the request, reads the body, routes it through the
// route table and writes the response; the dispatcher's callbacks turn every library error
// into OpenAI JSON (error_response.h), authenticate the request and check its route's
// permission before the handler runs (request_auth.h; 401 and 403 in OpenAI JSON), add the
// console's security headers, add X-Request-Id, commit the request's audit record
// before the response is written (request_audit.h), and write the access log.
//
// The library's callbacks receive only the request and response, so Process() publishes
// the request's context to them through a thread-local pointer for its duration: a request
// runs on one thread from start to end.
//
// Thread safety: Process() may run on many threads at once; configuration happens in the
// constructor only.
#pragma once

#include <httplib.h>

#include "config/config.h"
#include "http/access_log.h"
#include "http/request_auth.h"
#include "http/request_context.h"
#include "http/routes.h"

namespace kimi::http {

// The connection the response of the request this thread processes goes out on, while the
// dispatcher processes it (null otherwise): a streamed response writes its chunks to it
// directly (openai_handlers.cc), framed exactly as the library frames them, to spare the
// library's copies per frame. Only the inference API's handlers use it.
httplib::Stream* ActiveResponseStream();

class RequestAuditor;

// The largest body a request without a principal takes (the login's name and password, each
// escaped, fit), whatever its method and path: a caller without a credential cannot make the
// server read and hold megabytes, on a public route or beside one (a 404 or 405 on a public
// path needs no credential). Decided from the authenticated head, not from the raw path, which
// the library reads decoded.
inline constexpr int64_t kAnonymousBodyBytes = 16 * 1024;

// What the dispatcher itself uses around every route (the handlers hold their own services).
// Owned by the daemon; outlives the server.
struct DispatcherServices {
  RequestAuthentication authentication;
  const RequestAuditor* auditor = nullptr;  // null: requests are not audited
};

class Dispatcher {
 public:
  // Serves `routes`, whose handlers are bound to their services.
  Dispatcher(DispatcherServices services, RouteTable routes, HttpMetrics& metrics, const config::LimitsConfig& limits);
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  struct Outcome {
    bool ok = false;                 // the library read a request and wrote a response
    bool connection_closed = false;  // the client asked to close
    int status = 0;                  // the status written, 0 when none was
  };
  // Precondition: `stream` is positioned at the start of a head accepted by ParseRequestHead.
  Outcome Process(httplib::Stream& stream, RequestContext& ctx, bool close_connection);

  const RequestAuditor* auditor() const { return services_.auditor; }
  const RouteTable& routes() const { return routes_; }

 private:
  // Exposes the library's per-request entry point so the server can own its connections.
  class Library : public httplib::Server {
   public:
    using httplib::Server::process_request;
    // The library streams a chunked body (a content provider: Server-Sent Events) only while
    // it believes its own listening socket is open; this server owns the sockets, so the
    // library is given a descriptor of its own (an eventfd, never used for I/O) to check.
    Library();
    ~Library() override;
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;

   private:
    int placeholder_fd_ = -1;
  };

  void RegisterRoutes();
  // For a request no route took (404, 405): OK when the path is public or the request
  // authenticates; otherwise the 401 it gets instead.
  Status AuthenticateUnrouted(const httplib::Request& req, RequestContext* ctx) const;
  // Authenticates a request from its head, before the library reads a byte of its body, so a
  // caller without a valid credential cannot make the server read and hold max_body_bytes:
  // a route's permission, or AuthenticateUnrouted's rule for a path no route takes. Runs once
  // per request (the 100-continue check, then routing).
  Status AuthenticateHead(const httplib::Request& req, RequestContext& ctx) const;
  // AuthenticateHead for the request being processed, then the body cap that follows from it
  // (kAnonymousBodyBytes without a principal; a larger Content-Length is refused with 413);
  // on a refusal, writes it to `res` and returns true (the body stays unread: the connection
  // closes after the answer).
  bool RefusedFromHead(const httplib::Request& req, httplib::Response& res) const;

  DispatcherServices services_;
  RouteTable routes_;
  HttpMetrics& metrics_;
  config::LimitsConfig limits_;
  Library library_;
};

}  // namespace kimi::http
