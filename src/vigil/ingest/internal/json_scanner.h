// A small, strict JSON (RFC 8259) checker that simdjson's error codes are translated through: it
// finds the byte offset and JSON path of the first syntax error (simdjson reports only a code),
// and the exact source text of a scalar at a given path (simdjson's DOM keeps numbers only as
// binary doubles, but amounts must be parsed from the digits that were sent).
//
// It runs only off the hot path: after simdjson has refused a document, or when an amount was
// sent as a JSON number. Private to the ingest module. Thread safety: stateless functions.
#ifndef VIGIL_INGEST_INTERNAL_JSON_SCANNER_H_
#define VIGIL_INGEST_INTERNAL_JSON_SCANNER_H_

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace vigil::ingest_internal {

struct JsonSyntaxError {
  size_t offset = 0;    // byte offset of the offending byte (== size at unexpected end)
  std::string path;     // "$.amount.value": where in the document the error is
  std::string message;  // "expected ',' or '}' after an object member"
};

// Nesting deeper than this is an error (simdjson's default maximum depth).
inline constexpr int kMaxJsonDepth = 1024;

// Checks "text" (one JSON value, surrounded by optional whitespace; strings must be valid UTF-8
// with valid escapes, no raw control characters). Returns the first error, or nullopt.
std::optional<JsonSyntaxError> FindJsonSyntaxError(std::string_view text);

// The raw text of the scalar at "path" (object keys, outermost first) in a document already known
// to be valid JSON: "12.50" for {"amount": {"value": 12.50}} and path {"amount", "value"}.
// Nullopt when the path is absent or names an object/array. Keys are compared as written (escapes
// are not decoded); the first occurrence of a duplicated key wins. Does not allocate.
std::optional<std::string_view> FindRawScalar(std::string_view text,
                                              std::initializer_list<std::string_view> path);

// Appends the JSON path of "key" under "parent" to *out: "$.amount" + "value" -> "$.amount.value";
// keys that are not plain identifiers are quoted: $["odd key"].
void AppendJsonPath(std::string_view parent, std::string_view key, std::string* out);

}  // namespace vigil::ingest_internal

#endif  // VIGIL_INGEST_INTERNAL_JSON_SCANNER_H_
