// PolicyService: the daemon's active policy and its history. Holds the active version (the
// parsed Policy and its compiled Redactor) behind a shared pointer, so a request takes one
// snapshot and keeps it for its whole life while an administrator installs a new version;
// the next request sees the new one, no restart needed.
//
// Submit() validates a document (every error, with its JSON pointer), compiles it, stores it
// as the next version and records an administrative audit act "policy.update" whose detail
// is {"version", "previous", "name", "diff"} with the RFC 6902 patch from the previous
// document, and only then activates it. Restore() does the same with an older version's
// document (a revert), adding "restores" to the detail. Any failure (invalid document, database, audit
// record) leaves the previous version active and nothing stored.
// Public header of policy/: other folders include it.
// Thread safety: Active() may be called from any thread at any time; Submit() and Restore() calls are
// serialised on their own mutex so each diff is taken against the version it replaces.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/record_builder.h"
#include "auth/server_secret.h"
#include "kimi/status.h"
#include "policy/policy.h"
#include "policy/policy_store.h"
#include "policy/prompt_tokens.h"
#include "policy/redactor.h"

namespace kimi::policy {

// One installed version, immutable.
struct ActivePolicy {
  int64_t version = 0;
  nlohmann::json document;
  Policy policy;
  std::unique_ptr<Redactor> redactor;
};

// Who changes the policy, for the audit record: a key id or user name; "kimi-appliance" at
// first start.
using PolicyActor = audit::Actor;

// Writes an act's audit record inside the act's transaction (db): the daemon passes
// auth::InsertAuditRecord, the outbox, so that a policy version and its record commit together
// or not at all. An error rolls the act back.
using AuditAct = std::function<Status(sqlite3* db, audit::AuditRecord)>;

// Replaces each redaction pattern of a policy document that does not compile by one that
// matches the whole of any non-empty text; returns the JSON pointers of those replaced.
std::vector<std::string> ReplaceUncompilablePatterns(nlohmann::json* document);

class PolicyService {
 public:
  // `store` and `secret` (may be null: then no rule may hash) outlive the service.
  PolicyService(PolicyStore* store, const auth::ServerSecret* secret, AuditAct audit,
                std::function<int64_t()> clock_ms = nullptr);
  PolicyService(const PolicyService&) = delete;
  PolicyService& operator=(const PolicyService&) = delete;

  // Activates the highest stored version; when none is stored, submits `initial` (the
  // shipped default) as version 1. A stored pattern this version no longer compiles (a
  // lookahead, which the matcher does not run) fails closed rather than stopping the start:
  // it matches every text (ReplaceUncompilablePatterns) and an error names it in the log, so
  // the operator can submit a corrected policy. Errors: a stored version that no longer
  // compiles otherwise, or the initial document refused.
  Status Start(const nlohmann::json& initial, const PolicyActor& system);

  // The active version; null before Start() succeeded.
  std::shared_ptr<const ActivePolicy> Active() const;

  // Installs `document` as the next version. InvalidArgument listing every error when the
  // document is refused. Returns the new version.
  Result<int64_t> Submit(const nlohmann::json& document, const PolicyActor& actor);

  // Makes stored version `version`'s document active again by installing a copy of it as the
  // next version (versions never change, and the highest one is active), audited as
  // "policy.update" with "restores": version in its detail. NotFound: no such version;
  // FailedPrecondition: it is the active one; InvalidArgument: it no longer validates.
  Result<int64_t> Restore(int64_t version, const PolicyActor& actor);

  // Called after each act commits, to move its record from the outbox into the audit log and
  // wait (the daemon: AuditOutbox::Drain). A failure leaves the record queued, and the act stands.
  void SetAfterCommit(std::function<Status()> flush) { after_commit_ = std::move(flush); }

  PolicyStore& store() { return *store_; }

  // Where the decision step finds a prompt-token counter for a model (the daemon wires the
  // embedded engine's tokenizer). Precondition: called before requests are served.
  void SetPromptTokenCounters(PromptTokenCounterLookup lookup) { counters_ = std::move(lookup); }
  // Null when no counter was wired or none holds the model.
  PromptTokenCounter PromptTokenCounterFor(const std::string& model) const {
    return counters_ ? counters_(model) : nullptr;
  }

 private:
  Result<std::shared_ptr<ActivePolicy>> Compile(int64_t version, const nlohmann::json& document) const;
  // Submit() and Restore(); `restores` is the version copied, 0 for a new document.
  // Precondition: submit_mu_ held.
  Result<int64_t> Install(const nlohmann::json& document, const PolicyActor& actor, int64_t restores);
  int64_t NowMs() const;

  PolicyStore* store_ = nullptr;
  const auth::ServerSecret* secret_ = nullptr;
  AuditAct audit_;
  std::function<Status()> after_commit_;
  std::function<int64_t()> clock_ms_;
  PromptTokenCounterLookup counters_;  // set before serving, read-only after

  std::mutex submit_mu_;  // one Submit() at a time
  mutable std::mutex mu_;
  std::shared_ptr<const ActivePolicy> active_;  // guarded by mu_
};

}  // namespace kimi::policy
