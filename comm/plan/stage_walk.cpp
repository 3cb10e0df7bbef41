#include "comm/plan/stage_walk.hpp"

#include <algorithm>

namespace nestfast::comm {

StageWalk::StageWalk(const FastPlan& plan) : plan_(plan) {
  const int S = plan.servers();
  cursors_.resize(static_cast<std::size_t>(plan.ranks()) * static_cast<std::size_t>(S));
  for (int r = 0; r < plan.ranks(); ++r) {
    for (int t = 0; t < S; ++t) cursors_[static_cast<std::size_t>(r) * S + t] = StreamCursor(plan, plan.rail_stream(r, t));
  }
  per_dst_.resize(static_cast<std::size_t>(plan.map.max_gpus_per_server()));
}

bool StageWalk::next() {
  if (started_) ++stage_;
  started_ = true;
  rail_.clear();
  forwards_.clear();
  if (stage_ >= plan_.stage_count()) return false;
  const ServerMap& map = plan_.map;
  const int S = map.servers();
  const std::uint64_t weight = plan_.stage_weights[stage_];
  const auto perm = plan_.stage_perm(stage_);
  for (int r = 0; r < map.ranks(); ++r) {
    const int s = map.server_of(r), t = perm[s], lane = map.local_index(r);
    if (t == s || lane >= map.lanes(s, t)) continue;
    std::fill(per_dst_.begin(), per_dst_.end(), 0);
    RailMessage message{r, map.rank_at(t, lane), 0, false};
    cursors_[static_cast<std::size_t>(r) * S + t].take(
        weight, [&](const StreamSegment& segment, int dst, std::uint64_t, std::uint64_t length, std::uint64_t) {
          message.bytes += length;
          message.carries_balanced |= segment.owner != r;
          per_dst_[map.local_index(dst)] += length;
        });
    if (message.bytes == 0) continue;
    rail_.push_back(message);
    for (int j = 0; j < map.gpus_on(t); ++j) {
      const int dst = map.rank_at(t, j);
      if (dst != message.to && per_dst_[j] > 0) forwards_.push_back({message.to, dst, per_dst_[j]});
    }
  }
  std::sort(forwards_.begin(), forwards_.end(), [](const ForwardMessage& a, const ForwardMessage& b) {
    return a.proxy != b.proxy ? a.proxy < b.proxy : a.dst < b.dst;
  });
  return true;
}

}  // namespace nestfast::comm
