#include "models/oms_test_support.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "models/oms_bundle.h"
#include "models/oms_encoding.h"
#include "models/oms_keys.h"
#include "models/oms_signature.h"
#include "models/oms_statement.h"

namespace kimi::models::testing {
namespace fs = std::filesystem;

std::string VectorsDir() {
  const char* src = std::getenv("KIMI_SOURCE_DIR");
  std::string root = src != nullptr ? src : KIMI_TEST_SOURCE_DIR;
  return root + "/tests/data/model-signing";
}

std::vector<Vector> AllVectors() {
  return {
      {"v0.2.0-certificate", true, false, {}},
      {"v0.3.1-certificate", true, false, {}},
      {"v0.3.1-elliptic-key", false, true, {}},
      {"v1.0.0-certificate", true, false, {}},
      {"v1.0.0-elliptic-key", false, true, {}},
      {"v1.0.1-certificate", true, false, {"ignore-me"}},
      {"v1.0.1-elliptic-key", false, false, {"ignore-me"}},
      {"v1.1.0-certificate", true, false, {}},
      {"v1.1.0-elliptic-key", false, false, {}},
  };
}

TrustStore TrustFor(const Vector& v) {
  TrustStore trust;
  std::string file = VectorsDir() + (v.certificate ? "/keys/ca-cert.pem" : "/keys/signing-key-pub.pem");
  Status s = trust.AddPemFile(file);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  return trust;
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "kimi-oms-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string CopyVector(const Vector& v, const std::string& dest) {
  fs::path model = fs::path(dest) / v.name;
  fs::copy(fs::path(VectorsDir()) / v.name, model, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(model))
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  return v.single_file ? (model / "signme-1").string() : model.string();
}

bool ReturnsWithin(std::chrono::seconds limit, const std::function<void()>& body,
                   const std::function<void()>& unblock) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread runner([&] {
    body();
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  const bool in_time = cv.wait_for(lock, limit, [&] { return done; });
  if (!in_time) {
    ADD_FAILURE() << "the call did not return within " << limit.count() << " s (blocked?)";
    lock.unlock();
    if (unblock) unblock();
    lock.lock();
    if (!cv.wait_for(lock, limit, [&] { return done; })) {
      std::fprintf(stderr, "the blocked call could not be freed; aborting the test process\n");
      std::abort();
    }
  }
  lock.unlock();
  runner.join();
  return in_time;
}

void ReleaseFifoReaders(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

void FlipByte(const std::string& path, size_t offset) {
  std::string bytes = ReadFile(path);
  bytes.at(offset) ^= 0x01;
  // The model store keeps its copies read-only (0400); a test tampering with one writes anyway.
  std::filesystem::permissions(path, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  WriteFile(path, bytes);
}

std::string MakeKeyBundle(const std::string& payload, EVP_PKEY* key) {
  auto sig = EcdsaSign(key, Pae(kInTotoPayloadType, payload));
  if (!sig.ok()) throw std::runtime_error(sig.status().ToString());
  nlohmann::ordered_json bundle = {
      {"mediaType", kBundleMediaType},
      {"verificationMaterial", {{"publicKey", {{"hint", KeyFingerprint(key)}}}, {"tlogEntries", nlohmann::json::array()}}},
      {"dsseEnvelope",
       {{"payload", Base64Encode(payload)},
        {"payloadType", kInTotoPayloadType},
        {"signatures", nlohmann::json::array({{{"sig", Base64Encode(*sig)}, {"keyid", ""}}})}}}};
  return bundle.dump();
}

std::string Sha256Hex(const std::string& bytes) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), d, &len, EVP_sha256(), nullptr);
  return HexEncode(std::string_view(reinterpret_cast<char*>(d), len));
}

std::string MakeStatement(const std::vector<std::pair<std::string, std::string>>& resources, const std::string& subject_hex,
                          const std::string& method, bool allow_symlinks) {
  nlohmann::ordered_json list = nlohmann::json::array();
  std::string concatenated;
  for (const auto& [name, hex] : resources) {
    list.push_back({{"algorithm", "sha256"}, {"digest", hex}, {"name", name}});
    concatenated += *HexDecode(hex);
  }
  nlohmann::ordered_json serialization = {{"method", method}, {"hash_type", "sha256"}, {"allow_symlinks", allow_symlinks}};
  if (method == "shards") serialization["shard_size"] = 4;
  nlohmann::ordered_json st = {
      {"_type", kStatementType},
      {"subject", nlohmann::json::array({{{"name", "crafted"},
                                          {"digest", {{"sha256", subject_hex.empty() ? Sha256Hex(concatenated) : subject_hex}}}}})},
      {"predicateType", kPredicateType},
      {"predicate", {{"serialization", serialization}, {"resources", list}}}};
  return st.dump(2);
}

}  // namespace kimi::models::testing

namespace kimi::models::testing {

std::string TestCertificate::Pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert.get());
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

std::string TestCertificate::KeyPem() const { return PrivateKeyPem(key.get()).value(); }

TestCertificate MakeCertificate(const CertificateSpec& spec, const TestCertificate* issuer) {
  TestCertificate out;
  out.key = GenerateP256Key().value();
  out.cert = SharedX509(X509_new(), X509_free);
  X509* x = out.cert.get();
  X509_set_version(x, 2);
  static long serial = 1;
  ASN1_INTEGER_set(X509_get_serialNumber(x), ++serial);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, out.key.get());
  X509_NAME* name = X509_get_subject_name(x);
  // RFC 2253 writes the last RDN first: add them from the end of the text.
  std::vector<std::string> parts;
  for (size_t at = 0; at <= spec.subject.size();) {
    const size_t comma = std::min(spec.subject.find(',', at), spec.subject.size());
    parts.push_back(spec.subject.substr(at, comma - at));
    at = comma + 1;
  }
  for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
    const size_t eq = part->find('=');
    X509_NAME_add_entry_by_txt(name, part->substr(0, eq).c_str(), MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(part->c_str() + eq + 1), -1, -1, 0);
  }
  X509* signer = issuer != nullptr ? issuer->cert.get() : x;
  X509_set_issuer_name(x, X509_get_subject_name(signer));
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, signer, x, nullptr, nullptr, 0);
  auto add = [&](int nid, const std::string& value) {
    if (value.empty()) return;
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (ext == nullptr) throw std::runtime_error("bad extension value " + value);
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  };
  add(NID_basic_constraints, spec.ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
  add(NID_key_usage, spec.ca ? "critical,keyCertSign,cRLSign,digitalSignature"
                            : spec.key_usage.empty() ? "" : "critical," + spec.key_usage);
  add(NID_ext_key_usage, spec.extended_key_usage);
  add(NID_subject_alt_name, spec.subject_alt_names);
  add(NID_subject_key_identifier, "hash");
  EVP_PKEY* signing_key = issuer != nullptr ? issuer->key.get() : out.key.get();
  if (X509_sign(x, signing_key, EVP_sha256()) <= 0) throw std::runtime_error("X509_sign failed");
  return out;
}

}  // namespace kimi::models::testing
