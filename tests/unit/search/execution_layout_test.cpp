// compute_layout (per level, over residues) gives exactly the layout of the
// per-device enumeration below (the algorithm it replaced): group shapes
// from the worst copy of each group, boundary levels from every copy of each
// pipeline pair. Random degrees, placements and clusters of 1..4 levels
// with group sizes 1..12 (most not powers of 2), the outermost unbounded or
// bounded (also smaller than the device count: compute_layout does not
// validate).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "solver/search/execution_layout.hpp"

namespace nestfast {
namespace {

// ---- Reference: every device of every copy ---------------------------------

int reference_common_level(const std::vector<std::int64_t>& spans, std::int64_t a, std::int64_t b) {
  for (std::size_t l = 0; l < spans.size(); ++l)
    if (a / spans[l] == b / spans[l]) return static_cast<int>(l);
  return static_cast<int>(spans.size()) - 1;
}

// visit(offset) for every combination of coordinates of `dims`.
template <typename Visit>
void for_each_offset(const ExecutionLayout& layout, const std::vector<int>& dims, Visit&& visit) {
  std::vector<int> coordinate(dims.size(), 0);
  while (true) {
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < dims.size(); ++i)
      offset += static_cast<std::int64_t>(coordinate[i]) * layout.stride[static_cast<std::size_t>(dims[i])];
    visit(offset);
    std::size_t i = 0;
    for (; i < dims.size(); ++i) {
      if (++coordinate[i] < layout.size[static_cast<std::size_t>(dims[i])]) break;
      coordinate[i] = 0;
    }
    if (i == dims.size()) return;
  }
}

GroupShape reference_group_shape(const ExecutionLayout& layout, const std::vector<std::int64_t>& spans,
                                 const std::vector<int>& members) {
  std::vector<int> others;
  int group_size = 1;
  for (int d = 0; d < kParallelDims; ++d) {
    if (std::find(members.begin(), members.end(), d) != members.end())
      group_size *= layout.size[static_cast<std::size_t>(d)];
    else
      others.push_back(d);
  }
  const std::size_t levels = spans.size();
  std::vector<int> worst(levels, 1);
  std::vector<std::int64_t> member_offsets;
  for_each_offset(layout, members, [&](std::int64_t offset) { member_offsets.push_back(offset); });
  std::sort(member_offsets.begin(), member_offsets.end());
  std::vector<int> touched(levels, 1);
  for_each_offset(layout, others, [&](std::int64_t base) {
    for (std::size_t l = 0; l < levels; ++l) {
      int count = 0;
      std::int64_t last_block = -1;
      for (std::int64_t offset : member_offsets) {
        const std::int64_t block = (base + offset) / spans[l];
        if (block != last_block) ++count;
        last_block = block;
      }
      touched[l] = count;
    }
    if (std::lexicographical_compare(worst.rbegin(), worst.rend(), touched.rbegin(), touched.rend())) worst = touched;
  });
  GroupShape shape;
  shape.fanout.assign(levels, 1);
  int inner = group_size;
  for (std::size_t l = 0; l < levels; ++l) {
    shape.fanout[l] = (inner + worst[l] - 1) / worst[l];
    inner = worst[l];
  }
  return shape;
}

ExecutionLayout reference_layout(const ClusterSpec& cluster, const Execution& execution) {
  ExecutionLayout layout;
  const auto at = [](ParallelDim dim) { return static_cast<std::size_t>(dim); };
  layout.size[at(ParallelDim::Tp)] = execution.tp;
  layout.size[at(ParallelDim::Cp)] = execution.cp;
  layout.size[at(ParallelDim::Ep)] = execution.ep;
  layout.size[at(ParallelDim::Pp)] = execution.pp;
  layout.size[at(ParallelDim::Dp)] = execution.dp / execution.ep;
  int stride = 1;
  for (ParallelDim dim : execution.placement) {
    layout.stride[at(dim)] = stride;
    stride *= layout.size[at(dim)];
  }
  const std::vector<std::int64_t> spans = level_spans(cluster);
  const int tp = 0, cp = 1, ep = 2, pp = 3, dp = 4;
  layout.tp_group = reference_group_shape(layout, spans, {tp});
  layout.cp_group = reference_group_shape(layout, spans, {cp});
  layout.ep_group = reference_group_shape(layout, spans, {ep});
  layout.dense_dp_group = reference_group_shape(layout, spans, {cp, ep, dp});
  layout.expert_dp_group = reference_group_shape(layout, spans, {cp, dp});
  const int ranks = execution.pp;
  const std::int64_t pp_stride = layout.stride[static_cast<std::size_t>(pp)];
  layout.rank_first_device.resize(static_cast<std::size_t>(ranks));
  layout.rank_boundary_level.assign(static_cast<std::size_t>(ranks), -1);
  for (int r = 0; r < ranks; ++r) {
    layout.rank_first_device[static_cast<std::size_t>(r)] = static_cast<int>(r * pp_stride);
    if (ranks == 1) continue;
    const std::int64_t from = (r + ranks - 1) % ranks * pp_stride;
    const std::int64_t to = r * pp_stride;
    int level = 0;
    for_each_offset(layout, {tp, cp, ep, dp}, [&](std::int64_t offset) {
      level = std::max(level, reference_common_level(spans, from + offset, to + offset));
    });
    layout.rank_boundary_level[static_cast<std::size_t>(r)] = level;
  }
  return layout;
}

// ---- Random cases ----------------------------------------------------------

struct LayoutCase {
  ClusterSpec cluster;
  Execution execution;
  std::string text;  // for failure messages
};

LayoutCase random_layout_case(std::mt19937_64& rng) {
  LayoutCase c;
  const int levels = 1 + static_cast<int>(rng() % 4);
  const bool unbounded = rng() % 3 != 0;
  c.text = "levels";
  for (int l = 0; l < levels; ++l) {
    NetworkLevel level;
    level.name = "level" + std::to_string(l);
    level.group_size = 1 + static_cast<int>(rng() % 12);
    if (l == levels - 1 && unbounded) level.group_size = 0;
    level.bandwidth_Bps = 1e10;
    level.latency_s = 1e-6;
    c.cluster.levels.push_back(level);
    c.text += " " + std::to_string(level.group_size);
  }
  Execution& e = c.execution;
  const auto degree = [&] { return rng() % 3 == 0 ? 1 : 1 + static_cast<int>(rng() % 6); };
  e.tp = degree();
  e.cp = degree();
  e.ep = degree();
  e.pp = degree();
  e.dp = e.ep * degree();
  e.placement = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp, ParallelDim::Dp};
  std::shuffle(e.placement.begin(), e.placement.end(), rng);
  c.text += "; tp " + std::to_string(e.tp) + " cp " + std::to_string(e.cp) + " ep " + std::to_string(e.ep) + " pp " +
            std::to_string(e.pp) + " dp " + std::to_string(e.dp) + "; placement";
  for (ParallelDim dim : e.placement) c.text += std::string(" ") + to_string(dim);
  return c;
}

void expect_same_layout(const ExecutionLayout& fast, const ExecutionLayout& slow, const std::string& what) {
  EXPECT_EQ(fast.size, slow.size) << what;
  EXPECT_EQ(fast.stride, slow.stride) << what;
  EXPECT_EQ(fast.tp_group.fanout, slow.tp_group.fanout) << what;
  EXPECT_EQ(fast.cp_group.fanout, slow.cp_group.fanout) << what;
  EXPECT_EQ(fast.ep_group.fanout, slow.ep_group.fanout) << what;
  EXPECT_EQ(fast.dense_dp_group.fanout, slow.dense_dp_group.fanout) << what;
  EXPECT_EQ(fast.expert_dp_group.fanout, slow.expert_dp_group.fanout) << what;
  EXPECT_EQ(fast.rank_first_device, slow.rank_first_device) << what;
  EXPECT_EQ(fast.rank_boundary_level, slow.rank_boundary_level) << what;
}

TEST(ComputeLayout, EqualsPerDeviceEnumerationOnRandomCases) {
  std::mt19937_64 rng(20261129);
  int cases = 0, split_groups = 0, cross_boundaries = 0, bounded_top = 0;
  while (cases < 600) {
    const LayoutCase c = random_layout_case(rng);
    if (c.execution.devices() > 20000) continue;  // keep the reference quick
    const ExecutionLayout fast = compute_layout(c.cluster, c.execution);
    const ExecutionLayout slow = reference_layout(c.cluster, c.execution);
    expect_same_layout(fast, slow, c.text);
    if (::testing::Test::HasFailure()) return;
    ++cases;
    // How much of the space the cases reach: groups split over blocks in
    // uneven ways, boundaries above level 0, bounded outermost levels.
    const auto& n = slow.size;  // tp, cp, ep, pp, dp/ep
    const std::pair<const GroupShape*, int> groups[] = {
        {&slow.tp_group, n[0]}, {&slow.dense_dp_group, n[1] * n[2] * n[4]}, {&slow.expert_dp_group, n[1] * n[4]}};
    for (const auto& [group, members] : groups)
      if (group->level() > 0 && group->size() != members) ++split_groups;  // blocks hold unequal shares
    for (int level : slow.rank_boundary_level)
      if (level > 0) ++cross_boundaries;
    if (c.cluster.levels.back().group_size != 0) ++bounded_top;
  }
  EXPECT_GT(split_groups, 50);
  EXPECT_GT(cross_boundaries, 200);
  EXPECT_GT(bounded_top, 100);
}

// The presets' shapes at scale: a few large layouts on an 8 x 20 x unbounded
// cluster (Selene's 20 nodes per unit: spans not powers of 2).
TEST(ComputeLayout, EqualsPerDeviceEnumerationAtScale) {
  ClusterSpec cluster;
  cluster.levels = {{"nvlink", 8, 3e11, 1e-6, 1, 1, {}}, {"leaf", 20, 2.5e10, 5e-6, 1, 1, {}}, {"spine", 0, 2.5e10, 1e-5, 1, 1, {}}};
  using D = ParallelDim;
  const std::vector<std::vector<ParallelDim>> placements = {
      {D::Tp, D::Cp, D::Ep, D::Dp, D::Pp}, {D::Dp, D::Pp, D::Tp, D::Cp, D::Ep}, {D::Cp, D::Pp, D::Dp, D::Tp, D::Ep}};
  for (const auto& placement : placements) {
    Execution e;
    e.tp = 4;
    e.cp = 3;
    e.pp = 5;
    e.ep = 2;
    e.dp = 2 * 70;  // 8400 devices
    e.placement = placement;
    expect_same_layout(compute_layout(cluster, e), reference_layout(cluster, e), "8400 devices");
  }
}

}  // namespace
}  // namespace nestfast
