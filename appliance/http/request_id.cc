#include "http/request_id.h"

#include <sys/random.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace kimi::http {

std::string NewRequestId() {
  unsigned char bytes[12];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got < sizeof bytes) {
    // getrandom() does not fail on Linux once the pool is initialised; should it, ids stay
    // unique (a counter and the clock) though no longer unguessable.
    static std::atomic<uint64_t> counter{0};
    uint64_t a = counter.fetch_add(1) ^ static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    for (size_t i = 0; i < sizeof bytes; ++i) bytes[i] = static_cast<unsigned char>(a >> (8 * (i % 8)));
  }
  static const char kHex[] = "0123456789abcdef";
  std::string id = "req_";
  for (unsigned char b : bytes) {
    id += kHex[b >> 4];
    id += kHex[b & 15];
  }
  return id;
}

}  // namespace kimi::http
