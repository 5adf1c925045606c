#include "structured/schema_compiler.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "kimi/python_text.h"
#include "kimi/tokenizer_utf8.h"
#include "structured/char_class.h"
#include "structured/number_pattern.h"
#include "structured/regex.h"

namespace kimi::structured {
namespace {

constexpr int kMaxSchemaDepth = 128;
// A pattern combined with a length bound is unrolled into (automaton state, length) pairs.
constexpr size_t kMaxUnrolledStates = 200000;
// A character class whose bytes take more states than this is a rule of its own that every
// edge placing it calls (JsonValueRules::CharRule); smaller ones (`.`, \w, a script's range)
// are copied onto each edge, which keeps their masks cached per state.
constexpr int32_t kMaxInlineClassStates = 32;
// Rule names carry the pointer of their subschema, shortened past this.
constexpr size_t kRuleNamePointerBytes = 160;

const std::set<std::string, std::less<>> kAnnotations = {
    "description", "default", "title", "examples", "$id", "$schema", "$comment", "$anchor",
    "deprecated", "readOnly", "writeOnly", "$defs", "definitions"};
const std::set<std::string, std::less<>> kKeywords = {
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "prefixItems", "minItems", "maxItems", "anyOf", "oneOf", "allOf", "$ref", "minLength",
    "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "nullable"};
const std::vector<std::string> kTypeNames = {"null", "boolean", "object", "array", "string", "integer", "number"};

// The pointer of `key` under `pointer`, spelled out for a message.
std::string Child(const SchemaPath& pointer, std::string_view key) { return pointer.Child(key).Pointer(); }

// `true`: what an absent additionalProperties or items allows.
const Json& AnyValueSchema() {
  static const Json any(true);
  return any;
}

std::string DisplayPointer(const SchemaPath& pointer) { return pointer.Display(); }
std::string DisplayPointer(const std::string& pointer) { return pointer.empty() ? "/" : pointer; }

// A rule's name: what it is and (shortened) where.
std::string RuleName(std::string_view what, const SchemaPath& pointer) {
  return std::string(what) + " at " + pointer.Short(kRuleNamePointerBytes);
}

Status Unsupported(std::string_view what, const std::string& pointer) {
  return Status::InvalidArgument("unsupported JSON Schema " + std::string(what) + " at " + DisplayPointer(pointer));
}
Status Unsupported(std::string_view what, const SchemaPath& pointer) { return Unsupported(what, pointer.Pointer()); }

bool HasStructuralKeywords(const Json& schema, std::initializer_list<std::string_view> besides) {
  for (const auto& [key, value] : schema.items()) {
    if (kAnnotations.count(key)) continue;
    if (std::find(besides.begin(), besides.end(), key) != besides.end()) continue;
    return true;
  }
  return false;
}

Json Without(const Json& schema, std::initializer_list<std::string_view> keys) {
  Json out = Json::object();
  for (const auto& [key, value] : schema.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) out[key] = value;
  }
  return out;
}

Result<int64_t> NonNegativeInteger(const Json& schema, const char* key, int64_t fallback, const SchemaPath& pointer) {
  if (!schema.contains(key)) return fallback;
  const Json& v = schema[key];
  if (v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0)) return v.get<int64_t>();
  if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() == std::floor(v.get<double>())) {
    return v.get<double>() >= 9.2e18 ? kUnbounded : int64_t(v.get<double>());
  }
  return Status::InvalidArgument(std::string("'") + key + "' at " + Child(pointer, key) + " must be a non-negative integer");
}

// The JSON types a schema's values may have: its `type`, else the types its keywords talk
// about, else all. "integer" stands apart from "number" here; a caller merges them.
Result<std::set<std::string>> TypesOf(const Json& schema, const SchemaPath& pointer) {
  std::set<std::string> types;
  if (schema.contains("type")) {
    const Json& t = schema["type"];
    std::vector<Json> list = t.is_array() ? std::vector<Json>(t.begin(), t.end()) : std::vector<Json>{t};
    for (const Json& name : list) {
      if (!name.is_string() || std::find(kTypeNames.begin(), kTypeNames.end(), name.get<std::string>()) == kTypeNames.end()) {
        return Status::InvalidArgument("unknown type " + name.dump() + " at " + Child(pointer, "type"));
      }
      types.insert(name.get<std::string>());
    }
  } else {
    for (const char* k : {"properties", "required", "additionalProperties"}) {
      if (schema.contains(k)) types.insert("object");
    }
    for (const char* k : {"items", "prefixItems", "minItems", "maxItems"}) {
      if (schema.contains(k)) types.insert("array");
    }
    for (const char* k : {"minLength", "maxLength", "pattern", "format"}) {
      if (schema.contains(k)) types.insert("string");
    }
    for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
      if (schema.contains(k)) types.insert("number");
    }
    if (types.empty()) types.insert(kTypeNames.begin(), kTypeNames.end());
  }
  if (schema.contains("nullable") && schema["nullable"] == Json(true)) types.insert("null");
  return types;
}

Result<NumberBounds> BoundsOf(const Json& schema, const SchemaPath& pointer) {
  NumberBounds b;
  auto number = [&](const char* key) -> Result<std::optional<double>> {
    if (!schema.contains(key) || schema[key].is_boolean()) return std::optional<double>();
    if (!schema[key].is_number()) return Status::InvalidArgument(std::string("'") + key + "' at " + Child(pointer, key) + " must be a number");
    return std::optional<double>(schema[key].get<double>());
  };
  KIMI_ASSIGN_OR_RETURN(b.minimum, number("minimum"));
  KIMI_ASSIGN_OR_RETURN(b.maximum, number("maximum"));
  KIMI_ASSIGN_OR_RETURN(std::optional<double> xmin, number("exclusiveMinimum"));
  KIMI_ASSIGN_OR_RETURN(std::optional<double> xmax, number("exclusiveMaximum"));
  if (schema.value("exclusiveMinimum", Json(false)) == Json(true)) b.exclusive_minimum = b.minimum.has_value();
  if (schema.value("exclusiveMaximum", Json(false)) == Json(true)) b.exclusive_maximum = b.maximum.has_value();
  if (xmin && (!b.minimum || *xmin >= *b.minimum)) {
    b.minimum = xmin;
    b.exclusive_minimum = true;
  }
  if (xmax && (!b.maximum || *xmax <= *b.maximum)) {
    b.maximum = xmax;
    b.exclusive_maximum = true;
  }
  return b;
}


// Puts a character automaton between from and to. In a JSON string (json_string) characters
// are written escaped and, when min_length > 0 or max_length is bounded, counted by unrolling
// (state, length) pairs; elsewhere they are raw UTF-8 and uncounted. Each class's bytes are
// worked out once; a class of more than kMaxInlineClassStates states is one rule that its edges
// call. Every state and edge counts against the builder's limits, checked (with the deadline)
// as the loop goes. Errors: InvalidArgument naming the bound.
Status EmbedCharNfa(JsonValueRules* values, const CharNfa& nfa, int32_t from, int32_t to, bool json_string,
                    int64_t min_length, int64_t max_length,
                    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  GrammarBuilder* builder = values->builder();
  const int32_t rule = builder->RuleOf(from);
  const bool counted = json_string && (min_length > 0 || max_length != kUnbounded);
  const int64_t top = max_length != kUnbounded ? max_length : min_length;
  if (counted && (top > int64_t(kMaxUnrolledStates) || nfa.states.size() * size_t(top + 1) > kMaxUnrolledStates)) {
    return Status::InvalidArgument("minLength/maxLength of " + std::to_string(top) +
                                   " are too large to combine with a pattern or format");
  }
  auto too_large = [&] {
    return Status::InvalidArgument("the pattern compiles to more than " + std::to_string(builder->max_states()) +
                                   " grammar states or " + std::to_string(builder->max_edges()) + " edges");
  };
  // Per class: its bytes, or the rule that spells it (-1: copied onto each edge).
  std::vector<CharBytes> bytes(nfa.classes.size());
  std::vector<int32_t> class_rule(nfa.classes.size(), -1);
  for (size_t c = 0; c < nfa.classes.size(); ++c) {
    bytes[c] = json_string ? JsonStringBytes(nfa.classes[c]) : Utf8Bytes(nfa.classes[c]);
    if (bytes[c].inner > kMaxInlineClassStates) class_rule[c] = values->CharRule(nfa.classes[c], json_string, bytes[c]);
    if (builder->exhausted()) return too_large();
  }
  const int64_t layers = counted ? top + 1 : 1;
  std::vector<int32_t> states(nfa.states.size() * size_t(layers), -1);
  auto state = [&](int32_t n, int64_t k) {
    int32_t& s = states[size_t(k) * nfa.states.size() + size_t(n)];
    if (s < 0) s = builder->NewState(rule);
    return s;
  };
  std::vector<std::pair<int32_t, int64_t>> todo = {{nfa.start, 0}};
  builder->AddEpsilon(from, state(nfa.start, 0));
  std::vector<bool> seen(states.size(), false);
  seen[size_t(nfa.start)] = true;
  auto visit = [&](int32_t n, int64_t k) {
    const size_t at = size_t(k) * nfa.states.size() + size_t(n);
    if (!seen[at]) {
      seen[at] = true;
      todo.push_back({n, k});
    }
    return state(n, k);
  };
  for (size_t visited = 0; !todo.empty(); ++visited) {
    if (builder->exhausted()) return too_large();
    if (visited % 256 == 0 && std::chrono::steady_clock::now() > deadline) {
      return Status::InvalidArgument("the pattern took longer to compile than its time limit");
    }
    const auto [n, k] = todo.back();
    todo.pop_back();
    const int32_t here = state(n, k);
    const CharNfa::State& ns = nfa.states[size_t(n)];
    for (int32_t e : ns.epsilons) builder->AddEpsilon(here, visit(e, k));
    for (const CharNfa::Edge& e : ns.edges) {
      int64_t next = k;
      if (counted) {
        if (max_length != kUnbounded && k >= max_length) continue;
        next = std::min(k + 1, top);
      }
      const int32_t target = visit(e.target, next);
      const size_t c = size_t(e.chars);
      if (class_rule[c] >= 0) {
        builder->AddCall(here, class_rule[c], target);
      } else if (builder->state_room() < size_t(bytes[c].inner)) {
        return too_large();
      } else {
        AddCharBytes(builder, here, bytes[c], target);
      }
      if (builder->exhausted()) return too_large();
    }
    if (n == nfa.accept && (!counted || k >= min_length)) builder->AddEpsilon(here, to);
  }
  if (builder->exhausted()) return too_large();
  return Status::OK();
}

Result<std::string> FormatPattern(const std::string& format, const SchemaPath& pointer) {
  const std::string date = "[1-9][0-9]{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])";
  const std::string time = "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
  if (format == "date") return "^" + date + "$";
  if (format == "time") return "^" + time + "$";
  if (format == "date-time") return "^" + date + "T" + time + "$";
  if (format == "email") return std::string("^[A-Za-z0-9._%+-]{1,32}@[A-Za-z0-9-]{1,32}(?:\\.[A-Za-z0-9-]{1,32}){1,3}$");
  if (format == "uuid") return std::string("^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$");
  return Unsupported("format \"" + format + "\"", Child(pointer, "format"));
}

// A set of printable-ASCII names (no " or \), as a trie of states for "any other name".
struct NameTrie {
  std::vector<std::map<uint8_t, int32_t>> children = {{}};
  std::vector<bool> terminal = {false};
  void Insert(std::string_view name) {
    int32_t at = 0;
    for (char c : name) {
      auto [it, fresh] = children[size_t(at)].try_emplace(static_cast<uint8_t>(c), int32_t(children.size()));
      if (fresh) {
        children.emplace_back();
        terminal.push_back(false);
      }
      at = it->second;
    }
    terminal[size_t(at)] = true;
  }
};

bool PlainName(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; });
}

// From `from` (just after the opening quote) to `to` (just after the closing quote): a
// property name of printable ASCII, without escapes, that is none of `taken`.
void AddOtherName(GrammarBuilder* builder, const std::vector<std::string_view>& taken, int32_t from, int32_t to) {
  NameTrie trie;
  for (std::string_view name : taken) {
    if (PlainName(name)) trie.Insert(name);
  }
  const int32_t rule = builder->RuleOf(from);
  ByteSet plain;
  for (int c = 0x20; c < 0x7F; ++c) {
    if (c != '"' && c != '\\') plain.Add(uint8_t(c));
  }
  ByteSet quote;
  quote.Add('"');
  const int32_t free = builder->NewState(rule);
  builder->AddBytes(free, plain, free);
  builder->AddBytes(free, quote, to);
  std::vector<int32_t> states(trie.children.size());
  states[0] = from;
  for (size_t i = 1; i < states.size(); ++i) states[i] = builder->NewState(rule);
  for (size_t i = 0; i < states.size(); ++i) {
    ByteSet others = plain;
    for (const auto& [byte, child] : trie.children[i]) {
      ByteSet one;
      one.Add(byte);
      builder->AddBytes(states[i], one, states[size_t(child)]);
      others.words[byte >> 6] &= ~(uint64_t(1) << (byte & 63));
    }
    builder->AddBytes(states[i], others, free);
    if (!trie.terminal[i]) builder->AddBytes(states[i], quote, to);
  }
}

std::string QuotedKey(std::string_view name) {
  std::string out;
  chat::AppendPythonJsonString(name, &out);
  return out;
}

}  // namespace

void SchemaPath::Segments(std::vector<const SchemaPath*>* out) const {
  for (const SchemaPath* p = this; p != nullptr; p = p->parent_) out->push_back(p);
}

std::string SchemaPath::Pointer() const {
  std::vector<const SchemaPath*> segments;
  Segments(&segments);
  std::string out;
  for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
    const SchemaPath& p = **it;
    if (p.parent_ == nullptr) {
      out += p.escaped_;
    } else if (p.is_index_) {
      out += "/" + std::to_string(p.index_);
    } else {
      AppendPointerSegment(&out, p.key_);
    }
  }
  return out;
}

std::string SchemaPath::Display() const {
  std::string out = Pointer();
  return out.empty() ? "/" : out;
}

std::string SchemaPath::Short(size_t max_bytes) const {
  // The last segments that fit, each cut to a quarter of the room, without building the rest.
  std::vector<const SchemaPath*> segments;
  Segments(&segments);
  std::vector<std::string> tail;
  size_t bytes = 0;
  bool whole = true;
  for (const SchemaPath* p : segments) {
    if (p->parent_ == nullptr) {
      std::string_view text = p->escaped_;
      if (text.size() + bytes > max_bytes) {  // its end, from a whole UTF-8 character
        size_t begin = text.size() - (max_bytes - std::min(bytes, max_bytes));
        while (begin < text.size() && kimi::text::IsUtf8Continuation(text[begin])) ++begin;
        text = text.substr(begin);
        whole = false;
      }
      tail.emplace_back(text);
      break;
    }
    std::string segment;
    if (p->is_index_) {
      segment = "/" + std::to_string(p->index_);
    } else {
      std::string_view key = p->key_;
      const bool cut = key.size() > max_bytes / 4;
      if (cut) {
        size_t end = max_bytes / 4;
        while (end > 0 && kimi::text::IsUtf8Continuation(key[end])) --end;  // a whole UTF-8 character
        key = key.substr(0, end);
      }
      AppendPointerSegment(&segment, key);
      if (cut) segment += "...";
    }
    if (bytes + segment.size() > max_bytes) {
      whole = false;
      break;
    }
    bytes += segment.size();
    tail.push_back(std::move(segment));
  }
  std::string out = whole ? "" : "...";
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) out += *it;
  return out.empty() ? "/" : out;
}

int32_t JsonValueRules::CharRule(const CharClass& chars, bool json_string, const CharBytes& bytes) {
  auto [it, fresh] = char_rules_.try_emplace({chars, json_string}, -1);
  if (!fresh) return it->second;
  it->second = builder_->NewRule(json_string ? "string character" : "character");
  const int32_t end = builder_->NewState(it->second);
  builder_->MarkEnd(end);
  AddCharBytes(builder_, builder_->RuleStart(it->second), bytes, end);  // past the limits, the builder is exhausted
  return it->second;
}

int32_t JsonValueRules::Literal(const std::string& text) {
  auto it = literals_.find(text);
  if (it != literals_.end()) return it->second;
  const int32_t rule = builder_->NewRule("literal " + text);
  const int32_t end = builder_->NewState(rule);
  builder_->MarkEnd(end);
  builder_->AddLiteral(builder_->RuleStart(rule), text, end);
  literals_[text] = rule;
  return rule;
}

int32_t JsonValueRules::FreeString() { return String(0, kUnbounded); }

int32_t JsonValueRules::String(int64_t min_length, int64_t max_length) {
  auto it = strings_.find({min_length, max_length});
  if (it != strings_.end()) return it->second;
  const int32_t rule = builder_->NewRule("string[" + std::to_string(min_length) + "," +
                                         (max_length == kUnbounded ? std::string("inf") : std::to_string(max_length)) + "]");
  const int32_t head = builder_->NewState(rule), end = builder_->NewState(rule);
  builder_->MarkEnd(end);
  builder_->AddLiteral(builder_->RuleStart(rule), "\"", head);
  if (min_length == 0 && max_length == kUnbounded) {
    AddJsonStringChar(builder_, head, CharClass::AnyChar(), head);
    builder_->AddLiteral(head, "\"", end);
  } else if (min_length <= max_length) {
    // One counted loop: the counter is the number of characters so far.
    const int64_t saturate = max_length == kUnbounded ? min_length : max_length;
    const int32_t in_char = builder_->NewState(rule), closing = builder_->NewState(rule);
    builder_->AddEpsilon(head, EpsilonEdge{in_char, 0, max_length, CounterAction::kIncrement, saturate});
    AddJsonStringChar(builder_, in_char, CharClass::AnyChar(), head);
    builder_->AddEpsilon(head, EpsilonEdge{closing, min_length});
    builder_->AddLiteral(closing, "\"", end);
  }
  builder_->MarkShareable(rule, builder_->grammar_rule_name(rule));
  strings_[{min_length, max_length}] = rule;
  return rule;
}

int32_t JsonValueRules::Number() {
  if (number_ >= 0) return number_;
  number_ = builder_->NewRule("number");
  const int32_t end = builder_->NewState(number_);
  builder_->MarkEnd(end);
  Result<CharNfa> nfa = CompileRegex(*NumberPattern(NumberBounds{}));
  // The pattern is a constant of this file; it compiles.
  if (nfa.ok()) (void)EmbedCharNfa(this, *nfa, builder_->RuleStart(number_), end, false, 0, kUnbounded);
  builder_->MarkShareable(number_, "number");
  return number_;
}

void JsonValueRules::BuildAnyValue() {
  any_value_ = builder_->NewRule("any value");
  any_object_ = builder_->NewRule("any object");
  any_array_ = builder_->NewRule("any array");
  GrammarBuilder& b = *builder_;
  {
    const int32_t end = b.NewState(any_value_);
    b.MarkEnd(end);
    for (int32_t r : {Literal("null"), Literal("true"), Literal("false"), Number(), FreeString(), any_object_, any_array_}) {
      b.AddCall(b.RuleStart(any_value_), r, end);
    }
  }
  {
    const int32_t open = b.NewState(any_object_), name = b.NewState(any_object_), colon = b.NewState(any_object_),
                  value = b.NewState(any_object_), more = b.NewState(any_object_), end = b.NewState(any_object_);
    b.MarkEnd(end);
    b.AddLiteral(b.RuleStart(any_object_), "{", open);
    b.AddLiteral(open, "}", end);
    b.AddCall(open, FreeString(), name);
    b.AddLiteral(name, ":", colon);
    b.AddCall(colon, any_value_, value);
    b.AddLiteral(value, ",", more);
    b.AddCall(more, FreeString(), name);
    b.AddLiteral(value, "}", end);
  }
  {
    const int32_t open = b.NewState(any_array_), value = b.NewState(any_array_), more = b.NewState(any_array_),
                  end = b.NewState(any_array_);
    b.MarkEnd(end);
    b.AddLiteral(b.RuleStart(any_array_), "[", open);
    b.AddLiteral(open, "]", end);
    b.AddCall(open, any_value_, value);
    b.AddLiteral(value, ",", more);
    b.AddCall(more, any_value_, value);
    b.AddLiteral(value, "]", end);
  }
}

int32_t JsonValueRules::AnyValue() {
  if (any_value_ < 0) BuildAnyValue();
  return any_value_;
}
int32_t JsonValueRules::AnyObject() {
  if (any_value_ < 0) BuildAnyValue();
  return any_object_;
}
int32_t JsonValueRules::AnyArray() {
  if (any_value_ < 0) BuildAnyValue();
  return any_array_;
}

Result<int32_t> SchemaCompiler::CompileRoot() {
  // nlohmann throws on a value of an unexpected type somewhere this file did not check; it
  // is the caller's input that is wrong, and no exception leaves the module.
  try {
    KIMI_RETURN_IF_ERROR(CheckSchemaLimits(document_, limits_));
    builder()->Limit(budget_.max_states, budget_.max_edges);
    const SchemaPath root;
    KIMI_ASSIGN_OR_RETURN(int32_t rule, CompileRef("#", root));
    KIMI_RETURN_IF_ERROR(Reserve(0, root));  // whatever made the last states, they count
    return rule;
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("malformed JSON Schema: ") + e.what());
  }
}

Status SchemaCompiler::Spend(const SchemaPath& pointer) {
  if (++steps_ > budget_.max_steps) {
    return Status::InvalidArgument("the schema is too complex to compile (more than " + std::to_string(budget_.max_steps) +
                                   " steps, at " + DisplayPointer(pointer) + ")");
  }
  KIMI_RETURN_IF_ERROR(Reserve(0, pointer));
  if (std::chrono::steady_clock::now() > budget_.deadline) {
    return Status::InvalidArgument("the schema took longer to compile than its time limit (at " + DisplayPointer(pointer) + ")");
  }
  return Status::OK();
}

Status SchemaCompiler::Reserve(size_t states, const SchemaPath& pointer) {
  if (builder()->exhausted() || builder()->num_states() + states > budget_.max_states) {
    return Status::InvalidArgument("the schema compiles to more than " + std::to_string(budget_.max_states) +
                                   " grammar states or " + std::to_string(budget_.max_edges) + " edges (at " +
                                   DisplayPointer(pointer) + ")");
  }
  return Status::OK();
}

Result<const Json*> SchemaCompiler::Resolve(const std::string& ref, const SchemaPath& pointer) {
  KIMI_RETURN_IF_ERROR(Spend(pointer));
  if (ref.empty() || ref[0] != '#') {
    return Status::InvalidArgument("unsupported JSON Schema $ref \"" + ref + "\" at " + Child(pointer, "$ref") +
                                   " (only references inside the schema, \"#...\", are supported)");
  }
  if (ref == "#") return &document_;
  Json::json_pointer jp;
  try {
    jp = Json::json_pointer(ref.substr(1));
  } catch (const std::exception&) {
    return Status::InvalidArgument("malformed $ref \"" + ref + "\" at " + Child(pointer, "$ref"));
  }
  if (!document_.contains(jp)) {
    return Status::InvalidArgument("$ref \"" + ref + "\" at " + Child(pointer, "$ref") + " points to nothing");
  }
  return &document_.at(jp);
}

Result<int32_t> SchemaCompiler::CompileRef(const std::string& ref, const SchemaPath& pointer) {
  auto it = ref_rules_.find(ref);
  if (it != ref_rules_.end()) return it->second;
  KIMI_ASSIGN_OR_RETURN(const Json* target, Resolve(ref, pointer));
  // The rule exists before its body, so a reference back to it (recursion) finds it.
  const SchemaPath target_path = SchemaPath::Escaped(std::string_view(ref).substr(1));
  const int32_t rule =
      builder()->NewRule(ref.size() <= kRuleNamePointerBytes ? "$ref " + ref : "$ref #" + target_path.Short(kRuleNamePointerBytes));
  ref_rules_[ref] = rule;
  const int32_t end = builder()->NewState(rule);
  builder()->MarkEnd(end);
  KIMI_ASSIGN_OR_RETURN(int32_t body, Compile(*target, target_path));
  builder()->AddCall(builder()->RuleStart(rule), body, end);
  return rule;
}

Result<Json> SchemaCompiler::Merge(const Json& a_in, const Json& b_in, const SchemaPath& pointer) {
  KIMI_RETURN_IF_ERROR(Spend(pointer));
  // A merge follows $ref into its target, which may merge again: CheckSchemaLimits refused
  // cycles, and this keeps the recursion bounded whatever the document.
  if (merge_depth_ >= limits_.max_ref_chain) {
    return Status::InvalidArgument("allOf/$ref at " + DisplayPointer(pointer) + " merges references more than " +
                                   std::to_string(limits_.max_ref_chain) + " deep");
  }
  ++merge_depth_;
  struct MergeDepthGuard {
    size_t* depth;
    ~MergeDepthGuard() { --*depth; }
  } guard{&merge_depth_};
  Json a = a_in, b = b_in;
  for (Json* s : {&a, &b}) {
    if (s->is_boolean()) *s = s->get<bool>() ? Json::object() : Json{{"enum", Json::array()}};
    if (!s->is_object()) return Status::InvalidArgument("a subschema of allOf at " + DisplayPointer(pointer) + " is not an object");
    if (s->contains("$ref")) {
      KIMI_ASSIGN_OR_RETURN(const Json* target, Resolve((*s)["$ref"].get<std::string>(), pointer));
      KIMI_ASSIGN_OR_RETURN(*s, Merge(*target, Without(*s, {"$ref"}), pointer));
    }
  }
  Json out = a;
  for (const auto& [key, value] : b.items()) {
    if (!out.contains(key) || kAnnotations.count(key)) {
      if (!out.contains(key)) out[key] = value;
      continue;
    }
    Json& mine = out[key];
    if (mine == value) continue;
    if (key == "required") {
      for (const Json& name : value) {
        if (std::find(mine.begin(), mine.end(), name) == mine.end()) mine.push_back(name);
      }
    } else if (key == "properties") {
      if (a.contains("additionalProperties") || b.contains("additionalProperties")) {
        return Unsupported("allOf combining properties with additionalProperties", pointer.Child("allOf"));
      }
      for (const auto& [name, sub] : value.items()) {
        mine[name] = mine.contains(name) ? Json{{"allOf", Json::array({mine[name], sub})}} : sub;
      }
    } else if (key == "type") {
      std::set<std::string> x, y;
      for (const Json& t : mine.is_array() ? mine : Json::array({mine})) x.insert(t.get<std::string>());
      for (const Json& t : value.is_array() ? value : Json::array({value})) y.insert(t.get<std::string>());
      Json both = Json::array();
      for (const std::string& t : x) {
        if (y.count(t)) both.push_back(t);
        else if (t == "integer" && y.count("number")) both.push_back(t);
        else if (t == "number" && y.count("integer")) both.push_back("integer");
      }
      mine = both;
    } else if (key == "minimum" || key == "minLength" || key == "minItems" || key == "exclusiveMinimum") {
      mine = std::max(mine, value);
    } else if (key == "maximum" || key == "maxLength" || key == "maxItems" || key == "exclusiveMaximum") {
      mine = std::min(mine, value);
    } else {
      return Unsupported("allOf combining two different '" + key + "'", pointer.Child("allOf"));
    }
  }
  return out;
}

Result<int32_t> SchemaCompiler::Compile(const Json& schema, const SchemaPath& pointer) {
  if (++depth_ > kMaxSchemaDepth) {
    --depth_;
    return Status::InvalidArgument("the schema nests deeper than " + std::to_string(kMaxSchemaDepth) + " levels at " + DisplayPointer(pointer));
  }
  struct DepthGuard {
    int* depth;
    ~DepthGuard() { --*depth; }
  } guard{&depth_};
  KIMI_RETURN_IF_ERROR(Spend(pointer));

  if (schema.is_boolean()) {
    if (schema.get<bool>()) return values_->AnyValue();
    return builder()->NewRule(RuleName("false", pointer));  // no way to its end
  }
  if (!schema.is_object()) return Status::InvalidArgument("the schema at " + DisplayPointer(pointer) + " is not an object or a boolean");
  for (const auto& [key, value] : schema.items()) {
    if (!kAnnotations.count(key) && !kKeywords.count(key)) return Unsupported("keyword '" + key + "'", Child(pointer, key));
  }
  if (schema.contains("$ref")) {
    if (!schema["$ref"].is_string()) return Status::InvalidArgument("$ref at " + Child(pointer, "$ref") + " is not a string");
    const std::string& ref = schema["$ref"].get_ref<const std::string&>();
    if (!HasStructuralKeywords(schema, {"$ref"})) return CompileRef(ref, pointer);
    KIMI_ASSIGN_OR_RETURN(const Json* target, Resolve(ref, pointer));
    KIMI_ASSIGN_OR_RETURN(Json merged, Merge(*target, Without(schema, {"$ref"}), pointer));
    return Compile(merged, pointer);
  }
  if (schema.contains("allOf")) {
    const Json& all = schema["allOf"];
    if (!all.is_array() || all.empty()) return Status::InvalidArgument("allOf at " + Child(pointer, "allOf") + " must be a non-empty array");
    Json merged = Without(schema, {"allOf"});
    for (const Json& part : all) {
      KIMI_ASSIGN_OR_RETURN(merged, Merge(merged, part, pointer));
    }
    return Compile(merged, pointer);
  }
  if (schema.contains("anyOf") || schema.contains("oneOf")) {
    if (schema.contains("anyOf") && schema.contains("oneOf")) return Unsupported("combination of anyOf and oneOf", pointer);
    const std::string key = schema.contains("anyOf") ? "anyOf" : "oneOf";
    const Json& branches = schema[key];
    if (!branches.is_array() || branches.empty()) return Status::InvalidArgument(key + " at " + Child(pointer, key) + " must be a non-empty array");
    const bool merge = HasStructuralKeywords(schema, {"anyOf", "oneOf"});
    const Json rest = merge ? Without(schema, {"anyOf", "oneOf"}) : Json();
    const int32_t rule = builder()->NewRule(RuleName(key, pointer));
    const int32_t end = builder()->NewState(rule);
    builder()->MarkEnd(end);
    std::vector<std::set<std::string>> branch_types;
    const SchemaPath list = pointer.Child(key);
    for (size_t i = 0; i < branches.size(); ++i) {
      const SchemaPath at = list.Item(i);
      const Json* branch = &branches[i];
      Json merged;
      if (merge) {
        KIMI_ASSIGN_OR_RETURN(merged, Merge(rest, *branch, at));
        branch = &merged;
      }
      if (key == "oneOf") {
        // Exactly one branch may match: accepted only when the branches' types are disjoint.
        const Json* resolved = branch;
        for (size_t hops = 0; resolved->is_object() && resolved->contains("$ref") && resolved->size() == 1; ++hops) {
          if (hops >= limits_.max_ref_chain) {
            return Status::InvalidArgument("oneOf branch at " + at.Display() + " follows more than " +
                                           std::to_string(limits_.max_ref_chain) + " $refs");
          }
          if (!(*resolved)["$ref"].is_string()) return Status::InvalidArgument("$ref at " + Child(at, "$ref") + " is not a string");
          KIMI_ASSIGN_OR_RETURN(resolved, Resolve((*resolved)["$ref"].get<std::string>(), at));
        }
        if (!resolved->is_object()) return Unsupported("oneOf with a boolean branch", at);
        KIMI_ASSIGN_OR_RETURN(std::set<std::string> types, TypesOf(*resolved, at));
        if (types.count("number")) types.insert("integer");
        for (const std::set<std::string>& other : branch_types) {
          for (const std::string& t : types) {
            if (other.count(t)) return Unsupported("oneOf whose branches may both match (type " + t + ")", list);
          }
        }
        branch_types.push_back(types);
      }
      KIMI_ASSIGN_OR_RETURN(int32_t r, Compile(*branch, at));
      builder()->AddCall(builder()->RuleStart(rule), r, end);
    }
    return rule;
  }
  if (schema.contains("enum") || schema.contains("const")) return CompileLiterals(schema, pointer);

  KIMI_ASSIGN_OR_RETURN(std::set<std::string> types, TypesOf(schema, pointer));
  const int32_t rule = builder()->NewRule(RuleName("schema", pointer));
  const int32_t end = builder()->NewState(rule);
  builder()->MarkEnd(end);
  auto add = [&](int32_t r) { builder()->AddCall(builder()->RuleStart(rule), r, end); };
  if (types.count("null")) add(values_->Literal("null"));
  if (types.count("boolean")) {
    add(values_->Literal("true"));
    add(values_->Literal("false"));
  }
  if (types.count("number") || types.count("integer")) {
    KIMI_ASSIGN_OR_RETURN(int32_t r, CompileNumber(schema, pointer, !types.count("number")));
    add(r);
  }
  if (types.count("string")) {
    KIMI_ASSIGN_OR_RETURN(int32_t r, CompileString(schema, pointer));
    add(r);
  }
  if (types.count("object")) {
    KIMI_ASSIGN_OR_RETURN(int32_t r, CompileObject(schema, pointer));
    add(r);
  }
  if (types.count("array")) {
    KIMI_ASSIGN_OR_RETURN(int32_t r, CompileArray(schema, pointer));
    add(r);
  }
  return rule;
}

Result<int32_t> SchemaCompiler::CompileLiterals(const Json& schema, const SchemaPath& pointer) {
  std::vector<const Json*> values;  // the document's own, not copies
  if (schema.contains("const")) values.push_back(&schema["const"]);
  if (schema.contains("enum")) {
    if (!schema["enum"].is_array()) return Status::InvalidArgument("enum at " + Child(pointer, "enum") + " is not an array");
    if (schema.contains("const")) {
      const Json& c = schema["const"];
      if (std::find(schema["enum"].begin(), schema["enum"].end(), c) == schema["enum"].end()) values.clear();
    } else {
      for (const Json& v : schema["enum"]) values.push_back(&v);
    }
  }
  // TypesOf reads neither enum nor const.
  KIMI_ASSIGN_OR_RETURN(std::set<std::string> types, TypesOf(schema, pointer));
  KIMI_ASSIGN_OR_RETURN(NumberBounds bounds, BoundsOf(schema, pointer));
  KIMI_ASSIGN_OR_RETURN(int64_t min_length, NonNegativeInteger(schema, "minLength", 0, pointer));
  KIMI_ASSIGN_OR_RETURN(int64_t max_length, NonNegativeInteger(schema, "maxLength", kUnbounded, pointer));
  const int32_t rule = builder()->NewRule(RuleName("enum", pointer));
  const int32_t end = builder()->NewState(rule);
  builder()->MarkEnd(end);
  for (const Json* value : values) {
    const Json& v = *value;
    // A listed value must still satisfy the schema's other keywords.
    bool ok = false;
    if (v.is_null()) ok = types.count("null");
    if (v.is_boolean()) ok = types.count("boolean");
    if (v.is_string()) {
      const auto n = int64_t(kimi::text::CountCodePoints(v.get<std::string>()));
      ok = types.count("string") && n >= min_length && n <= max_length && !schema.contains("pattern") && !schema.contains("format");
    }
    if (v.is_number()) {
      const double x = v.get<double>();
      const bool integral = v.is_number_integer() || x == std::floor(x);
      ok = types.count("number") || (types.count("integer") && integral);
      if (bounds.minimum) ok = ok && (bounds.exclusive_minimum ? x > *bounds.minimum : x >= *bounds.minimum);
      if (bounds.maximum) ok = ok && (bounds.exclusive_maximum ? x < *bounds.maximum : x <= *bounds.maximum);
    }
    if (v.is_object()) ok = types.count("object") && !HasStructuralKeywords(schema, {"enum", "const", "type", "nullable"});
    if (v.is_array()) ok = types.count("array") && !HasStructuralKeywords(schema, {"enum", "const", "type", "nullable"});
    if (!ok) continue;
    // One state per byte: the state bound is checked per value, before a long one is written.
    const std::string text = v.dump();
    KIMI_RETURN_IF_ERROR(Reserve(text.size(), pointer));
    builder()->AddLiteral(builder()->RuleStart(rule), text, end);
  }
  return rule;
}

Result<int32_t> SchemaCompiler::CompileNumber(const Json& schema, const SchemaPath& pointer, bool integer) {
  KIMI_ASSIGN_OR_RETURN(NumberBounds bounds, BoundsOf(schema, pointer));
  // A range wholly past the magnitudes written (kMaxIntegerDigits digits, no exponent) is not a
  // contradiction in the schema but a limit of this compiler: said as such.
  const bool beyond = (bounds.minimum && *bounds.minimum > double(kMaxMagnitude)) ||
                      (bounds.maximum && *bounds.maximum < -double(kMaxMagnitude));
  const bool ordered = !bounds.minimum || !bounds.maximum || *bounds.minimum <= *bounds.maximum;
  if (beyond && ordered) {
    return Status::InvalidArgument("the " + std::string(integer ? "integer" : "number") + " at " + DisplayPointer(pointer) +
                                   " must lie beyond \u00b1999999999999999999: outputs are written with at most " +
                                   std::to_string(kMaxIntegerDigits) + " integer digits and no exponent");
  }
  const std::optional<std::string> pattern = integer ? IntegerPattern(bounds) : NumberPattern(bounds);
  const int32_t rule = builder()->NewRule(RuleName(integer ? "integer" : "number", pointer));
  const int32_t end = builder()->NewState(rule);
  builder()->MarkEnd(end);
  if (!pattern) return rule;  // no value in range: the rule has no way to its end
  KIMI_ASSIGN_OR_RETURN(CharNfa nfa, CompileRegex(*pattern));
  KIMI_RETURN_IF_ERROR(EmbedCharNfa(values_, nfa, builder()->RuleStart(rule), end, false, 0, kUnbounded, budget_.deadline)
                          .WithContext("the number at " + DisplayPointer(pointer)));
  builder()->MarkShareable(rule, "number " + *pattern);
  return rule;
}

Result<int32_t> SchemaCompiler::CompileString(const Json& schema, const SchemaPath& pointer) {
  KIMI_ASSIGN_OR_RETURN(int64_t min_length, NonNegativeInteger(schema, "minLength", 0, pointer));
  KIMI_ASSIGN_OR_RETURN(int64_t max_length, NonNegativeInteger(schema, "maxLength", kUnbounded, pointer));
  std::string pattern;
  if (schema.contains("pattern")) {
    if (!schema["pattern"].is_string()) return Status::InvalidArgument("pattern at " + Child(pointer, "pattern") + " is not a string");
    pattern = schema["pattern"].get<std::string>();
  }
  if (schema.contains("format")) {
    if (!pattern.empty()) return Unsupported("format together with pattern", Child(pointer, "format"));
    if (!schema["format"].is_string()) return Status::InvalidArgument("format at " + Child(pointer, "format") + " is not a string");
    KIMI_ASSIGN_OR_RETURN(pattern, FormatPattern(schema["format"].get<std::string>(), pointer));
  } else if (!schema.contains("pattern")) {
    return values_->String(min_length, max_length);
  }
  Result<CharNfa> nfa = CompileRegex(pattern);
  if (!nfa.ok()) return nfa.status().WithContext("unsupported JSON Schema pattern at " + Child(pointer, "pattern"));
  const int32_t rule = builder()->NewRule(RuleName("string", pointer));
  const int32_t open = builder()->NewState(rule), close = builder()->NewState(rule), end = builder()->NewState(rule);
  builder()->MarkEnd(end);
  builder()->AddLiteral(builder()->RuleStart(rule), "\"", open);
  builder()->AddLiteral(close, "\"", end);
  Status embedded = EmbedCharNfa(values_, *nfa, open, close, true, min_length, max_length, budget_.deadline);
  if (!embedded.ok()) return embedded.WithContext("unsupported JSON Schema combination at " + DisplayPointer(pointer));
  builder()->MarkShareable(rule, "string /" + pattern + "/ [" + std::to_string(min_length) + "," + std::to_string(max_length) + "]");
  return rule;
}

Result<int32_t> SchemaCompiler::CompileObject(const Json& schema, const SchemaPath& pointer) {
  // Names and schemas are the document's own (views and pointers, not copies).
  struct Property {
    std::string_view name;
    const Json* schema;
    bool declared;  // in `properties`; else required and governed by additionalProperties
    bool required;
  };
  std::vector<Property> properties;
  std::set<std::string_view> required;
  if (schema.contains("required")) {
    if (!schema["required"].is_array()) return Status::InvalidArgument("required at " + Child(pointer, "required") + " is not an array");
    for (const Json& name : schema["required"]) {
      if (!name.is_string()) return Status::InvalidArgument("required at " + Child(pointer, "required") + " lists a non-string");
      required.insert(name.get_ref<const std::string&>());
    }
  }
  const Json& additional = schema.contains("additionalProperties") ? schema["additionalProperties"] : AnyValueSchema();
  if (schema.contains("properties")) {
    if (!schema["properties"].is_object()) return Status::InvalidArgument("properties at " + Child(pointer, "properties") + " is not an object");
    for (const auto& [name, sub] : schema["properties"].items()) {
      properties.push_back({name, &sub, true, required.count(name) > 0});
    }
  }
  std::set<std::string_view> declared;
  for (const Property& p : properties) declared.insert(p.name);
  for (std::string_view name : required) {  // required but not declared: governed by additionalProperties
    if (!declared.count(name)) properties.push_back({name, &additional, false, true});
  }
  // Every name is written out, one state per byte, twice: refused here, before anything below
  // is compiled, when the names alone pass the budget.
  size_t name_bytes = 0;
  for (const Property& p : properties) name_bytes += p.name.size() + 4;
  KIMI_RETURN_IF_ERROR(Reserve(2 * name_bytes, pointer));
  GrammarBuilder& b = *builder();
  const int32_t rule = b.NewRule(RuleName("object", pointer));
  const int32_t end = b.NewState(rule);
  b.MarkEnd(end);
  // after[i][written]: before property i, with or without a property already written.
  std::vector<std::array<int32_t, 2>> after(properties.size() + 1);
  for (auto& pair : after) pair = {b.NewState(rule), b.NewState(rule)};
  b.AddLiteral(b.RuleStart(rule), "{", after[0][0]);
  std::vector<std::string_view> names;
  const SchemaPath declared_path = pointer.Child("properties"), additional_path = pointer.Child("additionalProperties");
  for (size_t i = 0; i < properties.size(); ++i) {
    const Property& p = properties[i];
    names.push_back(p.name);
    const SchemaPath at = p.declared ? declared_path.Child(p.name) : additional_path;
    KIMI_RETURN_IF_ERROR(Reserve(2 * (p.name.size() + 4), at));
    KIMI_ASSIGN_OR_RETURN(int32_t value, Compile(*p.schema, at));
    KIMI_RETURN_IF_ERROR(Reserve(2 * (p.name.size() + 4), at));
    for (int written = 0; written < 2; ++written) {
      if (!p.required) b.AddEpsilon(after[i][size_t(written)], after[i + 1][size_t(written)]);
      const int32_t colon = b.NewState(rule);
      b.AddLiteral(after[i][size_t(written)], (written ? "," : "") + QuotedKey(p.name) + ":", colon);
      b.AddCall(colon, value, after[i + 1][1]);
    }
  }
  const auto& last = after.back();
  b.AddLiteral(last[0], "}", end);
  b.AddLiteral(last[1], "}", end);
  if (!(additional.is_boolean() && !additional.get<bool>())) {
    KIMI_ASSIGN_OR_RETURN(int32_t value, Compile(additional, additional_path));
    size_t other_bytes = 0;
    for (std::string_view name : names) other_bytes += name.size();
    KIMI_RETURN_IF_ERROR(Reserve(2 * (other_bytes + 8), additional_path));
    for (int written = 0; written < 2; ++written) {
      const int32_t name = b.NewState(rule), closed = b.NewState(rule), colon = b.NewState(rule);
      b.AddLiteral(last[size_t(written)], written ? ",\"" : "\"", name);
      AddOtherName(&b, names, name, closed);
      b.AddLiteral(closed, ":", colon);
      b.AddCall(colon, value, last[1]);
    }
  }
  return rule;
}

Result<int32_t> SchemaCompiler::CompileArray(const Json& schema, const SchemaPath& pointer) {
  KIMI_ASSIGN_OR_RETURN(int64_t min_items, NonNegativeInteger(schema, "minItems", 0, pointer));
  KIMI_ASSIGN_OR_RETURN(int64_t max_items, NonNegativeInteger(schema, "maxItems", kUnbounded, pointer));
  std::vector<int32_t> prefix;
  if (schema.contains("prefixItems")) {
    if (!schema["prefixItems"].is_array()) return Status::InvalidArgument("prefixItems at " + Child(pointer, "prefixItems") + " is not an array");
    const SchemaPath list = pointer.Child("prefixItems");
    for (size_t i = 0; i < schema["prefixItems"].size(); ++i) {
      KIMI_ASSIGN_OR_RETURN(int32_t r, Compile(schema["prefixItems"][i], list.Item(i)));
      prefix.push_back(r);
    }
  }
  const Json& items = schema.contains("items") ? schema["items"] : AnyValueSchema();
  GrammarBuilder& b = *builder();
  const int32_t rule = b.NewRule(RuleName("array", pointer));
  const int32_t end = b.NewState(rule);
  b.MarkEnd(end);
  if (min_items > max_items) return rule;
  const int64_t saturate = max_items == kUnbounded ? min_items : max_items;
  const EpsilonEdge count_item{-1, 0, kUnbounded, CounterAction::kIncrement, saturate};
  // Prefix items one state each (the counter follows, for the loop after them).
  int32_t at = b.NewState(rule);
  b.AddLiteral(b.RuleStart(rule), "[", at);
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (int64_t(i) >= min_items) b.AddLiteral(at, "]", end);
    if (int64_t(i) >= max_items) return rule;
    const int32_t before = b.NewState(rule), after = b.NewState(rule), next = b.NewState(rule);
    b.AddLiteral(at, i ? "," : "", before);
    b.AddCall(before, prefix[i], after);
    EpsilonEdge counted = count_item;
    counted.target = next;
    b.AddEpsilon(after, counted);
    at = next;
  }
  if (items.is_boolean() && !items.get<bool>()) {
    if (int64_t(prefix.size()) >= min_items) b.AddLiteral(at, "]", end);
    return rule;
  }
  KIMI_ASSIGN_OR_RETURN(int32_t item, Compile(items, pointer.Child("items")));
  // The loop: at_least/below guards compare the counter (items so far) with the bounds.
  const int32_t head = prefix.empty() ? b.NewState(rule) : at;
  if (prefix.empty()) {
    b.AddEpsilon(at, head);
    if (min_items == 0) b.AddLiteral(head, "]", end);
  }
  const int32_t loop = b.NewState(rule), close = b.NewState(rule), before = b.NewState(rule), after = b.NewState(rule);
  if (prefix.empty() && max_items > 0) {
    const int32_t first_after = b.NewState(rule);
    b.AddCall(head, item, first_after);
    EpsilonEdge counted = count_item;
    counted.target = loop;
    b.AddEpsilon(first_after, counted);
  } else if (!prefix.empty()) {
    b.AddEpsilon(head, loop);
  }
  b.AddEpsilon(loop, EpsilonEdge{close, min_items});
  b.AddLiteral(close, "]", end);
  b.AddEpsilon(loop, EpsilonEdge{before, 0, max_items});
  const int32_t comma = b.NewState(rule);
  b.AddLiteral(before, ",", comma);
  b.AddCall(comma, item, after);
  EpsilonEdge counted = count_item;
  counted.target = loop;
  b.AddEpsilon(after, counted);
  return rule;
}

}  // namespace kimi::structured
