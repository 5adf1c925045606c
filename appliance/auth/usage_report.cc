#include "auth/usage_report.h"

#include <algorithm>
#include <map>

namespace kimi::auth {

std::vector<UsageLine> DailyUsageLines(const std::vector<UsageRowDelta>& day_rows,
                                       const std::vector<KeyRecord>& keys, int64_t first_day_ms, int days,
                                       UsageGrouping by) {
  std::map<std::string, const KeyRecord*> key_of;
  for (const KeyRecord& k : keys) key_of[k.id] = &k;
  std::map<std::string, UsageLine> lines;
  for (const UsageRowDelta& row : day_rows) {
    const int64_t offset = row.period_start_ms - first_day_ms;
    if (row.period != UsagePeriod::kDay || offset < 0 || offset % kDayMs != 0 || offset / kDayMs >= days)
      continue;
    const size_t day = static_cast<size_t>(offset / kDayMs);
    auto key = key_of.find(row.key_id);
    const std::string owner = key == key_of.end() ? "" : key->second->owner;
    const std::string& id = by == UsageGrouping::kKey ? row.key_id : owner;
    auto [it, added] = lines.try_emplace(id);
    UsageLine& line = it->second;
    if (added) {
      line.id = id;
      line.name = by == UsageGrouping::kKey && key != key_of.end() ? key->second->name : "";
      line.owner = owner;
      line.requests.assign(static_cast<size_t>(days), 0);
      line.prompt_tokens.assign(static_cast<size_t>(days), 0);
      line.completion_tokens.assign(static_cast<size_t>(days), 0);
    }
    line.requests[day] += row.requests;
    line.prompt_tokens[day] += row.prompt_tokens;
    line.completion_tokens[day] += row.completion_tokens;
    line.total_requests += row.requests;
    line.total_prompt_tokens += row.prompt_tokens;
    line.total_completion_tokens += row.completion_tokens;
  }
  std::vector<UsageLine> out;
  out.reserve(lines.size());
  for (auto& [id, line] : lines) out.push_back(std::move(line));
  std::stable_sort(out.begin(), out.end(), [](const UsageLine& a, const UsageLine& b) {
    return a.total_tokens() > b.total_tokens();
  });
  return out;
}

}  // namespace kimi::auth
