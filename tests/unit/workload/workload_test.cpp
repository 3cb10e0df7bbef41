// The seeded workload generators and the nccl-tests matrix file reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "comm/workload/matrix_file.hpp"
#include "comm/workload/workload.hpp"

namespace nestfast::comm {
namespace {

constexpr std::uint64_t kBytes = 1000003;  // prime: shares never divide evenly

TEST(Workload, EveryRowSumsToTheBytesPerRank) {
  for (const char* spec : {"uniform", "random", "zipf:0.8", "zipf:0", "hot:5", "moe:64,2,0.8", "moe:8,8,1.2"}) {
    const TrafficMatrix d = make_workload(spec, 24, kBytes, 3);
    ASSERT_EQ(d.ranks(), 24) << spec;
    for (int g = 0; g < 24; ++g) EXPECT_EQ(d.row_sum(g), kBytes) << spec << " row " << g;
  }
}

TEST(Workload, SeedsReproduceAndDiffer) {
  for (const char* spec : {"random", "zipf:1.1", "hot:3", "moe:32,2,1"}) {
    EXPECT_EQ(make_workload(spec, 16, kBytes, 9), make_workload(spec, 16, kBytes, 9)) << spec;
    EXPECT_NE(make_workload(spec, 16, kBytes, 9), make_workload(spec, 16, kBytes, 10)) << spec;
  }
}

TEST(Workload, ShapesMatchTheirDefinitions) {
  const TrafficMatrix uniform = make_workload("uniform", 10, 1000, 1);
  EXPECT_EQ(uniform(3, 7), 100u);
  EXPECT_EQ(make_workload("zipf:0", 10, 1000, 5), uniform) << "zipf with skew 0 is uniform";

  // hot:K: one column K times the others (up to rounding).
  const TrafficMatrix hot = make_workload("hot:5", 20, 2400000, 2);
  const auto row = hot.row(0);
  const auto hottest = std::max_element(row.begin(), row.end());
  const auto coolest = std::min_element(row.begin(), row.end());
  EXPECT_NEAR(static_cast<double>(*hottest) / static_cast<double>(*coolest), 5.0, 1e-3);
  EXPECT_EQ(std::count(row.begin(), row.end(), *hottest), 1);

  // zipf:S: the most popular destination gets 1 / H(N, S) of every row.
  const TrafficMatrix zipf = make_workload("zipf:1", 4, 2500000, 8);
  const auto z = zipf.row(1);
  EXPECT_NEAR(static_cast<double>(*std::max_element(z.begin(), z.end())), 2500000.0 / (1 + 0.5 + 1.0 / 3 + 0.25), 1.0);

  // moe: experts on rank e mod N; with E = N and no skew, the load is near uniform.
  const TrafficMatrix moe = make_workload("moe:16,2,0", 16, 1600000, 4);
  for (int h = 0; h < 16; ++h) EXPECT_NEAR(static_cast<double>(moe(0, h)), 100000.0, 15000.0);
}

TEST(Workload, BadSpecsAreOneLineErrors) {
  for (const char* spec : {"", "zipf", "zipf:", "zipf:x", "zipf:-1", "hot:0", "moe:8,2", "moe:4,8,1", "moe:a,1,1",
                           "uniform:3", "flat", "file:"}) {
    EXPECT_THROW(parse_workload(spec), std::invalid_argument) << spec;
  }
  EXPECT_THROW(make_workload("uniform", 0, 10, 1), std::invalid_argument);
}

MatrixFile parsed(const std::string& text, int ranks, double scale = 1) {
  return parse_matrix_file(text, "m.txt", ranks, scale);
}

TEST(MatrixText, ReadsWhitespaceSeparatedRows) {
  const TrafficMatrix d = parsed("0 16 32\n48\t64 80\n  96 112 128  \n", 3).demand;
  EXPECT_EQ(d(0, 2), 32u);
  EXPECT_EQ(d(1, 0), 48u);
  EXPECT_EQ(d(2, 2), 128u);
  WorkloadSpec spec = parse_workload("file:ok.txt");
  spec.matrix_text = "0 16\n32 48\n";
  EXPECT_EQ(make_workload(spec, 2, 0, 0)(1, 0), 32u) << "a file workload is its text";
  spec.scale = 2;
  EXPECT_EQ(make_workload(spec, 2, 0, 0)(1, 0), 64u) << "... times its scale";
}

// nccl-tests' rules (src/alltoallv.cu at v2.19.6): strtod values, each cell
// scaled, truncated and rounded down to 16 bytes; a larger matrix gives its
// first N rows and columns; a last row without a newline counts.
TEST(MatrixText, FollowsNcclTestsRules) {
  const std::string text = "1e3 1.5e2 0x20\n\n17 15.9 +4096\n1 2 3";
  const MatrixFile one = parsed(text, 3);
  EXPECT_EQ(one.dimension, 3);
  EXPECT_EQ(one.demand(0, 0), 992u);   // 1000 rounded down to 16
  EXPECT_EQ(one.demand(0, 1), 144u);   // 150
  EXPECT_EQ(one.demand(0, 2), 32u);    // strtod reads hex too
  EXPECT_EQ(one.demand(1, 0), 16u);    // 17
  EXPECT_EQ(one.demand(1, 1), 0u);     // 15.9 truncates to 15, then to 0
  EXPECT_EQ(one.demand(1, 2), 4096u);  // and a sign
  EXPECT_EQ(one.demand(2, 2), 0u);

  const MatrixFile scaled = parsed(text, 3, 2.5);
  EXPECT_EQ(scaled.demand(0, 0), 2496u);  // 2500 -> 2496
  EXPECT_EQ(scaled.demand(1, 2), 10240u);
  EXPECT_EQ(parsed(text, 3, 0).demand.total(), 0u);

  // A 3 x 3 file on 2 ranks: its top-left 2 x 2.
  const MatrixFile first = parsed(text, 2);
  EXPECT_EQ(first.dimension, 3);
  ASSERT_EQ(first.demand.ranks(), 2);
  EXPECT_EQ(first.demand(0, 1), 144u);
  EXPECT_EQ(first.demand(1, 0), 16u);
  EXPECT_EQ(first.demand(1, 1), 0u);
}

TEST(MatrixText, NamesTheBadLine) {
  auto message = [](const std::string& text, int ranks, double scale = 1) {
    try {
      parse_matrix_file(text, "m.txt", ranks, scale);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("0 1\n2 x3\n", 2).find("m.txt:2: 'x3' is not a number"), std::string::npos);
  EXPECT_NE(message("1 2 3\n", 2).find("not square"), std::string::npos);
  EXPECT_NE(message("1 2\n\n3\n", 2).find("m.txt:3: 1 values, the first row has 2"), std::string::npos);
  EXPECT_NE(message("1 2\n3 4\n", 3).find("smaller than the 3 ranks"), std::string::npos);
  EXPECT_NE(message("1 -2\n3 4\n", 2).find("m.txt:1: '-2' is negative"), std::string::npos);
  EXPECT_NE(message("1 2MB\n3 4\n", 2).find("'2MB' is not a number"), std::string::npos);
  EXPECT_NE(message("1 nan\n3 4\n", 2).find("'nan' is not a number"), std::string::npos);
  EXPECT_NE(message("1 1e999\n3 4\n", 2).find("'1e999' is not a number"), std::string::npos);
  EXPECT_NE(message("\n \n", 2).find("is empty"), std::string::npos);
  EXPECT_NE(message("1 2\n3 4\n", 2, -1).find("scale factor"), std::string::npos);
}

// Entries that overflow 64 bits, or add up to more than one alltoallv may
// move, are refused: they hung the FAST plan (issue 19).
TEST(MatrixText, RefusesHugeDemands) {
  EXPECT_THROW(parsed("1 2\n3 18446744073709551616\n", 2), std::invalid_argument);
  EXPECT_THROW(parsed("1 2\n3 1e19\n", 2, 2), std::invalid_argument) << "value x scale past 64 bits";
  try {
    parsed("1 2\n3 1e18\n", 2);
    FAIL() << "accepted an entry of 1e18 bytes";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("1 PiB"), std::string::npos) << error.what();
  }
  const std::string half = std::to_string(kMaxTotalBytes / 2 + 16);
  EXPECT_THROW(parsed("0 " + half + "\n" + half + " 0\n", 2), std::invalid_argument)
      << "two entries whose sum passes the limit";
  EXPECT_NO_THROW(parsed("0 " + std::to_string(kMaxTotalBytes / 2) + "\n0 0\n", 2));
}

TEST(MatrixScale, IsAFiniteNonNegativeNumber) {
  EXPECT_EQ(parse_matrix_scale("2.5", "s"), 2.5);
  EXPECT_EQ(parse_matrix_scale("1e-3", "s"), 1e-3);
  for (const char* bad : {"", "x", "-1", "inf", "1.5x"}) EXPECT_THROW(parse_matrix_scale(bad, "s"), std::invalid_argument) << bad;
}

TEST(BusiestRank, IsTheLargestRowOrColumnSum) {
  TrafficMatrix d(3);
  d(0, 1) = 100;
  d(2, 1) = 50;
  d(1, 0) = 10;
  EXPECT_EQ(busiest_rank_bytes(d), 150u);  // rank 1 receives 150
}

TEST(Workload, RefusesHugeGenerators) {
  EXPECT_THROW(make_workload("uniform", 4, ~std::uint64_t{0}, 1), std::invalid_argument);
  EXPECT_THROW(make_workload("uniform", 2, std::uint64_t{1} << 63, 1), std::invalid_argument);
  EXPECT_NO_THROW(make_workload("uniform", 2, kMaxTotalBytes / 2, 1));
  EXPECT_THROW(parse_workload("moe:100000000,2,0"), std::invalid_argument);
  EXPECT_NO_THROW(parse_workload("moe:" + std::to_string(kMaxExperts) + ",2,0"));
}

}  // namespace
}  // namespace nestfast::comm
