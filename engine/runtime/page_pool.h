// The runtime's pool of MLA latent pages: one arena per MLA layer, all sequences' pages in it,
// so a page can be shared read-only between sequences (prefix caching) by reference count.
// A page id names the same slot in every layer's arena (a sequence's block table is the same
// for all its MLA layers), so one id stands for page_tokens tokens of every MLA layer.
//
// The arenas are allocated once, uninitialised, at the capacity the memory budget allows; the
// operating system backs only the pages that have been written.
//
// Owns: the arenas, the free list, the reference counts.
// Thread safety: none; the scheduler thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kimi/model.h"

namespace kimi::runtime {

class PagePool {
 public:
  // `probe` is a fresh state of the model (its MLA caches give the page geometry).
  PagePool(const SequenceState& probe, int64_t capacity_pages);
  PagePool(const PagePool&) = delete;
  PagePool& operator=(const PagePool&) = delete;

  // A free page with reference count 1, or nullopt when every page is in use.
  std::optional<int32_t> Allocate();
  void Retain(int32_t page);
  // Drops one reference; the page is free again at zero.
  void Release(int32_t page);
  int32_t RefCount(int32_t page) const { return refs_[size_t(page)]; }

  // Points every MLA cache of `state` at this pool's arenas (its block tables must be empty).
  void Attach(SequenceState& state);
  // Appends `page` to the block table of every MLA layer of `state` (the reference is the
  // caller's: from Allocate or Retain).
  static void Append(SequenceState& state, int32_t page);
  // Releases every page of `state`'s block tables and clears them.
  void ReleaseAll(SequenceState& state);

  int64_t capacity() const { return capacity_; }
  int64_t in_use() const { return in_use_; }
  int64_t page_tokens() const { return page_tokens_; }
  // Bytes of one page id over all MLA layers (with the block-table entries).
  uint64_t page_bytes() const { return page_bytes_; }

 private:
  int64_t capacity_ = 0;
  int64_t page_tokens_ = 1;
  int64_t page_floats_ = 0;  // one page of one layer
  uint64_t page_bytes_ = 0;
  std::vector<std::unique_ptr<float[]>> arenas_;  // per MLA layer: [capacity, page_tokens, row_width]
  std::vector<int32_t> refs_;
  std::vector<int32_t> free_;
  int64_t in_use_ = 0;
};

}  // namespace kimi::runtime
