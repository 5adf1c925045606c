#include "policy/policy_validator.h"

#include <cmath>
#include <initializer_list>
#include <set>
#include <string_view>

#include "kimi/tokenizer_utf8.h"
#include "policy/detectors.h"

namespace kimi::policy {
namespace {

using nlohmann::json;

std::string Child(const std::string& path, std::string_view key) {
  std::string out = path + "/";
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}
std::string Child(const std::string& path, size_t index) { return path + "/" + std::to_string(index); }

bool IsInteger(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;  // JSON Schema: 3.0 is an integer
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsAlnum(char c) { return IsDigit(c) || IsLower(c) || (c >= 'A' && c <= 'Z'); }

// ^key_[0-9A-Za-z_-]{1,64}$
bool IsKeyId(std::string_view s) {
  if (!s.starts_with("key_") || s.size() < 5 || s.size() > 68) return false;
  for (char c : s.substr(4)) {
    if (!IsAlnum(c) && c != '_' && c != '-') return false;
  }
  return true;
}
// ^(role:(admin|operator|auditor|user)|key:<key id>)$
bool IsSubject(std::string_view s) {
  if (s.starts_with("role:")) {
    std::string_view role = s.substr(5);
    return role == "admin" || role == "operator" || role == "auditor" || role == "user";
  }
  return s.starts_with("key:") && IsKeyId(s.substr(4));
}
// ^[a-z][a-z0-9_]{0,31}$
bool IsPatternName(std::string_view s) {
  if (s.empty() || s.size() > 32 || !IsLower(s[0])) return false;
  for (char c : s) {
    if (!IsLower(c) && !IsDigit(c) && c != '_') return false;
  }
  return true;
}
// ^[a-z0-9-]{1,64}$
bool IsHeaderName(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!IsLower(c) && !IsDigit(c) && c != '-') return false;
  }
  return true;
}

class Checker {
 public:
  std::vector<PolicyError> errors;

  void Fail(const std::string& path, std::string message) { errors.push_back({path, std::move(message)}); }

  // type object, required, additionalProperties false. False when `v` is not an object.
  bool Object(const json& v, const std::string& path, std::initializer_list<std::string_view> required,
              std::initializer_list<std::string_view> allowed) {
    if (!v.is_object()) {
      Fail(path, "must be an object");
      return false;
    }
    for (std::string_view key : required) {
      if (!v.contains(key)) Fail(path, "the property '" + std::string(key) + "' is required");
    }
    for (const auto& [key, value] : v.items()) {
      bool known = false;
      for (std::string_view a : allowed) known = known || a == key;
      if (!known) Fail(path, "the property '" + key + "' is not allowed");
    }
    return true;
  }

  // Calls fn(value, path) when `object` holds `key`.
  template <typename Fn>
  void Field(const json& object, const std::string& path, std::string_view key, Fn fn) {
    if (object.is_object() && object.contains(key)) fn(object.at(std::string(key)), Child(path, key));
  }

  void Boolean(const json& v, const std::string& path) {
    if (!v.is_boolean()) Fail(path, "must be true or false");
  }

  void Integer(const json& v, const std::string& path, int64_t min, int64_t max) {
    if (!IsInteger(v)) {
      Fail(path, "must be an integer");
      return;
    }
    const double d = v.get<double>();
    if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
      Fail(path, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
  }

  // type string with length bounds and a pattern (`matches`, described by `shape`).
  bool String(const json& v, const std::string& path, size_t min_len, size_t max_len,
              bool (*matches)(std::string_view) = nullptr, const char* shape = nullptr) {
    if (!v.is_string()) {
      Fail(path, "must be a string");
      return false;
    }
    const std::string& s = v.get_ref<const std::string&>();
    const size_t n = kimi::text::CountCodePoints(s);
    bool ok = true;
    if (n < min_len) ok = false, Fail(path, "must be at least " + std::to_string(min_len) + " characters long");
    if (n > max_len) ok = false, Fail(path, "must be at most " + std::to_string(max_len) + " characters long");
    if (matches != nullptr && !matches(s)) ok = false, Fail(path, std::string("must be ") + shape);
    return ok;
  }

  bool Enum(const json& v, const std::string& path, std::initializer_list<std::string_view> values) {
    std::string list;
    for (std::string_view x : values) {
      if (v.is_string() && v.get_ref<const std::string&>() == x) return true;
      list += (list.empty() ? "" : ", ") + std::string(x);
    }
    Fail(path, "must be one of " + list);
    return false;
  }

  bool Array(const json& v, const std::string& path, size_t min_items, size_t max_items) {
    if (!v.is_array()) {
      Fail(path, "must be an array");
      return false;
    }
    if (v.size() < min_items) Fail(path, "must hold at least " + std::to_string(min_items) + " items");
    if (v.size() > max_items) Fail(path, "must hold at most " + std::to_string(max_items) + " items");
    return true;
  }

  void Action(const json& v, const std::string& path) { Enum(v, path, {"mask", "hash", "block"}); }
  void WorkloadClass(const json& v, const std::string& path) { Enum(v, path, {"chat", "agentic"}); }
  void Milliseconds(const json& v, const std::string& path) { Integer(v, path, 1, 600000); }
  void TokenLimit(const json& v, const std::string& path) { Integer(v, path, 1, 1048576); }

  // Beyond the schema: it must compile, within the bounds, as the redactor will compile it.
  void Compiles(const json& v, const std::string& path) {
    if (!v.is_string()) return;
    Result<std::unique_ptr<PatternDetector>> compiled = PatternDetector::Create("check", v.get<std::string>());
    if (!compiled.ok()) Fail(path, compiled.status().message());
  }

  void ContentLogging(const json& v, const std::string& path) {
    if (!Object(v, path, {"store_prompts", "store_completions", "retention_days"},
                {"store_prompts", "store_completions", "retention_days"})) {
      return;
    }
    Field(v, path, "store_prompts", [&](const json& x, const std::string& p) { Boolean(x, p); });
    Field(v, path, "store_completions", [&](const json& x, const std::string& p) { Boolean(x, p); });
    Field(v, path, "retention_days", [&](const json& x, const std::string& p) { Integer(x, p, 1, 3650); });
  }

  void Redaction(const json& v, const std::string& path) {
    if (!Object(v, path, {"before_model", "before_storage", "rules"},
                {"before_model", "before_storage", "medical_record_pattern", "rules", "custom_patterns"})) {
      return;
    }
    Field(v, path, "before_model", [&](const json& x, const std::string& p) { Boolean(x, p); });
    Field(v, path, "before_storage", [&](const json& x, const std::string& p) { Boolean(x, p); });
    Field(v, path, "medical_record_pattern", [&](const json& x, const std::string& p) {
      if (String(x, p, 1, 256)) Compiles(x, p);
    });
    std::set<std::string> categories;
    Field(v, path, "rules", [&](const json& rules, const std::string& p) {
      if (!Array(rules, p, 0, 8)) return;
      for (size_t i = 0; i < rules.size(); ++i) {
        const std::string rp = Child(p, i);
        if (!Object(rules[i], rp, {"category", "action"}, {"category", "action"})) continue;
        Field(rules[i], rp, "category", [&](const json& c, const std::string& cp) {
          if (!Enum(c, cp, {"email", "phone", "iban", "payment_card", "us_ssn", "date_of_birth", "medical_record",
                            "ip_address"})) {
            return;
          }
          if (!categories.insert(c.get<std::string>()).second) Fail(cp, "names a category that already has a rule");
          if (c == kMedicalRecord && !v.contains("medical_record_pattern")) {
            Fail(cp, "medical_record needs redaction.medical_record_pattern");
          }
        });
        Field(rules[i], rp, "action", [&](const json& a, const std::string& ap) { Action(a, ap); });
      }
    });
    std::set<std::string> names;
    Field(v, path, "custom_patterns", [&](const json& patterns, const std::string& p) {
      if (!Array(patterns, p, 0, 32)) return;
      for (size_t i = 0; i < patterns.size(); ++i) {
        const std::string cp = Child(p, i);
        if (!Object(patterns[i], cp, {"name", "pattern", "action"}, {"name", "pattern", "action"})) continue;
        Field(patterns[i], cp, "name", [&](const json& n, const std::string& np) {
          if (!String(n, np, 0, SIZE_MAX, &IsPatternName, "a lower-case identifier ([a-z][a-z0-9_]{0,31})")) return;
          const std::string name = n.get<std::string>();
          if (IsBuiltinCategory(name)) Fail(np, "is the name of a built-in category");
          if (!names.insert(name).second) Fail(np, "names a pattern that already exists");
        });
        Field(patterns[i], cp, "pattern", [&](const json& x, const std::string& xp) {
          if (String(x, xp, 1, 256)) Compiles(x, xp);
        });
        Field(patterns[i], cp, "action", [&](const json& a, const std::string& ap) { Action(a, ap); });
      }
    });
  }

  void Access(const json& v, const std::string& path) {
    if (!Object(v, path, {"long_context_threshold_tokens", "rules"}, {"long_context_threshold_tokens", "rules"})) return;
    Field(v, path, "long_context_threshold_tokens", [&](const json& x, const std::string& p) { TokenLimit(x, p); });
    std::set<std::string> subjects;
    Field(v, path, "rules", [&](const json& rules, const std::string& p) {
      if (!Array(rules, p, 1, 256)) return;
      for (size_t i = 0; i < rules.size(); ++i) {
        const std::string rp = Child(p, i);
        if (!Object(rules[i], rp, {"subject", "models"},
                    {"subject", "models", "tools", "long_context", "thinking_max", "max_prompt_tokens",
                     "max_output_tokens"})) {
          continue;
        }
        Field(rules[i], rp, "subject", [&](const json& s, const std::string& sp) {
          if (!String(s, sp, 0, SIZE_MAX, &IsSubject, "role:<admin|operator|auditor|user> or key:<key id>")) return;
          if (!subjects.insert(s.get<std::string>()).second) Fail(sp, "names a subject that already has a rule");
        });
        Field(rules[i], rp, "models", [&](const json& models, const std::string& mp) {
          if (!Array(models, mp, 1, 64)) return;
          for (size_t m = 0; m < models.size(); ++m) String(models[m], Child(mp, m), 1, 256);
        });
        for (std::string_view flag : {"tools", "long_context", "thinking_max"}) {
          Field(rules[i], rp, flag, [&](const json& x, const std::string& xp) { Boolean(x, xp); });
        }
        for (std::string_view limit : {"max_prompt_tokens", "max_output_tokens"}) {
          Field(rules[i], rp, limit, [&](const json& x, const std::string& xp) { TokenLimit(x, xp); });
        }
      }
    });
  }

  void ServiceLevels(const json& v, const std::string& path) {
    if (!Object(v, path, {"ttft_targets", "itl_targets"},
                {"ttft_targets", "itl_targets", "class_header", "default_class", "key_classes"})) {
      return;
    }
    Field(v, path, "ttft_targets", [&](const json& tiers, const std::string& p) {
      if (!Array(tiers, p, 1, 16)) return;
      double previous = 0;
      for (size_t i = 0; i < tiers.size(); ++i) {
        const std::string tp = Child(p, i);
        if (!Object(tiers[i], tp, {"max_prompt_tokens", "target_ms"}, {"max_prompt_tokens", "target_ms"})) continue;
        Field(tiers[i], tp, "max_prompt_tokens", [&](const json& x, const std::string& xp) {
          TokenLimit(x, xp);
          if (!IsInteger(x)) return;
          if (x.get<double>() <= previous) Fail(xp, "must be larger than the previous tier's");
          previous = x.get<double>();
        });
        Field(tiers[i], tp, "target_ms", [&](const json& x, const std::string& xp) { Milliseconds(x, xp); });
      }
    });
    Field(v, path, "itl_targets", [&](const json& itl, const std::string& p) {
      if (!Object(itl, p, {"chat", "agentic"}, {"chat", "agentic"})) return;
      Field(itl, p, "chat", [&](const json& x, const std::string& xp) { Milliseconds(x, xp); });
      Field(itl, p, "agentic", [&](const json& x, const std::string& xp) { Milliseconds(x, xp); });
    });
    Field(v, path, "class_header", [&](const json& x, const std::string& p) {
      String(x, p, 0, SIZE_MAX, &IsHeaderName, "a lower-case header name ([a-z0-9-]{1,64})");
    });
    Field(v, path, "default_class", [&](const json& x, const std::string& p) { WorkloadClass(x, p); });
    Field(v, path, "key_classes", [&](const json& entries, const std::string& p) {
      if (!Array(entries, p, 0, 256)) return;
      for (size_t i = 0; i < entries.size(); ++i) {
        const std::string ep = Child(p, i);
        if (!Object(entries[i], ep, {"key", "class"}, {"key", "class"})) continue;
        Field(entries[i], ep, "key", [&](const json& x, const std::string& xp) {
          String(x, xp, 0, SIZE_MAX, &IsKeyId, "a key id (key_...)");
        });
        Field(entries[i], ep, "class", [&](const json& x, const std::string& xp) { WorkloadClass(x, xp); });
      }
    });
  }

  void Document(const json& v) {
    const std::string root;
    if (!Object(v, root, {"schema_version", "name", "content_logging", "redaction", "access", "service_levels"},
                {"schema_version", "name", "description", "content_logging", "redaction", "access", "service_levels"})) {
      return;
    }
    Field(v, root, "schema_version", [&](const json& x, const std::string& p) {
      if (!(IsInteger(x) && x.get<double>() == 1.0)) Fail(p, "must be 1");
    });
    Field(v, root, "name", [&](const json& x, const std::string& p) { String(x, p, 1, 64); });
    Field(v, root, "description", [&](const json& x, const std::string& p) { String(x, p, 0, 4096); });
    Field(v, root, "content_logging", [&](const json& x, const std::string& p) { ContentLogging(x, p); });
    Field(v, root, "redaction", [&](const json& x, const std::string& p) { Redaction(x, p); });
    Field(v, root, "access", [&](const json& x, const std::string& p) { Access(x, p); });
    Field(v, root, "service_levels", [&](const json& x, const std::string& p) { ServiceLevels(x, p); });
  }
};

}  // namespace

std::vector<PolicyError> ValidatePolicy(const nlohmann::json& document) {
  Checker checker;
  checker.Document(document);
  return std::move(checker.errors);
}

std::string FormatPolicyError(const PolicyError& error) {
  return (error.path.empty() ? std::string("(document)") : error.path) + ": " + error.message;
}

}  // namespace kimi::policy
