# Finds the Clang that compiles HIP and makes CMake's HIP language accept a
# distribution-packaged HIP (Debian's hipcc / libamdhip64-dev), then leaves
# CMAKE_HIP_COMPILER set, or unset when there is no usable HIP toolchain.
#
# CMake 3.25 wants two things Debian lays out differently from /opt/rocm:
#  - CMAKE_HIP_COMPILER must be Clang itself (not hipcc). Debian's hipcc runs
#    clang++-15, while /usr/bin/clang++ may be another version; we ask
#    hipconfig for the Clang version and directory and pick clang++-<major>.
#  - <ROCm root>/lib/cmake/hip-lang/hip-lang-config.cmake must exist, but
#    Debian installs it under /usr/lib/<multiarch>/cmake/hip-lang. The shim is
#    a prefix in the build tree whose lib/cmake/hip-lang links to the real
#    folder; the real config resolves its own path, so it finds /usr/include.
#  - Debian's clang-15 does not look in /usr for the HIP headers and the
#    device bitcode: --rocm-path and --hip-device-lib-path (what hipcc passes)
#    go into CMAKE_HIP_FLAGS_INIT, so compiler detection works too.
#  - hip-lang's config looks up amd_comgr, whose config is under the multiarch
#    folder too, and CMake's ABI-detection project does not know the multiarch
#    name yet: the environment variable amd_comgr_ROOT points at it.
# On a ROCm install (/opt/rocm) neither is needed and nothing is changed.

function(_nestfast_find_hip_clang out)
  find_program(NESTFAST_HIPCONFIG hipconfig HINTS /opt/rocm/bin)
  if(NOT NESTFAST_HIPCONFIG)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND ${NESTFAST_HIPCONFIG} --hipclangpath OUTPUT_VARIABLE clang_dir
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND ${NESTFAST_HIPCONFIG} --full OUTPUT_VARIABLE full ERROR_QUIET)
  set(names clang++)
  if(full MATCHES "clang version ([0-9]+)")
    set(names clang++-${CMAKE_MATCH_1} clang++)
  endif()
  find_program(NESTFAST_HIP_CLANG NAMES ${names} PATHS "${clang_dir}" NO_DEFAULT_PATH)
  set(${out} "${NESTFAST_HIP_CLANG}" PARENT_SCOPE)
endfunction()

function(_nestfast_hip_rocm_root out)
  set(candidates)
  if(NESTFAST_HIPCONFIG)
    execute_process(COMMAND ${NESTFAST_HIPCONFIG} --rocmpath OUTPUT_VARIABLE rocm
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    list(APPEND candidates "${rocm}")
  endif()
  list(APPEND candidates /opt/rocm)
  foreach(root ${candidates})
    if(EXISTS "${root}/lib/cmake/hip-lang/hip-lang-config.cmake")
      set(${out} "${root}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  # Debian: the package config sits under the multiarch library folder.
  file(GLOB configs /usr/lib/*/cmake/hip-lang/hip-lang-config.cmake)
  if(NOT configs)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  list(GET configs 0 config)
  get_filename_component(real_dir "${config}" DIRECTORY)
  set(shim "${CMAKE_BINARY_DIR}/nestfast-hip-prefix")
  file(MAKE_DIRECTORY "${shim}/lib/cmake")
  if(NOT EXISTS "${shim}/lib/cmake/hip-lang")
    file(CREATE_LINK "${real_dir}" "${shim}/lib/cmake/hip-lang" SYMBOLIC)
  endif()
  set(${out} "${shim}" PARENT_SCOPE)
  file(GLOB comgr_configs /usr/lib/*/cmake/amd_comgr/amd_comgr-config.cmake)
  if(comgr_configs)
    list(GET comgr_configs 0 comgr_config)
    get_filename_component(comgr_dir "${comgr_config}" DIRECTORY)
    set(ENV{amd_comgr_ROOT} "${comgr_dir}")
  endif()
  file(GLOB bitcode /usr/lib/*/amdgcn/bitcode/hip.bc)
  if(bitcode)
    list(GET bitcode 0 bitcode)
    get_filename_component(bitcode_dir "${bitcode}" DIRECTORY)
    set(NESTFAST_HIP_DEBIAN_FLAGS "--rocm-path=/usr --hip-device-lib-path=${bitcode_dir}" PARENT_SCOPE)
  endif()
endfunction()

# Sets CMAKE_HIP_COMPILER (cache) and CMAKE_HIP_COMPILER_ROCM_ROOT when HIP can
# be enabled; prints why not otherwise.
macro(nestfast_prepare_hip_toolchain)
  if(NOT CMAKE_HIP_COMPILER)
    _nestfast_find_hip_clang(_nestfast_hip_clang)
    if(_nestfast_hip_clang)
      set(CMAKE_HIP_COMPILER "${_nestfast_hip_clang}" CACHE FILEPATH "HIP compiler (Clang)")
    endif()
  endif()
  if(CMAKE_HIP_COMPILER AND NOT CMAKE_HIP_COMPILER_ROCM_ROOT)
    _nestfast_hip_rocm_root(_nestfast_rocm_root)
    if(_nestfast_rocm_root)
      set(CMAKE_HIP_COMPILER_ROCM_ROOT "${_nestfast_rocm_root}")
      if(NESTFAST_HIP_DEBIAN_FLAGS)
        string(APPEND CMAKE_HIP_FLAGS_INIT " ${NESTFAST_HIP_DEBIAN_FLAGS}")
      endif()
    else()
      message(STATUS "HIP: ${CMAKE_HIP_COMPILER} found, but no hip-lang CMake package (install libamdhip64-dev)")
      unset(CMAKE_HIP_COMPILER CACHE)
      unset(CMAKE_HIP_COMPILER)
    endif()
  endif()
  if(NOT CMAKE_HIP_COMPILER)
    message(STATUS "HIP: no HIP toolchain (Debian: apt-get install hipcc libamdhip64-dev; ROCm: /opt/rocm)")
  endif()
endmacro()
