// libFuzzer target: a catalog job file (TOML) through io::parse_job and the
// sweep's expansion, as `nestfast catalog JOB` reads it before any work.
#include <cstdint>
#include <string_view>

#include "io/job/job_file.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nestfast::fuzz::expect_clean([&] {
    const nestfast::io::JobSpec job = nestfast::io::parse_job(text, "fuzz.toml");
    (void)nestfast::io::expand_sweep(job);
  });
  return 0;
}
