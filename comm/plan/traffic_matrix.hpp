#pragma once
// The demand of one alltoallv: D[src][dst] = bytes rank src sends to rank dst,
// N x N, row-major, 64-bit. The buffer layout is the alltoallv one: rank g's
// send buffer holds D[g][0..N) back to back, its receive buffer holds
// D[0..N)[g] back to back, so every byte's position follows from the counts.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nestfast::comm {

// The most bytes one alltoallv may move in all (1 PiB): every sum of the
// plan (rows, columns, server lines, padded stages) stays exact in 64 bits
// and in a double's 53-bit mantissa, where the bounds and the flow model
// compute in seconds.
inline constexpr std::uint64_t kMaxTotalBytes = std::uint64_t{1} << 50;

class TrafficMatrix {
 public:
  TrafficMatrix() = default;
  explicit TrafficMatrix(int ranks);  // all zero
  // Throws std::invalid_argument when bytes.size() != ranks * ranks.
  TrafficMatrix(int ranks, std::vector<std::uint64_t> row_major_bytes);

  int ranks() const noexcept { return ranks_; }
  std::uint64_t operator()(int src, int dst) const { return bytes_[index(src, dst)]; }
  std::uint64_t& operator()(int src, int dst) { return bytes_[index(src, dst)]; }
  std::span<const std::uint64_t> row(int src) const;   // the send counts of src
  const std::vector<std::uint64_t>& row_major() const noexcept { return bytes_; }

  std::uint64_t row_sum(int src) const;   // bytes src sends
  std::uint64_t col_sum(int dst) const;   // bytes dst receives
  std::uint64_t total() const;
  // Throws std::invalid_argument naming `what` when the entries sum to more
  // than kMaxTotalBytes (checked without overflowing).
  void check_total(const std::string& what) const;

  // Offset of block (src, dst) in src's send buffer: sum of D[src][h], h < dst.
  std::vector<std::uint64_t> send_displacements(int src) const;
  // The receive counts of dst (D[g][dst] for every g) and their offsets in its receive buffer.
  std::vector<std::uint64_t> recv_counts(int dst) const;
  std::vector<std::uint64_t> recv_displacements(int dst) const;

  friend bool operator==(const TrafficMatrix&, const TrafficMatrix&) = default;

 private:
  std::size_t index(int src, int dst) const {
    return static_cast<std::size_t>(src) * static_cast<std::size_t>(ranks_) + static_cast<std::size_t>(dst);
  }
  int ranks_ = 0;
  std::vector<std::uint64_t> bytes_;
};

}  // namespace nestfast::comm
