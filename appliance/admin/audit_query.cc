#include "admin/audit_query.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <utility>

#include "audit/audit_text.h"
#include "audit/record.h"

namespace kimi::admin {
namespace {

// Matches SQLite's LIKE, which folds ASCII letters only.
std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

Result<uint64_t> ParseCount(const std::string& text, const char* name) {
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return Status::InvalidArgument(std::string("query parameter '") + name + "' must be a non-negative integer");
  }
  return v;
}

std::string Param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : std::string();
}

// The key ids of a key_name or owner filter, intersected with those of the other one.
void NarrowActors(std::optional<std::vector<std::string>>* actors, std::vector<std::string> ids) {
  if (!actors->has_value()) {
    *actors = std::move(ids);
    return;
  }
  std::vector<std::string> both;
  std::set_intersection((*actors)->begin(), (*actors)->end(), ids.begin(), ids.end(), std::back_inserter(both));
  **actors = std::move(both);
}

}  // namespace

KeyDirectory::KeyDirectory(const std::vector<auth::KeyRecord>& keys) {
  for (const auth::KeyRecord& k : keys) by_id_[k.id] = Names{k.name, k.owner};
}

const KeyDirectory::Names* KeyDirectory::Find(const std::string& actor) const {
  const auto it = by_id_.find(actor);
  return it == by_id_.end() ? nullptr : &it->second;
}

std::vector<std::string> KeyDirectory::Named(const std::string& name) const {
  std::vector<std::string> ids;
  for (const auto& [id, names] : by_id_) {
    if (names.name == name) ids.push_back(id);
  }
  return ids;
}

std::vector<std::string> KeyDirectory::OwnedBy(const std::string& owner) const {
  std::vector<std::string> ids;
  for (const auto& [id, names] : by_id_) {
    if (names.owner == owner) ids.push_back(id);
  }
  return ids;
}

std::vector<std::string> KeyDirectory::Containing(const std::string& text) const {
  const std::string needle = AsciiLower(text);
  std::vector<std::string> ids;
  for (const auto& [id, names] : by_id_) {
    if (AsciiLower(names.name).find(needle) != std::string::npos ||
        AsciiLower(names.owner).find(needle) != std::string::npos) {
      ids.push_back(id);
    }
  }
  return ids;
}

Result<AuditSearch> ParseAuditSearch(const httplib::Request& req, const KeyDirectory& keys) {
  AuditSearch s;
  audit::RecordQuery& q = s.query;
  for (auto [name, out] : {std::pair{"since", &q.since_ms}, {"until", &q.until_ms}}) {
    if (!req.has_param(name)) continue;
    Result<int64_t> ms = audit::ParseUtcMillis(req.get_param_value(name));
    if (!ms.ok()) return Status::InvalidArgument(std::string("query parameter '") + name + "': " + ms.status().message());
    *out = *ms;
  }
  // Values are stored as audit/audit_text.h makes them (escaped, bounded), so a filter is
  // made the same way: the X-Request-Id a client sent finds its record however long it was.
  for (auto [name, field] : {std::pair{"actor", &q.actor}, {"action", &q.action}, {"outcome", &q.outcome},
                             {"model", &q.model}, {"request_id", &q.request_id},
                             {"client_request_id", &q.client_request_id}}) {
    if (req.has_param(name)) *field = audit::AuditText(req.get_param_value(name));
  }
  // The log records a key's id, never its name or owner: these filters are the ids of every
  // key that has that name or owner now.
  if (req.has_param("key_name")) NarrowActors(&q.actor_in, keys.Named(req.get_param_value("key_name")));
  if (req.has_param("owner")) NarrowActors(&q.actor_in, keys.OwnedBy(req.get_param_value("owner")));
  const std::string contains = Param(req, "q");
  if (contains.size() > kAuditMaxContainsBytes) {
    return Status::InvalidArgument("query parameter 'q' is longer than " + std::to_string(kAuditMaxContainsBytes) +
                                   " bytes");
  }
  // Made like the stored text too: a control character is found in its escaped form, and a NUL
  // (where SQLite's LIKE stops reading its pattern: "%\0x%" matched every record) is text.
  q.contains = audit::AuditText(contains);
  if (!contains.empty()) q.contains_actors = keys.Containing(contains);
  const std::string order = req.has_param("order") ? req.get_param_value("order") : "newest";
  if (order != "newest" && order != "oldest") {
    return Status::InvalidArgument("query parameter 'order' must be newest or oldest");
  }
  q.newest_first = order == "newest";
  if (req.has_param("cursor")) {
    KIMI_ASSIGN_OR_RETURN(uint64_t cursor, ParseCount(req.get_param_value("cursor"), "cursor"));
    // The page's bounds are bound as SQLite integers, one above the cursor when descending.
    if (cursor >= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::InvalidArgument("query parameter 'cursor' is out of range");
    }
    s.cursor = cursor;
  }
  if (req.has_param("limit")) {
    KIMI_ASSIGN_OR_RETURN(s.limit, ParseCount(req.get_param_value("limit"), "limit"));
    if (s.limit == 0 || s.limit > kAuditMaxPage) {
      return Status::InvalidArgument("query parameter 'limit' must be 1.." + std::to_string(kAuditMaxPage));
    }
  }
  return s;
}

AuditPage PageOf(const AuditSearch& search, uint64_t next_seq, uint64_t window) {
  AuditPage page;
  audit::RecordQuery& q = page.query;
  q = search.query;
  q.limit = search.limit + 1;
  if (search.cursor) {
    if (q.newest_first) {
      q.to_seq = *search.cursor + 1;
    } else {
      q.from_seq = *search.cursor;
    }
  }
  if (q.contains.empty()) return page;
  const uint64_t end = std::min(q.to_seq, next_seq);  // exclusive
  if (end <= q.from_seq) return page;                 // nothing to scan
  page.bounded = true;
  if (end - q.from_seq > window) {
    if (q.newest_first) {
      q.from_seq = end - window;
      page.resume = q.from_seq - 1;
    } else {
      page.resume = q.from_seq + window;
    }
    q.to_seq = q.from_seq + window;
  }
  page.scan_first = q.from_seq;
  page.scan_last = std::min(q.to_seq, end) - 1;
  return page;
}

nlohmann::json AuditorRecordJson(const audit::StoredRecord& row, const KeyDirectory& keys) {
  nlohmann::json j = audit::RecordToJson(row.record);
  if (const KeyDirectory::Names* key = keys.Find(row.record.actor)) {
    j["key_name"] = key->name;
    j["key_owner"] = key->owner;
  }
  if (!row.decode_error.ok()) j["decode_error"] = row.decode_error.message();
  return j;
}

std::string DescribeAuditSearch(const httplib::Request& req) {
  std::string out = "since=" + (req.has_param("since") ? req.get_param_value("since") : std::string("-")) +
                    " until=" + (req.has_param("until") ? req.get_param_value("until") : std::string("-"));
  for (const char* name : {"actor", "key_name", "owner", "action", "outcome", "model", "request_id",
                           "client_request_id", "q"}) {
    if (req.has_param(name)) out += std::string(" ") + name + "=" + req.get_param_value(name);
  }
  return out;
}

}  // namespace kimi::admin
