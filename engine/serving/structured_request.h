// Which token constraint a chat-completions request asks for, and the compiled schemas kept
// between requests.
//
// A request is constrained when it asks for a structured answer:
//   response_format {"type":"json_schema", "json_schema":{"schema":S}}  the answer validates against S
//   response_format {"type":"json_object"}                              the answer is a JSON object
//   tool_choice "required" with tools (global or dynamic)              a call of a declared tool (up to
//                                                                        4 with parallel_tool_calls: true),
//                                                                        arguments valid for its parameters
// The constraint covers the whole K3 assistant turn the prompt's generation stub opened
// (kimi/structured_output.h); reasoning stays free, and the constraint closes it and the value
// as max_tokens nears, so a constrained answer ends complete. docs/structured-output.md.
//
// Owns: the compiled StructuredOutputs, keyed by what they were compiled from (bounded).
// Thread safety: StructuredRequests may be used from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "kimi/chat_format.h"
#include "kimi/serving_request.h"
#include "kimi/runtime.h"
#include "kimi/status.h"
#include "kimi/structured_output.h"

namespace kimi::serving {

class StructuredRequests {
 public:
  explicit StructuredRequests(std::shared_ptr<const StructuredVocabulary> vocabulary);

  // nullptr when the request asks for no structure. Errors: InvalidArgument naming the
  // unsupported schema keyword (and the tool) — the API answers 400.
  Result<std::shared_ptr<TokenConstraint>> ConstraintFor(const ServingRequest& request);
  // Compiled schemas kept now.
  size_t kept() const;

 private:
  using Compiled = Result<std::shared_ptr<const StructuredOutput>>;
  Compiled Cached(const std::string& key, const std::function<Compiled()>& compile);

  std::shared_ptr<const StructuredVocabulary> vocabulary_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const StructuredOutput>> compiled_;  // guarded by mu_
  size_t compiled_states_ = 0;     // grammar states of compiled_, guarded by mu_
  size_t compiled_key_bytes_ = 0;  // bytes of compiled_'s keys, guarded by mu_
};

}  // namespace kimi::serving
