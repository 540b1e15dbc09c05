// JSON text helpers shared by the writers of vigil's JSON (transactions, decisions).
#ifndef VIGIL_COMMON_JSON_TEXT_H_
#define VIGIL_COMMON_JSON_TEXT_H_

#include <string>
#include <string_view>

namespace vigil {

// Appends s as a JSON string literal, quotes included, escaped per RFC 8259; bytes that are not
// valid UTF-8 are written as U+FFFD, so the output is always valid JSON.
void AppendJsonString(std::string_view s, std::string* out);

// {"error":{"code":...,"field":...,"message":...}}: the body of every error vigil answers over
// its API (docs/openapi.yaml, Error).
std::string JsonErrorBody(std::string_view code, std::string_view field, std::string_view message);

}  // namespace vigil

#endif  // VIGIL_COMMON_JSON_TEXT_H_
