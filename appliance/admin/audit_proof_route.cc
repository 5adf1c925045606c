#include "admin/audit_proof_route.h"

#include <httplib.h>

#include <charconv>

#include "admin/audit_routes.h"
#include "admin/reply.h"
#include "audit/audit_sink.h"
#include "audit/audit_store.h"
#include "audit/log_proofs.h"
#include "audit/proof_format.h"

namespace kimi::admin {
namespace {

using http::RequestContext;

using nlohmann::json;

Result<uint64_t> SeqParam(RequestContext& ctx) {
  const std::string& text = ctx.path_params["seq"];
  uint64_t seq = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seq);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument("the record's sequence number must be a non-negative integer, not '" + text + "'");
  }
  return seq;
}

// The proof against the newest signed head, signing one first when none covers `seq` yet.
Result<audit::InclusionProof> ProveRecord(const AuditAccess& access, audit::AuditStore& store, uint64_t seq) {
  Result<audit::InclusionProof> proof = audit::BuildInclusionProof(store, seq, std::nullopt);
  if (proof.ok() || proof.status().code() != Status::Code::kFailedPrecondition || access.sink == nullptr) return proof;
  KIMI_RETURN_IF_ERROR(access.sink->SignHeadNow().status());
  return audit::BuildInclusionProof(store, seq, std::nullopt);
}

json CheckJson(const audit::InclusionProof& proof, const audit::PublicKey& key) {
  Result<audit::ProofCheck> check = audit::CheckInclusionProof(proof, key, std::nullopt);
  if (!check.ok()) return json{{"ok", false}, {"error", check.status().message()}};
  return json{{"ok", true}, {"facts", check->facts}};
}

}  // namespace

Status HandleAuditRecordProof(const AuditAccess* access, RequestContext& ctx, const httplib::Request&,
                              httplib::Response& res) {
  if (access == nullptr) return Status::Unavailable("the audit log is not open");
  KIMI_ASSIGN_OR_RETURN(uint64_t seq, SeqParam(ctx));
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<audit::AuditStore> store, OpenAuditReader(*access));
  KIMI_ASSIGN_OR_RETURN(std::optional<audit::StoredRecord> row, store->ReadRecord(seq));
  if (!row) return Status::NotFound("the audit log has no record " + std::to_string(seq));
  KIMI_ASSIGN_OR_RETURN(audit::InclusionProof proof, ProveRecord(*access, *store, seq));
  KIMI_ASSIGN_OR_RETURN(KeyDirectory keys, LoadKeyDirectory(*access));
  json record = AuditorRecordJson(*row, keys);
  ReplyJson(res, 200,
            json{{"proof", audit::InclusionProofToJson(proof)},
                 {"record", std::move(record)},
                 {"root_hash", audit::ToHex(proof.signed_head.root_hash)},
                 {"public_key", audit::PublicKeyToJson(access->public_key)},
                 {"check", CheckJson(proof, access->public_key)}});
  return Status::OK();
}

}  // namespace kimi::admin
