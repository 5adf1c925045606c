#include "auth/list_query.h"

namespace kimi::auth {

std::string LikeContains(std::string_view text) {
  std::string out = "%";
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') out += '\\';
    out += c;
  }
  out += '%';
  return out;
}

}  // namespace kimi::auth
