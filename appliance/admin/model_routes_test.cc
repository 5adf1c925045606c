#include "models/model_admin.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <filesystem>
#include <functional>

#include "admin/model_routes.h"
#include "models/model_store_test_support.h"

namespace kimi::models {
namespace {

using testing::StoreFixture;

class ModelAdminTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  // (Re)opens the store, with its options changed by `adjust`, and a ModelAdmin on it.
  void Open(const std::function<void(ModelStoreOptions&)>& adjust = {}) {
    if (admin_) admin_->Close();
    admin_.reset();
    store_.reset();
    auto store = fx_.OpenStore(nullptr, adjust);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    ModelAdminOptions options;
    options.import_roots = {fx_.root() + "/medium"};
    admin_ = std::make_unique<ModelAdmin>(store_.get(), options);
  }

  // Runs a handler as the server would, on a request with `body` and query `params`.
  using Handler = Status (*)(ModelAdmin*, http::RequestContext&, const httplib::Request&, httplib::Response&);
  std::pair<Status, nlohmann::json> Call(Handler handler, const std::string& body,
                                         std::vector<std::pair<std::string, std::string>> params = {}) {
    httplib::Request req;
    req.body = body;
    for (auto& [k, v] : params) req.params.emplace(k, v);
    httplib::Response res;
    http::RequestContext ctx;
    ctx.request_id = "req-" + std::to_string(++requests_);
    ctx.remote_addr = "10.0.0.5:4711";
    ctx.client_request_id = "client-" + ctx.request_id;
    Status s = handler(admin_.get(), ctx, req, res);
    last_status_ = res.status;
    nlohmann::json reply = s.ok() ? nlohmann::json::parse(res.body) : nlohmann::json();
    return {s, reply};
  }

  std::string ImportAndWait(const std::string& source) {
    auto [s, job] = Call(&admin::HandleImportModel, nlohmann::json{{"model", "k3"}, {"source", source}}.dump());
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(last_status_, 202);
    admin_->WaitForJob(job["job"]);
    auto [polled, status] = Call(&admin::HandleImportStatus, "", {{"job", job["job"]}});
    EXPECT_TRUE(polled.ok());
    EXPECT_EQ(status["state"], "succeeded") << status.dump();
    // The finished job reports every byte it copied, whatever the last phase read.
    EXPECT_EQ(status["phase"], "done");
    EXPECT_GT(status["bytes_total"].get<uint64_t>(), 0u);
    EXPECT_EQ(status["bytes_done"], status["bytes_total"]);
    return status["version"]["digest"];
  }

  StoreFixture fx_;
  std::unique_ptr<ModelStore> store_;
  std::unique_ptr<ModelAdmin> admin_;
  int requests_ = 0;
  int last_status_ = 0;
};

TEST_F(ModelAdminTest, RoutesAreInTheTable) {
  http::RouteTable table;
  admin::AddModelRoutes(table, admin_.get());
  for (auto [method, path] : {std::pair{"GET", "/admin/v1/models"}, {"DELETE", "/admin/v1/models"},
                              {"POST", "/admin/v1/models/import"}, {"GET", "/admin/v1/models/import"},
                              {"POST", "/admin/v1/models/activate"}, {"POST", "/admin/v1/models/rollback"}}) {
    EXPECT_NE(table.Find(method, path), nullptr) << method << " " << path;
  }
}

// The console's Models screen shows where imports may come from and what serves, also with an
// empty store (a first start serving model.dir).
TEST_F(ModelAdminTest, TheListNamesTheImportRootsAndWhatServes) {
  auto [listed, empty] = Call(&admin::HandleListModels, "");
  ASSERT_TRUE(listed.ok()) << listed.ToString();
  EXPECT_EQ(empty["import_roots"], nlohmann::json::array({fx_.root() + "/medium"})) << empty.dump();
  EXPECT_TRUE(empty["serving"].is_null()) << empty.dump();

  ModelAdminOptions options;
  options.import_roots = {};
  options.serving = [] { return nlohmann::json{{"model", "kimi-k3"}, {"origin", "/srv/demo"}, {"version", 0}}; };
  admin_->Close();
  admin_ = std::make_unique<ModelAdmin>(store_.get(), options);
  auto [again, off] = Call(&admin::HandleListModels, "");
  ASSERT_TRUE(again.ok()) << again.ToString();
  EXPECT_EQ(off["import_roots"], nlohmann::json::array()) << off.dump();
  EXPECT_EQ(off["serving"]["origin"], "/srv/demo") << off.dump();
  EXPECT_TRUE(off["models"].empty()) << off.dump();
}

// Not enough free space: the admin API refuses at once with the figures (no job is started),
// and a job whose medium stops fitting by the time it runs fails with them in its state.
TEST_F(ModelAdminTest, AnImportThatDoesNotFitIsRefusedWithTheBytesNeededAndAvailable) {
  std::string source = fx_.MakeSignedModel("medium/a", "alpha");
  std::atomic<uint64_t> available{100};  // what the next check sees; each check resets it to 100
  Open([&](ModelStoreOptions& o) {
    o.free_bytes = [&](const std::string&) -> Result<uint64_t> { return available.exchange(100); };
    o.import_margin_bytes = 1000;
  });

  auto [refused, none] = Call(&admin::HandleImportModel, nlohmann::json{{"model", "k3"}, {"source", source}}.dump());
  ASSERT_EQ(refused.code(), Status::Code::kFailedPrecondition) << refused.ToString();
  EXPECT_NE(refused.message().find("not enough free space"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("100 bytes available"), std::string::npos) << refused.message();
  auto [listed, jobs] = Call(&admin::HandleImportStatus, "");
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(jobs["jobs"].empty()) << jobs.dump();

  // Room when the request comes, none left when the job starts (another writer took it).
  available = uint64_t{1} << 40;
  auto [started, job] = Call(&admin::HandleImportModel, nlohmann::json{{"model", "k3"}, {"source", source}}.dump());
  ASSERT_TRUE(started.ok()) << started.ToString();
  admin_->WaitForJob(job["job"]);
  auto [polled, status] = Call(&admin::HandleImportStatus, "", {{"job", job["job"]}});
  ASSERT_TRUE(polled.ok());
  EXPECT_EQ(status["state"], "failed") << status.dump();
  EXPECT_NE(status["error"].get<std::string>().find("100 bytes available"), std::string::npos) << status.dump();
  EXPECT_TRUE(store_->List()->empty());
  EXPECT_TRUE(std::filesystem::is_empty(store_->models_dir() + "/.staging"));
  EXPECT_EQ(fx_.AuditTrail(), (std::vector<std::string>{"model.import:refused", "model.import:refused"}));
}

TEST_F(ModelAdminTest, ImportPollActivateRollbackDeleteAreAudited) {
  std::string a = ImportAndWait(fx_.MakeSignedModel("medium/a", "alpha"));
  std::string b = ImportAndWait(fx_.MakeSignedModel("medium/b", "bravo"));

  auto [listed, list] = Call(&admin::HandleListModels, "");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(list["models"].size(), 2u);
  EXPECT_EQ(list["models"][0]["state"], "verified");

  auto [activated, reply] = Call(&admin::HandleActivateModel, nlohmann::json{{"model", "k3"}, {"digest", a}}.dump());
  ASSERT_TRUE(activated.ok()) << activated.ToString();
  EXPECT_EQ(reply["version"]["state"], "active");
  ASSERT_TRUE(Call(&admin::HandleActivateModel, nlohmann::json{{"model", "k3"}, {"digest", b}}.dump()).first.ok());

  auto [refused, nothing] = Call(&admin::HandleRemoveModel, "", {{"model", "k3"}, {"digest", b}});
  EXPECT_EQ(refused.code(), Status::Code::kFailedPrecondition);

  auto [rolled, back] = Call(&admin::HandleRollbackModel, R"({"model":"k3"})");
  ASSERT_TRUE(rolled.ok()) << rolled.ToString();
  EXPECT_EQ(back["version"]["digest"], a);

  auto [removed, gone] = Call(&admin::HandleRemoveModel, "", {{"model", "k3"}, {"digest", b}});
  ASSERT_TRUE(removed.ok()) << removed.ToString();
  EXPECT_EQ(gone["removed"]["digest"], b);

  std::vector<std::string> trail;
  for (const auto& r : fx_.AuditRecords()) {
    EXPECT_EQ(r.source, "10.0.0.5:4711");
    EXPECT_EQ(r.request_id.rfind("req-", 0), 0u);
    EXPECT_EQ(r.client_request_id, "client-" + r.request_id) << r.action;
    EXPECT_FALSE(r.model_digest.empty()) << r.action;
    trail.push_back(r.action + ":" + r.outcome);
  }
  EXPECT_EQ(trail, (std::vector<std::string>{"model.import:ok", "model.import:ok", "model.activate:ok", "model.activate:ok",
                                             "model.remove:refused", "model.rollback:ok", "model.remove:ok"}));
}

TEST_F(ModelAdminTest, RefusalsAreReadable) {
  std::string source = fx_.MakeSignedModel("medium/a", "alpha");
  std::string outside = fx_.MakeSignedModel("elsewhere/a", "alpha");
  auto [denied, r1] = Call(&admin::HandleImportModel, nlohmann::json{{"model", "k3"}, {"source", outside}}.dump());
  EXPECT_EQ(denied.code(), Status::Code::kPermissionDenied);
  EXPECT_NE(denied.message().find("mounted media"), std::string::npos);
  // Outside the roots the answer is the same whether the path exists or not (it was 404 for a
  // missing one, 403 for an existing one: a probe of the file system).
  auto [missing_outside, r0] = Call(&admin::HandleImportModel,
                                    nlohmann::json{{"model", "k3"}, {"source", fx_.root() + "/absent"}}.dump());
  EXPECT_EQ(missing_outside.code(), Status::Code::kPermissionDenied) << missing_outside.ToString();
  auto [missing_inside, r00] = Call(&admin::HandleImportModel,
                                    nlohmann::json{{"model", "k3"}, {"source", fx_.root() + "/medium/absent"}}.dump());
  EXPECT_EQ(missing_inside.code(), Status::Code::kNotFound) << missing_inside.ToString();
  EXPECT_EQ(Call(&admin::HandleImportModel, "not json").first.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(Call(&admin::HandleImportModel, R"({"model":"k3"})").first.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(Call(&admin::HandleImportStatus, "", {{"job", "99"}}).first.code(), Status::Code::kNotFound);
  EXPECT_EQ(Call(&admin::HandleActivateModel, R"({"model":"k3","digest":"x","force":"yes"})").first.code(),
            Status::Code::kInvalidArgument);

  // A version tampered with after import: the refusal names the file, not a generic error.
  std::string digest = ImportAndWait(source);
  models::testing::FlipByte(store_->VersionDirectory("k3", digest) + "/config.json", 1);
  auto [tampered, r2] = Call(&admin::HandleActivateModel, nlohmann::json{{"model", "k3"}, {"digest", digest}}.dump());
  EXPECT_EQ(tampered.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(tampered.message().find("config.json"), std::string::npos) << tampered.message();

  // A failed import job reports why.
  models::testing::FlipByte(source + "/config.json", 1);
  store_->Remove("k3", digest, Actor{});
  auto [started, job] = Call(&admin::HandleImportModel, nlohmann::json{{"model", "k3"}, {"source", source}}.dump());
  ASSERT_TRUE(started.ok());
  admin_->WaitForJob(job["job"]);
  auto status = admin_->ImportStatus(job["job"]);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["state"], "failed");
  EXPECT_NE((*status)["error"].get<std::string>().find("config.json"), std::string::npos) << status->dump();

  httplib::Request req;
  httplib::Response res;
  http::RequestContext ctx;
  EXPECT_EQ(admin::HandleListModels(nullptr, ctx, req, res).code(), Status::Code::kUnavailable);
}

}  // namespace
}  // namespace kimi::models
