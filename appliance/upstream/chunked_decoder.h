// ChunkedDecoder: incremental decoder of HTTP/1.1 chunked transfer coding (RFC 9112 §7.1),
// for the upstream response reader (http_connection.h), and, strict, the check the server
// makes of every chunked request body before the HTTP library's own decoder reads it
// (http/connection.cc: that decoder reads a size with strtoul, so "0x2f", "+2f", " 2f" and a
// bare LF pass there, where a proxy in front reading by the RFC ends the body elsewhere).
//
// Bytes arrive in arbitrary pieces: a read may end inside a chunk-size line, inside its CRLF,
// inside the data or inside the trailer section. Decode() rewrites a piece in place to the
// data it carries (never longer than the piece), keeping what it needs across calls in a few
// integers, so the hot path copies each data byte at most once and allocates nothing.
// Chunk extensions (";name=value") and trailer fields are read and ignored. A size line longer
// than a small bound, a size that is not hexadecimal or does not fit 60 bits, or a chunk not
// followed by CRLF is an error. Lenient (an upstream's responses): a bare "\n" ends a line too,
// and anything after the size digits is an extension. Strict (requests): every line ends with
// CRLF, the digits are followed by ";" or the line's end, and extensions and trailer lines hold
// visible ASCII, spaces and tabs only.
//
// Public header of upstream/: http/ checks request bodies with it.
// Owns: the decoding state. Thread safety: one instance per response, used from one thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kimi/status.h"

namespace kimi::upstream {

class ChunkedDecoder {
 public:
  enum class Framing { kLenient, kStrict };
  explicit ChunkedDecoder(Framing framing = Framing::kLenient) : strict_(framing == Framing::kStrict) {}

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

  bool strict_;
  State state_ = State::kSize;
  uint64_t remaining_ = 0;    // kSize: the size read so far; kData: bytes left of the chunk
  size_t size_digits_ = 0;
  size_t line_bytes_ = 0;     // length of the size or trailer line read so far, for the bound
};

}  // namespace kimi::upstream
