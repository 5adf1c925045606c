// Daemon: kimi-appliance from a loaded configuration to its exit. Open() runs the start-up
// steps in a fixed order, each a small function that opens one part with what the earlier
// steps opened (no part is built first and given its dependencies later); Run() serves until
// SIGTERM or SIGINT, drains, and closes the parts in the reverse order.
//
// The steps, in order (open_edge.cc, open_records.cc, open_serving.cc; daemon.cc runs them):
//   OpenLogging    log level and format, umask 077, the stop signals blocked, metrics, readiness
//   OpenTls        the TLS certificate (server.tls), before the port
//   OpenBackends   the embedded engine's backend, the router, the SLO series, request rules
//   OpenListener   the listening socket: a daemon that cannot serve fails before touching data
//   OpenStores     the data directory made owner-only, the database opened and migrated
//   OpenAudit      the audit log (verified at start), service.start, settings.changed, the
//                  streams the previous run left open, the request auditor
//   OpenAuth       the server secret, the auth store, its outbox into the audit log
//   OpenPolicy     the active policy (the shipped default on a first start)
//   Announce       the "listening" line (what the integration harness waits for), the console
//   OpenModels     the trust store, the model store and the served model, the model admin
//   OpenServer     the HTTP server over the listening socket: the serving routes and every
//                  /admin/v1 group (admin/admin_routes.h), each with the services it uses
// A failing step has logged why (one error line naming what could not open) and returns
// its error; the steps opened before it are closed by the destructor, in reverse order.
//
// Thread safety: Open() and Run() from the main thread, once each; Run() starts the signal
// watcher, the model loader and the server's threads, and joins them before it returns.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "kimi/status.h"

namespace kimi::daemon {

// What the command line said besides the settings: the settings digest of service.start
// covers the file and these overrides.
struct DaemonArgs {
  std::string config_path = config::kDefaultConfigPath;
  std::vector<config::Override> overrides;
};

class Daemon {
 public:
  // Runs the start-up steps. Error: the failing step's (already logged).
  static Result<std::unique_ptr<Daemon>> Open(config::AppConfig config, DaemonArgs args);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Serves until the first SIGTERM/SIGINT, then drains and closes every part. Error: the
  // first part that did not close cleanly (service.stop unrecorded, the audit log or the
  // database not closed), each already logged; the daemon then exits 1.
  Status Run();

  // "127.0.0.1:41234": the address the server listens on.
  const std::string& bound_address() const;

 private:
  struct Parts;
  explicit Daemon(std::unique_ptr<Parts> parts);

  Status OpenLogging();
  Status OpenTls();
  Status OpenBackends();
  Status OpenListener();
  Status OpenStores();
  Status OpenAudit();
  Status OpenAuth();
  Status OpenPolicy();
  Status Announce();
  Status OpenModels();
  Status OpenServer();

  std::unique_ptr<Parts> parts_;
};

}  // namespace kimi::daemon
