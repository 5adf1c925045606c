#include "structured/regex.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace kimi::structured {
namespace {

struct Node {
  enum class Kind { kEmpty, kChars, kConcat, kAlternation, kRepeat } kind = Kind::kEmpty;
  CharClass chars;
  std::vector<std::unique_ptr<Node>> children;
  int64_t min = 0, max = 0;  // kRepeat; max -1: unbounded
};
using NodePtr = std::unique_ptr<Node>;

NodePtr MakeChars(CharClass chars) {
  auto n = std::make_unique<Node>();
  n->kind = Node::Kind::kChars;
  n->chars = std::move(chars);
  return n;
}

CharClass Digits() { return CharClass::Of('0', '9'); }
CharClass WordChars() {
  CharClass c = CharClass::Of('a', 'z');
  c.Add('A', 'Z');
  c.Add('0', '9');
  c.Add('_', '_');
  return c;
}
CharClass Spaces() {
  CharClass c = CharClass::Of('\t', '\r');
  c.Add(' ', ' ');
  for (char32_t u : {0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF}) c.Add(u, u);
  c.Add(0x2000, 0x200A);
  return c;
}
CharClass Ascii() { return CharClass::Of(0, 0x7F); }
CharClass NotLineTerminator() {
  CharClass terminators = CharClass::Of('\n', '\n');
  terminators.Add('\r', '\r');
  terminators.Add(0x2028, 0x2029);
  return terminators.ComplementWithin(CharClass::AnyChar());
}

class Parser {
 public:
  explicit Parser(std::string_view pattern) : p_(pattern) {}

  Result<NodePtr> Parse() {
    if (p_.size() > kMaxRegexPatternBytes) {
      return Status::InvalidArgument("pattern: longer than " + std::to_string(kMaxRegexPatternBytes) + " bytes");
    }
    if (Peek() == U'^') {
      Next();
      anchored_start_ = true;
    }
    KIMI_ASSIGN_OR_RETURN(NodePtr body, Alternation());
    if (pos_ < p_.size()) return Error("unbalanced ')'");
    return body;
  }
  bool anchored_start() const { return anchored_start_; }
  bool anchored_end() const { return anchored_end_; }

 private:
  Status Error(std::string what) const {
    return Status::InvalidArgument("pattern " + std::string(p_) + ": " + what + " (at byte " + std::to_string(pos_) + ")");
  }

  char32_t Peek() const {
    if (pos_ >= p_.size()) return 0xFFFFFFFF;
    size_t at = pos_;
    return Decode(&at);
  }
  char32_t Next() { return Decode(&pos_); }
  char32_t Decode(size_t* at) const {
    const auto b = static_cast<unsigned char>(p_[*at]);
    int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    char32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (int i = 1; i < n && *at + size_t(i) < p_.size(); ++i) c = (c << 6) | (static_cast<unsigned char>(p_[*at + size_t(i)]) & 0x3F);
    *at += size_t(n);
    return c;
  }

  Result<NodePtr> Alternation() {
    auto alt = std::make_unique<Node>();
    alt->kind = Node::Kind::kAlternation;
    KIMI_ASSIGN_OR_RETURN(NodePtr first, Concatenation());
    alt->children.push_back(std::move(first));
    while (Peek() == U'|') {
      Next();
      KIMI_ASSIGN_OR_RETURN(NodePtr next, Concatenation());
      alt->children.push_back(std::move(next));
    }
    if (alt->children.size() == 1) return std::move(alt->children[0]);
    return alt;
  }

  Result<NodePtr> Concatenation() {
    auto cat = std::make_unique<Node>();
    cat->kind = Node::Kind::kConcat;
    while (pos_ < p_.size() && Peek() != U'|' && Peek() != U')') {
      if (Peek() == U'$') {
        Next();
        if (pos_ != p_.size()) return Error("'$' is supported only at the end");
        anchored_end_ = true;
        break;
      }
      KIMI_ASSIGN_OR_RETURN(NodePtr atom, Atom());
      KIMI_ASSIGN_OR_RETURN(atom, Quantified(std::move(atom)));
      cat->children.push_back(std::move(atom));
    }
    return cat;
  }

  Result<NodePtr> Quantified(NodePtr atom) {
    // Stacked quantifiers nest like groups ("a{2}{2}{2}"): bounded the same way.
    for (int stacked = 0;; ++stacked) {
      if (stacked > kMaxRegexGroupDepth) return Error("quantifiers stacked deeper than " + std::to_string(kMaxRegexGroupDepth));
      const char32_t c = Peek();
      int64_t min = 0, max = -1;
      if (c == U'*') {
        Next();
      } else if (c == U'+') {
        Next();
        min = 1;
      } else if (c == U'?') {
        Next();
        max = 1;
      } else if (c == U'{') {
        const size_t save = pos_;
        Next();
        std::optional<int64_t> lo = Number();
        if (!lo) {  // a literal '{', as ECMA-262's Annex B reads it
          pos_ = save;
          return atom;
        }
        min = *lo;
        max = min;
        if (Peek() == U',') {
          Next();
          std::optional<int64_t> hi = Number();
          max = hi ? *hi : -1;
        }
        if (Peek() != U'}') return Error("malformed {n,m} quantifier");
        Next();
        if (min > kMaxRegexRepeat || max > kMaxRegexRepeat) {
          return Error("a repetition count above " + std::to_string(kMaxRegexRepeat));
        }
        if (max >= 0 && max < min) return Error("quantifier {n,m} with m < n");
      } else {
        return atom;
      }
      if (Peek() == U'?') Next();  // lazy: same language
      auto rep = std::make_unique<Node>();
      rep->kind = Node::Kind::kRepeat;
      rep->min = min;
      rep->max = max;
      rep->children.push_back(std::move(atom));
      atom = std::move(rep);
    }
  }

  std::optional<int64_t> Number() {
    int64_t v = 0;
    bool any = false;
    while (Peek() >= U'0' && Peek() <= U'9') {
      v = v * 10 + (Next() - U'0');
      if (v > kMaxRegexRepeat) v = kMaxRegexRepeat + 1;  // refused by the caller, never wrapped
      any = true;
    }
    if (!any) return std::nullopt;
    return v;
  }

  Result<NodePtr> Atom() {
    const char32_t c = Next();
    switch (c) {
      case U'(': {
        if (++group_depth_ > kMaxRegexGroupDepth) {
          return Error("groups nested deeper than " + std::to_string(kMaxRegexGroupDepth) + " levels");
        }
        if (Peek() == U'?') {
          Next();
          if (Peek() != U':') return Error("lookaround and named groups are not supported");
          Next();
        }
        KIMI_ASSIGN_OR_RETURN(NodePtr inner, Alternation());
        if (Peek() != U')') return Error("missing ')'");
        Next();
        --group_depth_;
        return inner;
      }
      case U'[': return Class();
      case U'.': return MakeChars(NotLineTerminator());
      case U'^': return Error("'^' is supported only at the start");
      case U'*': case U'+': case U'?': return Error("a quantifier without an operand");
      case U'\\': {
        KIMI_ASSIGN_OR_RETURN(CharClass chars, Escape(/*in_class=*/false, nullptr));
        return MakeChars(std::move(chars));
      }
      default: return MakeChars(CharClass::Of(c, c));
    }
  }

  // After a backslash. *shorthand is set when the escape is \d \w \s or a negation of one.
  Result<CharClass> Escape(bool in_class, bool* shorthand) {
    if (pos_ >= p_.size()) return Error("a trailing backslash");
    const char32_t c = Next();
    auto mark = [&] {
      if (shorthand) *shorthand = true;
    };
    switch (c) {
      case U'd': mark(); return Digits();
      case U'w': mark(); return WordChars();
      case U's': mark(); return Spaces();
      case U'D': mark(); return Digits().ComplementWithin(Ascii());
      case U'W': mark(); return WordChars().ComplementWithin(Ascii());
      case U'S': mark(); return Spaces().ComplementWithin(Ascii());
      case U't': return CharClass::Of('\t', '\t');
      case U'n': return CharClass::Of('\n', '\n');
      case U'r': return CharClass::Of('\r', '\r');
      case U'f': return CharClass::Of('\f', '\f');
      case U'v': return CharClass::Of('\v', '\v');
      case U'0': return CharClass::Of(0, 0);
      case U'x': return Hex(2);
      case U'u': return Hex(4);
      case U'b':
        if (in_class) return CharClass::Of('\b', '\b');
        return Error("\\b (word boundary) is not supported");
      default:
        if ((c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'1' && c <= U'9')) {
          return Error(std::string("the escape \\") + static_cast<char>(c) + " is not supported");
        }
        return CharClass::Of(c, c);
    }
  }

  Result<CharClass> Hex(int digits) {
    char32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char32_t h = Next();
      int d = h >= U'0' && h <= U'9' ? int(h - U'0') : h >= U'a' && h <= U'f' ? int(h - U'a' + 10)
            : h >= U'A' && h <= U'F' ? int(h - U'A' + 10) : -1;
      if (d < 0) return Error("a malformed hex escape");
      v = v * 16 + char32_t(d);
    }
    return CharClass::Of(v, v);
  }

  Result<NodePtr> Class() {
    bool negated = false;
    if (Peek() == U'^') {
      Next();
      negated = true;
    }
    // Collected, then normalised once.
    std::vector<CodePointRange> ranges;
    bool shorthand = false;
    bool first = true;
    while (true) {
      if (pos_ >= p_.size()) return Error("missing ']'");
      char32_t c = Next();
      if (c == U']' && !first) break;
      first = false;
      CharClass item;
      char32_t lo = c;
      bool single = true;
      if (c == U'\\') {
        bool sh = false;
        KIMI_ASSIGN_OR_RETURN(item, Escape(/*in_class=*/true, &sh));
        shorthand = shorthand || sh;
        single = !sh && item.ranges().size() == 1 && item.ranges()[0].lo == item.ranges()[0].hi;
        if (single) lo = item.ranges()[0].lo;
      } else {
        item = CharClass::Of(c, c);
      }
      if (single && Peek() == U'-') {
        const size_t save = pos_;
        Next();
        if (Peek() == U']' || pos_ >= p_.size()) {
          pos_ = save;
        } else {
          char32_t hi = Next();
          if (hi == U'\\') {
            KIMI_ASSIGN_OR_RETURN(CharClass h, Escape(/*in_class=*/true, nullptr));
            if (h.ranges().size() != 1 || h.ranges()[0].lo != h.ranges()[0].hi) return Error("a class range ending in a shorthand");
            hi = h.ranges()[0].lo;
          }
          if (hi < lo) return Error("a class range out of order");
          item = CharClass::Of(lo, hi);
        }
      }
      ranges.insert(ranges.end(), item.ranges().begin(), item.ranges().end());
    }
    CharClass chars = CharClass::FromRanges(std::move(ranges));
    if (negated) chars = chars.ComplementWithin(shorthand ? Ascii() : CharClass::AnyChar());
    return MakeChars(std::move(chars));
  }

  std::string_view p_;
  size_t pos_ = 0;
  bool anchored_start_ = false;
  bool anchored_end_ = false;
  int group_depth_ = 0;
};

class NfaBuilder {
 public:
  explicit NfaBuilder(CharNfa* nfa) : nfa_(nfa) {}

  int32_t NewState() {
    nfa_->states.emplace_back();
    return static_cast<int32_t>(nfa_->states.size() - 1);
  }

  // The index of `chars` in the automaton's classes: one copy per distinct class.
  int32_t Intern(const CharClass& chars) {
    auto [it, fresh] = class_ids_.try_emplace(chars, int32_t(nfa_->classes.size()));
    if (fresh) nfa_->classes.push_back(chars);
    return it->second;
  }

  // An edge of class `chars` (an index), counted against the bound on edges times ranges.
  Status AddEdge(int32_t from, int32_t chars, int32_t to) {
    edge_ranges_ += nfa_->classes[size_t(chars)].ranges().size();
    if (edge_ranges_ > kMaxRegexEdgeRanges) {
      return Status::InvalidArgument("pattern: the expression is too large (its automaton's edges carry more than " +
                                     std::to_string(kMaxRegexEdgeRanges) +
                                     " character ranges in all: edges times the ranges of their classes)");
    }
    nfa_->states[size_t(from)].edges.push_back({chars, to});
    return Status::OK();
  }

  // Adds node between from and to.
  Status Build(const Node& node, int32_t from, int32_t to) {
    if (nfa_->states.size() > kMaxRegexStates) {
      return Status::InvalidArgument("pattern: the expression is too large (more than " +
                                     std::to_string(kMaxRegexStates) + " automaton states)");
    }
    switch (node.kind) {
      case Node::Kind::kEmpty:
        nfa_->states[size_t(from)].epsilons.push_back(to);
        return Status::OK();
      case Node::Kind::kChars: {
        // A node repeated by a quantifier is looked up once.
        auto [it, fresh] = node_classes_.try_emplace(&node, -1);
        if (fresh) it->second = Intern(node.chars);
        return AddEdge(from, it->second, to);
      }
      case Node::Kind::kConcat: {
        int32_t at = from;
        for (size_t i = 0; i < node.children.size(); ++i) {
          const int32_t next = i + 1 == node.children.size() ? to : NewState();
          KIMI_RETURN_IF_ERROR(Build(*node.children[i], at, next));
          at = next;
        }
        if (node.children.empty()) nfa_->states[size_t(from)].epsilons.push_back(to);
        return Status::OK();
      }
      case Node::Kind::kAlternation:
        for (const NodePtr& child : node.children) KIMI_RETURN_IF_ERROR(Build(*child, from, to));
        return Status::OK();
      case Node::Kind::kRepeat: {
        const Node& body = *node.children[0];
        int32_t at = from;
        for (int64_t i = 0; i < node.min; ++i) {
          const int32_t next = NewState();
          KIMI_RETURN_IF_ERROR(Build(body, at, next));
          at = next;
        }
        if (node.max < 0) {  // a loop: at -body-> at
          const int32_t loop = NewState();
          nfa_->states[size_t(at)].epsilons.push_back(loop);
          const int32_t back = NewState();
          KIMI_RETURN_IF_ERROR(Build(body, loop, back));
          nfa_->states[size_t(back)].epsilons.push_back(loop);
          nfa_->states[size_t(loop)].epsilons.push_back(to);
          return Status::OK();
        }
        for (int64_t i = node.min; i < node.max; ++i) {
          nfa_->states[size_t(at)].epsilons.push_back(to);
          const int32_t next = NewState();
          KIMI_RETURN_IF_ERROR(Build(body, at, next));
          at = next;
        }
        nfa_->states[size_t(at)].epsilons.push_back(to);
        return Status::OK();
      }
    }
    return Status::Internal("unknown regex node");
  }

 private:
  CharNfa* nfa_;
  std::map<CharClass, int32_t> class_ids_;
  std::unordered_map<const Node*, int32_t> node_classes_;
  size_t edge_ranges_ = 0;
};

}  // namespace

Result<CharNfa> CompileRegex(std::string_view pattern) {
  Parser parser(pattern);
  KIMI_ASSIGN_OR_RETURN(NodePtr body, parser.Parse());
  CharNfa nfa;
  NfaBuilder builder(&nfa);
  nfa.start = builder.NewState();
  nfa.accept = builder.NewState();
  int32_t from = nfa.start, to = nfa.accept;
  const CharClass any = CharClass::AnyChar();
  if (!parser.anchored_start()) {  // search: anything may come before the match
    from = builder.NewState();
    nfa.states[size_t(nfa.start)].epsilons.push_back(from);
    KIMI_RETURN_IF_ERROR(builder.AddEdge(from, builder.Intern(any), from));
  }
  if (!parser.anchored_end()) {
    to = builder.NewState();
    nfa.states[size_t(to)].epsilons.push_back(nfa.accept);
    KIMI_RETURN_IF_ERROR(builder.AddEdge(to, builder.Intern(any), to));
  }
  KIMI_RETURN_IF_ERROR(builder.Build(*body, from, to));
  return nfa;
}

}  // namespace kimi::structured
