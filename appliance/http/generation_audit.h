// What a generation request contributes to its audit record, and the audit of a streamed
// response.
//
// NoteGenerationEvent() and NoteBackendOutcome() copy what the backend reported (time to first
// event, token usage, answer text when the content policy keeps it, who served, with which
// model version, and how the router chose) into AuditFacts. Token counts are the backend's from
// its finish event; until it arrives they grow with each delta (AuditFacts), so a request cut
// short is recorded and metered with what it generated. RecordingSink does so for a whole
// (non-streamed) response on its way to the response builder.
//
// StreamAudit owns the record of one streamed response. The dispatcher arms it when the
// response starts (with the record RequestAuditor::RecordOf() built then); the stream's
// content provider reports every piece it wrote with Sent() and ends the stream with
// Finish(): for the final frames before writing them (so the record is committed before
// [DONE]), for a client that went away after the fact. Whatever ends a stream without
// Finish() (the server stopping, the library giving up) is finished as "interrupted" by the
// dispatcher once the request is over, so no streamed request goes unrecorded.
//
// Thread safety: a StreamAudit is used by one thread at a time: the request's thread, or the
// generation thread while it delivers the stream's events under the generation's lock
// (api/background_generation.h); the functions touch only what they are given.
#pragma once

#include <chrono>
#include <string_view>

#include "api/backend.h"
#include "audit/hash.h"
#include "audit/record.h"
#include "http/request_context.h"
#include "kimi/status.h"

namespace kimi::http {

class RequestAuditor;

// The outcomes of a streamed response besides the HTTP status ones (request_audit.h).
inline constexpr std::string_view kOutcomeCompleted = "ok";
inline constexpr std::string_view kOutcomeClientDisconnected = "client_disconnected";
inline constexpr std::string_view kOutcomeStreamError = "error";
inline constexpr std::string_view kOutcomeInterrupted = "interrupted";

void NoteGenerationEvent(const api::StreamEvent& event, std::chrono::steady_clock::time_point start,
                         AuditFacts* facts);
void NoteBackendOutcome(const api::BackendOutcome& outcome, AuditFacts* facts);

// Passes events on to `next` and notes them in `facts`.
class RecordingSink : public api::EventSink {
 public:
  RecordingSink(api::EventSink& next, std::chrono::steady_clock::time_point start, AuditFacts* facts)
      : next_(next), start_(start), facts_(facts) {}
  bool Emit(const api::StreamEvent& event) override;

 private:
  api::EventSink& next_;
  std::chrono::steady_clock::time_point start_;
  AuditFacts* facts_;
};

class StreamAudit {
 public:
  // `facts` are the request's facts when the stream begins; the stream adds to its own copy.
  StreamAudit(AuditFacts facts, std::chrono::steady_clock::time_point start) : facts_(std::move(facts)), start_(start) {}
  StreamAudit(const StreamAudit&) = delete;
  StreamAudit& operator=(const StreamAudit&) = delete;

  // Called by the dispatcher as the response starts; without it nothing is recorded.
  void Arm(const RequestAuditor* auditor, audit::AuditRecord record);

  void NoteEvent(const api::StreamEvent& event) { NoteGenerationEvent(event, start_, &facts_); }
  void NoteOutcome(const api::BackendOutcome& outcome) { NoteBackendOutcome(outcome, &facts_); }
  const AuditFacts& facts() const { return facts_; }

  // `bytes` reached the client.
  void Sent(std::string_view bytes) { sent_.Update(bytes); }
  // Hashes `final_bytes` (about to be written; may be empty), completes the record with the
  // outcome and commits it. Unavailable when the record could not be committed and
  // audit.fail_closed is set: the caller then must not send final_bytes. No-op after the
  // first call.
  Status Finish(std::string_view outcome, std::string_view final_bytes);
  bool finished() const { return finished_; }
  uint64_t bytes_sent() const { return sent_.bytes(); }

 private:
  AuditFacts facts_;
  std::chrono::steady_clock::time_point start_;
  const RequestAuditor* auditor_ = nullptr;
  audit::AuditRecord record_;
  audit::Sha256Stream sent_;
  bool finished_ = false;
};

}  // namespace kimi::http
