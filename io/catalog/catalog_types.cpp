#include "io/catalog/catalog_types.hpp"

#include <algorithm>
#include <cstddef>
#include <ctime>

#include "io/catalog/catalog_rows.hpp"

namespace nestfast::io {
namespace {

constexpr int kDeflateLevel = 4;
constexpr hsize_t kRowsPerChunk = 1024;

// Adds one member; `type` is borrowed (a predefined type or a handle the caller keeps).
void member(hid_t compound, const char* name, std::size_t offset, hid_t type) {
  h5_check(H5Tinsert(compound, name, offset, type), std::string("adding member ") + name);
}

}  // namespace

H5Handle fixed_string_type(std::size_t chars) {
  H5Handle type = h5_type(H5Tcopy(H5T_C_S1), "copying the string type");
  h5_check(H5Tset_size(type, chars), "sizing a fixed string");
  h5_check(H5Tset_strpad(type, H5T_STR_NULLTERM), "terminating a fixed string");
  return type;
}

#define NESTFAST_MEMBER(row, field, type) member(compound, #field, offsetof(row, field), type)

H5Handle plan_row_type() {
  H5Handle compound = h5_type(H5Tcreate(H5T_COMPOUND, sizeof(PlanRow)), "creating the plan row type");
  const H5Handle name = fixed_string_type(kNameChars);
  const H5Handle short_text = fixed_string_type(kShortChars);
  const H5Handle order = fixed_string_type(kOrderChars);
  NESTFAST_MEMBER(PlanRow, point_id, H5T_NATIVE_UINT64);
  NESTFAST_MEMBER(PlanRow, model, name);
  NESTFAST_MEMBER(PlanRow, cluster, name);
  NESTFAST_MEMBER(PlanRow, gpus, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, global_batch, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, seq_len, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, kind, short_text);
  NESTFAST_MEMBER(PlanRow, rank_k, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, feasible, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, tp, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, pp, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, dp, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, ep, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, cp, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, sp, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, mbs, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, zero, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, vpp, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(PlanRow, recompute, short_text);
  NESTFAST_MEMBER(PlanRow, placement_order, order);
  const H5Handle arguments = fixed_string_type(kArgumentChars);
  const H5Handle environment = fixed_string_type(kEnvironmentChars);
  NESTFAST_MEMBER(PlanRow, framework, short_text);
  NESTFAST_MEMBER(PlanRow, attention, short_text);
  NESTFAST_MEMBER(PlanRow, overlap, order);
  NESTFAST_MEMBER(PlanRow, megatron_args, arguments);
  NESTFAST_MEMBER(PlanRow, megatron_env, environment);
  NESTFAST_MEMBER(PlanRow, iter_time_s, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(PlanRow, tokens_per_s, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(PlanRow, mfu, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(PlanRow, mem_peak_bytes, H5T_NATIVE_UINT64);
  NESTFAST_MEMBER(PlanRow, stage_offset, H5T_NATIVE_UINT64);
  NESTFAST_MEMBER(PlanRow, stage_count, H5T_NATIVE_UINT64);
  return compound;
}

H5Handle stage_row_type() {
  H5Handle compound = h5_type(H5Tcreate(H5T_COMPOUND, sizeof(StageRow)), "creating the stage row type");
  NESTFAST_MEMBER(StageRow, plan_row, H5T_NATIVE_UINT64);
  NESTFAST_MEMBER(StageRow, stage, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(StageRow, first_layer, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(StageRow, last_layer, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(StageRow, devices, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(StageRow, first_device, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(StageRow, boundary_level, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(StageRow, pipeline_rank, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(StageRow, recompute_layers, H5T_NATIVE_INT32);
  const H5Handle short_text = fixed_string_type(kShortChars);
  NESTFAST_MEMBER(StageRow, recompute, short_text);
  NESTFAST_MEMBER(StageRow, fw_s, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(StageRow, bw_s, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(StageRow, p2p_s, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(StageRow, mem_bytes, H5T_NATIVE_UINT64);
  return compound;
}

H5Handle validation_row_type() {
  H5Handle compound = h5_type(H5Tcreate(H5T_COMPOUND, sizeof(ValidationRow)), "creating the validation row type");
  const H5Handle short_text = fixed_string_type(kShortChars);
  NESTFAST_MEMBER(ValidationRow, plan_row, H5T_NATIVE_UINT64);
  NESTFAST_MEMBER(ValidationRow, algo, short_text);
  NESTFAST_MEMBER(ValidationRow, bytes_per_rank, H5T_NATIVE_UINT64);
  NESTFAST_MEMBER(ValidationRow, servers, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(ValidationRow, gpus_per_server, H5T_NATIVE_INT32);
  NESTFAST_MEMBER(ValidationRow, time_us_min, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(ValidationRow, time_us_avg, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(ValidationRow, time_us_max, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(ValidationRow, algbw, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(ValidationRow, busbw, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(ValidationRow, lb_us, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(ValidationRow, eff, H5T_NATIVE_DOUBLE);
  NESTFAST_MEMBER(ValidationRow, wrong, H5T_NATIVE_UINT64);
  NESTFAST_MEMBER(ValidationRow, predicted_us, H5T_NATIVE_DOUBLE);
  return compound;
}

#undef NESTFAST_MEMBER

H5Handle create_row_table(hid_t parent, const char* name, hid_t type, std::uint64_t rows) {
  const hsize_t dims = rows;
  const hsize_t max_dims = H5S_UNLIMITED;
  const H5Handle space = h5_space(H5Screate_simple(1, &dims, &max_dims), std::string("creating the space of ") + name);
  const H5Handle create = h5_plist(H5Pcreate(H5P_DATASET_CREATE), "creating dataset properties");
  const hsize_t chunk = std::clamp<hsize_t>(rows, 1, kRowsPerChunk);
  h5_check(H5Pset_chunk(create, 1, &chunk), "setting the chunk size");
  h5_check(H5Pset_shuffle(create), "enabling shuffle");
  h5_check(H5Pset_deflate(create, kDeflateLevel), "enabling deflate");
  // A checksum of each stored chunk: a flipped byte makes its read fail instead of giving another value.
  h5_check(H5Pset_fletcher32(create), "enabling the Fletcher32 checksum");
  return h5_dataset(H5Dcreate2(parent, name, type, space, H5P_DEFAULT, create, H5P_DEFAULT),
                    std::string("creating ") + name);
}

std::string preset_link_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (c == '/') c = '_';
  }
  return out == "." || out.empty() ? "_" : out;
}

std::string created_utc_now() {
  char text[32] = {};
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

H5Handle catalog_creation_properties() {
  H5Handle creation = h5_plist(H5Pcreate(H5P_FILE_CREATE), "creating file creation properties");
  h5_check(H5Pset_attr_phase_change(creation, 0, 0), "choosing dense attribute storage");
  return creation;
}

}  // namespace nestfast::io
