// TrustDirectory: the trust store as the daemon uses it and the admin API edits it
// (GET/POST/DELETE /admin/v1/trust, admin/trust_routes.h; docs/model-lifecycle.md "Trust store").
//
// It holds the TrustStore loaded from model.trust_store (a directory of *.pem files, or one
// PEM file) and hands every verification the store as it is now (Current()). Add() writes one
// PUBLIC KEY (ECDSA P-256/P-384/P-521) or CA CERTIFICATE (with the signers it is pinned to)
// as a new file of the directory,
// Remove() takes one entry's PEM block out of its file (deleting a file left without any); each reloads the directory, so the next
// verification uses the change, and each is audited (trust.add, trust.remove, with the key's
// or certificate's fingerprint; refusals too). An entry's id is its fingerprint: the hex
// SHA-256 of the PEM public key (the OMS key hint, as the model's signer names it) or of the
// certificate's DER. A single-file trust store is listed but cannot be changed here.
// Public header of models/: other folders include it.
// Owns: the loaded store and the files it writes. Borrows the audit function.
// Thread safety: every method may be called from any thread; changes are serialised, and a
// verification keeps the store it took for as long as it runs.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "audit/record.h"
#include "kimi/status.h"
#include "models/model_store.h"
#include "models/oms_trust.h"

namespace kimi::models {

struct TrustEntry {
  std::string id;           // the fingerprint (see above)
  std::string kind;         // "key" or "ca"
  std::string description;  // "ECDSA P-256", or the CA certificate's subject
  std::string file;         // the PEM file it is in
  std::vector<std::string> signers;  // a CA's pinned signer patterns ("email=a@b"); empty: any
};

class TrustDirectory {
 public:
  // `path`: model.trust_store (may be empty: nothing is trusted). `audit` must outlive it and
  // fail when the record could not be kept (the change is then undone).
  TrustDirectory(std::string path, AuditFn audit);
  TrustDirectory(const TrustDirectory&) = delete;
  TrustDirectory& operator=(const TrustDirectory&) = delete;

  // (Re)reads the path; errors as TrustStore::LoadPath, and the previous store stays.
  Status Load();
  std::shared_ptr<const TrustStore> Current() const;
  std::vector<TrustEntry> List() const;
  // Whether Add/Remove can work: the path is a directory.
  bool editable() const;
  const std::string& path() const { return path_; }

  // InvalidArgument with the reason for anything but exactly one usable PUBLIC KEY or
  // CERTIFICATE block (a private key is refused and never written), or for a signer pattern
  // that does not parse or is given with a key; AlreadyExists when that fingerprint is
  // trusted already; FailedPrecondition when the store is not a directory. `signers`
  // (oms_identity.h patterns) pin a CA: written as Signer: lines above its block.
  Result<TrustEntry> Add(std::string_view pem, std::string_view label, const Actor& actor,
                         const std::vector<std::string>& signers = {});
  // NotFound for an unknown id. The entry's block leaves its file; the file's other entries
  // and text stay, and a file left with no PEM block is deleted.
  Result<TrustEntry> Remove(std::string_view id, const Actor& actor);

 private:
  Status Audit(std::string_view action, std::string_view target, const Actor& actor, const Status& outcome,
               std::string detail) const;
  Status CheckEditable() const;

  const std::string path_;
  const AuditFn audit_;
  std::mutex change_mu_;  // serialises Add, Remove and Load
  mutable std::mutex mu_;
  std::shared_ptr<const TrustStore> current_;  // guarded by mu_; never null
};

}  // namespace kimi::models
