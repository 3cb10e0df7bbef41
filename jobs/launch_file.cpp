#include "jobs/launch_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "io/atomic_file/atomic_file.hpp"
#include "solver/search/megatron_rules.hpp"

namespace nestfast::jobs {
namespace {

std::string environment_exports(const std::string& environment) {
  // environment_line() gives "NAME=VALUE" words and "unset NAME;" clauses.
  std::string out;
  std::string word;
  for (std::size_t i = 0; i <= environment.size(); ++i) {
    const char c = i < environment.size() ? environment[i] : ' ';
    if (c != ' ') {
      word += c;
      continue;
    }
    if (word.empty()) continue;
    if (word == "unset") out += "unset ";
    else if (word.back() == ';') out += word.substr(0, word.size() - 1) + "\n";
    else out += "export " + word + "\n";
    word.clear();
  }
  return out;
}

}  // namespace

std::string launch_script(const LaunchRequest& r) {
  if (r.gpus_per_node < 1 || r.gpus % r.gpus_per_node != 0)
    throw std::invalid_argument(fmt::format("--launch: {} GPUs do not fill nodes of {} GPUs", r.gpus, r.gpus_per_node));
  const int nodes = r.gpus / r.gpus_per_node;
  std::string s;
  s += "#!/bin/bash\n";
  s += fmt::format("# Megatron-LM pretrain_gpt.py running the nestfast plan {} (framework {}).\n", r.job_name,
                   r.launch.framework);
  s += "# The plan, priced: plan.json beside this file. Submit with the site's account and partition:\n";
  s += "#   sbatch -A ACCOUNT -p PARTITION launch.sbatch\n";
  s += fmt::format("#SBATCH --job-name={}\n", r.job_name);
  s += fmt::format("#SBATCH --nodes={}\n", nodes);
  s += fmt::format("#SBATCH --ntasks-per-node={}\n", r.gpus_per_node);
  s += "#SBATCH --gpus-per-task=1\n";
  s += "#SBATCH --exclusive\n";
  s += "#SBATCH --time=01:00:00\n";
  s += "set -euo pipefail\n\n";
  s += "# Site variables (override them in the environment of sbatch).\n";
  s += "MEGATRON_LM=${MEGATRON_LM:-$HOME/Megatron-LM}  # a Megatron-LM checkout; the rules were read at " +
       std::string(search::kMegatronCommit.substr(0, 12)) + "\n";
  s += "PYTHON=${PYTHON:-python3}                     # the interpreter with torch and TransformerEngine\n";
  s += "MODULES=${MODULES:-}                          # e.g. \"cuda nccl\": loaded with module load when set\n";
  s += "CPUS_PER_TASK=${CPUS_PER_TASK:-8}\n";
  s += fmt::format(
      "DATA_ARGS=${{DATA_ARGS:---mock-data --tokenizer-type NullTokenizer --vocab-size {}}}  # or --data-path ... "
      "--tokenizer-type ... --tokenizer-model ...\n",
      r.vocab);
  s += "TRAIN_ARGS=${TRAIN_ARGS:---train-iters 20 --lr 1.0e-4 --min-lr 1.0e-5 --lr-decay-style cosine "
       "--log-interval 1 --eval-iters 0}\n";
  s += "CHECKPOINT_ARGS=${CHECKPOINT_ARGS:-}         # e.g. --save DIR --load DIR --save-interval N\n";
  s += "if [ -n \"$MODULES\" ]; then module load $MODULES; fi\n\n";
  s += "# What the plan needs.\n";
  s += environment_exports(r.launch.environment);
  s += "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
  s += "export MASTER_PORT=${MASTER_PORT:-29500}\n";
  s += "PLAN_ARGS=(" + r.launch.arguments + ")\n\n";
  s += "# One task per GPU; each task sees its own GPU only, hence LOCAL_RANK=0.\n";
  s += fmt::format(
      "srun --nodes={} --ntasks-per-node={} --gpus-per-task=1 --cpus-per-task=\"$CPUS_PER_TASK\" --gpu-bind=closest \\\n",
      nodes, r.gpus_per_node);
  s += "  bash -c 'export RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=0; exec \"$0\" \"$@\"' \\\n";
  s += "  \"$PYTHON\" \"$MEGATRON_LM/pretrain_gpt.py\" \"${PLAN_ARGS[@]}\" $DATA_ARGS $TRAIN_ARGS $CHECKPOINT_ARGS\n";
  return s;
}

void write_launch_files(const LaunchRequest& request) {
  if (request.launch.framework != "megatron-core")
    throw std::invalid_argument("--launch: the plan was searched with --framework " + request.launch.framework +
                                ", which Megatron-LM cannot run as priced; search with --framework megatron-core");
  const std::string script = launch_script(request);
  std::error_code error;
  std::filesystem::create_directories(request.directory, error);
  if (error) throw std::invalid_argument("--launch: cannot create " + request.directory + ": " + error.message());
  const std::filesystem::path directory(request.directory);
  io::write_file_atomically((directory / "launch.sbatch").string(), script);
  io::write_file_atomically((directory / "plan.json").string(), request.plan.dump(2) + "\n");
}

}  // namespace nestfast::jobs
