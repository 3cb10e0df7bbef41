#pragma once
// The nccl-tests alltoallv traffic matrix file (what alltoallv_perf reads from
// NCCL_TESTS_ALLTOALLV_MATRIX_FILE), read by nccl-tests' own rules so that
// one file gives the same bytes in both tools. The rules, from
// NVIDIA/nccl-tests src/alltoallv.cu at v2.19.6 (a0b82b2):
//   - values are whitespace-separated numbers parsed with strtod (so 1e6,
//     1.5e3, +2 and 0x20 are numbers); a token with anything after the
//     number, or out of range, is an error (lines 237-247); a negative value
//     is an error (248-251);
//   - a row ends at a newline that follows at least one value (blank lines
//     are no rows), the last row may lack its newline; every row has the
//     first row's column count (222-269); the matrix must be square and not
//     empty (271-278); cell (i, j) is the bytes rank i sends to rank j;
//   - every value is multiplied by the scale factor
//     (NCCL_TESTS_ALLTOALLV_MATRIX_SCALE, default 1; 163-170), which must not
//     overflow size_t (252-257), then truncated to an integer and rounded down
//     to a multiple of 16 bytes (301, 308);
//   - a matrix larger than the rank count is allowed: ranks use its first
//     N rows and columns (cell i*dim + j, 354-356); a smaller one is an error
//     (344-349).
// nestfast is stricter where nccl-tests is silent: NaN or infinite values,
// and a scale that is not a finite number >= 0 (nccl-tests keeps 1 for an
// unparsable one and takes 0 for a negative one), are errors; every error
// names the file and line; and no matrix moves more than kMaxTotalBytes.
#include <cstdint>
#include <string>
#include <string_view>

#include "comm/plan/traffic_matrix.hpp"

namespace nestfast::comm {

inline constexpr const char* kMatrixFileVariable = "NCCL_TESTS_ALLTOALLV_MATRIX_FILE";
inline constexpr const char* kMatrixScaleVariable = "NCCL_TESTS_ALLTOALLV_MATRIX_SCALE";
inline constexpr std::uint64_t kMatrixAlignment = 16;  // bytes, as nccl-tests
// The largest matrix file read (a 4096 x 4096 matrix of 15-digit values
// fits); the file is read whole by the caller (io/host/files.hpp).
inline constexpr std::uint64_t kMaxMatrixFileBytes = std::uint64_t{256} << 20;

struct MatrixFile {
  int dimension = 0;     // rows (= columns) in the file
  TrafficMatrix demand;  // its first `ranks` rows and columns, scaled and aligned
};

// The file's text -> its first `ranks` rows and columns; std::invalid_argument
// naming `source`:line on any of the errors above. Only those rows and
// columns are kept (the rest is checked as it is read).
MatrixFile parse_matrix_file(std::string_view text, const std::string& source, int ranks, double scale);

// The scale factor as text (the environment variable's or a flag's value):
// a finite number >= 0, else std::invalid_argument naming `what`.
double parse_matrix_scale(const std::string& text, const std::string& what);

// The most bytes one rank sends or receives: the size nccl-tests'
// alltoallv_perf prints in its size column for a matrix (src/common.cu at
// v2.19.6, line 938: max(sendBytes, expectedBytes), which alltoallv.cu's
// AlltoAllvGetCollByteCount sets through AlltoAllvComputeMaxCounts to the
// busiest rank's, lines 370-398) and
// divides by the time for algbw (alltoallv.cu, lines 495-500).
std::uint64_t busiest_rank_bytes(const TrafficMatrix& demand);

}  // namespace nestfast::comm
