// BackgroundVerifier: one full verification of audit.db after the daemon has started. The
// start-up check (startup_verify.h) reads only the rows written since the previous start;
// this pass reads every row and every head, so an edit to a row verified at an earlier start
// is found too. It runs on its own thread and its own read-only connection (one snapshot; the
// writer goes on meanwhile) and, when the log fails, calls on_failure with the first bad
// sequence number and its problem; the daemon then distrusts the writer (no head is signed
// any more, the audit component is not ready).
// Public header of audit/: other folders include it.
// Thread safety: construct and destroy on one thread; the destructor cancels a pass still
// running and joins it. on_failure runs on the verifier's thread.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "audit/signed_head.h"

namespace kimi::audit {

class BackgroundVerifier {
 public:
  BackgroundVerifier(std::string db_path, PublicKey key, std::function<void(const std::string& reason)> on_failure);
  ~BackgroundVerifier();
  BackgroundVerifier(const BackgroundVerifier&) = delete;
  BackgroundVerifier& operator=(const BackgroundVerifier&) = delete;

  // Blocks until the pass has finished (tests).
  void Wait();

 private:
  void Run(const std::string& db_path, const PublicKey& key,
           const std::function<void(const std::string&)>& on_failure);

  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

}  // namespace kimi::audit
