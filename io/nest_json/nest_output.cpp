// The artifact's output format: reading a reference answer and writing ours.
#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>

#include "io/nest_json/json_fields.hpp"
#include "io/nest_json/nest_json.hpp"
#include "io/nest_json/parse_text.hpp"

namespace nestfast::io {

namespace {

using nest_json::at;
using nest_json::FieldReader;
using nest_json::join;

// The artifact's networkSkeleton: [[device, [chain positions]], ...] in its
// listed order, devices below maxDevices, positions inside the graph.
compat::NetworkSkeleton read_skeleton(const FieldReader& reader, const nlohmann::json& skeleton,
                                      const compat::NestProblem& problem, const compat::NestGraph& graph) {
  compat::NetworkSkeleton result;
  reader.require_array(skeleton, "networkSkeleton");
  for (std::size_t index = 0; index < skeleton.size(); ++index) {
    const std::string path = at("networkSkeleton", index);
    const auto& entry = skeleton[index];
    if (!entry.is_array() || entry.size() != 2) reader.fail(path, "expected [device, [chain positions]]");
    compat::SkeletonDevice device;
    device.device = reader.integer(entry[0], at(path, 0), 0);
    if (device.device >= problem.max_devices) {
      reader.fail(at(path, 0),
                  "device " + std::to_string(device.device) + " of maxDevices=" + std::to_string(problem.max_devices));
    }
    const std::string positions_path = at(path, 1);
    reader.require_array(entry[1], positions_path);
    for (std::size_t slot = 0; slot < entry[1].size(); ++slot) {
      const std::int64_t position = reader.integer(entry[1][slot], at(positions_path, slot), 0);
      if (static_cast<std::size_t>(position) >= graph.layers.size()) {
        reader.fail(at(positions_path, slot), "chain position " + std::to_string(position) + " of " +
                                                  std::to_string(graph.layers.size()) + " nodes");
      }
      device.positions.push_back(static_cast<std::size_t>(position));
    }
    result.push_back(std::move(device));
  }
  return result;
}

}  // namespace

NestReference parse_nest_output(std::string_view text, const std::string& source,
                                const compat::NestProblem& problem) {
  const FieldReader reader(source);
  const nlohmann::json root = nest_json::parse_text(text, source);
  reader.require_object(root, "(top level)");
  reader.only_keys(root, "",
                   {"stages", "dataParallelDegree", "tensorParallelDegree", "finalTimePerBatch", "baselineResults",
                    "networkSkeleton", "costModel", "timeUnit"});
  NestReference reference;
  reference.plan.tp = static_cast<int>(std::min<std::int64_t>(
      reader.integer(reader.member(root, "", "tensorParallelDegree"), "tensorParallelDegree", 1), INT32_MAX));
  reference.plan.dp = static_cast<int>(std::min<std::int64_t>(
      reader.integer(reader.member(root, "", "dataParallelDegree"), "dataParallelDegree", 1), INT32_MAX));
  reference.time_per_batch = reader.positive_number(reader.member(root, "", "finalTimePerBatch"), "finalTimePerBatch");
  const compat::NestGraph* graph = problem.graph_for(reference.plan.tp);
  if (graph == nullptr) reader.fail("tensorParallelDegree", "the input has no graph for this width");
  std::map<std::int64_t, std::size_t> position;
  for (std::size_t index = 0; index < graph->layers.size(); ++index) position[graph->layers[index].id] = index;

  const auto& stages = reader.member(root, "", "stages");
  reader.require_array(stages, "stages");
  if (stages.empty()) reader.fail("stages", "no stage");
  for (std::size_t index = 0; index < stages.size(); ++index) {
    const std::string path = at("stages", index);
    reader.require_object(stages[index], path);
    reader.only_keys(stages[index], path, {"devicesForStage", "nodes"});
    compat::NestStage stage;
    stage.devices = static_cast<int>(std::min<std::int64_t>(
        reader.integer(reader.member(stages[index], path, "devicesForStage"), join(path, "devicesForStage"), 1),
        INT32_MAX));
    const auto& ids = reader.member(stages[index], path, "nodes");
    const std::string ids_path = join(path, "nodes");
    reader.require_array(ids, ids_path);
    if (ids.empty()) reader.fail(ids_path, "an empty stage");
    for (std::size_t slot = 0; slot < ids.size(); ++slot) {
      const std::int64_t id = reader.integer(ids[slot], at(ids_path, slot), INT64_MIN);
      const auto found = position.find(id);
      if (found == position.end()) reader.fail(at(ids_path, slot), "no node with id " + std::to_string(id));
      if (slot == 0) {
        stage.first = found->second;
      } else if (found->second != stage.first + slot) {
        reader.fail(at(ids_path, slot), "the stage's nodes are not a contiguous run of the layer chain");
      }
    }
    stage.end = stage.first + ids.size();
    reference.plan.stages.push_back(stage);
  }
  if (root.contains("networkSkeleton")) reference.skeleton = read_skeleton(reader, root["networkSkeleton"], problem, *graph);
  const auto& baselines = reader.member(root, "", "baselineResults");
  reader.require_object(baselines, "baselineResults");
  for (const auto& [name, value] : baselines.items()) {
    compat::BaselineResult result{name, std::nullopt};
    if (!value.is_null()) result.time_per_batch = reader.positive_number(value, join("baselineResults", name));
    reference.baselines.push_back(result);
  }
  return reference;
}

NestReference load_nest_output(const std::string& path, const compat::NestProblem& problem) {
  return parse_nest_output(nest_json::read_text_file(path), path, problem);
}

nlohmann::json to_artifact_json(const compat::NestAnswer& answer, const compat::NestProblem& problem) {
  const compat::NestGraph* graph = problem.graph_for(answer.plan.tp);
  if (graph == nullptr) throw std::logic_error("answer for a width the problem has no graph for");
  nlohmann::json stages = nlohmann::json::array();
  nlohmann::json skeleton = nlohmann::json::array();
  std::size_t devices = 0;
  for (const auto& stage : answer.plan.stages) devices += static_cast<std::size_t>(stage.devices);
  for (const auto& stage : answer.plan.stages) {
    nlohmann::json ids = nlohmann::json::array();
    nlohmann::json positions = nlohmann::json::array();
    for (std::size_t position = stage.first; position < stage.end; ++position) {
      ids.push_back(graph->layers[position].id);
      positions.push_back(position);
    }
    stages.push_back({{"devicesForStage", stage.devices}, {"nodes", ids}});
    // The artifact's skeleton: one entry per device, numbered from the
    // pipeline's end, with the chain positions that device runs.
    for (int device = 0; device < stage.devices; ++device) skeleton.push_back(nlohmann::json::array({--devices, positions}));
  }
  nlohmann::json baselines = nlohmann::json::object();
  for (const auto& result : answer.baselines) {
    baselines[result.name] = result.time_per_batch ? nlohmann::json(*result.time_per_batch) : nlohmann::json(nullptr);
  }
  nlohmann::json json = {{"stages", stages},
                         {"dataParallelDegree", answer.plan.dp},
                         {"tensorParallelDegree", answer.plan.tp},
                         {"finalTimePerBatch", answer.time_per_batch},
                         {"baselineResults", baselines},
                         {"networkSkeleton", skeleton}};
  if (answer.model == compat::CostModelKind::Corrected) {
    json["costModel"] = "corrected";
    json["timeUnit"] = "s";
  }
  return json;
}

}  // namespace nestfast::io
