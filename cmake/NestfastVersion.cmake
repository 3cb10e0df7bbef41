# The version and the git commit go into the binary (nestfast --version) and
# into every catalog's root attributes.
find_package(Git QUIET)
set(NESTFAST_GIT_SHA "unknown")
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0)
    set(NESTFAST_GIT_SHA ${sha})
  endif()
endif()

configure_file(${PROJECT_SOURCE_DIR}/cmake/templates/nestfast_version.hpp.in
               ${PROJECT_BINARY_DIR}/generated/nestfast_version.hpp @ONLY)
add_library(nestfast_version INTERFACE)
target_include_directories(nestfast_version INTERFACE ${PROJECT_BINARY_DIR}/generated)
