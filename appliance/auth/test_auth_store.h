// TestAuthStore: for the auth module's tests, a fresh appliance database in a temporary
// directory, migrated to the current schema, with an AuthStore on it; removed again on
// destruction. One helper so that every test opens its store the same way.
// Public header of auth/: the tests of other folders use it too.
// Thread safety: as AuthStore; construct and destroy on one thread.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "auth/auth_migrations.h"
#include "auth/auth_store.h"
#include "kimi/status.h"
#include "store/store.h"

namespace kimi::auth {

class TestAuthStore {
 public:
  TestAuthStore() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kimi-auth-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      status_ = Status::IOError("cannot make a temporary directory");
      return;
    }
    root_ = tmpl;
    Result<std::unique_ptr<store::Store>> opened = store::Store::Open(root_ + "/data");
    if (!opened.ok()) {
      status_ = opened.status();
      return;
    }
    db_ = std::move(opened).value();
    status_ = db_->Migrate(auth::kAuthMigrations).status();
    if (status_.ok()) auth_store_ = std::make_unique<AuthStore>(db_.get());
  }
  ~TestAuthStore() {
    auth_store_.reset();
    db_.reset();
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }
  TestAuthStore(const TestAuthStore&) = delete;
  TestAuthStore& operator=(const TestAuthStore&) = delete;

  // OK once the database is open and migrated; check it with ASSERT_TRUE in SetUp().
  const Status& status() const { return status_; }
  const std::string& root() const { return root_; }  // the temporary directory
  store::Store* db() { return db_.get(); }
  AuthStore* store() { return auth_store_.get(); }

 private:
  Status status_;
  std::string root_;
  std::unique_ptr<store::Store> db_;
  std::unique_ptr<AuthStore> auth_store_;
};

}  // namespace kimi::auth
