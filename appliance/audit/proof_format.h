// The JSON forms of inclusion and consistency proofs, and their checking by an outside
// verifier that holds only the audit public key (and, if it likes, signed heads it exported
// earlier). No database is needed; kimi-audit-verify is a thin command over these functions.
//
// Inclusion proof:
//   {"format":"kimi-audit-inclusion/1","leaf_index":N,"tree_size":N,
//    "record":"<canonical record bytes>","leaf_hash":hex,"audit_path":[hex,...],
//    "signed_head":{kimi-audit-sth/1}}
// Consistency proof:
//   {"format":"kimi-audit-consistency/1","old_size":N,"new_size":N,"old_root":hex,
//    "new_root":hex,"proof":[hex,...],"new_head":{sth},"old_head":{sth}|null}
// Public header of audit/: other folders include it.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/hash.h"
#include "audit/signed_head.h"
#include "kimi/status.h"

namespace kimi::audit {

struct InclusionProof {
  uint64_t leaf_index = 0;
  uint64_t tree_size = 0;
  std::string record;  // canonical record bytes
  Hash leaf_hash{};
  std::vector<Hash> audit_path;
  SignedTreeHead signed_head;
};

struct ConsistencyProof {
  uint64_t old_size = 0;
  uint64_t new_size = 0;
  Hash old_root{};
  Hash new_root{};
  std::vector<Hash> proof;
  SignedTreeHead new_head;
  std::optional<SignedTreeHead> old_head;  // present when a head was signed at old_size
};

nlohmann::json InclusionProofToJson(const InclusionProof& p);
Result<InclusionProof> InclusionProofFromJson(const nlohmann::json& j);
nlohmann::json ConsistencyProofToJson(const ConsistencyProof& p);
Result<ConsistencyProof> ConsistencyProofFromJson(const nlohmann::json& j);

// What a check established, for the verifier to print.
struct ProofCheck {
  std::vector<std::string> facts;
};

// Checks: the head (the trusted one when given, else the proof's own) is signed by key and is
// for tree_size; when a trusted head is given the embedded one must equal it; the record
// bytes hash to leaf_hash and carry "seq" == leaf_index; the audit path leads from the leaf to
// the head's root (RFC 9162 2.1.3.2). Corruption naming the first failed step otherwise.
Result<ProofCheck> CheckInclusionProof(const InclusionProof& proof, const PublicKey& key,
                                       const std::optional<SignedTreeHead>& trusted_head);

// Checks: the new head (trusted or embedded) is signed by key, for new_size, with new_root;
// the old head likewise for old_size and old_root when one is given or embedded (without one,
// old_root is reported as unsigned); the proof verifies (RFC 9162 2.1.4.2).
Result<ProofCheck> CheckConsistencyProof(const ConsistencyProof& proof, const PublicKey& key,
                                         const std::optional<SignedTreeHead>& trusted_old_head,
                                         const std::optional<SignedTreeHead>& trusted_new_head);

}  // namespace kimi::audit
