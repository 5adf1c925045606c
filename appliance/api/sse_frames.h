// Server-Sent Events framing shared by the chat and completions stream encoders: one frame
// per JSON payload, and the common tail of every stream (the end frame carrying
// finish_reason and usage in choices[0], the optional choices-[] usage frame, [DONE]).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/backend.h"

namespace kimi::api {

inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// "data: <json>\n\n"
std::string SseFrame(const nlohmann::ordered_json& payload);

// `envelope` is the frame's id/object/created/model; `end_choice` the choice of the end
// frame without usage (finish_reason, and delta {} or text ""). Appends the end frame, the
// usage frame when include_usage, and [DONE].
void AppendStreamEnd(const nlohmann::ordered_json& envelope, nlohmann::ordered_json end_choice,
                     const TokenUsage& usage, bool include_usage, std::string* out);

}  // namespace kimi::api
