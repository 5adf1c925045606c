// The auditors' routes (docs/admin-api.yaml; permission audit.read: admin and auditor):
//
//   GET /admin/v1/audit          search: since, until (UTC text or ms), actor, action,
//                                outcome, model, request_id (the server's id),
//                                client_request_id (the X-Request-Id a client sent); cursor (a sequence number from
//                                next_cursor) and limit (1..1000, default 100) page through
//                                the results in sequence order
//   GET /admin/v1/audit/export   a verifiable export bundle (JSON lines) of since..until: the
//                                records with inclusion paths and the signed head that covers
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
// with the sink's writer beyond SQLite's WAL rules.
//
// Thread safety: handlers may run on many threads at once; AuditAccess is immutable after
// start-up and the sink is thread-safe.
#pragma once

#include <string>

#include "audit/signed_head.h"
#include "http/routes.h"

namespace kimi::audit {
class AuditSink;
}

namespace kimi::http {

struct AuditAccess {
  std::string db_path;              // <data_dir>/audit.db
  audit::PublicKey public_key;      // the daemon's audit key
  audit::AuditSink* sink = nullptr; // signs heads before exports and records the exports
};

Status HandleAuditSearch(const Services& services, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res);
Status HandleAuditExport(const Services& services, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res);
Status HandleAuditVerify(const Services& services, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res);

}  // namespace kimi::http
