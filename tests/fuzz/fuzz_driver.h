// The standalone fuzz driver: what `make test` runs for every fuzz target, with any compiler
// and no libFuzzer. It replays the target's corpus folder (the files directly in it, in name
// order; `good_*` must be accepted, `bad_*` refused), then runs a fixed number of
// deterministic mutants of the corpus (fuzz_mutator.h) and prints executions per second.
//
//   <target>_fuzz_driver --corpus DIR [--dict FILE] [--iterations N] [--seed S] [--max-size B]
//   <target>_fuzz_driver FILE...     runs each file once (to reproduce a crash)
//
// Subfolders of the corpus are not replayed: known_defects/ holds inputs that still crash the
// code under test until their fix lands (they move up with the fix).
// On a crash or an input that runs past the per-input limit, the input being run is written
// to ./fuzz-crash-<program> before the process dies, so it can be replayed and added to the
// corpus.
//
// Thread safety: one driver per process (it installs signal handlers).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kimi::fuzz {

using FuzzEntry = bool (*)(const uint8_t* data, size_t size);

// Returns the process exit status: 0 when every replayed expectation held.
int RunFuzzDriver(int argc, char** argv, FuzzEntry entry);

}  // namespace kimi::fuzz
