#include "models/trust_directory.h"

#include <fcntl.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <filesystem>

#include "kimi/durable_file.h"
#include "kimi/hex.h"
#include "kimi/log.h"
#include "kimi/regular_file.h"
#include "models/oms_keys.h"

namespace kimi::models {
namespace {

namespace fs = std::filesystem;

// "ECDSA P-256" for the curves model signatures use.
std::string KeyDescription(EVP_PKEY* key) {
  char group[64] = {};
  size_t len = 0;
  if (EVP_PKEY_get_group_name(key, group, sizeof(group), &len) != 1) return "ECDSA";
  const std::string name(group, len);
  if (name == "prime256v1" || name == "P-256") return "ECDSA P-256";
  if (name == "secp384r1" || name == "P-384") return "ECDSA P-384";
  if (name == "secp521r1" || name == "P-521") return "ECDSA P-521";
  return "ECDSA " + name;
}

std::string CertificateFingerprint(X509* cert) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  X509_digest(cert, EVP_sha256(), digest, &len);
  return HexEncode(std::string_view(reinterpret_cast<char*>(digest), len));
}

std::vector<std::string> SignerTexts(const std::vector<SignerPattern>& signers) {
  std::vector<std::string> out;
  for (const SignerPattern& p : signers) out.push_back(p.ToString());
  return out;
}

std::vector<TrustEntry> EntriesOf(const TrustStore& store) {
  std::vector<TrustEntry> out;
  for (const TrustedKey& k : store.keys()) out.push_back({k.fingerprint, "key", KeyDescription(k.key.get()), k.source, {}});
  for (const TrustedCa& c : store.cas()) {
    out.push_back({CertificateFingerprint(c.cert.get()), "ca", c.subject, c.source, SignerTexts(c.signers)});
  }
  return out;
}

// Exactly one usable block (with the signer patterns `signers` adds to those written above
// it), as a one-entry store; InvalidArgument with the reason otherwise.
Result<TrustStore> ParseOneEntry(std::string_view pem, const std::vector<std::string>& signers) {
  const std::vector<PemBlock> blocks = SplitPemBlocks(pem);
  if (blocks.empty()) return Status::InvalidArgument("not PEM text: no -----BEGIN ...----- block was found");
  for (const PemBlock& b : blocks) {
    if (b.name.find("PRIVATE KEY") != std::string::npos) {
      return Status::InvalidArgument("this is a private key (" + b.name + "); the trust store takes the signer's PUBLIC KEY "
                                     "or a CA CERTIFICATE, and the private key was not stored");
    }
  }
  if (blocks.size() != 1) {
    return Status::InvalidArgument("one PUBLIC KEY or CERTIFICATE at a time; the text holds " +
                                   std::to_string(blocks.size()) + " PEM blocks");
  }
  const std::string& name = blocks[0].name;
  if (name != "PUBLIC KEY" && name != "CERTIFICATE") {
    return Status::InvalidArgument("a PEM " + name + " block is neither a PUBLIC KEY nor a CERTIFICATE");
  }
  // The pins: `signers`, and Signer: lines the text carries itself, checked here so that what
  // AddPem can still refuse is only an unreadable block.
  KIMI_ASSIGN_OR_RETURN(std::vector<SignerPattern> written, ParseSignerLines(pem.substr(0, blocks[0].begin)));
  KIMI_ASSIGN_OR_RETURN(std::vector<SignerPattern> after, ParseSignerLines(pem.substr(blocks[0].end)));
  if (!after.empty()) return Status::InvalidArgument("Signer: lines after the block pin nothing; put them above it");
  if ((!signers.empty() || !written.empty()) && name != "CERTIFICATE") {
    return Status::InvalidArgument("signers pin a CA CERTIFICATE; a PUBLIC KEY names its one signer already");
  }
  std::vector<SignerPattern> patterns;
  for (const std::string& text : signers) {
    KIMI_ASSIGN_OR_RETURN(SignerPattern p, ParseSignerPattern(text));
    patterns.push_back(std::move(p));
  }
  TrustStore parsed;
  if (!parsed.AddPem(SignerLines(patterns) + std::string(pem), "the request").ok()) {
    return Status::InvalidArgument(name == "PUBLIC KEY"
                                       ? "the public key cannot be read or is not ECDSA P-256, P-384 or P-521 (the keys "
                                         "model signatures use)"
                                       : "the certificate cannot be read");
  }
  return parsed;
}

// The canonical PEM text of the store's one entry, a CA's signer lines above its block.
std::string CanonicalPem(const TrustStore& one) {
  if (!one.keys().empty()) return PublicKeyPem(one.keys()[0].key.get());
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), one.cas()[0].cert.get());
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return SignerLines(one.cas()[0].signers) + std::string(data, static_cast<size_t>(len));
}

// Lower-case letters, digits, '.', '_' and '-' of `label`, at most 40 of them.
std::string FileLabel(std::string_view label) {
  std::string out;
  for (char c : label) {
    if (out.size() == 40) break;
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-') out += c;
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && (out.front() == '.' || out.front() == '-')) out.erase(out.begin());
  return out;
}

// `text` without its Signer: lines.
std::string WithoutSignerLines(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl == std::string_view::npos ? text.size() : nl + 1);
    if (!IsSignerLine(line)) out += line;
    text.remove_prefix(line.size());
  }
  return out;
}

// `text` without the PEM block whose entry has fingerprint `id` and without the Signer:
// lines above it, which would otherwise pin the block below; the other blocks and any other
// text are kept as they are. *others gets how many PEM blocks remain.
std::string WithoutEntry(std::string_view text, std::string_view id, size_t* others) {
  std::string out;
  size_t copied = 0;
  *others = 0;
  for (const PemBlock& b : SplitPemBlocks(text)) {
    TrustStore one;
    const bool match = one.AddPem(text.substr(b.begin, b.end - b.begin), "").ok() && EntriesOf(one).front().id == id;
    if (match) {
      out += text.substr(copied, b.preamble - copied);
      out += WithoutSignerLines(text.substr(b.preamble, b.begin - b.preamble));
      copied = b.end;
    } else {
      ++*others;
    }
  }
  out += text.substr(copied);
  return out;
}

}  // namespace

TrustDirectory::TrustDirectory(std::string path, AuditFn audit)
    : path_(std::move(path)), audit_(std::move(audit)), current_(std::make_shared<const TrustStore>()) {}

Status TrustDirectory::Load() {
  std::lock_guard<std::mutex> change(change_mu_);
  if (path_.empty()) return Status::OK();
  KIMI_ASSIGN_OR_RETURN(TrustStore loaded, TrustStore::LoadPath(path_));
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::make_shared<const TrustStore>(std::move(loaded));
  return Status::OK();
}

std::shared_ptr<const TrustStore> TrustDirectory::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

std::vector<TrustEntry> TrustDirectory::List() const { return EntriesOf(*Current()); }

bool TrustDirectory::editable() const {
  std::error_code ec;
  return !path_.empty() && fs::is_directory(path_, ec);
}

Status TrustDirectory::CheckEditable() const {
  if (editable()) return Status::OK();
  if (path_.empty()) return Status::FailedPrecondition("no trust store is configured (model.trust_store)");
  return Status::FailedPrecondition("the trust store is the single file " + path_ +
                                    "; set model.trust_store to a directory to add and remove keys here");
}

Status TrustDirectory::Audit(std::string_view action, std::string_view target, const Actor& actor,
                             const Status& outcome, std::string detail) const {
  Status s = audit_(ActRecord(action, target, actor, outcome, std::move(detail)).Build());
  if (!s.ok()) return Status::Unavailable("the audit record of " + std::string(action) + " failed: " + s.message());
  return Status::OK();
}

Result<TrustEntry> TrustDirectory::Add(std::string_view pem, std::string_view label, const Actor& actor,
                                       const std::vector<std::string>& signers) {
  std::lock_guard<std::mutex> change(change_mu_);
  auto refuse = [&](const Status& s, std::string_view target) -> Status {
    Status audited = Audit("trust.add", target, actor, s, "");
    return audited.ok() ? s : audited;
  };
  if (Status s = CheckEditable(); !s.ok()) return refuse(s, "");
  Result<TrustStore> parsed = ParseOneEntry(pem, signers);
  if (!parsed.ok()) return refuse(parsed.status(), "");
  TrustEntry entry = EntriesOf(*parsed).front();
  const std::string target = entry.kind + " sha256:" + entry.id;
  for (const TrustEntry& e : EntriesOf(*Current())) {
    if (e.id == entry.id) return refuse(Status::AlreadyExists(target + " is already trusted (" + e.file + ")"), target);
  }
  std::string name = FileLabel(label);
  entry.file = path_ + "/" + (name.empty() ? entry.kind : name) + "-" + entry.id.substr(0, 16) + ".pem";
  std::error_code ec;
  if (fs::exists(entry.file, ec)) return refuse(Status::AlreadyExists(entry.file + " exists already"), target);
  if (Status s = WriteFileAtomically(entry.file, CanonicalPem(*parsed), 0644); !s.ok()) return refuse(s, target);
  Result<TrustStore> reloaded = TrustStore::LoadPath(path_);
  std::string detail = entry.description + " in " + entry.file;
  for (size_t i = 0; i < entry.signers.size(); ++i) detail += (i == 0 ? "; signers " : ", ") + entry.signers[i];
  Status audited = reloaded.ok() ? Audit("trust.add", target, actor, Status::OK(), detail) : reloaded.status();
  if (!audited.ok()) {
    fs::remove(entry.file, ec);
    return audited;
  }
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::make_shared<const TrustStore>(std::move(reloaded).value());
  return entry;
}

Result<TrustEntry> TrustDirectory::Remove(std::string_view id, const Actor& actor) {
  std::lock_guard<std::mutex> change(change_mu_);
  auto refuse = [&](const Status& s, std::string_view target) -> Status {
    Status audited = Audit("trust.remove", target, actor, s, "");
    return audited.ok() ? s : audited;
  };
  if (Status s = CheckEditable(); !s.ok()) return refuse(s, id);
  const std::vector<TrustEntry> entries = EntriesOf(*Current());
  const TrustEntry* found = nullptr;
  std::vector<std::string> files;  // every file that holds the fingerprint
  for (const TrustEntry& e : entries) {
    if (e.id != id) continue;
    found = &e;
    if (std::find(files.begin(), files.end(), e.file) == files.end()) files.push_back(e.file);
  }
  if (found == nullptr) return refuse(Status::NotFound("no trusted key or CA with fingerprint " + std::string(id)), id);
  const std::string target = found->kind + " sha256:" + found->id;
  // Every file that holds it loses its block (one copy left would keep it trusted while the answer
  // says removed); each file's bytes are kept until the removal is recorded: a removal that
  // cannot be audited, or that fails part way, is undone.
  std::vector<std::pair<std::string, std::string>> kept;  // file, its bytes before
  auto undo = [&] {
    for (const auto& [file, bytes] : kept) {
      if (Status restored = WriteFileAtomically(file, bytes, 0644); !restored.ok()) {
        log::Error("trust store: a removal that was not completed could not be undone",
                   {{"file", file}, {"error", restored.message()}});
      }
    }
  };
  std::string detail = found->description + " from ";
  for (const std::string& file : files) {
    Result<std::string> bytes = ReadRegularFile(file, kMaxTrustFileBytes, FinalLink::kFollow);
    if (!bytes.ok()) {
      undo();
      return refuse(bytes.status(), target);
    }
    kept.emplace_back(file, std::move(*bytes));
    // A file of several entries loses only this one's block; a file left without one goes.
    size_t others = 0;
    const std::string rest = WithoutEntry(kept.back().second, found->id, &others);
    Status changed = Status::OK();
    if (others > 0) {
      changed = WriteFileAtomically(file, rest, 0644);
    } else if (std::error_code ec; !fs::remove(file, ec) || ec) {
      changed = Status::IOError("cannot remove " + file + (ec ? ": " + ec.message() : std::string()));
    }
    if (!changed.ok()) {
      undo();
      return refuse(changed, target);
    }
    detail += (file == files.front() ? "" : ", ") + file;
    if (others > 0) detail += " (which keeps its " + std::to_string(others) + " other entries)";
  }
  if (Status audited = Audit("trust.remove", target, actor, Status::OK(), detail); !audited.ok()) {
    undo();
    return audited;
  }
  TrustEntry removed = *found;
  KIMI_ASSIGN_OR_RETURN(TrustStore reloaded, TrustStore::LoadPath(path_));
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::make_shared<const TrustStore>(std::move(reloaded));
  return removed;
}

}  // namespace kimi::models
