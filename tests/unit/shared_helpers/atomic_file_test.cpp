// write_file_atomically / commit_file: the final name holds the old file or
// the whole new one; failures are one-line errors that leave no temporary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "io/atomic_file/atomic_file.hpp"

namespace nestfast::io {
namespace {

namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nestfast_atomic_file_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {})); }

  fs::path dir_;
};

TEST_F(AtomicFile, ReplacesTheFileAndLeavesNoTemporary) {
  const fs::path target = dir_ / "out.json";
  write_file_atomically(target.string(), "old\n");
  write_file_atomically(target.string(), "new\n");
  EXPECT_EQ(read(target), "new\n");
  EXPECT_EQ(entries(), 1U);
}

TEST_F(AtomicFile, AMissingDirectoryIsABadPathAndWritesNothing) {
  const fs::path target = dir_ / "missing" / "out.json";
  EXPECT_THROW(write_file_atomically(target.string(), "x"), std::invalid_argument);
  EXPECT_EQ(entries(), 0U);
}

TEST_F(AtomicFile, CommitNamesBothPathsWhenTheTemporaryIsGone) {
  const std::string temporary = (dir_ / "gone.partial").string();
  const std::string target = (dir_ / "gone.h5").string();
  try {
    commit_file(temporary, target);
    FAIL() << "committed a file that does not exist";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(temporary), std::string::npos) << message;
    EXPECT_NE(message.find(target), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(target));
}

TEST_F(AtomicFile, CommitMovesAFinishedFile) {
  const fs::path temporary = dir_ / "cat.h5.partial";
  std::ofstream(temporary) << "data";
  commit_file(temporary.string(), (dir_ / "cat.h5").string());
  EXPECT_EQ(read(dir_ / "cat.h5"), "data");
  EXPECT_FALSE(fs::exists(temporary));
}

}  // namespace
}  // namespace nestfast::io
