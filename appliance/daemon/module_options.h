// The configuration's sections turned into the options of the modules the daemon opens:
// authentication, the engine's chat service, and the policy step's prompt-token counter.
//
// Thread safety: pure functions; the counter lookup may be called from any thread.
#pragma once

#include <string>

#include "api/embedded_backend.h"
#include "auth/authenticator.h"
#include "config/config.h"
#include "kimi/chat_service.h"
#include "policy/policy_service.h"

namespace kimi::daemon {

auth::AuthOptions AuthOptionsOf(const config::AuthConfig& c);

ChatServiceOptions ServiceOptionsFrom(const config::ModelConfig& model);

// The prompt-token counter of the served model: the loaded engine's tokenizer
// (CountPromptTokens), none for other models or before the model is loaded. `backend`
// outlives the lookup.
policy::PromptTokenCounterLookup PromptTokenCounters(const api::EmbeddedBackend& backend,
                                                     std::string served_id);

}  // namespace kimi::daemon
