// AuthStore's quota state: usage rows (auth_usage), saved per-minute buckets
// (auth_rate_buckets, auth_token_buckets) and role limits (auth_role_limits, read here,
// written with their event in auth_store.cc); the rest of
// AuthStore is in auth_store.cc.
#include "auth/auth_store.h"
#include "auth/limit_columns.h"

namespace kimi::auth {
namespace {

using store::SqlStatement;

const char* PeriodName(UsagePeriod period) { return period == UsagePeriod::kDay ? "day" : "month"; }

// Prepared once per transaction: a batch adds to many rows.
constexpr const char* kAddToRow =
    "INSERT INTO auth_usage(key_id, period, period_start_ms, requests, prompt_tokens, completion_tokens) "
    "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(key_id, period, period_start_ms) DO UPDATE SET "
    "requests = requests + ?4, prompt_tokens = prompt_tokens + ?5, completion_tokens = completion_tokens + ?6";

Status AddToRow(SqlStatement& s, const UsageRowDelta& d) {
  s.Bind(1, d.key_id).Bind(2, PeriodName(d.period)).Bind(3, d.period_start_ms).Bind(4, d.requests);
  s.Bind(5, d.prompt_tokens).Bind(6, d.completion_tokens);
  Status status = s.Run();
  s.Reset();
  return status;
}

Status ReadPeriod(sqlite3* db, const std::string& key_id, const char* period, int64_t start_ms, PeriodUsage* out) {
  out->period_start_ms = start_ms;
  SqlStatement s(db,
                 "SELECT requests, prompt_tokens, completion_tokens FROM auth_usage "
                 "WHERE key_id = ?1 AND period = ?2 AND period_start_ms = ?3");
  s.Bind(1, key_id).Bind(2, period).Bind(3, start_ms);
  KIMI_ASSIGN_OR_RETURN(bool row, s.Step());
  if (row) {
    out->requests = s.Int(0);
    out->prompt_tokens = s.Int(1);
    out->completion_tokens = s.Int(2);
  }
  return Status::OK();
}

const char* BucketTable(BucketKind kind) {
  return kind == BucketKind::kRequests ? "auth_rate_buckets" : "auth_token_buckets";
}

}  // namespace

Status AuthStore::AddUsage(const std::string& key_id, int64_t day_start_ms, int64_t month_start_ms,
                           int64_t prompt_tokens, int64_t completion_tokens) {
  return AddUsageRows({{key_id, UsagePeriod::kDay, day_start_ms, 1, prompt_tokens, completion_tokens},
                       {key_id, UsagePeriod::kMonth, month_start_ms, 1, prompt_tokens, completion_tokens}});
}

Status AuthStore::AddUsageRows(const std::vector<UsageRowDelta>& rows) {
  if (rows.empty()) return Status::OK();
  return store_->Write([&](sqlite3* db) -> Status {
    SqlStatement s(db, kAddToRow);
    for (const UsageRowDelta& row : rows) KIMI_RETURN_IF_ERROR(AddToRow(s, row));
    return Status::OK();
  });
}

Result<KeyUsage> AuthStore::ReadUsage(const std::string& key_id, int64_t day_start_ms, int64_t month_start_ms) {
  KeyUsage usage;
  Status status = store_->Read([&](sqlite3* db) -> Status {
    KIMI_RETURN_IF_ERROR(ReadPeriod(db, key_id, PeriodName(UsagePeriod::kDay), day_start_ms, &usage.day));
    return ReadPeriod(db, key_id, PeriodName(UsagePeriod::kMonth), month_start_ms, &usage.month);
  });
  if (!status.ok()) return status;
  return usage;
}

Result<std::vector<UsageRowDelta>> AuthStore::UsageRows(UsagePeriod period, int64_t from_ms, int64_t to_ms) {
  std::vector<UsageRowDelta> out;
  Status status = store_->Read([&](sqlite3* db) -> Status {
    SqlStatement s(db,
                   "SELECT key_id, period_start_ms, requests, prompt_tokens, completion_tokens FROM auth_usage "
                   "WHERE period = ?1 AND period_start_ms >= ?2 AND period_start_ms < ?3 "
                   "ORDER BY key_id, period_start_ms");
    s.Bind(1, PeriodName(period)).Bind(2, from_ms).Bind(3, to_ms);
    return s.ForEachRow([&] {
      out.push_back(UsageRowDelta{s.Text(0), period, s.Int(1), s.Int(2), s.Int(3), s.Int(4)});
    });
  });
  if (!status.ok()) return status;
  return out;
}

Status AuthStore::SaveRateBuckets(BucketKind kind, const std::map<std::string, std::pair<double, int64_t>>& buckets) {
  if (buckets.empty()) return Status::OK();
  const std::string sql = std::string("INSERT INTO ") + BucketTable(kind) +
                          "(key_id, tokens, updated_ms) VALUES(?1, ?2, ?3) "
                          "ON CONFLICT(key_id) DO UPDATE SET tokens = ?2, updated_ms = ?3";
  return store_->Write([&](sqlite3* db) -> Status {
    for (const auto& [key_id, bucket] : buckets) {
      SqlStatement s(db, sql.c_str());
      s.Bind(1, key_id).Bind(2, bucket.first).Bind(3, bucket.second);
      KIMI_RETURN_IF_ERROR(s.Run());
    }
    return Status::OK();
  });
}

Result<std::map<std::string, std::pair<double, int64_t>>> AuthStore::LoadRateBuckets(BucketKind kind) {
  std::map<std::string, std::pair<double, int64_t>> out;
  const std::string sql = std::string("SELECT key_id, tokens, updated_ms FROM ") + BucketTable(kind);
  Status status = store_->Read([&](sqlite3* db) -> Status {
    SqlStatement s(db, sql.c_str());
    return s.ForEachRow([&] { out[s.Text(0)] = {s.Double(1), s.Int(2)}; });
  });
  if (!status.ok()) return status;
  return out;
}

Result<std::map<std::string, KeyLimits>> AuthStore::LoadRoleLimits() {
  std::map<std::string, KeyLimits> out;
  Status status = store_->Read([&](sqlite3* db) -> Status {
    const std::string sql = std::string("SELECT role, ") + kLimitColumns + " FROM auth_role_limits";
    SqlStatement s(db, sql.c_str());
    return s.ForEachRow([&] { out[s.Text(0)] = ReadLimitColumns(s, 1); });
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace kimi::auth
