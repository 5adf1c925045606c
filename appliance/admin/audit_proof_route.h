// One audit record with its inclusion proof, for the console's record detail:
//
//   GET /admin/v1/audit/records/{seq}/proof    (permission audit.read: admin, auditor)
//
// Reply: {"proof": <kimi-audit-inclusion/1, exactly what `kimictl audit prove SEQ` prints
// (audit/proof_format.h)>, "record": the record as the search lists it, "root_hash": the
// signed head's root, "public_key": the daemon's audit key (kimi-audit-key/1), "check":
// {"ok", "facts"|"error"}: the daemon's own check of the proof and of the head's signature}.
// When no signed head covers the record yet, a head is signed first (as an export does), so
// every committed record can be proven at once. 404 for a sequence number the log does not
// hold. Like every admin request, the read itself is audited (action http.admin_audit_proof).
//
// Thread safety: as the other audit handlers (audit_routes.h): each request opens its
// own read-only connection to audit.db.
#pragma once

#include "http/routes.h"

namespace kimi::admin {

struct AuditAccess;

// `access` null: 503. Registered by AddAuditRoutes (audit_routes.h).
Status HandleAuditRecordProof(const AuditAccess* access, http::RequestContext& ctx, const httplib::Request& req,
                              httplib::Response& res);

}  // namespace kimi::admin
