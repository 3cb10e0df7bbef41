# Third-party dependencies. All come from Debian 12 packages (see tests/run.sh).
# FindMPI sets MPI_CXX_LIBRARY_VERSION_STRING only when asked to probe it.
set(MPI_DETERMINE_LIBRARY_VERSION TRUE)
find_package(MPI REQUIRED COMPONENTS C CXX)
if(NOT MPI_CXX_LIBRARY_VERSION_STRING MATCHES "MPICH")
  string(REGEX REPLACE "\n.*" "" mpi_library_first_line "${MPI_CXX_LIBRARY_VERSION_STRING}")
  message(WARNING "nestfast is tested with MPICH; found: ${mpi_library_first_line}")
endif()
find_package(OpenMP REQUIRED COMPONENTS CXX)

set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR
    "nestfast needs a parallel (MPI) HDF5, but the HDF5 found at '${HDF5_INCLUDE_DIRS}' is serial. "
    "Install libhdf5-mpich-dev (Debian) or point HDF5_ROOT / HDF5_C_COMPILER_EXECUTABLE (h5pcc) at a parallel build.")
endif()
# One imported target so consumers do not juggle HDF5's variables.
add_library(nestfast_hdf5 INTERFACE)
target_include_directories(nestfast_hdf5 SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
target_compile_definitions(nestfast_hdf5 INTERFACE ${HDF5_C_DEFINITIONS} ${HDF5_DEFINITIONS})
target_link_libraries(nestfast_hdf5 INTERFACE ${HDF5_C_LIBRARIES} MPI::MPI_C)

find_package(Boost 1.74 REQUIRED COMPONENTS serialization)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()
