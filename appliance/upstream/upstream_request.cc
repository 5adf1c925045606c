#include "upstream/upstream_request.h"

namespace kimi::upstream {

using Json = nlohmann::ordered_json;

Json UpstreamBody(Json forward, const std::string& upstream_model) {
  Json stream_options = forward.contains("stream_options") && forward["stream_options"].is_object()
                            ? std::move(forward["stream_options"])
                            : Json::object();
  forward["stream"] = true;
  stream_options["include_usage"] = true;
  forward["stream_options"] = std::move(stream_options);
  if (!upstream_model.empty()) forward["model"] = upstream_model;
  return forward;
}

}  // namespace kimi::upstream
