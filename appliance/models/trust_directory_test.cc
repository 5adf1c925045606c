#include "models/trust_directory.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/model_store_test_support.h"
#include "models/oms_keys.h"
#include "models/oms_test_support.h"

namespace kimi::models {
namespace {

using testing::StoreFixture;

std::string NewPublicKeyPem() {
  Result<SharedPkey> key = GenerateP256Key();
  EXPECT_TRUE(key.ok());
  return PublicKeyPem(key->get());
}

class TrustDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(trust_.Load().ok()); }

  StoreFixture fx_;
  TrustDirectory trust_{fx_.trust_dir(), fx_.audit_fn()};
  Actor actor_{"admin", "admin", "10.0.0.5:4711", "req-1"};
};

TEST_F(TrustDirectoryTest, ListsTheKeysOfTheDirectory) {
  std::vector<TrustEntry> entries = trust_.List();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].kind, "key");
  EXPECT_EQ(entries[0].description, "ECDSA P-256");
  EXPECT_EQ(entries[0].id.size(), 64u);
  EXPECT_EQ(entries[0].file, fx_.trust_dir() + "/signer.pem");
  EXPECT_TRUE(trust_.editable());
}

TEST_F(TrustDirectoryTest, AddWritesOneFileReloadsAndIsAudited) {
  Result<TrustEntry> added = trust_.Add(NewPublicKeyPem(), "Vendor Key 2", actor_);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(added->file, fx_.trust_dir() + "/vendor-key-2-" + added->id.substr(0, 16) + ".pem");
  EXPECT_TRUE(std::filesystem::exists(added->file));
  EXPECT_EQ(trust_.Current()->keys().size(), 2u);
  EXPECT_EQ(fx_.AuditTrail(), (std::vector<std::string>{"trust.add:ok"}));
  const audit::AuditRecord record = fx_.AuditRecords().back();
  EXPECT_EQ(record.target, "key sha256:" + added->id);
  EXPECT_EQ(record.actor, "admin");
  EXPECT_EQ(record.request_id, "req-1");

  // A second load of the directory finds the same two entries.
  TrustDirectory again(fx_.trust_dir(), fx_.audit_fn());
  ASSERT_TRUE(again.Load().ok());
  EXPECT_EQ(again.List().size(), 2u);
}

TEST_F(TrustDirectoryTest, RefusesDuplicatesPrivateKeysAndGarbageWithTheReason) {
  const std::string pem = NewPublicKeyPem();
  ASSERT_TRUE(trust_.Add(pem, "", actor_).ok());
  Result<TrustEntry> twice = trust_.Add(pem, "other-name", actor_);
  EXPECT_EQ(twice.status().code(), Status::Code::kAlreadyExists);
  EXPECT_NE(twice.status().message().find("already trusted"), std::string::npos);

  Result<SharedPkey> key = GenerateP256Key();
  ASSERT_TRUE(key.ok());
  Result<std::string> private_pem = PrivateKeyPem(key->get());
  ASSERT_TRUE(private_pem.ok());
  Result<TrustEntry> secret = trust_.Add(*private_pem, "", actor_);
  EXPECT_EQ(secret.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(secret.status().message().find("private key"), std::string::npos) << secret.status().message();

  Result<TrustEntry> garbage = trust_.Add("hello", "", actor_);
  EXPECT_EQ(garbage.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(garbage.status().message().find("not PEM"), std::string::npos);

  Result<TrustEntry> two = trust_.Add(NewPublicKeyPem() + NewPublicKeyPem(), "", actor_);
  EXPECT_EQ(two.status().code(), Status::Code::kInvalidArgument);

  size_t files = 0;
  for ([[maybe_unused]] const auto& f : std::filesystem::directory_iterator(fx_.trust_dir())) ++files;
  EXPECT_EQ(files, 2u);  // the fixture's key and the one added
  EXPECT_EQ(fx_.AuditTrail(), (std::vector<std::string>{"trust.add:ok", "trust.add:refused", "trust.add:refused",
                                                        "trust.add:refused", "trust.add:refused"}));
}

TEST_F(TrustDirectoryTest, RemoveDeletesTheFileAndIsAudited) {
  Result<TrustEntry> added = trust_.Add(NewPublicKeyPem(), "", actor_);
  ASSERT_TRUE(added.ok());
  Result<TrustEntry> removed = trust_.Remove(added->id, actor_);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(added->file));
  EXPECT_EQ(trust_.List().size(), 1u);
  EXPECT_EQ(trust_.Remove(added->id, actor_).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(fx_.AuditTrail(), (std::vector<std::string>{"trust.add:ok", "trust.remove:ok", "trust.remove:refused"}));
  EXPECT_EQ(fx_.AuditRecords()[1].target, "key sha256:" + added->id);
}

// A key held in two files stays trusted while either holds it: a removal takes it out of both.
TEST_F(TrustDirectoryTest, RemoveTakesTheKeyOutOfEveryFileThatHoldsIt) {
  const std::string pem = NewPublicKeyPem(), other = NewPublicKeyPem();
  for (const char* name : {"/a-signer.pem", "/b-signer.pem"}) {
    std::ofstream out(fx_.trust_dir() + name);
    out << pem << (std::string(name) == "/b-signer.pem" ? other : "");
  }
  ASSERT_TRUE(trust_.Load().ok());
  TrustStore only;
  ASSERT_TRUE(only.AddPem(pem, "test").ok());
  const std::string id = only.keys()[0].fingerprint;
  Result<TrustEntry> removed = trust_.Remove(id, actor_);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  for (const TrustEntry& e : trust_.List()) EXPECT_NE(e.id, id) << e.file;
  EXPECT_FALSE(std::filesystem::exists(fx_.trust_dir() + "/a-signer.pem"));
  EXPECT_TRUE(std::filesystem::exists(fx_.trust_dir() + "/b-signer.pem"));  // keeps the other key
  EXPECT_EQ(trust_.List().size(), 2u);  // the fixture's signer and the other key
  const std::string detail = fx_.AuditRecords().back().detail;
  EXPECT_NE(detail.find("a-signer.pem"), std::string::npos) << detail;
  EXPECT_NE(detail.find("b-signer.pem"), std::string::npos) << detail;
}

TEST_F(TrustDirectoryTest, RemovingOneEntryOfASharedFileKeepsTheOthersAndTheTextAroundThem) {
  const std::string first = NewPublicKeyPem(), second = NewPublicKeyPem(), third = NewPublicKeyPem();
  const std::string shared = fx_.trust_dir() + "/team-keys.pem";
  {
    std::ofstream out(shared);
    out << "# release signers\n" << first << "# rotated out in May\n" << second << third;
  }
  ASSERT_TRUE(trust_.Load().ok());
  ASSERT_EQ(trust_.List().size(), 4u);  // the fixture's signer and the three
  TrustStore only_second;
  ASSERT_TRUE(only_second.AddPem(second, "test").ok());
  const std::string middle_id = only_second.keys()[0].fingerprint;

  Result<TrustEntry> removed = trust_.Remove(middle_id, actor_);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(removed->file, shared);
  std::ifstream in(shared);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "# release signers\n" + first + "# rotated out in May\n" + third);
  EXPECT_EQ(trust_.List().size(), 3u);
  EXPECT_EQ(fx_.AuditTrail(), (std::vector<std::string>{"trust.remove:ok"}));
  EXPECT_NE(fx_.AuditRecords()[0].detail.find("keeps its 2 other entries"), std::string::npos);

  // Its last entries go one by one; the file goes with the last.
  for (const TrustEntry& e : trust_.List()) {
    if (e.file == shared) {
      ASSERT_TRUE(trust_.Remove(e.id, actor_).ok());
    }
  }
  EXPECT_FALSE(std::filesystem::exists(shared));
  EXPECT_EQ(trust_.List().size(), 1u);
}

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(TrustDirectoryTest, AddPinsACaToItsSignersAndRefusesPinsItCannotKeep) {
  const testing::TestCertificate ca = testing::MakeCertificate({.subject = "CN=Vendor CA", .ca = true}, nullptr);
  Result<TrustEntry> added = trust_.Add(ca.Pem(), "vendor", actor_, {"email=release@vendor.example", "subject=CN=ci"});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(added->signers, (std::vector<std::string>{"email=release@vendor.example", "subject=CN=ci"}));
  EXPECT_EQ(FileText(added->file), "Signer: email=release@vendor.example\nSigner: subject=CN=ci\n" + ca.Pem());
  ASSERT_EQ(trust_.Current()->cas().size(), 1u);
  EXPECT_EQ(trust_.Current()->cas()[0].signers.size(), 2u);
  EXPECT_NE(fx_.AuditRecords().back().detail.find("signers email=release@vendor.example, subject=CN=ci"), std::string::npos)
      << fx_.AuditRecords().back().detail;

  Result<TrustEntry> key = trust_.Add(NewPublicKeyPem(), "", actor_, {"email=a@b"});
  EXPECT_EQ(key.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(key.status().message().find("signers pin a CA CERTIFICATE"), std::string::npos) << key.status().message();
  const testing::TestCertificate other = testing::MakeCertificate({.subject = "CN=Other CA", .ca = true}, nullptr);
  Result<TrustEntry> bad = trust_.Add(other.Pem(), "", actor_, {"mail=a@b"});
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("unknown field \"mail\""), std::string::npos) << bad.status().message();
  Result<TrustEntry> written = trust_.Add("Signer: email=*@vendor.example\n" + other.Pem(), "", actor_);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(written->signers, std::vector<std::string>{"email=*@vendor.example"});
  Result<TrustEntry> misspelt = trust_.Add("Signers: email=a@b\n" + NewPublicKeyPem(), "", actor_);
  EXPECT_NE(misspelt.status().message().find("is not a \"Signer: <field>=<pattern>\" line"), std::string::npos)
      << misspelt.status().message();
  EXPECT_EQ(trust_.List().size(), 3u);
}

TEST_F(TrustDirectoryTest, RemovingAPinnedCaTakesItsSignerLinesSoTheNextCaIsNotPinned) {
  const testing::TestCertificate pinned = testing::MakeCertificate({.subject = "CN=Pinned CA", .ca = true}, nullptr);
  const testing::TestCertificate open = testing::MakeCertificate({.subject = "CN=Open CA", .ca = true}, nullptr);
  const std::string shared = fx_.trust_dir() + "/cas.pem";
  {
    std::ofstream out(shared);
    out << "# vendor roots\nSigner: email=release@vendor.example\n" << pinned.Pem() << open.Pem();
  }
  ASSERT_TRUE(trust_.Load().ok());
  std::string pinned_id;
  for (const TrustEntry& e : trust_.List()) {
    if (e.description == "CN=Pinned CA") pinned_id = e.id;
  }
  ASSERT_FALSE(pinned_id.empty());
  ASSERT_TRUE(trust_.Remove(pinned_id, actor_).ok());
  EXPECT_EQ(FileText(shared), "# vendor roots\n" + open.Pem());
  ASSERT_EQ(trust_.Current()->cas().size(), 1u);
  EXPECT_TRUE(trust_.Current()->cas()[0].signers.empty());
}

TEST_F(TrustDirectoryTest, AChangeThatCannotBeAuditedIsUndone) {
  const std::string signer = trust_.List()[0].id;
  fx_.FailAudits(true);
  EXPECT_EQ(trust_.Add(NewPublicKeyPem(), "", actor_).status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(trust_.Remove(signer, actor_).status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(trust_.List().size(), 1u);
  size_t files = 0;
  for ([[maybe_unused]] const auto& f : std::filesystem::directory_iterator(fx_.trust_dir())) ++files;
  EXPECT_EQ(files, 1u);
  TrustDirectory reread(fx_.trust_dir(), fx_.audit_fn());
  ASSERT_TRUE(reread.Load().ok());
  EXPECT_EQ(reread.List().size(), 1u);
}

TEST_F(TrustDirectoryTest, ASingleFileStoreIsListedButNotChanged) {
  TrustDirectory file(fx_.public_key_path(), fx_.audit_fn());
  ASSERT_TRUE(file.Load().ok());
  EXPECT_EQ(file.List().size(), 1u);
  EXPECT_FALSE(file.editable());
  EXPECT_EQ(file.Add(NewPublicKeyPem(), "", actor_).status().code(), Status::Code::kFailedPrecondition);
}

// The model store verifies with the trust store as it is at each import.
TEST_F(TrustDirectoryTest, TheModelStoreVerifiesWithTheCurrentStore) {
  ModelStoreOptions options;
  options.data_dir = fx_.data_dir();
  options.db = &fx_.db();
  options.current_trust = [this] { return trust_.Current(); };
  options.audit = fx_.audit_fn();
  options.audit_in_transaction = [record = fx_.audit_fn()](sqlite3*, audit::AuditRecord r) { return record(std::move(r)); };
  options.verify_threads = 2;
  Result<std::unique_ptr<ModelStore>> store = ModelStore::Open(std::move(options));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::string model = fx_.MakeSignedModel("medium/a", "alpha");
  const std::string signer = trust_.List()[0].id;
  std::string signer_pem;
  {
    std::ifstream in(trust_.List()[0].file);
    signer_pem.assign(std::istreambuf_iterator<char>(in), {});
  }

  ASSERT_TRUE(trust_.Remove(signer, actor_).ok());
  Result<ModelVersion> refused = (*store)->Import(ImportRequest{"k3", model}, Actor{});
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("trust store"), std::string::npos) << refused.status().message();

  ASSERT_TRUE(trust_.Add(signer_pem, "signer", actor_).ok());
  Result<ModelVersion> imported = (*store)->Import(ImportRequest{"k3", model}, Actor{});
  EXPECT_TRUE(imported.ok()) << imported.status().ToString();
}



}  // namespace
}  // namespace kimi::models
