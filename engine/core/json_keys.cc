#include "kimi/json_keys.h"

#include <nlohmann/json.hpp>

#include <unordered_set>
#include <vector>

namespace kimi {
namespace {

// A SAX handler that stops at the first key an open object has seen before.
class DuplicateKeyFinder : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::optional<std::string> found;

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
    if (frame.keys.insert(key).second) return true;
    found = Path();
    return false;
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
  std::vector<Frame> frames_;
};

}  // namespace

std::optional<std::string> FirstDuplicateJsonKey(std::string_view text) {
  DuplicateKeyFinder finder;
  nlohmann::json::sax_parse(text.begin(), text.end(), &finder, nlohmann::json::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/false);
  return finder.found;
}

}  // namespace kimi
