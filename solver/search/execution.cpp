#include "solver/search/execution.hpp"

#include <stdexcept>

namespace nestfast {

const char* to_string(Recompute mode) {
  switch (mode) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}

const char* to_string(ParallelDim dim) {
  switch (dim) {
    case ParallelDim::Tp: return "tp";
    case ParallelDim::Cp: return "cp";
    case ParallelDim::Ep: return "ep";
    case ParallelDim::Pp: return "pp";
    case ParallelDim::Dp: return "dp";
  }
  return "?";
}

const char* to_string(Framework framework) {
  return framework == Framework::MegatronCore ? "megatron-core" : "nest";
}

Framework parse_framework(const std::string& text, const std::string& what) {
  if (text == "megatron-core") return Framework::MegatronCore;
  if (text == "nest") return Framework::Nest;
  throw std::invalid_argument(what + ": '" + text + "' is not megatron-core or nest");
}

Recompute parse_recompute(const std::string& text, const std::string& what) {
  if (text == "none") return Recompute::None;
  if (text == "selective") return Recompute::Selective;
  if (text == "full") return Recompute::Full;
  throw std::invalid_argument(what + ": '" + text + "' is not one of none, selective, full");
}

ParallelDim parse_parallel_dim(const std::string& text, const std::string& what) {
  for (ParallelDim dim : {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp, ParallelDim::Dp})
    if (text == to_string(dim)) return dim;
  throw std::invalid_argument(what + ": '" + text + "' is not one of tp, cp, ep, pp, dp");
}

const char* to_string(AllToAllAlgorithm algorithm) { return algorithm == AllToAllAlgorithm::Fast ? "fast" : "fanout"; }

Optimizer parse_optimizer(const std::string& text, const std::string& what) {
  if (text == "adam") return Optimizer::Adam;
  if (text == "sgd") return Optimizer::Sgd;
  throw std::invalid_argument(what + ": '" + text + "' is not one of adam, sgd");
}

AllToAllAlgorithm parse_all_to_all(const std::string& text, const std::string& what) {
  if (text == "fast") return AllToAllAlgorithm::Fast;
  if (text == "fanout") return AllToAllAlgorithm::Fanout;
  throw std::invalid_argument(what + ": '" + text + "' is not one of fast, fanout");
}

}  // namespace nestfast
