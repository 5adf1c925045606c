#include "daemon/module_options.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "kimi/runtime.h"

namespace kimi::daemon {

auth::AuthOptions AuthOptionsOf(const config::AuthConfig& c) {
  auth::AuthOptions o;
  o.password.ops_limit = static_cast<uint64_t>(c.argon2_ops_limit);
  o.password.mem_limit_bytes = static_cast<uint64_t>(c.argon2_mem_limit_kib) * 1024;
  o.password.min_length = c.password_min_length;
  o.lockout_threshold = c.lockout_threshold;
  o.lockout_base_ms = c.lockout_base_ms;
  o.lockout_max_ms = c.lockout_max_ms;
  o.session_idle_timeout_ms = c.session_idle_timeout_ms;
  o.session_absolute_timeout_ms = c.session_absolute_timeout_ms;
  o.last_used_flush_ms = c.key_last_used_flush_ms;
  o.max_concurrent_streams = c.max_concurrent_streams;
  o.usage_flush_ms = c.usage_flush_ms;
  o.login_attempts_per_minute_per_source = c.login_attempts_per_minute_per_source;
  o.login_attempts_per_minute_per_user = c.login_attempts_per_minute_per_user;
  o.max_concurrent_password_hashes = c.max_concurrent_password_hashes;
  o.password_hash_wait_ms = c.password_hash_wait_ms;
  return o;
}

ChatServiceOptions ServiceOptionsFrom(const config::ModelConfig& model) {
  ChatServiceOptions options;
  options.model.threads = static_cast<int>(model.threads);
  options.runtime.max_num_seqs = static_cast<int>(model.max_num_seqs);
  options.runtime.max_num_batched_tokens = model.max_num_batched_tokens;
  options.runtime.decode_step_token_budget = model.decode_step_token_budget;
  options.runtime.memory_budget_bytes = static_cast<uint64_t>(model.memory_budget_bytes);
  options.default_max_tokens = model.default_max_tokens;
  return options;
}

policy::PromptTokenCounterLookup PromptTokenCounters(const api::EmbeddedBackend& backend,
                                                     std::string served_id) {
  return
      [&backend, served_id = std::move(served_id)](const std::string& model) -> policy::PromptTokenCounter {
        std::shared_ptr<ChatService> service = backend.service();
        if (service == nullptr || model != served_id) return nullptr;
        return [service](EncodedRequestPrompt* prompt, bool chat,
                         int64_t bound_enough) -> Result<policy::PromptTokens> {
          KIMI_ASSIGN_OR_RETURN(
              PromptTokenCount counted,
              CountPromptTokens(service->tokenizer(),
                                chat ? ServingEndpoint::kChatCompletions : ServingEndpoint::kCompletions,
                                prompt, bound_enough));
          return policy::PromptTokens{counted.tokens, counted.exact};
        };
      };
}

}  // namespace kimi::daemon
