// Schema-driven binding of JSON configuration onto typed structs.
//
// Each configuration section is a plain struct whose member initialisers are the defaults.
// An ObjectSchema<T> lists the keys of one JSON object, the member each key binds to, its
// type, its allowed range or choices and a one-line description. Bind() is the only
// validator: it rejects unknown keys and wrong types with the key's JSON path
// ("$.limits.max_body_bytes: expected an integer, got a string"), checks ranges and choices,
// and leaves members whose key is absent at their defaults. ToJson() writes a value back,
// Describe() lists every key with its type and default (used by the documentation test and
// by `kimictl config defaults`).
//
// Adding a section: write its struct, a function returning its ObjectSchema, and one
// .Object(...) line in the root schema (config.cc).
//
// Thread safety: a schema is immutable after construction and may be shared by threads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/status.h"

namespace kimi::config {

// One key of the schema, flattened, for documentation and listings.
struct KeyDoc {
  std::string path;           // "$.limits.max_body_bytes"
  std::string type;           // "integer 1..1073741824", "string", "boolean", "one of: a, b"
  nlohmann::json default_value;
  std::string doc;
};

// Extra check on a string value; returns an error message, or "" when the value is fine.
using StringCheck = std::function<std::string(const std::string& value)>;

// "$.a.b" from "$.a" and "b".
std::string JoinPath(std::string_view parent, std::string_view key);
// "a string", "an integer", ... for messages.
std::string JsonTypeName(const nlohmann::json& value);
// The key among `known` closest to `key` when it is a plausible typo, else "".
std::string ClosestKey(std::string_view key, const std::vector<std::string>& known);

template <typename T>
class ObjectSchema {
 public:
  ObjectSchema& Integer(std::string key, int64_t T::*member, int64_t min, int64_t max, std::string doc) {
    Field f{std::move(key), std::move(doc)};
    f.bind = [member, min, max](const nlohmann::json& j, const std::string& path, T* out) -> Status {
      if (!j.is_number_integer()) {
        return Status::InvalidArgument(path + ": expected an integer, got " + JsonTypeName(j));
      }
      bool fits = !(j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX));
      int64_t v = fits ? j.get<int64_t>() : INT64_MAX;
      if (!fits || v < min || v > max) {
        return Status::InvalidArgument(path + ": " + j.dump() + " is out of range [" + std::to_string(min) +
                                       ", " + std::to_string(max) + "]");
      }
      out->*member = v;
      return Status::OK();
    };
    f.dump = [member](const T& v) { return nlohmann::json(v.*member); };
    f.type = "integer " + std::to_string(min) + ".." + std::to_string(max);
    fields_.push_back(std::move(f));
    return *this;
  }

  ObjectSchema& Boolean(std::string key, bool T::*member, std::string doc) {
    Field f{std::move(key), std::move(doc)};
    f.bind = [member](const nlohmann::json& j, const std::string& path, T* out) -> Status {
      if (!j.is_boolean()) {
        return Status::InvalidArgument(path + ": expected a boolean, got " + JsonTypeName(j));
      }
      out->*member = j.get<bool>();
      return Status::OK();
    };
    f.dump = [member](const T& v) { return nlohmann::json(v.*member); };
    f.type = "boolean";
    fields_.push_back(std::move(f));
    return *this;
  }

  ObjectSchema& String(std::string key, std::string T::*member, std::string doc, StringCheck check = nullptr) {
    Field f{std::move(key), std::move(doc)};
    f.bind = [member, check](const nlohmann::json& j, const std::string& path, T* out) -> Status {
      if (!j.is_string()) {
        return Status::InvalidArgument(path + ": expected a string, got " + JsonTypeName(j));
      }
      std::string value = j.get<std::string>();
      if (check) {
        std::string problem = check(value);
        if (!problem.empty()) return Status::InvalidArgument(path + ": " + problem);
      }
      out->*member = std::move(value);
      return Status::OK();
    };
    f.dump = [member](const T& v) { return nlohmann::json(v.*member); };
    f.type = "string";
    fields_.push_back(std::move(f));
    return *this;
  }

  ObjectSchema& OneOf(std::string key, std::string T::*member, std::vector<std::string> choices, std::string doc) {
    std::string listed;
    for (const std::string& c : choices) listed += (listed.empty() ? "" : ", ") + c;
    StringCheck check = [choices, listed](const std::string& value) -> std::string {
      for (const std::string& c : choices) {
        if (c == value) return "";
      }
      return "\"" + value + "\" is not one of: " + listed;
    };
    String(std::move(key), member, std::move(doc), std::move(check));
    fields_.back().type = "one of: " + listed;
    return *this;
  }

  template <typename S>
  ObjectSchema& Object(std::string key, S T::*member, ObjectSchema<S> schema, std::string doc) {
    Field f{std::move(key), std::move(doc)};
    f.bind = [member, schema](const nlohmann::json& j, const std::string& path, T* out) -> Status {
      return schema.Bind(j, path, &(out->*member));
    };
    f.dump = [member, schema](const T& v) { return schema.ToJson(v.*member); };
    f.describe = [member, schema](const std::string& path, const T& defaults, std::vector<KeyDoc>* out) {
      schema.Describe(path, defaults.*member, out);
    };
    f.type = "object";
    fields_.push_back(std::move(f));
    return *this;
  }

  // An array of strings; each element may be checked. The whole array replaces the default.
  ObjectSchema& StringList(std::string key, std::vector<std::string> T::*member, std::string doc,
                           StringCheck check = nullptr) {
    Field f{std::move(key), std::move(doc)};
    f.bind = [member, check](const nlohmann::json& j, const std::string& path, T* out) -> Status {
      if (!j.is_array()) return Status::InvalidArgument(path + ": expected an array, got " + JsonTypeName(j));
      std::vector<std::string> values;
      for (size_t i = 0; i < j.size(); ++i) {
        std::string item_path = path + "[" + std::to_string(i) + "]";
        if (!j[i].is_string()) {
          return Status::InvalidArgument(item_path + ": expected a string, got " + JsonTypeName(j[i]));
        }
        std::string value = j[i].get<std::string>();
        if (check) {
          std::string problem = check(value);
          if (!problem.empty()) return Status::InvalidArgument(item_path + ": " + problem);
        }
        values.push_back(std::move(value));
      }
      out->*member = std::move(values);
      return Status::OK();
    };
    f.dump = [member](const T& v) { return nlohmann::json(v.*member); };
    f.type = "array of strings";
    fields_.push_back(std::move(f));
    return *this;
  }

  // An array of objects, each bound through `schema` onto a default-constructed S. The whole
  // array replaces the default. Describe() lists the element's keys under "key[]".
  template <typename S>
  ObjectSchema& ObjectList(std::string key, std::vector<S> T::*member, ObjectSchema<S> schema, std::string doc) {
    Field f{std::move(key), std::move(doc)};
    f.bind = [member, schema](const nlohmann::json& j, const std::string& path, T* out) -> Status {
      if (!j.is_array()) return Status::InvalidArgument(path + ": expected an array, got " + JsonTypeName(j));
      std::vector<S> values(j.size());
      for (size_t i = 0; i < j.size(); ++i) {
        KIMI_RETURN_IF_ERROR(schema.Bind(j[i], path + "[" + std::to_string(i) + "]", &values[i]));
      }
      out->*member = std::move(values);
      return Status::OK();
    };
    f.dump = [member, schema](const T& v) {
      nlohmann::json items = nlohmann::json::array();
      for (const S& item : v.*member) items.push_back(schema.ToJson(item));
      return items;
    };
    f.describe = [member, schema, doc = f.doc](const std::string& path, const T& defaults, std::vector<KeyDoc>* out) {
      nlohmann::json items = nlohmann::json::array();
      for (const S& item : defaults.*member) items.push_back(schema.ToJson(item));
      out->push_back(KeyDoc{path, "array of objects", items, doc});
      schema.Describe(path + "[]", S{}, out);
    };
    f.type = "array of objects";
    fields_.push_back(std::move(f));
    return *this;
  }

  // Any JSON value, kept as it is for a module that reads its own format (e.g. a model's
  // request rules); `check` (may be null) returns "" or what is wrong with it. `type` is the
  // type column of the documentation.
  ObjectSchema& JsonValue(std::string key, nlohmann::json T::*member, std::string type, std::string doc,
                          std::function<std::string(const nlohmann::json&)> check = nullptr) {
    Field f{std::move(key), std::move(doc)};
    f.bind = [member, check](const nlohmann::json& j, const std::string& path, T* out) -> Status {
      if (check) {
        std::string problem = check(j);
        if (!problem.empty()) return Status::InvalidArgument(path + ": " + problem);
      }
      out->*member = j;
      return Status::OK();
    };
    f.dump = [member](const T& v) { return v.*member; };
    f.type = std::move(type);
    fields_.push_back(std::move(f));
    return *this;
  }

  // Binds the JSON object `j` found at `path` onto *out. Keys absent from `j` leave their
  // members untouched. Returns InvalidArgument naming the first offending key's path.
  Status Bind(const nlohmann::json& j, const std::string& path, T* out) const {
    if (!j.is_object()) {
      return Status::InvalidArgument(path + ": expected an object, got " + JsonTypeName(j));
    }
    for (const auto& [key, value] : j.items()) {
      const Field* field = Find(key);
      std::string key_path = JoinPath(path, key);
      if (field == nullptr) {
        std::string hint = ClosestKey(key, Keys());
        return Status::InvalidArgument(key_path + ": unknown key" +
                                       (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
      }
      KIMI_RETURN_IF_ERROR(field->bind(value, key_path, out));
    }
    return Status::OK();
  }

  nlohmann::json ToJson(const T& value) const {
    nlohmann::json j = nlohmann::json::object();
    for (const Field& f : fields_) j[f.key] = f.dump(value);
    return j;
  }

  // Appends one KeyDoc per leaf key below `path`, with defaults taken from `defaults`.
  void Describe(const std::string& path, const T& defaults, std::vector<KeyDoc>* out) const {
    for (const Field& f : fields_) {
      std::string key_path = JoinPath(path, f.key);
      if (f.describe) {
        f.describe(key_path, defaults, out);
      } else {
        out->push_back(KeyDoc{key_path, f.type, f.dump(defaults), f.doc});
      }
    }
  }

  std::vector<std::string> Keys() const {
    std::vector<std::string> keys;
    for (const Field& f : fields_) keys.push_back(f.key);
    return keys;
  }

 private:
  struct Field {
    std::string key;
    std::string doc;
    std::string type;
    std::function<Status(const nlohmann::json&, const std::string&, T*)> bind;
    std::function<nlohmann::json(const T&)> dump;
    std::function<void(const std::string&, const T&, std::vector<KeyDoc>*)> describe;  // objects only
  };

  const Field* Find(const std::string& key) const {
    for (const Field& f : fields_) {
      if (f.key == key) return &f;
    }
    return nullptr;
  }

  std::vector<Field> fields_;
};

}  // namespace kimi::config
