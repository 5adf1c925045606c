#include "audit/record.h"

#include <charconv>
#include <cstdio>
#include <ctime>

#include "audit/audit_text.h"
#include "audit/canonical_json.h"
#include "audit/hash.h"

namespace kimi::audit {
namespace {

void Sanitize(std::string* s) {
  if (!IsValidUtf8(*s)) *s = SanitizeUtf8(*s);
}

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

void NormalizeRecord(AuditRecord* r) {
  for (std::string* s : {&r->actor, &r->role, &r->source, &r->request_id, &r->client_request_id, &r->action,
                         &r->target, &r->model, &r->model_digest, &r->outcome, &r->request_sha256,
                         &r->response_sha256, &r->backend, &r->route_decision, &r->content_sha256}) {
    *s = AuditText(*s);
  }
  r->detail = AuditText(r->detail, kMaxAuditDetailBytes);
  for (std::string& p : r->policy) p = AuditText(p);
  if (r->content.has_value()) {
    Sanitize(&r->content->prompt);
    Sanitize(&r->content->completion);
    r->content_sha256 = ToHex(Sha256(CanonicalContentBytes(*r->content)));
  }
}

bool IsKnownRecordVersion(int64_t version) {
  return version >= kOldestRecordFormatVersion && version <= kRecordFormatVersion;
}

std::string CanonicalRecordBytes(const AuditRecord& r) {
  // Keys in byte order; docs/audit.md lists them. Version 1 lacks the backend keys, versions
  // 1 and 2 lack client_request_id, versions 1 to 3 lack start_seq: each record hashes with
  // the keys of its own version.
  const bool v2 = r.version >= 2;
  CanonicalObject o;
  o.Add("action", r.action).Add("actor", r.actor);
  if (v2) o.Add("attempts", r.attempts).Add("backend", r.backend);
  if (r.version >= 3) o.Add("client_request_id", r.client_request_id);
  o.Add("completion_tokens", r.completion_tokens)
      .Add("content_sha256", r.content_sha256)
      .Add("detail", r.detail)
      .Add("http_status", r.http_status)
      .Add("model", r.model)
      .Add("model_digest", r.model_digest)
      .Add("outcome", r.outcome)
      .AddStringArray("policy", r.policy)
      .Add("prompt_tokens", r.prompt_tokens)
      .Add("request_id", r.request_id)
      .Add("request_sha256", r.request_sha256)
      .Add("response_sha256", r.response_sha256)
      .Add("role", r.role);
  if (v2) o.Add("route_decision", r.route_decision);
  o.Add("seq", static_cast<int64_t>(r.seq)).Add("source", r.source);
  if (r.version >= 4) o.Add("start_seq", r.start_seq);
  return o
      .Add("target", r.target)
      .Add("time_ms", r.time_ms)
      .Add("total_us", r.total_us)
      .Add("ttft_us", r.ttft_us)
      .Add("v", r.version)
      .Finish();
}

std::string CanonicalContentBytes(const AuditContent& c) {
  return CanonicalObject().Add("completion", c.completion).Add("prompt", c.prompt).Finish();
}

Result<int64_t> ParseUtcMillis(std::string_view text) {
  int64_t ms = 0;
  if (ParseInt(text, &ms)) return ms;
  const auto bad = [&] {
    return Status::InvalidArgument("time '" + std::string(text) +
                                   "' is not YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS[.mmm]Z or milliseconds");
  };
  int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, frac = 0;
  if (text.size() < 10 || text[4] != '-' || text[7] != '-') return bad();
  if (!ParseInt(text.substr(0, 4), &y) || !ParseInt(text.substr(5, 2), &mo) || !ParseInt(text.substr(8, 2), &d)) {
    return bad();
  }
  if (text.size() > 10) {
    if (text.size() < 20 || text[10] != 'T' || text[13] != ':' || text[16] != ':' || text.back() != 'Z') return bad();
    if (!ParseInt(text.substr(11, 2), &h) || !ParseInt(text.substr(14, 2), &mi) || !ParseInt(text.substr(17, 2), &s)) {
      return bad();
    }
    std::string_view rest = text.substr(19, text.size() - 20);
    if (!rest.empty()) {
      if (rest.size() != 4 || rest[0] != '.' || !ParseInt(rest.substr(1), &frac)) return bad();
    }
  }
  // A day the month has ("2027-02-30" was read as March 2) and no leap second: a time that is
  // refused, not moved to another.
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return bad();
  if (d > kDays[mo - 1] + (mo == 2 && leap ? 1 : 0)) return bad();
  return ((DaysFromCivil(y, mo, d) * 24 + h) * 60 + mi) * 60000 + s * 1000 + frac;
}

nlohmann::json RecordToJson(const AuditRecord& r) {
  nlohmann::json j = {
      {"seq", r.seq},
      {"time", FormatUtcMillis(r.time_ms)},
      {"time_ms", r.time_ms},
      {"actor", r.actor},
      {"role", r.role},
      {"source", r.source},
      {"request_id", r.request_id},
      {"action", r.action},
      {"target", r.target},
      {"model", r.model},
      {"model_digest", r.model_digest},
      {"outcome", r.outcome},
      {"http_status", r.http_status},
      {"prompt_tokens", r.prompt_tokens},
      {"completion_tokens", r.completion_tokens},
      {"ttft_us", r.ttft_us},
      {"total_us", r.total_us},
      {"policy", r.policy},
      {"request_sha256", r.request_sha256},
      {"response_sha256", r.response_sha256},
      {"detail", r.detail},
      {"content_sha256", r.content_sha256},
      {"v", r.version},
  };
  if (r.version >= 2) {
    j["backend"] = r.backend;
    j["route_decision"] = r.route_decision;
    j["attempts"] = r.attempts;
  }
  if (r.version >= 3) j["client_request_id"] = r.client_request_id;
  if (r.version >= 4) j["start_seq"] = r.start_seq;
  if (r.content.has_value()) {
    j["content"] = {{"prompt", r.content->prompt}, {"completion", r.content->completion}};
  }
  return j;
}

namespace {

// Reads the hashed fields of an exported record; the first problem wins.
class JsonFields {
 public:
  explicit JsonFields(const nlohmann::json& j) : j_(j) {}
  void Text(const char* key, std::string* out) {
    const auto it = j_.find(key);
    if (it == j_.end() || !it->is_string()) return Fail(key, "a string");
    *out = it->get<std::string>();
  }
  void Int(const char* key, int64_t* out) {
    const auto it = j_.find(key);
    if (it == j_.end() || !it->is_number_integer()) return Fail(key, "an integer");
    *out = it->get<int64_t>();
  }
  void Strings(const char* key, std::vector<std::string>* out) {
    const auto it = j_.find(key);
    if (it == j_.end() || !it->is_array()) return Fail(key, "an array of strings");
    for (const auto& e : *it) {
      if (!e.is_string()) return Fail(key, "an array of strings");
      out->push_back(e.get<std::string>());
    }
  }
  Status status() const { return status_; }

 private:
  void Fail(const char* key, const char* want) {
    if (status_.ok()) status_ = Status::InvalidArgument(std::string("record field '") + key + "' is not " + want);
  }
  const nlohmann::json& j_;
  Status status_;
};

}  // namespace

Result<AuditRecord> RecordFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a record must be a JSON object");
  AuditRecord r;
  JsonFields f(j);
  int64_t seq = 0;
  f.Int("v", &r.version);
  f.Int("seq", &seq);
  f.Int("time_ms", &r.time_ms);
  for (auto [key, field] : {std::pair{"actor", &r.actor}, {"role", &r.role}, {"source", &r.source},
                            {"request_id", &r.request_id}, {"action", &r.action}, {"target", &r.target},
                            {"model", &r.model}, {"model_digest", &r.model_digest}, {"outcome", &r.outcome},
                            {"request_sha256", &r.request_sha256}, {"response_sha256", &r.response_sha256},
                            {"detail", &r.detail}, {"content_sha256", &r.content_sha256}}) {
    f.Text(key, field);
  }
  for (auto [key, field] : {std::pair{"http_status", &r.http_status}, {"prompt_tokens", &r.prompt_tokens},
                            {"completion_tokens", &r.completion_tokens}, {"ttft_us", &r.ttft_us},
                            {"total_us", &r.total_us}}) {
    f.Int(key, field);
  }
  f.Strings("policy", &r.policy);
  if (r.version >= 2) {
    f.Text("backend", &r.backend);
    f.Text("route_decision", &r.route_decision);
    f.Int("attempts", &r.attempts);
  }
  if (r.version >= 3) f.Text("client_request_id", &r.client_request_id);
  if (r.version >= 4) f.Int("start_seq", &r.start_seq);
  KIMI_RETURN_IF_ERROR(f.status());
  if (seq < 0) return Status::InvalidArgument("record field 'seq' is negative");
  if (!IsKnownRecordVersion(r.version)) {
    return Status::InvalidArgument("record version " + std::to_string(r.version) + " is not known");
  }
  r.seq = static_cast<uint64_t>(seq);
  if (const auto it = j.find("content"); it != j.end() && it->is_object()) {
    AuditContent c;
    JsonFields cf(*it);
    cf.Text("prompt", &c.prompt);
    cf.Text("completion", &c.completion);
    KIMI_RETURN_IF_ERROR(cf.status());
    r.content = std::move(c);
  }
  return r;
}

}  // namespace kimi::audit
