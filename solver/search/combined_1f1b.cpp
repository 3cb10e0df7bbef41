#include "solver/search/combined_1f1b.hpp"

#include <algorithm>

namespace nestfast {

double combined_1f1b_alone_fraction(int pp, int vpp, int micro_batches) {
  if (micro_batches <= 0) return 1.0;
  if (pp == 1) return 1.0 / micro_batches;
  if (vpp <= 1) return 1.0;
  const int total = micro_batches * vpp;
  const int warmup = 2 * (pp - 1) + (vpp - 1) * pp + 1;
  return static_cast<double>(std::min(warmup, total)) / total;
}

}  // namespace nestfast
