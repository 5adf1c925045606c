// The auditors' search, read from a request's query parameters: the one parser that both the
// list (GET /admin/v1/audit) and the export (GET /admin/v1/audit/export) use, so that an
// export holds exactly the records the list shows for the same parameters. Also the key
// directory that turns key names and owners into the key ids the audit log records as
// actors, and back into columns of each record.
//
//   since, until          UTC text or Unix ms; since inclusive, until exclusive
//   actor, action, outcome, model, request_id, client_request_id   exact match (indexed)
//   key_name, owner       exact match on the key's name or owner: the records of every key
//                         that has it (resolved to key ids here; the log keeps only the id)
//   q                     partial match: a substring (ASCII case-insensitive) of the actor,
//                         request id, client request id, target, or the actor key's name or owner
//   order                 newest (default) or oldest
//   cursor, limit         the page: cursor from next_cursor, limit 1..1000 (default 100)
//
// Thread safety: pure functions; a KeyDirectory is immutable after construction.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_store.h"
#include "auth/auth_store.h"
#include "kimi/status.h"

namespace kimi::admin {

inline constexpr uint64_t kAuditDefaultPage = 100;
inline constexpr uint64_t kAuditMaxPage = 1000;
// The longest `q` accepted, in bytes (the stored texts it is matched against are bounded
// to 256 bytes by audit/audit_text.h).
inline constexpr size_t kAuditMaxContainsBytes = 256;

// Every API key's name and owner by id, read once per request from the auth store.
class KeyDirectory {
 public:
  KeyDirectory() = default;
  explicit KeyDirectory(const std::vector<auth::KeyRecord>& keys);

  struct Names {
    std::string name;
    std::string owner;
  };
  // Null when `actor` is not a key's id (a console user, or a key unknown here).
  const Names* Find(const std::string& actor) const;
  // The ids of the keys with exactly this name, or this owner, in id order.
  std::vector<std::string> Named(const std::string& name) const;
  std::vector<std::string> OwnedBy(const std::string& owner) const;
  // The ids of the keys whose name or owner contains `text` (ASCII case-insensitive).
  std::vector<std::string> Containing(const std::string& text) const;

 private:
  std::map<std::string, Names> by_id_;
};

struct AuditSearch {
  audit::RecordQuery query;         // filters, time range and order; no seq range, no limit
  std::optional<uint64_t> cursor;   // the seq the page starts at
  uint64_t limit = kAuditDefaultPage;
};

// Records a page with `q` may scan at most: no index serves a partial match, so a page reads
// this many seqs from its cursor at most, and a page that is not full then says where the
// next one resumes.
inline constexpr uint64_t kAuditContainsWindow = 20000;

// One page of a search: the query to run (limit + 1 rows: one more tells whether a next page
// exists) and, for a bounded scan, the seqs it covers and where the next page resumes when
// this one is not full (nullopt: the scan reached the end of the log).
struct AuditPage {
  audit::RecordQuery query;
  bool bounded = false;
  uint64_t scan_first = 0;  // the lowest and highest seq a bounded scan covers
  uint64_t scan_last = 0;
  std::optional<uint64_t> resume;
};

// next_seq: the log's highest seq + 1 (AuditStore::NextSeq), read only for a bounded scan.
// Precondition: next_seq > 0 when the search has `q` (an empty log has no page to bound).
AuditPage PageOf(const AuditSearch& search, uint64_t next_seq, uint64_t window = kAuditContainsWindow);

// InvalidArgument naming the parameter when one is malformed.
Result<AuditSearch> ParseAuditSearch(const httplib::Request& req, const KeyDirectory& keys);

// A record for the auditors' routes: RecordToJson plus key_name and key_owner when the actor
// is a key, and decode_error when the row did not decode.
nlohmann::json AuditorRecordJson(const audit::StoredRecord& row, const KeyDirectory& keys);

// The search parameters present, "name=value" separated by spaces (since and until always,
// "-" when absent), for the record of an export.
std::string DescribeAuditSearch(const httplib::Request& req);

}  // namespace kimi::admin
