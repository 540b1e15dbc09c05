// NearestName: the known name a misspelt one most likely meant, for "did you mean" hints in
// error messages (policy names, configuration keys).
#ifndef VIGIL_COMMON_NEAREST_NAME_H_
#define VIGIL_COMMON_NEAREST_NAME_H_

#include <string>
#include <string_view>
#include <vector>

namespace vigil {

// The candidate with the smallest Levenshtein distance to "name", if that distance is at most
// max(2, name.size() / 3); "" when none is that close. Ties: the first candidate.
std::string NearestName(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace vigil

#endif  // VIGIL_COMMON_NEAREST_NAME_H_
