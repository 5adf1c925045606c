#include "runtime/page_pool.h"

namespace kimi::runtime {

PagePool::PagePool(const SequenceState& probe, int64_t capacity_pages) : capacity_(capacity_pages) {
  if (!probe.mla.empty()) {
    page_tokens_ = probe.mla[0].page_tokens;
    page_floats_ = page_tokens_ * probe.mla[0].row_width;
  }
  page_bytes_ = uint64_t(probe.mla.size()) * (uint64_t(page_floats_) * sizeof(float) + sizeof(int32_t));
  if (probe.mla.empty()) capacity_ = 0;
  for (size_t i = 0; i < probe.mla.size(); ++i) {
    // Uninitialised on purpose: a page is written before it is read, and untouched memory stays
    // unbacked.
    arenas_.push_back(std::make_unique_for_overwrite<float[]>(size_t(capacity_ * page_floats_)));
  }
  refs_.assign(size_t(capacity_), 0);
  free_.reserve(size_t(capacity_));
  for (int64_t p = capacity_ - 1; p >= 0; --p) free_.push_back(int32_t(p));  // low ids first
}

std::optional<int32_t> PagePool::Allocate() {
  if (free_.empty()) return std::nullopt;
  const int32_t page = free_.back();
  free_.pop_back();
  refs_[size_t(page)] = 1;
  ++in_use_;
  return page;
}

void PagePool::Retain(int32_t page) { ++refs_[size_t(page)]; }

void PagePool::Release(int32_t page) {
  if (--refs_[size_t(page)] == 0) {
    free_.push_back(page);
    --in_use_;
  }
}

void PagePool::Attach(SequenceState& state) {
  for (size_t i = 0; i < state.mla.size(); ++i) {
    state.mla[i].pages.clear();
    state.mla[i].block_table.clear();
    state.mla[i].shared_pages = arenas_[i].get();
  }
}

void PagePool::Append(SequenceState& state, int32_t page) {
  for (auto& cache : state.mla) cache.block_table.push_back(page);
}

void PagePool::ReleaseAll(SequenceState& state) {
  if (state.mla.empty()) return;
  for (int32_t page : state.mla[0].block_table) Release(page);
  for (auto& cache : state.mla) cache.block_table.clear();
}

}  // namespace kimi::runtime
