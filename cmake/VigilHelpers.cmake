# One CMake target per module, with explicit dependencies (the module table,
# src/vigil/modules.tsv, which the `layering` test checks every #include against).
#
#   vigil_cc_library(NAME core SRCS money.cc ... HDRS money.h ... DEPS vigil::common absl::status
#                    PRIVATE_DEPS yaml-cpp)
# DEPS are linked PUBLIC (its headers include theirs); PRIVATE_DEPS only its .cc files use.
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
  cmake_parse_arguments(V "" "NAME" "SRCS;HDRS;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target vigil_${V_NAME})
  if(V_SRCS)
    add_library(${target} STATIC ${V_SRCS} ${V_HDRS})
    target_include_directories(${target} PUBLIC "${PROJECT_SOURCE_DIR}/src" "${PROJECT_BINARY_DIR}/src")
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${VIGIL_WARNINGS}>")
    target_link_libraries(${target} PUBLIC ${V_DEPS})
    # Libraries only the module's .cc files include: its users neither see their headers nor
    # depend on them (the static library still brings them to the final link).
    target_link_libraries(${target} PRIVATE ${V_PRIVATE_DEPS})
  else()
    add_library(${target} INTERFACE ${V_HDRS})
    target_include_directories(${target} INTERFACE "${PROJECT_SOURCE_DIR}/src" "${PROJECT_BINARY_DIR}/src")
    target_link_libraries(${target} INTERFACE ${V_DEPS})
  endif()
  add_library(vigil::${V_NAME} ALIAS ${target})
endfunction()

# Every test has one of four labels (VIGIL_TEST_LABELS):
#   unit     in process: no child process, no socket, nothing outside the build (the default)
#   process  starts the vigil binary, another program or a forked child, or a server on a socket
#   oracle   checks against an independent implementation or third-party data: python3-xgboost,
#            SciPy, scikit-learn, the openssl or curl command line, or the reference outputs and
#            samples under testdata/; it is an oracle test whatever else it starts
#   long     minutes of work
# `make test-fast` runs unit, `make test` all but long, `make test-long` long.
set(VIGIL_TEST_LABELS unit process oracle long)

# vigil_cc_test(NAME n SRCS ... DEPS ... [LABELS label] [ORACLE tests...] [PROCESS tests...]
#               [UNIT tests...])
# LABELS is the label of the target's tests (default unit); ORACLE, PROCESS and UNIT name those
# that have another, as "Suite" (all its tests) or "Suite.Test", '*' allowed, parameterised
# names matched under their prefix and suffix too. A test named twice takes the first of
# oracle, process, unit. A long target is long throughout.
function(vigil_cc_test)
  if(NOT VIGIL_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(V "" "NAME;LABELS" "SRCS;DEPS;ORACLE;PROCESS;UNIT" ${ARGN})
  if(NOT V_LABELS)
    set(V_LABELS unit)
  endif()
  if(NOT V_LABELS IN_LIST VIGIL_TEST_LABELS)
    message(FATAL_ERROR
            "vigil_cc_test(${V_NAME}): LABELS is one of ${VIGIL_TEST_LABELS}, not '${V_LABELS}'")
  endif()
  if(V_LABELS STREQUAL "long" AND (V_ORACLE OR V_PROCESS OR V_UNIT))
    message(FATAL_ERROR "vigil_cc_test(${V_NAME}): a long target is long throughout")
  endif()
  add_executable(${V_NAME} ${V_SRCS})
  target_compile_options(${V_NAME} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${VIGIL_WARNINGS}>")
  target_link_libraries(${V_NAME} PRIVATE ${V_DEPS} vigil::testing GTest::gmock GTest::gtest_main)
  # One discovery per label with a GoogleTest filter; its negative part leaves out the tests an
  # earlier label took, so that each test is discovered once.
  set(taken "")
  foreach(label IN ITEMS oracle process unit)
    string(TOUPPER "${label}" key)
    if(V_${key})
      _vigil_gtest_patterns(mine ${V_${key}})
      _vigil_discover_tests(${V_NAME} ${label} "${mine}" "${taken}")
      list(APPEND taken "${mine}")
    endif()
  endforeach()
  _vigil_discover_tests(${V_NAME} ${V_LABELS} "*" "${taken}")
endfunction()

# The GoogleTest filter patterns for vigil_cc_test's test names, joined by ':' into "out".
function(_vigil_gtest_patterns out)
  set(patterns "")
  foreach(name IN LISTS ARGN)
    if(name MATCHES "\\.")
      list(APPEND patterns "${name}" "*/${name}/*")        # Prefix/Suite.Test/Param
    else()
      list(APPEND patterns "${name}.*" "*/${name}.*" "${name}/*")  # and TypedSuite/0.Test
    endif()
  endforeach()
  list(JOIN patterns ":" joined)
  set(${out} "${joined}" PARENT_SCOPE)
endfunction()

# Registers the tests of "target" that match "include" and no pattern of the list "exclude",
# with "label".
function(_vigil_discover_tests target label include exclude)
  set(filter "${include}")
  if(exclude)
    list(JOIN exclude ":" excluded)
    string(APPEND filter "-${excluded}")
  endif()
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 TEST_FILTER "${filter}"
                       PROPERTIES ENVIRONMENT "VIGIL_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
                                  LABELS ${label})
endfunction()

# Benchmarks are smoke-run once by ctest (labels unit and benchmark); they are measured with
# `make bench`.
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
    set_tests_properties(${V_NAME}.smoke PROPERTIES LABELS "unit;benchmark"
                         ENVIRONMENT "VIGIL_SOURCE_DIR=${PROJECT_SOURCE_DIR};VIGIL_BENCH_SMOKE=1")
  endif()
endfunction()

# A test outside vigil_cc_test and vigil_cc_benchmark must set its label itself; this one fails
# when any has none of VIGIL_TEST_LABELS.
if(VIGIL_BUILD_TESTS)
  list(JOIN VIGIL_TEST_LABELS "|" _vigil_labels)
  add_test(NAME every_test_has_a_label
           COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${PROJECT_BINARY_DIR} -N
                   -LE "^(${_vigil_labels})$")
  set_tests_properties(every_test_has_a_label PROPERTIES LABELS unit
                       PASS_REGULAR_EXPRESSION "Total Tests: 0\n")
endif()
