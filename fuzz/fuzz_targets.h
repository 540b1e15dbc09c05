// Fuzz targets for vigil's parsers of untrusted input: one function per parser, taking raw bytes.
//
// Each function feeds the bytes to one parser, exercises what it returns, and checks the
// invariants the parser documents (a successful parse yields a non-empty transaction id, ...).
// It must not crash, leak or trip a sanitizer for any input; a broken invariant calls abort()
// through FUZZ_CHECK (fuzz_check.h) so that libFuzzer reports the input as a crash. Every function
// returns 0.
//
// The same functions run under libFuzzer (<name>_fuzzer.cc, VIGIL_FUZZ builds) and in the
// ordinary test suite (fuzz_replay_test replays fuzz/corpus/<name>/ and fuzz/crashes/<name>/).
// docs/fuzzing.md describes the targets and how to run them.
//
// Thread safety: each function keeps a parser in a function-local static, so calls must not run
// concurrently (libFuzzer runs one input at a time per process).
#ifndef VIGIL_FUZZ_FUZZ_TARGETS_H_
#define VIGIL_FUZZ_FUZZ_TARGETS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vigil::fuzz {

// JsonTransactionParser::Parse on the whole input; a parsed transaction must survive a round
// trip through TransactionToJson.
int FuzzJsonTransaction(const uint8_t* data, size_t size);

// AmlworldCsvParser. An input starting with "Timestamp," is a file: its first line is given to
// ForHeader, the rest are records. Any other input is records only, read with the IBM header.
// Records are split at line breaks outside double quotes, as the CSV reader does.
int FuzzAmlworldCsv(const uint8_t* data, size_t size);

// SwiftMtMessage::Parse on the whole input, then the accessors and MtLines on what it returns.
int FuzzSwiftMt(const uint8_t* data, size_t size);

// ParseIso20022 on the whole input: errors are kInvalidArgument or kUnimplemented ("unsupported
// message type ..."); parsed transactions meet transaction.h's invariants and iso20022.h's
// promises (ISO amounts, lower-case UETR as id, agents in role order, checked BICs) and survive
// the JSON round trip; a second parse gives the same transactions.
int FuzzIso20022(const uint8_t* data, size_t size);

// Expression::Compile of the whole input against the default policy's scope (every feature of
// the schema, the string inputs, the default policy's constants and lists); a compiled
// expression is evaluated on a few fixed input rows.
int FuzzPolicyExpression(const uint8_t* data, size_t size);

// One target by its name, the name of its fuzz/corpus/ directory.
struct FuzzTarget {
  std::string_view name;  // "json_transaction", ...
  int (*function)(const uint8_t* data, size_t size);
};
inline constexpr FuzzTarget kFuzzTargets[] = {
    {"json_transaction", FuzzJsonTransaction},
    {"amlworld_csv", FuzzAmlworldCsv},
    {"swift_mt", FuzzSwiftMt},
    {"iso20022", FuzzIso20022},
    {"policy_expression", FuzzPolicyExpression},
};

}  // namespace vigil::fuzz

#endif  // VIGIL_FUZZ_FUZZ_TARGETS_H_
