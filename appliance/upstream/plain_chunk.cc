#include "upstream/plain_chunk.h"

#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace kimi::upstream {
namespace {

using Json = nlohmann::json;

// The members the reader knows; any other member may hold a scalar (ignored, as the full
// reader ignores it) but nothing nested.
enum class Field {
  kOther,
  kChoices, kUsage, kObject, kError,                     // of the chunk
  kIndex, kDelta, kFinishReason, kLogprobs, kDeclined,   // of a choice ("message", "text")
  kContent, kReasoningContent, kReasoning, kToolCalls,   // of a delta
};

enum class Level { kChunk, kChoices, kChoice, kDelta };

// A SAX handler (nlohmann::json::sax_parse) that accepts only the plain shape; returning
// false stops the parse, and the chunk is declined.
class PlainChunkHandler {
 public:
  explicit PlainChunkHandler(PlainChunk* out) : out_(out) {}

  bool null() { return Scalar(nullptr); }
  bool boolean(bool) { return Scalar(nullptr) && !Typed(); }
  bool number_integer(Json::number_integer_t v) { return Integer(v == 0); }
  bool number_unsigned(Json::number_unsigned_t v) { return Integer(v == 0); }
  bool number_float(Json::number_float_t, const std::string&) { return Scalar(nullptr) && !Typed(); }
  bool binary(Json::binary_t&) { return false; }
  bool string(std::string& value) { return Scalar(&value); }

  bool start_object(std::size_t) {
    if (levels_.empty()) {
      levels_.push_back(Level::kChunk);
      return true;
    }
    if (levels_.back() == Level::kChoices) {
      if (out_->has_choice) return false;  // a second choice: the full reader refuses it
      out_->has_choice = true;
      levels_.push_back(Level::kChoice);
      return true;
    }
    if (levels_.back() == Level::kChoice && field_ == Field::kDelta) {
      has_delta_ = true;
      levels_.push_back(Level::kDelta);
      return true;
    }
    return false;
  }
  bool end_object() {
    if (levels_.back() == Level::kChoice && !has_delta_) return false;  // a message, text, or nothing
    levels_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    if (levels_.empty() || levels_.back() != Level::kChunk || field_ != Field::kChoices) return false;
    levels_.push_back(Level::kChoices);
    return true;
  }
  bool end_array() {
    levels_.pop_back();
    return true;
  }
  bool key(std::string& name) {
    field_ = FieldOf(levels_.back(), name);
    return field_ != Field::kError && field_ != Field::kDeclined;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  static Field FieldOf(Level level, std::string_view name) {
    switch (level) {
      case Level::kChunk:
        if (name == "choices") return Field::kChoices;
        if (name == "usage") return Field::kUsage;
        if (name == "object") return Field::kObject;
        if (name == "error") return Field::kError;
        return Field::kOther;
      case Level::kChoice:
        if (name == "index") return Field::kIndex;
        if (name == "delta") return Field::kDelta;
        if (name == "finish_reason") return Field::kFinishReason;
        if (name == "logprobs") return Field::kLogprobs;
        if (name == "message" || name == "text") return Field::kDeclined;
        return Field::kOther;
      case Level::kDelta:
        if (name == "content") return Field::kContent;
        if (name == "reasoning_content") return Field::kReasoningContent;
        if (name == "reasoning") return Field::kReasoning;
        if (name == "tool_calls") return Field::kToolCalls;
        return Field::kOther;
      case Level::kChoices:
        break;
    }
    return Field::kOther;
  }

  // A member the reader reads as a string (or null), or one that must be null.
  bool Typed() const {
    switch (field_) {
      case Field::kChoices: case Field::kUsage: case Field::kObject: case Field::kIndex: case Field::kDelta:
      case Field::kFinishReason: case Field::kLogprobs: case Field::kContent: case Field::kReasoningContent:
      case Field::kReasoning: case Field::kToolCalls:
        return true;
      default:
        return false;
    }
  }

  bool Integer(bool zero) {
    if (levels_.empty() || levels_.back() == Level::kChoices) return false;
    if (field_ == Field::kIndex) return zero;  // choice 0 is the only one served
    return !Typed();
  }

  // `value` is the string, or null for a JSON null (and, via the callers, other scalars).
  bool Scalar(std::string* value) {
    if (levels_.empty() || levels_.back() == Level::kChoices) return false;
    switch (field_) {
      case Field::kOther:
        return true;
      case Field::kObject:
        return value == nullptr || *value != "error";
      case Field::kChoices: case Field::kUsage: case Field::kLogprobs: case Field::kToolCalls: case Field::kDelta:
        return value == nullptr;  // null: the same as absent
      case Field::kIndex:
        return false;  // not an integer
      case Field::kFinishReason:
        return Assign(value, &out_->finish_reason);
      case Field::kContent:
        return Assign(value, &out_->content);
      case Field::kReasoningContent:
        return Assign(value, &out_->reasoning_content);
      case Field::kReasoning:
        return Assign(value, &out_->reasoning);
      default:
        return false;
    }
  }

  // A later duplicate member wins, as it does in a parsed tree.
  static bool Assign(std::string* value, std::string* into) {
    if (value == nullptr) into->clear();
    else *into = std::move(*value);
    return true;
  }

  PlainChunk* out_;
  std::vector<Level> levels_;
  Field field_ = Field::kOther;
  bool has_delta_ = false;
};

}  // namespace

bool ReadPlainChunk(std::string_view data, PlainChunk* chunk) {
  *chunk = PlainChunk{};
  PlainChunkHandler handler(chunk);
  return Json::sax_parse(data, &handler, Json::input_format_t::json, /*strict=*/true);
}

}  // namespace kimi::upstream
