#include "core/float_mode.h"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace kimi {
namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr unsigned kFlushBits = 0x8000u /* FTZ */ | 0x0040u /* DAZ */;
#elif defined(__aarch64__)
constexpr uint64_t kFpcrFz = uint64_t{1} << 24;

uint64_t ReadFpcr() {
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
}

void WriteFpcr(uint64_t fpcr) { __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr)); }
#endif

}  // namespace

bool SubnormalsControllable() {
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
  return true;
#else
  return false;
#endif
}

Subnormals ThreadSubnormals() {
#if defined(__x86_64__) || defined(__i386__)
  return (_mm_getcsr() & kFlushBits) == kFlushBits ? Subnormals::kFlushToZero : Subnormals::kKeep;
#elif defined(__aarch64__)
  return (ReadFpcr() & kFpcrFz) != 0 ? Subnormals::kFlushToZero : Subnormals::kKeep;
#else
  return Subnormals::kKeep;
#endif
}

void SetThreadSubnormals(Subnormals mode) {
  const bool flush = mode == Subnormals::kFlushToZero;
#if defined(__x86_64__) || defined(__i386__)
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(flush ? (csr | kFlushBits) : (csr & ~kFlushBits));
#elif defined(__aarch64__)
  const uint64_t fpcr = ReadFpcr();
  WriteFpcr(flush ? (fpcr | kFpcrFz) : (fpcr & ~kFpcrFz));
#else
  (void)flush;
#endif
}

}  // namespace kimi
