// PolicyInputLayout: the names a policy's expressions may use and where a decision puts their
// values. Numbers: every column of the feature schema (slot = column), then the model score.
// Strings: the transaction fields and screening results below.
//
// Thread safety: immutable value type.
#ifndef VIGIL_RULES_POLICY_INPUTS_H_
#define VIGIL_RULES_POLICY_INPUTS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "vigil/core/feature_schema.h"
#include "vigil/rules/expression.h"

namespace vigil {

// String inputs, in slot order. Countries are ISO 3166-1 alpha-2 ("" when unknown), currencies
// ISO 4217 codes, payment_format the JSON name ("wire", "credit_card", ...).
enum class PolicyString : uint32_t {
  kCurrency,            // instructed currency
  kSettledCurrency,     // settled currency (the instructed one when the same)
  kOriginatorCountry,   // orig_country
  kBeneficiaryCountry,  // bene_country
  kOriginatorBank,      // orig_bank: bank code or BIC
  kBeneficiaryBank,     // bene_bank
  kPaymentFormat,
  kChannel,
  kRemittance,
  // The best watchlist hit (docs/screening.md); "" when screening found nothing or did not run.
  kScreeningList,       // screening.list: the list's name ("OFAC SDN")
  kScreeningParty,      // screening.party: "originator", "beneficiary", a bank's role, ...
  kScreeningEntryType,  // screening.entry_type: "individual", "entity", "vessel", "aircraft"
};
inline constexpr uint32_t kNumPolicyStrings = 12;

// Number inputs from watchlist screening, after the model score.
enum class ScreeningNumber : uint32_t {
  kMaxScore,      // screening.max_score: the best hit's score in [0, 1]; 0 when none
  kHitCount,      // screening.hit_count: hits at or above screening's reporting floor
  kByIdentifier,  // screening.by_identifier: 1 when the best hit matched a BIC, IBAN, ...
};
inline constexpr uint32_t kNumScreeningNumbers = 3;

class PolicyInputLayout {
 public:
  explicit PolicyInputLayout(std::shared_ptr<const FeatureSchema> schema);

  const FeatureSchema& schema() const { return *schema_; }
  // Number slots: schema columns, then the model score (a probability; NaN when no model ran),
  // then the screening numbers.
  uint32_t score_slot() const { return static_cast<uint32_t>(schema_->size()); }
  uint32_t screening_slot(ScreeningNumber n) const {
    return score_slot() + 1 + static_cast<uint32_t>(n);
  }
  uint32_t number_count() const { return score_slot() + 1 + kNumScreeningNumbers; }
  // The name of screening number n ("screening.max_score", ...).
  static const char* ScreeningNumberName(ScreeningNumber n);
  static constexpr uint32_t string_count() { return kNumPolicyStrings; }
  // The name of string slot s ("currency", "orig_country", ...).
  static const char* StringName(PolicyString s);

  // Declares every input name in "scope".
  absl::Status AddTo(ExpressionScope& scope) const;

 private:
  std::shared_ptr<const FeatureSchema> schema_;
};

}  // namespace vigil

#endif  // VIGIL_RULES_POLICY_INPUTS_H_
