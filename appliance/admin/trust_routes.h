// The admin API's trust store endpoints: HTTP handlers over models::TrustDirectory.
//
//   GET    /admin/v1/trust         {"path","editable","entries":[{"id","kind":"key|ca",
//                                   "description","file","signers" (ca only),"signs_active":
//                                   [{"model","version","digest"}]}]}  (trust.read: admin, operator, auditor)
//   POST   /admin/v1/trust         {"pem":"-----BEGIN PUBLIC KEY-----...","label":"vendor",
//                                   "signers":["email=release@example.com"] (a CA only)}
//                                  -> 201 the entry; 400 with the reason for text that is not
//                                  one ECDSA public key or CA certificate, or a signer pattern
//                                  that does not parse; 409 when it is trusted already (admin only)
//   DELETE /admin/v1/trust/{id}    -> {"removed": entry}; 404 for an unknown id     (admin only)
//
// signs_active names the active model versions whose signature this entry verified (a key by
// its fingerprint in the version's signer, a CA by being the anchor its chain ended at, through
// any intermediates; SignedBy()):
// removing it leaves them serving until their next re-verification (an activation, a
// rollback, the next start), which then fails and deactivates them. The changes are audited
// by the TrustDirectory (trust.add, trust.remove). Without a TrustDirectory they answer 503.
//
// Thread safety: handlers may run on many threads at once; TrustDirectory is thread-safe.
#pragma once

#include <string>

#include "http/routes.h"
#include "models/model_admin.h"
#include "models/trust_directory.h"

namespace kimi::admin {

// Whether a model version whose signer (models/oms_signature.h) reads `signer` was verified
// by `entry`.
bool SignedBy(const models::TrustEntry& entry, const std::string& signer);

// What the trust routes use; both outlive the table.
struct TrustServices {
  models::TrustDirectory* trust = nullptr;           // null: the routes answer 503
  const models::ModelAdmin* model_admin = nullptr;  // null: signs_active is always empty
};

Status HandleListTrust(const TrustServices& services, http::RequestContext& ctx, const httplib::Request& req,
                       httplib::Response& res);
Status HandleAddTrust(const TrustServices& services, http::RequestContext& ctx, const httplib::Request& req,
                      httplib::Response& res);
Status HandleRemoveTrust(const TrustServices& services, http::RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res);

// The three routes, bound to `services`.
void AddTrustRoutes(http::RouteTable& table, TrustServices services);

}  // namespace kimi::admin
