#include "io/index_file.h"

#include <nlohmann/json.hpp>

#include "kimi/untrusted_json.h"
#include "kimi/safetensors.h"

namespace kimi {
namespace {

using nlohmann::json;

bool PlainShardName(const std::string& s) {
  return !s.empty() && s.find('/') == std::string::npos && s.find('\\') == std::string::npos &&
         s != "." && s != ".." && s.find('\0') == std::string::npos;
}

// Walks the index as SAX events. Depth 1 is the root object; its keys pick a section.
class IndexSax : public nlohmann::json_sax<json> {
 public:
  explicit IndexSax(IndexFile* out) : out_(out) {}
  const std::string& error() const { return error_; }

  bool null() override { return Scalar("null"); }
  bool boolean(bool) override { return Scalar("a boolean"); }
  bool number_integer(number_integer_t v) override {
    if (InShape()) {
      if (v < 0) return Fail("tensor_specs['" + name_ + "'].shape has a negative dimension");
      spec_.shape.push_back(v);
      return true;
    }
    return Scalar("a number");
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (InShape()) {
      if (v > static_cast<uint64_t>(INT64_MAX)) return Fail("tensor_specs['" + name_ + "'].shape overflows");
      spec_.shape.push_back(static_cast<int64_t>(v));
      return true;
    }
    return Scalar("a number");
  }
  bool number_float(number_float_t, const string_t&) override { return Scalar("a fractional number"); }
  bool binary(binary_t&) override { return Fail("binary value"); }
  bool string(string_t& v) override {
    if (section_ == "weight_map" && depth_ == 2) {
      if (!PlainShardName(v)) return Fail("weight_map['" + name_ + "'] names shard \"" + v + "\", which is not a plain file name");
      out_->weight_map[name_] = v;
      return true;
    }
    if (section_ == "tensor_specs" && depth_ == 3 && field_ == "dtype") {
      if (!ParseSafetensorsDType(v, &spec_.dtype)) return Fail("tensor_specs['" + name_ + "'] has unknown dtype \"" + v + "\"");
      have_dtype_ = true;
      return true;
    }
    return Scalar("a string");
  }
  bool start_object(std::size_t) override {
    ++depth_;
    if (depth_ == 2 && section_ == "weight_map") return true;
    if (depth_ == 2 && section_ == "tensor_specs") {
      out_->has_tensor_specs = true;
      return true;
    }
    if (depth_ == 3 && section_ == "tensor_specs") {
      spec_ = {};
      have_dtype_ = have_shape_ = false;
      return true;
    }
    if (depth_ == 1 || !Known()) return true;
    return Fail("unexpected object in " + section_);
  }
  bool end_object() override {
    if (depth_ == 3 && section_ == "tensor_specs") {
      if (!have_dtype_ || !have_shape_) return Fail("tensor_specs['" + name_ + "'] needs \"dtype\" and \"shape\"");
      out_->tensor_specs[name_] = spec_;
    }
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth_;
    if (InShape()) {
      have_shape_ = true;
      return true;
    }
    if (depth_ == 1) return Fail("the index is not a JSON object");
    if (!Known()) return true;
    return Fail("unexpected array in " + section_);
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      section_ = k;
    } else if (depth_ == 2) {
      name_ = k;
    } else if (depth_ == 3) {
      field_ = k;
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    return Fail("invalid JSON at byte " + std::to_string(position) + ": " + e.what());
  }

 private:
  bool Known() const { return section_ == "weight_map" || section_ == "tensor_specs"; }
  bool InShape() const { return section_ == "tensor_specs" && depth_ == 4 && field_ == "shape"; }
  // A scalar is fine anywhere except as the whole document or inside a section we read.
  bool Scalar(const char* what) {
    if (depth_ == 0) return Fail("the index is not a JSON object");
    if (Known() && depth_ >= 2) return Fail(std::string("unexpected ") + what + " in " + section_ + " at '" + name_ + "'");
    return true;
  }
  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  IndexFile* out_;
  int depth_ = 0;
  std::string section_, name_, field_, error_;
  IndexFile::Spec spec_;
  bool have_dtype_ = false, have_shape_ = false;
};

}  // namespace

Result<IndexFile> ParseIndexFile(std::string_view text, std::string_view label) {
  KIMI_RETURN_IF_ERROR(CheckJsonNesting(text, label, kMaxFileJsonNesting));
  IndexFile out;
  IndexSax sax(&out);
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &sax);
  } catch (const std::exception& e) {
    return Status::Corruption(std::string(label) + ": " + e.what());
  }
  if (!ok) {
    return Status::Corruption(std::string(label) + ": " + (sax.error().empty() ? "invalid index" : sax.error()));
  }
  if (out.weight_map.empty()) return Status::Corruption(std::string(label) + ": no \"weight_map\" entries");
  return out;
}

}  // namespace kimi
