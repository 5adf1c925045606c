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
// Owns: the compiled StructuredOutputs, keyed by what they were compiled from, and the errors
// of schemas refused, keyed the same way (both bounded: Bounds).
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

// What is kept between requests. Past any bound the kept ones of that kind go (the cache
// starts over); an entry that alone passes its share is used for its request and not kept,
// so nothing kept is ever over a bound.
struct StructuredRequestBounds {
  // Compiled schemas, their grammar states and the bytes of the texts they are keyed by: a
  // schema's bounds are on its values, not its bytes (a description of megabytes is one
  // value). A schema whose text passes a sixteenth of key_bytes, or whose grammar alone
  // passes `states`, is not kept.
  size_t compiled = 256;
  size_t states = 2000000;
  size_t key_bytes = size_t(16) << 20;
  // Refused schemas, remembered by their text with the error, so that sending one again
  // costs a lookup instead of its compilation (up to the compile time limit each time). Texts
  // and errors together within refusal_bytes; one over a sixteenth of it is not remembered.
  size_t refusals = 256;
  size_t refusal_bytes = size_t(4) << 20;
};

class StructuredRequests {
 public:
  using Bounds = StructuredRequestBounds;

  explicit StructuredRequests(std::shared_ptr<const StructuredVocabulary> vocabulary, Bounds bounds = Bounds());

  // nullptr when the request asks for no structure. Errors: InvalidArgument naming the
  // unsupported schema keyword (and the tool) — the API answers 400.
  Result<std::shared_ptr<TokenConstraint>> ConstraintFor(const ServingRequest& request);
  // Compiled schemas kept now, and their grammar states.
  size_t kept() const;
  size_t kept_states() const;
  // Refused schemas remembered now.
  size_t refusals_kept() const;

 private:
  using Compiled = Result<std::shared_ptr<const StructuredOutput>>;
  Compiled Cached(const std::string& key, const std::function<Compiled()>& compile);
  void Keep(const std::string& key, const std::shared_ptr<const StructuredOutput>& output);  // requires mu_
  void RememberRefusal(const std::string& key, const Status& status);                        // requires mu_

  std::shared_ptr<const StructuredVocabulary> vocabulary_;
  const Bounds bounds_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const StructuredOutput>> compiled_;  // guarded by mu_
  size_t compiled_states_ = 0;     // grammar states of compiled_, guarded by mu_
  size_t compiled_key_bytes_ = 0;  // bytes of compiled_'s keys, guarded by mu_
  std::map<std::string, Status> refused_;  // guarded by mu_
  size_t refused_bytes_ = 0;               // bytes of refused_'s keys and messages, guarded by mu_
};

}  // namespace kimi::serving
