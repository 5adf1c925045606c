// The auditors' routes (docs/admin-api.yaml; permission audit.read: admin and auditor):
//
//   GET /admin/v1/audit          search (admin/audit_query.h: time range, exact filters, key
//                                name and owner, partial match q, order newest|oldest), paged by
//                                cursor (next_cursor) and limit (1..1000, default 100); each
//                                record with key_name and key_owner when its actor is a key.
//                                A page with q scans at most kAuditContainsWindow seqs from its
//                                cursor and says which ("scanned"); next_cursor resumes the scan
//   GET /admin/v1/audit/actions  the distinct actions in the log (the console's action picker)
//   GET /admin/v1/audit/export   a verifiable export bundle (JSON lines) of the records the
//                                search with the same parameters finds (every page, in sequence
//                                order), with inclusion paths and the signed head that covers
//                                them; a head is signed first so the newest records are
//                                covered; format=csv gives the records and heads as CSV
//                                rows without proofs instead. Streamed with bounded memory:
//                                the bundle is read twice from one snapshot of audit.db, once
//                                to hash it, so that the export is recorded ("audit.export",
//                                with that hash) before its first byte leaves, then again
//                                into a chunked response as it is read.
//   GET /admin/v1/audit/verify   the whole log's verification report (audit/log_verifier.h)
//
// Each request opens its own read-only connection to audit.db, so reading never contends
// with the sink's writer beyond SQLite's WAL rules. Key names and owners are read from the
// authenticator's key list once per request.
//
// Each handler gets the AuditAccess only; without one (null) it answers 503.
//
// Thread safety: handlers may run on many threads at once; AuditAccess is immutable after
// start-up, the sink and the authenticator are thread-safe.
#pragma once

#include <memory>
#include <string>

#include "admin/audit_query.h"
#include "audit/audit_store.h"
#include "audit/signed_head.h"
#include "http/routes.h"

namespace kimi::audit {
class AuditSink;
}
namespace kimi::auth {
class Authenticator;
}

namespace kimi::admin {

// What the auditors' routes read and sign with; owned by the daemon.
struct AuditAccess {
  std::string db_path;              // <data_dir>/audit.db
  audit::PublicKey public_key;      // the daemon's audit key
  audit::AuditSink* sink = nullptr; // signs heads before exports and records the exports
  auth::Authenticator* keys = nullptr;  // the API keys' names and owners; null: none known
};

// A read-only connection of its own to audit.db; Unavailable when it cannot be opened.
Result<std::unique_ptr<audit::AuditStore>> OpenAuditReader(const AuditAccess& access);

// The name and owner of every API key (none without access.keys); Unavailable when the key
// list cannot be read.
Result<KeyDirectory> LoadKeyDirectory(const AuditAccess& access);

Status HandleAuditSearch(const AuditAccess* access, http::RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res);
Status HandleAuditActions(const AuditAccess* access, http::RequestContext& ctx, const httplib::Request& req,
                          httplib::Response& res);
Status HandleAuditExport(const AuditAccess* access, http::RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res);
Status HandleAuditVerify(const AuditAccess* access, http::RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res);

// The five audit routes (these four and audit_proof_route.h's), bound to `access` (may be null).
void AddAuditRoutes(http::RouteTable& table, const AuditAccess* access);

}  // namespace kimi::admin
