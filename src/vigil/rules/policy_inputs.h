// PolicyInputLayout: the names a policy's expressions may use and where a decision puts their
// values. Numbers: every column of the feature schema (slot = column), then the model score.
// Strings: the transaction fields below.
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
};
inline constexpr uint32_t kNumPolicyStrings = 9;

class PolicyInputLayout {
 public:
  explicit PolicyInputLayout(std::shared_ptr<const FeatureSchema> schema);

  const FeatureSchema& schema() const { return *schema_; }
  // Number slots: schema columns, then the model score (a probability; NaN when no model ran).
  uint32_t score_slot() const { return static_cast<uint32_t>(schema_->size()); }
  uint32_t number_count() const { return score_slot() + 1; }
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
