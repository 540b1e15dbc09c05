// Transaction: one payment, normalized from whatever format it arrived in (JSON, AMLworld CSV,
// later SWIFT MT and ISO 20022). Every later stage (features, rules, model, audit) sees only this.
//
// Invariants after a successful parse (ingest enforces them; later stages rely on them):
//  - id is non-empty: the idempotency key (a repeated id is the same payment);
//  - originator.account_id and beneficiary.account_id are non-empty;
//  - amount has a known currency; settled_amount, when present, too.
//
// Thread safety: plain value type.
#ifndef VIGIL_CORE_TRANSACTION_H_
#define VIGIL_CORE_TRANSACTION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vigil/common/clock.h"
#include "vigil/core/money.h"

namespace vigil {

// A payer or payee. Fields other than account_id may be empty when the source lacks them
// (AMLworld CSV has no names or countries).
struct Party {
  std::string account_id;
  std::string name;
  std::string bank_id;  // bank code or BIC
  std::string country;  // ISO 3166-1 alpha-2, upper case; empty when unknown

  friend bool operator==(const Party&, const Party&) = default;
};

// Scheduling class: P0 urgent (SWIFT priority U), P1 normal (default), P2 bulk (replays, backfills).
enum class Priority : uint8_t { kP0 = 0, kP1 = 1, kP2 = 2 };

// How the payment moves. The integer codes are stable: features export them (payment_format).
enum class PaymentFormat : uint8_t {
  kUnknown = 0,
  kAch = 1,
  kBitcoin = 2,
  kCash = 3,
  kCheque = 4,
  kCreditCard = 5,
  kReinvestment = 6,
  kWire = 7,
};
inline constexpr int kNumPaymentFormats = 8;

// Ground truth carried by labelled sources (AMLworld "Is Laundering", vigil gen "Typology").
// Used for training and evaluation only; never an input to a decision.
struct Label {
  bool is_laundering = false;
  std::string typology;  // empty for normal traffic or when the source does not say
  friend bool operator==(const Label&, const Label&) = default;
};

struct Transaction {
  std::string id;
  UtcTime event_time{};  // when the payment happened (event time), UTC, microseconds
  Party originator;
  Party beneficiary;
  Money amount;                          // instructed amount, originator side
  std::optional<Money> settled_amount;   // received/settled amount when it differs
  PaymentFormat payment_format = PaymentFormat::kUnknown;
  std::string channel;                   // free text: "online", "branch", "api", ...
  std::string remittance;                // remittance information (:70:, RmtInf/Ustrd)
  Priority priority = Priority::kP1;
  std::optional<Label> label;

  friend bool operator==(const Transaction&, const Transaction&) = default;
};

absl::string_view PaymentFormatName(PaymentFormat f);  // "ACH", "Credit Card", ...
// Accepts the AMLworld names ("Credit Card") and snake-case JSON names ("credit_card").
absl::StatusOr<PaymentFormat> ParsePaymentFormat(absl::string_view name);
absl::string_view PaymentFormatJsonName(PaymentFormat f);  // "credit_card"

absl::string_view PriorityName(Priority p);  // "P0", "P1", "P2"
absl::StatusOr<Priority> ParsePriority(absl::string_view name);

// Formats an event time as RFC 3339 UTC with microseconds: "2022-09-01T00:09:00.000000Z".
std::string FormatUtc(UtcTime t);
// Parses RFC 3339 ("2022-09-01T00:09:00Z", fractional seconds up to 6 digits, 'Z' or +hh:mm).
absl::StatusOr<UtcTime> ParseRfc3339(absl::string_view text);

}  // namespace vigil

#endif  // VIGIL_CORE_TRANSACTION_H_
