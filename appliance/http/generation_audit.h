// What a generation request contributes to its audit record, and the audit of a streamed
// response.
//
// NoteGenerationEvent() and NoteBackendOutcome() copy what the backend reported (time to first
// event, token usage, answer text when the content policy keeps it, who served, with which
// model version, and how the router chose) into AuditFacts. Token counts are the backend's from
// its finish event; until it arrives they grow with each delta (AuditFacts), so a request cut
// short is recorded and metered with what it generated. What decides this (the prompt
// estimate, whether the finish counts are in, whether text is kept) is the handler's
// GenerationTally, which travels with the generation, not in the RequestContext. RecordingSink
// does so for a whole (non-streamed) response on its way to the response builder.
//
// StreamAudit owns the records of one streamed response: no byte of it is written before a
// record of the request is committed. The dispatcher calls Start() as the response starts,
// after its head is built and before any byte is written: it commits the start record
// (outcome "started": who, model and digest, policy decisions, request hash, prompt tokens as
// the first event reported them or else estimated, request id) and the stream does not start when that fails (fail-closed 503). The
// stream's content provider asks CheckWritable() before each frame (a store that fails
// mid-stream ends the stream at once with AuditErrorFrame()), reports every piece it wrote
// with Sent(), and ends the stream with Finish(), which commits the end record: outcome, the
// SHA-256 of exactly the bytes the client got, token usage and timings, with start_seq the
// start record's seq (audit::RecordBuilder::StreamEnd). Finish() runs for the final frames
// before they are written (so they go out only once the end is durable), for a client that
// went away after the fact. Whatever ends a stream without Finish() (the server stopping, the library
// giving up) is finished as "interrupted" by the dispatcher once the request is over; a
// daemon that dies mid-stream leaves the start record open, and the next start ends it
// (audit::AuditSink::RecordInterruptedStreams). An end record the store cannot take now is
// handed to the sink to be written once it can (AuditSink::RecordWhenWritable).
//
// Thread safety: a StreamAudit is used by one thread at a time: the request's thread, or the
// generation thread while it delivers the stream's events under the generation's lock
// (api/background_generation.h); the functions touch only what they are given.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "api/backend.h"
#include "audit/hash.h"
#include "audit/record.h"
#include "http/request_context.h"
#include "kimi/status.h"

namespace kimi::http {

class RequestAuditor;

// The outcomes of a streamed response's end record besides the HTTP status ones
// (request_audit.h). Its start record's outcome is audit::kOutcomeStreamStarted.
inline constexpr std::string_view kOutcomeCompleted = "ok";
inline constexpr std::string_view kOutcomeClientDisconnected = "client_disconnected";
inline constexpr std::string_view kOutcomeStreamError = "error";
inline constexpr std::string_view kOutcomeInterrupted = audit::kOutcomeStreamInterrupted;
// The audit store failed while the stream ran: the client got AuditErrorFrame() and no more.
inline constexpr std::string_view kOutcomeAuditUnavailable = "audit_unavailable";

// The frame that ends a stream whose records cannot be written: OpenAI's error JSON with code
// audit_unavailable and the store's reason.
std::string AuditErrorFrame(std::string_view reason);

// What the generation handler tracks while the backend emits, to note its events into the
// AuditFacts; the handler's own state, not part of the record.
struct GenerationTally {
  int64_t estimated_prompt_tokens = 0;  // api/prompt_estimate.h, set before generation
  bool keep_completion_text = false;    // the content policy stores content
  bool usage_reported = false;          // the finish event's counts are in
  bool generated = false;               // the backend emitted an event
  // The tokens the events before the finish accounted for: their own count where the backend
  // gives one (StreamEvent::tokens), else one for each event with text.
  int64_t counted_completion_tokens = 0;
};

void NoteGenerationEvent(const api::StreamEvent& event, std::chrono::steady_clock::time_point start,
                         GenerationTally* tally, AuditFacts* facts);
void NoteBackendOutcome(const api::BackendOutcome& outcome, AuditFacts* facts);

// Passes events on to `next` and notes them in `facts`.
class RecordingSink : public api::EventSink {
 public:
  RecordingSink(api::EventSink& next, std::chrono::steady_clock::time_point start, GenerationTally* tally,
                AuditFacts* facts)
      : next_(next), start_(start), tally_(tally), facts_(facts) {}
  bool Emit(const api::StreamEvent& event) override;

 private:
  api::EventSink& next_;
  std::chrono::steady_clock::time_point start_;
  GenerationTally* tally_;
  AuditFacts* facts_;
};

class StreamAudit {
 public:
  // `facts` and `tally` are the request's when the stream begins; the stream adds to its own
  // copies.
  StreamAudit(AuditFacts facts, GenerationTally tally, std::chrono::steady_clock::time_point start)
      : facts_(std::move(facts)), tally_(tally), start_(start) {}
  StreamAudit(const StreamAudit&) = delete;
  StreamAudit& operator=(const StreamAudit&) = delete;

  // Commits the start record made of `record` (RequestAuditor::RecordOf() as the response
  // starts) and waits for it. OK when committed (or audit.fail_closed is off); Unavailable
  // with the store's reason when the stream must not start. Without it nothing is recorded.
  Status Start(const RequestAuditor* auditor, audit::AuditRecord record);

  void NoteEvent(const api::StreamEvent& event) { NoteGenerationEvent(event, start_, &tally_, &facts_); }
  void NoteOutcome(const api::BackendOutcome& outcome) { NoteBackendOutcome(outcome, &facts_); }
  const AuditFacts& facts() const { return facts_; }
  const GenerationTally& tally() const { return tally_; }

  // OK while the stream may go on writing; Unavailable with the reason once the audit store
  // cannot write and audit.fail_closed is set: the stream must end now.
  Status CheckWritable() const;
  // `bytes` reached the client.
  void Sent(std::string_view bytes) { sent_.Update(bytes); }
  // Commits the end record with `outcome` and the SHA-256 of everything sent followed by
  // *final_bytes (about to be written; may be empty; null when nothing more can be sent).
  // Unavailable when it could not be committed and audit.fail_closed is set: *final_bytes is
  // then replaced by AuditErrorFrame() (outcome audit_unavailable). A record not committed
  // now is written once the store can. No-op after the first call.
  Status Finish(std::string_view outcome, std::string* final_bytes);
  bool finished() const { return finished_; }
  uint64_t bytes_sent() const { return sent_.bytes(); }
  // The start record's seq; nullopt until it is committed.
  std::optional<uint64_t> start_seq() const { return start_seq_; }

 private:
  // The end record with `outcome`, hashing what was sent followed by `tail`.
  audit::AuditRecord EndRecord(std::string_view outcome, std::string_view tail) const;

  AuditFacts facts_;
  GenerationTally tally_;
  std::chrono::steady_clock::time_point start_;
  const RequestAuditor* auditor_ = nullptr;
  audit::AuditRecord start_record_;
  std::optional<uint64_t> start_seq_;
  audit::Sha256Stream sent_;
  bool finished_ = false;
};

}  // namespace kimi::http
