// Loading the embedded engine's model the only way the appliance allows: verify the signed
// model directory against the trust store (models/oms_verifier.h) first, and only then read
// it into the engine (ChatService::Open: weights, tokenizer, runtime).
//
// Thread safety: the function shares no state; it runs on the daemon's loader thread.
#pragma once

#include <memory>
#include <string>

#include "kimi/chat_service.h"
#include "kimi/status.h"
#include "models/oms_verifier.h"

namespace kimi::api {

struct VerifiedModelOptions {
  std::string dir;
  std::string trust_store;  // a PEM file or a directory of *.pem
  ChatServiceOptions service;
  // Where the engine's verified copy of the small files is made (models/verified_stage.h).
  std::string stage_parent;
};

struct VerifiedModel {
  std::shared_ptr<ChatService> service;
  std::string signer;          // who signed it, for the log and /readyz
  std::string subject_digest;  // hex
  std::shared_ptr<const models::VerifiedManifest> manifest;  // what the engine's bytes were verified against
};

// Errors: FailedPrecondition when no model or trust store is configured; the trust store's
// and the verifier's refusals (naming the file or field), prefixed "verification failed";
// the engine's loading errors.
Result<VerifiedModel> LoadVerifiedModel(const VerifiedModelOptions& options);

}  // namespace kimi::api
