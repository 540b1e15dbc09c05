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
#include <vector>

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
  // Postal address as free-text lines (MT 50K/59 lines after the name, ISO 20022 PstlAdr),
  // without the name; empty when the source has none.
  std::vector<std::string> address;

  friend bool operator==(const Party&, const Party&) = default;
};

// The part a bank plays in a payment's chain (SWIFT MT field / ISO 20022 element).
enum class AgentRole : uint8_t {
  kInstructing = 0,           // the sender of the message (MT block 1/2, InstgAgt)
  kInstructed = 1,            // its receiver (InstdAgt)
  kOrderingInstitution = 2,   // the originator's bank (52a, DbtrAgt)
  kSendersCorrespondent = 3,  // 53a
  kReceiversCorrespondent = 4,  // 54a
  kReimbursement = 5,         // third reimbursement institution (55a)
  kIntermediary = 6,          // 56a, IntrmyAgt1
  kAccountWithInstitution = 7,  // the beneficiary's bank (57a, CdtrAgt)
  kBeneficiaryInstitution = 8,  // the institution paid by a bank transfer (MT202 58a, Cdtr)
};
inline constexpr int kNumAgentRoles = 9;

// A bank in the payment's chain. bic or name (and account_id, the account the message names
// at that bank) as the source gives them; country from the BIC when it has one.
struct Agent {
  AgentRole role = AgentRole::kInstructing;
  std::string bic;
  std::string account_id;
  std::string name;
  std::string country;

  friend bool operator==(const Agent&, const Agent&) = default;
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

  // From payment messages (SWIFT MT, ISO 20022); empty when the source does not carry them.
  std::string message_type;   // "MT103", "MT202COV", "pacs.008.001.08", ...
  std::string reference;      // the sender's reference (:20:, EndToEndId)
  std::string uetr;           // unique end-to-end transaction reference (a UUID, lower case)
  std::string value_date;     // interbank settlement date, YYYY-MM-DD
  std::string charges;        // who bears the charges: "OUR", "BEN" or "SHA"
  std::string purpose;        // purpose or transaction type code (Purp/Cd, :26T:)
  std::vector<Agent> agents;  // the banks of the chain, in message order
  std::optional<Party> ultimate_originator;   // UltmtDbtr
  std::optional<Party> ultimate_beneficiary;  // UltmtCdtr
  // A SWIFT MT message read with the network's acknowledgement (ACK) in front: the message input
  // reference the ACK gives it (28 characters) and the ACK's date and time ({177:}, RFC 3339).
  std::string ack_reference;
  std::string ack_time;

  friend bool operator==(const Transaction&, const Transaction&) = default;
};

absl::string_view PaymentFormatName(PaymentFormat f);  // "ACH", "Credit Card", ...
// Accepts the AMLworld names ("Credit Card") and snake-case JSON names ("credit_card").
absl::StatusOr<PaymentFormat> ParsePaymentFormat(absl::string_view name);
absl::string_view PaymentFormatJsonName(PaymentFormat f);  // "credit_card"

absl::string_view PriorityName(Priority p);  // "P0", "P1", "P2"

// "instructing", "ordering_institution", "intermediary", ... (JSON and docs/ingest.md).
absl::string_view AgentRoleName(AgentRole role);
absl::StatusOr<AgentRole> ParseAgentRole(absl::string_view name);
absl::StatusOr<Priority> ParsePriority(absl::string_view name);

// Formats an event time as RFC 3339 UTC with microseconds: "2022-09-01T00:09:00.000000Z".
std::string FormatUtc(UtcTime t);
// Parses RFC 3339 ("2022-09-01T00:09:00Z", fractional seconds up to 6 digits, 'Z' or +hh:mm).
absl::StatusOr<UtcTime> ParseRfc3339(absl::string_view text);

}  // namespace vigil

#endif  // VIGIL_CORE_TRANSACTION_H_
