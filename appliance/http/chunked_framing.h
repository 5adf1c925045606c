// Checks a chunked request body against RFC 9112 section 7.1 as its bytes pass, and finds
// where it ends. The library's own decoder reads a chunk size with strtoul: "0x2f", "+2f",
// " 2f" and a bare LF pass there, so a proxy in front that reads the same bytes by the RFC
// would disagree with this server on where a request ends (request smuggling). Every byte of
// a chunked body passes through this check first; the library never sees framing it would
// read differently, nor a byte past the body's end.
//
// Accepted: chunk-size = 1*16 HEXDIG; chunk extensions after ';' up to 1,024 printable bytes
// (tab included); every line ending in CRLF; trailer fields of printable bytes, 8 KiB in all.
//
// Thread safety: one checker per request body, used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kimi::http {

class ChunkedFraming {
 public:
  struct Fed {
    size_t accepted = 0;  // bytes of the input that belong to the body (all of it unless it ended)
    bool ended = false;   // the body's last byte (the trailer section's final CRLF) was among them
    bool malformed = false;
  };
  // Takes the next bytes of the body. Once ended or malformed, takes nothing more.
  Fed Feed(std::string_view bytes);

 private:
  enum class At : uint8_t { kSize, kExtension, kSizeLf, kData, kDataCr, kDataLf, kTrailer, kTrailerLf, kEnd, kBad };
  At at_ = At::kSize;
  int size_digits_ = 0;
  uint64_t size_ = 0;         // of the chunk being read; data bytes still to come in kData
  size_t extension_bytes_ = 0;
  size_t trailer_bytes_ = 0;
  size_t line_bytes_ = 0;     // of the current trailer line
};

}  // namespace kimi::http
