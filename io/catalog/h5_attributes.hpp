#pragma once
// Scalar attributes on HDF5 objects (strings are fixed-length), and reading them back.
#include <hdf5.h>

#include <cstdint>
#include <string>

namespace nestfast::io {

void write_attribute(hid_t object, const char* name, const std::string& value);
void write_attribute(hid_t object, const char* name, std::int64_t value);
void write_attribute(hid_t object, const char* name, std::uint64_t value);
void write_attribute(hid_t object, const char* name, double value);
inline void write_attribute(hid_t object, const char* name, int value) {
  write_attribute(object, name, static_cast<std::int64_t>(value));
}
inline void write_attribute(hid_t object, const char* name, const char* value) {
  write_attribute(object, name, std::string(value));
}

bool has_attribute(hid_t object, const char* name);
std::string read_string_attribute(hid_t object, const char* name);
std::uint64_t read_u64_attribute(hid_t object, const char* name);
std::int64_t read_i64_attribute(hid_t object, const char* name);
double read_double_attribute(hid_t object, const char* name);

}  // namespace nestfast::io
