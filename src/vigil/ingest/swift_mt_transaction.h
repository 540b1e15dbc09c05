// Reading a SWIFT MT103, MT103 STP, MT202 or MT202COV into a Transaction: the message split
// (swift_mt.h), its type and mandatory fields checked (swift_mt_types.h), then every field vigil
// maps checked for content and mapped. docs/ingest.md ("SWIFT MT") documents the mapping.
//
// Content checks: the SWIFT X character set in every field of block 4 ('{' and '}' excepted:
// FIN interfaces carry them inside a field when the block structure is intact, and refusing a
// payment for them would hide it from screening); :20: and :21: (16x, no leading, trailing or
// double '/'); :23B: (4!c); :26T: (3!c); :32A: (date, ISO 4217 currency, amount with a decimal
// comma and no more decimals than the currency has); :33B:, :71F:, :71G: (currency and amount);
// :36: (rate); :71A: (OUR, BEN or SHA); the BIC of every option A field; the lines of option F party fields (1/ to 8/, 3/ starting with a country code); line counts
// and lengths (35 characters; 4 lines for a party, 6 for :72:, 3 for :77B:); block 3 field 121
// (a UUID). :13C: and the codes inside :70:, :72: and :77B: are not interpreted.
//
// IBANs: an MT account line is any account (34x); the format does not say which are IBANs. An
// account is read as an IBAN (its country becomes the party's) only when it passes CheckIban:
// registry length and check digits. One that has an IBAN's shape but wrong check digits is kept
// as a plain account, not refused: the corpus's valid samples carry such test accounts, and
// refusing a payment would keep it from screening. (ISO 20022 says <IBAN>, and there a bad one
// is refused.)
//
// Errors are kInvalidArgument and name the block, the line, the tag and the reason:
//   SWIFT MT block 4, line 6, field :32A: currency "XYZ" is not an ISO 4217 code
// A message of another type is kUnimplemented ("unsupported message type MT205 ...").
//
// A message read with the network's acknowledgement in front (swift_mt.h, MtAcknowledgement):
// an ACK's reference and time go to the transaction's ack_reference and ack_time; a NAK refuses
// the message, whatever its type and content (kInvalidArgument naming the NAK's error code).
//
// Thread safety: pure functions.
#ifndef VIGIL_INGEST_SWIFT_MT_TRANSACTION_H_
#define VIGIL_INGEST_SWIFT_MT_TRANSACTION_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/core/transaction.h"
#include "vigil/ingest/swift_mt.h"

namespace vigil {

// Maps a split message. On error *out is left partly written.
absl::Status SwiftMtToTransaction(const SwiftMtMessage& message, Transaction* out);

// Splits, checks and maps one message (the whole text).
absl::StatusOr<Transaction> ParseSwiftMt(std::string_view text);

// Whether text looks like a SWIFT MT message: its first character other than white space is
// '{' and the next two are "1:" (the basic header).
bool LooksLikeSwiftMt(std::string_view text);

}  // namespace vigil

#endif  // VIGIL_INGEST_SWIFT_MT_TRANSACTION_H_
