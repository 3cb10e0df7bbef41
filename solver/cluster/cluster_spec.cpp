#include "solver/cluster/cluster_spec.hpp"

#include <stdexcept>

namespace nestfast {

const char* to_string(DeepEpSupport support) {
  switch (support) {
    case DeepEpSupport::None: return "none";
    case DeepEpSupport::Intranode: return "intranode";
    case DeepEpSupport::Internode: return "internode";
  }
  return "?";
}

DeepEpSupport parse_deepep_support(const std::string& text, const std::string& what) {
  for (DeepEpSupport support : {DeepEpSupport::None, DeepEpSupport::Intranode, DeepEpSupport::Internode})
    if (text == to_string(support)) return support;
  throw std::invalid_argument(what + ": '" + text + "' is not one of none, intranode, internode");
}

}  // namespace nestfast
