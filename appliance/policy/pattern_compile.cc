// CompilePattern: the pattern parsed into a tree (recursive descent, nesting bounded), then
// written out as a program, counted repetitions copied, the size checked as it grows.
#include <algorithm>
#include <cctype>
#include <string>

#include "kimi/hex.h"
#include "policy/pattern_program.h"

namespace kimi::policy {
namespace {

using Op = PatternInstruction::Op;
using Assertion = PatternInstruction::Assertion;
using ByteSet = std::bitset<256>;

constexpr int kMaxGroupDepth = 32;
constexpr int kMaxDigits = 9;
constexpr int64_t kUnbounded = -1;
// Splits, jumps and assertions besides the byte instructions.
constexpr size_t kMaxInstructions = 8 * kMaxPatternStates;

struct Node {
  enum class Kind { kBytes, kAssert, kConcat, kAlternation, kRepeat } kind = Kind::kConcat;
  int32_t set = -1;
  Assertion assertion = Assertion::kTextStart;
  std::vector<size_t> children;  // kConcat, kAlternation; kRepeat: one
  int64_t min = 0, max = kUnbounded;
  bool greedy = true;
};

ByteSet Range(int lo, int hi) {
  ByteSet set;
  for (int c = lo; c <= hi; ++c) set.set(size_t(c));
  return set;
}
ByteSet Bytes(std::string_view bytes) {
  ByteSet set;
  for (char c : bytes) set.set(uint8_t(c));
  return set;
}
ByteSet Digits() { return Range('0', '9'); }
ByteSet WordBytes() {
  ByteSet set;
  for (int b = 0; b < 256; ++b) set.set(size_t(b), IsPatternWordByte(uint8_t(b)));
  return set;
}
ByteSet Spaces() { return Bytes(" \t\n\v\f\r"); }

// The byte of a set that holds one; -1 for any other set.
int OnlyByte(const ByteSet& set) {
  if (set.count() != 1) return -1;
  for (int b = 0;; ++b) {
    if (set.test(size_t(b))) return b;
  }
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Parser {
 public:
  explicit Parser(std::string_view pattern) : p_(pattern) {}

  Result<size_t> ParseAll() {
    KIMI_ASSIGN_OR_RETURN(size_t root, Alternation(0));
    if (i_ < p_.size()) return Fail("an unmatched ')'");
    return root;
  }
  std::vector<Node>& nodes() { return nodes_; }
  std::vector<ByteSet>& sets() { return sets_; }

 private:
  Status Fail(const std::string& what) const {
    return Status::InvalidArgument("the pattern has " + what + " at offset " + std::to_string(i_));
  }
  bool AtEnd() const { return i_ >= p_.size(); }
  char Peek() const { return p_[i_]; }

  size_t Add(Node node) {
    nodes_.push_back(std::move(node));
    return nodes_.size() - 1;
  }
  size_t AddBytes(const ByteSet& set) {
    sets_.push_back(set);
    Node n;
    n.kind = Node::Kind::kBytes;
    n.set = int32_t(sets_.size() - 1);
    return Add(std::move(n));
  }
  size_t AddAssert(Assertion a) {
    Node n;
    n.kind = Node::Kind::kAssert;
    n.assertion = a;
    return Add(std::move(n));
  }

  Result<size_t> Alternation(int depth) {
    std::vector<size_t> branches;
    KIMI_ASSIGN_OR_RETURN(size_t first, Concat(depth));
    branches.push_back(first);
    while (!AtEnd() && Peek() == '|') {
      ++i_;
      KIMI_ASSIGN_OR_RETURN(size_t next, Concat(depth));
      branches.push_back(next);
    }
    if (branches.size() == 1) return branches[0];
    Node n;
    n.kind = Node::Kind::kAlternation;
    n.children = std::move(branches);
    return Add(std::move(n));
  }

  Result<size_t> Concat(int depth) {
    Node n;
    n.kind = Node::Kind::kConcat;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      KIMI_ASSIGN_OR_RETURN(size_t atom, Atom(depth));
      KIMI_ASSIGN_OR_RETURN(atom, Quantified(atom));
      n.children.push_back(atom);
    }
    return Add(std::move(n));
  }

  // {n}, {n,}, {n,m} at i_ (on '{'); false, i_ unchanged, when the brace is not a quantifier.
  Result<bool> Braces(int64_t* min, int64_t* max) {
    size_t j = i_ + 1;
    auto number = [&](int64_t* value) -> Result<bool> {
      const size_t start = j;
      while (j < p_.size() && IsDigit(p_[j])) ++j;
      if (j == start) return false;
      if (j - start > size_t(kMaxDigits)) {
        return Status::InvalidArgument("the number " + std::string(p_.substr(start, j - start)) +
                                       " (a repetition count) has more than 9 digits");
      }
      *value = std::stoll(std::string(p_.substr(start, j - start)));
      return true;
    };
    KIMI_ASSIGN_OR_RETURN(bool has_min, number(min));
    if (!has_min) return false;
    *max = *min;
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      KIMI_ASSIGN_OR_RETURN(bool has_max, number(max));
      if (!has_max) *max = kUnbounded;
    }
    if (j >= p_.size() || p_[j] != '}') return false;
    i_ = j + 1;
    return true;
  }

  Result<size_t> Quantified(size_t atom) {
    bool quantified = false;
    while (!AtEnd()) {
      int64_t min = 0, max = kUnbounded;
      const char c = Peek();
      if (c == '*') {
        ++i_;
      } else if (c == '+') {
        min = 1;
        ++i_;
      } else if (c == '?') {
        max = 1;
        ++i_;
      } else if (c == '{') {
        KIMI_ASSIGN_OR_RETURN(bool braces, Braces(&min, &max));
        if (!braces) return Fail("a '{' that is not a quantifier (write \\{)");
        if (max != kUnbounded && min > max) return Fail("a quantifier {n,m} with n above m");
      } else {
        break;
      }
      if (quantified) return Fail("a quantifier after a quantifier");
      if (nodes_[atom].kind == Node::Kind::kAssert) return Fail("a quantifier on an assertion");
      quantified = true;
      Node n;
      n.kind = Node::Kind::kRepeat;
      n.children = {atom};
      n.min = min;
      n.max = max;
      if (!AtEnd() && Peek() == '?') {
        n.greedy = false;
        ++i_;
      }
      atom = Add(std::move(n));
    }
    return atom;
  }

  Result<size_t> Atom(int depth) {
    const char c = Peek();
    switch (c) {
      case '(': {
        ++i_;
        if (!AtEnd() && Peek() == '?') {
          if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
            i_ += 2;
          } else if (i_ + 1 < p_.size() && (p_[i_ + 1] == '=' || p_[i_ + 1] == '!')) {
            return Fail("a lookahead, which is not supported (it needs backtracking)");
          } else {
            return Fail("a '(?' group other than (?:...), which is not supported");
          }
        }
        if (depth + 1 > kMaxGroupDepth) return Fail("groups nested deeper than " + std::to_string(kMaxGroupDepth));
        KIMI_ASSIGN_OR_RETURN(size_t inner, Alternation(depth + 1));
        if (AtEnd() || Peek() != ')') return Fail("a '(' without its ')'");
        ++i_;
        return inner;
      }
      case '[':
        return Class();
      case '.':
        ++i_;
        return AddBytes(~Bytes("\n\r"));
      case '^':
        ++i_;
        return AddAssert(Assertion::kTextStart);
      case '$':
        ++i_;
        return AddAssert(Assertion::kTextEnd);
      case '*':
      case '+':
      case '?':
        return Fail("a quantifier with nothing to repeat");
      case '{': {
        int64_t min = 0, max = 0;
        const size_t at = i_;
        KIMI_ASSIGN_OR_RETURN(bool braces, Braces(&min, &max));
        i_ = at;
        return Fail(braces ? "a quantifier with nothing to repeat" : "a '{' that is not a quantifier (write \\{)");
      }
      case '\\':
        return Escape();
      default:
        ++i_;
        return AddBytes(Bytes(std::string_view(&c, 1)));
    }
  }

  // After a backslash outside a class.
  Result<size_t> Escape() {
    ++i_;
    if (AtEnd()) return Fail("a '\\' at the end");
    switch (Peek()) {
      case 'b':
        ++i_;
        return AddAssert(Assertion::kWordBoundary);
      case 'B':
        ++i_;
        return AddAssert(Assertion::kNotWordBoundary);
      default: {
        KIMI_ASSIGN_OR_RETURN(ByteSet set, EscapedSet(/*in_class=*/false));
        return AddBytes(set);
      }
    }
  }

  // The bytes of the escape at i_ (after its backslash), for \b and \B only inside a class.
  Result<ByteSet> EscapedSet(bool in_class) {
    const char c = Peek();
    ++i_;
    switch (c) {
      case 'd': return Digits();
      case 'D': return ~Digits();
      case 'w': return WordBytes();
      case 'W': return ~WordBytes();
      case 's': return Spaces();
      case 'S': return ~Spaces();
      case 't': return Bytes("\t");
      case 'n': return Bytes("\n");
      case 'v': return Bytes("\v");
      case 'f': return Bytes("\f");
      case 'r': return Bytes("\r");
      case 'b':
        if (in_class) return Bytes("\b");
        break;
      case '0':
        if (!AtEnd() && IsDigit(Peek())) return Fail("an octal escape \\0N, which is not supported");
        return Range(0, 0);
      case 'c':
        if (AtEnd() || !std::isalpha(uint8_t(Peek()))) return Fail("\\c without a letter");
        {
          const int control = p_[i_++] % 32;
          return Range(control, control);
        }
      case 'x':
      case 'u': {
        const int digits = c == 'x' ? 2 : 4;
        int value = 0;
        for (int k = 0; k < digits; ++k) {
          const int h = i_ < p_.size() ? HexDigitValue(p_[i_]) : -1;
          if (h < 0) return Fail(std::string("\\") + c + " without " + std::to_string(digits) + " hex digits");
          value = value * 16 + h;
          ++i_;
        }
        if (value > 0xFF) return Fail("a character above \\u00FF (patterns match bytes; write UTF-8 as its bytes)");
        return Range(value, value);
      }
      default:
        break;
    }
    --i_;
    if (IsDigit(c)) return Fail("a backreference, which is not supported (it needs backtracking)");
    if (std::isalnum(uint8_t(c))) return Fail(std::string("the unknown escape \\") + c);
    ++i_;
    return Bytes(std::string_view(&c, 1));
  }

  // A [:name:] inside a class, at i_ (on the inner '[').
  Result<ByteSet> NamedClass() {
    const size_t close = p_.find(":]", i_ + 2);
    if (close == std::string_view::npos) return Fail("a '[:' without ':]'");
    const std::string_view name = p_.substr(i_ + 2, close - i_ - 2);
    i_ = close + 2;
    int (*test)(int) = nullptr;
    if (name == "alpha") test = [](int b) { return std::isalpha(b); };
    if (name == "digit") test = [](int b) { return std::isdigit(b); };
    if (name == "alnum") test = [](int b) { return std::isalnum(b); };
    if (name == "upper") test = [](int b) { return std::isupper(b); };
    if (name == "lower") test = [](int b) { return std::islower(b); };
    if (name == "space") test = [](int b) { return std::isspace(b); };
    if (name == "blank") test = [](int b) { return std::isblank(b); };
    if (name == "punct") test = [](int b) { return std::ispunct(b); };
    if (name == "xdigit") test = [](int b) { return std::isxdigit(b); };
    if (name == "cntrl") test = [](int b) { return std::iscntrl(b); };
    if (name == "print") test = [](int b) { return std::isprint(b); };
    if (name == "graph") test = [](int b) { return std::isgraph(b); };
    if (name == "w") return WordBytes();
    if (test == nullptr) return Fail("the unknown class [:" + std::string(name) + ":]");
    ByteSet set;
    for (int b = 0; b < 128; ++b) {
      if (test(b)) set.set(size_t(b));
    }
    return set;
  }

  // One member of a class at i_: a byte (*single set) or a set of bytes.
  Result<ByteSet> ClassMember(int* single) {
    *single = -1;
    if (Peek() == '[' && i_ + 1 < p_.size() && p_[i_ + 1] == ':') return NamedClass();
    if (Peek() == '[' && i_ + 1 < p_.size() && (p_[i_ + 1] == '.' || p_[i_ + 1] == '=')) {
      return Fail("a collating element or equivalence class, which is not supported");
    }
    if (Peek() == '\\') {
      ++i_;
      if (AtEnd()) return Fail("a '\\' at the end");
      if (Peek() == 'B') return Fail("\\B inside a class");
      KIMI_ASSIGN_OR_RETURN(ByteSet set, EscapedSet(/*in_class=*/true));
      *single = OnlyByte(set);
      return set;
    }
    *single = uint8_t(p_[i_++]);
    return Range(*single, *single);
  }

  Result<size_t> Class() {
    ++i_;  // '['
    bool negate = false;
    if (!AtEnd() && Peek() == '^') {
      negate = true;
      ++i_;
    }
    ByteSet set;
    while (true) {
      if (AtEnd()) return Fail("a '[' without its ']'");
      if (Peek() == ']') break;
      int lo = -1;
      KIMI_ASSIGN_OR_RETURN(ByteSet member, ClassMember(&lo));
      if (i_ + 1 < p_.size() && Peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        int hi = -1;
        KIMI_ASSIGN_OR_RETURN(ByteSet upper, ClassMember(&hi));
        (void)upper;
        if (lo < 0 || hi < 0) return Fail("a range with a class at one end");
        if (lo > hi) return Fail("a range out of order");
        member = Range(lo, hi);
      }
      set |= member;
    }
    ++i_;  // ']'
    return AddBytes(negate ? ~set : set);
  }

  std::string_view p_;
  size_t i_ = 0;
  std::vector<Node> nodes_;
  std::vector<ByteSet> sets_;
};

class Emitter {
 public:
  Emitter(const std::vector<Node>& nodes, PatternProgram* program) : nodes_(nodes), program_(program) {}

  Status Emit(size_t id) {
    const Node& n = nodes_[id];
    switch (n.kind) {
      case Node::Kind::kBytes: {
        if (++byte_instructions_ > kMaxPatternStates) return TooLarge();
        PatternInstruction in;
        in.op = Op::kByte;
        in.set = n.set;
        return Append(in);
      }
      case Node::Kind::kAssert: {
        PatternInstruction in;
        in.op = Op::kAssert;
        in.assertion = n.assertion;
        return Append(in);
      }
      case Node::Kind::kConcat:
        for (size_t child : n.children) KIMI_RETURN_IF_ERROR(Emit(child));
        return Status::OK();
      case Node::Kind::kAlternation: {
        std::vector<size_t> to_end;
        for (size_t b = 0; b < n.children.size(); ++b) {
          size_t split = 0;
          if (b + 1 < n.children.size()) {
            split = Here();
            KIMI_RETURN_IF_ERROR(Append({Op::kSplit}));
            code()[split].next = int32_t(Here());
          }
          KIMI_RETURN_IF_ERROR(Emit(n.children[b]));
          if (b + 1 < n.children.size()) {
            to_end.push_back(Here());
            KIMI_RETURN_IF_ERROR(Append({Op::kJump}));
            code()[split].other = int32_t(Here());
          }
        }
        for (size_t jump : to_end) code()[jump].next = int32_t(Here());
        return Status::OK();
      }
      case Node::Kind::kRepeat:
        return EmitRepeat(n);
    }
    return Status::OK();
  }

  Status Finish() { return Append({Op::kMatch}); }

 private:
  Status TooLarge() const {
    return Status::InvalidArgument("the pattern repeats too much: its automaton would exceed " +
                                   std::to_string(kMaxPatternStates) + " states (lower the {n,m} counts)");
  }
  std::vector<PatternInstruction>& code() { return program_->code; }
  size_t Here() const { return program_->code.size(); }
  Status Append(PatternInstruction in) {
    if (Here() >= kMaxInstructions) return TooLarge();
    if (in.op == Op::kByte || in.op == Op::kAssert) in.next = int32_t(Here() + 1);  // they fall through
    program_->code.push_back(in);
    return Status::OK();
  }
  // A split at `at` whose preferred branch is the body when greedy.
  void PointSplit(size_t at, size_t body, size_t exit, bool greedy) {
    code()[at].next = int32_t(greedy ? body : exit);
    code()[at].other = int32_t(greedy ? exit : body);
  }

  Status EmitRepeat(const Node& n) {
    const size_t body = n.children[0];
    // The body once: a body that writes nothing needs no copies.
    const size_t before = Here();
    const int64_t copies = n.min > 0 ? n.min : 0;
    if (copies > 0) KIMI_RETURN_IF_ERROR(Emit(body));
    if (Here() == before && copies > 0) return Status::OK();
    for (int64_t k = 1; k < copies; ++k) KIMI_RETURN_IF_ERROR(Emit(body));
    if (n.max == kUnbounded) {
      const size_t loop = Here();
      KIMI_RETURN_IF_ERROR(Append({Op::kSplit}));
      KIMI_RETURN_IF_ERROR(Emit(body));
      PatternInstruction back;
      back.op = Op::kJump;
      back.next = int32_t(loop);
      KIMI_RETURN_IF_ERROR(Append(back));
      PointSplit(loop, loop + 1, Here(), n.greedy);
      return Status::OK();
    }
    // Each optional copy nests inside the previous: x(x(x)?)?, every split leaving to the end.
    std::vector<size_t> splits;
    for (int64_t k = copies; k < n.max; ++k) {
      splits.push_back(Here());
      KIMI_RETURN_IF_ERROR(Append({Op::kSplit}));
      const size_t start = Here();
      KIMI_RETURN_IF_ERROR(Emit(body));
      if (Here() == start) break;  // an empty body: one optional copy is all of them
    }
    for (size_t s : splits) PointSplit(s, s + 1, Here(), n.greedy);
    return Status::OK();
  }

  const std::vector<Node>& nodes_;
  PatternProgram* program_;
  size_t byte_instructions_ = 0;
};

// The bytes a match can start with (all of them when the program can match empty text).
ByteSet FirstBytes(const PatternProgram& program) {
  ByteSet first;
  bool matches_empty = false;
  std::vector<bool> seen(program.code.size(), false);
  std::vector<int32_t> stack;
  FollowChoices(
      program, 0, &stack, [](Assertion) { return true; },
      [&seen](int32_t pc) {
        if (seen[size_t(pc)]) return false;
        seen[size_t(pc)] = true;
        return true;
      },
      [&](int32_t pc) {
        const PatternInstruction& in = program.code[size_t(pc)];
        if (in.op == Op::kMatch) {
          matches_empty = true;
        } else {
          first |= program.byte_sets[size_t(in.set)];
        }
      });
  return matches_empty ? ByteSet().set() : first;
}

// The bytes every match starts with: the program's first instructions up to the first choice,
// while each consumes one given byte (assertions consume nothing and are passed over).
std::string LiteralPrefix(const PatternProgram& program) {
  std::string literal;
  for (const PatternInstruction& in : program.code) {
    if (in.op == Op::kAssert) continue;
    const int byte = in.op == Op::kByte ? OnlyByte(program.byte_sets[size_t(in.set)]) : -1;
    if (byte < 0) break;
    literal.push_back(char(byte));
  }
  return literal;
}

}  // namespace

Result<PatternProgram> CompilePattern(std::string_view pattern) {
  if (pattern.size() > kMaxPatternBytes) {
    return Status::InvalidArgument("the pattern is longer than " + std::to_string(kMaxPatternBytes) + " bytes");
  }
  Parser parser(pattern);
  KIMI_ASSIGN_OR_RETURN(size_t root, parser.ParseAll());
  PatternProgram program;
  program.byte_sets = std::move(parser.sets());
  Emitter emitter(parser.nodes(), &program);
  KIMI_RETURN_IF_ERROR(emitter.Emit(root));
  KIMI_RETURN_IF_ERROR(emitter.Finish());
  program.first_bytes = FirstBytes(program);
  program.literal_prefix = LiteralPrefix(program);
  return program;
}

}  // namespace kimi::policy
