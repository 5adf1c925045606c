#include "audit/background_verifier.h"

#include <chrono>

#include "audit/audit_store.h"
#include "audit/log_verifier.h"
#include "kimi/log.h"

namespace kimi::audit {

BackgroundVerifier::BackgroundVerifier(std::string db_path, PublicKey key,
                                       std::function<void(const std::string& reason)> on_failure) {
  thread_ = std::thread([this, db_path = std::move(db_path), key, on_failure = std::move(on_failure)] {
    Run(db_path, key, on_failure);
  });
}

BackgroundVerifier::~BackgroundVerifier() {
  cancel_.store(true);
  Wait();
}

void BackgroundVerifier::Wait() {
  if (thread_.joinable()) thread_.join();
}

void BackgroundVerifier::Run(const std::string& db_path, const PublicKey& key,
                             const std::function<void(const std::string&)>& on_failure) {
  const auto started = std::chrono::steady_clock::now();
  AuditStoreOptions options;
  options.read_only = true;
  Result<std::unique_ptr<AuditStore>> store = AuditStore::Open(db_path, options);
  if (!store.ok()) {
    log::Warn("audit log: background verification could not open the log", {{"error", store.status().ToString()}});
    return;
  }
  VerifyOptions verify;
  verify.cancelled = [this] { return cancel_.load(std::memory_order_relaxed); };
  Result<VerifyReport> report = VerifyAuditLog(**store, key, verify);
  if (!report.ok()) {
    // Cancelled at shutdown, or the database could not be read: no verdict either way.
    if (report.status().code() != Status::Code::kCancelled) {
      log::Warn("audit log: background verification could not run", {{"error", report.status().ToString()}});
    }
    return;
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  if (!report->ok()) {
    on_failure(DescribeFailure(*report));
    return;
  }
  log::Info("audit log: background verification passed",
            {{"records", static_cast<int64_t>(report->records)}, {"heads", static_cast<int64_t>(report->heads)},
             {"ms", static_cast<int64_t>(ms)}});
}

}  // namespace kimi::audit
