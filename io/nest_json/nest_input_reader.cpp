// The artifact's DP input -> compat::NestProblem, strictly validated.
#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "io/nest_json/json_fields.hpp"
#include "io/nest_json/nest_json.hpp"
#include "io/nest_json/parse_text.hpp"
#include "solver/compat/baseline_blocks.hpp"

namespace nestfast::io {

namespace {

using compat::NestBaseline;
using compat::NestEdge;
using compat::NestGraph;
using compat::NestLayer;
using compat::NestProblem;
using nest_json::at;
using nest_json::FieldReader;
using nest_json::join;

// Limits that keep every sum of byte counts inside 64 bits and the per-stage
// tables ((nodes+1)^2 entries) small.
constexpr std::size_t kMaxNodes = 1024;
constexpr std::size_t kMaxEdges = 32 * kMaxNodes;
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 44;

std::uint64_t byte_count(const FieldReader& reader, const nlohmann::json& value, const std::string& path) {
  const std::int64_t bytes = reader.integer(value, path, 0);
  if (bytes > kMaxBytes) reader.fail(path, "more than 2^44 bytes");
  return static_cast<std::uint64_t>(bytes);
}

int tp_width(const FieldReader& reader, const std::string& path, const std::string& key) {
  std::size_t used = 0;
  int width = 0;
  try {
    width = std::stoi(key, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != key.size() || width < 1 || key.front() == '+' || key.front() == '0') {
    reader.fail(join(path, key), "expected a tensor-parallel width (a positive integer) as the key");
  }
  return width;
}

std::vector<NestLayer> read_layers(const FieldReader& reader, const nlohmann::json& list, const std::string& path) {
  reader.require_array(list, path);
  if (list.empty()) reader.fail(path, "no nodes");
  std::vector<NestLayer> layers;
  for (std::size_t index = 0; index < list.size(); ++index) {
    const auto& node = list[index];
    const std::string node_path = at(path, index);
    reader.require_object(node, node_path);
    reader.only_keys(node, node_path,
                     {"id", "activationSize", "parameterSize", "isTensorParallelized", "optimalLatencyFw",
                      "optimalLatencyBw", "energy"});
    NestLayer layer;
    layer.id = reader.integer(reader.member(node, node_path, "id"), join(node_path, "id"), INT64_MIN);
    layer.activation_bytes =
        byte_count(reader, reader.member(node, node_path, "activationSize"), join(node_path, "activationSize"));
    layer.parameter_bytes =
        byte_count(reader, reader.member(node, node_path, "parameterSize"), join(node_path, "parameterSize"));
    layer.fw_ms = reader.non_negative_number(reader.member(node, node_path, "optimalLatencyFw"),
                                             join(node_path, "optimalLatencyFw"));
    layer.bw_ms = reader.non_negative_number(reader.member(node, node_path, "optimalLatencyBw"),
                                             join(node_path, "optimalLatencyBw"));
    if (node.contains("isTensorParallelized")) {
      reader.boolean(node["isTensorParallelized"], join(node_path, "isTensorParallelized"));
    }
    if (node.contains("energy")) reader.finite_number(node["energy"], join(node_path, "energy"));
    layers.push_back(layer);
  }
  return layers;
}

// Orders the layers topologically and requires the order to be unique: one
// chain through every layer (skip edges forward are fine, branches are not).
NestGraph build_graph(const FieldReader& reader, int tp, std::vector<NestLayer> layers, const nlohmann::json& list,
                      const std::string& nodes_path, const std::string& path) {
  std::map<std::int64_t, std::size_t> index_of;
  for (std::size_t index = 0; index < layers.size(); ++index) {
    if (!index_of.emplace(layers[index].id, index).second) {
      reader.fail(join(at(nodes_path, index), "id"), "duplicate node id " + std::to_string(layers[index].id));
    }
  }
  reader.require_array(list, path);
  if (list.size() > kMaxEdges) reader.fail(path, "more than " + std::to_string(kMaxEdges) + " edges");
  struct RawEdge {
    std::size_t source;
    std::size_t dest;
    std::uint64_t bytes;
  };
  std::vector<RawEdge> raw;
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> edge_index;  // (source, dest) -> its first edge
  for (std::size_t index = 0; index < list.size(); ++index) {
    const auto& edge = list[index];
    const std::string edge_path = at(path, index);
    reader.require_object(edge, edge_path);
    reader.only_keys(edge, edge_path, {"sourceId", "destId", "communicationCost"});
    const auto endpoint = [&](const char* key) {
      const std::int64_t id = reader.integer(reader.member(edge, edge_path, key), join(edge_path, key), INT64_MIN);
      const auto found = index_of.find(id);
      if (found == index_of.end()) reader.fail(join(edge_path, key), "no node with id " + std::to_string(id));
      return found->second;
    };
    const std::size_t source = endpoint("sourceId");
    const std::size_t dest = endpoint("destId");
    if (source == dest) reader.fail(edge_path, "an edge from a node to itself");
    // A repeated edge would count its bytes twice (5,000 copies changed the MCMC baseline to null).
    if (const auto [first, inserted] = edge_index.emplace(std::pair{source, dest}, index); !inserted) {
      reader.fail(edge_path, "duplicate edge " + std::to_string(layers[source].id) + " -> " +
                                 std::to_string(layers[dest].id) + " (also " + at(path, first->second) + ")");
    }
    const std::uint64_t bytes =
        byte_count(reader, reader.member(edge, edge_path, "communicationCost"), join(edge_path, "communicationCost"));
    raw.push_back(RawEdge{source, dest, bytes});
  }
  const std::size_t count = layers.size();
  std::vector<std::size_t> in_degree(count, 0);
  std::vector<std::vector<std::size_t>> successors(count);
  for (const auto& edge : raw) {
    ++in_degree[edge.dest];
    successors[edge.source].push_back(edge.dest);
  }
  std::vector<std::size_t> ready;
  for (std::size_t index = 0; index < count; ++index) {
    if (in_degree[index] == 0) ready.push_back(index);
  }
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    if (ready.size() > 1) {
      reader.fail(path, "the layer graph branches: nodes " + std::to_string(layers[ready[0]].id) + " and " +
                            std::to_string(layers[ready[1]].id) +
                            " have no path between them (the DP needs one chain through all layers)");
    }
    const std::size_t next = ready.back();
    ready.pop_back();
    order.push_back(next);
    for (std::size_t successor : successors[next]) {
      if (--in_degree[successor] == 0) ready.push_back(successor);
    }
  }
  if (order.size() != count) reader.fail(path, "the layer graph has a cycle");
  std::vector<std::size_t> position(count);
  for (std::size_t index = 0; index < count; ++index) position[order[index]] = index;
  NestGraph graph;
  graph.tp = tp;
  for (std::size_t index : order) graph.layers.push_back(layers[index]);
  for (const auto& edge : raw) graph.edges.push_back(NestEdge{position[edge.source], position[edge.dest], edge.bytes});
  return graph;
}

std::vector<double> number_list(const FieldReader& reader, const nlohmann::json& list, const std::string& path,
                                bool positive) {
  reader.require_array(list, path);
  if (list.empty()) reader.fail(path, "empty list");
  std::vector<double> numbers;
  for (std::size_t index = 0; index < list.size(); ++index) {
    numbers.push_back(positive ? reader.positive_number(list[index], at(path, index))
                               : reader.non_negative_number(list[index], at(path, index)));
  }
  return numbers;
}

NestBaseline read_baseline(const FieldReader& reader, const std::string& name, const nlohmann::json& object,
                           const std::string& path, const NestProblem& problem) {
  reader.require_object(object, path);
  reader.only_keys(object, path, {"p", "d", "t", "num_transformer_layers", "layer_partition"});
  NestBaseline baseline;
  baseline.name = name;
  const auto positive_int = [&](const char* key) {
    const std::int64_t value = reader.integer(reader.member(object, path, key), join(path, key), 1);
    if (value > 1'000'000) reader.fail(join(path, key), "too large: " + std::to_string(value));
    return static_cast<int>(value);
  };
  baseline.p = positive_int("p");
  baseline.d = positive_int("d");
  baseline.t = positive_int("t");
  baseline.num_transformer_layers = positive_int("num_transformer_layers");
  if (problem.graph_for(baseline.t) == nullptr) {
    reader.fail(join(path, "t"), "no graph for t=" + std::to_string(baseline.t) + " in nodes");
  }
  if (object.contains("layer_partition")) {
    const std::string list_path = join(path, "layer_partition");
    const auto& list = object["layer_partition"];
    reader.require_array(list, list_path);
    if (list.size() != static_cast<std::size_t>(baseline.p)) {
      reader.fail(list_path, std::to_string(list.size()) + " entries for p=" + std::to_string(baseline.p) + " stages");
    }
    long long total = 0;
    for (std::size_t index = 0; index < list.size(); ++index) {
      const std::int64_t layers = reader.integer(list[index], at(list_path, index), 0);
      if (layers == 0) reader.fail(at(list_path, index), "an empty stage");
      if (layers > 1'000'000) reader.fail(at(list_path, index), "too large: " + std::to_string(layers));
      baseline.layer_partition.push_back(static_cast<int>(layers));
      total += layers;
    }
    if (total != baseline.num_transformer_layers) {
      reader.fail(list_path, "sums to " + std::to_string(total) + ", num_transformer_layers is " +
                                 std::to_string(baseline.num_transformer_layers));
    }
  }
  // Both cuts must give every stage a layer; the solver's message names the baseline.
  const std::size_t chain = problem.graph_for(baseline.t)->layers.size();
  try {
    compat::artifact_baseline_stages(baseline, chain, 1);
    compat::honest_baseline_stages(baseline, chain, 1);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(reader.source() + ": " + error.what());
  }
  return baseline;
}

}  // namespace

compat::NestProblem parse_nest_input(std::string_view text, const std::string& source) {
  const FieldReader reader(source);
  const nlohmann::json root = nest_json::parse_text(text, source);
  reader.require_object(root, "(top level)");
  reader.only_keys(root, "",
                   {"nodes", "edges", "bws", "latency_per_level", "devices_per_level", "maxDevices",
                    "maxMemoryPerDevice", "mbsInBatch", "activationRecomputation", "optimizerAlgorithm", "ep_degree",
                    "cp_degree", "sp_enabled", "bandwidth", "frequency", "baselines"});
  NestProblem problem;
  // Scalars first, so that the lists can be checked against them.
  problem.max_devices = static_cast<int>(std::min<std::int64_t>(
      reader.integer(reader.member(root, "", "maxDevices"), "maxDevices", 1), INT32_MAX));
  problem.memory_per_device = static_cast<std::uint64_t>(
      reader.integer(reader.member(root, "", "maxMemoryPerDevice"), "maxMemoryPerDevice", 1));
  problem.mbs_in_batch = reader.finite_number(reader.member(root, "", "mbsInBatch"), "mbsInBatch");
  if (problem.mbs_in_batch < 1.0) reader.fail("mbsInBatch", "must be >= 1");
  problem.recompute = reader.boolean(reader.member(root, "", "activationRecomputation"), "activationRecomputation");
  const std::string optimizer = reader.string(reader.member(root, "", "optimizerAlgorithm"), "optimizerAlgorithm");
  if (optimizer == "SGD" || optimizer == "sgd") {
    problem.optimizer = compat::NestOptimizer::Sgd;
  } else if (optimizer == "Adam" || optimizer == "adam" || optimizer == "ADAM") {
    problem.optimizer = compat::NestOptimizer::Adam;
  } else {
    reader.fail("optimizerAlgorithm", "expected \"SGD\" or \"Adam\", got \"" + optimizer + "\"");
  }
  const auto degree = [&](const char* key) {
    const std::int64_t value = reader.integer(reader.member(root, "", key), key, 1);
    if (value > 1'000'000) reader.fail(key, "too large: " + std::to_string(value));
    return static_cast<int>(value);
  };
  problem.ep_degree = degree("ep_degree");
  problem.cp_degree = degree("cp_degree");
  if (root.contains("sp_enabled")) reader.boolean(root["sp_enabled"], "sp_enabled");
  if (root.contains("bandwidth")) reader.positive_number(root["bandwidth"], "bandwidth");
  if (root.contains("frequency")) reader.positive_number(root["frequency"], "frequency");

  problem.network.bandwidth_Bps = number_list(reader, reader.member(root, "", "bws"), "bws", true);
  problem.network.latency_s =
      number_list(reader, reader.member(root, "", "latency_per_level"), "latency_per_level", false);
  const auto& devices = reader.member(root, "", "devices_per_level");
  reader.require_array(devices, "devices_per_level");
  if (devices.empty()) reader.fail("devices_per_level", "empty list");
  long double product = 1;
  for (std::size_t index = 0; index < devices.size(); ++index) {
    const std::int64_t count = reader.integer(devices[index], at("devices_per_level", index), 1);
    product *= static_cast<long double>(count);
    if (count > INT32_MAX) reader.fail(at("devices_per_level", index), "too large");
    problem.network.devices_per_level.push_back(static_cast<int>(count));
  }
  const std::size_t levels = problem.network.devices_per_level.size();
  if (problem.network.bandwidth_Bps.size() != levels) {
    reader.fail("bws", std::to_string(problem.network.bandwidth_Bps.size()) + " entries, devices_per_level has " +
                           std::to_string(levels));
  }
  if (problem.network.latency_s.size() != levels) {
    reader.fail("latency_per_level", std::to_string(problem.network.latency_s.size()) +
                                         " entries, devices_per_level has " + std::to_string(levels));
  }
  if (product != static_cast<long double>(problem.max_devices)) {
    std::string values;
    for (int count : problem.network.devices_per_level) {
      if (!values.empty()) values += 'x';
      values += std::to_string(count);
    }
    reader.fail("devices_per_level", "the product " + values + " is not maxDevices=" +
                                         std::to_string(problem.max_devices));
  }

  const auto& nodes = reader.member(root, "", "nodes");
  const auto& edges = reader.member(root, "", "edges");
  reader.require_object(nodes, "nodes");
  reader.require_object(edges, "edges");
  if (nodes.empty()) reader.fail("nodes", "no graph");
  for (const auto& [key, value] : edges.items()) {
    if (!nodes.contains(key)) reader.fail(join("edges", key), "no graph with that width in nodes");
  }
  for (const auto& [key, value] : nodes.items()) {
    const int tp = tp_width(reader, "nodes", key);
    const std::string nodes_path = join("nodes", key);
    if (!edges.contains(key)) reader.fail(join("edges", key), "missing key (nodes has this width)");
    std::vector<NestLayer> layers = read_layers(reader, value, nodes_path);
    if (layers.size() > kMaxNodes) reader.fail(nodes_path, "more than " + std::to_string(kMaxNodes) + " nodes");
    problem.graphs.push_back(build_graph(reader, tp, std::move(layers), edges[key], nodes_path, join("edges", key)));
  }
  std::sort(problem.graphs.begin(), problem.graphs.end(),
            [](const NestGraph& left, const NestGraph& right) { return left.tp < right.tp; });

  const auto& baselines = reader.member(root, "", "baselines");
  reader.require_object(baselines, "baselines");
  for (const auto& [name, value] : baselines.items()) {
    problem.baselines.push_back(read_baseline(reader, name, value, join("baselines", name), problem));
  }
  return problem;
}

compat::NestProblem load_nest_input(const std::string& path) {
  return parse_nest_input(nest_json::read_text_file(path), path);
}

}  // namespace nestfast::io
