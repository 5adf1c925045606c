#include "upstream/sse_parser.h"

#include <string>
#include <utility>

namespace kimi::upstream {
namespace {

// The upstream's fault, answered as a failing backend (503), not as the caller's rate limit (a
// ResourceExhausted here became a 429 that blamed the client).
Status LineTooLong(size_t max_line_bytes) {
  return Status::Unavailable("the upstream sent an event stream line or event over the size limit (" +
                             std::to_string(max_line_bytes) + " bytes)");
}

}  // namespace

SseParser::SseParser(EventHandler on_event, size_t max_line_bytes)
    : on_event_(std::move(on_event)), max_line_bytes_(max_line_bytes) {}

Status SseParser::Feed(std::string_view bytes) {
  size_t start = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    char c = bytes[i];
    if (c != '\n' && c != '\r') continue;
    if (c == '\n' && last_was_cr_ && i == start && line_.empty()) {
      // The "\n" of a "\r\n" whose "\r" ended the previous line.
      last_was_cr_ = false;
      start = i + 1;
      continue;
    }
    last_was_cr_ = c == '\r';
    std::string_view piece = bytes.substr(start, i - start);
    start = i + 1;
    if (line_.empty()) {
      // The whole line is in this read: parsed where it lies, without a copy.
      if (piece.size() > max_line_bytes_) return LineTooLong(max_line_bytes_);
      KIMI_RETURN_IF_ERROR(ProcessLine(piece));
      continue;
    }
    line_.append(piece);
    if (line_.size() > max_line_bytes_) return LineTooLong(max_line_bytes_);
    Status processed = ProcessLine(line_);
    line_.clear();  // keeps its capacity for the next line cut by a read
    KIMI_RETURN_IF_ERROR(processed);
  }
  if (start < bytes.size()) {
    last_was_cr_ = false;
    line_.append(bytes.substr(start));
    if (line_.size() > max_line_bytes_) return LineTooLong(max_line_bytes_);
  }
  return Status::OK();
}

Status SseParser::ProcessLine(std::string_view line) {
  if (line.empty()) return Dispatch();
  if (line.front() == ':') return Status::OK();  // a comment (keep-alive pings)
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    // An event's data lines are joined: without this bound, lines each under the limit and no
    // blank line between them would grow one event for as long as the upstream sends.
    if (pending_.data.size() + 1 + value.size() > max_line_bytes_) return LineTooLong(max_line_bytes_);
    if (has_data_) pending_.data += '\n';
    pending_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    pending_.event.assign(value);
  }
  return Status::OK();  // "id", "retry" and unknown fields mean nothing to a one-shot reader
}

Status SseParser::Dispatch() {
  if (!has_data_) {
    pending_.event.clear();
    return Status::OK();
  }
  Status handled = on_event_(pending_);
  // Cleared, not replaced: the next event reuses the strings' memory.
  pending_.event.clear();
  pending_.data.clear();
  has_data_ = false;
  return handled;
}

bool SseParser::Finish() {
  bool partial = !line_.empty() || has_data_;
  line_.clear();
  pending_.event.clear();
  pending_.data.clear();
  has_data_ = false;
  return partial;
}

}  // namespace kimi::upstream
