#pragma once
// Reading a FastPlan's rail streams stage by stage (used by rank_schedule and
// stage_walk).
#include <algorithm>
#include <cstdint>
#include <span>

#include "comm/plan/fast_plan.hpp"

namespace nestfast::comm {

// Reads a rail stream front to back, a stage's worth at a time, split into
// the demand blocks it covers. Remembers the block it stopped in, so reading
// a whole stream costs O(segments + blocks), however many stages cut it.
class StreamCursor {
 public:
  StreamCursor() = default;
  StreamCursor(const FastPlan& plan, std::span<const StreamSegment> segments) : plan_(&plan), segments_(segments) {}

  // Takes up to `amount` bytes: visit(segment, dst, offset in block, length,
  // stream position) per block piece, in stream order.
  template <class Visit>
  std::uint64_t take(std::uint64_t amount, Visit&& visit) {
    std::uint64_t taken = 0;
    while (taken < amount && next_ < segments_.size()) {
      const StreamSegment& segment = segments_[next_];
      if (!positioned_) enter(segment);
      const int dst = plan_->map.rank_at(segment.server, block_);
      const std::uint64_t block_end = block_start_ + plan_->demand(segment.owner, dst);
      const std::uint64_t end = std::min({segment.end, block_end, position_ + (amount - taken)});
      if (position_ < end) {
        visit(segment, dst, position_ - block_start_, end - position_, position_);
        taken += end - position_;
        position_ = end;
      }
      if (position_ == segment.end) {
        ++next_;
        positioned_ = false;
      } else if (position_ == block_end) {
        ++block_;
        block_start_ = block_end;
      }
    }
    return taken;
  }

 private:
  // Moves to the block holding the segment's first byte.
  void enter(const StreamSegment& segment) {
    block_ = 0;
    block_start_ = 0;
    while (true) {
      const std::uint64_t length = plan_->demand(segment.owner, plan_->map.rank_at(segment.server, block_));
      if (block_start_ + length > segment.begin) break;
      block_start_ += length;
      ++block_;
    }
    position_ = segment.begin;
    positioned_ = true;
  }

  const FastPlan* plan_ = nullptr;
  std::span<const StreamSegment> segments_;
  std::size_t next_ = 0;
  bool positioned_ = false;
  std::uint64_t position_ = 0;     // in the owner's stream
  int block_ = 0;                  // local index of the block's destination on the segment's server
  std::uint64_t block_start_ = 0;  // stream position where that block starts
};

}  // namespace nestfast::comm
