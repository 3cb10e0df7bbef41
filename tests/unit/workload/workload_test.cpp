// The seeded workload generators and the nccl-tests matrix file reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

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

TEST(MatrixText, ReadsWhitespaceSeparatedRows) {
  const TrafficMatrix d = parse_matrix_text("0 1 2\n3\t4 5\n  6 7 8  \n", "ok.txt", 3);
  EXPECT_EQ(d(0, 2), 2u);
  EXPECT_EQ(d(1, 0), 3u);
  EXPECT_EQ(d(2, 2), 8u);
  WorkloadSpec spec = parse_workload("file:ok.txt");
  spec.matrix_text = "0 1\n2 3\n";
  EXPECT_EQ(make_workload(spec, 2, 0, 0)(1, 0), 2u) << "a file workload is its text";
}

TEST(MatrixText, NamesTheBadLine) {
  try {
    parse_matrix_text("0 1\n2 x3\n", "bad.txt", 2);
    FAIL() << "accepted a bad token";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("bad.txt:2"), std::string::npos) << error.what();
  }
  EXPECT_THROW(parse_matrix_text("1 2 3\n", "short.txt", 2), std::invalid_argument);
  EXPECT_THROW(parse_matrix_text("1 2 3 4 5\n", "long.txt", 2), std::invalid_argument);
  EXPECT_THROW(parse_matrix_text("1 -2 3 4\n", "neg.txt", 2), std::invalid_argument);
  EXPECT_THROW(parse_matrix_text("1 +2 3 4\n", "plus.txt", 2), std::invalid_argument);
  EXPECT_THROW(parse_matrix_text("1 0x2 3 4\n", "hex.txt", 2), std::invalid_argument);
}

// Entries that overflow 64 bits, or add up to more than one alltoallv may
// move, are refused: they hung the FAST plan (issue 19).
TEST(MatrixText, RefusesHugeDemands) {
  EXPECT_THROW(parse_matrix_text("1 2\n3 18446744073709551616\n", "over.txt", 2), std::invalid_argument);
  try {
    parse_matrix_text("1 2\n3 18446744073709551615\n", "max.txt", 2);
    FAIL() << "accepted an entry of 2^64-1";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("1 PiB"), std::string::npos) << error.what();
  }
  const std::string half = std::to_string(kMaxTotalBytes / 2 + 1);
  EXPECT_THROW(parse_matrix_text("0 " + half + "\n" + half + " 0\n", "sum.txt", 2), std::invalid_argument)
      << "two entries whose sum passes the limit";
  EXPECT_NO_THROW(parse_matrix_text("0 " + std::to_string(kMaxTotalBytes / 2) + "\n0 0\n", "fits.txt", 2));
  EXPECT_THROW(parse_matrix_text(std::string(matrix_file_bytes(2) + 1, ' '), "long.txt", 2), std::invalid_argument);
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
