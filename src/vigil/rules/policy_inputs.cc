#include "vigil/rules/policy_inputs.h"

#include "vigil/common/status_macros.h"

namespace vigil {

PolicyInputLayout::PolicyInputLayout(std::shared_ptr<const FeatureSchema> schema)
    : schema_(std::move(schema)) {}

const char* PolicyInputLayout::StringName(PolicyString s) {
  switch (s) {
    case PolicyString::kCurrency:
      return "currency";
    case PolicyString::kSettledCurrency:
      return "settled_currency";
    case PolicyString::kOriginatorCountry:
      return "orig_country";
    case PolicyString::kBeneficiaryCountry:
      return "bene_country";
    case PolicyString::kOriginatorBank:
      return "orig_bank";
    case PolicyString::kBeneficiaryBank:
      return "bene_bank";
    case PolicyString::kPaymentFormat:
      return "payment_format";
    case PolicyString::kChannel:
      return "channel";
    case PolicyString::kRemittance:
      return "remittance";
    case PolicyString::kScreeningList:
      return "screening.list";
    case PolicyString::kScreeningParty:
      return "screening.party";
    case PolicyString::kScreeningEntryType:
      return "screening.entry_type";
  }
  return "?";
}

const char* PolicyInputLayout::ScreeningNumberName(ScreeningNumber n) {
  switch (n) {
    case ScreeningNumber::kMaxScore:
      return "screening.max_score";
    case ScreeningNumber::kHitCount:
      return "screening.hit_count";
    case ScreeningNumber::kByIdentifier:
      return "screening.by_identifier";
  }
  return "?";
}

absl::Status PolicyInputLayout::AddTo(ExpressionScope& scope) const {
  for (size_t i = 0; i < schema_->size(); ++i) {
    VIGIL_RETURN_IF_ERROR(scope.AddNumber(schema_->names()[i], static_cast<uint32_t>(i)));
  }
  VIGIL_RETURN_IF_ERROR(scope.AddNumber("score", score_slot()));
  for (uint32_t n = 0; n < kNumScreeningNumbers; ++n) {
    const auto number = static_cast<ScreeningNumber>(n);
    VIGIL_RETURN_IF_ERROR(scope.AddNumber(ScreeningNumberName(number), screening_slot(number)));
  }
  for (uint32_t s = 0; s < kNumPolicyStrings; ++s) {
    VIGIL_RETURN_IF_ERROR(scope.AddString(StringName(static_cast<PolicyString>(s)), s));
  }
  return absl::OkStatus();
}

}  // namespace vigil
