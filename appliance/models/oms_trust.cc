#include "models/oms_trust.h"

#include <openssl/pem.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "kimi/log.h"
#include "models/oms_keys.h"
#include "kimi/regular_file.h"

namespace kimi::models {
namespace {

// A trust file read whole: a link is followed (an operator's choice), but a FIFO or a device
// put there is refused rather than waited on or read without end.
Result<std::string> ReadSmallFile(const std::string& path) {
  return ReadRegularFile(path, kMaxTrustFileBytes, FinalLink::kFollow);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// The DER of one block as OpenSSL decodes it; `ok` is false for text that is not valid PEM.
struct DecodedBlock {
  std::string der;
  bool ok = false;
};
DecodedBlock DecodeBlock(std::string_view block_text) {
  BioPtr bio(BIO_new_mem_buf(block_text.data(), static_cast<int>(block_text.size())));
  char* name = nullptr;
  char* header = nullptr;
  unsigned char* data = nullptr;
  long len = 0;
  DecodedBlock out;
  if (PEM_read_bio(bio.get(), &name, &header, &data, &len) == 1) {
    out.der.assign(reinterpret_cast<char*>(data), static_cast<size_t>(len));
    out.ok = true;
  }
  OPENSSL_free(name);
  OPENSSL_free(header);
  OPENSSL_free(data);
  ERR_clear_error();
  return out;
}

}  // namespace

std::vector<PemBlock> SplitPemBlocks(std::string_view text) {
  constexpr std::string_view kBegin = "-----BEGIN ";
  constexpr std::string_view kEnd = "-----END ";
  std::vector<PemBlock> blocks;
  size_t preamble = 0;
  for (size_t at = text.find(kBegin); at != std::string_view::npos; at = text.find(kBegin, at)) {
    const size_t name_end = text.find("-----", at + kBegin.size());
    const size_t end = text.find(kEnd, at);
    if (name_end == std::string_view::npos || end == std::string_view::npos) break;
    size_t stop = text.find('\n', end);
    stop = stop == std::string_view::npos ? text.size() : stop + 1;
    blocks.push_back({std::string(text.substr(at + kBegin.size(), name_end - at - kBegin.size())), preamble, at, stop});
    preamble = at = stop;
  }
  return blocks;
}

Result<std::vector<SignerPattern>> ParseSignerLines(std::string_view preamble) {
  constexpr std::string_view kKey = "signer:";
  std::vector<SignerPattern> out;
  while (!preamble.empty()) {
    const size_t nl = preamble.find('\n');
    const std::string_view line = Trim(preamble.substr(0, nl));
    preamble = nl == std::string_view::npos ? std::string_view() : preamble.substr(nl + 1);
    // A misspelt key must not leave a CA unpinned: every line that looks like one is read.
    if (!IsSignerLine(line)) continue;
    if (!StartsWithNoCase(line, kKey))
      return Status::InvalidArgument("\"" + std::string(line) + "\" is not a \"Signer: <field>=<pattern>\" line");
    KIMI_ASSIGN_OR_RETURN(SignerPattern p, ParseSignerPattern(Trim(line.substr(kKey.size()))));
    out.push_back(std::move(p));
  }
  return out;
}

bool IsSignerLine(std::string_view line) { return StartsWithNoCase(Trim(line), "signer"); }

std::string SignerLines(const std::vector<SignerPattern>& signers) {
  std::string text;
  for (const SignerPattern& p : signers) text += "Signer: " + p.ToString() + "\n";
  return text;
}

Status TrustStore::AddPem(std::string_view pem_text, std::string_view source) {
  const std::string file(source);
  const std::vector<PemBlock> blocks = SplitPemBlocks(pem_text);
  // Parsed in full before anything is added: a file whose pins cannot be honoured adds nothing.
  std::vector<TrustedKey> keys;
  std::vector<TrustedCa> cas;
  const size_t tail = blocks.empty() ? 0 : blocks.back().end;
  KIMI_ASSIGN_OR_RETURN(std::vector<SignerPattern> trailing, ParseSignerLines(pem_text.substr(tail)));
  if (!trailing.empty())
    return Status::InvalidArgument(file + ": Signer: lines after the last block pin nothing; put them above the CA "
                                          "CERTIFICATE they restrict");
  for (const PemBlock& b : blocks) {
    Result<std::vector<SignerPattern>> signers = ParseSignerLines(pem_text.substr(b.preamble, b.begin - b.preamble));
    if (!signers.ok()) return Status::InvalidArgument(file + ": " + signers.status().message());
    if (!signers->empty() && b.name != "CERTIFICATE")
      return Status::InvalidArgument(file + ": Signer: lines stand above a " + b.name +
                                     " block; they pin only a CA CERTIFICATE");
    const DecodedBlock decoded = DecodeBlock(pem_text.substr(b.begin, b.end - b.begin));
    const unsigned char* p = reinterpret_cast<const unsigned char*>(decoded.der.data());
    const long len = static_cast<long>(decoded.der.size());
    if (b.name == "PUBLIC KEY") {
      EVP_PKEY* key = decoded.ok ? d2i_PUBKEY(nullptr, &p, len) : nullptr;
      if (key == nullptr) {
        log::Warn("trust store: unreadable public key skipped", {{"file", file}});
        continue;
      }
      SharedPkey shared(key, EVP_PKEY_free);
      if (DigestForKey(key) == nullptr) {
        log::Warn("trust store: key is not ECDSA P-256/P-384/P-521, skipped", {{"file", file}});
        continue;
      }
      keys.push_back({shared, KeyFingerprint(key), file});
    } else if (b.name == "CERTIFICATE") {
      X509* cert = decoded.ok ? d2i_X509(nullptr, &p, len) : nullptr;
      if (cert == nullptr) {
        log::Warn("trust store: unreadable certificate skipped", {{"file", file}});
        continue;
      }
      SharedX509 shared(cert, X509_free);
      cas.push_back({shared, NameText(X509_get_subject_name(cert)), file, std::move(signers).value()});
    } else {
      log::Warn("trust store: PEM block skipped", {{"file", file}, {"type", b.name}});
    }
  }
  ERR_clear_error();
  if (keys.empty() && cas.empty()) return Status::InvalidArgument(file + ": no usable public key or certificate");
  keys_.insert(keys_.end(), keys.begin(), keys.end());
  cas_.insert(cas_.end(), cas.begin(), cas.end());
  if (origin_.empty()) origin_ = file;
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
