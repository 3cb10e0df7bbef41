#pragma once
// The whole plan's traffic, one stage at a time, as messages with byte
// counts only: what a flow model or a report needs without every rank's
// piece lists. O(pieces) over the whole walk.
#include <cstdint>
#include <vector>

#include "comm/plan/fast_plan.hpp"
#include "comm/plan/stream_cursor.hpp"

namespace nestfast::comm {

struct RailMessage {
  std::int32_t from = 0;
  std::int32_t to = 0;
  std::uint64_t bytes = 0;
  bool carries_balanced = false;  // holds bytes `from` took in the balance step
};

struct ForwardMessage {
  std::int32_t proxy = 0;  // the rail receiver
  std::int32_t dst = 0;    // the final destination on the proxy's server
  std::uint64_t bytes = 0;
};

class StageWalk {
 public:
  explicit StageWalk(const FastPlan& plan);
  // Moves to the next stage (the first on the first call); false when done.
  bool next();
  std::size_t stage() const { return stage_; }
  // This stage's rail messages, by sender rank; then what each proxy forwards
  // of them (sorted by proxy, then destination).
  const std::vector<RailMessage>& rail() const { return rail_; }
  const std::vector<ForwardMessage>& forwards() const { return forwards_; }

 private:
  const FastPlan& plan_;
  std::vector<StreamCursor> cursors_;  // [rank * S + server]
  std::vector<std::uint64_t> per_dst_;  // scratch: bytes by local index of the receiving server
  std::vector<RailMessage> rail_;
  std::vector<ForwardMessage> forwards_;
  std::size_t stage_ = 0;
  bool started_ = false;
};

}  // namespace nestfast::comm
