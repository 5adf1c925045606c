#include "models/oms_statement.h"

#include <openssl/evp.h>

#include <charconv>
#include <set>
#include <nlohmann/json.hpp>

#include "kimi/untrusted_json.h"
#include "models/oms_encoding.h"

namespace kimi::models {
namespace {

using Json = nlohmann::json;

Status Refuse(std::string_view what) { return Status::InvalidArgument("signed manifest: " + std::string(what)); }

// Next '/'-separated component of `path` starting at *pos; advances *pos past the separator.
std::string_view NextComponent(std::string_view path, size_t* pos) {
  size_t slash = path.find('/', *pos);
  std::string_view part = path.substr(*pos, slash == std::string_view::npos ? std::string_view::npos : slash - *pos);
  *pos = slash == std::string_view::npos ? path.size() + 1 : slash + 1;
  return part;
}

int ComparePaths(std::string_view a, std::string_view b) {
  size_t pa = 0, pb = 0;
  while (pa <= a.size() && pb <= b.size()) {
    std::string_view ca = NextComponent(a, &pa);
    std::string_view cb = NextComponent(b, &pb);
    if (int c = ca.compare(cb); c != 0) return c;
  }
  if (pa <= a.size()) return 1;   // a has more components
  if (pb <= b.size()) return -1;
  return 0;
}

Result<uint64_t> ParseCanonicalUint(std::string_view text, std::string_view what) {
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  bool canonical = !text.empty() && (text.size() == 1 || text[0] != '0');
  if (ec != std::errc() || ptr != text.data() + text.size() || !canonical)
    return Refuse(std::string(what) + " \"" + std::string(text) + "\" is not a decimal offset");
  return value;
}

Result<std::string> DigestHex(const Json& value, std::string_view where) {
  if (!value.is_string()) return Refuse(std::string(where) + ": digest is not a string");
  auto raw = HexDecode(value.get<std::string>());
  if (!raw.ok() || raw->size() != 32) return Refuse(std::string(where) + ": digest is not 64 hex digits");
  return std::move(raw).value();
}

Status ParseSerialization(const Json& s, SignedStatement* out) {
  if (!s.is_object()) return Refuse("predicate.serialization is missing or not an object");
  auto method = s.find("method");
  if (method == s.end() || !method->is_string()) return Refuse("serialization.method is missing");
  if (*method == "files") {
    out->method = SerializationMethod::kFiles;
  } else if (*method == "shards") {
    out->method = SerializationMethod::kShards;
    // Protobuf's JSON writer may print integral numbers as doubles ("1000000000.0").
    auto size = s.find("shard_size");
    bool integral = size != s.end() && (size->is_number_unsigned() ||
                                        (size->is_number_float() && size->get<double>() >= 1 &&
                                         size->get<double>() < 9.0e15 &&
                                         size->get<double>() == static_cast<double>(static_cast<uint64_t>(size->get<double>()))));
    if (!integral) return Refuse("serialization.shard_size must be a positive integer");
    out->shard_size = size->is_number_unsigned() ? size->get<uint64_t>() : static_cast<uint64_t>(size->get<double>());
    if (out->shard_size == 0) return Refuse("serialization.shard_size must be a positive integer");
  } else {
    return Refuse("unknown serialization method \"" + method->dump() + "\"");
  }
  auto hash = s.find("hash_type");
  if (hash == s.end() || !hash->is_string()) return Refuse("serialization.hash_type is missing");
  out->hash_type = hash->get<std::string>();
  std::string sharded = "sha256-sharded-" + std::to_string(out->shard_size);
  if (out->hash_type != "sha256" && !(out->method == SerializationMethod::kShards && out->hash_type == sharded))
    return Status::Unimplemented("signed manifest: hash_type \"" + out->hash_type + "\" is not supported (only sha256)");
  auto symlinks = s.find("allow_symlinks");
  if (symlinks != s.end()) {
    if (!symlinks->is_boolean()) return Refuse("serialization.allow_symlinks is not a boolean");
    out->allow_symlinks = symlinks->get<bool>();
  }
  auto ignore = s.find("ignore_paths");
  if (ignore != s.end()) {
    if (!ignore->is_array()) return Refuse("serialization.ignore_paths is not an array");
    for (const Json& p : *ignore) {
      if (!p.is_string()) return Refuse("serialization.ignore_paths holds a non-string");
      out->ignore_paths.push_back(p.get<std::string>());
    }
  }
  return Status::OK();
}

Status ParseResourceName(SignedStatement* st, ManifestResource* r) {
  if (st->method == SerializationMethod::kFiles) {
    r->path = r->name;
  } else {
    size_t c2 = r->name.rfind(':');
    size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : r->name.rfind(':', c2 - 1);
    if (c1 == std::string::npos || r->name.find(':') != c1)
      return Refuse("shard name \"" + r->name + "\" is not path:start:end");
    r->path = r->name.substr(0, c1);
    KIMI_ASSIGN_OR_RETURN(r->start, ParseCanonicalUint(std::string_view(r->name).substr(c1 + 1, c2 - c1 - 1), "shard start"));
    KIMI_ASSIGN_OR_RETURN(r->end, ParseCanonicalUint(std::string_view(r->name).substr(c2 + 1), "shard end"));
    if (r->end <= r->start || r->end - r->start > st->shard_size)
      return Refuse("shard \"" + r->name + "\" has an empty or oversized range");
  }
  return CheckModelRelativePath(r->path);
}

Status ParseResources(const Json& list, SignedStatement* out) {
  if (!list.is_array()) return Refuse("predicate.resources is missing or not an array");
  if (list.empty()) return Refuse("predicate.resources is empty");
  for (const Json& item : list) {
    if (!item.is_object()) return Refuse("a resource is not an object");
    auto name = item.find("name");
    auto algorithm = item.find("algorithm");
    auto digest = item.find("digest");
    if (name == item.end() || !name->is_string()) return Refuse("a resource has no name");
    ManifestResource r;
    r.name = name->get<std::string>();
    if (algorithm == item.end() || !algorithm->is_string() ||
        (*algorithm != "sha256" && algorithm->get<std::string>() != out->hash_type))
      return Status::Unimplemented("signed manifest: resource \"" + r.name + "\" uses an unsupported algorithm");
    if (digest == item.end()) return Refuse("resource \"" + r.name + "\" has no digest");
    KIMI_ASSIGN_OR_RETURN(r.digest, DigestHex(*digest, "resource \"" + r.name + "\""));
    KIMI_RETURN_IF_ERROR(ParseResourceName(out, &r));
    out->resources.push_back(std::move(r));
  }
  for (size_t i = 1; i < out->resources.size(); ++i) {
    const auto& prev = out->resources[i - 1];
    const auto& cur = out->resources[i];
    if (prev.name == cur.name) return Refuse("duplicate resource \"" + cur.name + "\"");
    if (!ResourceLess(prev, cur)) return Refuse("resources are not sorted: \"" + cur.name + "\" after \"" + prev.name + "\"");
  }
  // A single-file model is named "." and then it is the only file; a directory entry never is.
  size_t single_file_entries = 0;
  for (const auto& r : out->resources) single_file_entries += r.path == "." ? 1 : 0;
  if (single_file_entries != 0 && single_file_entries != out->resources.size())
    return Refuse("resource \".\" (a single-file model) mixed with named files");
  // Overlapping shards would let two names cover one byte range differently.
  for (size_t i = 1; i < out->resources.size(); ++i) {
    const auto& prev = out->resources[i - 1];
    const auto& cur = out->resources[i];
    if (out->method == SerializationMethod::kShards && prev.path == cur.path && cur.start < prev.end)
      return Refuse("shards \"" + prev.name + "\" and \"" + cur.name + "\" overlap");
  }
  return Status::OK();
}

Result<SignedStatement> ParseLegacy(const Json& subjects) {
  SignedStatement st;
  st.legacy = true;
  st.model_name = "";
  for (const Json& s : subjects) {
    if (!s.is_object() || !s.contains("name") || !s["name"].is_string()) return Refuse("a subject has no name");
    ManifestResource r;
    r.name = r.path = s["name"].get<std::string>();
    if (!s.contains("digest") || !s["digest"].is_object() || !s["digest"].contains("sha256"))
      return Refuse("subject \"" + r.name + "\" has no sha256 digest");
    KIMI_ASSIGN_OR_RETURN(r.digest, DigestHex(s["digest"]["sha256"], "subject \"" + r.name + "\""));
    KIMI_RETURN_IF_ERROR(CheckModelRelativePath(r.path));
    st.resources.push_back(std::move(r));
  }
  if (st.resources.empty()) return Refuse("no subjects");
  // The 0.2 signer emitted subjects in the same canonical order; hold it to that.
  for (size_t i = 1; i < st.resources.size(); ++i) {
    if (st.resources[i - 1].name == st.resources[i].name) return Refuse("duplicate subject \"" + st.resources[i].name + "\"");
    if (!ResourceLess(st.resources[i - 1], st.resources[i])) return Refuse("subjects are not sorted");
  }
  st.subject_digest = SubjectDigest(st.resources);
  return st;
}

}  // namespace

bool ResourceLess(const ManifestResource& a, const ManifestResource& b) {
  int c = ComparePaths(a.path, b.path);
  if (c != 0) return c < 0;
  if (a.start != b.start) return a.start < b.start;
  return a.end < b.end;
}

std::string SubjectDigest(const std::vector<ManifestResource>& resources) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  for (const auto& r : resources) EVP_DigestUpdate(ctx, r.digest.data(), r.digest.size());
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, out, &len);
  EVP_MD_CTX_free(ctx);
  return std::string(reinterpret_cast<char*>(out), len);
}

Status CheckModelRelativePath(std::string_view path) {
  if (path == ".") return Status::OK();
  auto refuse = [&](std::string_view why) {
    return Refuse("resource path \"" + std::string(path) + "\" " + std::string(why));
  };
  if (path.empty()) return refuse("is empty");
  if (path.find('\0') != std::string_view::npos) return refuse("contains a NUL byte");
  if (path.front() == '/') return refuse("is absolute and escapes the model directory");
  size_t pos = 0;
  while (pos <= path.size()) {
    std::string_view part = NextComponent(path, &pos);
    if (part == "..") return refuse("escapes the model directory");
    if (part.empty() || part == ".") return refuse("is not a canonical relative path");
  }
  return Status::OK();
}

std::string ShardName(std::string_view path, uint64_t start, uint64_t end) {
  return std::string(path) + ":" + std::to_string(start) + ":" + std::to_string(end);
}

Result<SignedStatement> ParseStatement(std::string_view payload) {
  Result<Json> parsed = ParseUntrustedJson(payload, "payload", kMaxFileJsonNesting);
  if (!parsed.ok()) return Refuse(parsed.status().message());
  if (!parsed->is_object()) return Refuse("payload is not a JSON object");
  Json root = std::move(*parsed);
  if (!root.contains("_type") || root["_type"] != kStatementType)
    return Refuse("payload is not an in-toto Statement v1");
  if (!root.contains("predicateType") || !root["predicateType"].is_string()) return Refuse("missing predicateType");
  std::string predicate_type = root["predicateType"].get<std::string>();
  if (!root.contains("subject") || !root["subject"].is_array()) return Refuse("missing subject");
  const Json& subjects = root["subject"];
  if (predicate_type == kLegacyPredicateType) return ParseLegacy(subjects);
  if (predicate_type != kPredicateType) return Refuse("unknown predicateType \"" + predicate_type + "\"");

  if (subjects.size() != 1)
    return Refuse("expected exactly one subject, found " + std::to_string(subjects.size()));
  const Json& subject = subjects[0];
  if (!subject.is_object() || !subject.contains("digest") || !subject["digest"].is_object() ||
      !subject["digest"].contains("sha256"))
    return Refuse("subject has no sha256 digest");
  SignedStatement st;
  if (subject.contains("name") && subject["name"].is_string()) st.model_name = subject["name"].get<std::string>();
  KIMI_ASSIGN_OR_RETURN(st.subject_digest, DigestHex(subject["digest"]["sha256"], "subject"));

  if (!root.contains("predicate") || !root["predicate"].is_object()) return Refuse("missing predicate");
  const Json& predicate = root["predicate"];
  KIMI_RETURN_IF_ERROR(ParseSerialization(predicate.contains("serialization") ? predicate["serialization"] : Json(), &st));
  KIMI_RETURN_IF_ERROR(ParseResources(predicate.contains("resources") ? predicate["resources"] : Json(), &st));
  if (SubjectDigest(st.resources) != st.subject_digest)
    return Refuse("subject digest is not the SHA-256 of the resource digests (manifest is inconsistent)");
  return st;
}

}  // namespace kimi::models
