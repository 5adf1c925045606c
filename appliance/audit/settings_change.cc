#include "audit/settings_change.h"

#include <vector>

#include "audit/audit_store.h"
#include "audit/hash.h"

namespace kimi::audit {

std::string SettingsDigest(std::string_view config_file_bytes, const std::vector<std::string>& overrides) {
  Sha256Stream digest;
  // Length-prefixed parts, so that moving bytes between the file and an override changes it.
  const auto part = [&](std::string_view bytes) {
    digest.Update(std::to_string(bytes.size()) + ":");
    digest.Update(bytes);
  };
  part(config_file_bytes);
  for (const std::string& o : overrides) part(o);
  return ToHex(digest.Finish());
}

Result<std::optional<std::string>> PreviousSettingsDigest(const std::string& db_path) {
  AuditStoreOptions options;
  options.read_only = true;
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<AuditStore> store, AuditStore::Open(db_path, options));
  RecordQuery q;
  q.action = "service.start";
  q.with_content = false;
  KIMI_ASSIGN_OR_RETURN(RecordRangeSummary starts, store->SummarizeRecords(q));
  if (!starts.last_seq) return std::optional<std::string>();
  KIMI_ASSIGN_OR_RETURN(std::optional<StoredRecord> last, store->ReadRecord(*starts.last_seq));
  if (!last) return std::optional<std::string>();
  const std::string& detail = last->record.detail;
  const size_t at = detail.find(kSettingsDigestPrefix);
  if (at == std::string::npos) return std::optional<std::string>();
  return std::optional<std::string>(detail.substr(at + kSettingsDigestPrefix.size(), 64));
}

}  // namespace kimi::audit
