#include "http/chunked_framing.h"

#include <algorithm>

namespace kimi::http {
namespace {

constexpr int kMaxSizeDigits = 16;
constexpr size_t kMaxExtensionBytes = 1024;
constexpr size_t kMaxTrailerBytes = 8 * 1024;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Visible ASCII, space and tab: what extensions and trailer fields may hold.
bool FieldByte(char c) { return c == '\t' || (c >= 0x20 && c < 0x7f); }

}  // namespace

ChunkedFraming::Fed ChunkedFraming::Feed(std::string_view bytes) {
  Fed fed;
  size_t i = 0;
  while (i < bytes.size() && at_ != At::kEnd && at_ != At::kBad) {
    const char c = bytes[i];
    switch (at_) {
      case At::kSize:
        if (const int digit = HexValue(c); digit >= 0) {
          if (++size_digits_ > kMaxSizeDigits) {
            at_ = At::kBad;
            continue;
          }
          size_ = size_ * 16 + uint64_t(digit);
        } else if (size_digits_ > 0 && c == ';') {
          at_ = At::kExtension;
        } else if (size_digits_ > 0 && c == '\r') {
          at_ = At::kSizeLf;
        } else {
          at_ = At::kBad;
          continue;
        }
        break;
      case At::kSizeLf:
      case At::kTrailerLf:
        if (c != '\n') {
          at_ = At::kBad;
          continue;
        }
        if (at_ == At::kSizeLf) {
          at_ = size_ == 0 ? At::kTrailer : At::kData;
        } else {
          // An empty line ends the trailer section, and the body.
          at_ = line_bytes_ == 0 ? At::kEnd : At::kTrailer;
          line_bytes_ = 0;
        }
        break;
      case At::kData: {
        const size_t take = size_t(std::min<uint64_t>(size_, bytes.size() - i));
        size_ -= take;
        i += take;
        if (size_ == 0) at_ = At::kDataCr;
        continue;
      }
      case At::kDataCr:
      case At::kDataLf:
        if (c != (at_ == At::kDataCr ? '\r' : '\n')) {
          at_ = At::kBad;
          continue;
        }
        if (at_ == At::kDataCr) {
          at_ = At::kDataLf;
        } else {
          at_ = At::kSize;
          size_digits_ = 0;
          extension_bytes_ = 0;
        }
        break;
      case At::kExtension:
      case At::kTrailer: {
        // A chunk's extensions, or a trailer line: printable bytes up to CR, bounded.
        const bool trailer = at_ == At::kTrailer;
        if (c == '\r') {
          at_ = trailer ? At::kTrailerLf : At::kSizeLf;
          break;
        }
        size_t& bytes = trailer ? trailer_bytes_ : extension_bytes_;
        if (!FieldByte(c) || ++bytes > (trailer ? kMaxTrailerBytes : kMaxExtensionBytes)) {
          at_ = At::kBad;
          continue;
        }
        if (trailer) ++line_bytes_;
        break;
      }
      case At::kEnd:
      case At::kBad:
        break;
    }
    ++i;
  }
  fed.accepted = at_ == At::kBad ? 0 : i;
  fed.ended = at_ == At::kEnd;
  fed.malformed = at_ == At::kBad;
  return fed;
}

}  // namespace kimi::http
