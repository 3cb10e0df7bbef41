#include "io/catalog/h5_attributes.hpp"

#include <vector>

#include "io/catalog/catalog_types.hpp"
#include "io/catalog/h5_handle.hpp"

namespace nestfast::io {
namespace {

void write_scalar(hid_t object, const char* name, hid_t type, const void* value) {
  const H5Handle space = h5_space(H5Screate(H5S_SCALAR), "creating a scalar space");
  const H5Handle attribute =
      h5_attribute(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), std::string("creating attribute ") + name);
  h5_check(H5Awrite(attribute, type, value), std::string("writing attribute ") + name);
}

H5Handle open_attribute(hid_t object, const char* name) {
  return h5_attribute(H5Aopen(object, name, H5P_DEFAULT), std::string("opening attribute ") + name);
}

}  // namespace

void write_attribute(hid_t object, const char* name, const std::string& value) {
  const H5Handle type = fixed_string_type(value.size() + 1);  // with its terminating NUL
  write_scalar(object, name, type, value.c_str());
}

void write_attribute(hid_t object, const char* name, std::int64_t value) {
  write_scalar(object, name, H5T_NATIVE_INT64, &value);
}

void write_attribute(hid_t object, const char* name, std::uint64_t value) {
  write_scalar(object, name, H5T_NATIVE_UINT64, &value);
}

void write_attribute(hid_t object, const char* name, double value) {
  write_scalar(object, name, H5T_NATIVE_DOUBLE, &value);
}

bool has_attribute(hid_t object, const char* name) { return H5Aexists(object, name) > 0; }

std::string read_string_attribute(hid_t object, const char* name) {
  const H5Handle attribute = open_attribute(object, name);
  const H5Handle file_type = h5_type(H5Aget_type(attribute), "reading an attribute type");
  if (H5Tget_class(file_type) != H5T_STRING || H5Tis_variable_str(file_type) > 0) {
    throw std::runtime_error(std::string("HDF5: attribute ") + name + " is not a fixed-length string");
  }
  const std::size_t size = H5Tget_size(file_type);
  std::vector<char> buffer(size + 1, '\0');
  const H5Handle memory_type = fixed_string_type(size);
  h5_check(H5Aread(attribute, memory_type, buffer.data()), std::string("reading attribute ") + name);
  return std::string(buffer.data());
}

std::uint64_t read_u64_attribute(hid_t object, const char* name) {
  const H5Handle attribute = open_attribute(object, name);
  std::uint64_t value = 0;
  h5_check(H5Aread(attribute, H5T_NATIVE_UINT64, &value), std::string("reading attribute ") + name);
  return value;
}

std::int64_t read_i64_attribute(hid_t object, const char* name) {
  const H5Handle attribute = open_attribute(object, name);
  std::int64_t value = 0;
  h5_check(H5Aread(attribute, H5T_NATIVE_INT64, &value), std::string("reading attribute ") + name);
  return value;
}

double read_double_attribute(hid_t object, const char* name) {
  const H5Handle attribute = open_attribute(object, name);
  double value = 0;
  h5_check(H5Aread(attribute, H5T_NATIVE_DOUBLE, &value), std::string("reading attribute ") + name);
  return value;
}

}  // namespace nestfast::io
