// The auditors' search parameters (audit_query.h): order, key name and owner resolved to key
// ids, the partial match, the page bounds and the bounded scan of a partial match.
#include "admin/audit_query.h"

#include <gtest/gtest.h>

#include <limits>

namespace kimi::admin {
namespace {

httplib::Request Query(std::initializer_list<std::pair<std::string, std::string>> params) {
  httplib::Request req;
  for (const auto& [name, value] : params) req.params.emplace(name, value);
  return req;
}

auth::KeyRecord Key(std::string id, std::string name, std::string owner) {
  auth::KeyRecord k;
  k.id = std::move(id);
  k.name = std::move(name);
  k.owner = std::move(owner);
  return k;
}

const KeyDirectory& Keys() {
  static const KeyDirectory keys({Key("key_a1", "ci-runner", "alice"), Key("key_a2", "notebook", "alice"),
                                  Key("key_b1", "ci-runner", "bob"), Key("key_s1", "Batch_100%", "system")});
  return keys;
}

AuditSearch Parse(std::initializer_list<std::pair<std::string, std::string>> params) {
  Result<AuditSearch> s = ParseAuditSearch(Query(params), Keys());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : AuditSearch();
}

TEST(AuditSearchParams, NewestFirstUnlessOldestIsAsked) {
  EXPECT_TRUE(Parse({}).query.newest_first);
  EXPECT_TRUE(Parse({{"order", "newest"}}).query.newest_first);
  EXPECT_FALSE(Parse({{"order", "oldest"}}).query.newest_first);
  EXPECT_FALSE(ParseAuditSearch(Query({{"order", "seq"}}), Keys()).ok());
}

TEST(AuditSearchParams, AKeyNameOrOwnerIsEveryKeyWithIt) {
  EXPECT_EQ(Parse({{"key_name", "ci-runner"}}).query.actor_in, (std::vector<std::string>{"key_a1", "key_b1"}));
  EXPECT_EQ(Parse({{"owner", "alice"}}).query.actor_in, (std::vector<std::string>{"key_a1", "key_a2"}));
  // Both: the keys that have both.
  EXPECT_EQ(Parse({{"key_name", "ci-runner"}, {"owner", "alice"}}).query.actor_in,
            (std::vector<std::string>{"key_a1"}));
  // A name no key has finds nothing (an empty list), never every record.
  std::optional<std::vector<std::string>> none = Parse({{"owner", "mallory"}}).query.actor_in;
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(Parse({}).query.actor_in.has_value());
}

TEST(AuditSearchParams, APartialMatchAlsoFindsKeysByNameOrOwner) {
  AuditSearch s = Parse({{"q", "ALIC"}});
  EXPECT_EQ(s.query.contains, "ALIC");
  EXPECT_EQ(s.query.contains_actors, (std::vector<std::string>{"key_a1", "key_a2"}));
  // Wildcards in names are text: "_100%" matches the one name that holds it, not every name.
  EXPECT_EQ(Parse({{"q", "_100%"}}).query.contains_actors, (std::vector<std::string>{"key_s1"}));
  EXPECT_EQ(Parse({{"q", "runner"}}).query.contains_actors, (std::vector<std::string>{"key_a1", "key_b1"}));
  EXPECT_FALSE(ParseAuditSearch(Query({{"q", std::string(kAuditMaxContainsBytes + 1, 'x')}}), Keys()).ok());
  // Searched as the log stores text: a NUL cannot end the pattern early (it matched everything).
  EXPECT_EQ(Parse({{"q", std::string("\0zzzz", 5)}}).query.contains, "\\u0000zzzz");
  EXPECT_EQ(Parse({{"q", "a\tb"}}).query.contains, "a\\u0009b");
}

TEST(AuditSearchParams, ThePageIsBounded) {
  EXPECT_EQ(Parse({}).limit, kAuditDefaultPage);
  EXPECT_EQ(Parse({{"limit", "1000"}}).limit, 1000u);
  for (const char* bad : {"0", "1001", "-1", "x", ""}) {
    EXPECT_FALSE(ParseAuditSearch(Query({{"limit", bad}}), Keys()).ok()) << bad;
  }
  EXPECT_FALSE(ParseAuditSearch(Query({{"cursor", std::to_string(std::numeric_limits<int64_t>::max())}}), Keys()).ok());
  EXPECT_FALSE(ParseAuditSearch(Query({{"since", "yesterday"}}), Keys()).ok());
  EXPECT_EQ(Parse({{"since", "1970-01-02"}}).query.since_ms, 86'400'000);
}

TEST(AuditPages, ACursorStartsThePageInEitherDirection) {
  AuditPage newest = PageOf(Parse({{"cursor", "40"}, {"limit", "10"}}), 100);
  EXPECT_EQ(newest.query.to_seq, 41u);  // 40 is the first record of the page
  EXPECT_EQ(newest.query.from_seq, 0u);
  EXPECT_EQ(newest.query.limit, 11u);   // one more: is there a next page
  EXPECT_FALSE(newest.bounded);
  AuditPage oldest = PageOf(Parse({{"cursor", "40"}, {"order", "oldest"}}), 100);
  EXPECT_EQ(oldest.query.from_seq, 40u);
  EXPECT_EQ(oldest.query.to_seq, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
}

TEST(AuditPages, APartialMatchScansAWindowAndSaysWhereToResume) {
  // Newest first over 1000 records, a window of 300: seqs 700..999, resume at 699.
  AuditPage first = PageOf(Parse({{"q", "x"}}), 1000, 300);
  EXPECT_TRUE(first.bounded);
  EXPECT_EQ(first.query.from_seq, 700u);
  EXPECT_EQ(first.query.to_seq, 1000u);
  EXPECT_EQ(first.scan_first, 700u);
  EXPECT_EQ(first.scan_last, 999u);
  EXPECT_EQ(first.resume, std::optional<uint64_t>(699));
  // The last window reaches seq 0: nothing to resume.
  AuditPage last = PageOf(Parse({{"q", "x"}, {"cursor", "199"}}), 1000, 300);
  EXPECT_EQ(last.query.from_seq, 0u);
  EXPECT_EQ(last.scan_last, 199u);
  EXPECT_FALSE(last.resume.has_value());
  // Oldest first: from the cursor up.
  AuditPage up = PageOf(Parse({{"q", "x"}, {"order", "oldest"}, {"cursor", "100"}}), 1000, 300);
  EXPECT_EQ(up.query.from_seq, 100u);
  EXPECT_EQ(up.query.to_seq, 400u);
  EXPECT_EQ(up.resume, std::optional<uint64_t>(400));
  AuditPage end = PageOf(Parse({{"q", "x"}, {"order", "oldest"}, {"cursor", "800"}}), 1000, 300);
  EXPECT_EQ(end.scan_last, 999u);
  EXPECT_FALSE(end.resume.has_value());
  // Without a partial match the indexes bound the work: no window.
  EXPECT_FALSE(PageOf(Parse({{"actor", "key_a1"}}), 1000, 300).bounded);
}

TEST(AuditRecords, AKeyActorGetsItsNameAndOwner) {
  audit::StoredRecord row;
  row.record.actor = "key_b1";
  nlohmann::json j = AuditorRecordJson(row, Keys());
  EXPECT_EQ(j["key_name"], "ci-runner");
  EXPECT_EQ(j["key_owner"], "bob");
  row.record.actor = "admin";  // a console user
  EXPECT_FALSE(AuditorRecordJson(row, Keys()).contains("key_name"));
}

TEST(AuditExportTarget, NamesEveryFilter) {
  EXPECT_EQ(DescribeAuditSearch(Query({{"owner", "alice"}, {"q", "x"}})), "since=- until=- owner=alice q=x");
}

}  // namespace
}  // namespace kimi::admin
