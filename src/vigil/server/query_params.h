// The parameters of a request's query (application/x-www-form-urlencoded), as the routes of
// `vigil serve` read them.
#ifndef VIGIL_SERVER_QUERY_PARAMS_H_
#define VIGIL_SERVER_QUERY_PARAMS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil {

// The raw value of "name" in "query" (the target after '?'); nullopt when absent, "" for a
// name without '='. The first of repeated names.
std::optional<std::string_view> QueryParam(std::string_view query, std::string_view name);

// QueryParam's value with its percent-escapes and '+' decoded; nullopt when absent or when an
// escape is malformed.
std::optional<std::string> DecodedQueryParam(std::string_view query, std::string_view name);

// The whole number "name" in "query": nullopt when absent; kInvalidArgument ("'name' must be a
// whole number") when it is not one.
absl::StatusOr<std::optional<uint64_t>> WholeNumberParam(std::string_view query,
                                                         std::string_view name);

}  // namespace vigil

#endif  // VIGIL_SERVER_QUERY_PARAMS_H_
