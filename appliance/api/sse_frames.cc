#include "api/sse_frames.h"

#include "api/response_meta.h"

namespace kimi::api {

using Json = nlohmann::ordered_json;

std::string SseFrame(const Json& payload) { return SseDataFrame(DumpJson(payload)); }

void AppendStreamEnd(const Json& envelope, Json end_choice, const TokenUsage& usage, bool include_usage,
                     std::string* out) {
  end_choice["usage"] = UsageJson(usage);
  Json end = envelope;
  end["choices"] = Json::array({std::move(end_choice)});
  *out += SseFrame(end);
  if (include_usage) {
    Json frame = envelope;
    frame["choices"] = Json::array();
    frame["usage"] = UsageJson(usage);
    *out += SseFrame(frame);
  }
  *out += kSseDone;
}

}  // namespace kimi::api
