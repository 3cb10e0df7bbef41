#pragma once
// One line of key specs per preset, in the units people quote
// ("80 layers, hidden 8192, ...", "80 GiB at 3.35 TB/s, 989 TFLOPS bf16").
#include <string>

#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"

namespace nestfast::io {

std::string preset_summary(const ModelSpec& model);
std::string preset_summary(const GpuSpec& gpu);
std::string preset_summary(const ClusterSpec& cluster);

}  // namespace nestfast::io
