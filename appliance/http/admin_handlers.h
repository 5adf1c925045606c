// Handlers of the admin API's identity endpoints (/admin/v1/...): console sessions, API keys
// and users. JSON in, JSON out; unknown request fields are refused with 400. Every change is
// written with its auth event, and the events are moved into the audit log before the
// response (auth/audit_outbox.h). The route table (routes.cc) says who may call each one.
//
//   POST   /admin/v1/session           {username, password} -> session cookie + CSRF token
//   GET    /admin/v1/session           who am I (any principal, key or session)
//   DELETE /admin/v1/session           logout: the session id stops working at once
//   POST   /admin/v1/session/password  {old_password, new_password}
//   GET    /admin/v1/keys              every key, without secrets
//   POST   /admin/v1/keys              {name, role, owner?, models?, expires_at?, limits...} -> the key, once;
//                                       models must be served now, checked as for PATCH
//   POST   /admin/v1/keys/revoke       {id}
//   PATCH  /admin/v1/keys/{id}         {role?, models?, limits...} -> the key; absent fields unchanged;
//                                       models must be served now ([] = every model); one audit
//                                       record "auth.key_updated" with the difference
//   GET    /admin/v1/keys/{id}/usage   limits, tokens and requests this UTC day and month, streams now
//   POST   /admin/v1/keys/{id}/limits  retired in favour of PATCH /admin/v1/keys/{id}: 410 naming it
//   GET    /admin/v1/roles             every role: its permissions and its limits
//   POST   /admin/v1/roles/{role}/limits  the role's limits (fields as for a key's); absent fields unchanged
//   POST   /admin/v1/tls/reload        re-reads server.tls's certificate and key; the old ones
//                                       keep serving when the new ones do not load
//   GET    /admin/v1/users             every user, without hashes
//   POST   /admin/v1/users             {username, role} -> a one-time password, once
//   POST   /admin/v1/users/disable     {username}: ends its sessions and revokes its keys
//   POST   /admin/v1/users/enable      {username}: may log in again (its keys stay revoked)
//   POST   /admin/v1/users/unlock      {username}: clears its failure count and lock
//
// Bodies with credentials (login, password change, new user) are refused over 16 KiB (413),
// user names and passwords over their bounds (400 naming the field), before any hashing.
//
// Thread safety: each handler may run on many threads at once.
#pragma once

#include "http/routes.h"

namespace kimi::http {

Status HandleSessionLogin(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleSessionGet(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleSessionLogout(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleSessionPassword(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleKeysList(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleKeysCreate(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleKeysRevoke(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleKeyUpdate(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleKeyUsage(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleKeyLimitsRetired(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleRolesList(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleRoleLimits(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleTlsReload(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleUsersList(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleUsersAdd(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleUsersDisable(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleUsersEnable(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleUsersUnlock(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);

}  // namespace kimi::http
