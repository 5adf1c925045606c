// The /admin/v1/trust routes (trust_routes.h) over a real trust directory.
#include "admin/trust_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include "models/model_store_test_support.h"
#include "models/oms_keys.h"
#include "models/oms_test_support.h"

namespace kimi::models {
namespace {

using testing::StoreFixture;

class TrustRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(trust_.Load().ok()); }

  StoreFixture fx_;
  TrustDirectory trust_{fx_.trust_dir(), fx_.audit_fn()};
};

// The trust screen's "verified the active version": a CA through an intermediate too.
TEST_F(TrustRoutesTest, ACaMatchesTheSignersItAnchorsThroughIntermediates) {
  const TrustEntry root{"96b4", "ca", "CN=root-ca", "root.pem"};
  const TrustEntry key{"e845", "key", "ECDSA P-256", "key.pem"};
  const std::string via_intermediate =
      "certificate CN=signer issued by CN=intermediate-ca (sha256:aaaa; trust anchor sha256:96b4)";
  EXPECT_TRUE(admin::SignedBy(root, via_intermediate));
  EXPECT_FALSE(admin::SignedBy(TrustEntry{"9bbf", "ca", "CN=other-root", "o.pem"}, via_intermediate));
  EXPECT_TRUE(admin::SignedBy(root, "certificate CN=signer issued by CN=root-ca (sha256:aaaa)"));  // before anchors
  EXPECT_TRUE(admin::SignedBy(key, "key sha256:e845 (ECDSA P-256)"));
  EXPECT_FALSE(admin::SignedBy(key, via_intermediate));
}

// The routes: the status codes the HTTP layer maps to 400, 409 and 404, and the listing.
TEST_F(TrustRoutesTest, RoutesAnswerAsDocumented) {
  admin::TrustServices services;
  services.trust = &trust_;
  using Handler = Status (*)(const admin::TrustServices&, http::RequestContext&, const httplib::Request&,
                             httplib::Response&);
  auto call = [&](Handler handler, const std::string& body, const std::string& id = "") {
    httplib::Request req;
    req.body = body;
    httplib::Response res;
    http::RequestContext ctx;
    ctx.request_id = "req-route";
    if (!id.empty()) ctx.path_params["id"] = id;
    Status s = handler(services, ctx, req, res);
    return std::pair{s, s.ok() ? nlohmann::json::parse(res.body) : nlohmann::json()};
  };
  http::RouteTable table;
  admin::AddTrustRoutes(table, services);
  for (auto [method, path] : {std::pair{"GET", "/admin/v1/trust"}, {"POST", "/admin/v1/trust"},
                              {"DELETE", "/admin/v1/trust/abc"}}) {
    EXPECT_NE(table.Find(method, path), nullptr) << method << " " << path;
  }
  EXPECT_EQ(table.Find("POST", "/admin/v1/trust")->permission, auth::Permission::kAdminOnly);
  EXPECT_EQ(table.Find("GET", "/admin/v1/trust")->permission, auth::Permission::kTrustRead);

  auto [listed, list] = call(&admin::HandleListTrust, "");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(list["editable"], true);
  ASSERT_EQ(list["entries"].size(), 1u);
  EXPECT_EQ(list["entries"][0]["signs_active"], nlohmann::json::array());

  EXPECT_EQ(call(&admin::HandleAddTrust, R"({"pem":"not a key"})").first.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(call(&admin::HandleAddTrust, R"({"label":"x"})").first.code(), Status::Code::kInvalidArgument);
  const testing::TestCertificate ca = testing::MakeCertificate({.subject = "CN=Route CA", .ca = true}, nullptr);
  EXPECT_EQ(call(&admin::HandleAddTrust, nlohmann::json{{"pem", ca.Pem()}, {"signers", "email=a@b"}}.dump()).first.code(),
            Status::Code::kInvalidArgument);
  auto [pinned, ca_entry] =
      call(&admin::HandleAddTrust, nlohmann::json{{"pem", ca.Pem()}, {"signers", {"dns=*.signers.example"}}}.dump());
  ASSERT_TRUE(pinned.ok()) << pinned.ToString();
  EXPECT_EQ(ca_entry["signers"], nlohmann::json::array({"dns=*.signers.example"}));
  ASSERT_TRUE(call(&admin::HandleRemoveTrust, "", ca_entry["id"]).first.ok());
  Result<SharedPkey> key = GenerateP256Key();
  ASSERT_TRUE(key.ok());
  const std::string body = nlohmann::json{{"pem", PublicKeyPem(key->get())}}.dump();
  auto [added, entry] = call(&admin::HandleAddTrust, body);
  ASSERT_TRUE(added.ok()) << added.ToString();
  EXPECT_EQ(entry["kind"], "key");
  EXPECT_EQ(call(&admin::HandleAddTrust, body).first.code(), Status::Code::kAlreadyExists);
  auto [removed, gone] = call(&admin::HandleRemoveTrust, "", entry["id"]);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(gone["removed"]["id"], entry["id"]);
  EXPECT_EQ(call(&admin::HandleRemoveTrust, "", entry["id"]).first.code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace kimi::models
