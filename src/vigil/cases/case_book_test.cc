// CaseBook over a real decision log (AuditLog in RocksDB): alerts grouped into cases, actions
// recorded in the log before they apply, four eyes, the queue, restarts, and event records
// that do not apply.
#include "vigil/cases/case_book.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/audit_verifier.h"
#include "vigil/audit/testing_log.h"
#include "vigil/core/currency.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cases {
namespace {

using ::testing::HasSubstr;

const UtcTime kStart = FromUnixMicros(1'796'032'800'000'000);  // 2026-11-30T10:00Z

const CaseActor kAlice{"alice", CaseRole::kAnalyst};
const CaseActor kBob{"bob", CaseRole::kAnalyst};
const CaseActor kSue{"sue", CaseRole::kSupervisor};

class CaseBookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_.Set(kStart);
    signer_ = audit::TestSigner();
    OpenAll();
  }
  void TearDown() override { CloseAll(); }

  void OpenAll(std::shared_ptr<const crypto::KeyEncryptionKey> kek = nullptr,
               bool with_book = true) {
    KvStoreOptions store_options;
    store_options.path = dir_.path() + "/features";
    store_options.column_families = audit::AuditColumnFamilies();
    store_options.column_families.push_back(kCasesFamily);
    store_options.block_cache_bytes = size_t{1} << 20;
    ASSERT_OK_AND_ASSIGN(store_, KvStore::Open(store_options));
    audit::AuditLogOptions log_options;
    log_options.signer = signer_;
    log_options.sync = false;
    log_options.record_kek = std::move(kek);
    ASSERT_OK_AND_ASSIGN(log_, audit::AuditLog::Open(store_.get(), log_options, clock_));
    if (with_book) {
      ASSERT_NO_FATAL_FAILURE(OpenBook());
    }
  }
  void OpenBook() {
    CaseBookOptions options;
    options.follow_interval = std::chrono::milliseconds(0);
    ASSERT_OK_AND_ASSIGN(book_, CaseBook::Open(store_.get(), log_.get(), options, clock_));
  }
  void CloseAll() {
    book_.reset();
    log_.reset();
    store_.reset();
  }

  // A decision of "action" on a payment from "account", "days" after the start: its sequence.
  uint64_t Decide(const std::string& account, Action action, double score, int days = 0,
                  std::vector<std::string> rules = {"structuring"}) {
    audit::AuditRecord r;
    r.decided = kStart + std::chrono::hours(24 * days);
    r.received = r.decided;
    r.actor = "scorer";
    r.source = "serve";
    r.input_format = "json";
    Transaction& tx = r.transaction;
    tx.id = absl::StrCat("tx-", next_tx_++);
    tx.event_time = r.decided - std::chrono::seconds(1);
    tx.originator = {account, "Payer " + account, "COBADEFFXXX", "DE"};
    tx.beneficiary = {"BEN-1", "Golden Harbour Ltd", "HSBCHKHHHKH", "HK"};
    tx.amount = Money(900'000, 2, *Currency::FromCode("USD"));
    Decision& d = r.decision;
    d.transaction_id = tx.id;
    d.action = action;
    d.score = score;
    for (const std::string& rule : rules) d.reasons.push_back({Reason::Kind::kRule, rule, rule});
    std::vector<audit::PendingRecord> records;
    records.push_back({tx.id, audit::EncodeRecordBody(r)});
    absl::StatusOr<std::vector<audit::AppendedRecord>> appended = log_->Append(std::move(records));
    EXPECT_OK(appended);
    return appended.ok() ? appended->front().sequence : 0;
  }

  // An event record written straight into the log, as a writer other than the book could.
  void AppendEvent(const CaseEvent& e) {
    absl::StatusOr<std::string> body =
        audit::EncodeEventRecordBody(kCaseEventSource, CaseEventToJson(e), e.at, e.actor);
    ASSERT_OK(body);
    std::vector<audit::PendingRecord> records;
    records.push_back({"", *std::move(body)});
    ASSERT_OK(log_->Append(std::move(records)));
  }

  static CaseAction Action(CaseEventKind kind, const std::string& id, const std::string& text = "",
                           CaseOutcome outcome = CaseOutcome::kNone) {
    return {.kind = kind, .case_id = id, .text = text, .outcome = outcome};
  }

  // Every case as stored, in id order: what the book's state is.
  std::string State() {
    absl::StatusOr<CasePage> page = book_->List({.limit = kMaxCasePage});
    EXPECT_OK(page);
    std::vector<std::string> cases;
    for (const ListedCase& l : page->cases) cases.push_back(CaseToJson(l.c));
    std::sort(cases.begin(), cases.end());
    std::string out;
    for (const std::string& c : cases) absl::StrAppend(&out, c, "\n");
    return out;
  }

  ::vigil::testing::ScratchDir dir_;
  ::vigil::testing::FakeClock clock_;
  std::shared_ptr<const audit::LogSigner> signer_;
  std::unique_ptr<KvStore> store_;
  std::unique_ptr<audit::AuditLog> log_;
  std::unique_ptr<CaseBook> book_;
  int next_tx_ = 0;
};

TEST_F(CaseBookTest, AlertsBecomeCasesPerSubjectWithinTheWindow) {
  EXPECT_EQ(Decide("ACC-1", Action::kReview, 0.4), 0u);
  Decide("ACC-1", Action::kAllow, 0.1);                // no alert
  Decide("ACC-2", Action::kBlock, 0.95);               // its own case
  Decide("ACC-1", Action::kBlock, 0.8, 2, {"burst"});  // joins case-0
  Decide("ACC-1", Action::kReview, 0.5, 40);           // past the 30-day window
  ASSERT_OK(book_->CatchUp());
  const CaseBookStats stats = book_->stats();
  EXPECT_EQ(stats.applied, 5u);
  EXPECT_EQ(stats.cases, 3u);
  EXPECT_EQ(stats.alerts, 4u);
  ASSERT_OK_AND_ASSIGN(Case first, book_->Get("case-0"));
  EXPECT_EQ(first.subject, "ACC-1");
  EXPECT_EQ(first.subject_name, "Payer ACC-1");
  EXPECT_EQ(first.alerts, 2u);
  EXPECT_EQ(first.blocks, 1u);
  EXPECT_DOUBLE_EQ(first.max_score, 0.8);
  EXPECT_EQ(first.reasons, (std::vector<std::string>{"structuring", "burst"}));
  ASSERT_OK_AND_ASSIGN(std::vector<Alert> alerts, book_->Alerts("case-0"));
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].sequence, 0u);
  EXPECT_EQ(alerts[1].sequence, 3u);
  EXPECT_EQ(alerts[1].transaction_id, "tx-3");
  ASSERT_OK_AND_ASSIGN(Case other, book_->Get("case-2"));
  EXPECT_EQ(other.subject, "ACC-2");
  ASSERT_OK_AND_ASSIGN(Case later, book_->Get("case-4"));
  EXPECT_EQ(later.subject, "ACC-1");
  EXPECT_EQ(later.alerts, 1u);
  EXPECT_EQ(book_->Get("case-1").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CaseBookTest, ActionsAreRecordedInTheLogBeforeTheyApply) {
  Decide("ACC-2", Action::kBlock, 0.95);
  ASSERT_OK(book_->CatchUp());
  const uint64_t before = log_->size();
  ASSERT_OK_AND_ASSIGN(Case claimed, book_->Act(kAlice, Action(CaseEventKind::kClaim, "case-0")));
  EXPECT_EQ(claimed.state, CaseState::kInReview);
  EXPECT_EQ(claimed.owner, "alice");
  ASSERT_EQ(log_->size(), before + 1);
  ASSERT_OK_AND_ASSIGN(std::string bytes, log_->ReadRecord(before));
  ASSERT_OK_AND_ASSIGN(audit::AuditRecord record, audit::DecodeRecord(bytes));
  EXPECT_EQ(record.source, "cases");
  EXPECT_EQ(record.actor, "alice");
  ASSERT_OK_AND_ASSIGN(CaseEvent event, CaseEventFromJson(record.event));
  EXPECT_EQ(event.kind, CaseEventKind::kClaim);
  EXPECT_EQ(event.case_id, "case-0");
  EXPECT_EQ(event.at, kStart);

  // A refused action writes nothing.
  EXPECT_EQ(book_->Act(kBob, Action(CaseEventKind::kClaim, "case-0")).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(book_->Act(kBob, Action(CaseEventKind::kClaim, "case-7")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(log_->size(), before + 1);

  // A BLOCK case: alice's closing awaits bob's approval (four eyes).
  clock_.Set(kStart + std::chrono::hours(3));
  ASSERT_OK(book_->Act(kAlice, Action(CaseEventKind::kNote, "case-0", "called the customer")));
  ASSERT_OK_AND_ASSIGN(Case proposed, book_->Act(kAlice, Action(CaseEventKind::kClose, "case-0",
                                                                "trade invoices match",
                                                                CaseOutcome::kFalsePositive)));
  EXPECT_EQ(proposed.state, CaseState::kAwaitingApproval);
  EXPECT_THAT(book_->Act(kAlice, Action(CaseEventKind::kApproveClose, "case-0")).status().message(),
              HasSubstr("a second analyst must approve"));
  ASSERT_OK_AND_ASSIGN(Case closed,
                       book_->Act(kBob, Action(CaseEventKind::kApproveClose, "case-0")));
  EXPECT_EQ(closed.state, CaseState::kClosed);
  EXPECT_EQ(closed.outcome, CaseOutcome::kFalsePositive);
  EXPECT_EQ(closed.closed_by, "alice");
  EXPECT_EQ(closed.approved_by, "bob");

  ASSERT_OK_AND_ASSIGN(std::vector<CaseEvent> timeline, book_->Timeline("case-0"));
  ASSERT_EQ(timeline.size(), 4u);
  EXPECT_EQ(timeline[0].kind, CaseEventKind::kClaim);
  EXPECT_EQ(timeline[0].sequence, before);
  EXPECT_EQ(timeline[1].kind, CaseEventKind::kNote);
  EXPECT_EQ(timeline[1].text, "called the customer");
  EXPECT_EQ(timeline[2].kind, CaseEventKind::kProposeClose);
  EXPECT_EQ(timeline[3].kind, CaseEventKind::kApproveClose);
  EXPECT_EQ(timeline[3].actor, "bob");

  // The subject's next alert opens a new case; the log, events and all, verifies.
  const uint64_t next = Decide("ACC-2", Action::kReview, 0.6);
  ASSERT_OK(book_->CatchUp());
  ASSERT_OK_AND_ASSIGN(Case reopened, book_->Get(absl::StrCat("case-", next)));
  EXPECT_EQ(reopened.state, CaseState::kOpen);
  ASSERT_OK(log_->Flush());
  ASSERT_OK_AND_ASSIGN(audit::VerifyReport report, audit::VerifyAuditLog(*log_, {}));
  EXPECT_TRUE(report.intact());
  EXPECT_EQ(report.records, log_->size());
}

TEST_F(CaseBookTest, TakeNextClaimsTheHighestPriorityCaseOnce) {
  Decide("ACC-1", Action::kReview, 0.3);
  Decide("ACC-2", Action::kReview, 0.9);
  Decide("ACC-3", Action::kReview, 0.6);
  ASSERT_OK_AND_ASSIGN(Case first, book_->TakeNext(kAlice));
  EXPECT_EQ(first.subject, "ACC-2");
  EXPECT_EQ(first.owner, "alice");
  ASSERT_OK_AND_ASSIGN(Case second, book_->TakeNext(kBob));
  EXPECT_EQ(second.subject, "ACC-3");
  ASSERT_OK(book_->Act(kBob, Action(CaseEventKind::kEscalate, second.id, "needs a supervisor")));
  ASSERT_OK_AND_ASSIGN(Case third, book_->TakeNext(kBob));
  EXPECT_EQ(third.subject, "ACC-1");
  // Only the escalated case is left, and only a supervisor takes it.
  EXPECT_EQ(book_->TakeNext(kAlice).status().code(), absl::StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(Case escalated, book_->TakeNext(kSue));
  EXPECT_EQ(escalated.id, second.id);
  EXPECT_EQ(escalated.state, CaseState::kEscalated);
  EXPECT_EQ(escalated.owner, "sue");
}

TEST_F(CaseBookTest, TwoAnalystsClaimingOneCaseOneGetsIt) {
  Decide("ACC-1", Action::kReview, 0.3);
  ASSERT_OK(book_->CatchUp());
  std::atomic<int> won{0}, lost{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      absl::StatusOr<Case> c = book_->Act({absl::StrCat("analyst-", k), CaseRole::kAnalyst},
                                          Action(CaseEventKind::kClaim, "case-0"));
      (c.ok() ? won : lost)++;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(lost.load(), 3);
  EXPECT_EQ(book_->stats().events, 1u);
}

TEST_F(CaseBookTest, ListFiltersSortsAndPages) {
  for (int k = 0; k < 25; ++k) {
    Decide(absl::StrCat("ACC-", k), k % 5 == 0 ? Action::kBlock : Action::kReview, k / 25.0, 0,
           {k % 2 == 0 ? "structuring" : "burst"});
  }
  ASSERT_OK(book_->CatchUp());
  ASSERT_OK(book_->Act(kAlice, Action(CaseEventKind::kClaim, "case-24")));
  ASSERT_OK_AND_ASSIGN(CasePage all, book_->List({.limit = 10}));
  EXPECT_EQ(all.total, 25u);
  ASSERT_EQ(all.cases.size(), 10u);
  for (size_t k = 1; k < all.cases.size(); ++k) {
    EXPECT_GE(all.cases[k - 1].priority, all.cases[k].priority);
  }
  ASSERT_OK_AND_ASSIGN(CasePage last, book_->List({.offset = 20, .limit = 10}));
  EXPECT_EQ(last.cases.size(), 5u);
  ASSERT_OK_AND_ASSIGN(CasePage queue, book_->List({.owner = "", .limit = 100}));
  EXPECT_EQ(queue.total, 24u);
  ASSERT_OK_AND_ASSIGN(CasePage mine, book_->List({.owner = "alice"}));
  ASSERT_EQ(mine.total, 1u);
  EXPECT_EQ(mine.cases[0].c.id, "case-24");
  ASSERT_OK_AND_ASSIGN(CasePage in_review, book_->List({.state = CaseState::kInReview}));
  EXPECT_EQ(in_review.total, 1u);
  ASSERT_OK_AND_ASSIGN(CasePage burst, book_->List({.reason = "burst"}));
  EXPECT_EQ(burst.total, 12u);
  ASSERT_OK_AND_ASSIGN(CasePage band, book_->List({.min_score = 0.5, .max_score = 0.7}));
  EXPECT_EQ(band.total, 5u);  // 13/25 .. 17/25
  ASSERT_OK_AND_ASSIGN(CasePage by_subject, book_->List({.subject = "ACC-7"}));
  ASSERT_EQ(by_subject.total, 1u);
  EXPECT_EQ(by_subject.cases[0].c.id, "case-7");
  ASSERT_OK_AND_ASSIGN(CasePage overdue, book_->List({.overdue = true}));
  EXPECT_EQ(overdue.total, 0u);
  clock_.Set(kStart + std::chrono::hours(24 * 6));
  ASSERT_OK_AND_ASSIGN(overdue, book_->List({.overdue = true}));
  EXPECT_EQ(overdue.total, 25u);
  EXPECT_EQ(book_->List({.limit = kMaxCasePage + 1}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(CaseBookTest, ARestartedBookGoesOnWhereItStoppedAndItsStateIsTheLogs) {
  Decide("ACC-1", Action::kReview, 0.3);
  Decide("ACC-2", Action::kBlock, 0.9);
  ASSERT_OK(book_->CatchUp());
  ASSERT_OK(book_->Act(kAlice, Action(CaseEventKind::kClaim, "case-0")));
  ASSERT_OK(book_->Act(kAlice, Action(CaseEventKind::kClose, "case-0", "known customer",
                                      CaseOutcome::kNotSuspicious)));
  ASSERT_OK(book_->Act(kBob, Action(CaseEventKind::kClaim, "case-1")));
  Decide("ACC-1", Action::kReview, 0.4, 1);  // after the close: a new case
  ASSERT_OK(book_->CatchUp());
  const std::string state = State();
  const CaseBookStats stats = book_->stats();
  CloseAll();
  ASSERT_NO_FATAL_FAILURE(OpenAll());
  EXPECT_EQ(State(), state);
  EXPECT_EQ(book_->stats().applied, stats.applied);
  EXPECT_EQ(book_->stats().alerts, stats.alerts);
  EXPECT_EQ(book_->stats().events, stats.events);
  ASSERT_OK_AND_ASSIGN(std::vector<Alert> alerts, book_->Alerts("case-1"));
  EXPECT_EQ(alerts.size(), 1u);  // nothing applied twice

  // Its state is what the log says: wiped, it is built again the same from the log.
  CloseAll();
  ASSERT_NO_FATAL_FAILURE(OpenAll(nullptr, /*with_book=*/false));
  std::vector<std::string> keys;
  ASSERT_OK(store_->ForEach(kCasesFamily, "", [&](absl::string_view key, absl::string_view) {
    keys.emplace_back(key);
    return absl::OkStatus();
  }));
  EXPECT_FALSE(keys.empty());
  for (const std::string& key : keys) ASSERT_OK(store_->Delete(kCasesFamily, key));
  ASSERT_NO_FATAL_FAILURE(OpenBook());
  EXPECT_EQ(State(), state);
  EXPECT_EQ(book_->stats().events, stats.events);
}

TEST_F(CaseBookTest, AnEventRecordThatDoesNotApplyIsCountedAndLeftOut) {
  Decide("ACC-1", Action::kReview, 0.3);
  ASSERT_OK(book_->CatchUp());
  ASSERT_OK(book_->Act(kAlice, Action(CaseEventKind::kClaim, "case-0")));
  const std::string state = State();
  CaseEvent forged;
  forged.kind = CaseEventKind::kClose;  // by someone who does not hold it
  forged.case_id = "case-0";
  forged.actor = "mallory";
  forged.at = kStart;
  forged.text = "nothing here";
  forged.outcome = CaseOutcome::kFalsePositive;
  AppendEvent(forged);
  forged.case_id = "case-404";  // no such case
  AppendEvent(forged);
  ASSERT_OK(book_->CatchUp());
  EXPECT_EQ(book_->stats().rejected_events, 2u);
  EXPECT_EQ(State(), state);
  ASSERT_OK_AND_ASSIGN(std::vector<CaseEvent> timeline, book_->Timeline("case-0"));
  EXPECT_EQ(timeline.size(), 1u);
}

TEST_F(CaseBookTest, ActionsOutsideTheLimitsAreRefusedNamingTheField) {
  Decide("ACC-1", Action::kReview, 0.3);
  ASSERT_OK(book_->CatchUp());
  EXPECT_THAT(
      book_->Act(kAlice, Action(CaseEventKind::kNote, "case-0", std::string(kMaxCaseText + 1, 'x')))
          .status()
          .message(),
      HasSubstr("\"text\" is longer than 16384 bytes"));
  EXPECT_THAT(book_
                  ->Act({std::string(300, 'a'), CaseRole::kAnalyst},
                        Action(CaseEventKind::kClaim, "case-0"))
                  .status()
                  .message(),
              HasSubstr("\"actor\" is longer than 256 bytes"));
  EXPECT_EQ(
      book_->Act({"", CaseRole::kAnalyst}, Action(CaseEventKind::kClaim, "case-0")).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST_F(CaseBookTest, TheBookFollowsTheLogOnItsOwnAndRefusesASealedLog) {
  CaseBookOptions options;
  options.follow_interval = std::chrono::milliseconds(10);
  book_.reset();
  ASSERT_OK_AND_ASSIGN(book_, CaseBook::Open(store_.get(), log_.get(), options, clock_));
  Decide("ACC-1", Action::kReview, 0.3);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (book_->stats().alerts == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(book_->stats().alerts, 1u);
  EXPECT_OK(book_->health());

  CloseAll();
  const audit::TestKek kek = audit::MakeTestKek(dir_.path() + "/kek", "kek", audit::KekKind::kRsa);
  ASSERT_NO_FATAL_FAILURE(OpenAll(kek.public_key, /*with_book=*/false));
  absl::StatusOr<std::unique_ptr<CaseBook>> refused =
      CaseBook::Open(store_.get(), log_.get(), {}, clock_);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("seals personal fields"));
}

}  // namespace
}  // namespace vigil::cases
