// The names of an enum's values, as a table of (value, name) pairs: one lookup each way for
// the case event kinds, outcomes and states.
#ifndef VIGIL_CASES_INTERNAL_NAME_TABLE_H_
#define VIGIL_CASES_INTERNAL_NAME_TABLE_H_

#include <optional>
#include <string_view>
#include <utility>

namespace vigil::cases::internal {

template <typename Table, typename Value>
std::string_view NameIn(const Table& table, Value value, std::string_view otherwise) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return otherwise;
}

template <typename Table>
auto ValueIn(const Table& table, std::string_view name)
    -> std::optional<typename Table::value_type::first_type> {
  for (const auto& [v, n] : table) {
    if (n == name) return v;
  }
  return std::nullopt;
}

}  // namespace vigil::cases::internal

#endif  // VIGIL_CASES_INTERNAL_NAME_TABLE_H_
