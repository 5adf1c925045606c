#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chat/chat_test_data.h"
#include "kimi/chat_format.h"

namespace kimi {
namespace {

using Json = nlohmann::ordered_json;
using chat::testing::ReadJsonFile;
using chat::testing::TestDataFiles;

const std::string kMark = "QJXZMARK";

// Every variant of `value` with one string, number or object key replaced by the mark. A
// string holding a JSON object text (a tool call's arguments) is also marked inside the text.
std::vector<Json> MarkedVariants(const Json& value) {
  std::vector<Json> out;
  if (value.is_string()) {
    out.push_back(kMark);
    const Json parsed = Json::parse(value.get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded() && parsed.is_object()) {
      for (const Json& inner : MarkedVariants(parsed)) out.push_back(inner.dump());
    }
  } else if (value.is_number()) {
    out.push_back(kMark);
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      for (Json& variant : MarkedVariants(value[i])) {
        Json copy = value;
        copy[i] = std::move(variant);
        out.push_back(std::move(copy));
      }
    }
  } else if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      Json renamed = Json::object();
      for (const auto& [k, v] : value.items()) renamed[k == key ? kMark : k] = v;
      out.push_back(std::move(renamed));
      for (Json& variant : MarkedVariants(member)) {
        Json copy = value;
        copy[key] = std::move(variant);
        out.push_back(std::move(copy));
      }
    }
  }
  return out;
}

// The walk over a body: parsed into its chat request, walked, the rendered fields written back.
Status WalkBody(Json* body, const RenderedTextVisitor& visit) {
  KIMI_ASSIGN_OR_RETURN(ChatRequest request, ParseChatRequest(*body));
  KIMI_RETURN_IF_ERROR(ForEachRenderedText(&request, visit));
  (*body)["messages"] = request.messages;
  if (!request.tools.is_null()) (*body)["tools"] = request.tools;
  if (request.has_response_format) (*body)["response_format"] = request.response_format;
  return Status::OK();
}

bool WalkSeesMark(Json body) {
  bool seen = false;
  Status walked = WalkBody(&body, [&](std::string* text) { seen |= text->find(kMark) != std::string::npos; });
  return walked.ok() && seen;
}

// Requests that reach the fields the golden conversations leave out.
std::vector<Json> EveryFieldRequests() {
  Json tools = Json::parse(R"([{"type": "function", "function": {"name": "lookup", "description": "Find a record",
      "parameters": {"type": "object", "properties": {"id": {"type": "string", "description": "the id",
      "enum": ["a", 4111111111111111]}}, "required": ["id"]}}}])");
  Json messages = Json::parse(R"([
    {"role": "system", "content": "be brief", "name": "policy"},
    {"role": "system", "tools": [{"type": "function", "function": {"name": "late", "description": "added later"}}]},
    {"role": "user", "name": 12345, "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": 42}]},
    {"role": "assistant", "content": "calling", "reasoning_content": {"why": ["because", 7]},
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"id\": \"x\", \"n\": 3}"}},
                    {"id": "c2", "name": "flat", "arguments": {"q": "y"}},
                    {"id": "c3", "function": {"name": "raw", "arguments": "not json"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "found"},
    {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "ok"}]},
    {"role": "tool", "tool_call_id": "c3", "content": "done"},
    {"role": "tool", "tool": "named", "content": "named result"},
    {"role": "assistant", "reasoning": "thought", "content": "answer"},
    {"role": "user", "content": "next"}])");
  std::vector<Json> out;
  out.push_back({{"messages", messages}, {"tools", tools}, {"tool_choice", "required"},
                 {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "answer"},
                   {"schema", {{"type", "object"}, {"properties", {{"capital", {{"type", "string"}}}}}}}}}}}});
  out.push_back({{"messages", messages}, {"response_format", {{"type", "json_schema"},
                   {"json_schema", {{"type", "object"}, {"description", "no wrapper"}}}}}});
  return out;
}

void ExpectEveryRenderedMarkIsWalked(const Json& request, const std::string& name) {
  size_t rendered_marks = 0;
  for (const Json& marked : MarkedVariants(request)) {
    Result<RenderedPrompt> prompt = ChatFormat::Render(marked);
    if (!prompt.ok() || prompt->text.find(kMark) == std::string::npos) continue;
    ++rendered_marks;
    EXPECT_TRUE(WalkSeesMark(marked)) << name << ": the prompt prints a text that ForEachRenderedText does not visit:\n"
                                      << marked.dump();
  }
  EXPECT_GT(rendered_marks, 0u) << name;
}

TEST(RenderedTexts, EveryTextThePromptPrintsIsVisitedInTheGoldenConversations) {
  for (const auto& path : TestDataFiles("golden")) {
    const Json golden = ReadJsonFile(path);
    if (golden.contains("expected")) ExpectEveryRenderedMarkIsWalked(golden["request"], path.filename().string());
  }
}

TEST(RenderedTexts, EveryTextThePromptPrintsIsVisitedInEveryField) {
  for (const Json& request : EveryFieldRequests()) ExpectEveryRenderedMarkIsWalked(request, request.dump());
}

TEST(RenderedTexts, RewrittenTextsReachThePrompt) {
  // Every field of the request says "secret"; once rewritten, the prompt must say it nowhere.
  const std::string dumped = EveryFieldRequests()[0].dump();
  std::string marked;
  for (size_t i = 0; i < dumped.size(); ++i) {
    marked += dumped[i];
    if (dumped[i] == '"' && i + 1 < dumped.size() && std::islower(static_cast<unsigned char>(dumped[i + 1]))) {
      marked += "secret ";
    }
  }
  // Structural names keep their spelling, so the request keeps its shape.
  for (const char* structural : {"role", "content", "type", "text", "function", "name", "arguments", "tools", "id",
                                 "tool_calls", "tool_call_id", "json_schema", "schema", "properties", "parameters",
                                 "description", "required", "enum", "string", "object", "system", "user",
                                 "assistant", "tool", "messages", "response_format", "tool_choice",
                                 "reasoning_content", "reasoning"}) {
    const std::string from = "\"secret " + std::string(structural) + "\"";
    for (size_t at = 0; (at = marked.find(from)) != std::string::npos;) {
      marked.replace(at, from.size(), "\"" + std::string(structural) + "\"");
    }
  }
  Json body = Json::parse(marked);
  Result<RenderedPrompt> secret = ChatFormat::Render(body);
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  ASSERT_NE(secret->text.find("secret"), std::string::npos);
  ASSERT_TRUE(WalkBody(&body, [](std::string* text) {
                for (size_t at = 0; (at = text->find("secret")) != std::string::npos;) text->replace(at, 6, "public");
              }).ok());
  Result<RenderedPrompt> rewritten = ChatFormat::Render(body);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status().ToString();
  EXPECT_EQ(rewritten->text.find("secret"), std::string::npos) << rewritten->text;
  EXPECT_NE(rewritten->text.find("public"), std::string::npos);
}

TEST(RenderedTexts, RewrittenNumberBecomesText) {
  Json body = EveryFieldRequests()[0];
  ASSERT_TRUE(WalkBody(&body, [](std::string* text) {
                if (*text == "4111111111111111") *text = "card-number";
              }).ok());
  Result<RenderedPrompt> prompt = ChatFormat::Render(body);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_NE(prompt->text.find("\"card-number\""), std::string::npos);
  EXPECT_EQ(prompt->text.find("4111111111111111"), std::string::npos);
}

TEST(RenderedTexts, ArgumentsAreSeenDecoded) {
  Json body = {{"messages", Json::parse(R"([{"role": "assistant", "tool_calls": [{"id": "a", "function":
      {"name": "f", "arguments": "{\"ssn\": \"123\\u002d45\\u002d6789\"}"}}]}])")}};
  std::vector<std::string> seen;
  ASSERT_TRUE(WalkBody(&body, [&](std::string* text) { seen.push_back(*text); }).ok());
  EXPECT_NE(std::find(seen.begin(), seen.end(), "123-45-6789"), seen.end());
}

TEST(RenderedTexts, TooDeepIsRefusedLikeTheRenderer) {
  Json deep = "x";
  for (int i = 0; i < 300; ++i) deep = Json::array({deep});
  ChatRequest request;
  request.messages = Json::array({{{"role", "user"}, {"content", "hi"}}});
  request.tools = deep;
  Status walked = ForEachRenderedText(&request, [](std::string*) {});
  EXPECT_EQ(walked.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(walked.message().find("tools"), std::string::npos);
}

}  // namespace
}  // namespace kimi
