// How a thread's floating-point unit treats subnormal numbers (magnitudes below 2^-126 in
// float32).
//
// Subnormals are rare in a forward pass but not absent: the chunked KDA's cumulative gate
// decays (exponentials of sums of negative gates over a chunk) underflow into them, and Intel
// cores take on the order of a hundred cycles for each operation that reads or produces one,
// which made prefill three to four times slower there (docs/kernels.md "Subnormals"). Engine
// threads therefore run with flush-to-zero (results that would be subnormal become zero) and
// denormals-are-zero (subnormal inputs read as zero); the difference is far below the
// engine's tolerance against the reference, because a subnormal float is 2^-126 or less.
//
// x86-64: MXCSR's FTZ and DAZ bits. AArch64: FPCR.FZ (it covers both). Elsewhere nothing can be
// set: ThreadSubnormals() reports kKeep and SubnormalsControllable() is false.
//
// Thread safety: the mode is per thread; each function touches only the calling thread's.
#pragma once

namespace kimi {

enum class Subnormals {
  kFlushToZero,  // flush-to-zero and denormals-are-zero: the engine's mode
  kKeep,         // IEEE 754 gradual underflow: every thread's mode at start
};

// Whether this build can set the mode on this architecture.
bool SubnormalsControllable();

Subnormals ThreadSubnormals();
void SetThreadSubnormals(Subnormals mode);

// Sets the calling thread's mode for its lifetime and restores the previous one after.
class ScopedSubnormals {
 public:
  explicit ScopedSubnormals(Subnormals mode) : previous_(ThreadSubnormals()) {
    if (mode != previous_) SetThreadSubnormals(mode);
    set_ = mode;
  }
  ~ScopedSubnormals() {
    if (set_ != previous_) SetThreadSubnormals(previous_);
  }
  ScopedSubnormals(const ScopedSubnormals&) = delete;
  ScopedSubnormals& operator=(const ScopedSubnormals&) = delete;

 private:
  Subnormals previous_;
  Subnormals set_;
};

}  // namespace kimi
