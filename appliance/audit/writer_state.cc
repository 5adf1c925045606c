#include "audit/writer_state.h"

#include <sodium.h>

namespace kimi::audit {
namespace {

void AppendBigEndian64(uint64_t v, std::string* out) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xff));
}

}  // namespace

std::string WriterStateSigningBytes(const WriterState& s) {
  std::string out(kWriterStateContext);
  out.append(AsBytes(s.key_id));
  AppendBigEndian64(s.heads, &out);
  AppendBigEndian64(s.head_size, &out);
  AppendBigEndian64(s.verified_size, &out);
  out.append(AsBytes(s.verified_root));
  AppendBigEndian64(static_cast<uint64_t>(s.timestamp_ms), &out);
  out.push_back(s.clean ? 1 : 0);
  return out;
}

WriterState SignWriterState(const AuditKey& key, WriterState state, const CompactTree& verified) {
  state.key_id = key.key_id();
  state.verified_size = verified.size();
  state.verified_root = verified.Root();
  state.verified_edge = verified.SerializeEdge();
  state.signature = key.SignMessage(WriterStateSigningBytes(state));
  return state;
}

Status VerifyWriterState(const WriterState& state, const PublicKey& key) {
  if (sodium_init() < 0) return Status::Internal("libsodium failed to initialise");
  if (state.key_id != KeyIdOf(key)) return Status::Corruption("the writer state names a different key id");
  const std::string msg = WriterStateSigningBytes(state);
  if (crypto_sign_verify_detached(state.signature.data(), reinterpret_cast<const unsigned char*>(msg.data()),
                                  msg.size(), key.data()) != 0) {
    return Status::Corruption("the writer state's signature does not verify");
  }
  return Status::OK();
}

Result<CompactTree> VerifiedTree(const WriterState& state) {
  Result<CompactTree> tree = CompactTree::Deserialize(state.verified_size, state.verified_edge);
  if (!tree.ok() || tree->Root() != state.verified_root) {
    return Status::Corruption("the stored checkpoint tree does not match the signed writer state");
  }
  return tree;
}

}  // namespace kimi::audit
