#include "cli/model_command_args.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "audit/audit_text.h"

namespace kimi::cli {

Result<models::TrustStore> TrustFromArgs(const ParsedArgs& a) {
  models::TrustStore trust;
  std::vector<std::string> keys = a.All("--key");
  std::vector<std::string> cas = a.All("--ca");
  std::string trust_dir = a.One("--trust-dir");
  if (keys.empty() && cas.empty() && trust_dir.empty()) trust_dir = std::string(models::kDefaultTrustDir);
  if (!trust_dir.empty()) {
    KIMI_ASSIGN_OR_RETURN(trust, models::TrustStore::LoadDirectory(trust_dir));
  }
  for (const auto& path : keys) KIMI_RETURN_IF_ERROR(trust.AddPemFile(path).WithContext("--key"));
  for (const auto& path : cas) KIMI_RETURN_IF_ERROR(trust.AddPemFile(path).WithContext("--ca"));
  return trust;
}

std::string HumanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", bytes, units[u]);
  return buf;
}

models::HashProgressFn ProgressPrinter(std::ostream& err, std::string verb) {
  return [&err, verb = std::move(verb)](const models::HashProgress& p) {
    double pct = p.bytes_total ? 100.0 * static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total) : 100.0;
    err << verb << ": " << HumanBytes(static_cast<double>(p.bytes_done)) << " / "
        << HumanBytes(static_cast<double>(p.bytes_total)) << " (" << static_cast<int>(pct) << "%), "
        << HumanBytes(p.bytes_per_second) << "/s";
    if (!p.finished) err << ", ETA " << static_cast<long>(std::ceil(p.eta_seconds)) << " s";
    err << "\n";
  };
}

int Fail(std::ostream& err, const std::string& what, const Status& status) {
  err << "error: " << what << ": " << audit::ShownText(status.message()) << "\n";
  return kExitFailed;
}

}  // namespace kimi::cli
