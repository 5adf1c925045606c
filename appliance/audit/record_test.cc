#include "audit/record.h"

#include <gtest/gtest.h>

#include "audit/audit_text.h"
#include "audit/canonical_json.h"
#include "audit/hash.h"
#include "audit/test_util.h"

namespace kimi::audit {
namespace {

AuditRecord KnownRecord() {
  AuditRecord r;
  r.seq = 7;
  r.time_ms = 1790000000123;
  r.actor = "key_ab12";
  r.role = "user";
  r.source = "10.0.0.5:51234";
  r.request_id = "req-1";
  r.action = "chat.completions";
  r.model = "kimi-k3";
  r.model_digest = "sha256:00ff";
  r.outcome = "ok";
  r.http_status = 200;
  r.prompt_tokens = 12;
  r.completion_tokens = 34;
  r.ttft_us = 5600;
  r.total_us = 78000;
  r.policy = {"allow"};
  r.request_sha256 = "aa";
  r.response_sha256 = "bb";
  return r;
}

TEST(CanonicalRecord, ExactBytesOfAKnownVersion1Record) {
  // Records written before version 2 keep hashing to the bytes they were written with.
  AuditRecord r = KnownRecord();
  r.version = 1;
  r.backend = "ignored in version 1";
  NormalizeRecord(&r);
  EXPECT_EQ(CanonicalRecordBytes(r),
            R"({"action":"chat.completions","actor":"key_ab12","completion_tokens":34,"content_sha256":"",)"
            R"("detail":"","http_status":200,"model":"kimi-k3","model_digest":"sha256:00ff","outcome":"ok",)"
            R"("policy":["allow"],"prompt_tokens":12,"request_id":"req-1","request_sha256":"aa",)"
            R"("response_sha256":"bb","role":"user","seq":7,"source":"10.0.0.5:51234","target":"",)"
            R"("time_ms":1790000000123,"total_us":78000,"ttft_us":5600,"v":1})");
}

TEST(CanonicalRecord, ExactBytesOfAKnownVersion2Record) {
  AuditRecord r = KnownRecord();
  r.version = 2;
  r.client_request_id = "ignored in version 2";
  r.backend = "embedded";
  r.route_decision = "only candidate";
  r.attempts = 1;
  NormalizeRecord(&r);
  EXPECT_EQ(CanonicalRecordBytes(r),
            R"({"action":"chat.completions","actor":"key_ab12","attempts":1,"backend":"embedded",)"
            R"("completion_tokens":34,"content_sha256":"",)"
            R"("detail":"","http_status":200,"model":"kimi-k3","model_digest":"sha256:00ff","outcome":"ok",)"
            R"("policy":["allow"],"prompt_tokens":12,"request_id":"req-1","request_sha256":"aa",)"
            R"("response_sha256":"bb","role":"user","route_decision":"only candidate","seq":7,)"
            R"("source":"10.0.0.5:51234","target":"",)"
            R"("time_ms":1790000000123,"total_us":78000,"ttft_us":5600,"v":2})");
}

// KnownRecord with the fields of versions 2 and 3 set.
AuditRecord KnownRecordWithLaterFields() {
  AuditRecord r = KnownRecord();
  r.backend = "embedded";
  r.route_decision = "only candidate";
  r.attempts = 1;
  r.client_request_id = "client-7";
  return r;
}

TEST(CanonicalRecord, ExactBytesOfAKnownVersion3Record) {
  AuditRecord r = KnownRecordWithLaterFields();
  r.version = 3;
  NormalizeRecord(&r);
  EXPECT_EQ(CanonicalRecordBytes(r),
            R"({"action":"chat.completions","actor":"key_ab12","attempts":1,"backend":"embedded",)"
            R"("client_request_id":"client-7","completion_tokens":34,"content_sha256":"",)"
            R"("detail":"","http_status":200,"model":"kimi-k3","model_digest":"sha256:00ff","outcome":"ok",)"
            R"("policy":["allow"],"prompt_tokens":12,"request_id":"req-1","request_sha256":"aa",)"
            R"("response_sha256":"bb","role":"user","route_decision":"only candidate","seq":7,)"
            R"("source":"10.0.0.5:51234","target":"",)"
            R"("time_ms":1790000000123,"total_us":78000,"ttft_us":5600,"v":3})");
}

TEST(CanonicalRecord, ExactBytesOfAKnownVersion4Record) {
  AuditRecord r = KnownRecordWithLaterFields();
  r.start_seq = 5;
  NormalizeRecord(&r);
  EXPECT_EQ(r.version, 4);
  EXPECT_EQ(CanonicalRecordBytes(r),
            R"({"action":"chat.completions","actor":"key_ab12","attempts":1,"backend":"embedded",)"
            R"("client_request_id":"client-7","completion_tokens":34,"content_sha256":"",)"
            R"("detail":"","http_status":200,"model":"kimi-k3","model_digest":"sha256:00ff","outcome":"ok",)"
            R"("policy":["allow"],"prompt_tokens":12,"request_id":"req-1","request_sha256":"aa",)"
            R"("response_sha256":"bb","role":"user","route_decision":"only candidate","seq":7,)"
            R"("source":"10.0.0.5:51234","start_seq":5,"target":"",)"
            R"("time_ms":1790000000123,"total_us":78000,"ttft_us":5600,"v":4})");
}

// Finding 2 of the pen test: a 7 MB login name was stored as actor, target and in the detail,
// 28 MB a request. Every text field is bounded where the record is normalised.
TEST(CanonicalRecord, EveryTextFieldIsBounded) {
  const std::string huge(7 * 1024 * 1024, 'n');
  AuditRecord r = KnownRecord();
  for (std::string* s : {&r.actor, &r.role, &r.source, &r.request_id, &r.client_request_id, &r.action, &r.target,
                         &r.model, &r.model_digest, &r.outcome, &r.request_sha256, &r.response_sha256, &r.detail,
                         &r.backend, &r.route_decision, &r.content_sha256}) {
    *s = huge;
  }
  r.policy = {huge, huge};
  NormalizeRecord(&r);
  const std::string bytes = CanonicalRecordBytes(r);
  EXPECT_LT(bytes.size(), 16u * 1024) << "canonical record of " << bytes.size() << " bytes";
  EXPECT_NE(r.actor.find("[truncated, 7340032 bytes, sha256:"), std::string::npos);
  EXPECT_LE(r.detail.size(), kMaxAuditDetailBytes);
}

TEST(CanonicalRecord, ControlCharactersCannotBreakALine) {
  AuditRecord r = KnownRecord();
  r.actor = "mallory\n2026-12-01T00:00:00Z INFO forged";
  r.client_request_id = "id\r\x1b[1A";
  NormalizeRecord(&r);
  EXPECT_EQ(r.actor, "mallory\\u000a2026-12-01T00:00:00Z INFO forged");
  EXPECT_EQ(r.client_request_id, "id\\u000d\\u001b[1A");
}

TEST(RecordJson, RoundTripsEveryHashedFieldOfEveryVersion) {
  for (int64_t version : {int64_t{1}, int64_t{2}, int64_t{3}}) {
    AuditRecord r = testing::SampleRecord(5);  // one with content
    r.version = version;
    r.backend = version >= 2 ? "upstream:w1" : "";
    r.route_decision = version >= 2 ? "w1 (load 0)" : "";
    r.attempts = version >= 2 ? 2 : 0;
    r.client_request_id = version >= 3 ? "client-5" : "";
    NormalizeRecord(&r);
    Result<AuditRecord> back = RecordFromJson(RecordToJson(r));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    NormalizeRecord(&*back);
    EXPECT_EQ(CanonicalRecordBytes(*back), CanonicalRecordBytes(r));
    EXPECT_EQ(back->content, r.content);
  }
}

TEST(RecordJson, RefusesMissingFieldsAndUnknownVersions) {
  AuditRecord r = testing::SampleRecord(2);
  NormalizeRecord(&r);
  nlohmann::json j = RecordToJson(r);
  j.erase("actor");
  EXPECT_NE(RecordFromJson(j).status().message().find("actor"), std::string::npos);
  j = RecordToJson(r);
  j["v"] = 99;
  EXPECT_FALSE(RecordFromJson(j).ok());
  j = RecordToJson(r);
  j["http_status"] = "200";
  EXPECT_FALSE(RecordFromJson(j).ok());
}

TEST(CanonicalRecord, IsSortedCompactJson) {
  // A JSON library that sorts keys and writes no whitespace must reproduce the bytes exactly.
  for (int i = 0; i < 8; ++i) {
    AuditRecord r = testing::SampleRecord(i);
    r.detail = std::string("quote\" backslash\\ newline\n tab\t bell\x07 del\x7f caf\xc3\xa9");
    NormalizeRecord(&r);
    const std::string bytes = CanonicalRecordBytes(r);
    EXPECT_EQ(nlohmann::json::parse(bytes).dump(), bytes);
  }
}

TEST(CanonicalRecord, ContentIsRepresentedOnlyByItsDigest) {
  AuditRecord with = testing::SampleRecord(1);
  ASSERT_TRUE(with.content.has_value());
  NormalizeRecord(&with);
  const std::string bytes = CanonicalRecordBytes(with);
  EXPECT_EQ(bytes.find("prompt 1"), std::string::npos);
  EXPECT_EQ(with.content_sha256, ToHex(Sha256(R"({"completion":"completion 1","prompt":"prompt 1"})")));
  // Purging the content keeps the digest and so the bytes.
  AuditRecord purged = with;
  purged.content.reset();
  NormalizeRecord(&purged);
  EXPECT_EQ(CanonicalRecordBytes(purged), bytes);
}

TEST(CanonicalRecord, IllFormedUtf8BecomesReplacementCharacter) {
  AuditRecord r = testing::SampleRecord(0);
  r.actor = std::string("a\xff") + "b\xc0\xaf" + "c\xed\xa0\x80" + "d\xe2\x82";
  NormalizeRecord(&r);
  EXPECT_TRUE(IsValidUtf8(r.actor));
  EXPECT_EQ(r.actor, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c\xEF\xBF\xBD" "d\xEF\xBF\xBD");
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}

TEST(RecordTime, FormatsAndParsesUtcMilliseconds) {
  EXPECT_EQ(FormatUtcMillis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatUtcMillis(1790000000123), "2026-09-21T14:13:20.123Z");
  EXPECT_EQ(*ParseUtcMillis("2026-09-21T14:13:20.123Z"), 1790000000123);
  EXPECT_EQ(*ParseUtcMillis("2026-09-21T14:13:20Z"), 1790000000000);
  EXPECT_EQ(*ParseUtcMillis("1970-01-02"), 86400000);
  EXPECT_EQ(*ParseUtcMillis("12345"), 12345);
  EXPECT_FALSE(ParseUtcMillis("yesterday").ok());
  EXPECT_FALSE(ParseUtcMillis("2026-13-01").ok());
  // A day the month does not have is refused, not moved into the next month.
  for (const char* bad : {"2027-02-29", "2027-02-30", "2027-04-31T00:00:00Z", "2026-12-31T23:59:60Z", "2100-02-29"}) {
    EXPECT_FALSE(ParseUtcMillis(bad).ok()) << bad;
  }
  EXPECT_EQ(*ParseUtcMillis("2028-02-29"), *ParseUtcMillis("2028-03-01") - 86400000);  // a leap year
  EXPECT_TRUE(ParseUtcMillis("2000-02-29").ok());
}

}  // namespace
}  // namespace kimi::audit
