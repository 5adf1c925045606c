#include "model/numa_experts.h"

namespace kimi::model {
namespace {

Status PlaceMatrix(const Mxfp4Matrix& m, int node) {
  const size_t packed = size_t(m.rows * m.cols / 2), scale = size_t(m.rows * m.cols / kMxfp4BlockSize);
  KIMI_RETURN_IF_ERROR(BindMemoryToNode(m.packed, packed, node));
  KIMI_RETURN_IF_ERROR(BindMemoryToNode(m.scale, scale, node));
  TouchPages(m.packed, packed);
  TouchPages(m.scale, scale);
  return Status::OK();
}

}  // namespace

Status PlaceExperts(const NumaPlan& plan, const std::vector<MoeWeights*>& layers, ThreadPool& pool) {
  KIMI_RETURN_IF_ERROR(PinPoolWorkers(plan, pool));
  std::vector<Status> results(size_t(pool.num_threads()));
  // One range per thread: ParallelFor's static split of [0, threads) gives thread t [t, t + 1).
  pool.ParallelFor(0, pool.num_threads(), 1, [&](int64_t, int64_t, int t) {
    const NumaPlan::Group& group = plan.groups[size_t(plan.GroupOfThread(t))];
    // The caller reads its share from its group's node too, then gets its own CPUs back.
    std::vector<int> previous;
    Status s = t == 0 ? PinCurrentThread(group.cpus, &previous) : Status::OK();
    int64_t e0 = 0, e1 = 0;
    plan.ThreadExpertRange(t, &e0, &e1);
    for (const MoeWeights* layer : layers) {
      for (int64_t e = e0; e < e1 && s.ok(); ++e) {
        const ExpertWeights& x = layer->experts[size_t(e)];
        for (const Mxfp4Matrix* m : {&x.w1, &x.w3, &x.w2}) {
          if (s.ok()) s = PlaceMatrix(*m, group.node);
        }
      }
    }
    if (!previous.empty()) {
      if (Status back = PinCurrentThread(previous); s.ok()) s = back;
    }
    results[size_t(t)] = s;
  });
  for (const Status& s : results) KIMI_RETURN_IF_ERROR(s);
  return Status::OK();
}

}  // namespace kimi::model
