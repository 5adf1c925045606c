#include "audit/proof_format.h"

#include "audit/merkle.h"

namespace kimi::audit {
namespace {

nlohmann::json HashList(const std::vector<Hash>& hashes) {
  nlohmann::json a = nlohmann::json::array();
  for (const Hash& h : hashes) a.push_back(ToHex(h));
  return a;
}

Result<uint64_t> GetSize(const nlohmann::json& j, const char* field) {
  if (!j.contains(field) || !j[field].is_number_unsigned()) {
    return Status::InvalidArgument(std::string("proof lacks an unsigned '") + field + "'");
  }
  return j[field].get<uint64_t>();
}

Result<Hash> GetHash(const nlohmann::json& j, const char* field) {
  if (!j.contains(field) || !j[field].is_string()) {
    return Status::InvalidArgument(std::string("proof lacks a hex '") + field + "'");
  }
  return HashFromHex(j[field].get<std::string>());
}

Result<std::vector<Hash>> GetHashList(const nlohmann::json& j, const char* field) {
  if (!j.contains(field) || !j[field].is_array()) {
    return Status::InvalidArgument(std::string("proof lacks an array '") + field + "'");
  }
  std::vector<Hash> out;
  for (const auto& e : j[field]) {
    if (!e.is_string()) return Status::InvalidArgument(std::string("'") + field + "' holds a non-string");
    KIMI_ASSIGN_OR_RETURN(Hash h, HashFromHex(e.get<std::string>()));
    out.push_back(h);
  }
  return out;
}

Status CheckHead(const SignedTreeHead& head, const PublicKey& key, uint64_t size, const char* which) {
  if (Status s = VerifyTreeHead(head, key); !s.ok()) return s.WithContext(which);
  if (head.tree_size != size) {
    return Status::Corruption(std::string(which) + " is for tree size " + std::to_string(head.tree_size) +
                              ", the proof for " + std::to_string(size));
  }
  return Status::OK();
}

}  // namespace

nlohmann::json InclusionProofToJson(const InclusionProof& p) {
  return {
      {"format", "kimi-audit-inclusion/1"},
      {"leaf_index", p.leaf_index},
      {"tree_size", p.tree_size},
      {"record", p.record},
      {"leaf_hash", ToHex(p.leaf_hash)},
      {"audit_path", HashList(p.audit_path)},
      {"signed_head", TreeHeadToJson(p.signed_head)},
  };
}

Result<InclusionProof> InclusionProofFromJson(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", "") != "kimi-audit-inclusion/1") {
    return Status::InvalidArgument("not a kimi-audit-inclusion/1 proof");
  }
  InclusionProof p;
  KIMI_ASSIGN_OR_RETURN(p.leaf_index, GetSize(j, "leaf_index"));
  KIMI_ASSIGN_OR_RETURN(p.tree_size, GetSize(j, "tree_size"));
  if (!j.contains("record") || !j["record"].is_string()) return Status::InvalidArgument("proof lacks 'record'");
  p.record = j["record"].get<std::string>();
  KIMI_ASSIGN_OR_RETURN(p.leaf_hash, GetHash(j, "leaf_hash"));
  KIMI_ASSIGN_OR_RETURN(p.audit_path, GetHashList(j, "audit_path"));
  if (!j.contains("signed_head")) return Status::InvalidArgument("proof lacks 'signed_head'");
  KIMI_ASSIGN_OR_RETURN(p.signed_head, TreeHeadFromJson(j["signed_head"]));
  return p;
}

nlohmann::json ConsistencyProofToJson(const ConsistencyProof& p) {
  return {
      {"format", "kimi-audit-consistency/1"},
      {"old_size", p.old_size},
      {"new_size", p.new_size},
      {"old_root", ToHex(p.old_root)},
      {"new_root", ToHex(p.new_root)},
      {"proof", HashList(p.proof)},
      {"new_head", TreeHeadToJson(p.new_head)},
      {"old_head", p.old_head ? TreeHeadToJson(*p.old_head) : nlohmann::json(nullptr)},
  };
}

Result<ConsistencyProof> ConsistencyProofFromJson(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", "") != "kimi-audit-consistency/1") {
    return Status::InvalidArgument("not a kimi-audit-consistency/1 proof");
  }
  ConsistencyProof p;
  KIMI_ASSIGN_OR_RETURN(p.old_size, GetSize(j, "old_size"));
  KIMI_ASSIGN_OR_RETURN(p.new_size, GetSize(j, "new_size"));
  KIMI_ASSIGN_OR_RETURN(p.old_root, GetHash(j, "old_root"));
  KIMI_ASSIGN_OR_RETURN(p.new_root, GetHash(j, "new_root"));
  KIMI_ASSIGN_OR_RETURN(p.proof, GetHashList(j, "proof"));
  if (!j.contains("new_head")) return Status::InvalidArgument("proof lacks 'new_head'");
  KIMI_ASSIGN_OR_RETURN(p.new_head, TreeHeadFromJson(j["new_head"]));
  if (j.contains("old_head") && !j["old_head"].is_null()) {
    KIMI_ASSIGN_OR_RETURN(SignedTreeHead old_head, TreeHeadFromJson(j["old_head"]));
    p.old_head = old_head;
  }
  return p;
}

Result<ProofCheck> CheckInclusionProof(const InclusionProof& p, const PublicKey& key,
                                       const std::optional<SignedTreeHead>& trusted_head) {
  ProofCheck check;
  if (trusted_head && !(*trusted_head == p.signed_head)) {
    if (trusted_head->tree_size != p.tree_size) {
      return Status::Corruption("the trusted head is for tree size " + std::to_string(trusted_head->tree_size) +
                                ", the proof for " + std::to_string(p.tree_size));
    }
    return Status::Corruption("the proof's signed head differs from the trusted head");
  }
  const SignedTreeHead& head = trusted_head ? *trusted_head : p.signed_head;
  KIMI_RETURN_IF_ERROR(CheckHead(head, key, p.tree_size, "signed head"));
  check.facts.push_back("signed head for tree size " + std::to_string(head.tree_size) + " verifies with key " +
                        ToHex(KeyIdOf(key)));
  if (HashLeaf(p.record) != p.leaf_hash) return Status::Corruption("record bytes do not hash to leaf_hash");
  const nlohmann::json record = nlohmann::json::parse(p.record, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !record.contains("seq") || !record["seq"].is_number_unsigned() ||
      record["seq"].get<uint64_t>() != p.leaf_index) {
    return Status::Corruption("record's seq is not the proof's leaf_index");
  }
  check.facts.push_back("record bytes hash to the leaf hash and carry seq " + std::to_string(p.leaf_index));
  KIMI_RETURN_IF_ERROR(VerifyInclusion(p.leaf_index, p.tree_size, p.leaf_hash, p.audit_path, head.root_hash));
  check.facts.push_back("record " + std::to_string(p.leaf_index) + " is included in the tree of size " +
                        std::to_string(p.tree_size));
  return check;
}

Result<ProofCheck> CheckConsistencyProof(const ConsistencyProof& p, const PublicKey& key,
                                         const std::optional<SignedTreeHead>& trusted_old_head,
                                         const std::optional<SignedTreeHead>& trusted_new_head) {
  ProofCheck check;
  const SignedTreeHead& new_head = trusted_new_head ? *trusted_new_head : p.new_head;
  KIMI_RETURN_IF_ERROR(CheckHead(new_head, key, p.new_size, "new signed head"));
  if (new_head.root_hash != p.new_root) return Status::Corruption("new_root is not the new signed head's root");
  check.facts.push_back("new signed head for tree size " + std::to_string(p.new_size) + " verifies");
  const std::optional<SignedTreeHead>& old_head = trusted_old_head ? trusted_old_head : p.old_head;
  if (old_head) {
    KIMI_RETURN_IF_ERROR(CheckHead(*old_head, key, p.old_size, "old signed head"));
    if (old_head->root_hash != p.old_root) return Status::Corruption("old_root is not the old signed head's root");
    check.facts.push_back("old signed head for tree size " + std::to_string(p.old_size) + " verifies");
  } else {
    check.facts.push_back("no signed head for the old size: compare old_root " + ToHex(p.old_root) +
                          " with the root you hold for size " + std::to_string(p.old_size));
  }
  KIMI_RETURN_IF_ERROR(VerifyConsistency(p.old_size, p.new_size, p.old_root, p.new_root, p.proof));
  check.facts.push_back("the tree of size " + std::to_string(p.new_size) + " extends the tree of size " +
                        std::to_string(p.old_size) + " (append-only)");
  return check;
}

}  // namespace kimi::audit
