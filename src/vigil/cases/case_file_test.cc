#include "vigil/cases/case_file.h"

#include <chrono>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/core/currency.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cases {
namespace {

using ::testing::HasSubstr;

const UtcTime kStart = FromUnixMicros(1'796'032'800'000'000);

Alert MakeAlert(uint64_t sequence, Action action, double score, std::chrono::hours after = {}) {
  Alert a;
  a.sequence = sequence;
  a.transaction_id = "tx-" + std::to_string(sequence);
  a.event_time = kStart + after;
  a.decided = a.event_time + std::chrono::seconds(1);
  a.action = action;
  a.score = score;
  a.subject = "ACC-1";
  a.counterparty = "ACC-2";
  a.amount = Money(500'000, 2, *Currency::FromCode("USD"));
  a.amount_reporting_micros = 5'000'000'000;
  a.reasons = {"structuring"};
  return a;
}

CaseEvent Event(CaseEventKind kind, const std::string& actor, const std::string& text = "",
                CaseOutcome outcome = CaseOutcome::kNone) {
  CaseEvent e;
  e.kind = kind;
  e.case_id = "case-1";
  e.actor = actor;
  e.at = kStart + std::chrono::hours(2);
  e.text = text;
  e.outcome = outcome;
  return e;
}

// Applies "e" after checking it: the check's status.
absl::Status Do(Case& c, const CaseEvent& e, CaseRole role = CaseRole::kAnalyst) {
  absl::Status s = CheckCaseEvent(c, e, role);
  if (s.ok()) ApplyCaseEvent(c, e);
  return s;
}

TEST(CaseFileTest, AlertsOfASubjectJoinItsCaseWithinTheWindow) {
  const CasePolicy policy;  // 30 days
  Case c = OpenCase(MakeAlert(1, Action::kReview, 0.4));
  EXPECT_EQ(c.id, "case-1");
  EXPECT_EQ(c.state, CaseState::kOpen);
  Alert second = MakeAlert(5, Action::kBlock, 0.9, std::chrono::hours(24 * 10));
  second.reasons = {"structuring", "OFAC:1"};
  second.screening_hit = true;
  ASSERT_TRUE(Accepts(c, second, policy));
  AddAlert(c, second);
  EXPECT_EQ(c.alerts, 2u);
  EXPECT_EQ(c.blocks, 1u);
  EXPECT_EQ(c.screening_hits, 1u);
  EXPECT_DOUBLE_EQ(c.max_score, 0.9);
  EXPECT_EQ(c.amount_reporting_micros, 10'000'000'000);
  EXPECT_EQ(c.reasons, (std::vector<std::string>{"structuring", "OFAC:1"}));
  EXPECT_EQ(c.last_payment, second.event_time);
  EXPECT_EQ(c.last_sequence, 5u);
  // Past the window, another subject, or a closed case: not this case.
  EXPECT_FALSE(Accepts(c, MakeAlert(6, Action::kReview, 0.5, std::chrono::hours(24 * 31)), policy));
  Alert other = MakeAlert(7, Action::kReview, 0.5);
  other.subject = "ACC-9";
  EXPECT_FALSE(Accepts(c, other, policy));
  c.state = CaseState::kClosed;
  EXPECT_FALSE(Accepts(c, MakeAlert(8, Action::kReview, 0.5), policy));
}

TEST(CaseFileTest, AClaimedCaseIsLockedToItsHolder) {
  Case c = OpenCase(MakeAlert(1, Action::kReview, 0.4));
  ASSERT_OK(Do(c, Event(CaseEventKind::kClaim, "alice")));
  EXPECT_EQ(c.state, CaseState::kInReview);
  EXPECT_EQ(c.owner, "alice");
  EXPECT_THAT(Do(c, Event(CaseEventKind::kClaim, "bob")).message(),
              HasSubstr("case case-1 is in_review (held by alice): release or reassign it first"));
  EXPECT_EQ(Do(c, Event(CaseEventKind::kNote, "bob", "looks odd")).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Do(c, Event(CaseEventKind::kClose, "bob", "fine", CaseOutcome::kFalsePositive)).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Do(c, Event(CaseEventKind::kRelease, "bob")).code(),
            absl::StatusCode::kFailedPrecondition);
  // A supervisor may add a note to a held case, and reassign it; an analyst may not assign.
  ASSERT_OK(Do(c, Event(CaseEventKind::kNote, "sue", "check the invoices"), CaseRole::kSupervisor));
  EXPECT_EQ(c.notes, 1u);
  CaseEvent assign = Event(CaseEventKind::kAssign, "alice");
  assign.assignee = "bob";
  EXPECT_EQ(Do(c, assign).code(), absl::StatusCode::kPermissionDenied);
  assign.actor = "sue";
  ASSERT_OK(Do(c, assign, CaseRole::kSupervisor));
  EXPECT_EQ(c.owner, "bob");
  EXPECT_EQ(c.state, CaseState::kInReview);
  ASSERT_OK(Do(c, Event(CaseEventKind::kRelease, "bob")));
  EXPECT_EQ(c.state, CaseState::kOpen);
  EXPECT_TRUE(c.owner.empty());
  EXPECT_EQ(Do(c, Event(CaseEventKind::kNote, "carol")).code(),
            absl::StatusCode::kInvalidArgument);  // a note needs its text
}

TEST(CaseFileTest, EscalatedCasesAreTheSupervisorsAndClosingsNeedARationale) {
  Case c = OpenCase(MakeAlert(1, Action::kReview, 0.4));
  ASSERT_OK(Do(c, Event(CaseEventKind::kClaim, "alice")));
  EXPECT_EQ(Do(c, Event(CaseEventKind::kEscalate, "alice")).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_OK(Do(c, Event(CaseEventKind::kEscalate, "alice", "a PEP may be involved")));
  EXPECT_EQ(c.state, CaseState::kEscalated);
  EXPECT_TRUE(c.owner.empty());
  EXPECT_EQ(Do(c, Event(CaseEventKind::kClaim, "bob")).code(), absl::StatusCode::kPermissionDenied);
  ASSERT_OK(Do(c, Event(CaseEventKind::kClaim, "sue"), CaseRole::kSupervisor));
  EXPECT_EQ(c.state, CaseState::kEscalated);
  EXPECT_EQ(c.owner, "sue");
  EXPECT_EQ(Do(c, Event(CaseEventKind::kClose, "sue", "", CaseOutcome::kNotSuspicious)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Do(c, Event(CaseEventKind::kClose, "sue", "why")).code(),
            absl::StatusCode::kInvalidArgument);  // no outcome
  ASSERT_OK(Do(c, Event(CaseEventKind::kClose, "sue", "the PEP link is a namesake",
                        CaseOutcome::kNotSuspicious)));
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(c.outcome, CaseOutcome::kNotSuspicious);
  EXPECT_EQ(c.closed_by, "sue");
  EXPECT_EQ(c.closed_at, kStart + std::chrono::hours(2));
  EXPECT_EQ(Do(c, Event(CaseEventKind::kClaim, "alice")).code(),
            absl::StatusCode::kFailedPrecondition);
  // Reopened by a supervisor only, with a reason: back in the queue, its outcome gone.
  EXPECT_EQ(Do(c, Event(CaseEventKind::kReopen, "alice", "new payments")).code(),
            absl::StatusCode::kPermissionDenied);
  ASSERT_OK(Do(c, Event(CaseEventKind::kReopen, "sue", "new payments"), CaseRole::kSupervisor));
  EXPECT_EQ(c.state, CaseState::kOpen);
  EXPECT_EQ(c.outcome, CaseOutcome::kNone);
  EXPECT_EQ(c.reopened, 1u);
}

TEST(CaseFileTest, FourEyesASecondAnalystApprovesOrRejectsTheClosing) {
  const CasePolicy policy;
  Case c = OpenCase(MakeAlert(1, Action::kBlock, 0.9));
  EXPECT_TRUE(NeedsSecondAnalyst(c, CaseOutcome::kFalsePositive, policy));  // a BLOCK
  Case review = OpenCase(MakeAlert(2, Action::kReview, 0.5));
  EXPECT_FALSE(NeedsSecondAnalyst(review, CaseOutcome::kFalsePositive, policy));
  EXPECT_TRUE(NeedsSecondAnalyst(review, CaseOutcome::kSuspiciousReported, policy));
  EXPECT_FALSE(NeedsSecondAnalyst(c, CaseOutcome::kFalsePositive,
                                  {.four_eyes_block = false, .four_eyes_suspicious = false}));

  ASSERT_OK(Do(c, Event(CaseEventKind::kClaim, "alice")));
  ASSERT_OK(Do(c, Event(CaseEventKind::kProposeClose, "alice", "invoices match",
                        CaseOutcome::kFalsePositive)));
  EXPECT_EQ(c.state, CaseState::kAwaitingApproval);
  EXPECT_EQ(c.proposed_by, "alice");
  EXPECT_THAT(Do(c, Event(CaseEventKind::kApproveClose, "alice")).message(),
              HasSubstr("proposed by alice: a second analyst must approve or reject it"));
  EXPECT_EQ(Do(c, Event(CaseEventKind::kRejectClose, "bob")).code(),
            absl::StatusCode::kInvalidArgument);  // a rejection says why
  ASSERT_OK(Do(c, Event(CaseEventKind::kRejectClose, "bob", "invoice 7 is missing")));
  EXPECT_EQ(c.state, CaseState::kInReview);
  EXPECT_EQ(c.owner, "alice");
  EXPECT_EQ(c.outcome, CaseOutcome::kNone);
  ASSERT_OK(Do(c, Event(CaseEventKind::kProposeClose, "alice", "all invoices match",
                        CaseOutcome::kFalsePositive)));
  ASSERT_OK(Do(c, Event(CaseEventKind::kApproveClose, "bob")));
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(c.closed_by, "alice");
  EXPECT_EQ(c.approved_by, "bob");
  EXPECT_EQ(c.outcome, CaseOutcome::kFalsePositive);
  EXPECT_EQ(c.rationale, "all invoices match");
}

TEST(CaseFileTest, PriorityGrowsWithScoreAmountBlocksAlertsAndAge) {
  const CasePolicy policy;  // SLA 5 days
  const Case low = OpenCase(MakeAlert(1, Action::kReview, 0.2));
  const Case high = OpenCase(MakeAlert(2, Action::kReview, 0.9));
  const UtcTime now = low.opened;
  EXPECT_LT(CasePriority(low, now, policy), CasePriority(high, now, policy));
  Case blocked = OpenCase(MakeAlert(3, Action::kBlock, 0.2));
  EXPECT_NEAR(CasePriority(blocked, now, policy) - CasePriority(low, now, policy), 10, 1e-9);
  Case many = low;
  AddAlert(many, MakeAlert(4, Action::kReview, 0.2));
  AddAlert(many, MakeAlert(5, Action::kReview, 0.2));
  AddAlert(many, MakeAlert(6, Action::kReview, 0.2));
  // 30 x 0.2 + amount 20,000 USD: 5 x log10(20) + 4 alerts: 2.5 x 2.
  EXPECT_NEAR(CasePriority(many, now, policy), 6 + 5 * std::log10(20.0) + 5, 1e-9);
  // A rule of severity 80 among the alerts: 8 more.
  Alert severe = MakeAlert(7, Action::kReview, 0.2);
  severe.severity = 80;
  AddAlert(many, severe);
  EXPECT_EQ(many.max_severity, 80);
  EXPECT_NEAR(CasePriority(many, now, policy), 6 + 8 + 5 * std::log10(25.0) + 2.5 * std::log2(5.0),
              1e-9);
  // Age: up to 20 at the SLA, no more after; overdue past it.
  EXPECT_NEAR(
      CasePriority(low, now + std::chrono::hours(60), policy) - CasePriority(low, now, policy), 10,
      1e-9);
  EXPECT_NEAR(
      CasePriority(low, now + std::chrono::hours(24 * 9), policy) - CasePriority(low, now, policy),
      20, 1e-9);
  EXPECT_FALSE(Overdue(low, now + std::chrono::hours(24 * 5), policy));
  EXPECT_TRUE(Overdue(low, now + std::chrono::hours(24 * 5 + 1), policy));
}

TEST(CaseFileTest, CasesAndAlertsReadBackAsStored) {
  Case c = OpenCase(MakeAlert(1, Action::kBlock, 0.75));
  ASSERT_OK(Do(c, Event(CaseEventKind::kClaim, "alice")));
  ASSERT_OK(Do(c, Event(CaseEventKind::kProposeClose, "alice", "ok", CaseOutcome::kValuableAlert)));
  ASSERT_OK_AND_ASSIGN(Case back, CaseFromJson(CaseToJson(c)));
  EXPECT_EQ(CaseToJson(back), CaseToJson(c));
  EXPECT_EQ(back.state, CaseState::kAwaitingApproval);
  EXPECT_EQ(back.outcome, CaseOutcome::kValuableAlert);
  EXPECT_EQ(back.opened, c.opened);
  EXPECT_DOUBLE_EQ(back.max_score, 0.75);
  Case rules_only = OpenCase(MakeAlert(2, Action::kReview, std::nan("")));
  ASSERT_OK_AND_ASSIGN(back, CaseFromJson(CaseToJson(rules_only)));
  EXPECT_TRUE(std::isnan(back.max_score));

  Alert a = MakeAlert(9, Action::kBlock, std::nan(""));
  a.screening_hit = true;
  ASSERT_OK_AND_ASSIGN(Alert alert, AlertFromJson(AlertToJson(a)));
  EXPECT_EQ(AlertToJson(alert), AlertToJson(a));
  EXPECT_EQ(alert.amount.ToString(), a.amount.ToString());
  EXPECT_TRUE(alert.screening_hit);
  EXPECT_THAT(CaseFromJson(R"({"id":"case-1","state":"lost"})").status().message(),
              HasSubstr("stored case: field \"state\" is malformed"));
  EXPECT_EQ(AlertFromJson("{").status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace vigil::cases
