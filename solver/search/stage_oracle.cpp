#include "solver/search/stage_oracle.hpp"

#include "solver/search/memory_model.hpp"

namespace nestfast::search {

StageOracle::StageOracle(const LayerTable& table, const ReplicaContext& replicas, const ExecutionLayout& layout,
                         int pp, int micro_batches, double hbm_bytes, unsigned recompute_mask, int full_layers) {
  for (int rank = 0; rank < pp; ++rank) {
    rank_level_.push_back(layout.stage_boundary_level(rank));
    stash_.push_back(stash_depth(rank, pp, 1, micro_batches));
  }
  oracle_.table = table.view();
  oracle_.replicas = replicas;
  oracle_.rank_level = rank_level_.data();
  oracle_.stash = stash_.data();
  oracle_.hbm_bytes = hbm_bytes;
  oracle_.allow_modes(recompute_mask);
  oracle_.full_layers = full_layers;
}

}  // namespace nestfast::search
