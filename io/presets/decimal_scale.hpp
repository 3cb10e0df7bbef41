#pragma once
// A preset's number in its file's unit -> the base unit, as the decimal the
// file wrote: 66.9 TFLOP/s is 66.9e12 FLOP/s exactly as strtod reads
// "66.9e12" (66900000000000), not 66.9 * 1e12 (66900000000000.01 after two
// roundings), and 100 us is 1e-4 s, not 9.999999999999999e-05. So what is
// printed and stored (HDF5 /clusters, presets --json) is what the preset says.
namespace nestfast::io {

// The double nearest value x 10^exponent, where `value` is taken as its
// shortest round-trip decimal (what the TOML file said).
double decimal_scaled(double value, int exponent);

}  // namespace nestfast::io
