// ListQuery: one page of the key or user list, optionally narrowed by a search text, as the
// admin API asks AuthStore for it (GET /admin/v1/keys and /admin/v1/users). The search is a
// partial, case-insensitive match (SQLite's LIKE, ASCII case folding) in which every
// character stands for itself: '%', '_' and '\' in the text are escaped, never wildcards
// (store::LikeContains).
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kimi::auth {

inline constexpr int64_t kDefaultListPage = 100;
inline constexpr int64_t kMaxListPage = 500;
inline constexpr size_t kMaxSearchBytes = 128;

struct ListQuery {
  std::string search;  // empty: every row
  int64_t limit = -1;  // rows at most; -1: all (kimictl, internal lookups)
  int64_t offset = 0;  // rows skipped, in the list's order
};

template <typename T>
struct ListPage {
  std::vector<T> items;
  int64_t total = 0;  // rows matching the search, on every page
};

}  // namespace kimi::auth
