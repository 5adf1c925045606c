// The request body an upstream OpenAI-compatible server receives, in the dialect vLLM's
// server understands (and `kimi-engine serve` speaks).
//
// The request's content comes rendered from the typed request (api::ForwardBody: messages,
// tools, response_format, the thinking settings as chat_template_kwargs, sampling); this
// module adds the transport's part:
//   - always asks for a stream with usage (`stream: true`, `stream_options.include_usage`), so
//     that the first byte comes early and usage is known, whether the client streams or not;
//   - renames the model when the upstream serves it under another name.
//
// Thread safety: a pure function.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kimi::upstream {

// `forward`: api::ForwardBody(request). `upstream_model`: the model name to send, "" to keep
// the body's.
nlohmann::ordered_json UpstreamBody(nlohmann::ordered_json forward, const std::string& upstream_model);

}  // namespace kimi::upstream
