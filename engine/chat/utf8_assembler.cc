#include "chat/utf8_assembler.h"

namespace kimi::chat {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the sequence a lead byte starts, 0 for a byte that cannot lead.
size_t SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// The allowed range of the byte after the lead (it excludes overlongs and surrogates).
bool SecondByteOk(unsigned char lead, unsigned char b) {
  switch (lead) {
    case 0xE0: return b >= 0xA0 && b <= 0xBF;
    case 0xED: return b >= 0x80 && b <= 0x9F;
    case 0xF0: return b >= 0x90 && b <= 0xBF;
    case 0xF4: return b >= 0x80 && b <= 0x8F;
    default: return b >= 0x80 && b <= 0xBF;
  }
}

}  // namespace

std::string Utf8Assembler::Push(std::string_view bytes) {
  std::string in = std::move(pending_);
  pending_.clear();
  in.append(bytes);
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    const auto lead = static_cast<unsigned char>(in[i]);
    const size_t length = SequenceLength(lead);
    if (length == 1) {
      out.push_back(in[i++]);
      continue;
    }
    if (length == 0) {
      out.append(kReplacement);
      ++replacements_;
      ++i;
      continue;
    }
    // Count how many bytes after the lead continue the sequence validly.
    size_t valid = 1;
    while (valid < length && i + valid < in.size()) {
      const auto b = static_cast<unsigned char>(in[i + valid]);
      const bool ok = (valid == 1) ? SecondByteOk(lead, b) : (b >= 0x80 && b <= 0xBF);
      if (!ok) break;
      ++valid;
    }
    if (valid == length) {
      out.append(in, i, length);
      i += length;
    } else if (i + valid == in.size()) {  // a valid prefix cut off by the end: wait for more
      pending_.assign(in, i, valid);
      break;
    } else {  // a maximal invalid subpart
      out.append(kReplacement);
      ++replacements_;
      i += valid;
    }
  }
  return out;
}

std::string Utf8Assembler::Flush() {
  if (pending_.empty()) return {};
  pending_.clear();
  ++replacements_;
  return std::string(kReplacement);
}

}  // namespace kimi::chat
