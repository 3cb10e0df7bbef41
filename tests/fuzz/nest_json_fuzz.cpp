// libFuzzer target: a NEST artifact DP input (JSON) through the strict
// reader `nestfast nest-compat` uses, and, when it is valid, the artifact's
// output format read against it.
#include <cstdint>
#include <string_view>

#include "io/nest_json/nest_json.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nestfast::fuzz::expect_clean([&] { (void)nestfast::io::parse_nest_input(text, "fuzz.json"); });
  return 0;
}
