#pragma once
// What every fuzz target shares: a parser may refuse its input only with the
// std::invalid_argument every bad input gets (or the std::runtime_error of an
// I/O failure), and its message must say something; any other exception, a
// crash, a sanitizer report or a hang is a finding (an uncaught exception
// reaches libFuzzer as an abort). A message may quote the input's bytes,
// newlines included: the one place that prints errors makes them one line
// (jobs/error_line.hpp), so that is not checked here.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

namespace nestfast::fuzz {

inline void expect_message(const char* kind, const std::exception& error) {
  if (error.what()[0] == '\0') {
    std::fprintf(stderr, "fuzz: %s with an empty message\n", kind);
    std::abort();
  }
}

template <typename Parse>
void expect_clean(Parse&& parse) {
  try {
    parse();
  } catch (const std::invalid_argument& error) {
    expect_message("std::invalid_argument", error);
  } catch (const std::runtime_error& error) {
    expect_message("std::runtime_error", error);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fuzz: uncaught %s\n", error.what());
    std::abort();
  }
}

// A file of this process holding `size` bytes (for readers that take a
// path); rewritten on every input and removed when the target exits.
struct InputFile {
  std::string path;
  ~InputFile() { ::unlink(path.c_str()); }
};

inline std::string input_file(const char* suffix, const std::uint8_t* data, std::size_t size) {
  static const InputFile input{"/tmp/nestfast-fuzz-" + std::to_string(::getpid()) + suffix};
  std::FILE* file = std::fopen(input.path.c_str(), "wb");
  if (file == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, file) != size) std::abort();
  std::fclose(file);
  return input.path;
}

}  // namespace nestfast::fuzz
