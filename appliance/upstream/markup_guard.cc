#include "upstream/markup_guard.h"

#include <set>
#include <utility>

#include "kimi/python_text.h"
#include "kimi/tokenizer.h"

namespace kimi::upstream {
namespace {

using Json = nlohmann::ordered_json;

// The ordinary tokens of Kimi's ranks (data/kimi-k3/tiktoken.model): the special ids follow.
constexpr int32_t kKimiBaseTokens = 163'584;

// The names of data/kimi-k3/tokenizer_config.k2_6.json's added_tokens_decoder, in id order
// (markup_guard_test.cc holds the list to the file). A Hugging Face tokenizer splits every added
// token out of a text, those marked "special": false (the tool-call markup, <think>) included.
constexpr std::string_view kShippedConfigNames[] = {
    "[BOS]", "[EOS]", "<|im_end|>", "<|im_user|>", "<|im_assistant|>", "<|start_header_id|>", "<|end_header_id|>",
    "[EOT]", "<|im_system|>", "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>", "<|tool_call_end|>", "<|im_middle|>", "<|media_begin|>", "<|media_content|>",
    "<|media_end|>", "<|media_pad|>", "<think>", "</think>", "[UNK]", "[PAD]"};

// Written by the K3 chat format as markup (engine/chat/chat_format.cc) though no token of its
// table: the place of an image, which a multimodal server fills with the image's tokens.
constexpr std::string_view kImagePlaceholder = "<|kimi_image_placeholder|>";

// Deeper than any body the dispatcher admits (256) plus decoded arguments (chat::kMaxNesting).
constexpr int kMaxDepth = 512;

class BodySearch {
 public:
  explicit BodySearch(const SpecialTextMatcher& tokens) : tokens_(tokens) {}

  // `field` is the path of `value` in the body; `decoded` is set inside a tool call's decoded
  // arguments, whose texts are named by the arguments field.
  Status Value(const Json& value, std::string* field, bool decoded, int depth) {
    if (depth > kMaxDepth) return Status::InvalidArgument(*field + " is nested too deeply to be forwarded");
    if (value.is_string()) return Text(value.get_ref<const std::string&>(), *field, decoded ? "(decoded) contains" : "contains");
    if (value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) {
        KIMI_RETURN_IF_ERROR(Nested(value[i], field, decoded, depth, "[" + std::to_string(i) + "]"));
      }
      return Status::OK();
    }
    if (!value.is_object()) return Status::OK();
    for (const auto& [key, member] : value.items()) {
      KIMI_RETURN_IF_ERROR(Text(key, *field, decoded ? "(decoded) has a key that contains" : "has a key that contains"));
      KIMI_RETURN_IF_ERROR(Nested(member, field, decoded, depth, field->empty() ? key : "." + key));
      if (decoded) continue;
      if (key == "arguments" && member.is_string()) {
        KIMI_RETURN_IF_ERROR(Arguments(member.get_ref<const std::string&>(), JoinedField(*field, key), depth));
      }
      if (key == "content" && member.is_array()) KIMI_RETURN_IF_ERROR(JoinedParts(member, JoinedField(*field, key)));
    }
    return Status::OK();
  }

 private:
  static std::string JoinedField(const std::string& field, const std::string& key) {
    return field.empty() ? key : field + "." + key;
  }

  Status Nested(const Json& value, std::string* field, bool decoded, int depth, const std::string& step) {
    if (decoded) return Value(value, field, decoded, depth + 1);
    const size_t length = field->size();
    field->append(step);
    Status s = Value(value, field, decoded, depth + 1);
    field->resize(length);
    return s;
  }

  Status Text(std::string_view text, const std::string& field, std::string_view how) const {
    const SpecialTextMatch token = tokens_.FindNext(text);
    if (!token.found()) return Status::OK();
    return Status::InvalidArgument((field.empty() ? std::string("the body") : field) + " " + std::string(how) + " '" +
                                   std::string(text.substr(token.position, token.length)) +
                                   "', a control token of the model's chat format; an upstream server would read it "
                                   "as markup");
  }

  // A tool call's arguments as a server that parses them and prints them again (a template's
  // tojson) would write them: \u-escaped texts decoded. The raw text was searched already.
  Status Arguments(const std::string& text, std::string field, int depth) {
    Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_structured()) return Status::OK();
    if (!chat::NestingWithin(parsed, chat::kMaxNesting)) {
      return Status::InvalidArgument(field + " is nested deeper than " + std::to_string(chat::kMaxNesting) + " levels");
    }
    return Value(parsed, &field, /*decoded=*/true, depth + 1);
  }

  // The text parts of one content array back to back: a token split across two parts is whole
  // once a template joins them.
  Status JoinedParts(const Json& parts, const std::string& field) const {
    std::string joined;
    for (const Json& part : parts) {
      if (!part.is_object()) continue;
      auto text = part.find("text");
      if (text != part.end() && text->is_string()) joined += text->get_ref<const std::string&>();
    }
    return Text(joined, field, "(its text parts joined) contains");
  }

  const SpecialTextMatcher& tokens_;
};

}  // namespace

std::vector<std::string> KimiControlTokenTexts() {
  std::vector<std::string> texts;
  std::set<std::string, std::less<>> seen;
  auto add = [&](std::string_view text) {
    if (seen.insert(std::string(text)).second) texts.emplace_back(text);
  };
  for (const SpecialToken& token : Tokenizer::K3SpecialTokens(kKimiBaseTokens)) add(token.text);
  for (std::string_view name : kShippedConfigNames) add(name);
  // Every special id under the name tokenization_kimi.py gives an id its table leaves unnamed.
  for (int32_t id = kKimiBaseTokens; id < kKimiBaseTokens + Tokenizer::kNumSpecialTokens; ++id) {
    add(ReservedSpecialTokenName(id));
  }
  add(kImagePlaceholder);
  return texts;
}

const SpecialTextMatcher& KimiControlTokens() {
  static const SpecialTextMatcher matcher = [] {
    std::vector<SpecialToken> table;
    for (std::string& text : KimiControlTokenTexts()) {
      table.push_back({static_cast<int32_t>(table.size()), std::move(text)});
    }
    return SpecialTextMatcher(table);
  }();
  return matcher;
}

Status CheckNoControlTokens(const nlohmann::ordered_json& body, const SpecialTextMatcher& tokens) {
  std::string field;
  return BodySearch(tokens).Value(body, &field, /*decoded=*/false, 0);
}

}  // namespace kimi::upstream
