// libFuzzer target: a catalog file (HDF5) opened and read whole the way
// `nestfast query` and `merge` read one: attributes, plans, each plan's
// stages, validation rows and the stored models.
#include <cstdint>

#include "io/catalog/catalog_reader.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = nestfast::fuzz::input_file(".h5", data, size);
  nestfast::fuzz::expect_clean([&] {
    const nestfast::io::CatalogReader reader(path);
    (void)reader.string_attribute("job");
    for (const nestfast::io::PlanRow& plan : reader.plans()) {
      (void)reader.stages(plan.stage_offset, plan.stage_count);
      (void)reader.model(nestfast::io::get_fixed(plan.model));
      (void)reader.gpu_hbm_bytes(nestfast::io::get_fixed(plan.cluster));
    }
    (void)reader.validation();
  });
  return 0;
}
