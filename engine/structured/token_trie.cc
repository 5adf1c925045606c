#include "structured/token_trie.h"

#include <algorithm>
#include <string>
#include <utility>

namespace kimi::structured {

Result<std::shared_ptr<const TokenTrie>> TokenTrie::Build(const Tokenizer& tokenizer) {
  auto trie = std::make_shared<TokenTrie>();
  trie->vocab_size_ = tokenizer.vocab_size();
  std::vector<std::pair<std::string_view, int32_t>> tokens;
  tokens.reserve(size_t(tokenizer.num_base_tokens()));
  trie->num_base_tokens_ = tokenizer.num_base_tokens();
  trie->offsets_.push_back(0);
  for (int32_t id = 0; id < tokenizer.num_base_tokens(); ++id) {
    KIMI_ASSIGN_OR_RETURN(std::string_view bytes, tokenizer.TokenBytes(id));
    trie->bytes_.append(bytes);
    trie->offsets_.push_back(uint32_t(trie->bytes_.size()));
    if (bytes.empty()) continue;
    tokens.emplace_back(bytes, id);
    trie->max_token_bytes_ = std::max(trie->max_token_bytes_, int32_t(bytes.size()));
  }
  // std::string_view compares bytes as unsigned char, which is the order children are laid out in.
  std::sort(tokens.begin(), tokens.end());
  std::vector<TrieNode>& nodes = trie->nodes_;
  nodes.push_back(TrieNode{});
  std::vector<int32_t> path = {0};  // path[d]: the node at depth d on the current branch
  std::vector<int32_t> parents = {-1};
  std::string_view previous;
  for (const auto& [bytes, id] : tokens) {
    size_t common = 0;
    while (common < previous.size() && common < bytes.size() && previous[common] == bytes[common]) ++common;
    while (path.size() > common + 1) {
      nodes[size_t(path.back())].subtree_end = int32_t(nodes.size());
      path.pop_back();
    }
    for (size_t d = common; d < bytes.size(); ++d) {
      nodes.push_back(TrieNode{static_cast<uint8_t>(bytes[d]), 0, -1});
      parents.push_back(path.back());
      path.push_back(int32_t(nodes.size() - 1));
    }
    if (nodes[size_t(path.back())].token < 0) nodes[size_t(path.back())].token = id;  // duplicates keep the first id
    previous = bytes;
  }
  while (!path.empty()) {
    nodes[size_t(path.back())].subtree_end = int32_t(nodes.size());
    path.pop_back();
  }
  trie->bytes_below_.resize(nodes.size());
  for (size_t i = nodes.size(); i-- > 1;) {  // children come after their parent
    ByteSet& below = trie->bytes_below_[size_t(parents[i])];
    below.Add(nodes[i].byte);
    for (int w = 0; w < 4; ++w) below.words[w] |= trie->bytes_below_[i].words[w];
  }
  trie->tokens_before_.reserve(nodes.size() + 1);
  for (const TrieNode& node : nodes) {
    trie->tokens_before_.push_back(int32_t(trie->tokens_in_order_.size()));
    if (node.token >= 0) trie->tokens_in_order_.push_back(node.token);
  }
  trie->tokens_before_.push_back(int32_t(trie->tokens_in_order_.size()));
  trie->open = tokenizer.SpecialTokenId(k3::kOpen);
  trie->close = tokenizer.SpecialTokenId(k3::kClose);
  trie->sep = tokenizer.SpecialTokenId(k3::kSep);
  trie->end_of_msg = tokenizer.SpecialTokenId(k3::kEndOfMessage);
  return std::shared_ptr<const TokenTrie>(std::move(trie));
}

}  // namespace kimi::structured
