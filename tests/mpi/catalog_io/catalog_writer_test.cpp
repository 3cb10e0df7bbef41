// The parallel files of a catalog job on their own: the checkpoint's
// collective creation, independent records from every rank and a reopen for
// resume; the catalog's disjoint plan rows and its commit; read back with the
// serial read-only reader.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "io/archive/archive.hpp"
#include "io/archive/job_serialization.hpp"
#include "io/catalog/catalog_reader.hpp"
#include "io/catalog/catalog_writer.hpp"
#include "io/catalog/checkpoint_file.hpp"
#include "io/job/job_file.hpp"

namespace nestfast::io {
namespace {

int rank() {
  int value = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &value);
  return value;
}

int ranks() {
  int value = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &value);
  return value;
}

std::string shared_path(const char* tag) {
  char name[128] = {};
  if (rank() == 0) std::snprintf(name, sizeof name, "/tmp/nestfast_catalog_%s_%d.h5", tag, static_cast<int>(::getpid()));
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
  return name;
}

// A feasible plan as a catalog job writes one (the reader checks every value, io/catalog/row_checks.hpp).
PlanEntry plan_for(int point, int stages) {
  PlanEntry plan;
  PlanRow& row = plan.row;
  row.point_id = static_cast<std::uint64_t>(point);
  set_fixed(row.model, "model-" + std::to_string(point));
  set_fixed(row.cluster, "cluster");
  row.gpus = stages;
  row.global_batch = 8;
  row.seq_len = 1024;
  set_fixed(row.kind, "nest");
  row.feasible = 1;
  row.tp = row.dp = row.ep = row.etp = row.cp = row.micro_batch = row.vpp = 1;
  row.micro_batches = 8;
  row.pp = stages;
  set_fixed(row.recompute, "none");
  set_fixed(row.recompute_modules, "core_attn");
  set_fixed(row.optimizer, "adam");
  set_fixed(row.a2a, "fast");
  set_fixed(row.framework, "nest");
  set_fixed(row.attention, "flash");
  set_fixed(row.overlap, "all");
  set_fixed(row.grad_reduce, "fp32");
  row.moe_imbalance = 1;
  row.iteration_time_s = 1.5 + point;
  row.tokens_per_s = 8 * 1024 / row.iteration_time_s;
  row.memory_peak_bytes = 1 << 30;
  row.hbm_bytes = std::uint64_t{80} << 30;
  for (int s = 0; s < stages; ++s) {
    StageRow stage;
    stage.stage = s;
    stage.first_layer = s;
    stage.last_layer = s;
    stage.devices = 1;
    stage.first_device = s;
    stage.boundary_level = s == 0 ? -1 : 0;
    stage.pipeline_rank = s;
    set_fixed(stage.recompute, "none");
    stage.forward_per_microbatch_s = 0.25 * s;
    plan.stages.push_back(stage);
  }
  return plan;
}

TEST(CatalogWriter, CheckpointSurvivesReopenAndRowsAreDisjoint) {
  const std::string base = shared_path("writer");
  const std::string checkpoint_path = base + ".checkpoint";
  const std::string partial = base + ".partial";
  const std::string final_path = base;
  const CheckpointShape shape{static_cast<std::uint64_t>(ranks()) * 3, static_cast<std::uint64_t>(ranks()) * 6};
  CatalogIdentity identity{"test-job", "[job]\nname = \"test-job\"\n", 4, ""};
  {
    CheckpointFile checkpoint = CheckpointFile::create(MPI_COMM_WORLD, checkpoint_path, 0xfeedULL, shape);
    // Each rank finishes its first two items (two values each).
    const std::uint64_t first = static_cast<std::uint64_t>(rank()) * 3;
    checkpoint.record_finished(first, 2, first * 2, {1.0 * rank(), 2.0, 3.0, 4.0});
    checkpoint.flush();
  }
  // Resume: rank 0 reads the flags serially, as the job does.
  std::vector<std::uint8_t> done;
  if (rank() == 0) {
    done = read_checkpoint(checkpoint_path, 0xfeedULL, shape);
    EXPECT_THROW(read_checkpoint(checkpoint_path, 0xbeefULL, shape), std::invalid_argument);
    EXPECT_THROW(read_checkpoint(checkpoint_path, 0xfeedULL, CheckpointShape{shape.items + 1, shape.values}),
                 std::invalid_argument);
    for (int r = 0; r < ranks(); ++r) {
      EXPECT_EQ(done[static_cast<std::size_t>(r) * 3], 1);
      EXPECT_EQ(done[static_cast<std::size_t>(r) * 3 + 1], 1);
      EXPECT_EQ(done[static_cast<std::size_t>(r) * 3 + 2], 0);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CheckpointFile checkpoint = CheckpointFile::reopen(MPI_COMM_WORLD, checkpoint_path, shape);
  const std::uint64_t last = static_cast<std::uint64_t>(rank()) * 3 + 2;
  checkpoint.record_finished(last, 1, last * 2, {7.0, 8.0});
  checkpoint.flush();
  // Every rank sees every other rank's records.
  const std::vector<std::uint8_t> all_done = checkpoint.read_done(0, shape.items);
  for (auto flag : all_done) EXPECT_EQ(flag, 1);
  const std::vector<double> values = checkpoint.read_values(0, shape.values);
  for (int r = 0; r < ranks(); ++r) {
    EXPECT_EQ(values[static_cast<std::size_t>(r) * 6], 1.0 * r);
    EXPECT_EQ(values[static_cast<std::size_t>(r) * 6 + 4], 7.0);
  }

  // A job text over 64 KiB (HDF5's limit of a compact attribute) is stored whole.
  identity.job_text += "# " + std::string(100000, 'x') + "\n";
  CatalogWriter writer = CatalogWriter::create(MPI_COMM_WORLD, partial, identity);
  // Rank r writes r plans (rank 0 none) with r+1 stages each.
  std::vector<PlanEntry> mine;
  for (int i = 0; i < rank(); ++i) mine.push_back(plan_for(rank() * 10 + i, rank() + 1));
  const std::uint64_t first_row = writer.write_plans(mine);
  EXPECT_EQ(first_row, static_cast<std::uint64_t>(rank() * (rank() - 1) / 2));
  writer.write_validation({});
  writer.complete(final_path);
  checkpoint.remove();

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank() == 0) {
    const CatalogReader reader(final_path);
    EXPECT_EQ(reader.string_attribute("format"), "nestfast-catalog");
    EXPECT_EQ(reader.string_attribute("job"), identity.job_text);
    EXPECT_EQ(reader.integer_attribute("mpi_ranks"), ranks());
    EXPECT_NE(::access(checkpoint_path.c_str(), F_OK), 0) << "the checkpoint outlives its complete catalog";
    EXPECT_NE(::access(partial.c_str(), F_OK), 0);
    const std::vector<PlanRow> plans = reader.plans();
    ASSERT_EQ(plans.size(), static_cast<std::size_t>(ranks() * (ranks() - 1) / 2));
    std::uint64_t row = 0;
    for (int r = 1; r < ranks(); ++r) {
      for (int i = 0; i < r; ++i, ++row) {
        const PlanRow& plan = plans[row];
        EXPECT_EQ(plan.point_id, static_cast<std::uint64_t>(r * 10 + i));
        EXPECT_EQ(get_fixed(plan.model), "model-" + std::to_string(r * 10 + i));
        ASSERT_EQ(plan.stage_count, static_cast<std::uint64_t>(r + 1));
        const std::vector<StageRow> stages = reader.stages(plan.stage_offset, plan.stage_count);
        for (std::size_t s = 0; s < stages.size(); ++s) {
          EXPECT_EQ(stages[s].plan_row, row);
          EXPECT_EQ(stages[s].first_layer, static_cast<int>(s));
        }
      }
    }
    EXPECT_TRUE(reader.validation().empty());
    std::remove(final_path.c_str());
  }
}

TEST(JobArchive, BroadcastCarriesTheWholeJob) {
  JobSpec job;
  if (rank() == 0) {
    job = parse_job("[job]\nname = \"x\"\n[[sweep]]\nmodel = [\"a\", \"b\"]\ncluster = \"c\"\ngpus = [8, 16]\n"
                    "global_batch = 64\n[search]\ntp = [1, 2]\nsp = [true]\n[validate]\nalgos = [\"fast\"]\n",
                    "test.toml");
  }
  broadcast_archive(MPI_COMM_WORLD, 0, job);
  EXPECT_EQ(job.name, "x");
  ASSERT_EQ(job.sweeps.size(), 1u);
  EXPECT_EQ(job.sweeps[0].models, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(job.sweeps[0].gpus, (std::vector<int>{8, 16}));
  EXPECT_EQ(job.search.tp, (std::vector<int>{1, 2}));
  EXPECT_EQ(job.search.sp, (std::vector<bool>{true}));
  EXPECT_EQ(job.validate.algos, (std::vector<std::string>{"fast"}));
  EXPECT_EQ(expand_sweep(job).size(), 4u);
  EXPECT_EQ(job_fingerprint(job), job_fingerprint(job));
}

// deepseek-v3's attention and router reach every rank and the catalog's
// /models whole (a rank pricing MHA beside one pricing MLA would mix prices).
TEST(JobArchive, ModelsKeepLatentAttentionAndTheRouter) {
  ModelSpec model;
  if (rank() == 0) {
    model.name = "mla-model";
    model.source = "test";
    model.num_layers = 4;
    model.hidden = 1024;
    model.ffn_hidden = 4096;
    model.heads = 16;
    model.kv_heads = 16;
    model.head_dim = 64;
    model.vocab = 32000;
    model.seq_len = 4096;
    model.attention = AttentionKind::MultiLatent;
    model.mla = {384, 128, 64, 32, 64};
    model.moe.num_experts = 8;
    model.moe.top_k = 2;
    model.moe.expert_ffn_hidden = 512;
    model.moe.router = {RouterScore::Sigmoid, true, 2.5, 4, 2, RouterBalance::SeqAuxLoss, 0.0001};
  }
  broadcast_archive(MPI_COMM_WORLD, 0, model);
  auto expect_whole = [](const ModelSpec& m) {
    EXPECT_EQ(m.attention, AttentionKind::MultiLatent);
    EXPECT_EQ(m.mla.q_lora_rank, 384);
    EXPECT_EQ(m.mla.kv_lora_rank, 128);
    EXPECT_EQ(m.mla.qk_head_dim, 64);
    EXPECT_EQ(m.mla.qk_rope_head_dim, 32);
    EXPECT_EQ(m.mla.v_head_dim, 64);
    EXPECT_EQ(m.moe.router.score, RouterScore::Sigmoid);
    EXPECT_TRUE(m.moe.router.expert_bias);
    EXPECT_EQ(m.moe.router.topk_scaling, 2.5);
    EXPECT_EQ(m.moe.router.groups, 4);
    EXPECT_EQ(m.moe.router.group_topk, 2);
    EXPECT_EQ(m.moe.router.balance, RouterBalance::SeqAuxLoss);
    EXPECT_EQ(m.moe.router.balance_coeff, 0.0001);
  };
  expect_whole(model);

  const std::string path = shared_path("models");
  CatalogWriter writer =
      CatalogWriter::create(MPI_COMM_WORLD, path + ".partial", CatalogIdentity{"models", "[job]\n", 1, ""});
  std::vector<PlanEntry> none;
  writer.write_plans(none);
  writer.write_models({model});
  writer.write_validation({});
  writer.complete(path);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank() == 0) {
    expect_whole(CatalogReader(path).model("mla-model"));
    std::remove(path.c_str());
  }
}

}  // namespace
}  // namespace nestfast::io
