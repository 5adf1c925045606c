// ChunkedDecoder: incremental decoder of HTTP/1.1 chunked transfer coding (RFC 9112 §7.1),
// for the upstream response reader (http_connection.h).
//
// Bytes arrive in arbitrary pieces: a read may end inside a chunk-size line, inside its CRLF,
// inside the data or inside the trailer section. Decode() rewrites a piece in place to the
// data it carries (never longer than the piece), keeping what it needs across calls in a few
// integers, so the hot path copies each data byte at most once and allocates nothing.
// Chunk extensions (";name=value") and trailer fields are read and ignored. A bare "\n" ends a
// line too, as lenient readers accept. A size line longer than a small bound, a size that is
// not hexadecimal or does not fit 63 bits, or a chunk not followed by CRLF is an error.
//
// Owns: the decoding state. Thread safety: one instance per response, used from one thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kimi/status.h"

namespace kimi::upstream {

class ChunkedDecoder {
 public:
  // Decodes `*size` bytes at `data` in place: on return data[0, *size) holds the chunk data
  // they contained. Bytes after the last chunk's trailer section are not consumed; *consumed
  // says how many input bytes were. Precondition: !done().
  Status Decode(char* data, size_t* size, size_t* consumed);
  // The last chunk (size 0) and its trailer section have been read.
  bool done() const { return state_ == State::kDone; }

 private:
  enum class State {
    kSize,          // hex digits of a chunk size
    kExtension,     // after the size (";..." or whitespace) until the line ends
    kSizeLf,        // "\r" seen at the end of the size line
    kData,          // remaining_ bytes of data
    kDataCr,        // the "\r" after the data
    kDataLf,        // the "\n" after the data
    kTrailer,       // a trailer line (or the empty line ending the section) begins
    kTrailerLine,   // inside a non-empty trailer line
    kTrailerLineLf, // "\r" seen at the end of a trailer line
    kTrailerEndLf,  // "\r" seen on the empty line that ends the trailer section
    kDone,
  };

  // A size line ended: its chunk's data follows, or the trailer section after the last chunk.
  void EndSizeLine() { state_ = remaining_ == 0 ? State::kTrailer : State::kData; }
  // A chunk's data and its line end were read: the next chunk's size line begins.
  void StartSizeLine() {
    state_ = State::kSize;
    size_digits_ = line_bytes_ = 0;
  }

  State state_ = State::kSize;
  uint64_t remaining_ = 0;    // kSize: the size read so far; kData: bytes left of the chunk
  size_t size_digits_ = 0;
  size_t line_bytes_ = 0;     // length of the size or trailer line read so far, for the bound
};

}  // namespace kimi::upstream
