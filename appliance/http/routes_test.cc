// The route table's path language: literal segments, "{name}" for one segment, a trailing
// "{name...}" for the rest of the path; and the regular expression the library routes with.
#include "http/routes.h"

#include <gtest/gtest.h>

#include <regex>

#include "http/openai_handlers.h"

namespace kimi::http {
namespace {

TEST(RoutePathTest, LiteralPathsMatchExactly) {
  EXPECT_TRUE(MatchRoutePath("/v1/models", "/v1/models", nullptr));
  EXPECT_FALSE(MatchRoutePath("/v1/models", "/v1/models/", nullptr));
  EXPECT_FALSE(MatchRoutePath("/v1/models", "/v1/model", nullptr));
  EXPECT_FALSE(MatchRoutePath("/v1/models", "/v1", nullptr));
}

TEST(RoutePathTest, ParametersCaptureSegmentsAndTheRest) {
  std::map<std::string, std::string> params;
  EXPECT_TRUE(MatchRoutePath("/a/{x}/b", "/a/42/b", &params));
  EXPECT_EQ(params["x"], "42");
  EXPECT_FALSE(MatchRoutePath("/a/{x}/b", "/a/4/2/b", nullptr));
  EXPECT_FALSE(MatchRoutePath("/a/{x}/b", "/a//b", nullptr));
  params.clear();
  EXPECT_TRUE(MatchRoutePath("/v1/models/{id...}", "/v1/models/moonshotai/Kimi-K3", &params));
  EXPECT_EQ(params["id"], "moonshotai/Kimi-K3");
  EXPECT_FALSE(MatchRoutePath("/v1/models/{id...}", "/v1/models/", nullptr));
  EXPECT_FALSE(MatchRoutePath("/v1/models/{id...}", "/v1/models", nullptr));
}

TEST(RoutePathTest, TheLibraryRegexAgreesWithTheMatcher) {
  const std::pair<const char*, const char*> cases[] = {
      {"/v1/models/{id...}", "/v1/models/a/b"}, {"/v1/models/{id...}", "/v1/models"},
      {"/v1/chat/completions", "/v1/chat/completions"}, {"/v1/chat/completions", "/v1/chatXcompletions"},
      {"/a/{x}/b", "/a/1/b"}, {"/a/{x}/b", "/a/1/2/b"}};
  for (const auto& [pattern, path] : cases) {
    EXPECT_EQ(std::regex_match(path, std::regex(RoutePathRegex(pattern))), MatchRoutePath(pattern, path, nullptr))
        << pattern << " " << path;
  }
}

TEST(RoutePathTest, TheTableFindsParameterisedRoutes) {
  RouteTable table;
  AddOpenAiRoutes(table, GenerationServices{}, ModelListServices{});
  const Route* r = table.Find("GET", "/v1/models/kimi-k3");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->name, "model");
  EXPECT_EQ(table.Find("POST", "/v1/models/kimi-k3"), nullptr);
  EXPECT_EQ(table.AllowedMethods("/v1/models/kimi-k3"), "GET, HEAD");
  EXPECT_EQ(table.AllowedMethods("/v1/chat/completions"), "POST");
}

}  // namespace
}  // namespace kimi::http
