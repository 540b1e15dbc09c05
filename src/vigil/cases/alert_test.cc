#include "vigil/cases/alert.h"

#include <cmath>
#include <optional>

#include "gtest/gtest.h"
#include "vigil/core/currency.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cases {
namespace {

audit::AuditRecord Blocked() {
  audit::AuditRecord r;
  r.decided = FromUnixMicros(1'796'032'800'000'000);
  r.transaction.id = "tx-1";
  r.transaction.event_time = r.decided - std::chrono::seconds(3);
  r.transaction.originator = {"ACC-1", "Jane Roe", "COBADEFFXXX", "DE"};
  r.transaction.beneficiary = {"ACC-2", "Golden Harbour Ltd", "HSBCHKHHHKH", "HK"};
  r.transaction.amount = Money(1'250'050, 2, *Currency::FromCode("EUR"));  // 12,500.50 EUR
  Decision& d = r.decision;
  d.action = Action::kBlock;
  d.score = 0.91;
  d.reasons = {{Reason::Kind::kRule, "structuring", "below threshold", 0, false},
               {Reason::Kind::kRule, "burst", "shadow rule", 0, true},
               {Reason::Kind::kModel, "amount_z", "unusual amount", 0.4, false},
               {Reason::Kind::kScreening, "OFAC:36117", "name 0.93 similar", 0.93, false}};
  return r;
}

TEST(AlertTest, ABlockIsAnAlertWithItsPartiesAmountAndReasons) {
  ASSERT_OK_AND_ASSIGN(
      FxRates fx,
      FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\nEUR,0.8\n", "fx"));
  ASSERT_OK_AND_ASSIGN(std::optional<Alert> alert, AlertOf(Blocked(), 42, &fx));
  ASSERT_TRUE(alert.has_value());
  EXPECT_EQ(alert->sequence, 42u);
  EXPECT_EQ(alert->transaction_id, "tx-1");
  EXPECT_EQ(alert->action, Action::kBlock);
  EXPECT_DOUBLE_EQ(alert->score, 0.91);
  EXPECT_EQ(alert->subject, "ACC-1");
  EXPECT_EQ(alert->counterparty, "ACC-2");
  EXPECT_EQ(alert->subject_name, "Jane Roe");
  EXPECT_EQ(alert->amount.ToString(), Blocked().transaction.amount.ToString());
  EXPECT_EQ(alert->amount_reporting_micros, 15'625'625'000);  // 12,500.50 EUR / 0.8 per USD
  // Rules and list hits; the shadow rule and the model's reason codes are not the alert's.
  EXPECT_EQ(alert->reasons, (std::vector<std::string>{"structuring", "OFAC:36117"}));
  EXPECT_TRUE(alert->screening_hit);
}

TEST(AlertTest, AllowsAndEventsAreNoAlertsAndSealedRecordsAreRefused) {
  audit::AuditRecord allowed = Blocked();
  allowed.decision.action = Action::kAllow;
  ASSERT_OK_AND_ASSIGN(std::optional<Alert> none, AlertOf(allowed, 1, nullptr));
  EXPECT_FALSE(none.has_value());
  audit::AuditRecord event;
  event.event = R"({"source":"drift"})";
  ASSERT_OK_AND_ASSIGN(none, AlertOf(event, 2, nullptr));
  EXPECT_FALSE(none.has_value());
  // Without FX rates the amount in the reporting currency is left out.
  ASSERT_OK_AND_ASSIGN(std::optional<Alert> alert, AlertOf(Blocked(), 3, nullptr));
  EXPECT_EQ(alert->amount_reporting_micros, 0);
  audit::AuditRecord sealed = Blocked();
  sealed.data_key_id = "dk-1";
  sealed.sealed.push_back({});
  absl::StatusOr<std::optional<Alert>> refused = AlertOf(sealed, 4, nullptr);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("sealed under data key dk-1"), std::string::npos);
}

}  // namespace
}  // namespace vigil::cases
