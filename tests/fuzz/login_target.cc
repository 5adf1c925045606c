// The body of POST /admin/v1/session, the one admin body read before anyone is signed in.
#include <string_view>

#include "fuzz_targets.h"
#include "http/admin_body.h"

namespace kimi::fuzz {

bool FuzzLoginBodyOnce(const uint8_t* data, size_t size) {
  Result<http::LoginBody> login = http::ParseLoginBody(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!login.ok()) return false;
  if (login->username.empty() || login->password.empty()) __builtin_trap();  // both are required
  return true;
}

}  // namespace kimi::fuzz
