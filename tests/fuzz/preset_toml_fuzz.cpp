// libFuzzer target: a preset file (TOML) read as a model, a GPU and a
// cluster preset, the way `--model FILE.toml` and the job's presets are read.
#include <cstdint>

#include "io/presets/presets.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = nestfast::fuzz::input_file(".toml", data, size);
  nestfast::fuzz::expect_clean([&] { (void)nestfast::io::load_model(path); });
  nestfast::fuzz::expect_clean([&] { (void)nestfast::io::load_gpu(path); });
  nestfast::fuzz::expect_clean([&] { (void)nestfast::io::load_cluster(path); });
  return 0;
}
