// Broken copies of a reference input, written to a temp folder at test time:
// each one is a single-line std::invalid_argument that names the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "io/nest_json/nest_json.hpp"
#include "solver/compat/nest_solver.hpp"
#include "tests/support/nest_cases.hpp"

namespace nestfast {
namespace {

class MalformedNestInput : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / ("nest_compat_malformed_" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory_);
    std::ifstream file((test::nest_case_set("reference").folder / "tpuv4_bert_seq_N64.in.json").string());
    base_ = nlohmann::json::parse(file);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::string write(const std::string& name, const std::string& text) {
    const auto path = directory_ / (name + ".in.json");
    std::ofstream(path) << text;
    return path.string();
  }

  // The error message of loading `text`; fails the test when it loads.
  std::string error_of(const std::string& name, const std::string& text) {
    try {
      const auto problem = io::load_nest_input(write(name, text));
      compat::solve(problem, compat::CostModelKind::Compat);
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
      return message;
    }
    ADD_FAILURE() << name << ": accepted";
    return "";
  }

  std::string error_of_edit(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json copy = base_;
    edit(copy);
    return error_of(name, copy.dump());
  }

  std::filesystem::path directory_;
  nlohmann::json base_;
};

TEST_F(MalformedNestInput, TheUnbrokenCopyLoads) {
  const auto problem = io::load_nest_input(write("intact", base_.dump()));
  EXPECT_EQ(problem.graphs.size(), 4u);
}

TEST_F(MalformedNestInput, MissingKeysAreNamed) {
  for (const char* key : {"bws", "nodes", "edges", "maxDevices", "baselines", "mbsInBatch", "devices_per_level"}) {
    const std::string message = error_of_edit(std::string("missing_") + key, [&](nlohmann::json& json) { json.erase(key); });
    EXPECT_NE(message.find(key), std::string::npos) << message;
    EXPECT_NE(message.find("missing key"), std::string::npos) << message;
  }
  const std::string nested = error_of_edit("missing_fw", [](nlohmann::json& json) { json["nodes"]["2"][3].erase("optimalLatencyFw"); });
  EXPECT_NE(nested.find("nodes.2[3].optimalLatencyFw"), std::string::npos) << nested;
}

TEST_F(MalformedNestInput, BranchingLayerGraphIsRejected) {
  // Without the edge 0 -> 1 nothing orders layer 0 before layer 1 any more.
  const std::string message = error_of_edit("branching", [](nlohmann::json& json) {
    auto& edges = json["edges"]["1"];
    for (std::size_t index = 0; index < edges.size(); ++index) {
      if (edges[index]["sourceId"] == 0 && edges[index]["destId"] == 1) {
        edges.erase(index);
        break;
      }
    }
  });
  EXPECT_NE(message.find("edges.1"), std::string::npos) << message;
  EXPECT_NE(message.find("branches"), std::string::npos) << message;
}

TEST_F(MalformedNestInput, CyclesAndDanglingEdgesAreRejected) {
  const std::string cycle = error_of_edit("cycle", [](nlohmann::json& json) {
    json["edges"]["1"].push_back({{"sourceId", 5}, {"destId", 2}, {"communicationCost", 1}});
  });
  EXPECT_NE(cycle.find("cycle"), std::string::npos) << cycle;
  const std::string dangling = error_of_edit("dangling", [](nlohmann::json& json) {
    json["edges"]["4"].push_back({{"sourceId", 5}, {"destId", 999}, {"communicationCost", 1}});
  });
  EXPECT_NE(dangling.find("destId"), std::string::npos) << dangling;
}

// 5,000 copies of one edge were accepted and turned the MCMC baseline into null (issue 19).
TEST_F(MalformedNestInput, DuplicateEdgesAndIdsAreRejected) {
  const std::string edge = error_of_edit("duplicate_edge", [](nlohmann::json& json) {
    auto& edges = json["edges"]["1"];
    for (int copy = 0; copy < 5000; ++copy) edges.push_back(edges[0]);
  });
  EXPECT_NE(edge.find("edges.1["), std::string::npos) << edge;
  EXPECT_NE(edge.find("duplicate edge"), std::string::npos) << edge;
  const std::string id = error_of_edit("duplicate_id", [](nlohmann::json& json) {
    json["nodes"]["1"][1]["id"] = json["nodes"]["1"][0]["id"];
  });
  EXPECT_NE(id.find("duplicate node id"), std::string::npos) << id;
}

TEST_F(MalformedNestInput, DevicesPerLevelMustMultiplyToMaxDevices) {
  const std::string message = error_of_edit("devices", [](nlohmann::json& json) { json["devices_per_level"][2] = 4; });
  EXPECT_NE(message.find("devices_per_level"), std::string::npos) << message;
  EXPECT_NE(message.find("maxDevices=64"), std::string::npos) << message;
  const std::string lengths = error_of_edit("levels", [](nlohmann::json& json) { json["bws"].erase(2); });
  EXPECT_NE(lengths.find("bws"), std::string::npos) << lengths;
}

TEST_F(MalformedNestInput, EmptyBaselineStagesAreRejected) {
  // 24 layers in 10 stages of ceil(24/10) = 3: the 9th and 10th hold nothing.
  const std::string message = error_of_edit("empty_stage", [](nlohmann::json& json) { json["baselines"]["Manual"]["p"] = 10; });
  EXPECT_NE(message.find("baselines.Manual"), std::string::npos) << message;
  EXPECT_NE(message.find("holds no"), std::string::npos) << message;
  const std::string partition = error_of_edit("empty_partition", [](nlohmann::json& json) {
    json["baselines"]["MCMC"]["layer_partition"] = {10, 0, 9, 3, 2};
  });
  EXPECT_NE(partition.find("baselines.MCMC.layer_partition[1]"), std::string::npos) << partition;
  const std::string sum = error_of_edit("partition_sum", [](nlohmann::json& json) {
    json["baselines"]["MCMC"]["layer_partition"] = {5, 5, 5, 5, 5};
  });
  EXPECT_NE(sum.find("sums to 25"), std::string::npos) << sum;
}

TEST_F(MalformedNestInput, NaNIsNamed) {
  // Python's json writes NaN; it is not JSON, the parser stops at it.
  std::string text = base_.dump(1);
  const std::string key = "\"optimalLatencyBw\": ";
  const std::size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  const std::size_t value = at + key.size();
  text.replace(value, text.find_first_of(",\n}", value) - value, "NaN");
  const std::string message = error_of("nan", text);
  EXPECT_NE(message.find("optimalLatencyBw"), std::string::npos) << message;
  EXPECT_NE(message.find("NaN"), std::string::npos) << message;
  // An overflowing literal parses as infinity: rejected as not finite.
  const std::string infinite = error_of_edit("inf", [](nlohmann::json& json) { json["bws"][1] = std::numeric_limits<double>::infinity(); });
  EXPECT_FALSE(infinite.empty());
}

TEST_F(MalformedNestInput, WrongTypesAreNamed) {
  const std::string devices = error_of_edit("string_devices", [](nlohmann::json& json) { json["maxDevices"] = "64"; });
  EXPECT_NE(devices.find("maxDevices"), std::string::npos) << devices;
  EXPECT_NE(devices.find("expected an integer"), std::string::npos) << devices;
  const std::string recompute = error_of_edit("int_recompute", [](nlohmann::json& json) { json["activationRecomputation"] = 1; });
  EXPECT_NE(recompute.find("activationRecomputation"), std::string::npos) << recompute;
  const std::string fraction = error_of_edit("fraction", [](nlohmann::json& json) { json["nodes"]["1"][0]["parameterSize"] = 1.5; });
  EXPECT_NE(fraction.find("nodes.1[0].parameterSize"), std::string::npos) << fraction;
  const std::string negative = error_of_edit("negative", [](nlohmann::json& json) { json["latency_per_level"][0] = -1e-4; });
  EXPECT_NE(negative.find("latency_per_level[0]"), std::string::npos) << negative;
  const std::string unknown = error_of_edit("unknown", [](nlohmann::json& json) { json["maxDevice"] = 64; });
  EXPECT_NE(unknown.find("maxDevice: unknown key"), std::string::npos) << unknown;
  const std::string optimizer = error_of_edit("optimizer", [](nlohmann::json& json) { json["optimizerAlgorithm"] = "LAMB"; });
  EXPECT_NE(optimizer.find("optimizerAlgorithm"), std::string::npos) << optimizer;
  const std::string width = error_of_edit("width", [](nlohmann::json& json) { json["baselines"]["Phaze"]["t"] = 16; });
  EXPECT_NE(width.find("baselines.Phaze.t"), std::string::npos) << width;
  const std::string not_json = error_of("not_json", "{\"maxDevices\": 64,");
  EXPECT_NE(not_json.find("invalid JSON"), std::string::npos) << not_json;
}

TEST_F(MalformedNestInput, MemoryTooSmallForAnyPlanIsAnError) {
  const std::string message = error_of_edit("tiny_memory", [](nlohmann::json& json) { json["maxMemoryPerDevice"] = 1024; });
  EXPECT_NE(message.find("maxMemoryPerDevice"), std::string::npos) << message;
}

// A reference answer's networkSkeleton is checked against the input.
TEST_F(MalformedNestInput, BadNetworkSkeletonIsNamed) {
  const auto folder = test::nest_case_set("reference").folder;
  const auto problem = io::load_nest_input((folder / "tpuv4_bert_seq_N64.in.json").string());
  std::ifstream file((folder / "tpuv4_bert_seq_N64.out.json").string());
  const nlohmann::json answer = nlohmann::json::parse(file);
  const auto message_of = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json copy = answer;
    edit(copy);
    try {
      io::parse_nest_output(copy.dump(), "answer", problem);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NO_THROW(io::parse_nest_output(answer.dump(), "answer", problem));
  EXPECT_NE(message_of([](nlohmann::json& json) { json["networkSkeleton"][0][0] = 64; })
                .find("networkSkeleton[0][0]: device 64 of maxDevices=64"),
            std::string::npos);
  EXPECT_NE(message_of([](nlohmann::json& json) { json["networkSkeleton"][0][1][0] = 999; })
                .find("networkSkeleton[0][1][0]: chain position 999"),
            std::string::npos);
  EXPECT_NE(message_of([](nlohmann::json& json) { json["networkSkeleton"][0] = 3; })
                .find("networkSkeleton[0]: expected [device, [chain positions]]"),
            std::string::npos);
}

}  // namespace
}  // namespace nestfast
