// nestfast nest-compat IN.json [--out OUT.json] [--model compat|corrected]
//                             [--reference REF.out.json] [--timing]
// Reads a NEST artifact DP input and answers in the artifact's output format:
// --model compat prices plans with the artifact's own cost model (its quirks
// and mixed ms/s units included), --model corrected (the default) with
// nestfast's consistent model in seconds and honest baselines.
// --reference also prices the artifact's chosen plan (its out.json) under the
// same model and prints the comparison to stderr.
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "io/atomic_file/atomic_file.hpp"
#include "io/host/files.hpp"
#include "io/nest_json/nest_json.hpp"
#include "jobs/cli_context.hpp"
#include "solver/compat/nest_solver.hpp"

namespace nestfast::jobs {

namespace {

struct NestCompatOptions {
  std::string input;
  std::string output;
  std::string model = "corrected";
  std::string reference;
  bool timing = false;
};

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

std::string time_text(const std::optional<double>& time) { return time ? fmt::format("{:.17g}", *time) : "infeasible"; }

void report_reference(const NestCompatOptions& options, const compat::NestProblem& problem,
                      const compat::NestAnswer& answer, compat::CostModelKind model) {
  const io::NestReference reference = io::load_nest_output(options.reference, problem);
  // Compat prices the artifact's plan as the artifact did: at the levels of its own skeleton.
  const auto reference_time = compat::evaluate_plan(problem, reference.plan, model,
                                                    reference.skeleton.empty() ? nullptr : &reference.skeleton);
  std::cerr << fmt::format("nest-compat: reference plan (t={} d={} stages={}): {}", reference.plan.tp,
                           reference.plan.dp, reference.plan.stages.size(), time_text(reference_time));
  if (model == compat::CostModelKind::Compat && reference_time) {
    std::cerr << fmt::format(" vs artifact {:.17g} (rel {:.3g})", reference.time_per_batch,
                             *reference_time / reference.time_per_batch - 1.0);
  }
  std::cerr << fmt::format("\nnest-compat: search (t={} d={} stages={}): {:.17g}", answer.plan.tp, answer.plan.dp,
                           answer.plan.stages.size(), answer.time_per_batch);
  if (reference_time) std::cerr << fmt::format(" = {:.17g} x reference plan", answer.time_per_batch / *reference_time);
  std::cerr << '\n';
}

int run_nest_compat(const NestCompatOptions& options) {
  const auto model =
      options.model == "compat" ? compat::CostModelKind::Compat : compat::CostModelKind::Corrected;
  // Before any work: --out may replace only a regular file, and none of the inputs.
  if (!options.output.empty()) io::check_output_target(options.output, "--out", {options.input, options.reference});
  const auto start = std::chrono::steady_clock::now();
  const compat::NestProblem problem = io::load_nest_input(options.input);
  const double parse_ms = elapsed_ms(start);
  const auto solve_start = std::chrono::steady_clock::now();
  const compat::NestAnswer answer = compat::solve(problem, model);
  const double solve_ms = elapsed_ms(solve_start);
  const std::string text = io::to_artifact_json(answer, problem).dump(4) + "\n";
  if (options.output.empty()) {
    std::cout << text << std::flush;
  } else {
    io::write_file_atomically(options.output, text);
  }
  if (!options.reference.empty()) report_reference(options, problem, answer, model);
  if (options.timing) {
    std::cerr << fmt::format("nest-compat: {}: model {}: parse {:.3f} ms, search + baselines {:.3f} ms\n",
                             options.input, options.model, parse_ms, solve_ms);
  }
  return 0;
}

}  // namespace

void register_nest_compat(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("nest-compat", "Read a NEST artifact DP input and answer in its output format");
  auto options = std::make_shared<NestCompatOptions>();
  command->add_option("input", options->input, "The artifact's DP input (JSON)")->required();
  command->add_option("--out", options->output, "Write the answer here (atomically) instead of stdout");
  command->add_option("--model", options->model, "compat: the artifact's cost model with its quirks; corrected: "
                                                 "consistent units (seconds) and honest baselines")
      ->check(CLI::IsMember({"compat", "corrected"}));
  command->add_option("--reference", options->reference,
                      "The artifact's out.json for this input: price its plan too and compare (stderr)");
  command->add_flag("--timing", options->timing, "Print parse and search times to stderr");
  command->callback([&context, options] { context.exit_code = run_nest_compat(*options); });
}

}  // namespace nestfast::jobs
