#include "models/oms_trust.h"

#include <openssl/pem.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kimi/log.h"
#include "models/oms_keys.h"

namespace kimi::models {
namespace {

std::string X509NameText(X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

Result<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > (1u << 20)) return Status::InvalidArgument(path + " is larger than 1 MiB");
  return text.str();
}

}  // namespace

Status TrustStore::AddPem(std::string_view pem_text, std::string_view source) {
  BioPtr bio(BIO_new_mem_buf(pem_text.data(), static_cast<int>(pem_text.size())));
  size_t added = 0;
  for (;;) {
    char* name = nullptr;
    char* header = nullptr;
    unsigned char* data = nullptr;
    long len = 0;
    if (PEM_read_bio(bio.get(), &name, &header, &data, &len) != 1) break;
    std::string block = name;
    const unsigned char* p = data;
    if (block == "PUBLIC KEY") {
      EVP_PKEY* key = d2i_PUBKEY(nullptr, &p, len);
      if (key == nullptr) {
        log::Warn("trust store: unreadable public key skipped", {{"file", std::string(source)}});
      } else {
        SharedPkey shared(key, EVP_PKEY_free);
        if (DigestForKey(key) == nullptr) {
          log::Warn("trust store: key is not ECDSA P-256/P-384/P-521, skipped", {{"file", std::string(source)}});
        } else {
          keys_.push_back({shared, KeyFingerprint(key), std::string(source)});
          ++added;
        }
      }
    } else if (block == "CERTIFICATE") {
      X509* cert = d2i_X509(nullptr, &p, len);
      if (cert == nullptr) {
        log::Warn("trust store: unreadable certificate skipped", {{"file", std::string(source)}});
      } else {
        SharedX509 shared(cert, X509_free);
        cas_.push_back({shared, X509NameText(X509_get_subject_name(cert)), std::string(source)});
        ++added;
      }
    } else {
      log::Warn("trust store: PEM block skipped", {{"file", std::string(source)}, {"type", block}});
    }
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
  }
  ERR_clear_error();
  if (added == 0) return Status::InvalidArgument(std::string(source) + ": no usable public key or certificate");
  if (origin_.empty()) origin_ = std::string(source);
  return Status::OK();
}

Status TrustStore::AddPemFile(const std::string& path) {
  KIMI_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
  return AddPem(text, path);
}

Result<TrustStore> TrustStore::LoadPath(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return LoadDirectory(path);
  TrustStore store;
  KIMI_RETURN_IF_ERROR(store.AddPemFile(path));
  return store;
}

Result<TrustStore> TrustStore::LoadDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound("trust store directory " + dir + " does not exist");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    if (entry.path().extension() != ".pem") {
      log::Warn("trust store: file without .pem suffix skipped", {{"file", entry.path().string()}});
      continue;
    }
    files.push_back(entry.path().string());
  }
  if (ec) return Status::IOError("cannot list trust store " + dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  TrustStore store;
  for (const auto& file : files) {
    Status s = store.AddPemFile(file);
    if (!s.ok()) log::Warn("trust store: file skipped", {{"file", file}, {"reason", s.message()}});
  }
  store.origin_ = dir;
  return store;
}

std::string TrustStore::description() const {
  std::string text = std::to_string(keys_.size()) + " trusted key(s), " + std::to_string(cas_.size()) + " trusted CA(s)";
  if (!origin_.empty()) text += " from " + origin_;
  return text;
}

}  // namespace kimi::models
