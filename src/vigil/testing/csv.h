// Splitting one line of a CSV file in tests (testdata manifests): commas outside double quotes
// separate fields, "" inside quotes is a quote, a trailing '\r' is dropped.
#ifndef VIGIL_TESTING_CSV_H_
#define VIGIL_TESTING_CSV_H_

#include <string>
#include <string_view>
#include <vector>

namespace vigil::testing {

inline std::vector<std::string> SplitCsvLine(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace vigil::testing

#endif  // VIGIL_TESTING_CSV_H_
