// Audited text: what every string goes through before an audit record holds it.
//
// Records copy strings from requests (user names, paths, request ids, refusal reasons), and
// the log keeps records forever, so a string is made safe and small once, here, where the
// record is normalised (record.h NormalizeRecord) and where the auth outbox queues an event:
//
//  1. ill-formed UTF-8 becomes U+FFFD (canonical_json.h SanitizeUtf8);
//  2. characters that break or disguise a line wherever records are shown (C0 controls, DEL,
//     C1 controls, U+2028/U+2029 and the bidirectional overrides and isolates) are written
//     as the six visible characters "\u00XX" ("\u2028", ...), so no record splits a log line,
//     a CSV row or a console cell, or reorders what follows it;
//  3. a result longer than the field's limit is cut at a character boundary and ends in
//     "…[truncated, N bytes, sha256:HEX]": N and HEX are the length and SHA-256 of the whole
//     text after steps 1 and 2, so whoever holds the original can still prove it was this.
//
// The result is at most the limit in bytes and AuditText is idempotent (AuditText(AuditText(x))
// == AuditText(x)), so normalising a record twice changes nothing.
// Public header of audit/: other folders include it.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kimi::audit {

// Identifiers, names, addresses, one-line decisions: actor, target, source, request ids, model.
inline constexpr size_t kMaxAuditTextBytes = 256;
// Free text of administrative acts (a policy change's JSON diff); a longer one keeps its digest.
inline constexpr size_t kMaxAuditDetailBytes = 4096;

// Steps 1 to 3 above. Precondition: max_bytes >= 128 (room for the marker).
std::string AuditText(std::string_view in, size_t max_bytes = kMaxAuditTextBytes);

// Steps 1 and 2, unbounded: any text made safe to show on a line. kimictl prints every string
// it did not write itself through it (key and user names, file names from import media, reasons
// quoting them), so that "\x1b[31m" or "\nkey_ffff admin" in a name shows as what it is instead
// of recolouring the operator's terminal or forging a line of output.
std::string ShownText(std::string_view in);

// Step 2 alone, on valid UTF-8.
std::string EscapeLineBreakingCharacters(std::string_view valid_utf8);

}  // namespace kimi::audit
