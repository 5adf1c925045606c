#include "api/verified_model.h"

#include "models/oms_trust.h"
#include "models/oms_verifier.h"
#include "models/verified_stage.h"

namespace kimi::api {

Result<VerifiedModel> LoadVerifiedModel(const VerifiedModelOptions& options) {
  if (options.dir.empty()) return Status::FailedPrecondition("no model configured (model.dir is empty)");
  if (options.trust_store.empty()) {
    return Status::FailedPrecondition("model.trust_store is empty: a model is loaded only when it verifies against it");
  }
  Result<models::TrustStore> trust = models::TrustStore::LoadPath(options.trust_store);
  if (!trust.ok()) return trust.status().WithContext("trust store " + options.trust_store);
  models::VerifyRequest request;
  request.model_path = options.dir;
  Result<models::VerifiedManifest> manifest = models::ModelVerifier::Verify(request, *trust);
  if (!manifest.ok()) return manifest.status().WithContext("verification failed");
  VerifiedModel out;
  out.signer = manifest->signer().description;
  out.subject_digest = manifest->subject_digest_hex();
  out.manifest = std::make_shared<const models::VerifiedManifest>(std::move(manifest).value());
  // The engine opens the verified bytes, not the directory's names again.
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<models::VerifiedStage> stage,
                        models::VerifiedStage::Create(*out.manifest, options.dir, options.stage_parent));
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<ChatService> service, ChatService::Open(stage->path(), options.service));
  out.service = std::move(service);
  return out;
}

}  // namespace kimi::api
