// Carries out a NumaPlan on a loaded model (core/numa_placement.h): every pool thread pins
// itself to its node's CPUs, then binds the pages of its share of each MoE layer's routed
// experts to that node (pages already resident move there) and reads them once, so pages not
// yet read come from its node's memory. Thread 0, the caller, is pinned only meanwhile.
// Afterwards MoeForward runs each chosen expert on its node's threads first.
//
// Thread safety: call once, from the thread that loads the model, before any forward pass.
#pragma once

#include <vector>

#include "core/numa_placement.h"
#include "core/thread_pool.h"
#include "kimi/status.h"
#include "model/moe.h"

namespace kimi::model {

// Precondition: plan.active(), pool has plan.total_threads threads, every layer has
// plan.num_experts experts.
Status PlaceExperts(const NumaPlan& plan, const std::vector<MoeWeights*>& layers, ThreadPool& pool);

}  // namespace kimi::model
