// Test helpers of the policy module: the shipped documents and a scratch database.
//
// Thread safety: test-only; one test thread.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "policy/policy_migrations.h"
#include "store/store.h"

namespace kimi::policy::testing {

inline nlohmann::json LoadShipped(const std::string& relative) {
  const char* source = std::getenv("KIMI_SOURCE_DIR");
  std::ifstream in(std::filesystem::path(source ? source : ".") / "policies" / relative);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// A migrated appliance.db in a fresh temporary directory, removed with the object.
class ScratchStore {
 public:
  ScratchStore() {
    char pattern[] = "/tmp/kimi-policy-XXXXXX";
    dir_ = mkdtemp(pattern);
    auto opened = store::Store::Open(dir_);
    EXPECT_TRUE(opened.ok());
    store_ = std::move(opened).value();
    EXPECT_TRUE(store_->Migrate(kPolicyMigrations).ok());
  }
  ~ScratchStore() {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  store::Store* get() { return store_.get(); }

 private:
  std::string dir_;
  std::unique_ptr<store::Store> store_;
};

}  // namespace kimi::policy::testing
