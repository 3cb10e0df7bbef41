#pragma once
// NEST artifact inputs with the artifact's own answers, in three sets read in
// place: the 21 reference fixtures (shared/fixtures/nest-reference), the 79
// generated cases (shared/fixtures/nest-generated) and the oracle cases kept
// with the tests (tests/data/nest-oracle). Each case is NAME.in.json and
// NAME.out.json; see each folder's README for how they were made.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace nestfast::test {

struct NestCaseSet {
  std::string name;
  std::filesystem::path folder;
  std::size_t expected_count;  // what the folder's README lists
};

inline std::vector<NestCaseSet> nest_case_sets() {
  const std::filesystem::path shared = std::filesystem::path(NESTFAST_SHARED_DIR) / "fixtures";
  return {{"reference", shared / "nest-reference", 21},
          {"generated", shared / "nest-generated", 79},
          {"oracle", std::filesystem::path(NESTFAST_SOURCE_DIR) / "tests" / "data" / "nest-oracle", 67}};
}

inline NestCaseSet nest_case_set(const std::string& name) {
  for (auto& set : nest_case_sets()) {
    if (set.name == name) return set;
  }
  return {};
}

struct NestCase {
  std::string name;
  std::string input;   // NAME.in.json
  std::string output;  // NAME.out.json
};

// The set's cases, sorted by name.
inline std::vector<NestCase> nest_cases(const NestCaseSet& set) {
  std::vector<NestCase> cases;
  if (!std::filesystem::is_directory(set.folder)) return cases;
  const std::string suffix = ".in.json";
  for (const auto& entry : std::filesystem::directory_iterator(set.folder)) {
    const std::string file = entry.path().filename().string();
    if (file.size() <= suffix.size() || !file.ends_with(suffix)) continue;
    const std::string name = file.substr(0, file.size() - suffix.size());
    cases.push_back({name, entry.path().string(), (set.folder / (name + ".out.json")).string()});
  }
  std::sort(cases.begin(), cases.end(), [](const NestCase& a, const NestCase& b) { return a.name < b.name; });
  return cases;
}

}  // namespace nestfast::test
