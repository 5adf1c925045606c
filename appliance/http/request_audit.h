// RequestAuditor: the HTTP layer's one audit hook. Every response the daemon produces, from a
// route or refused on the raw socket, passes through Commit() after it is complete and before
// its first byte is written: Commit() builds the request's AuditRecord (request id, source,
// action, outcome and status, total latency, SHA-256 of both bodies), queues it on the audit
// sink, and waits for its group commit. The writing thread waits; the sink's writer commits
// the records of many waiting requests in one transaction.
//
// When the record is not committed and fail_closed is set, Commit() returns Unavailable with
// the sink's reason and the caller answers AuditUnavailable() instead of the response; with
// fail_closed off it logs the failure and lets the response go.
// Probe routes (Route::probe) are not recorded unless record_probes is set or the request
// was refused by authentication. Status reads (Route::status_read) are not recorded when a
// console session reads them or when they carry no credential at all, unless record_probes
// is set; read with an API key, or refused for a presented credential, they are. The record's actor and role are the authenticated
// principal's (a key id or user name, never a secret); a refused request's detail says why.
// A request whose route carries a password in its body (Route::body_has_password) gets no
// request_sha256: a hash of a guessable secret would let a reader of the log guess it.
//
// A streamed response's body does not exist when it starts, so it gets two records: RecordOf()
// builds its start record as the response starts, which the stream's StreamAudit
// (generation_audit.h) commits before the first byte, and the StreamAudit commits an end
// record, with the SHA-256 of the bytes actually sent, the token counts and the outcome,
// before the final frames ([DONE]) are written, or once the client is gone.
// The record carries the request's AuditFacts (model, bundle digest, backend and router
// decision, tokens, time to first token, policy decisions). Under content.store_content the
// record also holds the request body as prompt text and the answer as completion text,
// apart from the hashed leaf (audit/content_policy.h).
// A request without a principal (refused before or by authentication, a failed sign-in) gets
// its own record within the AnonymousRecordBudget (anonymous_record_budget.h); past it, it is
// counted, and each count becomes one "http.requests_counted" record once its window has passed
// (checked by the count flusher every window / 4, and as later exchanges are committed) or at
// stop (RecordAllCounted).
// Public header of http/: other folders include it.
// Thread safety: Commit() may run on many threads at once (the sink is thread-safe).
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "audit/content_policy.h"
#include "audit/record.h"
#include "audit/record_builder.h"
#include "http/anonymous_record_budget.h"
#include "http/request_context.h"
#include "kimi/status.h"

namespace kimi::audit {
class AuditSink;
}

namespace kimi::http {

struct AuditPolicy {
  bool fail_closed = true;
  bool record_probes = false;
  audit::AuditContentPolicy content;  // default: no content stored
  AnonymousRecordBudgetOptions anonymous;  // records of requests without a principal
  // What of a client's own text that is not its body (its X-Request-Id, the path it asked for)
  // may be stored and logged: the active policy's redaction. Null: as sent.
  std::function<std::string(std::string_view)> shown_client_text;
};

// One finished exchange, as it is about to be written.
struct Exchange {
  const RequestContext* ctx = nullptr;
  std::string_view method;  // "-" when the request line was unreadable
  std::string_view path;    // without the query
  int status = 0;
  std::string_view request_body;   // as received (empty when refused before the body)
  std::string_view response_body;  // as it will be sent
};

class RequestAuditor {
 public:
  // `sink` outlives the auditor; null: nothing is recorded.
  RequestAuditor(AuditPolicy policy, audit::AuditSink* sink)
      : sink_(sink), policy_(policy), anonymous_(std::make_unique<AnonymousRecordBudget>(policy.anonymous)) {}
  ~RequestAuditor() { StopCountFlusher(); }
  RequestAuditor(const RequestAuditor&) = delete;
  RequestAuditor& operator=(const RequestAuditor&) = delete;

  // A thread that writes each count once its window has passed, whether or not another request
  // comes (without it, counts waited for the next request, and a kill in a quiet spell after a
  // flood lost all of them). Stopped by StopCountFlusher() or the destructor.
  void StartCountFlusher();
  void StopCountFlusher();

  // OK when the record is committed or the request is not recorded; Unavailable (with the
  // reason for the operator) when the response must be replaced by a 503.
  Status Commit(const Exchange& exchange) const;

  // Whether the exchange gets a record at all (probes do not, unless configured or refused).
  bool Records(const RequestContext& ctx) const;
  // The exchange's record, not committed.
  audit::AuditRecord RecordOf(const Exchange& exchange) const;
  // Queues the record and waits for its commit; the result as for Commit().
  Status CommitRecord(audit::AuditRecord record, std::string_view request_id) const;
  // Queues the record and waits for its commit: its seq, or the sink's failure as it is
  // (whatever fail_closed says; see Uncommitted()). 0 when there is no sink.
  Result<uint64_t> TryCommit(audit::AuditRecord record) const;
  // What a record that was not committed (`failure`) means for its response: logged, then OK
  // with fail_closed off, else Unavailable with the store's reason.
  Status Uncommitted(const Status& failure, std::string_view request_id) const;
  // Hands the sink a record it keeps until the store can write it (AuditSink::
  // RecordWhenWritable); does not wait.
  void CommitWhenWritable(audit::AuditRecord record) const;
  // OK while records can be written or fail_closed is off; else Unavailable with the reason.
  // A stream checks it before each frame: a store that fails mid-stream ends the stream.
  Status CheckWritable() const;
  // `text`, a client's X-Request-Id or path, as records and the access log may keep it.
  std::string ClientText(std::string_view text) const;
  // Hands the sink a record of every count of requests not recorded one by one (the stop).
  void RecordAllCounted() const;
  const AuditPolicy& policy() const { return policy_; }
  bool attached() const { return sink_ != nullptr; }

 private:
  void RecordCounted(const std::vector<CountedRequests>& counts) const;

  audit::AuditSink* sink_ = nullptr;
  AuditPolicy policy_;
  std::unique_ptr<AnonymousRecordBudget> anonymous_;
  std::thread flusher_;
  std::mutex flusher_mu_;
  std::condition_variable flusher_cv_;
  bool flusher_stopping_ = false;  // guarded by flusher_mu_
};

// "ok" below 400, "denied" for 401/403, "client_disconnected" for 499 (a whole response's
// client hung up before it was complete), "invalid" for other 4xx, "error" for 5xx.
std::string_view OutcomeOf(int http_status);

// Who a request's audit records name: its principal (none before authentication), the client's
// address and the request's ids.
audit::Actor AuditActorOf(const RequestContext& ctx);

}  // namespace kimi::http
