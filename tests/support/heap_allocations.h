// Test-only: counts the program's heap allocations, as work that a test may bound without
// timing it. Linking tests/support/heap_allocations.cc into a test binary replaces the global
// operator new of that binary (so it belongs in a binary of its own); HeapAllocations() is the
// number of operator new calls since the program started.
//
// Thread safety: the count is atomic; any thread.
#pragma once

#include <cstdint>

namespace kimi::testing {

uint64_t HeapAllocations();

}  // namespace kimi::testing
