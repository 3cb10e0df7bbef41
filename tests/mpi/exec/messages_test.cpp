// Tags differ per phase and stage while stages fit the tag space, stay
// inside [0, MPI_TAG_UB] beyond it; empty messages are never posted.
#include <gtest/gtest.h>
#include <mpi.h>

#include <set>
#include <utility>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {
namespace {

TEST(PhaseTag, DistinctPerPhaseAndStageAndWithinTheBound) {
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found);
  ASSERT_TRUE(found);
  const int tag_ub = *static_cast<int*>(value);
  std::set<int> seen;
  const TagPhase phases[] = {TagPhase::kIntrinsic, TagPhase::kBalance, TagPhase::kRail, TagPhase::kForward,
                             TagPhase::kPlain};
  for (const TagPhase phase : phases) {
    for (int stage = 0; stage < 2000; ++stage) {
      const int tag = phase_tag(MPI_COMM_WORLD, phase, stage);
      EXPECT_TRUE(seen.insert(tag).second) << "tag " << tag << " repeats";
      EXPECT_GE(tag, 0);
      EXPECT_LE(tag, tag_ub);
    }
  }
  for (const int stage : {tag_ub, tag_ub - 1, 1 << 30}) {
    const int tag = phase_tag(MPI_COMM_WORLD, TagPhase::kForward, stage);
    EXPECT_GE(tag, 0);
    EXPECT_LE(tag, tag_ub);
  }
}

TEST(RequestBatch, EmptyMessagesAreSkippedOnBothSides) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char byte = 'x';
  RequestBatch batch;
  // Nothing is posted, so a wait with no partner returns at once instead of hanging.
  batch.receive(&byte, 0, (rank + 1) % size, 7, MPI_COMM_WORLD);
  batch.send(&byte, 0, (rank + size - 1) % size, 7, MPI_COMM_WORLD);
  batch.wait_all();
  int out = rank, in = -1;
  batch.receive(&in, sizeof in, (rank + size - 1) % size, 8, MPI_COMM_WORLD);
  batch.send(&out, sizeof out, (rank + 1) % size, 8, MPI_COMM_WORLD);
  batch.wait_all();
  EXPECT_EQ(in, (rank + size - 1) % size);
}

}  // namespace
}  // namespace nestfast::comm
