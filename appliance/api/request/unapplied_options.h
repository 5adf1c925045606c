// Options other OpenAI-compatible servers take (vLLM's sampling and structured-output
// extensions) that would change the answer, and that the appliance does not apply.
//
// Unknown top-level fields are accepted and ignored (request_validator.h), as vLLM does. These
// are not: a client sending `guided_json` or `min_tokens` relies on the answer following it,
// and no backend here applies them (the embedded engine does not read them, and an upstream
// receives only the fields the rules know: api/forward_body.h). So a value that would change the
// answer is refused, naming the field and what to use instead; the option's neutral value (its
// default in vLLM, or null) is accepted, so that clients that always send them still work.
//
// Thread safety: a pure function.
#pragma once

#include "api/request/field_error.h"

namespace kimi::api::request {

// OK, or FieldError naming the first such option of `body` set to a value other than its
// neutral one. `chat`: the body is a chat completion (where `echo` is such an option too).
Status CheckUnappliedOptions(const Json& body, bool chat);

}  // namespace kimi::api::request
