// JSON text helpers shared by the writers of vigil's JSON (transactions, decisions).
#ifndef VIGIL_COMMON_JSON_TEXT_H_
#define VIGIL_COMMON_JSON_TEXT_H_

#include <string>
#include <string_view>

namespace vigil {

// Appends s as a JSON string literal, quotes included, escaped per RFC 8259; bytes that are not
// valid UTF-8 are written as U+FFFD, so the output is always valid JSON.
void AppendJsonString(std::string_view s, std::string* out);

}  // namespace vigil

#endif  // VIGIL_COMMON_JSON_TEXT_H_
