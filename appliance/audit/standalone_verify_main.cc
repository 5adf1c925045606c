// kimi-audit-verify: checks audit proofs and signed heads exported by the appliance, with
// nothing but the audit public key. Needs no database and no access to the appliance.
//
//   kimi-audit-verify head        --public-key KEY --head HEAD.json
//   kimi-audit-verify inclusion   --public-key KEY --proof PROOF.json [--head HEAD.json]
//   kimi-audit-verify consistency --public-key KEY --proof PROOF.json
//                                 [--old-head OLD.json] [--new-head NEW.json]
//   kimi-audit-verify bundle      --public-key KEY --bundle EXPORT.jsonl
//
// --head / --old-head / --new-head name signed heads the auditor kept; when given, the proof
// must be about exactly those heads. Exit: 0 verified, 1 not verified, 2 usage or input error.
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "audit/export_verifier.h"
#include "audit/proof_format.h"
#include "audit/signed_head.h"

namespace {

using kimi::Result;
using kimi::Status;
using namespace kimi::audit;

constexpr int kVerified = 0;
constexpr int kNotVerified = 1;
constexpr int kUsage = 2;

int Usage() {
  std::cerr << "usage:\n"
               "  kimi-audit-verify head        --public-key KEY --head HEAD.json\n"
               "  kimi-audit-verify inclusion   --public-key KEY --proof PROOF.json [--head HEAD.json]\n"
               "  kimi-audit-verify consistency --public-key KEY --proof PROOF.json [--old-head H.json] "
               "[--new-head H.json]\n"
               "  kimi-audit-verify bundle      --public-key KEY --bundle EXPORT.jsonl\n";
  return kUsage;
}

int Report(const Status& s) {
  if (s.code() == Status::Code::kCorruption) {
    std::cout << "NOT VERIFIED: " << s.message() << "\n";
    return kNotVerified;
  }
  std::cerr << "error: " << s.ToString() << "\n";
  return kUsage;
}

Result<std::optional<SignedTreeHead>> OptionalHead(const std::map<std::string, std::string>& opts,
                                                   const std::string& name) {
  auto it = opts.find(name);
  if (it == opts.end()) return std::optional<SignedTreeHead>();
  KIMI_ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(it->second));
  KIMI_ASSIGN_OR_RETURN(SignedTreeHead h, TreeHeadFromJson(j));
  return std::optional<SignedTreeHead>(h);
}

// An export bundle (`kimictl audit export`, GET /admin/v1/audit/export): every record
// against the one signed head in it.
int VerifyBundle(const std::string& path, const PublicKey& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Report(Status::NotFound("cannot open " + path));
  Result<BundleReport> report = VerifyExportBundle(in, key);
  if (!report.ok()) return Report(report.status());
  if (!report->ok()) {
    for (const std::string& p : report->problems) std::cout << "problem: " << p << "\n";
    std::cout << "NOT VERIFIED";
    if (report->first_bad_seq) std::cout << ": first bad sequence number " << *report->first_bad_seq;
    std::cout << "\n";
    return kNotVerified;
  }
  std::cout << "verified: " << report->records << " record(s) against " << report->heads << " signed head(s)\n";
  return kVerified;
}

int Run(const std::string& command, const std::map<std::string, std::string>& opts) {
  auto key_path = opts.find("public-key");
  if (key_path == opts.end()) return Usage();
  Result<std::string> key_text = ReadTextFile(key_path->second);
  if (!key_text.ok()) return Report(key_text.status());
  Result<PublicKey> key = ParsePublicKey(*key_text);
  if (!key.ok()) return Report(key.status());

  Result<ProofCheck> check = Status::InvalidArgument("unknown command " + command);
  if (command == "head") {
    Result<std::optional<SignedTreeHead>> head = OptionalHead(opts, "head");
    if (!head.ok()) return Report(head.status());
    if (!head->has_value()) return Usage();
    if (Status s = VerifyTreeHead(**head, *key); !s.ok()) return Report(s);
    std::cout << "verified: signed head for tree size " << (*head)->tree_size << " with root "
              << ToHex((*head)->root_hash) << "\n";
    return kVerified;
  }
  if (command == "bundle") {
    auto bundle_path = opts.find("bundle");
    if (bundle_path == opts.end()) return Usage();
    return VerifyBundle(bundle_path->second, *key);
  }
  auto proof_path = opts.find("proof");
  if (proof_path == opts.end()) return Usage();
  Result<nlohmann::json> proof_json = ReadJsonFile(proof_path->second);
  if (!proof_json.ok()) return Report(proof_json.status());
  if (command == "inclusion") {
    Result<InclusionProof> proof = InclusionProofFromJson(*proof_json);
    if (!proof.ok()) return Report(proof.status());
    Result<std::optional<SignedTreeHead>> head = OptionalHead(opts, "head");
    if (!head.ok()) return Report(head.status());
    check = CheckInclusionProof(*proof, *key, *head);
  } else if (command == "consistency") {
    Result<ConsistencyProof> proof = ConsistencyProofFromJson(*proof_json);
    if (!proof.ok()) return Report(proof.status());
    Result<std::optional<SignedTreeHead>> old_head = OptionalHead(opts, "old-head");
    if (!old_head.ok()) return Report(old_head.status());
    Result<std::optional<SignedTreeHead>> new_head = OptionalHead(opts, "new-head");
    if (!new_head.ok()) return Report(new_head.status());
    check = CheckConsistencyProof(*proof, *key, *old_head, *new_head);
  } else {
    return Usage();
  }
  if (!check.ok()) return Report(check.status());
  for (const std::string& fact : check->facts) std::cout << "ok: " << fact << "\n";
  std::cout << "verified\n";
  return kVerified;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string command = argv[1];
  std::map<std::string, std::string> opts;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || i + 1 >= argc) return Usage();
    opts[a.substr(2)] = argv[++i];
  }
  return Run(command, opts);
}
