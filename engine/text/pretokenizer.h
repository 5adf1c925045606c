// Kimi's pre-tokeniser: splits text into the pieces that `pat_str` of Moonshot's
// tokenization_kimi.py matches, before byte-level BPE runs on each piece.
//
// The pattern needs character-class intersection (`[\p{Lu}...&&[^\p{Han}]]`) and a lookahead
// (`\s+(?!\S)`). It is implemented here as a hand-written scanner over code points that
// follows the regex's leftmost-first, greedy-with-backtracking semantics branch by branch;
// docs/tokenizer.md gives the pattern and says which function implements which branch.
//
// Thread safety: the functions are re-entrant; scratch space is per thread.
#pragma once

#include <string_view>
#include <vector>

namespace kimi::text {

// The alternative of the pattern that matched a piece, in the pattern's order.
enum class PatternBranch {
  kHan,             // [\p{Han}]+
  kLetters,         // [^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M - Han]*[Ll Lm Lo M - Han]+('s|'t|...)?
  kCapitalised,     // [^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M - Han]+[Ll Lm Lo M - Han]*('s|'t|...)?
  kDigits,          // \p{N}{1,3}
  kPunctuation,     //  ?[^\s\p{L}\p{N}]+[\r\n]*
  kNewlines,        // \s*[\r\n]+
  kTrailingSpace,   // \s+(?!\S)
  kSpace,           // \s+
};

struct PreToken {
  std::string_view text;
  PatternBranch branch;
};

// Appends the pieces of text, in order; together they are exactly text.
// Precondition: text is valid UTF-8 (see ValidateUtf8).
void PreTokenize(std::string_view text, std::vector<std::string_view>* pieces);

// The same split, also naming the branch that matched each piece (for tests and tools).
std::vector<PreToken> PreTokenizeWithBranches(std::string_view text);

}  // namespace kimi::text
