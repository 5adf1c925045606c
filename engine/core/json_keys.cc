#include "kimi/json_keys.h"

#include <nlohmann/json.hpp>

#include <unordered_set>
#include <vector>

namespace kimi {
namespace {

// A SAX handler that stops at the first key an open object has seen before, or past a limit.
class KeyChecker : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit KeyChecker(const JsonMemberLimits& limits) : limits_(limits) {}
  std::optional<JsonKeyProblem> found;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    frames_.push_back(Frame{true, {}, {}});
    return true;
  }
  bool key(string_t& key) override {
    Frame& frame = frames_.back();
    frame.current = key;
    using Kind = JsonKeyProblem::Kind;
    if (!frame.keys.insert(key).second) return Stop(Kind::kRepeatedKey);
    if (frame.keys.size() > limits_.per_object) return Stop(Kind::kObjectTooLarge);
    if (++members_ > limits_.in_all) return Stop(Kind::kTooManyMembers);
    return true;
  }
  bool end_object() override {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    frames_.push_back(Frame{false, {}, {}});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool Stop(JsonKeyProblem::Kind kind) {
    found = JsonKeyProblem{kind, Path()};
    return false;
  }
  struct Frame {
    bool is_object;
    std::unordered_set<std::string> keys;
    std::string current;
  };
  std::string Path() const {
    constexpr size_t kMaxKeyBytes = 64;
    std::string path = "$";
    for (const Frame& f : frames_) {
      if (!f.is_object) {
        path += "[]";
      } else if (f.current.size() > kMaxKeyBytes) {
        path += "." + f.current.substr(0, kMaxKeyBytes) + "...";
      } else {
        path += "." + f.current;
      }
    }
    return path;
  }
  const JsonMemberLimits limits_;
  std::vector<Frame> frames_;
  size_t members_ = 0;
};

}  // namespace

std::optional<JsonKeyProblem> CheckJsonKeys(std::string_view text, const JsonMemberLimits& limits) {
  KeyChecker checker(limits);
  nlohmann::json::sax_parse(text.begin(), text.end(), &checker, nlohmann::json::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/false);
  return checker.found;
}

}  // namespace kimi
