#include "models/oms_signer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "kimi/durable_file.h"
#include "models/oms_bundle.h"
#include "models/oms_encoding.h"
#include "models/oms_keys.h"
#include "models/oms_model_tree.h"
#include "models/oms_signature.h"
#include "models/oms_statement.h"
#include "models/oms_verifier.h"

namespace kimi::models {
namespace fs = std::filesystem;

namespace {

using OrderedJson = nlohmann::ordered_json;

std::string ModelName(const std::string& model_path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(model_path, ec);
  if (ec) p = fs::path(model_path);
  std::string name = p.filename().string();
  if (name.empty()) name = p.parent_path().filename().string();
  return name;
}

}  // namespace

uint64_t AutoShardSize(uint64_t total_bytes) {
  constexpr uint64_t kMin = 4ull << 20, kMax = 1ull << 30, kShards = 1024;
  uint64_t size = kMin;
  while (size < kMax && size * kShards < total_bytes) size *= 2;
  return size;
}

Result<std::string> BuildBundle(const SignRequest& request, SignResult* result) {
  if (!request.private_key) return Status::InvalidArgument("no signing key");
  if (!request.certificate_chain.empty() &&
      EVP_PKEY_eq(X509_get0_pubkey(request.certificate_chain.front().get()), request.private_key.get()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("the signing certificate (the chain's first) is not the signing key's");
  }
  std::string signature_path =
      request.signature_path.empty() ? DefaultSignaturePath(request.model_path) : request.signature_path;

  ModelTreeOptions tree;
  tree.ignore_paths = request.ignore_paths;
  std::error_code ec;
  bool is_dir = fs::is_directory(request.model_path, ec);
  if (is_dir) {
    fs::path rel = fs::weakly_canonical(signature_path, ec).lexically_relative(fs::weakly_canonical(request.model_path, ec));
    std::string sig_rel = rel.generic_string();
    if (!sig_rel.empty() && sig_rel.rfind("..", 0) != 0 && !IsIgnoredPath(sig_rel, tree.ignore_paths))
      tree.ignore_paths.push_back(sig_rel);
  }
  KIMI_ASSIGN_OR_RETURN(std::vector<ModelFile> files, ListModelFiles(request.model_path, tree));
  if (files.empty()) return Status::InvalidArgument("model " + request.model_path + " has no files to sign");

  uint64_t shard_size = request.shard_size;
  if (request.auto_shard_size) {
    uint64_t total = 0;
    for (const auto& f : files) total += f.size;
    shard_size = AutoShardSize(total);
  }
  std::vector<HashRange> ranges;
  std::vector<ManifestResource> resources;
  for (const auto& f : files) {
    if (shard_size == 0) {
      ranges.push_back({f.abs_path, 0, f.size, true});
      resources.push_back({f.name, f.name, 0, f.size, ""});
      continue;
    }
    for (uint64_t start = 0; start < f.size; start += shard_size) {
      uint64_t end = std::min(f.size, start + shard_size);
      ranges.push_back({f.abs_path, start, end - start, end == f.size});
      resources.push_back({ShardName(f.name, start, end), f.name, start, end, ""});
    }
  }
  KIMI_ASSIGN_OR_RETURN(std::vector<std::string> digests, HashRanges(ranges, request.hashing));
  uint64_t bytes = 0;
  for (size_t i = 0; i < resources.size(); ++i) {
    resources[i].digest = digests[i];
    bytes += ranges[i].length;
  }

  std::string hash_type = "sha256";
  OrderedJson resource_list = OrderedJson::array();
  for (const auto& r : resources)
    resource_list.push_back({{"algorithm", "sha256"}, {"digest", HexEncode(r.digest)}, {"name", r.name}});
  std::vector<std::string> ignore_list = tree.ignore_paths;
  std::sort(ignore_list.begin(), ignore_list.end());
  OrderedJson serialization = {{"method", shard_size == 0 ? "files" : "shards"}, {"hash_type", hash_type}};
  if (shard_size != 0) serialization["shard_size"] = shard_size;
  serialization["allow_symlinks"] = false;
  serialization["ignore_paths"] = ignore_list;

  std::string subject_digest = SubjectDigest(resources);
  OrderedJson statement = {
      {"_type", kStatementType},
      {"subject", OrderedJson::array({{{"name", ModelName(request.model_path)},
                                       {"digest", {{"sha256", HexEncode(subject_digest)}}}}})},
      {"predicateType", kPredicateType},
      {"predicate", {{"serialization", serialization}, {"resources", resource_list}}},
  };
  std::string payload;
  try {
    payload = statement.dump(2);
  } catch (const nlohmann::json::exception&) {
    // Only invalid UTF-8 in a file name can make dump() fail; such a name has no JSON form.
    return Status::InvalidArgument("a file name in " + request.model_path + " is not valid UTF-8");
  }

  KIMI_ASSIGN_OR_RETURN(std::string signature, EcdsaSign(request.private_key.get(), Pae(kInTotoPayloadType, payload)));
  OrderedJson material = {{"publicKey", {{"hint", KeyFingerprint(request.private_key.get())}}}};
  if (!request.certificate_chain.empty()) {
    OrderedJson certificates = OrderedJson::array();
    for (const SharedX509& cert : request.certificate_chain) {
      unsigned char* der = nullptr;
      const int len = i2d_X509(cert.get(), &der);
      if (len <= 0) return Status::InvalidArgument("a certificate of the signing chain cannot be encoded");
      certificates.push_back({{"rawBytes", Base64Encode(std::string_view(reinterpret_cast<char*>(der), len))}});
      OPENSSL_free(der);
    }
    material = {{"x509CertificateChain", {{"certificates", certificates}}}};
  }
  material["tlogEntries"] = OrderedJson::array();
  OrderedJson bundle = {
      {"mediaType", kBundleMediaType},
      {"verificationMaterial", material},
      {"dsseEnvelope",
       {{"payload", Base64Encode(payload)},
        {"payloadType", kInTotoPayloadType},
        {"signatures", OrderedJson::array({{{"sig", Base64Encode(signature)}, {"keyid", ""}}})}}},
  };
  if (result != nullptr) {
    result->signature_path = signature_path;
    result->subject_digest_hex = HexEncode(subject_digest);
    result->resources = resources.size();
    result->bytes = bytes;
  }
  return bundle.dump();
}

Result<SignResult> SignModel(const SignRequest& request) {
  SignResult result;
  KIMI_ASSIGN_OR_RETURN(std::string text, BuildBundle(request, &result));
  KIMI_RETURN_IF_ERROR(WriteFileAtomically(result.signature_path, text, 0644));
  return result;
}

}  // namespace kimi::models
