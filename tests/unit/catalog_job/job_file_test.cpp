// Job files: the io.md schema is read as written, and every kind of bad input
// is a one-line std::invalid_argument naming the file, the line and the key.
#include <gtest/gtest.h>

#include <string>

#include "io/job/job_file.hpp"

namespace nestfast::io {
namespace {

const char* kGoodJob = R"(# a comment
[job]
name = "llama-scaling"
out  = "catalog.h5"

[[sweep]]
model   = ["llama3-70b", "mixtral-8x7b"]
cluster = ["h100-superpod", "h200-superpod"]
gpus = [64, 128, 256]
global_batch = [1024]
seq_len = [4096]

[[sweep]]
model = "llama2-7b"
cluster = "selene-a100"
gpus = 8
global_batch = [256, 512]

[search]
tp = [1, 2, 4, 8]
zero = [0, 1, 2, 3]
recompute = ["none", "selective", "full"]
top_k = 5
baselines = ["manual", "phaze", "mcmc"]

[validate]
enabled = true
sizes = "1M:64M"
algos = ["fast", "mpi", "pairwise"]
skew = "zipf:0.8"
)";

// The message of the error `text` raises, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse_job(text, "job.toml");
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    return message;
  }
  return "";
}

const char* kMinimalSweep = "[[sweep]]\nmodel = \"m\"\ncluster = \"c\"\ngpus = 8\nglobal_batch = 16\n";

TEST(JobFile, ReadsTheDocumentedSchema) {
  const JobSpec job = parse_job(kGoodJob, "job.toml");
  EXPECT_EQ(job.name, "llama-scaling");
  EXPECT_EQ(job.out, "catalog.h5");
  ASSERT_EQ(job.sweeps.size(), 2u);
  EXPECT_EQ(job.sweeps[0].gpus, (std::vector<int>{64, 128, 256}));
  EXPECT_EQ(job.sweeps[0].gpus_line, 9);
  EXPECT_EQ(job.sweeps[1].models, (std::vector<std::string>{"llama2-7b"}));
  EXPECT_EQ(job.search.tp, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(job.search.top_k, 5);
  EXPECT_EQ(job.validate.sizes, "1M:64M");
  EXPECT_EQ(job.validate.skew, "zipf:0.8");
  EXPECT_EQ(job.text, kGoodJob);

  const std::vector<SweepPoint> points = expand_sweep(job);
  ASSERT_EQ(points.size(), 2u * 2u * 3u + 2u);
  EXPECT_EQ(points[0].model, "llama3-70b");
  EXPECT_EQ(points[0].cluster, "h100-superpod");
  EXPECT_EQ(points[0].gpus, 64);
  EXPECT_EQ(points[1].gpus, 128);
  EXPECT_EQ(points[3].cluster, "h200-superpod");
  EXPECT_EQ(points[12].model, "llama2-7b");
  EXPECT_EQ(points[12].seq_len, 0);  // the model's own
  EXPECT_EQ(points[13].global_batch, 512);
  EXPECT_EQ(points[13].id, 13u);
  EXPECT_EQ(points[13].sweep_index, 1);
}

TEST(JobFile, FingerprintFollowsTheText) {
  const JobSpec a = parse_job(kGoodJob, "a.toml");
  const JobSpec b = parse_job(std::string(kGoodJob) + "# edited\n", "a.toml");
  EXPECT_EQ(job_fingerprint(a), job_fingerprint(parse_job(kGoodJob, "b.toml")));
  EXPECT_NE(job_fingerprint(a), job_fingerprint(b));
}

TEST(JobFile, SyntaxErrorsNameTheLine) {
  EXPECT_EQ(error_of("[job\nname = 1\n").rfind("job.toml:1: TOML syntax", 0), 0u);
  EXPECT_NE(error_of(std::string(kMinimalSweep) + "gpus = [8\n").find("job.toml:"), std::string::npos);
}

TEST(JobFile, UnknownKeysAreErrorsWithTheirLine) {
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[search]\ntensor_parallel = [2]\n"),
            "job.toml:7: search.tensor_parallel: unknown key (allowed: tp, pp, ep, cp, sp, mbs, zero, vpp, recompute, "
            "recompute_layers, recompute_modules, framework, allow_fsdp_pp, attention, overlap, grad_reduce, a2a, top_k, baselines)");
  EXPECT_NE(error_of(std::string(kMinimalSweep) + "[bogus]\n").find("job.toml:6: bogus: unknown key"), std::string::npos);
  EXPECT_NE(error_of(std::string("[[sweep]]\nmodels = \"m\"\n")).find("job.toml:2: sweep[0].models: unknown key"),
            std::string::npos);
}

TEST(JobFile, GradReduceIsTheSearchsGradientDtype) {
  EXPECT_EQ(parse_job(std::string(kMinimalSweep), "job.toml").search.grad_reduce, GradReduce::Fp32);
  EXPECT_EQ(parse_job(std::string(kMinimalSweep) + "[search]\ngrad_reduce = \"bf16\"\n", "job.toml").search.grad_reduce,
            GradReduce::Bf16);
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[search]\ngrad_reduce = \"fp16\"\n"),
            "job.toml:7: search.grad_reduce: 'fp16' is not one of fp32, bf16");
}

// The all-to-all every plan runs: auto (each framework's own) by default;
// FAST only for Nest plans (Megatron-LM has no FAST dispatcher).
TEST(JobFile, AllToAllIsTheSearchsDispatcher) {
  EXPECT_EQ(parse_job(std::string(kMinimalSweep), "job.toml").search.a2a, "auto");
  EXPECT_EQ(parse_job(std::string(kMinimalSweep) + "[search]\na2a = \"deepep\"\n", "job.toml").search.a2a, "deepep");
  EXPECT_EQ(parse_job(std::string(kMinimalSweep) + "[search]\nframework = \"nest\"\na2a = \"fast\"\n", "job.toml").search.a2a,
            "fast");
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[search]\na2a = \"nccl\"\n"),
            "job.toml:7: search.a2a: 'nccl' is not one of auto, fast, fanout, deepep");
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[search]\na2a = \"fast\"\n"),
            "job.toml:7: search.a2a: fast is nestfast's own all-to-all, which Megatron-LM does not run; for megatron-core "
            "plans use fanout (its alltoall dispatcher) or deepep (its flex dispatcher), or plan for framework nest");
}

// The module sets selective recompute may checkpoint: each a comma list of
// Megatron's names; the search's default sets when absent.
TEST(JobFile, RecomputeModulesAreModuleSets) {
  EXPECT_TRUE(parse_job(std::string(kMinimalSweep), "job.toml").search.recompute_modules.empty());
  EXPECT_EQ(parse_job(std::string(kMinimalSweep) + "[search]\nrecompute_modules = [\"core_attn\", \"core_attn,moe_act\"]\n",
                      "job.toml")
                .search.recompute_modules,
            (std::vector<std::string>{"core_attn", "core_attn,moe_act"}));
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[search]\nrecompute_modules = [\"core_attn,norm\"]\n"),
            "job.toml:7: search.recompute_modules[0]: 'norm' is not one of core_attn, layernorm, moe_act, mla_up_proj, "
            "mlp, moe, shared_experts");
}

TEST(JobFile, WrongTypesAndImpossibleValues) {
  EXPECT_EQ(error_of("[[sweep]]\nmodel = \"m\"\ncluster = \"c\"\ngpus = [8, \"16\"]\nglobal_batch = 16\n"),
            "job.toml:4: sweep[0].gpus[1]: expected an integer, got a string");
  EXPECT_EQ(error_of("[[sweep]]\nmodel = \"m\"\ncluster = \"c\"\ngpus = nan\nglobal_batch = 16\n"),
            "job.toml:4: sweep[0].gpus: expected an integer, got NaN");
  EXPECT_EQ(error_of("[[sweep]]\nmodel = \"m\"\ncluster = \"c\"\ngpus = [-8]\nglobal_batch = 16\n"),
            "job.toml:4: sweep[0].gpus[0]: -8 is out of range [1, 16777216]");
  EXPECT_EQ(error_of("[[sweep]]\nmodel = \"m\"\ncluster = \"c\"\ngpus = 8\nglobal_batch = 0\n"),
            "job.toml:5: sweep[0].global_batch: 0 is out of range [1, 16777216]");
  EXPECT_EQ(error_of("[[sweep]]\nmodel = \"m\"\ncluster = \"c\"\ngpus = [8, 8]\nglobal_batch = 16\n"),
            "job.toml:4: sweep[0].gpus: lists a value twice");
  EXPECT_EQ(error_of("[[sweep]]\nmodel = \"m\"\ncluster = \"c\"\ngpus = []\nglobal_batch = 16\n"),
            "job.toml:4: sweep[0].gpus: must not be an empty list (leave the key out for \"all\")");
  EXPECT_EQ(error_of("[[sweep]]\nmodel = \"m\"\ncluster = \"c\"\ngpus = 8\n"),
            "job.toml:1: sweep[0].global_batch: is required in every [[sweep]]");
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[search]\nzero = [4]\n"),
            "job.toml:7: search.zero[0]: 4 is out of range [0, 3]");
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[search]\nrecompute = [\"some\"]\n"),
            "job.toml:7: search.recompute[0]: 'some' is not one of none, selective, full");
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[validate]\nsizes = \"64M:1M\"\n"),
            "job.toml:7: validate.sizes: \"64M:1M\": MIN is above MAX");
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[validate]\nsizes = \"-1M\"\n"),
            "job.toml:7: validate.sizes: \"-1M\": a size cannot be negative");
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[validate]\nalgos = [\"fast\", \"nccl\"]\n"),
            "job.toml:7: validate.algos[1]: 'nccl' is not one of fast, mpi, pairwise, fanout, auto");
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[validate]\nskew = \"zipf:nan\"\n"),
            "job.toml:7: validate.skew: \"zipf:nan\" is not \"uniform\" or \"zipf:S\" with a finite S >= 0");
  EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[validate]\nenabled = 1\n"),
            "job.toml:7: validate.enabled: expected true or false, got an integer");
  EXPECT_EQ(error_of("[job]\nname = \"x\"\n"), "job.toml:1: sweep: the job has no [[sweep]] block");
  EXPECT_EQ(error_of(std::string(kMinimalSweep)), "");
}

// validate.sizes is read by the command line's size parser (comm/exec/size_range.hpp):
// every spelling --sizes takes is taken here too.
TEST(JobFile, SizesAreSpelledAsOnTheCommandLine) {
  for (const char* sizes : {"1M:64M", "1m:64m", "1MB:64MB", "1MiB:64MiB", "1048576:64M", "64K"}) {
    EXPECT_EQ(error_of(std::string(kMinimalSweep) + "[validate]\nsizes = \"" + sizes + "\"\n"), "") << sizes;
  }
  for (const char* sizes : {"", "0:4K", "1M:", "1.5M", "1X", "99999999999999999999"}) {
    EXPECT_NE(error_of(std::string(kMinimalSweep) + "[validate]\nsizes = \"" + sizes + "\"\n").find("job.toml:7: validate.sizes"),
              std::string::npos)
        << sizes;
  }
}

TEST(JobFile, UnreadableFileNamesThePath) {
  try {
    load_job_file("/nonexistent/job.toml");
    FAIL() << "no error";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "/nonexistent/job.toml: cannot read the job file: No such file or directory");
  }
}

}  // namespace
}  // namespace nestfast::io
