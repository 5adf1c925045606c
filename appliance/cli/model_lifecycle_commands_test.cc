#include "cli/model_lifecycle_commands.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "audit/audit_sink.h"
#include "audit/audit_store.h"
#include "cli/model_command_args.h"
#include "models/model_store_test_support.h"
#include "models/oms_keys.h"
#include "models/oms_signer.h"
#include "models/oms_test_support.h"

namespace kimi::cli {
namespace {

namespace fs = std::filesystem;

struct CommandRun {
  int code;
  std::string out;
  std::string err;
};

using Command = int (*)(const std::vector<std::string>&, std::ostream&, std::ostream&);

class ModelLifecycleCommandsTest : public ::testing::Test {
 protected:
  CommandRun Run(Command fn, std::vector<std::string> args, bool with_trust = true) {
    args.insert(args.begin(), {"--data-dir", fx_.data_dir()});
    if (with_trust) args.insert(args.begin(), {"--trust-dir", fx_.trust_dir()});
    std::ostringstream out, err;
    int code = fn(args, out, err);
    return {code, out.str(), err.str()};
  }
  std::string DigestLine(const std::string& out) {
    auto at = out.find("digest: ");
    return at == std::string::npos ? "" : out.substr(at + 8, 64);
  }
  std::vector<std::string> AuditActions() {
    auto store = audit::AuditStore::Open(fx_.data_dir() + "/" + std::string(audit::kAuditDbFile), {});
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    std::vector<std::string> out;
    if (!store.ok()) return out;
    Status s = (*store)->ScanRecords({}, [&](audit::StoredRecord& r) {
      if (r.record.action.rfind("model.", 0) == 0) {
        out.push_back(r.record.action + ":" + r.record.outcome + ":" + r.record.model_digest.substr(0, 8) + ":" +
                      r.record.source);
      }
      return Status::OK();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  models::testing::StoreFixture fx_;
};

TEST_F(ModelLifecycleCommandsTest, ImportListActivateRollbackRemoveVerify) {
  std::string a_src = fx_.MakeSignedModel("medium/a", "alpha");
  std::string b_src = fx_.MakeSignedModel("medium/b", "bravo");

  CommandRun imported = Run(RunModelImport, {"--id", "k3", a_src});
  ASSERT_EQ(imported.code, 0) << imported.err;
  EXPECT_NE(imported.out.find("imported k3 version 1 (verified)"), std::string::npos) << imported.out;
  EXPECT_NE(imported.err.find("copying: "), std::string::npos) << imported.err;
  EXPECT_NE(imported.err.find("verifying the copy: "), std::string::npos) << imported.err;
  std::string a = DigestLine(imported.out);
  imported = Run(RunModelImport, {"--id", "k3", "--quiet", b_src});
  ASSERT_EQ(imported.code, 0) << imported.err;
  EXPECT_TRUE(imported.err.empty()) << imported.err;
  std::string b = DigestLine(imported.out);

  CommandRun activated = Run(RunModelActivate, {"k3", b.substr(0, 10)});
  ASSERT_EQ(activated.code, 0) << activated.err;
  EXPECT_NE(activated.out.find("version 2 (active)"), std::string::npos) << activated.out;

  CommandRun downgrade = Run(RunModelActivate, {"k3", a});
  EXPECT_EQ(downgrade.code, 1);
  EXPECT_NE(downgrade.err.find("error: activate: "), std::string::npos);
  EXPECT_NE(downgrade.err.find("downgrade"), std::string::npos) << downgrade.err;
  EXPECT_EQ(Run(RunModelActivate, {"--force", "k3", a}).code, 0);
  ASSERT_EQ(Run(RunModelActivate, {"k3", b}).code, 0);

  CommandRun list = Run(RunModelList, {}, false);
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("retired"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find(b.substr(0, 12)), std::string::npos) << list.out;

  CommandRun rolled = Run(RunModelRollback, {"k3"});
  ASSERT_EQ(rolled.code, 0) << rolled.err;
  EXPECT_NE(rolled.out.find("rolled back to k3 version 1 (active)"), std::string::npos) << rolled.out;

  CommandRun busy = Run(RunModelRemove, {"k3", a}, false);
  EXPECT_EQ(busy.code, 1);
  EXPECT_NE(busy.err.find("is active"), std::string::npos) << busy.err;
  CommandRun removed = Run(RunModelRemove, {"k3", b}, false);
  EXPECT_EQ(removed.code, 0) << removed.err;

  CommandRun json = Run(RunModelList, {"--json", "--all"}, false);
  ASSERT_EQ(json.code, 0);
  auto parsed = nlohmann::json::parse(json.out);
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0]["state"], "active");
  EXPECT_EQ(parsed[1]["state"], "removed");

  CommandRun verified = Run(RunModelVerifyInstalled, {"k3"});
  EXPECT_EQ(verified.code, 0) << verified.err;
  EXPECT_NE(verified.out.find("OK k3 version 1"), std::string::npos);
  models::testing::FlipByte(fx_.data_dir() + "/models/k3/" + a + "/model-00001.safetensors", 7);
  CommandRun tampered = Run(RunModelVerifyInstalled, {"k3", a});
  EXPECT_EQ(tampered.code, 1);
  EXPECT_NE(tampered.err.find("FAILED k3"), std::string::npos);
  EXPECT_NE(tampered.err.find("model-00001.safetensors"), std::string::npos) << tampered.err;

  std::vector<std::string> expected = {
      "model.import:ok:" + a.substr(0, 8) + ":kimictl",    "model.import:ok:" + b.substr(0, 8) + ":kimictl",
      "model.activate:ok:" + b.substr(0, 8) + ":kimictl",  "model.activate:refused:" + a.substr(0, 8) + ":kimictl",
      "model.activate:ok:" + a.substr(0, 8) + ":kimictl",  "model.activate:ok:" + b.substr(0, 8) + ":kimictl",
      "model.rollback:ok:" + a.substr(0, 8) + ":kimictl",  "model.remove:refused:" + a.substr(0, 8) + ":kimictl",
      "model.remove:ok:" + b.substr(0, 8) + ":kimictl",    "model.verify:ok:" + a.substr(0, 8) + ":kimictl",
      "model.verify:refused:" + a.substr(0, 8) + ":kimictl",
  };
  EXPECT_EQ(AuditActions(), expected);
}

TEST_F(ModelLifecycleCommandsTest, ReadableErrorsAndExitCodes) {
  std::string src = fx_.MakeSignedModel("medium/a", "alpha");
  EXPECT_EQ(Run(RunModelImport, {src}).code, 2);  // --id is required
  EXPECT_EQ(Run(RunModelActivate, {"k3"}).code, 2);
  EXPECT_EQ(Run(RunModelList, {"--bogus"}, false).code, 2);

  CommandRun untrusted = Run(RunModelImport, {"--id", "k3", "--quiet", src}, false);  // default trust dir
  EXPECT_EQ(untrusted.code, 1);
  EXPECT_EQ(untrusted.err.rfind("error: import", 0), 0u) << untrusted.err;

  CommandRun missing = Run(RunModelImport, {"--id", "k3", fx_.root() + "/nowhere"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("no model at"), std::string::npos) << missing.err;

  CommandRun short_digest = Run(RunModelActivate, {"k3", "abc"});
  EXPECT_EQ(short_digest.code, 1);
  EXPECT_NE(short_digest.err.find("at least 8"), std::string::npos);

  CommandRun nothing = Run(RunModelRollback, {"k3"});
  EXPECT_EQ(nothing.code, 1);
  EXPECT_NE(nothing.err.find("no active version"), std::string::npos) << nothing.err;

}

// What a medium or a signature names reaches the operator's terminal as text: the signer's
// description names the trust file it came from (the installer copies model-trust/ from the
// medium, names and all), and a failed re-verification names the signed file that changed.
TEST_F(ModelLifecycleCommandsTest, ASignerOrAFileNamedWithControlsIsShownAsText) {
  const std::string hostile = "x\x1b[31m\n\xe2\x80\xae";  // ESC, a line break, a right-to-left override
  fs::rename(fx_.trust_dir() + "/signer.pem", fx_.trust_dir() + "/signer-" + hostile + ".pem");
  std::string src = fx_.MakeSignedModel("medium/a", "alpha");
  {
    std::ofstream(src + "/notes-" + hostile + ".txt") << "signed notes";
    std::ifstream key_file(fx_.private_key_path());
    std::stringstream pem;
    pem << key_file.rdbuf();
    models::SignRequest request;
    request.model_path = src;
    request.private_key = *models::LoadPrivateKeyPem(pem.str());
    ASSERT_TRUE(models::SignModel(request).ok());
  }
  CommandRun imported = Run(RunModelImport, {"--id", "k3", "--quiet", src});
  ASSERT_EQ(imported.code, 0) << imported.err;
  const std::string digest = DigestLine(imported.out);
  const std::string shown = "x\\u001b[31m\\u000a\\u202e";
  EXPECT_NE(imported.out.find("signer-" + shown + ".pem"), std::string::npos) << imported.out;
  models::testing::FlipByte(fx_.data_dir() + "/models/k3/" + digest + "/notes-" + hostile + ".txt", 2);
  EXPECT_EQ(Run(RunModelVerifyInstalled, {"k3", digest}).code, 1);
  CommandRun list = Run(RunModelList, {}, false);
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("notes-" + shown + ".txt"), std::string::npos) << list.out;
  for (const CommandRun& run : {imported, list}) {
    EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find("\xe2\x80\xae"), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find("m\n"), std::string::npos) << run.out;
  }
}

// While the daemon owns the store (here: this test holds it, through its own open of the
// lock file), acts that change it refuse with exit 3 and the admin API call that does the
// same; list and verify-installed still work, and the check records nothing.
TEST_F(ModelLifecycleCommandsTest, BesideTheRunningDaemonReadsWorkAndActsPointToTheAdminApi) {
  std::string src = fx_.MakeSignedModel("medium/a", "alpha");
  CommandRun imported = Run(RunModelImport, {"--id", "k3", "--quiet", src});
  ASSERT_EQ(imported.code, 0) << imported.err;
  std::string digest = DigestLine(imported.out);
  const std::vector<std::string> audited = AuditActions();

  auto daemon = fx_.OpenStore();
  ASSERT_TRUE(daemon.ok());
  struct Act {
    Command fn;
    std::vector<std::string> args;
    bool trust;
    std::string admin_call;
  };
  for (const Act& act : std::vector<Act>{
           {RunModelImport, {"--id", "k3", "--quiet", src}, true, "POST /admin/v1/models/import"},
           {RunModelActivate, {"k3", digest}, true, "POST /admin/v1/models/activate"},
           {RunModelRollback, {"k3"}, true, "POST /admin/v1/models/rollback"},
           {RunModelRemove, {"k3", digest}, false, "DELETE /admin/v1/models?model=k3&digest=" + digest}}) {
    CommandRun refused = Run(act.fn, act.args, act.trust);
    EXPECT_EQ(refused.code, kExitStoreInUse) << refused.err;
    EXPECT_NE(refused.err.find("owned by another process (pid " + std::to_string(::getpid())), std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find(act.admin_call), std::string::npos) << refused.err;
  }

  CommandRun list = Run(RunModelList, {}, false);
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find(digest.substr(0, 12)), std::string::npos) << list.out;

  CommandRun checked = Run(RunModelVerifyInstalled, {"k3"});
  EXPECT_EQ(checked.code, 0) << checked.err;
  EXPECT_NE(checked.out.find("OK k3 version 1"), std::string::npos) << checked.out;
  EXPECT_NE(checked.err.find("not recorded"), std::string::npos) << checked.err;
  models::testing::FlipByte(fx_.data_dir() + "/models/k3/" + digest + "/model-00001.safetensors", 7);
  CommandRun tampered = Run(RunModelVerifyInstalled, {"k3", digest});
  EXPECT_EQ(tampered.code, 1);
  EXPECT_NE(tampered.err.find("FAILED k3"), std::string::npos) << tampered.err;
  EXPECT_NE(tampered.err.find("model-00001.safetensors"), std::string::npos) << tampered.err;

  daemon->reset();
  EXPECT_EQ(AuditActions(), audited);  // nothing was recorded beside the daemon
  CommandRun list_json = Run(RunModelList, {"--json"}, false);
  ASSERT_EQ(list_json.code, 0);
  EXPECT_EQ(nlohmann::json::parse(list_json.out)[0]["state"], "verified");  // not marked failed
}

}  // namespace
}  // namespace kimi::cli
