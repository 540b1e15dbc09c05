# One CMake target per module, with explicit dependencies (DESIGN.md's module table).
#
#   vigil_cc_library(NAME core SRCS money.cc ... HDRS money.h ... DEPS vigil::common absl::status)
#   vigil_cc_test(NAME money_test SRCS money_test.cc DEPS vigil::core)
#   vigil_cc_benchmark(NAME csv_parser_benchmark SRCS csv_parser_benchmark.cc DEPS vigil::ingest)
#
# Project code compiles with these warnings (C++ sources; CUDA sources take nvcc's own options),
# as errors when VIGIL_WERROR is on (the presets); third-party headers are SYSTEM includes.

set(VIGIL_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wimplicit-fallthrough
                   -Wno-missing-field-initializers)
if(VIGIL_WERROR)
  list(APPEND VIGIL_WARNINGS -Werror)
endif()

function(vigil_cc_library)
  cmake_parse_arguments(V "" "NAME" "SRCS;HDRS;DEPS" ${ARGN})
  set(target vigil_${V_NAME})
  if(V_SRCS)
    add_library(${target} STATIC ${V_SRCS} ${V_HDRS})
    target_include_directories(${target} PUBLIC "${PROJECT_SOURCE_DIR}/src" "${PROJECT_BINARY_DIR}/src")
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${VIGIL_WARNINGS}>")
    target_link_libraries(${target} PUBLIC ${V_DEPS})
  else()
    add_library(${target} INTERFACE ${V_HDRS})
    target_include_directories(${target} INTERFACE "${PROJECT_SOURCE_DIR}/src" "${PROJECT_BINARY_DIR}/src")
    target_link_libraries(${target} INTERFACE ${V_DEPS})
  endif()
  add_library(vigil::${V_NAME} ALIAS ${target})
endfunction()

function(vigil_cc_test)
  if(NOT VIGIL_BUILD_TESTS)
    return()
  endif()
  # LABELS long: excluded from `make test`, run by `make test-long`.
  cmake_parse_arguments(V "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${V_NAME} ${V_SRCS})
  target_compile_options(${V_NAME} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${VIGIL_WARNINGS}>")
  target_link_libraries(${V_NAME} PRIVATE ${V_DEPS} vigil::testing GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${V_NAME} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "VIGIL_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
                                  LABELS "${V_LABELS}")
endfunction()

# Benchmarks are smoke-run once by ctest (label "benchmark"); they are measured with `make bench`.
function(vigil_cc_benchmark)
  if(NOT VIGIL_BUILD_BENCHMARKS)
    return()
  endif()
  cmake_parse_arguments(V "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${V_NAME} ${V_SRCS})
  target_compile_options(${V_NAME} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${VIGIL_WARNINGS}>")
  target_link_libraries(${V_NAME} PRIVATE ${V_DEPS} benchmark::benchmark)
  set_property(GLOBAL APPEND PROPERTY VIGIL_BENCHMARKS ${V_NAME})
  if(VIGIL_BUILD_TESTS)
    add_test(NAME ${V_NAME}.smoke COMMAND ${V_NAME} --benchmark_min_time=0.01)
    set_tests_properties(${V_NAME}.smoke PROPERTIES LABELS benchmark
                         ENVIRONMENT "VIGIL_SOURCE_DIR=${PROJECT_SOURCE_DIR};VIGIL_BENCH_SMOKE=1")
  endif()
endfunction()
