#include "audit/audit_text.h"

#include <gtest/gtest.h>

#include "audit/canonical_json.h"
#include "audit/hash.h"

namespace kimi::audit {
namespace {

TEST(AuditText, ShortPlainTextIsKept) {
  EXPECT_EQ(AuditText("key_ab12"), "key_ab12");
  EXPECT_EQ(AuditText(""), "");
  EXPECT_EQ(AuditText("caf\xc3\xa9 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
  EXPECT_EQ(AuditText(std::string(kMaxAuditTextBytes, 'a')), std::string(kMaxAuditTextBytes, 'a'));
}

// The pen test's login name: 7 MB kept as a few hundred bytes that still identify it.
TEST(AuditText, LongTextIsCutWithItsLengthAndDigest) {
  const std::string huge(7 * 1024 * 1024, 'u');
  const std::string kept = AuditText(huge);
  EXPECT_LE(kept.size(), kMaxAuditTextBytes);
  EXPECT_EQ(kept.rfind("uuuu", 0), 0u);
  const std::string marker = "\xE2\x80\xA6[truncated, 7340032 bytes, sha256:" + ToHex(Sha256(huge)) + "]";
  ASSERT_GE(kept.size(), marker.size());
  EXPECT_EQ(kept.substr(kept.size() - marker.size()), marker);
  EXPECT_LE(AuditText(huge, kMaxAuditDetailBytes).size(), kMaxAuditDetailBytes);
  EXPECT_GT(AuditText(huge, kMaxAuditDetailBytes).size(), kMaxAuditTextBytes);
}

TEST(AuditText, CutsAtACharacterBoundaryAndIsIdempotent) {
  for (size_t pad = 0; pad < 4; ++pad) {
    const std::string text = std::string(pad, 'x') + [] {
      std::string s;
      for (int i = 0; i < 200; ++i) s += "\xf0\x9f\x98\x80";  // four bytes each
      return s;
    }();
    const std::string kept = AuditText(text);
    EXPECT_TRUE(IsValidUtf8(kept)) << pad;
    EXPECT_LE(kept.size(), kMaxAuditTextBytes);
    EXPECT_EQ(AuditText(kept), kept);
  }
}

// Log injection: nothing that ends or reorders a line survives as itself.
TEST(AuditText, LineBreakingCharactersAreEscaped) {
  EXPECT_EQ(AuditText("a\nb\rc\td\x1b[2J\x7f"), "a\\u000ab\\u000dc\\u0009d\\u001b[2J\\u007f");
  EXPECT_EQ(AuditText("x\xc2\x85y"), "x\\u0085y");                // NEL (C1)
  EXPECT_EQ(AuditText("x\xe2\x80\xa8y\xe2\x80\xa9"), "x\\u2028y\\u2029");  // line and paragraph separators
  EXPECT_EQ(AuditText("admin\xe2\x80\xae" "gpj.exe"), "admin\\u202egpj.exe");  // right-to-left override
  EXPECT_EQ(AuditText("\xe2\x81\xa6x"), "\\u2066x");               // isolate
  EXPECT_EQ(AuditText("a\xff" "b"), "a\xEF\xBF\xBD" "b");          // ill-formed UTF-8 first
  const std::string escaped = AuditText("a\nb");
  EXPECT_EQ(AuditText(escaped), escaped);
}

TEST(AuditText, EscapingCannotPushTextPastTheBound) {
  const std::string kept = AuditText(std::string(10000, '\n'));
  EXPECT_LE(kept.size(), kMaxAuditTextBytes);
  EXPECT_NE(kept.find("[truncated, 60000 bytes, sha256:"), std::string::npos) << kept;
  for (char c : kept) EXPECT_NE(c, '\n');
}

}  // namespace
}  // namespace kimi::audit
