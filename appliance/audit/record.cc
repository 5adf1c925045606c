#include "audit/record.h"

#include <charconv>
#include <cstdio>
#include <ctime>

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
  for (std::string* s : {&r->actor, &r->role, &r->source, &r->request_id, &r->action, &r->target, &r->model,
                         &r->model_digest, &r->outcome, &r->request_sha256, &r->response_sha256, &r->detail}) {
    Sanitize(s);
  }
  for (std::string& p : r->policy) Sanitize(&p);
  if (r->content.has_value()) {
    Sanitize(&r->content->prompt);
    Sanitize(&r->content->completion);
    r->content_sha256 = ToHex(Sha256(CanonicalContentBytes(*r->content)));
  } else {
    Sanitize(&r->content_sha256);
  }
}

std::string CanonicalRecordBytes(const AuditRecord& r) {
  // Keys in byte order; docs/audit.md lists them.
  return CanonicalObject()
      .Add("action", r.action)
      .Add("actor", r.actor)
      .Add("completion_tokens", r.completion_tokens)
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
      .Add("role", r.role)
      .Add("seq", static_cast<int64_t>(r.seq))
      .Add("source", r.source)
      .Add("target", r.target)
      .Add("time_ms", r.time_ms)
      .Add("total_us", r.total_us)
      .Add("ttft_us", r.ttft_us)
      .Add("v", kRecordFormatVersion)
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
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return bad();
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
  };
  if (r.content.has_value()) {
    j["content"] = {{"prompt", r.content->prompt}, {"completion", r.content->completion}};
  }
  return j;
}

}  // namespace kimi::audit
