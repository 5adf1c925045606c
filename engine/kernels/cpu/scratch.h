// Per-thread scratch memory for the kernels: a few grow-only, 64-byte-aligned buffers per
// thread, so a kernel call allocates nothing once its thread has seen the largest size.
//
// Why a separate module: the AVX2 translation units are compiled with -mavx2, and any
// out-of-line standard-library template they instantiate (std::vector growth, say) may be
// the copy the linker keeps for the whole program, which would then run AVX2 code on a CPU
// without it. Keeping allocation here, compiled for plain x86-64, leaves the AVX2 files with
// intrinsics and inlined arithmetic only.
// Thread safety: each thread gets its own buffers; a pointer is valid on the calling thread
// until its next ThreadScratch call with the same slot.
#pragma once

#include <cstddef>

namespace kimi::kernels {

enum class ScratchSlot { kA = 0, kB, kC, kD };
inline constexpr int kScratchSlots = 4;

// A buffer of at least `bytes` bytes for this thread and slot; contents are unspecified.
// Never returns nullptr (aborts when memory is exhausted, like operator new would throw).
void* ThreadScratch(ScratchSlot slot, size_t bytes);

template <typename T>
T* ThreadScratchArray(ScratchSlot slot, size_t count) {
  return static_cast<T*>(ThreadScratch(slot, count * sizeof(T)));
}

}  // namespace kimi::kernels
