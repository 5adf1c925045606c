// A fresh directory under the system's temporary directory for one test, removed with all it
// holds when the test ends. Test-only (the core's file tests).
// Thread safety: a value of one test.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace kimi::testing {

class TestDir {
 public:
  TestDir() : path_((std::filesystem::temp_directory_path() / "kimi-core-test-XXXXXX").string()) {
    if (::mkdtemp(path_.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  }
  ~TestDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace kimi::testing
