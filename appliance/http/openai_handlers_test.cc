#include "http/openai_handlers.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <mutex>
#include <string>

#include "api/backend.h"
#include "http/request_context.h"

namespace kimi::http {
namespace {

const std::string kOld(64, 'a');
const std::string kNew(64, 'b');

// A backend whose model is re-activated between a request's arrival and the moment the
// backend takes its engine: what was active when the request came in (kOld, as /v1/models
// said) is not what serves it (kNew, named in the outcome like the embedded backend does).
class ActivatedMidRequest final : public api::Backend {
 public:
  std::string_view name() const override { return "embedded"; }
  std::vector<std::string> Models() const override { return {"kimi-k3"}; }
  bool Healthy(std::string_view model) const override { return model == "kimi-k3"; }
  Status Generate(const api::BackendRequest&, api::EventSink& sink, api::BackendOutcome* outcome) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      active_ = ServedModelDetails{kNew, 2, 0};  // the activation completes now
    }
    if (outcome != nullptr) *outcome = api::BackendOutcome{"embedded", 1, {}, kNew, 2};
    if (!sink.Emit(api::StreamEvent{.kind = api::StreamEventKind::kAnswer, .text = "hi"})) {
      return Status::Cancelled("client gone");
    }
    api::StreamEvent finish{.kind = api::StreamEventKind::kFinish};
    finish.finish_reason = "stop";
    sink.Emit(finish);
    return Status::OK();
  }
  ServedModelDetails Active() const {
    std::lock_guard<std::mutex> lock(mu_);
    return active_;
  }

 private:
  mutable std::mutex mu_;
  ServedModelDetails active_{kOld, 1, 0};  // guarded by mu_
};

class ServedVersionTest : public ::testing::TestWithParam<bool> {};

TEST_P(ServedVersionTest, TheRecordAndHeadersNameTheVersionThatServedNotTheOneActiveAtArrival) {
  const bool stream = GetParam();
  ActivatedMidRequest backend;
  GenerationServices services;
  services.backend = &backend;
  RequestContext ctx;
  ctx.request_id = "req_1";
  ctx.start = std::chrono::steady_clock::now();
  httplib::Request req;
  req.body = nlohmann::json{{"model", "kimi-k3"},
                            {"messages", nlohmann::json::array({{{"role", "user"}, {"content", "hello"}}})},
                            {"stream", stream}}
                 .dump();
  httplib::Response res;
  ASSERT_TRUE(HandleChatCompletions(services, ctx, req, res).ok());
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(ctx.audit.model_digest, kNew);
  EXPECT_EQ(res.get_header_value("X-Model-Digest"), kNew);
  EXPECT_EQ(res.get_header_value("X-Model-Version"), "2");
}

INSTANTIATE_TEST_SUITE_P(WholeAndStreamed, ServedVersionTest, ::testing::Bool());

httplib::Request ChatRequest() {
  httplib::Request req;
  req.body = nlohmann::json{{"model", "kimi-k3"},
                            {"messages", nlohmann::json::array({{{"role", "user"}, {"content", "hello"}}})}}
                 .dump();
  return req;
}

// The answer text goes into the request's audit facts only when the auditor stores content.
TEST(GenerationServicesTest, TheAnswerIsKeptOnlyWhenTheAuditStoresContent) {
  for (const bool stores : {false, true}) {
    ActivatedMidRequest backend;
    GenerationServices services;
    services.backend = &backend;
    services.audit_stores_content = stores;
    RequestContext ctx;
    ctx.request_id = "req_1";
    httplib::Response res;
    ASSERT_TRUE(HandleChatCompletions(services, ctx, ChatRequest(), res).ok());
    EXPECT_EQ(ctx.audit.completion_text, stores ? "hi" : "");
  }
}

// /v1/models names the version active now, as its services describe it, and only served models.
TEST(ModelListServicesTest, AServedModelIsDescribedAndAnUnknownOneIsNotFound) {
  ActivatedMidRequest backend;
  ModelListServices services{&backend};
  services.describe_model = [&](const std::string&) -> std::optional<ServedModelDetails> { return backend.Active(); };
  RequestContext ctx;
  ctx.path_params["id"] = "kimi-k3";
  httplib::Response res;
  ASSERT_TRUE(HandleGetModel(services, ctx, httplib::Request(), res).ok());
  const nlohmann::json model = nlohmann::json::parse(res.body);
  EXPECT_EQ(model["id"], "kimi-k3");
  EXPECT_EQ(model["digest"], kOld);
  EXPECT_EQ(model["version"], 1);
  ctx.path_params["id"] = "other";
  EXPECT_EQ(HandleGetModel(services, ctx, httplib::Request(), res).code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace kimi::http
