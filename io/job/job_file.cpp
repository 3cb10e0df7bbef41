#include "io/job/job_file.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "comm/exec/alltoallv.hpp"
#include "comm/exec/size_range.hpp"
#include "comm/exec/validation.hpp"
#include "comm/plan/seeded_hash.hpp"
#include "io/host/files.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/solve.hpp"
#include "solver/search/strategy_space.hpp"

namespace nestfast::io {
namespace {

// Reads one job document, turning every problem into "FILE:LINE: key: what".
class JobReader {
 public:
  explicit JobReader(std::string source) : source_(std::move(source)) {}

  // "FILE:LINE: key", how every error names where it is.
  std::string at(int line, const std::string& key) const {
    std::string where = source_;
    if (line > 0) where.append(":").append(std::to_string(line));
    return where.append(": ").append(key);
  }

  [[noreturn]] void fail(int line, const std::string& key, const std::string& message) const {
    throw std::invalid_argument(at(line, key) + ": " + message);
  }

  static int line_of(const toml::node& node) { return static_cast<int>(node.source().begin.line); }

  void reject_unknown_keys(const toml::table& table, const std::string& prefix,
                           std::initializer_list<std::string_view> allowed) const {
    for (auto&& [key, node] : table) {
      if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end()) {
        std::string names;
        for (auto name : allowed) names += (names.empty() ? "" : ", ") + std::string(name);
        fail(static_cast<int>(key.source().begin.line), prefix + std::string(key.str()),
             "unknown key (allowed: " + names + ")");
      }
    }
  }

  const toml::table* table_at(const toml::table& parent, std::string_view key, const std::string& name) const {
    const toml::node* node = parent.get(key);
    if (node == nullptr) return nullptr;
    if (!node->is_table()) fail(line_of(*node), name, "must be a table ([" + std::string(key) + "])");
    return node->as_table();
  }

  std::string string_value(const toml::node& node, const std::string& key) const {
    if (!node.is_string()) fail(line_of(node), key, std::string("expected a string, got ") + type_name(node));
    std::string value = node.as_string()->get();
    if (value.empty()) fail(line_of(node), key, "must not be empty");
    return value;
  }

  long long integer_value(const toml::node& node, const std::string& key, long long min, long long max) const {
    if (!node.is_integer()) fail(line_of(node), key, std::string("expected an integer, got ") + type_name(node));
    const long long value = node.as_integer()->get();
    if (value < min || value > max) {
      fail(line_of(node), key, std::to_string(value) + " is out of range [" + std::to_string(min) + ", " +
                                   std::to_string(max) + "]");
    }
    return value;
  }

  bool bool_value(const toml::node& node, const std::string& key) const {
    if (!node.is_boolean()) fail(line_of(node), key, std::string("expected true or false, got ") + type_name(node));
    return node.as_boolean()->get();
  }

  // A list key accepts an array or a single value; `each` reads one element.
  template <typename Each>
  void for_each_element(const toml::node& node, const std::string& key, Each&& each) const {
    if (const auto* array = node.as_array()) {
      if (array->empty()) fail(line_of(node), key, "must not be an empty list (leave the key out for \"all\")");
      for (std::size_t i = 0; i < array->size(); ++i) each(*array->get(i), key + "[" + std::to_string(i) + "]");
    } else {
      each(node, key);
    }
  }

  std::vector<int> int_list(const toml::node& node, const std::string& key, long long min, long long max) const {
    std::vector<int> values;
    for_each_element(node, key, [&](const toml::node& element, const std::string& name) {
      values.push_back(static_cast<int>(integer_value(element, name, min, max)));
    });
    reject_duplicates(values, node, key);
    return values;
  }

  // `check` is the element parser the command line uses for the same values
  // (it throws std::invalid_argument naming the "FILE:LINE: key" it is given).
  std::vector<std::string> string_list(const toml::node& node, const std::string& key,
                                       const std::function<void(const std::string&, const std::string&)>& check = {}) const {
    std::vector<std::string> values;
    for_each_element(node, key, [&](const toml::node& element, const std::string& name) {
      std::string value = string_value(element, name);
      if (check) check(value, at(line_of(element), name));
      values.push_back(std::move(value));
    });
    reject_duplicates(values, node, key);
    return values;
  }

  std::vector<bool> bool_list(const toml::node& node, const std::string& key) const {
    std::vector<bool> values;
    for_each_element(node, key, [&](const toml::node& element, const std::string& name) {
      values.push_back(bool_value(element, name));
    });
    reject_duplicates(values, node, key);
    return values;
  }

 private:
  static const char* type_name(const toml::node& node) {
    switch (node.type()) {
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: {
        const double value = node.as_floating_point()->get();
        return std::isnan(value) ? "NaN" : std::isinf(value) ? "an infinite number" : "a floating-point number";
      }
      case toml::node_type::boolean: return "a boolean";
      case toml::node_type::array: return "a list";
      case toml::node_type::table: return "a table";
      default: return "a date/time";
    }
  }

  template <typename T>
  void reject_duplicates(const std::vector<T>& values, const toml::node& node, const std::string& key) const {
    for (std::size_t i = 0; i < values.size(); ++i) {
      for (std::size_t j = i + 1; j < values.size(); ++j) {
        if (values[i] == values[j]) fail(line_of(node), key, "lists a value twice");
      }
    }
  }

  std::string source_;
};


void read_job_table(const JobReader& reader, const toml::table& root, JobSpec& job) {
  const toml::table* table = reader.table_at(root, "job", "job");
  if (table == nullptr) return;
  reader.reject_unknown_keys(*table, "job.", {"name", "out"});
  if (const auto* node = table->get("name")) job.name = reader.string_value(*node, "job.name");
  if (const auto* node = table->get("out")) job.out = reader.string_value(*node, "job.out");
}

SweepSpec read_sweep(const JobReader& reader, const toml::table& table, const std::string& prefix) {
  reader.reject_unknown_keys(table, prefix + ".", {"model", "cluster", "gpus", "global_batch", "seq_len"});
  SweepSpec sweep;
  sweep.line = JobReader::line_of(table);
  auto required = [&](std::string_view key) -> const toml::node& {
    const toml::node* node = table.get(key);
    if (node == nullptr) reader.fail(sweep.line, prefix + "." + std::string(key), "is required in every [[sweep]]");
    return *node;
  };
  const toml::node& models = required("model");
  sweep.models = reader.string_list(models, prefix + ".model");
  sweep.models_line = JobReader::line_of(models);
  const toml::node& clusters = required("cluster");
  sweep.clusters = reader.string_list(clusters, prefix + ".cluster");
  sweep.clusters_line = JobReader::line_of(clusters);
  const toml::node& gpus = required("gpus");
  sweep.gpus = reader.int_list(gpus, prefix + ".gpus", 1, search::kMaxGpus);
  sweep.gpus_line = JobReader::line_of(gpus);
  const toml::node& batch = required("global_batch");
  sweep.global_batch = reader.int_list(batch, prefix + ".global_batch", 1, search::kMaxGlobalBatch);
  sweep.global_batch_line = JobReader::line_of(batch);
  if (const auto* node = table.get("seq_len")) {
    sweep.seq_len = reader.int_list(*node, prefix + ".seq_len", 1, search::kMaxSeqLen);
    sweep.seq_len_line = JobReader::line_of(*node);
  }
  return sweep;
}

void read_sweeps(const JobReader& reader, const toml::table& root, JobSpec& job) {
  const toml::node* node = root.get("sweep");
  if (node == nullptr) reader.fail(1, "sweep", "the job has no [[sweep]] block");
  const toml::array* blocks = node->as_array();
  if (blocks == nullptr || blocks->empty() || !blocks->is_array_of_tables()) {
    reader.fail(JobReader::line_of(*node), "sweep", "must be one or more [[sweep]] tables");
  }
  for (std::size_t i = 0; i < blocks->size(); ++i) {
    job.sweeps.push_back(read_sweep(reader, *blocks->get(i)->as_table(), "sweep[" + std::to_string(i) + "]"));
  }
}

void read_search(const JobReader& reader, const toml::table& root, JobSpec& job) {
  const toml::table* table = reader.table_at(root, "search", "search");
  if (table == nullptr) return;
  reader.reject_unknown_keys(*table, "search.", {"tp", "pp", "ep", "cp", "sp", "mbs", "zero", "vpp", "recompute",
                                                 "recompute_layers", "recompute_modules", "framework", "allow_fsdp_pp", "attention",
                                                 "overlap", "grad_reduce", "a2a", "top_k", "baselines"});
  SearchLimits& search = job.search;
  auto ints = [&](const char* key, std::vector<int>& out, search::ListRange range) {
    if (const auto* node = table->get(key)) {
      out = reader.int_list(*node, std::string("search.") + key, range.minimum, range.maximum);
    }
  };
  ints("tp", search.tp, search::kTpRange);
  ints("pp", search.pp, search::kPpRange);
  ints("ep", search.ep, search::kEpRange);
  ints("cp", search.cp, search::kCpRange);
  ints("mbs", search.mbs, search::kMicroBatchRange);
  ints("zero", search.zero, search::kZeroRange);
  ints("vpp", search.vpp, search::kVppRange);
  if (const auto* node = table->get("sp")) search.sp = reader.bool_list(*node, "search.sp");
  if (const auto* node = table->get("recompute")) {
    search.recompute = reader.string_list(*node, "search.recompute",
                                          [](const std::string& mode, const std::string& what) { parse_recompute(mode, what); });
  }
  ints("recompute_layers", search.recompute_layers, search::kRecomputeLayersRange);
  if (const auto* node = table->get("recompute_modules")) {
    search.recompute_modules = reader.string_list(*node, "search.recompute_modules", [](const std::string& set, const std::string& what) {
      (void)parse_recompute_modules(set, what);
    });
  }
  if (const auto* node = table->get("framework")) {
    const std::vector<std::string> one = reader.string_list(*node, "search.framework", [](const std::string& value, const std::string& name) {
      parse_framework(value, name);
    });
    if (one.size() != 1) reader.fail(JobReader::line_of(*node), "search.framework", "names one framework");
    search.framework = one.front();
  }
  if (const auto* node = table->get("allow_fsdp_pp")) search.allow_fsdp_pp = reader.bool_value(*node, "search.allow_fsdp_pp");
  if (const auto* node = table->get("attention")) {
    search.attention = parse_attention(reader.string_value(*node, "search.attention"),
                                       reader.at(JobReader::line_of(*node), "search.attention"));
  }
  if (const auto* node = table->get("overlap")) {
    // The names one by one as --overlap checks them, then "all" / "none" standing alone.
    const std::vector<std::string> names =
        reader.string_list(*node, "search.overlap", [](const std::string& name, const std::string& what) {
          parse_overlap({name}, what);
        });
    search.overlap = parse_overlap(names, reader.at(JobReader::line_of(*node), "search.overlap"));
  }
  if (const auto* node = table->get("grad_reduce")) {
    search.grad_reduce = parse_grad_reduce(reader.string_value(*node, "search.grad_reduce"),
                                           reader.at(JobReader::line_of(*node), "search.grad_reduce"));
  }
  if (const auto* node = table->get("a2a")) {
    const std::string value = reader.string_value(*node, "search.a2a");
    // Refused here, at its line, by the rule --a2a follows (framework is read above).
    search::resolve_all_to_all(value, parse_framework(search.framework, "search.framework"),
                               reader.at(JobReader::line_of(*node), "search.a2a"));
    search.a2a = value;
  }
  if (const auto* node = table->get("top_k")) search.top_k = static_cast<int>(reader.integer_value(*node, "search.top_k", 1, 64));
  if (const auto* node = table->get("baselines")) {
    if (node->is_array() && node->as_array()->empty()) {
      search.baselines.clear();  // explicitly none
    } else {
      search.baselines = reader.string_list(*node, "search.baselines", [](const std::string& name, const std::string& what) {
        for (const char* known : {"manual", "phaze", "mcmc"}) {
          if (name == known) return;
        }
        throw std::invalid_argument(what + ": '" + name + "' is not one of manual, phaze, mcmc");
      });
    }
  }
}

void read_validate(const JobReader& reader, const toml::table& root, JobSpec& job) {
  const toml::table* table = reader.table_at(root, "validate", "validate");
  if (table == nullptr) return;
  reader.reject_unknown_keys(*table, "validate.", {"enabled", "all", "sizes", "algos", "skew", "virtual_servers",
                                                   "nics_per_server", "nic_GBps", "fast_chunk", "iterations", "warmup",
                                                   "seed"});
  comm::ValidationSettings& validate = job.validate;
  if (const auto* node = table->get("enabled")) validate.enabled = reader.bool_value(*node, "validate.enabled");
  if (const auto* node = table->get("all")) validate.all_plans = reader.bool_value(*node, "validate.all");
  if (const auto* node = table->get("sizes")) {
    validate.sizes = reader.string_value(*node, "validate.sizes");
    comm::parse_size_range(validate.sizes, reader.at(JobReader::line_of(*node), "validate.sizes"));
  }
  if (const auto* node = table->get("algos")) {
    validate.algos = reader.string_list(*node, "validate.algos", [](const std::string& name, const std::string& what) {
      const std::vector<std::string>& known = comm::alltoallv_algorithm_names();
      if (std::find(known.begin(), known.end(), name) != known.end()) return;
      std::string names;
      for (const std::string& candidate : known) names += (names.empty() ? "" : ", ") + candidate;
      throw std::invalid_argument(what + ": '" + name + "' is not one of " + names);
    });
  }
  if (const auto* node = table->get("skew")) {
    validate.skew = reader.string_value(*node, "validate.skew");
    comm::skew_exponent(validate.skew, reader.at(JobReader::line_of(*node), "validate.skew"));
  }
  if (const auto* node = table->get("virtual_servers")) {
    validate.virtual_servers = static_cast<int>(reader.integer_value(*node, "validate.virtual_servers", 0, 1 << 20));
  }
  if (const auto* node = table->get("nics_per_server")) {
    validate.nics_per_server = static_cast<int>(reader.integer_value(*node, "validate.nics_per_server", 0, 1 << 20));
  }
  if (const auto* node = table->get("nic_GBps")) {
    const std::optional<double> value = node->value<double>();
    if (!value || !std::isfinite(*value) || *value <= 0) {
      reader.fail(JobReader::line_of(*node), "validate.nic_GBps", "must be a number > 0 (GB/s per NIC and direction)");
    }
    validate.nic_GBps = *value;
  }
  if (const auto* node = table->get("fast_chunk")) {
    validate.fast_chunk_bytes = comm::parse_size(reader.string_value(*node, "validate.fast_chunk"),
                                                 reader.at(JobReader::line_of(*node), "validate.fast_chunk"), true);
  }
  if (const auto* node = table->get("iterations")) {
    validate.iterations = static_cast<int>(reader.integer_value(*node, "validate.iterations", 1, 100000));
  }
  if (const auto* node = table->get("warmup")) {
    validate.warmup = static_cast<int>(reader.integer_value(*node, "validate.warmup", 0, 100000));
  }
  if (const auto* node = table->get("seed")) {
    validate.seed = static_cast<std::uint64_t>(
        reader.integer_value(*node, "validate.seed", 0, std::numeric_limits<long long>::max()));
  }
}

}  // namespace

JobSpec parse_job(std::string_view text, const std::string& source) {
  const JobReader reader(source);
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    reader.fail(static_cast<int>(error.source().begin.line), "TOML syntax", std::string(error.description()));
  }
  reader.reject_unknown_keys(root, "", {"job", "sweep", "search", "validate"});
  JobSpec job;
  job.source = source;
  job.text = std::string(text);
  read_job_table(reader, root, job);
  read_sweeps(reader, root, job);
  read_search(reader, root, job);
  read_validate(reader, root, job);
  return job;
}

JobSpec load_job_file(const std::string& path) {
  return parse_job(read_input_file(path, "job file", kMaxJobFileBytes), path);
}

std::vector<SweepPoint> expand_sweep(const JobSpec& job) {
  std::vector<SweepPoint> points;
  for (std::size_t s = 0; s < job.sweeps.size(); ++s) {
    const SweepSpec& sweep = job.sweeps[s];
    const std::vector<int> seq_lens = sweep.seq_len.empty() ? std::vector<int>{0} : sweep.seq_len;
    for (const auto& model : sweep.models)
      for (const auto& cluster : sweep.clusters)
        for (int gpus : sweep.gpus)
          for (int batch : sweep.global_batch)
            for (int seq_len : seq_lens) {
              SweepPoint point;
              point.id = points.size();
              point.sweep_index = static_cast<int>(s);
              point.model = model;
              point.cluster = cluster;
              point.gpus = gpus;
              point.global_batch = batch;
              point.seq_len = seq_len;
              points.push_back(std::move(point));
            }
  }
  return points;
}

std::uint64_t job_fingerprint(const JobSpec& job) { return comm::Fnv1a64().add_bytes(job.text).value(); }

}  // namespace nestfast::io
