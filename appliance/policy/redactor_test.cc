#include "policy/redactor.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace kimi::policy {
namespace {

auth::ServerSecret Secret(uint8_t fill) {
  std::array<uint8_t, 32> bytes;
  bytes.fill(fill);
  return auth::ServerSecret::FromBytes(bytes);
}

RedactionPolicy Rules(std::vector<RedactionRule> rules) {
  RedactionPolicy p;
  p.rules = std::move(rules);
  return p;
}

// A text and what the redactor makes of it.
struct Case {
  std::string text;
  std::string redacted;
};

TEST(RedactorTest, MasksWithTheCategoryAndCountsWithoutValues) {
  auto r = Redactor::Create(Rules({{"iban", Action::kMask}, {"email", Action::kMask}}), nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  RedactionTally tally;
  std::string out = (*r)->Redact("Pay GB82WEST12345698765432 or DE89370400440532013000, mail a@b.io", &tally);
  EXPECT_EQ(out, "Pay [REDACTED:IBAN] or [REDACTED:IBAN], mail [REDACTED:EMAIL]");
  EXPECT_EQ(tally.decisions(), (std::vector<RedactionDecision>{{"iban", Action::kMask, 2}, {"email", Action::kMask, 1}}));
  EXPECT_FALSE(tally.BlockedCategory().has_value());
}

TEST(RedactorTest, NearMissesStayAsWritten) {
  auto r = Redactor::Create(Rules({{"iban", Action::kMask}, {"payment_card", Action::kMask}}), nullptr);
  ASSERT_TRUE(r.ok());
  RedactionTally tally;
  const std::string text = "GB82WEST12345698765433 and 4111 1111 1111 1112";
  EXPECT_EQ((*r)->Redact(text, &tally), text);
  EXPECT_TRUE(tally.decisions().empty());
}

TEST(RedactorTest, HashIsKeyedAndStable) {
  const auth::ServerSecret a = Secret(1), b = Secret(2);
  auto ra = Redactor::Create(Rules({{"payment_card", Action::kHash}}), &a);
  auto rb = Redactor::Create(Rules({{"payment_card", Action::kHash}}), &b);
  ASSERT_TRUE(ra.ok() && rb.ok());
  RedactionTally tally;
  std::string one = (*ra)->Redact("4111111111111111", &tally);
  std::string two = (*ra)->Redact("4111111111111111", &tally);
  std::string other_value = (*ra)->Redact("5555555555554444", &tally);
  std::string other_secret = (*rb)->Redact("4111111111111111", &tally);
  EXPECT_EQ(one, two);
  EXPECT_TRUE(one.starts_with("[HASH:PAYMENT_CARD:")) << one;
  EXPECT_EQ(one.size(), std::string("[HASH:PAYMENT_CARD:]").size() + 16);
  EXPECT_NE(one, other_value);
  EXPECT_NE(one, other_secret);
  EXPECT_EQ(one.find("4111"), std::string::npos);
  EXPECT_EQ(tally.decisions()[0].count, 4);
}

TEST(RedactorTest, HashWithoutSecretIsRefused) {
  EXPECT_FALSE(Redactor::Create(Rules({{"iban", Action::kHash}}), nullptr).ok());
}

TEST(RedactorTest, BlockNamesTheCategory) {
  auto r = Redactor::Create(Rules({{"payment_card", Action::kBlock}, {"email", Action::kMask}}), nullptr);
  ASSERT_TRUE(r.ok());
  RedactionTally tally;
  (*r)->Redact("mail a@b.io card 4111-1111-1111-1111", &tally);
  EXPECT_EQ(tally.BlockedCategory(), "payment_card");
}

TEST(RedactorTest, MedicalRecordAndCustomPatterns) {
  RedactionPolicy p = Rules({{"medical_record", Action::kMask}, {"phone", Action::kMask}});
  p.medical_record_pattern = R"(\bMRN-[0-9]{7}\b)";
  p.custom_patterns.push_back({"employee_id", R"(EMP-[0-9]{5})", Action::kMask});
  auto r = Redactor::Create(p, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  RedactionTally tally;
  EXPECT_EQ((*r)->Redact("Bệnh nhân MRN-0012345, nhân viên EMP-00042, gọi 0912 345 678", &tally),
            "Bệnh nhân [REDACTED:MEDICAL_RECORD], nhân viên [REDACTED:EMPLOYEE_ID], gọi [REDACTED:PHONE]");
}

TEST(RedactorTest, MedicalRecordWithoutPatternIsRefused) {
  EXPECT_FALSE(Redactor::Create(Rules({{"medical_record", Action::kMask}}), nullptr).ok());
}

TEST(RedactorTest, OverlapsKeepTheEarliestLongestFinding) {
  // A card number also reads as digits a phone detector could see; the card wins.
  auto r = Redactor::Create(Rules({{"phone", Action::kMask}, {"payment_card", Action::kMask}}), nullptr);
  ASSERT_TRUE(r.ok());
  RedactionTally tally;
  EXPECT_EQ((*r)->Redact("card 4111 1111 1111 1111", &tally), "card [REDACTED:PAYMENT_CARD]");
  EXPECT_EQ(tally.decisions().size(), 1u);
}

// The built-in e-mail rule masks, a custom rule blocks the same text: the e-mail finding came
// first in the overlap order and the block was dropped, so the value reached the model masked.
TEST(RedactorTest, ABlockRuleRefusesWhateverRuleCoversTheSameText) {
  RedactionPolicy p = Rules({{"email", Action::kMask}});
  p.custom_patterns.push_back({"internal_mail", R"([a-z.]+@corp\.example)", Action::kBlock});
  auto r = Redactor::Create(p, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  RedactionTally tally;
  (*r)->Redact("write to jane.doe@corp.example today", &tally);
  EXPECT_EQ(tally.BlockedCategory(), "internal_mail");
  // Stored text is masked under the rule that blocks it.
  RedactionTally stored;
  EXPECT_EQ((*r)->Redact("write to jane.doe@corp.example today", &stored, /*mask_blocked=*/true),
            "write to [REDACTED:INTERNAL_MAIL] today");
  RedactionTally other;
  (*r)->Redact("write to jane.doe@example.org today", &other);
  EXPECT_EQ(other.BlockedCategory(), std::nullopt);
}

// Findings that overlap without one holding the other: the first kept its span and the
// second was dropped, so the digits of the second past the first stayed in the text (stored
// in clear, or sent to the model with before_model).
TEST(RedactorTest, OverlappingFindingsLeaveNoDigitsOfEither) {
  RedactionPolicy p = Rules({{"payment_card", Action::kMask}, {"us_ssn", Action::kMask}, {"ip_address", Action::kMask}});
  p.custom_patterns.push_back({"account", "ACCT [0-9]{4}", Action::kMask});
  auto r = Redactor::Create(p, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const Case& c : {Case{"customer 123-45-6789 4111 1111 1111 1111", "customer [REDACTED:US_SSN]"},
                        Case{"from 10.0.0.18 4111 1111 1111 1111", "from [REDACTED:IP_ADDRESS]"},
                        Case{"host fe80::4111 1111 1111 1111", "host [REDACTED:IP_ADDRESS]"},
                        Case{"ACCT 4111 1111 1111 1111", "[REDACTED:ACCOUNT]"}}) {
    RedactionTally tally;
    EXPECT_EQ((*r)->Redact(c.text, &tally), c.redacted) << c.text;
    const std::vector<RedactionDecision>& found = tally.decisions();
    EXPECT_TRUE(std::any_of(found.begin(), found.end(), [](const RedactionDecision& d) {
      return d.category == "payment_card";
    })) << c.text;
  }
}

// The most protective action of the categories a span holds applies: a hash of text that a
// masking rule also found would show a token that links equal values.
TEST(RedactorTest, ASpanTakesTheMostProtectiveActionOfItsFindings) {
  const auth::ServerSecret secret = Secret(7);
  RedactionPolicy p = Rules({{"email", Action::kHash}});
  p.custom_patterns.push_back({"internal_mail", R"([a-z.]+@corp\.example)", Action::kMask});
  auto r = Redactor::Create(p, &secret);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  RedactionTally tally;
  EXPECT_EQ((*r)->Redact("write to jane.doe@corp.example", &tally), "write to [REDACTED:INTERNAL_MAIL]");
  EXPECT_EQ(tally.decisions(), (std::vector<RedactionDecision>{{"email", Action::kHash, 1},
                                                               {"internal_mail", Action::kMask, 1}}));
}

// Operator patterns match bytes: `.{4}` after "ID " stops inside "đ" (2 bytes). The redacted
// text kept half the character, which a strict JSON writer refuses later (a 500).
TEST(RedactorTest, AMatchInsideAMultiByteCharacterTakesTheWholeCharacter) {
  RedactionPolicy p;
  p.custom_patterns.push_back({"ref", "ID .{4}", Action::kMask});
  p.custom_patterns.push_back({"tail", "[0-9]{2}\\xC2", Action::kMask});
  auto r = Redactor::Create(p, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  RedactionTally tally;
  EXPECT_EQ((*r)->Redact("mã ID abcđef", &tally), "mã [REDACTED:REF]ef");
  RedactionTally other;
  EXPECT_EQ((*r)->Redact("giá 12» nữa", &other), "giá [REDACTED:TAIL] nữa");
}

// A value written so that a reader still reads it (full-width or other-script digits,
// no-break spaces, Unicode dashes, zero-width characters between its digits, a full-width
// "@", invisible tag characters) passed every detector, which read ASCII only: the card went
// to the model and into storage in clear.
TEST(RedactorTest, AValueIsFoundHoweverItsCharactersAreWritten) {
  RedactionPolicy p = Rules({{"payment_card", Action::kMask}, {"us_ssn", Action::kMask}, {"email", Action::kMask},
                             {"iban", Action::kMask}, {"phone", Action::kMask}});
  p.custom_patterns.push_back({"account", "ACCT [0-9]{4}", Action::kMask});
  auto r = Redactor::Create(p, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const Case& c : {
           Case{"thẻ ４１１１ １１１１ １１１１ １１１１ nhé", "thẻ [REDACTED:PAYMENT_CARD] nhé"},
           Case{"card 4111\u00A01111\u00A01111\u00A01111.", "card [REDACTED:PAYMENT_CARD]."},
           Case{"card 4\u200B111\u200B1111\u200B1111\u200B1111", "card [REDACTED:PAYMENT_CARD]"},
           Case{"card \u0664\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661",
                "card [REDACTED:PAYMENT_CARD]"},
           Case{"card 4111\U000E003111111111111", "card [REDACTED:PAYMENT_CARD]"},
           Case{"card 4\u0301111 1111 1111 1111", "card [REDACTED:PAYMENT_CARD]"},
           Case{"card 4\uFE0F\u20E31\uFE0F\u20E31\uFE0F\u20E31\uFE0F\u20E3 1111 1111 1111", "card [REDACTED:PAYMENT_CARD]"},
           Case{"ssn 123\u201045\u20136789", "ssn [REDACTED:US_SSN]"},
           Case{"ssn １２３－４５－６７８９", "ssn [REDACTED:US_SSN]"},
           Case{"mail ｊａｎｅ＠ｅｘａｍｐｌｅ．ｏｒｇ ok", "mail [REDACTED:EMAIL] ok"},
           Case{"iban ＧＢ８２ ＷＥＳＴ １２３４ ５６９８ ７６５４ ３２", "iban [REDACTED:IBAN]"},
           Case{"ACCT ４５６７ ok", "[REDACTED:ACCOUNT] ok"},
       }) {
    RedactionTally tally;
    EXPECT_EQ((*r)->Redact(c.text, &tally), c.redacted) << c.text;
  }
}

// One value gives one hash token whichever way its characters are written.
TEST(RedactorTest, AHashIsOfTheValueAsRead) {
  const auth::ServerSecret secret = Secret(3);
  auto r = Redactor::Create(Rules({{"payment_card", Action::kHash}}), &secret);
  ASSERT_TRUE(r.ok());
  RedactionTally tally;
  const std::string ascii = (*r)->Redact("4111 1111 1111 1111", &tally);
  EXPECT_TRUE(ascii.starts_with("[HASH:PAYMENT_CARD:")) << ascii;
  EXPECT_EQ((*r)->Redact("４１１１ １１１１ １１１１ １１１１", &tally), ascii);
  EXPECT_EQ((*r)->Redact("4111\u00A01111\u200B\u00A01111\u00A01111", &tally), ascii);
  EXPECT_NE((*r)->Redact("4111111111111111", &tally), ascii);  // the separators are part of what is read
}

TEST(RedactorTest, NoRulesLeavesTextAlone) {
  auto r = Redactor::Create(RedactionPolicy{}, nullptr);
  ASSERT_TRUE(r.ok());
  RedactionTally tally;
  EXPECT_TRUE((*r)->empty());
  EXPECT_EQ((*r)->Redact("a@b.io", &tally), "a@b.io");
}

}  // namespace
}  // namespace kimi::policy
