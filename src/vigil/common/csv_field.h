// CsvField: one field of a CSV row as RFC 4180 writes it: as is, or quoted (quotes doubled) when
// it holds a comma, a quote or a line break. What vigil's CSV writers (replay's decisions, the
// cases' labelled rows) put between commas.
//
// Thread safety: a pure function.
#ifndef VIGIL_COMMON_CSV_FIELD_H_
#define VIGIL_COMMON_CSV_FIELD_H_

#include <string>
#include <string_view>

namespace vigil {

std::string CsvField(std::string_view value);

}  // namespace vigil

#endif  // VIGIL_COMMON_CSV_FIELD_H_
