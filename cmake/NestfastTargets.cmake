# Helpers that keep every component's CMakeLists.txt to a line or two.
#
# nestfast_library(<target> UMBRELLA <nestfast_solver|...> [DEPS ...])
#   A static library from the *.cpp of the calling folder (an INTERFACE
#   library when the folder has headers only), registered with its top-level
#   umbrella target. Includes are rooted at the repository: "solver/model/x.hpp".
# nestfast_umbrella(<target>)
#   The INTERFACE target of a top-level folder, linking all its components.
# nestfast_add_component_folders()
#   add_subdirectory() for every direct subfolder holding a CMakeLists.txt.

add_library(nestfast_warnings INTERFACE)
target_compile_options(nestfast_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
if(NESTFAST_SANITIZE)
  target_compile_options(nestfast_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(nestfast_warnings INTERFACE -fsanitize=address,undefined)
endif()
if(NESTFAST_FUZZ)
  # libFuzzer's coverage in every library; the fuzz targets add the driver.
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "NESTFAST_FUZZ needs clang (libFuzzer): configure with the debug preset")
  endif()
  target_compile_options(nestfast_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
endif()

function(nestfast_library target)
  cmake_parse_arguments(ARG "" "UMBRELLA" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(sources)
    add_library(${target} STATIC ${sources})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PUBLIC ${ARG_DEPS} PRIVATE nestfast_warnings)
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} INTERFACE ${ARG_DEPS})
  endif()
  if(ARG_UMBRELLA)
    set_property(GLOBAL APPEND PROPERTY NESTFAST_PARTS_${ARG_UMBRELLA} ${target})
  endif()
endfunction()

function(nestfast_umbrella target)
  add_library(${target} INTERFACE)
  get_property(parts GLOBAL PROPERTY NESTFAST_PARTS_${target})
  target_link_libraries(${target} INTERFACE ${parts})
endfunction()

macro(nestfast_add_component_folders)
  file(GLOB _children LIST_DIRECTORIES true ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT _children)
  foreach(_child ${_children})
    if(IS_DIRECTORY ${_child} AND EXISTS ${_child}/CMakeLists.txt)
      add_subdirectory(${_child})
    endif()
  endforeach()
endmacro()
