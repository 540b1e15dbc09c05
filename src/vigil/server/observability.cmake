# observability: W3C trace context and the structured request log of `vigil serve`.
# Included from this folder's CMakeLists.txt.
find_package(spdlog REQUIRED)

vigil_cc_library(
  NAME observability
  SRCS request_log.cc trace_context.cc
  HDRS request_log.h trace_context.h
  DEPS vigil::common absl::random_random absl::status absl::statusor absl::strings
  PRIVATE_DEPS spdlog::spdlog)

if(VIGIL_BUILD_TESTS)
  find_package(nlohmann_json REQUIRED)
endif()

vigil_cc_test(
  NAME observability_test
  SRCS request_log_test.cc trace_context_test.cc
  DEPS vigil::observability absl::flat_hash_set nlohmann_json::nlohmann_json)
