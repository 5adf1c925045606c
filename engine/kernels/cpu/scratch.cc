#include "kernels/cpu/scratch.h"

#include <cstdio>
#include <cstdlib>

namespace kimi::kernels {
namespace {

struct ThreadBuffers {
  void* data[kScratchSlots] = {};
  size_t size[kScratchSlots] = {};
  ~ThreadBuffers() {
    for (void* p : data) std::free(p);
  }
};

}  // namespace

void* ThreadScratch(ScratchSlot slot, size_t bytes) {
  thread_local ThreadBuffers buffers;
  const int i = static_cast<int>(slot);
  if (buffers.size[i] < bytes) {
    std::free(buffers.data[i]);
    const size_t rounded = (bytes + 63) / 64 * 64;
    buffers.data[i] = std::aligned_alloc(64, rounded);
    if (buffers.data[i] == nullptr) {
      std::fprintf(stderr, "kernel scratch: out of memory (%zu bytes)\n", rounded);
      std::abort();
    }
    buffers.size[i] = rounded;
  }
  return buffers.data[i];
}

}  // namespace kimi::kernels
