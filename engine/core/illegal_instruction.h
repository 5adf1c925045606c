// Running code that may not execute on this CPU without taking the process down.
//
// A kernel for an instruction set that has never run on a given CPU (the AMX prefill GEMM,
// docs/kernels.md) is tried once before it may become a default; if the CPU or the OS rejects an
// instruction, the kernel raises SIGILL, which would end the process. RunUnlessIllegalInstruction
// runs `fn` with SIGILL caught on the calling thread only: a SIGILL there jumps back and the
// call returns false; one on any other thread meanwhile goes to the handler that was installed
// before (re-raised with the previous disposition).
//
// What `fn` leaves behind when it is cut short is the caller's to accept: no destructors run for
// the frames it jumps over, so `fn` should own nothing that needs one.
//
// Thread safety: may be called from several threads at once; each catches only its own SIGILL.
#pragma once

#include <utility>

namespace kimi {

bool RunUnlessIllegalInstruction(void (*fn)(void*), void* arg);

template <class Fn>
bool RunUnlessIllegalInstruction(Fn&& fn) {
  return RunUnlessIllegalInstruction([](void* f) { (*static_cast<Fn*>(f))(); }, static_cast<void*>(&fn));
}

}  // namespace kimi
