// RecordBuilder: the one way an AuditRecord is made. Each kind of audited event has a named
// constructor that fills the fields every record of that kind carries, the same way wherever
// it is written; fluent setters add what the caller knows; Build() hands the record over.
//
//   kind          made by                            sets
//   ApiRequest    http/request_audit.cc              actor, action "http.<route>"
//   StreamStart   http/generation_audit.cc           the request's record, outcome "started"
//   StreamEnd     http/generation_audit.cc,          the start's identity, start_seq
//                 audit/audit_sink.cc (interrupted)
//   AdminAction   auth outbox, policy, audit export  actor, action, target, outcome "ok"
//   ServiceEvent  appliance/main.cc                  the daemon as actor, action, outcome "ok"
//   ModelEvent    models/ (store, trust, serving)    actor, action, target, outcome and detail
//                                                    from a Status
//
// Nothing here bounds or escapes text: the sink normalises every record (NormalizeRecord), so
// the bytes that are hashed are the same whichever way the fields were set.
// Public header of audit/: other folders include it.
// Thread safety: a builder is a value used by one thread; the functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/record.h"
#include "kimi/status.h"

namespace kimi::audit {

// Who acted, as a record names them. Never a secret.
struct Actor {
  std::string name;               // key id or user name; "" for an unauthenticated request
  std::string role;               // user, admin, auditor, system, ...
  std::string source;             // client address, "kimictl", "local"
  std::string request_id;         // the server's id of the request that carried the act
  std::string client_request_id;  // the X-Request-Id the client sent; "" when none
};

// The daemon's own identity in its service events.
inline constexpr std::string_view kDaemonActor = "kimi-appliance";
inline constexpr std::string_view kSystemRole = "system";

// "ok" for OK; "refused" for a request the act turned down (invalid, not found, exists,
// denied, precondition, corruption); "error" for anything else.
std::string OutcomeOfStatus(const Status& status);

class RecordBuilder {
 public:
  // A request to the API: action "http.<route>" (route "unmatched" for a path outside the
  // table). The caller adds the outcome, HTTP status, hashes and what the model reported.
  static RecordBuilder ApiRequest(const Actor& actor, std::string_view route);
  // The record committed before a streamed response's first byte: the request's record with
  // outcome "started", `prompt_tokens` (what is known before generation), no completion
  // tokens and no response hash yet.
  static RecordBuilder StreamStart(AuditRecord request, int64_t prompt_tokens);
  // The record that ends the stream `start` started: the request's identity as the start
  // recorded it (actor, role, source, request ids, action, target, model and digest,
  // backend, router decision, attempts, policy decisions, request hash, HTTP status) and
  // start_seq = *start_seq (kNoStartSeq when the start was never committed). The caller adds
  // what the end knows; time_ms is left 0 for the sink.
  static RecordBuilder StreamEnd(const AuditRecord& start, std::optional<uint64_t> start_seq);
  // An act on the appliance's state by a person or a key (an admin route, an auth event, a
  // policy change, an export): outcome "ok" unless set.
  static RecordBuilder AdminAction(const Actor& actor, std::string_view action, std::string_view target);
  // An act of the daemon itself ("service.start", "service.stop"): actor kimi-appliance,
  // role system, no source, outcome "ok".
  static RecordBuilder ServiceEvent(std::string_view action, std::string detail);
  // An act on models or the trust store: the outcome is OutcomeOfStatus(outcome), and a
  // failure's message is appended to `detail` ("detail: message").
  static RecordBuilder ModelEvent(const Actor& actor, std::string_view action, std::string_view target,
                                  const Status& outcome, std::string detail);

  RecordBuilder& Time(int64_t unix_ms);
  RecordBuilder& Target(std::string target);
  RecordBuilder& Outcome(std::string_view outcome);
  RecordBuilder& HttpStatus(int64_t status);
  RecordBuilder& Detail(std::string detail);
  RecordBuilder& Model(std::string model, std::string digest);
  RecordBuilder& RequestHash(std::string sha256_hex);
  RecordBuilder& ResponseHash(std::string sha256_hex);
  RecordBuilder& Tokens(int64_t prompt, int64_t completion);
  RecordBuilder& Timing(int64_t ttft_us, int64_t total_us);
  // Who served a model request and how the router chose it.
  RecordBuilder& Route(std::string backend, std::string decision, int64_t attempts);
  RecordBuilder& Policy(std::vector<std::string> decisions);
  RecordBuilder& Content(std::optional<AuditContent> content);

  // Hands the record over; the builder is empty afterwards.
  AuditRecord Build() { return std::move(record_); }

 private:
  explicit RecordBuilder(AuditRecord record) : record_(std::move(record)) {}
  // The identity fields every kind but the stream's end takes from an Actor.
  static AuditRecord Of(const Actor& actor, std::string_view action);

  AuditRecord record_;
};

}  // namespace kimi::audit
