// The parameters of a request's query (application/x-www-form-urlencoded), as the routes of
// `vigil serve` read them.
#ifndef VIGIL_SERVER_QUERY_PARAMS_H_
#define VIGIL_SERVER_QUERY_PARAMS_H_

#include <optional>
#include <string>
#include <string_view>

namespace vigil {

// The raw value of "name" in "query" (the target after '?'); nullopt when absent, "" for a
// name without '='. The first of repeated names.
std::optional<std::string_view> QueryParam(std::string_view query, std::string_view name);

// QueryParam's value with its percent-escapes and '+' decoded; nullopt when absent or when an
// escape is malformed.
std::optional<std::string> DecodedQueryParam(std::string_view query, std::string_view name);

}  // namespace vigil

#endif  // VIGIL_SERVER_QUERY_PARAMS_H_
