// libFuzzer target: a catalog file (HDF5) opened and read whole the way
// `nestfast query`, `evaluate --plan` and `merge` read one: attributes, the
// plan records (plans with their stages), validation rows and the stored
// models and clusters.
#include <cstdint>

#include "io/catalog/catalog_reader.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = nestfast::fuzz::input_file(".h5", data, size);
  nestfast::fuzz::expect_clean([&] {
    const nestfast::io::CatalogReader reader(path);
    (void)reader.string_attribute("job");
    for (const nestfast::search::PlanRecord& plan : reader.plan_records()) {
      (void)reader.model(plan.model);
      (void)reader.cluster(plan.cluster);
    }
    (void)reader.validation();
  });
  return 0;
}
