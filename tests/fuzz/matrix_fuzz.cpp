// libFuzzer target: an alltoallv matrix file (--workload file:PATH). The
// first byte picks the rank count (1..16), the rest is the file's text.
#include <cstdint>
#include <string_view>

#include "comm/workload/matrix_file.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int ranks = 1 + data[0] % 16;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  nestfast::fuzz::expect_clean([&] { (void)nestfast::comm::parse_matrix_file(text, "fuzz.txt", ranks, 1); });
  return 0;
}
