#include "solver/search/execution_layout.hpp"

#include "solver/search/megatron_rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>

#include "solver/search/strategy_space.hpp"

namespace nestfast {

namespace {

int dim_index(ParallelDim dim) { return static_cast<int>(dim); }

// Every device of a group of dims is base + offset, offset = sum of the
// members' coordinate * stride, base the same over the other dims. Because
// the strides are a mixed radix (each is the product of the sizes placed
// inside it), a level whose span exceeds the largest device index holds
// everything in one block, and below that a set of devices meets level
// blocks in a way that depends only on residues modulo the spans. So group
// shapes and boundary levels are computed per level over residues, never
// per device (a unit test checks them against the per-device enumeration).

struct Digit {
  std::int64_t stride = 1;
  std::int64_t size = 1;
};

// The dims' (stride, size), sizes > 1 only, by increasing stride.
std::vector<Digit> digits_of(const ExecutionLayout& layout, const std::vector<int>& dims) {
  std::vector<Digit> digits;
  for (int d : dims) {
    const auto i = static_cast<std::size_t>(d);
    if (layout.size[i] > 1) digits.push_back({layout.stride[i], layout.size[i]});
  }
  std::sort(digits.begin(), digits.end(), [](const Digit& a, const Digit& b) { return a.stride < b.stride; });
  return digits;
}

// {offset mod modulus} over all offsets of `digits`, as a membership map.
std::vector<char> residues(const std::vector<Digit>& digits, std::int64_t modulus) {
  std::vector<char> seen(static_cast<std::size_t>(modulus), 0);
  std::vector<std::int64_t> found = {0};
  seen[0] = 1;
  for (const Digit& digit : digits) {
    const std::int64_t step = digit.stride % modulus;
    if (step == 0) continue;
    // After modulus / gcd steps the residues repeat.
    const std::int64_t steps = std::min(digit.size, modulus / std::gcd(step, modulus));
    const std::size_t before = found.size();
    for (std::size_t k = 0; k < before; ++k) {
      for (std::int64_t a = 1; a < steps; ++a) {
        const std::int64_t r = (found[k] + a * step) % modulus;
        if (!seen[static_cast<std::size_t>(r)]) {
          seen[static_cast<std::size_t>(r)] = 1;
          found.push_back(r);
        }
      }
    }
  }
  return seen;
}

// How many blocks of `span` devices the set y + offsets(digits) meets, for
// y in [0, span). With O_j the offsets of digits 0..j and E_j their largest,
// y + O_j is n_j translates y + a*t_j + O_{j-1} lying in disjoint increasing
// intervals (E_{j-1} < t_j), so their block sets are sorted and share at
// most an end block with the next: count = sum of the translates' counts
// minus the shared ends. Both terms depend only on (y + a*t_j) mod span,
// which is periodic in a, so each count costs one period, memoised.
class BlockCounter {
 public:
  BlockCounter(std::int64_t span, std::vector<Digit> digits) : span_(span), digits_(std::move(digits)) {
    std::int64_t extent = 0;
    for (const Digit& digit : digits_) {
      inner_extent_.push_back(extent);
      extent += (digit.size - 1) * digit.stride;
      memo_.emplace_back(static_cast<std::size_t>(span_), -1);
    }
  }

  int blocks(std::int64_t y) { return count(static_cast<int>(digits_.size()) - 1, y); }

 private:
  int count(int j, std::int64_t y) {
    if (j < 0) return 1;
    int& memo = memo_[static_cast<std::size_t>(j)][static_cast<std::size_t>(y)];
    if (memo >= 0) return memo;
    const Digit& digit = digits_[static_cast<std::size_t>(j)];
    const std::int64_t extent = inner_extent_[static_cast<std::size_t>(j)];
    const std::int64_t step = digit.stride % span_;
    const std::int64_t period = step == 0 ? 1 : span_ / std::gcd(step, span_);
    // Translate a (start residue r) minus its end block shared with a + 1.
    auto own = [&](std::int64_t r) {
      const bool shared = (r + extent) / span_ == (r + digit.stride) / span_;
      return count(j - 1, r) - (shared ? 1 : 0);
    };
    const std::int64_t shared_pairs = digit.size - 1;  // translates 0..n-2 have a successor
    const std::int64_t partial = shared_pairs % period;
    std::int64_t period_sum = 0, partial_sum = 0;
    std::int64_t r = y;
    for (std::int64_t a = 0; a < std::min(shared_pairs, period); ++a) {
      if (a == partial) partial_sum = period_sum;
      period_sum += own(r);
      r = (r + step) % span_;
    }
    if (partial == std::min(shared_pairs, period)) partial_sum = period_sum;
    const std::int64_t last = (y + shared_pairs % period * step) % span_;
    const std::int64_t total = shared_pairs / period * period_sum + partial_sum + count(j - 1, last);
    memo = static_cast<int>(total);
    return memo;
  }

  std::int64_t span_;
  std::vector<Digit> digits_;
  std::vector<std::int64_t> inner_extent_;  // E_{j-1}: the largest offset of digits 0..j-1
  std::vector<std::vector<int>> memo_;
};

// The largest span below `devices`: block counts at every level depend only
// on a base's residue modulo it (spans are nested; wider levels hold all
// devices in one block). 0 when no level splits the devices.
std::int64_t residue_modulus(const std::vector<std::int64_t>& spans, std::int64_t devices) {
  std::int64_t modulus = 0;
  for (std::int64_t span : spans)
    if (span < devices) modulus = std::max(modulus, span);
  return modulus;
}

std::int64_t device_count(const ExecutionLayout& layout) {
  std::int64_t devices = 1;
  for (int size : layout.size) devices *= size;
  return devices;
}

// The shape of the groups whose members differ in `members` (digits) and
// whose copies differ in `others`, worst copy: the one touching the most
// blocks, compared from the outermost level down.
GroupShape group_shape_of(const std::vector<std::int64_t>& spans, std::int64_t devices,
                          const std::vector<Digit>& members, const std::vector<Digit>& others) {
  int group_size = 1;
  for (const Digit& digit : members) group_size *= static_cast<int>(digit.size);
  const std::size_t levels = spans.size();
  std::vector<int> worst(levels, 1);
  const std::int64_t modulus = residue_modulus(spans, devices);
  if (modulus > 0) {
    std::vector<BlockCounter> counters;
    for (std::size_t l = 0; l < levels && spans[l] < devices; ++l) counters.emplace_back(spans[l], members);
    const std::vector<char> bases = residues(others, modulus);
    std::vector<int> touched(levels, 1);
    for (std::int64_t base = 0; base < modulus; ++base) {
      if (!bases[static_cast<std::size_t>(base)]) continue;
      for (std::size_t l = 0; l < counters.size(); ++l) touched[l] = counters[l].blocks(base % spans[l]);
      if (std::lexicographical_compare(worst.rbegin(), worst.rend(), touched.rbegin(), touched.rend())) worst = touched;
    }
  }
  GroupShape shape;
  shape.fanout.assign(levels, 1);
  int inner = group_size;
  for (std::size_t l = 0; l < levels; ++l) {
    shape.fanout[l] = (inner + worst[l] - 1) / worst[l];
    inner = worst[l];
  }
  return shape;
}

// The groups formed by the layout's dims `members`.
GroupShape group_shape(const ExecutionLayout& layout, const std::vector<std::int64_t>& spans,
                       const std::vector<int>& members) {
  std::vector<int> others;
  for (int d = 0; d < kParallelDims; ++d)
    if (std::find(members.begin(), members.end(), d) == members.end()) others.push_back(d);
  return group_shape_of(spans, device_count(layout), digits_of(layout, members), digits_of(layout, others));
}

// Megatron-Core's expert grid (RankGenerator with tp = expert-tp (tp or 1),
// ep, dp = expert-dp, pp, cp = 1 and the dense grid's order string;
// megatron/core/parallel_state.py:887): digits innermost first, sizes 1 left
// out. The dense grid has tp innermost in both of Megatron's orders, so the
// expert grid starts at stride 1 too.
struct ExpertGrid {
  std::vector<Digit> etp, ep, edp, pp;
};

ExpertGrid megatron_expert_grid(const Execution& e) {
  const bool pp_last = e.placement.back() == ParallelDim::Pp;
  ExpertGrid grid;
  std::int64_t stride = 1;
  auto add = [&stride](std::vector<Digit>& digits, int size) {
    if (size > 1) digits.push_back({stride, size});
    stride *= size;
  };
  add(grid.etp, e.etp());
  add(grid.ep, e.ep);
  if (pp_last) {
    add(grid.edp, e.expert_dp_size());
    add(grid.pp, e.pp);
  } else {
    add(grid.pp, e.pp);
    add(grid.edp, e.expert_dp_size());
  }
  return grid;
}

std::vector<Digit> joined(std::initializer_list<const std::vector<Digit>*> parts) {
  std::vector<Digit> digits;
  for (const auto* part : parts) digits.insert(digits.end(), part->begin(), part->end());
  return digits;
}

// Level of the p2p between pipeline ranks whose first devices are `from` and
// `to`, for every copy (offset of the other dims) at once: the lowest level
// whose blocks hold both ends of every copy. With low = min(from, to) and
// gap = |to - from|, copy o fits a block of `span` iff
// (low + o) mod span + gap < span.
class BoundaryLevels {
 public:
  BoundaryLevels(const ExecutionLayout& layout, const std::vector<std::int64_t>& spans, const std::vector<int>& others)
      : spans_(spans), devices_(device_count(layout)) {
    const std::vector<Digit> digits = digits_of(layout, others);
    for (std::int64_t span : spans_) {
      // below[v] = the largest offset residue < v (residue 0 always exists).
      std::vector<std::int64_t> below;
      if (span < devices_) {
        const std::vector<char> seen = residues(digits, span);
        below.assign(static_cast<std::size_t>(span) + 1, 0);
        for (std::int64_t v = 1; v <= span; ++v)
          below[static_cast<std::size_t>(v)] = seen[static_cast<std::size_t>(v - 1)] ? v - 1 : below[static_cast<std::size_t>(v - 1)];
      }
      largest_below_.push_back(std::move(below));
    }
  }

  int level(std::int64_t from, std::int64_t to) const {
    const std::int64_t low = std::min(from, to), gap = std::abs(to - from);
    for (std::size_t l = 0; l < spans_.size(); ++l) {
      const std::int64_t span = spans_[l];
      if (span >= devices_) return static_cast<int>(l);  // one block holds every device
      if (gap >= span) continue;
      const std::int64_t start = low % span;
      const std::int64_t highest = start + largest_below_[l][static_cast<std::size_t>(span - start)];
      if (highest + gap < span) return static_cast<int>(l);
    }
    return static_cast<int>(spans_.size()) - 1;
  }

 private:
  std::vector<std::int64_t> spans_;
  std::int64_t devices_;
  std::vector<std::vector<std::int64_t>> largest_below_;
};

// A double as a reader writes it (1e+308, not 309 digits).
std::string short_number(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

[[noreturn]] void bad(const std::string& flag, const std::string& message) {
  throw std::invalid_argument(flag + ": " + message);
}

}  // namespace

int ExecutionLayout::stage_boundary_level(int stage) const {
  const int pp = size[dim_index(ParallelDim::Pp)];
  if (stage == 0 || pp == 1) return -1;
  return rank_boundary_level[static_cast<std::size_t>(stage % pp)];
}

int ExecutionLayout::stage_first_device(int stage) const {
  const int pp = size[dim_index(ParallelDim::Pp)];
  return rank_first_device[static_cast<std::size_t>(stage % pp)];
}

void validate_degrees(const ModelSpec& model, const ClusterSpec& cluster, const Execution& execution, int devices) {
  const Execution& e = execution;
  const std::pair<const char*, int> degrees[] = {{"--tp", e.tp}, {"--cp", e.cp}, {"--ep", e.ep}, {"--pp", e.pp},
                                                 {"--dp", e.dp}, {"--mbs", e.micro_batch}, {"--gbs", e.global_batch},
                                                 {"--vpp", e.vpp}};
  for (const auto& [flag, value] : degrees)
    if (value < 1) bad(flag, std::to_string(value) + " must be >= 1");
  if (e.devices() != devices)
    bad("--gpus", "tp*cp*pp*dp = " + std::to_string(e.tp) + "*" + std::to_string(e.cp) + "*" + std::to_string(e.pp) +
                      "*" + std::to_string(e.dp) + " = " + std::to_string(e.devices()) + " but --gpus is " +
                      std::to_string(devices) + " (ep is a factor of dp and does not multiply the device count)");
  std::int64_t capacity = 1;
  for (const NetworkLevel& level : cluster.levels) {
    if (level.group_size == 0) { capacity = std::numeric_limits<std::int64_t>::max(); break; }
    capacity = std::min<std::int64_t>(capacity * level.group_size, std::numeric_limits<std::int32_t>::max());
  }
  if (devices > capacity)
    bad("--gpus", std::to_string(devices) + " exceeds the " + std::to_string(capacity) + " devices of cluster '" +
                      cluster.name + "'");
  if (e.grad_reduce == GradReduce::Bf16 && model.dtype_bytes != 2)
    bad("--grad-reduce", "bf16 needs a 16-bit model (Megatron reduces in bf16 only under --bf16, arguments.py:1213), "
                         "model '" + model.name + "' has dtype_bytes " + std::to_string(model.dtype_bytes));
  if (model.heads % e.tp != 0 || model.kv_heads % e.tp != 0)
    bad("--tp", std::to_string(e.tp) + " does not divide heads = " + std::to_string(model.heads) +
                    " and kv_heads = " + std::to_string(model.kv_heads) + " of model '" + model.name + "'");
  if (e.ep > 1 && !model.moe.enabled())
    bad("--ep", std::to_string(e.ep) + " > 1 but model '" + model.name + "' has no experts");
  if (e.framework == Framework::Nest && e.dp % e.ep != 0)
    bad("--ep", std::to_string(e.ep) + " does not divide --dp " + std::to_string(e.dp) +
                    " (under --framework nest the expert-parallel group is carved out of the data-parallel ranks)");
  if (e.expert_tp != 0 && e.expert_tp != e.tp && !(e.expert_tp == 1 && e.framework == Framework::MegatronCore))
    bad("--etp", std::to_string(e.expert_tp) + " is neither tp = " + std::to_string(e.tp) +
                     " nor 1 under --framework megatron-core (whole experts on Megatron's own expert grid)");
  if (e.framework == Framework::MegatronCore && (e.tp * e.cp * e.dp) % (e.etp() * e.ep) != 0)
    bad("--ep", std::to_string(e.ep) + " x etp " + std::to_string(e.etp()) + " does not divide tp*cp*dp = " +
                    std::to_string(e.tp * e.cp * e.dp) + " (Megatron-Core's expert grid: " +
                    describe(search::MegatronRule::ExpertGridDividesWorld) + ")");
  if (model.moe.enabled() && model.moe.num_experts % e.ep != 0)
    bad("--ep", std::to_string(e.ep) + " does not divide the " + std::to_string(model.moe.num_experts) + " experts");
  if (e.a2a == AllToAllAlgorithm::DeepEp && e.ep > 1) {
    // Where DeepEP's kernels run (ClusterSpec::deepep): a node is 8
    // consecutive group ranks on NVLink (NUM_MAX_NVL_PEERS,
    // deepseek-ai/DeepEP 567632dd csrc/deep_ep.cpp:159, 165-166), and only
    // the internode kernels cross nodes.
    const int node = cluster.levels.empty() ? 1 : cluster.levels.front().group_size;
    const std::string what = "deepep on cluster '" + cluster.name + "'";
    if (cluster.deepep == DeepEpSupport::None) bad("--a2a", what + ": DeepEP does not run there (its preset's deepep is none)");
    if (e.etp() != 1)
      bad("--a2a", "deepep is priced for whole experts (etp 1, or tp 1): with expert tensor parallelism " +
                       std::to_string(e.etp()) + " Megatron's flex dispatcher sends every token to each expert-tp rank, "
                       "which nestfast does not price");
    if (e.ep <= 8 && (node < e.ep || node % e.ep != 0))
      bad("--ep", std::to_string(e.ep) + " with " + what + ": DeepEP's intranode kernels need the group inside one "
                      "NVLink node of " + std::to_string(node) + " GPUs");
    if (e.ep > 8 && cluster.deepep != DeepEpSupport::Internode)
      bad("--ep", std::to_string(e.ep) + " with " + what + ": DeepEP runs only inside a node there (deepep = " +
                      to_string(cluster.deepep) + "), so the group is at most 8");
    if (e.ep > 8 && node != 8)
      bad("--ep", std::to_string(e.ep) + " with " + what + ": DeepEP's internode kernels take nodes of 8 GPUs, the "
                      "cluster's have " + std::to_string(node));
  }
  const int seq = e.seq_len > 0 ? e.seq_len : model.seq_len;
  if (e.seq_len < 0) bad("--seq", std::to_string(e.seq_len) + " must be > 0");
  if (seq % e.cp != 0) bad("--cp", std::to_string(e.cp) + " does not divide the sequence length " + std::to_string(seq));
  if (e.sp && e.tp > 1 && (seq / e.cp) % e.tp != 0)
    bad("--sp", "sequence parallelism needs tp = " + std::to_string(e.tp) + " to divide seq_len/cp = " +
                    std::to_string(seq / e.cp));
  if (e.global_batch % (e.dp * e.micro_batch) != 0)
    bad("--gbs", std::to_string(e.global_batch) + " is not divisible by dp*mbs = " + std::to_string(e.dp) + "*" +
                     std::to_string(e.micro_batch));
  if (e.zero_stage < 0 || e.zero_stage > 3) bad("--zero", std::to_string(e.zero_stage) + " is not in 0..3");
  if (e.vpp > 1) {
    if (e.pp == 1) bad("--vpp", "interleaving (vpp > 1) needs pp > 1");
    if (e.micro_batches() % e.pp != 0)
      bad("--vpp", "interleaved 1F1B needs the micro-batch count " + std::to_string(e.micro_batches()) +
                       " to be a multiple of pp = " + std::to_string(e.pp));
  }
  // Interleaved chunks may hold the embedding or the head alone (Megatron's
  // --pipeline-model-parallel-layout accepts "E|t|...|t|L").
  if (e.pp * e.vpp > model.num_layers + (e.vpp > 1 ? 2 : 0))
    bad("--pp", "pp*vpp = " + std::to_string(e.pp * e.vpp) + " stages but the model has only " +
                    std::to_string(model.num_layers) + " blocks (+ embedding and head)");
  if (!(e.expert_imbalance >= 1) || !std::isfinite(e.expert_imbalance))
    bad("--moe-imbalance", short_number(e.expert_imbalance) + " must be a finite number >= 1");
  // The hottest device of an expert-parallel group holds at most all of the
  // group's tokens: ep times the mean (a single device, at most the largest group).
  const int most_imbalance = e.ep > 1 ? e.ep : search::kEpRange.maximum;
  if (e.expert_imbalance > most_imbalance)
    bad("--moe-imbalance", short_number(e.expert_imbalance) + " is more than " + std::to_string(most_imbalance) +
                               (e.ep > 1 ? " = ep (the hottest device cannot hold more than all the group's tokens)"
                                         : ", the largest expert-parallel group"));
  std::vector<ParallelDim> sorted = e.placement;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<ParallelDim> all = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp,
                                        ParallelDim::Dp};
  if (sorted != all) bad("--placement", "must name each of tp, cp, ep, pp, dp exactly once");
  if (e.framework == Framework::MegatronCore) {
    const std::vector<search::MegatronRule> broken = search::megatron_violations(model, e);
    if (!broken.empty())
      bad("--framework megatron-core", "Megatron-LM cannot run this plan: " + describe(broken.front()) +
                                           " (--framework nest prices it anyway)");
  }
}

std::vector<std::int64_t> level_spans(const ClusterSpec& cluster) {
  std::vector<std::int64_t> spans;
  std::int64_t span = 1;
  for (const NetworkLevel& level : cluster.levels) {
    if (level.group_size == 0 || span > std::numeric_limits<std::int64_t>::max() / level.group_size)
      span = std::numeric_limits<std::int64_t>::max();
    else
      span *= level.group_size;
    spans.push_back(span);
  }
  return spans;
}

ExecutionLayout compute_layout(const ClusterSpec& cluster, const Execution& execution) {
  ExecutionLayout layout;
  layout.size[dim_index(ParallelDim::Tp)] = execution.tp;
  layout.size[dim_index(ParallelDim::Cp)] = execution.cp;
  // Megatron-Core's dense grid has no ep factor (its experts have their own grid, below).
  const bool megatron = execution.framework == Framework::MegatronCore;
  layout.size[dim_index(ParallelDim::Ep)] = megatron ? 1 : execution.ep;
  layout.size[dim_index(ParallelDim::Pp)] = execution.pp;
  layout.size[dim_index(ParallelDim::Dp)] = megatron ? execution.dp : execution.dp / execution.ep;
  int stride = 1;
  for (ParallelDim dim : execution.placement) {
    layout.stride[static_cast<std::size_t>(dim_index(dim))] = stride;
    stride *= layout.size[static_cast<std::size_t>(dim_index(dim))];
  }
  const std::vector<std::int64_t> spans = level_spans(cluster);
  const int tp = dim_index(ParallelDim::Tp), cp = dim_index(ParallelDim::Cp), ep = dim_index(ParallelDim::Ep),
            pp = dim_index(ParallelDim::Pp), dp = dim_index(ParallelDim::Dp);
  layout.tp_group = group_shape(layout, spans, {tp});
  layout.cp_group = group_shape(layout, spans, {cp});
  layout.dense_dp_group = group_shape(layout, spans, {cp, ep, dp});
  if (megatron) {
    const ExpertGrid grid = megatron_expert_grid(execution);
    const std::int64_t devices = device_count(layout);
    layout.ep_group = group_shape_of(spans, devices, grid.ep, joined({&grid.etp, &grid.edp, &grid.pp}));
    layout.expert_dp_group = group_shape_of(spans, devices, grid.edp, joined({&grid.etp, &grid.ep, &grid.pp}));
  } else {
    layout.ep_group = group_shape(layout, spans, {ep});
    layout.expert_dp_group = group_shape(layout, spans, {cp, dp});
  }

  const int ranks = execution.pp;
  const std::int64_t pp_stride = layout.stride[static_cast<std::size_t>(pp)];
  layout.rank_first_device.resize(static_cast<std::size_t>(ranks));
  layout.rank_boundary_level.assign(static_cast<std::size_t>(ranks), -1);
  const BoundaryLevels boundaries(layout, spans, {tp, cp, ep, dp});
  for (int r = 0; r < ranks; ++r) {
    layout.rank_first_device[static_cast<std::size_t>(r)] = static_cast<int>(r * pp_stride);
    if (ranks == 1) continue;
    const std::int64_t from = (r + ranks - 1) % ranks * pp_stride;
    layout.rank_boundary_level[static_cast<std::size_t>(r)] = boundaries.level(from, r * pp_stride);
  }
  return layout;
}

std::vector<StagePlan> uniform_stages(const ModelSpec& model, const ExecutionLayout& layout, int pp, int vpp,
                                      Recompute recompute) {
  const int chunks = pp * vpp;
  const int blocks = model.num_layers;
  // More stages than blocks: the embedding, then the head, get a stage of
  // their own (the layout Llama 3 405B trained with: pp 16 x 8 chunks over
  // 126 blocks, Llama 3 paper section 3.3.2).
  const int embedding_alone = chunks > blocks ? 1 : 0;
  const int head_alone = chunks > blocks + 1 ? 1 : 0;
  const int block_chunks = chunks - embedding_alone - head_alone;
  std::vector<StagePlan> stages(static_cast<std::size_t>(chunks));
  int next_block = 1;
  for (int i = 0; i < chunks; ++i) {
    StagePlan& stage = stages[static_cast<std::size_t>(i)];
    const int k = i - embedding_alone;  // index among the chunks that hold blocks
    const bool holds_blocks = k >= 0 && k < block_chunks;
    const int count = holds_blocks ? blocks / block_chunks + (k < blocks % block_chunks ? 1 : 0) : 0;
    stage.first_layer = i == 0 ? 0 : next_block;
    next_block += count;
    stage.last_layer = i == chunks - 1 ? model.num_layers + 1 : (i == 0 && !holds_blocks ? 0 : next_block - 1);
    stage.recompute = recompute;
    stage.first_device = layout.stage_first_device(i);
    stage.boundary_level = layout.stage_boundary_level(i);
  }
  return stages;
}

std::vector<StagePlan> first_last_stages(const ModelSpec& model, const ExecutionLayout& layout, int pp, int vpp,
                                         int first_blocks, int last_blocks, Recompute recompute) {
  const std::string flags = "--decoder-first/last-pipeline-num-layers";
  if (first_blocks < 0 || last_blocks < 0) throw std::invalid_argument(flags + ": a block count must be >= 1");
  if (pp < 2) throw std::invalid_argument(flags + ": uneven first / last stages need pp > 1");
  std::vector<int> per_rank(static_cast<std::size_t>(pp), 0);
  int rest = model.num_layers, rest_ranks = pp;
  if (first_blocks > 0) rest -= first_blocks, --rest_ranks;
  if (last_blocks > 0) rest -= last_blocks, --rest_ranks;
  if (rest < 0 || (rest_ranks > 0 && (rest % rest_ranks != 0 || rest == 0)) || (rest_ranks == 0 && rest != 0))
    throw std::invalid_argument(flags + ": the " + std::to_string(std::max(rest, 0)) + " blocks left do not split evenly over the " +
                                std::to_string(rest_ranks) + " middle pipeline ranks (transformer_block.py:131)");
  for (int r = 0; r < pp; ++r) per_rank[static_cast<std::size_t>(r)] = rest_ranks > 0 ? rest / rest_ranks : 0;
  if (first_blocks > 0) per_rank.front() = first_blocks;
  if (last_blocks > 0) per_rank.back() = last_blocks;
  for (int r = 0; r < pp; ++r) {
    if (per_rank[static_cast<std::size_t>(r)] % vpp != 0)
      throw std::invalid_argument(flags + ": pipeline rank " + std::to_string(r) + "'s " +
                                  std::to_string(per_rank[static_cast<std::size_t>(r)]) +
                                  " blocks do not split evenly over vpp = " + std::to_string(vpp) + " chunks");
  }
  const int chunks = pp * vpp;
  std::vector<StagePlan> stages(static_cast<std::size_t>(chunks));
  int next_block = 1;
  for (int i = 0; i < chunks; ++i) {
    StagePlan& stage = stages[static_cast<std::size_t>(i)];
    const int count = per_rank[static_cast<std::size_t>(i % pp)] / vpp;
    stage.first_layer = i == 0 ? 0 : next_block;
    next_block += count;
    stage.last_layer = i == chunks - 1 ? model.num_layers + 1 : (i == 0 && count == 0 ? 0 : next_block - 1);
    if (i > 0 && i < chunks - 1 && count == 0)
      throw std::invalid_argument(flags + ": a middle model chunk would hold no block");
    stage.recompute = recompute;
    stage.first_device = layout.stage_first_device(i);
    stage.boundary_level = layout.stage_boundary_level(i);
  }
  return stages;
}

void derive_stage_layout(const ExecutionLayout& layout, Execution& execution) {
  for (std::size_t i = 0; i < execution.stages.size(); ++i) {
    execution.stages[i].first_device = layout.stage_first_device(static_cast<int>(i));
    execution.stages[i].boundary_level = layout.stage_boundary_level(static_cast<int>(i));
  }
}

void validate_stages(const ModelSpec& model, const ExecutionLayout& layout, const Execution& execution) {
  const auto& stages = execution.stages;
  const int expected = execution.pp * execution.vpp;
  if (static_cast<int>(stages.size()) != expected)
    bad("stages", std::to_string(stages.size()) + " given, pp*vpp = " + std::to_string(expected) + " expected");
  int next = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const StagePlan& stage = stages[i];
    const std::string name = "stages[" + std::to_string(i) + "]";
    if (stage.first_layer != next)
      bad(name + ".first_layer", std::to_string(stage.first_layer) + ", expected " + std::to_string(next));
    if (stage.last_layer < stage.first_layer)
      bad(name + ".last_layer", std::to_string(stage.last_layer) + " is before first_layer");
    if (stage.first_device != layout.stage_first_device(static_cast<int>(i)))
      bad(name + ".first_device", std::to_string(stage.first_device) + " but the placement puts it at " +
                                      std::to_string(layout.stage_first_device(static_cast<int>(i))));
    if (stage.boundary_level != layout.stage_boundary_level(static_cast<int>(i)))
      bad(name + ".boundary_level", std::to_string(stage.boundary_level) + " but the placement gives " +
                                        std::to_string(layout.stage_boundary_level(static_cast<int>(i))));
    next = stage.last_layer + 1;
  }
  if (next != model.num_layers + 2)
    bad("stages", "cover layers 0.." + std::to_string(next - 1) + ", expected 0.." + std::to_string(model.num_layers + 1));
}

}  // namespace nestfast
