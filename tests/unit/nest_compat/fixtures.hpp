#pragma once
// The 21 NEST reference fixtures, read in place from the shared folder.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace nestfast::test {

inline std::filesystem::path nest_fixture_dir() {
  return std::filesystem::path(NESTFAST_SHARED_DIR) / "fixtures" / "nest-reference";
}

// Fixture names without the .in.json suffix, sorted.
inline std::vector<std::string> nest_fixture_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(nest_fixture_dir())) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".in.json";
    if (file.size() > suffix.size() && file.ends_with(suffix)) names.push_back(file.substr(0, file.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string nest_input_path(const std::string& name) { return (nest_fixture_dir() / (name + ".in.json")).string(); }
inline std::string nest_output_path(const std::string& name) { return (nest_fixture_dir() / (name + ".out.json")).string(); }

}  // namespace nestfast::test
