// kimi-bench-auth: what authentication costs per request, for docs/security.md.
//
//   BM_AuthenticateKey        a valid API key: shape check, keyed BLAKE2b, indexed SQLite
//                             lookup, constant-time compare, last-use note (the request path)
//   BM_AuthenticateUnknownKey a well-formed key that is not stored
//   BM_KeyedHash              the keyed BLAKE2b alone
//   BM_Argon2id               one password hash at the default parameters (a login's cost)
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>

#include "auth/api_key.h"
#include "auth/auth_migrations.h"
#include "auth/authenticator.h"

namespace kimi::auth {
namespace {

// A store in a fresh temporary data directory with `keys` keys; the first one's secret kept.
struct Fixture {
  explicit Fixture(int keys) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kimi-bench-auth-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    root = tmpl;
    db = std::move(store::Store::Open(root).value());
    if (!db->Migrate(auth::kAuthMigrations).ok()) std::abort();
    store = std::make_unique<AuthStore>(db.get());
    auth = std::make_unique<Authenticator>(store.get(), *ServerSecret::LoadOrCreate(root, 0), AuthOptions{});
    Actor actor{"bench", "admin", "local"};
    for (int i = 0; i < keys; ++i) {
      CreatedKey k = *auth->CreateKey(actor, NewKey{"k" + std::to_string(i), "", Role::kUser, {}, 0});
      if (i == 0) secret = k.secret;
    }
  }
  ~Fixture() {
    auth->FlushLastUsed();
    auth.reset();
    store.reset();
    db.reset();
    std::filesystem::remove_all(root);
  }
  std::string root;
  std::unique_ptr<store::Store> db;
  std::unique_ptr<AuthStore> store;
  std::unique_ptr<Authenticator> auth;
  std::string secret;
};

void BM_AuthenticateKey(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)));
  Credentials c{f.secret, {}, {}, {}, false};
  for (auto _ : state) benchmark::DoNotOptimize(f.auth->Authenticate(c));
}
BENCHMARK(BM_AuthenticateKey)->Arg(10)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_AuthenticateUnknownKey(benchmark::State& state) {
  Fixture f(10);
  std::string unknown = GenerateApiKey();
  Credentials c{unknown, {}, {}, {}, false};
  for (auto _ : state) benchmark::DoNotOptimize(f.auth->Authenticate(c));
}
BENCHMARK(BM_AuthenticateUnknownKey)->Unit(benchmark::kMicrosecond);

void BM_KeyedHash(benchmark::State& state) {
  std::array<uint8_t, 32> bytes{};
  ServerSecret secret = ServerSecret::FromBytes(bytes);
  std::string key = GenerateApiKey();
  for (auto _ : state) benchmark::DoNotOptimize(secret.KeyedHash(key));
}
BENCHMARK(BM_KeyedHash)->Unit(benchmark::kMicrosecond);

void BM_Argon2id(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(HashPassword("a console password", PasswordParams{}));
}
BENCHMARK(BM_Argon2id)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
}  // namespace kimi::auth

BENCHMARK_MAIN();
