// What the fuzz targets share besides the driver: the source tree's files they load once
// (the shipped policy, the test trust store) and a way to stop when that set-up fails.
//
// Thread safety: pure functions.
#pragma once

#include <string>

namespace kimi::fuzz {

// <source>/<relative>: KIMI_SOURCE_DIR when set (CTest sets it), else the tree this was built
// from (libFuzzer runs outside CTest).
std::string SourcePath(const std::string& relative);
std::string ReadSourceFile(const std::string& relative);

// Called once by each program before its first input. Logs errors only (the warnings a refused
// input earns would flood a run of millions), and sets KIMI_SOURCE_DIR to the tree this was
// built from when unset, for the test helpers that read it (the demo tokenizer's text), so a
// target runs from any folder.
void PrepareFuzzProcess();

// A target cannot run without its fixed inputs: say why and abort (never a finding).
[[noreturn]] void SetupFailed(const std::string& what);

}  // namespace kimi::fuzz
