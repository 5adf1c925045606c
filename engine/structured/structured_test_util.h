// Helpers shared by the structured-output tests and benchmark: schemas compiled straight to
// matchers, the demo and real vocabularies, the verifier's schema cases, and random walks
// that sample uniformly among the allowed tokens.
//
// Thread safety: test-only; cached vocabularies are built under function-local statics.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kimi/runtime.h"
#include "kimi/status.h"
#include "structured/grammar.h"
#include "structured/matcher.h"
#include "structured/schema_compiler.h"
#include "structured/token_trie.h"

namespace kimi::structured::testing {

// The grammar of a schema given as JSON text (the value alone, no framing).
Result<std::shared_ptr<const Grammar>> CompileSchema(const std::string& schema_json,
                                                     const CompileBudget& budget = CompileBudget());

// Trie of the 512-rank demo tokenizer and of K3's real ranks (data/kimi-k3); each built once.
std::shared_ptr<const TokenTrie> DemoTrie();
std::shared_ptr<const TokenTrie> RealTrie();

// Whether the schema's grammar accepts exactly this text as a complete value.
bool Accepts(const std::shared_ptr<const Grammar>& grammar, const std::string& text);

struct SchemaCase {
  std::string suite;
  int line = 0;
  std::string schema;
};
// Every line of data/kimi-k3/kvv-schema-cases/*/valid.jsonl (KimiDataDir()); NotFound when
// the directory is missing.
Result<std::vector<SchemaCase>> VerifierSchemaCases();

struct Walk {
  std::vector<int32_t> tokens;
  std::string text;     // the bytes of the tokens (the end token excluded)
  bool ended = false;   // an end token was chosen
  bool stuck = false;   // the mask allowed nothing before the end (a dead end: a bug)
  int steps_to_complete = 0;
};

// Samples uniformly among the allowed tokens for `free_steps` steps, then steers to the end
// (the end token when allowed, else the sampled candidate with the fewest bytes left),
// up to max_steps tokens in all. end_token is the id allowed once the value is complete.
Walk RandomWalk(const std::shared_ptr<const Grammar>& grammar, const std::shared_ptr<const TokenTrie>& trie,
                int32_t end_token, std::mt19937_64& rng, int free_steps, int max_steps);

// A regular-expression class of `count` code points, first, first + step, ..., each written as
// a JSON \u escape (for a pattern inside JSON text): "[\\u4e00\\u4e02...]".
std::string JsonEscapedClass(int count, char32_t first, int step);

// An object of `count` required integer properties with long, distinct names: a walk through it
// reaches a new grammar state with nearly every token, so it caches a mask nearly every step.
std::string ManyLongPropertyNames(int count);

// Feeds `steps` tokens (fewer when end_token comes) chosen uniformly among those the constraint
// allows, with room for 100,000 tokens. Errors: FillMask's, or Internal when a mask allows nothing.
Status WalkConstraint(TokenConstraint& constraint, int64_t vocab_size, int32_t end_token, std::mt19937_64& rng, int steps);

}  // namespace kimi::structured::testing
