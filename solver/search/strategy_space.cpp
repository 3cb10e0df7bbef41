#include "solver/search/strategy_space.hpp"

#include <algorithm>
#include <stdexcept>

namespace nestfast::search {

std::vector<ParallelDim> parse_placement(const std::string& text, const std::string& what) {
  std::vector<ParallelDim> order;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    const std::string item = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    const ParallelDim dim = parse_parallel_dim(item, what);
    if (std::find(order.begin(), order.end(), dim) != order.end()) {
      throw std::invalid_argument(what + ": '" + text + "' names " + item + " twice");
    }
    order.push_back(dim);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  // Dimensions left out go outermost, in the default order (usually of size 1,
  // they then sit anywhere).
  for (ParallelDim dim : Execution().placement) {
    if (std::find(order.begin(), order.end(), dim) == order.end()) order.push_back(dim);
  }
  return order;
}

std::string placement_to_string(const std::vector<ParallelDim>& placement) {
  std::string text;
  for (ParallelDim dim : placement) {
    if (!text.empty()) text += ',';
    text += to_string(dim);
  }
  return text;
}

std::vector<RecomputeModules> default_module_sets(const ModelSpec& model) {
  const RecomputeModules cheap = module_bit(RecomputeModule::CoreAttn) | module_bit(RecomputeModule::Layernorm) |
                                 module_bit(RecomputeModule::MoeAct) | module_bit(RecomputeModule::MlaUpProj);
  const RecomputeModules applying = modules_that_apply(model) & cheap;
  if (applying == kDefaultRecomputeModules) return {kDefaultRecomputeModules};
  return {kDefaultRecomputeModules, applying};
}

}  // namespace nestfast::search
