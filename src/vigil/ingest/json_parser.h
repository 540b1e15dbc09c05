// JsonTransactionParser: one transaction as a JSON object (vigil's JSON schema) -> Transaction.
//
// The schema (docs/ingest.md has the full reference; examples/transaction.json is a complete
// document):
//
//   {"id": "tx-1", "timestamp": "2022-09-01T00:09:00Z",
//    "originator": {"account_id": "801CA7940", "name": "...", "bank_id": "014433",
//                   "country": "GB"},
//    "beneficiary": {"account_id": "8119D8750"},
//    "amount": {"value": "51.43", "currency": "USD"},
//    "settled_amount": {"value": "47.10", "currency": "EUR"},
//    "payment_format": "credit_card", "channel": "online", "remittance": "invoice 42",
//    "priority": "P1", "label": {"is_laundering": false, "typology": ""}}
//
// Strict: unknown or duplicate fields, wrong JSON types and invalid values are errors; `null`
// counts as absent. Amount values are decimal strings, or JSON numbers read from their source
// digits (never through a binary float). Every error names the JSON path ("$.amount.value") and
// a reason code; a syntax error also gives the byte offset.
//
// Used by the JSON Lines reader and the HTTP server. Parse() reuses the simdjson parser, a padded
// copy buffer and the Transaction's strings: no heap allocation per document in steady state.
//
// Thread safety: externally synchronized (one parser per thread); move-only.
#ifndef VIGIL_INGEST_JSON_PARSER_H_
#define VIGIL_INGEST_JSON_PARSER_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/core/transaction.h"
#include "vigil/ingest/record_error.h"

namespace vigil {

struct JsonParserOptions {
  // RecordError::source of every error.
  std::string source_name = "<request>";
  // Priority of documents without "priority". The API's default is normal traffic.
  Priority default_priority = Priority::kP1;
  // Reject amounts with more decimals than the currency's ISO 4217 minor unit ("12.345" USD,
  // "100.5" JPY); trailing zeros are fine. On for the API. Turn it off to read data converted
  // from AMLworld, whose Yen amounts carry 2 decimals. Non-ISO assets (XBT) are never checked.
  bool enforce_iso_minor_units = true;
};

class JsonTransactionParser {
 public:
  explicit JsonTransactionParser(JsonParserOptions options = {});
  ~JsonTransactionParser();
  JsonTransactionParser(JsonTransactionParser&&) noexcept;
  JsonTransactionParser& operator=(JsonTransactionParser&&) noexcept;

  // Parses one JSON document (surrounding whitespace allowed). On success fills every field of
  // *tx, reusing its storage, and returns true; otherwise fills *error (source, field = JSON path,
  // reason, message, byte_offset for syntax errors; line = 0) and returns false, leaving *tx in
  // an unspecified but valid state. "json" need not be padded or NUL-terminated.
  bool Parse(std::string_view json, Transaction* tx, RecordError* error);

  // Convenience form; errors are RecordError::ToStatus() (InvalidArgument).
  absl::StatusOr<Transaction> Parse(std::string_view json);

  const JsonParserOptions& options() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil

#endif  // VIGIL_INGEST_JSON_PARSER_H_
