// Broken preset files give one-line errors that name file:line and the key;
// unknown names list the known ones; $NESTFAST_PRESETS comes first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

#include "io/presets/decimal_scale.hpp"
#include "io/presets/presets.hpp"
#include "solver/cluster/collectives.hpp"

namespace nestfast {
namespace {

namespace fs = std::filesystem;

// A valid model; the tests replace one line of it. Line numbers matter below.
constexpr const char* kModel = R"([model]
name = "tiny"
source = "test"
layers = 4
hidden = 256
ffn_hidden = 1024
heads = 8
kv_heads = 2
vocab = 1000
seq_len = 128
mlp = "swiglu"
tied_embeddings = false
dtype_bytes = 2
)";

constexpr const char* kGpu = R"([gpu]
name = "toygpu"
source = "test"
hbm_GiB = 16
hbm_bandwidth_TBps = 1.5
peak_tflops_bf16 = 100
peak_tflops_fp8 = 0
peak_tflops_fp32 = 10
hbm_efficiency = 0.9
matmul_efficiency = [
  { gflop = 1, efficiency = 0.5 },
  { gflop = 10, efficiency = 0.8 },
]
fused_attention_efficiency = { forward = 0.6, backward = 0.5 }
kernel_overhead_us = 2
overlap_slowdown = 0.1
)";

constexpr const char* kCluster = R"([cluster]
name = "toy"
source = "test"
gpu = "toygpu"

[[cluster.level]]
name = "node"
group_size = 4
bandwidth_GBps = 100
latency_us = 2
oversubscription = 1

[[cluster.level]]
name = "spine"
group_size = 0
bandwidth_GBps = 25
latency_us = 5
oversubscription = 1
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("test bug: '" + from + "' not in the template");
  return text.replace(at, from.size(), to);
}

// The message of the std::invalid_argument `action` throws ("" when it does not).
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

class MalformedPresets : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nestfast-presets-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (const char* kind : {"models", "gpus", "clusters"}) fs::create_directories(dir_ / kind);
    write("gpus/toygpu.toml", kGpu);
    setenv("NESTFAST_PRESETS", dir_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("NESTFAST_PRESETS");
    fs::remove_all(dir_);
  }

  std::string write(const std::string& relative, const std::string& text) {
    const fs::path path = dir_ / relative;
    std::ofstream(path) << text;
    return path.string();
  }

  // Asserts a one-line error that starts with "<file>:<line>: <key>: " and contains `problem`.
  void expect_error(const std::function<void()>& action, const std::string& file, int line, const std::string& key,
                    const std::string& problem) {
    const std::string message = error_of(action);
    const std::string where = file + ":" + std::to_string(line) + ": " + key + ": ";
    EXPECT_EQ(message.rfind(where, 0), 0u) << "expected '" << where << "...', got: " << message;
    EXPECT_NE(message.find(problem), std::string::npos) << "expected '" << problem << "' in: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }

  fs::path dir_;
};

TEST_F(MalformedPresets, ValidTemplatesLoadByNameAndByPath) {
  write("models/tiny.toml", kModel);
  write("clusters/toy.toml", kCluster);
  const auto model = io::load_model("tiny");
  EXPECT_EQ(model.head_dim, 32);
  EXPECT_EQ(model.kv_heads, 2);
  const auto cluster = io::load_cluster("toy");
  EXPECT_EQ(cluster.gpu.name, "toygpu");
  EXPECT_EQ(cluster.gpu.hbm_bytes, 16ull << 30);
  EXPECT_DOUBLE_EQ(cluster.levels[0].bandwidth_Bps, 100e9);
  EXPECT_DOUBLE_EQ(cluster.levels[1].latency_s, 5e-6);
  // A path loads without the name check: the file's name may differ.
  const std::string renamed = write("elsewhere.toml", kModel);
  EXPECT_EQ(io::load_model(renamed).name, "tiny");
}

TEST_F(MalformedPresets, UnknownKeyNamesItsLine) {
  const auto file = write("models/tiny.toml", replace(kModel, "heads = 8", "hedas = 8"));
  expect_error([] { io::load_model("tiny"); }, file, 7, "model.hedas", "unknown key (expected one of: name,");
}

TEST_F(MalformedPresets, WrongTypeNamesTheExpectedType) {
  const auto file = write("models/tiny.toml", replace(kModel, "vocab = 1000", "vocab = \"1000\""));
  expect_error([] { io::load_model("tiny"); }, file, 9, "model.vocab", "expected an integer, got a string");
  const auto tied = write("models/tiny.toml", replace(kModel, "tied_embeddings = false", "tied_embeddings = 0"));
  expect_error([] { io::load_model("tiny"); }, tied, 12, "model.tied_embeddings", "expected a boolean");
}

TEST_F(MalformedPresets, MissingKeyNamesTheTableLine) {
  const auto file = write("models/tiny.toml", replace(kModel, "seq_len = 128\n", ""));
  expect_error([] { io::load_model("tiny"); }, file, 1, "model.seq_len", "missing required key in [model]");
  const auto no_table = write("models/tiny.toml", "# nothing\n");
  expect_error([] { io::load_model("tiny"); }, no_table, 1, "model", "missing required key");
}

TEST_F(MalformedPresets, ImpossibleValuesAreRejected) {
  auto file = write("models/tiny.toml", replace(kModel, "layers = 4", "layers = 0"));
  expect_error([] { io::load_model("tiny"); }, file, 4, "model.layers", "must be at least 1, got 0");
  file = write("models/tiny.toml", replace(kModel, "kv_heads = 2", "kv_heads = 3"));
  expect_error([] { io::load_model("tiny"); }, file, 8, "model.kv_heads", "does not divide the 8 heads");
  file = write("models/tiny.toml", replace(kModel, "mlp = \"swiglu\"", "mlp = \"relu\""));
  expect_error([] { io::load_model("tiny"); }, file, 11, "model.mlp", "must be \"gelu\" or \"swiglu\"");
  file = write("models/tiny.toml", std::string(kModel) + "[model.moe]\nexperts = 4\ntop_k = 8\nexpert_ffn_hidden = 64\n");
  expect_error([] { io::load_model("tiny"); }, file, 16, "model.moe.top_k", "more than the 4 experts");
}

TEST_F(MalformedPresets, LatentAttentionAndTheRouterAreChecked) {
  const std::string mla =
      "[model.mla]\nq_lora_rank = 64\nkv_lora_rank = 32\nqk_nope_head_dim = 16\nqk_rope_head_dim = 8\nv_head_dim = 16\n";
  auto file = write("models/tiny.toml", std::string(kModel) + mla);
  expect_error([] { io::load_model("tiny"); }, file, 8, "model.kv_heads", "multi-head latent attention has no query groups");
  write("models/tiny.toml", replace(kModel, "kv_heads = 2", "kv_heads = 8") + mla);
  const ModelSpec latent = io::load_model("tiny");
  EXPECT_EQ(latent.attention, AttentionKind::MultiLatent);
  EXPECT_EQ(latent.mla.qk_rope_head_dim, 8);
  EXPECT_EQ(latent.head_dim, 16);  // the value head
  file = write("models/tiny.toml", replace(kModel, "kv_heads = 2", "kv_heads = 8") + replace(mla, "v_head_dim = 16", "v_head_dim = 0"));
  expect_error([] { io::load_model("tiny"); }, file, 19, "model.mla.v_head_dim", "must be at least 1, got 0");

  const std::string moe = std::string(kModel) + "[model.moe]\nexperts = 8\ntop_k = 2\nexpert_ffn_hidden = 64\n";
  file = write("models/tiny.toml", moe + "router_expert_bias = true\n");
  expect_error([] { io::load_model("tiny"); }, file, 18, "model.moe.router_expert_bias", "needs router_score = \"sigmoid\"");
  file = write("models/tiny.toml", moe + "router_groups = 3\nrouter_group_topk = 2\n");
  expect_error([] { io::load_model("tiny"); }, file, 18, "model.moe.router_groups", "does not divide the 8 experts");
  file = write("models/tiny.toml", moe + "router_groups = 4\n");
  expect_error([] { io::load_model("tiny"); }, file, 14, "model.moe.router_group_topk", "go together");
  file = write("models/tiny.toml", moe + "router_score = \"tanh\"\n");
  expect_error([] { io::load_model("tiny"); }, file, 18, "model.moe.router_score", "must be \"softmax\" or \"sigmoid\"");
  write("models/tiny.toml", moe + "router_score = \"sigmoid\"\nrouter_expert_bias = true\nrouter_topk_scaling = 2.5\n");
  const RouterSpec router = io::load_model("tiny").moe.router;
  EXPECT_EQ(router.score, RouterScore::Sigmoid);
  EXPECT_TRUE(router.expert_bias);
  EXPECT_EQ(router.topk_scaling, 2.5);
}

TEST_F(MalformedPresets, NanAndInfinityAreRejected) {
  auto file = write("gpus/toygpu.toml", replace(kGpu, "hbm_bandwidth_TBps = 1.5", "hbm_bandwidth_TBps = nan"));
  expect_error([] { io::load_gpu("toygpu"); }, file, 5, "gpu.hbm_bandwidth_TBps", "must be finite");
  file = write("gpus/toygpu.toml", replace(kGpu, "peak_tflops_bf16 = 100", "peak_tflops_bf16 = inf"));
  expect_error([] { io::load_gpu("toygpu"); }, file, 6, "gpu.peak_tflops_bf16", "must be finite");
  file = write("gpus/toygpu.toml", replace(kGpu, "peak_tflops_fp32 = 10", "peak_tflops_fp32 = -10"));
  expect_error([] { io::load_gpu("toygpu"); }, file, 8, "gpu.peak_tflops_fp32", "must be positive, got -10");
}

TEST_F(MalformedPresets, EfficiencyCurveIsChecked) {
  auto file = write("gpus/toygpu.toml", replace(kGpu, "gflop = 10, efficiency = 0.8", "gflop = 10, efficiency = 1.5"));
  expect_error([] { io::load_gpu("toygpu"); }, file, 12, "gpu.matmul_efficiency[1].efficiency",
               "must be a fraction in (0, 1]");
  file = write("gpus/toygpu.toml", replace(kGpu, "gflop = 10,", "gflop = 0.5,"));
  expect_error([] { io::load_gpu("toygpu"); }, file, 12, "gpu.matmul_efficiency[1].gflop", "must increase");
  file = write("gpus/toygpu.toml", replace(kGpu, "gflop = 10,", "flop = 10,"));
  expect_error([] { io::load_gpu("toygpu"); }, file, 12, "gpu.matmul_efficiency[1].flop", "unknown key");
}

TEST_F(MalformedPresets, ClusterLevelsAreChecked) {
  auto file = write("clusters/toy.toml", replace(kCluster, "oversubscription = 1\n\n", "oversubscription = 0.5\n\n"));
  expect_error([] { io::load_cluster("toy"); }, file, 11, "cluster.level[0].oversubscription",
               "must be at least 1, got 0.5");
  file = write("clusters/toy.toml", replace(kCluster, "group_size = 4", "group_size = 0"));
  expect_error([] { io::load_cluster("toy"); }, file, 8, "cluster.level[0].group_size", "must be at least 1");
  file = write("clusters/toy.toml", replace(kCluster, "bandwidth_GBps = 25", "bandwidth_GBps = 0"));
  expect_error([] { io::load_cluster("toy"); }, file, 16, "cluster.level[1].bandwidth_GBps", "must be positive");
  file = write("clusters/toy.toml", replace(kCluster, "latency_us = 5", "latency_us = -1"));
  expect_error([] { io::load_cluster("toy"); }, file, 17, "cluster.level[1].latency_us", "must not be negative");
}

TEST_F(MalformedPresets, LinkEfficiencyIsAFractionWithItsSource) {
  const std::string sourced = "oversubscription = 1\nefficiency = 0.9\nefficiency_source = \"nccl-tests run\"\n\n";
  auto file = write("clusters/toy.toml", replace(kCluster, "oversubscription = 1\n\n", sourced));
  const ClusterSpec cluster = io::load_cluster("toy");
  EXPECT_DOUBLE_EQ(cluster.levels[0].efficiency, 0.9);
  EXPECT_EQ(cluster.levels[0].efficiency_source, "nccl-tests run");
  EXPECT_DOUBLE_EQ(cluster.levels[1].efficiency, 1.0);  // absent: the line rate
  EXPECT_DOUBLE_EQ(effective_bandwidth(cluster.levels[0]), 90e9);
  file = write("clusters/toy.toml", replace(kCluster, "oversubscription = 1\n\n", "oversubscription = 1\nefficiency = 1.2\n\n"));
  expect_error([] { io::load_cluster("toy"); }, file, 12, "cluster.level[0].efficiency", "must be a fraction in (0, 1], got 1.2");
  file = write("clusters/toy.toml", replace(kCluster, "oversubscription = 1\n\n", "oversubscription = 1\nefficiency = 0.9\n\n"));
  expect_error([] { io::load_cluster("toy"); }, file, 6, "cluster.level[0].efficiency_source", "is required with efficiency");
  file = write("clusters/toy.toml", replace(kCluster, "oversubscription = 1\n\n", "oversubscription = 1\nefficiency_source = \"x\"\n\n"));
  expect_error([] { io::load_cluster("toy"); }, file, 12, "cluster.level[0].efficiency_source", "given without efficiency");
}

TEST_F(MalformedPresets, DeepEpSupportComesWithItsSource) {
  write("clusters/toy.toml", kCluster);
  EXPECT_EQ(io::load_cluster("toy").deepep, DeepEpSupport::None);  // absent: DeepEP does not run there
  auto file = write("clusters/toy.toml", replace(kCluster, "gpu = \"toygpu\"\n",
                                                 "gpu = \"toygpu\"\ndeepep = \"internode\"\ndeepep_source = \"IB\"\n"));
  const ClusterSpec cluster = io::load_cluster("toy");
  EXPECT_EQ(cluster.deepep, DeepEpSupport::Internode);
  EXPECT_EQ(cluster.deepep_source, "IB");
  file = write("clusters/toy.toml", replace(kCluster, "gpu = \"toygpu\"\n", "gpu = \"toygpu\"\ndeepep = \"rdma\"\n"));
  expect_error([] { io::load_cluster("toy"); }, file, 5, "cluster.deepep", "'rdma' is not one of none, intranode, internode");
  file = write("clusters/toy.toml", replace(kCluster, "gpu = \"toygpu\"\n", "gpu = \"toygpu\"\ndeepep = \"intranode\"\n"));
  expect_error([] { io::load_cluster("toy"); }, file, 1, "cluster.deepep_source", "is required with deepep");
  file = write("clusters/toy.toml", replace(kCluster, "gpu = \"toygpu\"\n", "gpu = \"toygpu\"\ndeepep_source = \"x\"\n"));
  expect_error([] { io::load_cluster("toy"); }, file, 5, "cluster.deepep_source", "given without deepep");
}

TEST_F(MalformedPresets, ClusterNamesAKnownGpu) {
  const auto file = write("clusters/toy.toml", replace(kCluster, "gpu = \"toygpu\"", "gpu = \"h900\""));
  expect_error([] { io::load_cluster("toy"); }, file, 4, "cluster.gpu", "unknown gpu preset 'h900' (known: a100-80g,");
  // A relative GPU path is relative to the cluster file.
  write("clusters/gpu-copy.toml", kGpu);
  const auto by_path = write("clusters/toy.toml", replace(kCluster, "gpu = \"toygpu\"", "gpu = \"gpu-copy.toml\""));
  EXPECT_EQ(io::load_cluster(by_path).gpu.name, "toygpu");
}

TEST_F(MalformedPresets, SyntaxErrorsCarryTomlsPosition) {
  const auto file = write("models/tiny.toml", replace(kModel, "hidden = 256", "hidden = = 256"));
  const std::string message = error_of([] { io::load_model("tiny"); });
  EXPECT_EQ(message.rfind(file + ":5:", 0), 0u) << message;
  EXPECT_NE(message.find("TOML syntax error"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST_F(MalformedPresets, UnknownNamesListTheKnownOnes) {
  write("models/tiny.toml", kModel);
  const std::string message = error_of([] { io::load_model("llama9"); });
  EXPECT_EQ(message.rfind("unknown model preset 'llama9' (known: bert-large, ", 0), 0u) << message;
  EXPECT_NE(message.find(", tiny,"), std::string::npos) << message;  // from $NESTFAST_PRESETS
  EXPECT_NE(message.find("llama3-70b"), std::string::npos) << message;  // from the source tree
  EXPECT_NE(error_of([] { io::load_gpu("missing/path.toml"); }).find("gpu preset file 'missing/path.toml' does not exist"),
            std::string::npos);
}

TEST_F(MalformedPresets, NameMustMatchTheFileName) {
  const auto file = write("models/tiny.toml", replace(kModel, "name = \"tiny\"", "name = \"small\""));
  expect_error([] { io::load_model("tiny"); }, file, 2, "model.name", "'small' does not match the file name 'tiny.toml'");
}

TEST_F(MalformedPresets, EnvironmentDirComesFirst) {
  // A user's h100-sxm replaces the shipped one.
  write("gpus/h100-sxm.toml", replace(replace(kGpu, "toygpu", "h100-sxm"), "hbm_GiB = 16", "hbm_GiB = 94"));
  EXPECT_EQ(io::load_gpu("h100-sxm").hbm_bytes, 94ull << 30);
  int listed = 0;
  for (const auto& entry : io::list_presets(io::PresetKind::Gpu)) {
    if (entry.name == "h100-sxm") {
      ++listed;
      EXPECT_EQ(entry.path, dir_ / "gpus" / "h100-sxm.toml");
    }
  }
  EXPECT_EQ(listed, 1);
  setenv("NESTFAST_PRESETS", (dir_ / "no-such-dir").c_str(), 1);
  EXPECT_NE(error_of([] { io::load_gpu("h100-sxm"); }).find("NESTFAST_PRESETS: '"), std::string::npos);
}

TEST_F(MalformedPresets, ListingFailsOnABrokenPreset) {
  const auto file = write("models/tiny.toml", replace(kModel, "hidden = 256", "hidden = 256.5"));
  expect_error([] { io::list_presets(); }, file, 5, "model.hidden", "expected an integer, got a float");
}


// Optional keys get their defaults: a level without oversubscription is not
// oversubscribed; a preset without a source (or with an empty one) loads,
// with one warning line per file naming it.
TEST_F(MalformedPresets, OptionalKeysGetDefaults) {
  write("clusters/toy.toml", replace(replace(kCluster, "oversubscription = 1\n\n", "\n"), "source = \"test\"\n", ""));
  ::testing::internal::CaptureStderr();
  const ClusterSpec cluster = io::load_cluster("toy");
  io::load_cluster("toy");
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(cluster.levels[0].oversubscription, 1.0);
  EXPECT_EQ(cluster.levels[1].oversubscription, 1.0);
  EXPECT_EQ(cluster.source, "");
  EXPECT_EQ(warnings, "nestfast: warning: " + (dir_ / "clusters" / "toy.toml").string() +
                          ": no source: say where its numbers come from (a datasheet, a paper)\n")
      << "one line, once per file";
  write("models/tiny.toml", replace(kModel, "source = \"test\"", "source = \"\""));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(io::load_model("tiny").num_layers, 4);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("tiny.toml: no source"), std::string::npos);
  write("models/tiny.toml", replace(kModel, "source = \"test\"", "source = 3"));
  EXPECT_NE(error_of([] { io::load_model("tiny"); }).find("model.source: expected a string"), std::string::npos);
}

// A number in the file's unit becomes the double nearest the decimal the
// file wrote, so printing and storing it shows what the preset says:
// 66.9 TFLOP/s is 66900000000000, not 66.9 * 1e12 = 66900000000000.01.
TEST(DecimalScale, IsTheDecimalTheFileWrote) {
  EXPECT_NE(66.9 * 1e12, 66.9e12) << "the float noise this avoids";
  EXPECT_EQ(io::decimal_scaled(66.9, 12), 66.9e12);
  EXPECT_NE(100 * 1e-6, 1e-4);
  EXPECT_EQ(io::decimal_scaled(100, -6), 1e-4);
  EXPECT_EQ(io::decimal_scaled(0.1, -6), 1e-7);
  EXPECT_EQ(io::decimal_scaled(1978.9, 12), 1978.9e12);
  EXPECT_EQ(io::decimal_scaled(6.69e13, 3), 6.69e16) << "a value already in exponent form";
  EXPECT_EQ(io::decimal_scaled(1.5e-300, -20), 1.5e-320) << "subnormal";
  EXPECT_EQ(io::decimal_scaled(0, 9), 0.0);
}

TEST_F(MalformedPresets, NumbersAreWhatTheFileSays) {
  write("gpus/toygpu.toml", replace(replace(kGpu, "peak_tflops_fp32 = 10", "peak_tflops_fp32 = 66.9"),
                                    "kernel_overhead_us = 2", "kernel_overhead_us = 4.1"));
  write("clusters/toy.toml", replace(kCluster, "latency_us = 5", "latency_us = 100"));
  const ClusterSpec cluster = io::load_cluster("toy");
  EXPECT_EQ(cluster.gpu.peak_flops_fp32, 66.9e12);
  EXPECT_EQ(cluster.gpu.hbm_bandwidth_Bps, 1.5e12);
  EXPECT_EQ(cluster.gpu.kernel_overhead_s, 4.1e-6);
  EXPECT_EQ(cluster.levels[1].latency_s, 1e-4);
  EXPECT_EQ(cluster.gpu.matmul_efficiency[1].flops, 10e9);
}

}  // namespace
}  // namespace nestfast
