#include "models/model_store_test_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include "models/model_migrations.h"
#include "models/oms_keys.h"
#include "models/oms_signer.h"

namespace kimi::models::testing {
namespace {

template <typename T>
T Must(Result<T> r, const char* what) {
  if (!r.ok()) throw std::runtime_error(std::string(what) + ": " + r.status().ToString());
  return std::move(r).value();
}

void Must(const Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string(what) + ": " + s.ToString());
}

}  // namespace

StoreFixture::StoreFixture() {
  key_ = Must(GenerateP256Key(), "keygen");
  std::filesystem::create_directories(trust_dir());
  WriteFile(public_key_path(), PublicKeyPem(key_.get()));
  WriteFile(private_key_path(), Must(PrivateKeyPem(key_.get()), "private pem"));
  WriteFile(trust_dir() + "/signer.pem", PublicKeyPem(key_.get()));
  Must(trust_.AddPem(PublicKeyPem(key_.get()), "test signer"), "trust");
  db_ = Must(store::Store::Open(data_dir()), "open database");
  Must(db_->Migrate(kModelMigrations), "migrate");
}

StoreFixture::~StoreFixture() = default;

std::string StoreFixture::MakeSignedModel(const std::string& name, const std::string& seed) {
  std::string model = dir_ / name;
  std::filesystem::create_directories(model + "/sub");
  WriteFile(model + "/config.json", "{\"seed\":\"" + seed + "\"}");
  std::string weights;
  for (int i = 0; i < 3000; ++i) weights += seed + std::to_string(i);
  WriteFile(model + "/model-00001.safetensors", weights);
  WriteFile(model + "/sub/tokenizer.model", "tokens " + seed);
  std::filesystem::create_directories(model + "/.git");
  WriteFile(model + "/.git/HEAD", "ref: main");  // ignored by the signature, not imported
  SignRequest request;
  request.model_path = model;
  request.private_key = key_;
  Must(SignModel(request), "sign");
  return model;
}

Result<std::unique_ptr<ModelStore>> StoreFixture::OpenStore(ActivationListener* listener,
                                                             const std::function<void(ModelStoreOptions&)>& adjust) {
  ModelStoreOptions options;
  options.data_dir = data_dir();
  options.db = db_.get();
  options.trust = &trust_;
  options.audit = audit_fn();
  options.audit_in_transaction = [record = audit_fn()](sqlite3*, audit::AuditRecord r) { return record(std::move(r)); };
  options.listener = listener;
  options.verify_threads = 2;
  if (adjust) adjust(options);
  return ModelStore::Open(std::move(options));
}

std::shared_ptr<const VerifiedManifest> StoreFixture::Verified(const std::string& dir) {
  VerifyRequest request;
  request.model_path = dir;
  Result<VerifiedManifest> manifest = ModelVerifier::Verify(request, trust_);
  EXPECT_TRUE(manifest.ok()) << manifest.status().ToString();
  if (!manifest.ok()) return nullptr;
  return std::make_shared<const VerifiedManifest>(std::move(manifest).value());
}

AuditFn StoreFixture::audit_fn() {
  return [this](audit::AuditRecord r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_audits_) return Status::Unavailable("audit store failing (test)");
    records_.push_back(std::move(r));
    return Status::OK();
  };
}

std::vector<audit::AuditRecord> StoreFixture::AuditRecords() {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

std::vector<std::string> StoreFixture::AuditTrail() {
  std::vector<std::string> out;
  for (const auto& r : AuditRecords()) out.push_back(r.action + ":" + r.outcome);
  return out;
}

void StoreFixture::FailAudits(bool fail) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_audits_ = fail;
}

}  // namespace kimi::models::testing
