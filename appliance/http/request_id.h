// Request ids: every request gets one, made here: "req_" followed by 24 hex digits from the
// OS's random source. It is echoed in the X-Request-Id response header and written in the
// access log, the audit record and error messages that hide details.
//
// A client's own X-Request-Id is never adopted (a client could otherwise give its request the
// id of another request already in the audit log); it is kept as the request's
// client_request_id, bounded and escaped like any other audited text (audit/audit_text.h).
//
// Thread safety: may be called from any thread.
#pragma once

#include <string>

namespace kimi::http {

std::string NewRequestId();

}  // namespace kimi::http
