#include "models/oms_verifier.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "kimi/log.h"
#include "kimi/regular_file.h"
#include "models/oms_bundle.h"
#include "models/oms_encoding.h"
#include "models/oms_model_tree.h"

namespace kimi::models {
namespace fs = std::filesystem;

namespace {

// Read through one descriptor: a signature file swapped for a FIFO is refused, not waited on.
// A link is followed: what it names is authenticated by its signature.
Result<std::string> ReadBundleFile(const std::string& path) {
  Result<std::string> text = ReadRegularFile(path, kMaxBundleBytes, FinalLink::kFollow);
  if (text.status().code() == Status::Code::kNotFound) {
    return Status::NotFound("signature file " + path + " does not exist");
  }
  return text;
}

// The signature's path relative to the model root when it lies inside the model directory.
std::string SignatureInsideModel(const std::string& model_path, const std::string& signature_path) {
  std::error_code ec;
  if (!fs::is_directory(model_path, ec)) return "";
  fs::path root = fs::weakly_canonical(model_path, ec);
  fs::path sig = fs::weakly_canonical(signature_path, ec);
  if (ec) return "";
  fs::path rel = sig.lexically_relative(root);
  std::string text = rel.generic_string();
  if (text.empty() || text == "." || text.rfind("..", 0) == 0) return "";
  return text;
}

Status Mismatch(std::string what) { return Status::Corruption("model verification failed: " + std::move(what)); }

// The resources the files on disk should produce under the signed serialization.
struct Expected {
  std::vector<HashRange> ranges;
  std::vector<ManifestResource> resources;  // same order as ranges
};

// A range of `f` to hash, read from the very file listed: the identity the manifest then
// carries is the file whose bytes were hashed, whatever was renamed over its name meanwhile.
HashRange ListedRange(const ModelFile& f, uint64_t offset, uint64_t length, bool to_eof) {
  HashRange range{f.abs_path, offset, length, to_eof};
  range.planned = f.identity;
  return range;
}

Status MatchFilesToManifest(const SignedStatement& st, const std::vector<ModelFile>& files, Expected* out) {
  std::map<std::string, const ModelFile*> on_disk;
  for (const auto& f : files) on_disk[f.name] = &f;
  std::set<std::string> signed_paths;
  for (const auto& r : st.resources) signed_paths.insert(r.path);

  for (const auto& path : signed_paths) {
    if (!on_disk.count(path)) return Mismatch("missing file \"" + path + "\" (named in the signed manifest)");
  }
  for (const auto& f : files) {
    bool empty_unsharded = st.method == SerializationMethod::kShards && f.size == 0;
    if (!signed_paths.count(f.name) && !empty_unsharded)
      return Mismatch("extra file \"" + f.name + "\" is not in the signed manifest");
  }

  std::map<std::string, std::vector<const ManifestResource*>> by_path;
  for (const auto& r : st.resources) by_path[r.path].push_back(&r);
  for (const auto& [path, signed_items] : by_path) {
    const ModelFile& f = *on_disk[path];
    if (st.method == SerializationMethod::kFiles) {
      out->ranges.push_back(ListedRange(f, 0, f.size, /*to_eof=*/true));
      out->resources.push_back(*signed_items[0]);
      continue;
    }
    // Shards tile the file: [0, s), [s, 2s), ... the last one ends at the file size.
    std::vector<std::pair<uint64_t, uint64_t>> shards;
    for (uint64_t start = 0; start < f.size; start += st.shard_size)
      shards.emplace_back(start, std::min(f.size, start + st.shard_size));
    bool same = shards.size() == signed_items.size();
    for (size_t i = 0; same && i < shards.size(); ++i)
      same = shards[i].first == signed_items[i]->start && shards[i].second == signed_items[i]->end;
    if (!same)
      return Mismatch("file \"" + path + "\" has " + std::to_string(f.size) +
                      " bytes, which does not match its signed shards (size changed)");
    for (size_t i = 0; i < shards.size(); ++i) {
      bool last = i + 1 == shards.size();
      out->ranges.push_back(ListedRange(f, shards[i].first, shards[i].second - shards[i].first, last));
      out->resources.push_back(*signed_items[i]);
    }
  }
  return Status::OK();
}

// The digest of every expected range: the caller's known ones, the rest hashed now.
Result<std::vector<std::string>> DigestsOf(const Expected& expected, const VerifyRequest& request) {
  if (request.known_digests == nullptr) return HashRanges(expected.ranges, request.hashing);
  std::vector<std::string> digests(expected.ranges.size());
  std::vector<HashRange> unknown;
  std::vector<size_t> unknown_at;
  for (size_t i = 0; i < expected.ranges.size(); ++i) {
    const HashRange& range = expected.ranges[i];
    auto known = request.known_digests->find(RangeKey(expected.resources[i].path, range.offset, range.length));
    if (known != request.known_digests->end()) {
      digests[i] = known->second;
    } else {
      unknown.push_back(range);
      unknown_at.push_back(i);
    }
  }
  KIMI_ASSIGN_OR_RETURN(std::vector<std::string> hashed, HashRanges(unknown, request.hashing));
  for (size_t j = 0; j < hashed.size(); ++j) digests[unknown_at[j]] = std::move(hashed[j]);
  return digests;
}

}  // namespace

std::vector<std::string> VerifiedManifest::files() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) {
    if (out.empty() || out.back() != e.path) out.push_back(e.path);
  }
  return out;
}

const FileIdentity* VerifiedManifest::verified_file(const std::string& path) const {
  auto it = identities_.find(path);
  return it == identities_.end() ? nullptr : &it->second;
}

uint64_t VerifiedManifest::file_size(const std::string& path) const {
  uint64_t end = 0;
  for (const auto& e : entries_) {
    if (e.path == path) end = std::max(end, e.end);
  }
  return end;
}

std::string DefaultSignaturePath(const std::string& model_path) {
  std::error_code ec;
  fs::path p(model_path);
  if (fs::is_directory(p, ec)) return (p / "model.sig").string();
  return (p.parent_path() / "model.sig").string();
}

Result<VerifiedManifest> ModelVerifier::Verify(const VerifyRequest& request, const TrustStore& trust) {
  std::string signature_path = request.signature_path.empty() ? DefaultSignaturePath(request.model_path)
                                                              : request.signature_path;
  KIMI_ASSIGN_OR_RETURN(std::string bundle_text, ReadBundleFile(signature_path));
  KIMI_ASSIGN_OR_RETURN(OmsBundle bundle, ParseBundle(bundle_text));
  KIMI_ASSIGN_OR_RETURN(SignerIdentity signer, VerifyEnvelopeSignature(bundle, trust));
  KIMI_ASSIGN_OR_RETURN(SignedStatement st, ParseStatement(bundle.payload));

  ModelTreeOptions tree;
  tree.allow_symlinks = st.allow_symlinks;
  tree.ignore_paths = st.ignore_paths;
  tree.ignore_paths.insert(tree.ignore_paths.end(), request.extra_ignore_paths.begin(), request.extra_ignore_paths.end());
  if (std::string sig_rel = SignatureInsideModel(request.model_path, signature_path); !sig_rel.empty())
    tree.ignore_paths.push_back(sig_rel);
  auto files = ListModelFiles(request.model_path, tree);
  if (!files.ok()) return files.status().WithContext("model verification failed");

  bool single_file_model = files->size() == 1 && (*files)[0].name == ".";
  bool signed_single_file = st.resources.front().path == ".";
  if (single_file_model != signed_single_file)
    return Mismatch(signed_single_file ? "the signature covers a single file but " + request.model_path + " is a directory"
                                       : "the signature covers a directory but " + request.model_path + " is a file");

  Expected expected;
  KIMI_RETURN_IF_ERROR(MatchFilesToManifest(st, *files, &expected));
  KIMI_ASSIGN_OR_RETURN(std::vector<std::string> digests, DigestsOf(expected, request));

  VerifiedManifest manifest;
  std::vector<std::string> mismatched;
  for (size_t i = 0; i < digests.size(); ++i) {
    const ManifestResource& r = expected.resources[i];
    if (digests[i] != r.digest) {
      std::string what = r.path == "." ? request.model_path : r.path;
      if (st.method == SerializationMethod::kShards)
        what += " (bytes " + std::to_string(r.start) + "-" + std::to_string(r.end) + ")";
      mismatched.push_back("\"" + what + "\"");
      continue;
    }
    uint64_t end = st.method == SerializationMethod::kShards ? r.end : expected.ranges[i].length;
    manifest.entries_.push_back({r.name, r.path, r.start, end, HexEncode(r.digest)});
    manifest.identities_[r.path] = *expected.ranges[i].planned;
    manifest.total_bytes_ += expected.ranges[i].length;
  }
  if (!mismatched.empty()) {
    std::string list;
    for (size_t i = 0; i < mismatched.size() && i < 8; ++i) list += (i ? ", " : "") + mismatched[i];
    if (mismatched.size() > 8) list += " and " + std::to_string(mismatched.size() - 8) + " more";
    return Mismatch("digest mismatch (content changed) in " + list);
  }

  manifest.model_path_ = request.model_path;
  manifest.model_name_ = st.model_name;
  manifest.subject_digest_hex_ = HexEncode(st.subject_digest);
  manifest.signer_ = std::move(signer);
  manifest.method_ = st.method;
  manifest.shard_size_ = st.shard_size;
  manifest.legacy_ = st.legacy;
  log::Info("model verified", {{"model", request.model_path}, {"subject_sha256", manifest.subject_digest_hex_},
                               {"signer", manifest.signer_.description}, {"bytes", manifest.total_bytes_},
                               {"resources", manifest.entries_.size()}});
  return manifest;
}

}  // namespace kimi::models
