#include "vigil/cases/suspicion_report.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pugixml.hpp"
#include "vigil/core/currency.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cases {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const UtcTime kStart = FromUnixMicros(1'796'032'800'000'000);  // 2026-11-30T10:00:00Z

audit::AuditRecord Record(uint64_t sequence, const std::string& id, const std::string& amount) {
  audit::AuditRecord r;
  r.sequence = sequence;
  r.transaction.id = id;
  r.transaction.event_time = kStart + std::chrono::minutes(sequence);
  r.transaction.originator = {.account_id = "GB29NWBK60161331926819",
                              .name = "Smith & Sons <Ltd>",
                              .bank_id = "NWBKGB2L",
                              .country = "GB"};
  r.transaction.beneficiary = {.account_id = "CY17002001280000001200527600",
                               .name = "Offshore",
                               .bank_id = "BCYPCY2N",
                               .country = "CY"};
  r.transaction.amount = *Money::Parse(amount, *Currency::FromCode("EUR"));
  r.decision.action = Action::kBlock;
  r.decision.score = 0.93;
  r.decision.policy_version = "default@1";
  r.decision.model_version = "model@2";
  r.decision.reasons = {
      {Reason::Kind::kRule, "structuring", "9 payments just below 10,000", 0, false},
      {Reason::Kind::kRule, "quiet", "shadow", 0, true}};
  return r;
}

SuspicionReportInput Input(const Case& c) {
  SuspicionReportInput in;
  in.c = &c;
  in.records = {Record(7, "tx-7", "9500.00"), Record(9, "tx-9", "9800.50")};
  in.amounts_local_micros = {10'260'000'000, 10'584'540'000};
  in.entity = {.rentity_id = "1234", .rentity_branch = "", .currency_local = "USD"};
  in.now = kStart + std::chrono::hours(30);
  CaseEvent e;
  e.kind = CaseEventKind::kClaim;
  e.actor = "token:a";
  e.at = kStart + std::chrono::hours(1);
  in.timeline = {e};
  return in;
}

Case Closed(CaseOutcome outcome) {
  Case c;
  c.id = "case-7";
  c.subject = "GB29NWBK60161331926819";
  c.state = CaseState::kClosed;
  c.outcome = outcome;
  c.rationale = "Structuring below the reporting threshold <script>alert(1)</script>";
  c.closed_by = "token:a";
  c.approved_by = "token:b";
  c.alerts = 2;
  c.blocks = 2;
  return c;
}

TEST(SuspicionReportTest, GoamlXmlHoldsTheReportAndEachTransactionInSchemaOrder) {
  const Case c = Closed(CaseOutcome::kSuspiciousReported);
  ASSERT_OK_AND_ASSIGN(const std::string xml, GoamlReportXml(Input(c)));
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  const pugi::xml_node report = doc.child("report");
  std::vector<std::string> order;
  for (pugi::xml_node n : report.children()) order.push_back(n.name());
  EXPECT_THAT(order, ElementsAre("rentity_id", "submission_code", "report_code", "entity_reference",
                                 "submission_date", "currency_code_local", "reason", "action",
                                 "transaction", "transaction"));
  EXPECT_STREQ(report.child_value("rentity_id"), "1234");
  EXPECT_STREQ(report.child_value("report_code"), "STR");
  EXPECT_STREQ(report.child_value("submission_date"), "2026-12-01T16:00:00");
  EXPECT_THAT(report.child_value("reason"), HasSubstr("<script>"));  // text, escaped in the file
  EXPECT_THAT(xml, HasSubstr("&lt;script&gt;"));
  EXPECT_THAT(report.child_value("action"), HasSubstr("approved by token:b"));
  const pugi::xml_node t = report.child("transaction");
  EXPECT_STREQ(t.child_value("transactionnumber"), "tx-7");
  EXPECT_STREQ(t.child_value("date_transaction"), "2026-11-30T10:07:00");
  EXPECT_STREQ(t.child_value("amount_local"), "10260.00");
  EXPECT_THAT(t.child_value("transaction_description"), HasSubstr("structuring: 9 payments"));
  EXPECT_THAT(t.child_value("transaction_description"), Not(HasSubstr("quiet")));  // shadow
  const pugi::xml_node from = t.child("t_from_my_client").child("from_account");
  EXPECT_STREQ(from.child_value("swift"), "NWBKGB2L");
  EXPECT_STREQ(from.child_value("account"), "GB29NWBK60161331926819");
  EXPECT_STREQ(from.child_value("account_name"), "Smith & Sons <Ltd>");
  EXPECT_STREQ(t.child("t_from_my_client").child_value("from_country"), "GB");
  EXPECT_STREQ(t.child("t_to").child("to_account").child_value("account"),
               "CY17002001280000001200527600");
  EXPECT_STREQ(t.next_sibling("transaction").child_value("amount_local"), "10584.54");
}

TEST(SuspicionReportTest, TheHtmlPageEscapesWhatThePaymentsAndAnalystsWrote) {
  const Case c = Closed(CaseOutcome::kSuspiciousReported);
  ASSERT_OK_AND_ASSIGN(const std::string html, SuspicionReportHtml(Input(c)));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("<script>")));
  EXPECT_THAT(html, HasSubstr("Smith &amp; Sons &lt;Ltd&gt;"));
  EXPECT_THAT(html, HasSubstr("tx-9"));
  EXPECT_THAT(html, HasSubstr("10584.54"));
  EXPECT_THAT(html, HasSubstr("claim by token:a"));
}

TEST(SuspicionReportTest, OnlyASuspiciousClosingHasAReport) {
  for (CaseOutcome o : {CaseOutcome::kFalsePositive, CaseOutcome::kValuableAlert}) {
    const Case c = Closed(o);
    EXPECT_EQ(GoamlReportXml(Input(c)).status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(SuspicionReportHtml(Input(c)).status().code(), absl::StatusCode::kFailedPrecondition);
  }
  Case open = Closed(CaseOutcome::kSuspiciousReported);
  open.state = CaseState::kAwaitingApproval;
  EXPECT_THAT(GoamlReportXml(Input(open)).status().message(), HasSubstr("suspicious_reported"));
}

}  // namespace
}  // namespace vigil::cases
