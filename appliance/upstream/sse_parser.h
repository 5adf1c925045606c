// SseParser: incremental parser of a Server-Sent Events stream (the WHATWG "event stream"
// format), as an OpenAI-compatible server writes it for `stream: true`.
//
// Bytes arrive in arbitrary pieces (a read may end inside a line, inside "\r\n", or inside a
// UTF-8 character); Feed() keeps the unfinished line and dispatches each event when its
// terminating blank line arrives. Lines end with "\n", "\r\n" or "\r". Comment lines (":...")
// are skipped, several "data:" lines of one event are joined with "\n", one space after the
// colon is dropped, "event:" names the event, other fields are ignored. An event without data
// is not dispatched. A line, or an event's joined data, longer than the limit is an error
// rather than unbounded memory.
//
// Owns: the partial line and the event being assembled.
// Thread safety: one instance per stream, used from one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "kimi/status.h"

namespace kimi::upstream {

struct SseEvent {
  std::string event;  // "" unless an "event:" field named it
  std::string data;   // the data lines joined with "\n"
};

class SseParser {
 public:
  // Returns an error to stop parsing; Feed() returns that error.
  using EventHandler = std::function<Status(const SseEvent& event)>;

  explicit SseParser(EventHandler on_event, size_t max_line_bytes = 16 << 20);

  // Consumes the next bytes of the stream, dispatching every event they complete.
  Status Feed(std::string_view bytes);
  // The stream ended. An event not terminated by a blank line is discarded, as the format
  // says; returns true when such a partial event (or line) was pending, so callers can tell a
  // cut stream from a finished one.
  bool Finish();

 private:
  Status ProcessLine(std::string_view line);
  Status Dispatch();

  EventHandler on_event_;
  size_t max_line_bytes_;
  std::string line_;          // bytes of the current, unfinished line
  bool last_was_cr_ = false;  // the previous byte ended a line with "\r": skip a following "\n"
  SseEvent pending_;
  bool has_data_ = false;
};

}  // namespace kimi::upstream
