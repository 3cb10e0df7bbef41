#pragma once
// HDF5 compound types of the catalog's rows (native layout, fixed strings).
#include "io/catalog/h5_handle.hpp"

namespace nestfast::io {

H5Handle fixed_string_type(std::size_t chars);
H5Handle plan_row_type();
H5Handle stage_row_type();
H5Handle validation_row_type();

}  // namespace nestfast::io
