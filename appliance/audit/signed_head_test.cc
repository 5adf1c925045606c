#include "audit/signed_head.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit_key.h"
#include "audit/test_util.h"

namespace kimi::audit {
namespace {

AuditKey TestKey() {
  std::array<uint8_t, 32> seed{};
  for (size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<uint8_t>(i);
  return AuditKey::FromSeed(seed);
}

TEST(SignedHead, SigningBytesLayout) {
  Hash root{};
  root.fill(0xab);
  Hash key_id{};
  key_id.fill(0xcd);
  const std::string bytes = TreeHeadSigningBytes(0x0102030405060708ULL, 0x1122334455667788LL, root, key_id);
  ASSERT_EQ(bytes.size(), 96u);
  EXPECT_EQ(bytes.substr(0, 16), "KIMI-AUDIT-STH/1");
  EXPECT_EQ(ToHex(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()) + 48, 16)),
            "01020304050607081122334455667788");
  EXPECT_EQ(static_cast<uint8_t>(bytes[16]), 0xcd);
  EXPECT_EQ(static_cast<uint8_t>(bytes[95]), 0xab);
}

TEST(SignedHead, SignVerifyAndRejectAlterations) {
  const AuditKey key = TestKey();
  const SignedTreeHead head = key.Sign(42, 1790000000000, Sha256("root"));
  EXPECT_TRUE(VerifyTreeHead(head, key.public_key()).ok());
  SignedTreeHead h = head;
  h.tree_size = 43;
  EXPECT_FALSE(VerifyTreeHead(h, key.public_key()).ok());
  h = head;
  h.timestamp_ms += 1;
  EXPECT_FALSE(VerifyTreeHead(h, key.public_key()).ok());
  h = head;
  h.root_hash[3] ^= 1;
  EXPECT_FALSE(VerifyTreeHead(h, key.public_key()).ok());
  h = head;
  h.signature[10] ^= 1;
  EXPECT_FALSE(VerifyTreeHead(h, key.public_key()).ok());
  std::array<uint8_t, 32> other_seed{};
  other_seed.fill(9);
  const AuditKey other = AuditKey::FromSeed(other_seed);
  EXPECT_FALSE(VerifyTreeHead(head, other.public_key()).ok());
}

TEST(SignedHead, JsonRoundTrip) {
  const AuditKey key = TestKey();
  const SignedTreeHead head = key.Sign(5, 1790000000001, Sha256("r"));
  Result<SignedTreeHead> back = TreeHeadFromJson(TreeHeadToJson(head));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, head);
  Result<PublicKey> pk = ParsePublicKey(PublicKeyToJson(key.public_key()).dump());
  ASSERT_TRUE(pk.ok());
  EXPECT_EQ(*pk, key.public_key());
  Result<PublicKey> hex = ParsePublicKey(ToHex(std::span<const uint8_t>(key.public_key())) + "\n");
  ASSERT_TRUE(hex.ok());
  EXPECT_EQ(*hex, key.public_key());
}

TEST(AuditKeyFile, CreatedOnceWithMode0600AndReloaded) {
  testing::TempDir dir;
  Result<AuditKey> first = AuditKey::LoadOrCreate(dir.path());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(dir.File(std::string(kAuditKeyFile)).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  Result<AuditKey> again = AuditKey::LoadOrCreate(dir.path());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->public_key(), first->public_key());
  Result<std::string> exported = ReadTextFile(dir.File(std::string(kAuditPublicKeyFile)));
  ASSERT_TRUE(exported.ok());
  Result<PublicKey> pk = ParsePublicKey(*exported);
  ASSERT_TRUE(pk.ok());
  EXPECT_EQ(*pk, first->public_key());
}

// A FIFO or a link planted in the seed's place in the data directory: the start waited in
// open() for a writer (FIFO) or read the seed through the link. The alarm ends a regression.
TEST(AuditKeyFile, RefusesAFifoOrALinkInTheSeedsPlaceWithoutWaiting) {
  testing::TempDir dir;
  ASSERT_TRUE(AuditKey::LoadOrCreate(dir.path()).ok());
  const std::string seed = dir.File(std::string(kAuditKeyFile)), moved = dir.File("seed-elsewhere");
  ASSERT_EQ(::rename(seed.c_str(), moved.c_str()), 0);
  ASSERT_EQ(::symlink(moved.c_str(), seed.c_str()), 0);
  EXPECT_EQ(AuditKey::LoadOrCreate(dir.path()).status().code(), Status::Code::kInvalidArgument);
  ASSERT_EQ(::unlink(seed.c_str()), 0);
  ASSERT_EQ(::mkfifo(seed.c_str(), 0600), 0);
  ::alarm(60);
  const Status fifo = AuditKey::LoadOrCreate(dir.path()).status();
  ::alarm(0);
  EXPECT_EQ(fifo.code(), Status::Code::kInvalidArgument) << fifo.ToString();
}

TEST(AuditKeyFile, RefusesAKeyOthersCanRead) {
  testing::TempDir dir;
  ASSERT_TRUE(AuditKey::LoadOrCreate(dir.path()).ok());
  ASSERT_EQ(::chmod(dir.File(std::string(kAuditKeyFile)).c_str(), 0644), 0);
  EXPECT_EQ(AuditKey::LoadOrCreate(dir.path()).status().code(), Status::Code::kPermissionDenied);
}

}  // namespace
}  // namespace kimi::audit
