// Test fixture pieces shared by the model store, admin API and kimictl lifecycle tests: a
// data directory with a migrated database, a fresh signing key that the trust store trusts,
// signed model directories, and an audit function that keeps its records. Test-only.
// Public header of models/: the tests of other folders use it too.
// Thread safety: the audit function may be called from any thread; the rest is for the
// test's thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "audit/record.h"
#include "models/model_store.h"
#include "models/oms_openssl.h"
#include "models/oms_test_support.h"
#include "models/oms_trust.h"
#include "store/store.h"

namespace kimi::models::testing {

class StoreFixture {
 public:
  StoreFixture();
  ~StoreFixture();

  // A model directory <root>/<name> with a few files derived from `seed`, signed with the key.
  std::string MakeSignedModel(const std::string& name, const std::string& seed);
  // The manifest `dir` verifies to against trust() (null, with a test failure, when it does not).
  std::shared_ptr<const VerifiedManifest> Verified(const std::string& dir);
  // Opens a ModelStore on the data dir; `listener` may be null; `adjust` may change the
  // options first (a reader, a small free-space figure).
  Result<std::unique_ptr<ModelStore>> OpenStore(ActivationListener* listener = nullptr,
                                                const std::function<void(ModelStoreOptions&)>& adjust = {});

  std::vector<audit::AuditRecord> AuditRecords();
  // The actions of the records, "model.import:ok", in order.
  std::vector<std::string> AuditTrail();
  void FailAudits(bool fail);

  const std::string& root() const { return dir_.path(); }
  std::string data_dir() const { return dir_ / "data"; }
  std::string public_key_path() const { return dir_ / "signer.pub.pem"; }
  std::string private_key_path() const { return dir_ / "signer.pem"; }
  std::string trust_dir() const { return dir_ / "trust"; }
  TrustStore& trust() { return trust_; }
  store::Store& db() { return *db_; }
  AuditFn audit_fn();

 private:
  TempDir dir_;
  SharedPkey key_;
  TrustStore trust_;
  std::unique_ptr<store::Store> db_;
  std::mutex mu_;
  std::vector<audit::AuditRecord> records_;  // guarded by mu_
  bool fail_audits_ = false;                 // guarded by mu_
};

}  // namespace kimi::models::testing
