#include "upstream/chunked_decoder.h"

#include <algorithm>
#include <cstring>

#include "kimi/hex.h"

namespace kimi::upstream {
namespace {

// A size line (size and extensions) or trailer line longer than this is refused.
constexpr size_t kMaxLineBytes = 8 * 1024;
// 15 hex digits: a size below 2^60, far beyond any real chunk, that cannot overflow.
constexpr size_t kMaxSizeDigits = 15;

// Visible ASCII, space and tab: what a strict extension or trailer line may hold.
bool FieldByte(char c) { return c == '\t' || (c >= 0x20 && c < 0x7f); }

}  // namespace

Status ChunkedDecoder::Decode(char* data, size_t* size, size_t* consumed) {
  const size_t n = *size;
  size_t in = 0;   // next input byte
  size_t out = 0;  // end of the decoded data written so far (out <= in)
  while (in < n && state_ != State::kDone) {
    if (state_ == State::kData) {
      size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, n - in));
      if (out != in) std::memmove(data + out, data + in, take);
      out += take;
      in += take;
      remaining_ -= take;
      if (remaining_ == 0) state_ = State::kDataCr;
      continue;
    }
    const char c = data[in++];
    switch (state_) {
      case State::kSize: {
        int v = HexDigitValue(c);
        if (v >= 0) {
          if (++size_digits_ > kMaxSizeDigits) return Status::Corruption("chunk size too large");
          remaining_ = remaining_ * 16 + static_cast<uint64_t>(v);
          ++line_bytes_;
          break;
        }
        if (size_digits_ == 0) return Status::Corruption("chunk size is not hexadecimal");
        if (strict_ && c != ';' && c != '\r') return Status::Corruption("chunk size is not hexadecimal digits alone");
        [[fallthrough]];
      }
      case State::kExtension:
        if (c == '\r') {
          state_ = State::kSizeLf;
        } else if (c == '\n' && !strict_) {
          EndSizeLine();
        } else {
          if (strict_ && !FieldByte(c)) return Status::Corruption("chunk size line holds a control byte");
          if (++line_bytes_ > kMaxLineBytes) return Status::Corruption("chunk size line too long");
          state_ = State::kExtension;
        }
        break;
      case State::kSizeLf:
        if (c != '\n') return Status::Corruption("chunk size line not ended by CRLF");
        EndSizeLine();
        break;
      case State::kDataCr:
        if (c == '\n' && !strict_) {  // a bare LF after the data
          StartSizeLine();
          break;
        }
        if (c != '\r') return Status::Corruption("chunk data not followed by CRLF");
        state_ = State::kDataLf;
        break;
      case State::kDataLf:
        if (c != '\n') return Status::Corruption("chunk data not followed by CRLF");
        StartSizeLine();
        break;
      case State::kTrailer:
        line_bytes_ = 0;
        if (c == '\r') {
          state_ = State::kTrailerEndLf;
          break;
        }
        if (c == '\n' && !strict_) {
          state_ = State::kDone;
          break;
        }
        state_ = State::kTrailerLine;
        [[fallthrough]];
      case State::kTrailerLine:
        if (c == '\r') state_ = State::kTrailerLineLf;
        else if (c == '\n' && !strict_) state_ = State::kTrailer;
        else if (strict_ && !FieldByte(c)) return Status::Corruption("chunked trailer line holds a control byte");
        else if (++line_bytes_ > kMaxLineBytes) return Status::Corruption("chunked trailer line too long");
        break;
      case State::kTrailerLineLf:
        if (c != '\n') return Status::Corruption("chunked trailer line not ended by CRLF");
        state_ = State::kTrailer;
        break;
      case State::kTrailerEndLf:
        if (c != '\n') return Status::Corruption("chunked trailer section not ended by CRLF");
        state_ = State::kDone;
        break;
      case State::kData:
      case State::kDone:
        break;
    }
  }
  *size = out;
  *consumed = in;
  return Status::OK();
}

}  // namespace kimi::upstream
