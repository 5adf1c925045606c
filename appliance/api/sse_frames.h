// Server-Sent Events framing shared by the chat and completions stream encoders: one frame
// per JSON payload, and the common tail of every stream (the end frame carrying
// finish_reason and usage in choices[0], the optional choices-[] usage frame, [DONE]).
// Public header of api/: other folders include it.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/backend.h"
#include "kimi/sse_frame.h"

namespace kimi::api {

using kimi::kSseDone;
using kimi::SseDataFrame;  // "data: <json>\n\n" for JSON text already written (an error body)

// What the HTTP layer drives for a streamed response: the chat and completions encoders.
class StreamEncoder {
 public:
  virtual ~StreamEncoder() = default;
  // Appends the frames `event` produces to *out; after kFinish the stream is complete.
  virtual void Encode(const StreamEvent& event, std::string* out) = 0;
  virtual bool finished() const = 0;
};

// "data: <json>\n\n", with U+0085, U+2028 and U+2029 written as \u escapes so that every
// frame stays one line for readers that split lines on them (kimi/sse_frame.h).
std::string SseFrame(const nlohmann::ordered_json& payload);

// `envelope` is the frame's id/object/created/model; `end_choice` the choice of the end
// frame without usage (finish_reason, and delta {} or text ""). Appends the end frame, the
// usage frame when include_usage, and [DONE].
void AppendStreamEnd(const nlohmann::ordered_json& envelope, nlohmann::ordered_json end_choice,
                     const TokenUsage& usage, bool include_usage, std::string* out);

}  // namespace kimi::api
