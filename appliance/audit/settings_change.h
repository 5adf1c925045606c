// Settings changes in the audit log. The appliance reads its settings (the configuration file
// and command-line overrides) only at start, so a change of settings is a start whose settings
// differ from the previous start's. Each service.start record carries the SHA-256 of the
// settings in its detail ("settings sha256:<hex>"); at the next start the daemon compares and,
// when they differ, records one "settings.changed" act naming both digests. Runtime changes
// that are settings too have their own acts: policy.update, auth.key_updated, auth.role_limits_changed.
// Public header of audit/: other folders include it.
// Thread safety: pure functions; PreviousSettingsDigest opens its own read-only connection.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

namespace kimi::audit {

inline constexpr std::string_view kSettingsDigestPrefix = "settings sha256:";

// The digest of the settings as read: the configuration file's bytes and each override.
std::string SettingsDigest(std::string_view config_file_bytes, const std::vector<std::string>& overrides);

// The settings digest the last service.start record of audit.db names; nullopt when there is
// no such record (a new log) or it names none (a start before settings were recorded).
Result<std::optional<std::string>> PreviousSettingsDigest(const std::string& db_path);

}  // namespace kimi::audit
