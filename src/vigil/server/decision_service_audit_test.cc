// DecisionService with its audit log: what is answered is what is recorded, a restart keeps both
// the record and the feature state, and what cannot be recorded is not answered.
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_verifier.h"
#include "vigil/common/sha256.h"
#include "vigil/decision/decision_json.h"
#include "vigil/decision/model_deployment.h"
#include "vigil/engine/decision_recorder.h"
#include "vigil/features/feature_store.h"
#include "vigil/server/decision_service.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;

constexpr char kPolicy[] = R"(version: "audited"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: count
    when: amount_reporting > 5000
    action: review
    reason: "{orig_out_count_24h} sent in 24 h"
)";

std::string Tx(const std::string& id, const std::string& account = "A1") {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":"2022-09-01T08:00:00Z",)",
                      R"("originator":{"account_id":")", account, R"(","bank_id":"B1"},)",
                      R"("beneficiary":{"account_id":"Z9","bank_id":"B2"},)",
                      R"("amount":{"value":"9000.00","currency":"USD"}})");
}

std::string Batch(const std::vector<std::string>& bodies) {
  std::string out = "[";
  for (size_t i = 0; i < bodies.size(); ++i) absl::StrAppend(&out, i > 0 ? "," : "", bodies[i]);
  return out + "]";
}

// The originator's 24-hour count as the decision's reason states it.
std::string Count(const DecisionService::Reply& reply) {
  const nlohmann::json j = nlohmann::json::parse(reply.body);
  return j["reasons"][0]["text"].get<std::string>();
}

class DecisionServiceAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("decision_service_audit_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    fx_ = *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\n", "fx");
    clock_.Set(FromUnixMicros(1'764'500'000'000'000));
  }
  void TearDown() override {
    service_.reset();
    std::filesystem::remove_all(dir_);
  }

  // A service on the data dir (as `vigil serve` builds it), its audit log attached.
  void Start(audit::AuditLogOptions log_options = {},
             std::chrono::microseconds max_wait = std::chrono::microseconds::max()) {
    service_.reset();
    std::vector<std::string> families = audit::AuditColumnFamilies();
    families.push_back(DecisionService::kPendingRowsFamily);
    absl::StatusOr<std::unique_ptr<FeatureStore>> store =
        FeatureStore::Open(dir_, fx_, FeatureConfig{}, families, faults_);
    ASSERT_TRUE(store.ok()) << store.status();
    KvStore* kv = &(*store)->kv();
    PolicyInputLayout layout(FeatureExtractor::Schema());
    auto policy = Policy::Parse(kPolicy, "p.yaml", layout, ListLibrary{});
    ASSERT_TRUE(policy.ok()) << policy.status();
    absl::StatusOr<ModelRegistry> registry = ModelRegistry::Open(dir_ + "/models");
    ASSERT_TRUE(registry.ok()) << registry.status();
    deployment_ = std::make_shared<ModelDeployment>(
        *std::move(registry), nullptr, std::make_shared<DecisionMaker>(*policy, nullptr, layout));
    service_ = std::make_unique<DecisionService>(*std::move(store), DecisionServiceOptions{},
                                                 deployment_, clock_);
    ASSERT_OK_AND_ASSIGN(log_options.signer, LoadOrCreateSigningKey(dir_ + "/key.pem"));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<audit::AuditLog> log,
                         audit::AuditLog::Open(kv, log_options, clock_));
    ASSERT_OK(service_->AttachAudit(std::move(log), /*durable_ack=*/true, /*max_waiting=*/0,
                                    max_wait));
  }

  audit::AuditLog& Log() { return *service_->audit_log(); }

  std::string dir_;
  FxRates fx_ = *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\n", "x");
  ::vigil::testing::FakeClock clock_;
  std::shared_ptr<KvFaults> faults_ = std::make_shared<KvFaults>();
  std::shared_ptr<ModelDeployment> deployment_;
  std::unique_ptr<DecisionService> service_;
};

TEST_F(DecisionServiceAuditTest, TheRecordHoldsExactlyWhatWasAnswered) {
  Start();
  const std::string body = Tx("t1");
  const DecisionService::Reply reply =
      service_->Score(body, {.traceparent = "", .actor = "token:7"});
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(Log().size(), 1u);
  DecisionRecorder trail(&Log(), {});
  ASSERT_OK_AND_ASSIGN(std::optional<audit::AuditRecord> record, trail.Recorded("t1"));
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(DecisionToJson(record->decision), reply.body);
  EXPECT_TRUE(record->decision.accounts_scored) << "the account standings are recorded";
  EXPECT_EQ(audit::HashHex(record->input_sha256), Sha256Hex(body));
  EXPECT_EQ(record->transaction.id, "t1");
  EXPECT_EQ(record->transaction.originator.account_id, "A1");
  EXPECT_EQ(record->features.size(), FeatureExtractor::Schema()->size());
  EXPECT_EQ(record->decision.feature_schema_version, FeatureExtractor::Schema()->version());
  EXPECT_EQ(record->actor, "token:7");
  EXPECT_EQ(record->source, "serve");
  EXPECT_EQ(record->input_format, "json");
  EXPECT_EQ(record->received, clock_.Now());

  // A batch records every decided item, in order, and nothing for the refused one.
  const DecisionService::Reply batch =
      service_->ScoreBatch(Batch({Tx("b1"), R"({"id":"bad"})", Tx("b2")}));
  ASSERT_EQ(batch.status, 200) << batch.body;
  EXPECT_EQ(Log().size(), 3u);
  ASSERT_OK_AND_ASSIGN(std::optional<uint64_t> b2, Log().FindTransaction("b2"));
  EXPECT_EQ(b2, std::optional<uint64_t>(2));
  ASSERT_OK_AND_ASSIGN(audit::VerifyReport report, audit::VerifyAuditLog(Log(), {}));
  EXPECT_TRUE(report.intact());
}

// With durable acknowledgement the answer waits for the record, but no thread does: the
// calls return while the disk stalls, and each is answered once its record is durable (a
// duplicate in flight with its first arrival's decision).
TEST_F(DecisionServiceAuditTest, ScoreThenHoldsNoThreadWhileTheRecordSyncs) {
  Start();
  ASSERT_EQ(service_->Score(Tx("t0")).status, 200);
  faults_->set_hold_syncs(true);
  absl::Mutex mu;
  std::map<std::string, DecisionService::Reply> answered;
  const auto answer = [&](std::string name) {
    return [&, name](DecisionService::Reply r) {
      absl::MutexLock lock(&mu);
      answered.emplace(name, std::move(r));
    };
  };
  // The bodies stay valid until answered.
  const std::string t1 = Tx("t1", "A1"), t2 = Tx("t2", "A2"), batch = Batch({Tx("b1"), Tx("b2")});
  absl::Notification returned;
  std::thread caller([&] {
    service_->ScoreThen(t1, {}, answer("t1"));
    service_->ScoreThen(t2, {}, answer("t2"));
    service_->ScoreThen(t1, {}, answer("t1 again"));  // the same payment, still in flight
    service_->ScoreBatchThen(batch, {}, answer("batch"));
    returned.Notify();
  });
  const bool all_returned = returned.WaitForNotificationWithTimeout(absl::Seconds(20));
  EXPECT_TRUE(all_returned) << "a call waited for the stalled sync";
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(answered.empty()) << answered.begin()->first << " answered before durable";
  }
  EXPECT_EQ(Log().size(), 1u);
  faults_->set_hold_syncs(false);
  caller.join();
  ASSERT_OK(Log().Flush());
  absl::MutexLock lock(&mu);
  ASSERT_EQ(answered.size(), 4u);
  EXPECT_EQ(answered["t1"].status, 200) << answered["t1"].body;
  EXPECT_EQ(answered["t2"].status, 200) << answered["t2"].body;
  EXPECT_EQ(answered["t1 again"].status, 200);
  EXPECT_TRUE(answered["t1 again"].repeated);
  EXPECT_EQ(answered["t1 again"].body, answered["t1"].body);
  const nlohmann::json results = nlohmann::json::parse(answered["batch"].body)["results"];
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1]["transaction_id"], "b2");
  EXPECT_EQ(Log().size(), 5u);  // t0, t1, t2, b1, b2: the duplicate is not recorded again
}

// While the log is behind (its oldest waiting record older than max_wait) a request is
// refused at once, before its payment is counted: the retry is counted once.
TEST_F(DecisionServiceAuditTest, WhileTheLogIsBehindARequestIsRefusedBeforeAnythingChanges) {
  Start({}, std::chrono::milliseconds(20));
  faults_->set_hold_syncs(true);
  absl::Notification first_answered;
  DecisionService::Reply first;
  const std::string t1 = Tx("t1");
  service_->ScoreThen(t1, {}, [&](DecisionService::Reply r) {
    first = std::move(r);
    first_answered.Notify();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  const DecisionService::Reply refused = service_->Score(Tx("t2"));  // answered at once
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.error_code, "overloaded");
  EXPECT_EQ(refused.shed_reason, "audit");
  EXPECT_THAT(refused.body, HasSubstr("audit.max_wait_ms"));
  faults_->set_hold_syncs(false);
  ASSERT_TRUE(first_answered.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_EQ(first.status, 200) << first.body;
  const DecisionService::Reply retried = service_->Score(Tx("t2"));
  ASSERT_EQ(retried.status, 200) << retried.body;
  EXPECT_EQ(Count(retried), "2 sent in 24 h");  // t1 and t2, the refusal not counted
  EXPECT_EQ(Log().size(), 2u);
}

TEST_F(DecisionServiceAuditTest, AfterARestartARepeatedIdIsAnsweredFromTheLogAndCountedOnce) {
  Start();
  const DecisionService::Reply first = service_->Score(Tx("t1"));
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(Count(first), "1 sent in 24 h");
  Start();  // a restart: the idempotency memory is gone, the log and the state are not
  const DecisionService::Reply again = service_->Score(Tx("t1"));
  ASSERT_EQ(again.status, 200);
  EXPECT_TRUE(again.repeated);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(Log().size(), 1u);  // nothing new written
  // Counted once, before the restart: the next payment of the account is its second, and its
  // account standing (restored with the feature state) counts the rule hit once too.
  const DecisionService::Reply second = service_->Score(Tx("t2"));
  EXPECT_EQ(Count(second), "2 sent in 24 h");
  EXPECT_EQ(nlohmann::json::parse(second.body)["accounts"]["originator"]["rule_hits"], 2);
  // A repeated id inside a batch, too.
  const DecisionService::Reply batch = service_->ScoreBatch(Batch({Tx("t1"), Tx("t3")}));
  ASSERT_EQ(batch.status, 200);
  EXPECT_THAT(batch.body, HasSubstr(first.body));
  EXPECT_THAT(batch.body, HasSubstr("3 sent in 24 h"));
  EXPECT_EQ(Log().size(), 3u);
}

TEST_F(DecisionServiceAuditTest, ADecisionThatCannotBeRecordedIsNotAnswered) {
  Start();
  ASSERT_EQ(service_->Score(Tx("t1")).status, 200);
  faults_->set_fail_syncs(true);
  const DecisionService::Reply refused = service_->Score(Tx("t2"));
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.error_code, "audit_unavailable");
  EXPECT_THAT(refused.body, HasSubstr("could not be recorded"));
  EXPECT_FALSE(Log().health().ok());
  // Everything after is refused too, and nothing is answered 200.
  EXPECT_EQ(service_->Score(Tx("t3")).status, 503);
  faults_->set_fail_syncs(false);
  EXPECT_EQ(service_->Score(Tx("t4")).status, 503);

  Start();  // the disk is back
  // t1 was acknowledged: it is there. The refused ones were applied to the features (and
  // their group may have reached the disk unsynced): whichever way, each counts once.
  EXPECT_EQ(service_->Score(Tx("t1")).status, 200);
  const DecisionService::Reply t2 = service_->Score(Tx("t2"));
  ASSERT_EQ(t2.status, 200) << t2.body;
  EXPECT_EQ(Count(t2), "2 sent in 24 h");
  const DecisionService::Reply t3 = service_->Score(Tx("t3"));
  const DecisionService::Reply t4 = service_->Score(Tx("t4"));
  ASSERT_EQ(t3.status, 200);
  ASSERT_EQ(t4.status, 200);
  EXPECT_EQ(Count(t3), "3 sent in 24 h");
  EXPECT_EQ(Count(t4), "4 sent in 24 h");
  EXPECT_EQ(Count(service_->Score(Tx("t5"))), "5 sent in 24 h");
  ASSERT_OK_AND_ASSIGN(audit::VerifyReport report, audit::VerifyAuditLog(Log(), {}));
  EXPECT_TRUE(report.intact()) << report.damage->detail;
}

TEST_F(DecisionServiceAuditTest, ARowAppliedButNeverRecordedSurvivesARestartForItsRetry) {
  // A queue of one record: a batch of two cannot be recorded (503 for both), while the
  // payment after it can; its group carries the two unrecorded rows.
  audit::AuditLogOptions tight;
  tight.max_queued_records = 1;
  Start(tight);
  const DecisionService::Reply refused = service_->ScoreBatch(Batch({Tx("r1"), Tx("r2")}));
  ASSERT_EQ(refused.status, 200);
  // A full queue is overload: 503 overloaded, to retry.
  EXPECT_THAT(refused.body, HasSubstr("\"code\":\"overloaded\""));
  EXPECT_THAT(refused.body, HasSubstr("queue full"));
  EXPECT_EQ(Count(service_->Score(Tx("t3"))), "3 sent in 24 h");  // r1 and r2 were counted
  EXPECT_EQ(Log().size(), 1u);

  Start(tight);
  // The retries are decided on their kept rows: not counted again.
  const DecisionService::Reply r1 = service_->Score(Tx("r1"));
  ASSERT_EQ(r1.status, 200) << r1.body;
  EXPECT_EQ(Count(r1), "1 sent in 24 h");
  EXPECT_EQ(Count(service_->Score(Tx("t4"))), "4 sent in 24 h");
  const DecisionService::Reply r2 = service_->Score(Tx("r2"));
  ASSERT_EQ(r2.status, 200) << r2.body;
  EXPECT_EQ(Count(r2), "2 sent in 24 h");
  EXPECT_EQ(Log().size(), 4u);
  // Recorded now: their kept rows are gone from the store, so yet another restart answers
  // them from the log.
  Start(tight);
  const DecisionService::Reply again = service_->Score(Tx("r2"));
  EXPECT_TRUE(again.repeated);
  EXPECT_EQ(again.body, r2.body);
}

// The idempotency key is bound to the payment across restarts: the record's fingerprint tells
// a resend from another payment under the same id.
TEST_F(DecisionServiceAuditTest, AfterARestartAnotherPaymentUnderARecordedIdIsAConflict) {
  Start();
  const DecisionService::Reply first = service_->Score(Tx("t1"));
  ASSERT_EQ(first.status, 200);
  ASSERT_OK_AND_ASSIGN(std::optional<audit::AuditRecord> record,
                       DecisionRecorder(&Log(), {}).Recorded("t1"));
  ASSERT_TRUE(record.has_value());
  EXPECT_NE(record->payment_fingerprint, audit::Hash{});
  Start();
  std::string bigger = Tx("t1");
  bigger.replace(bigger.find("9000.00"), 7, "900000.00");
  const DecisionService::Reply other = service_->Score(bigger);
  EXPECT_EQ(other.status, 409) << other.body;
  EXPECT_THAT(other.body, HasSubstr("idempotency_conflict"));
  EXPECT_FALSE(other.repeated);
  // The same payment, written otherwise, is still the first decision.
  std::string respaced = Tx("t1");
  respaced.replace(respaced.find("9000.00"), 7, "9000.0");
  const DecisionService::Reply again = service_->Score(respaced);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_TRUE(again.repeated);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(Log().size(), 1u);
  // The fingerprint key is the data dir's: it survived the restart.
  Start();
  EXPECT_EQ(service_->Score(respaced).body, first.body);
}

// A payment counted by the features but answered 503 binds its id too.
TEST_F(DecisionServiceAuditTest, AnotherPaymentUnderAnIdAnswered503IsAConflict) {
  audit::AuditLogOptions tight;
  tight.max_queued_records = 1;
  Start(tight);
  ASSERT_THAT(service_->ScoreBatch(Batch({Tx("r1"), Tx("r2")})).body, HasSubstr("\"status\":503"));
  EXPECT_EQ(service_->Score(Tx("r1", "A7")).status, 409);  // another originator
  ASSERT_EQ(service_->Score(Tx("t3")).status, 200);  // its group makes the kept rows durable
  Start(tight);
  EXPECT_EQ(service_->Score(Tx("r1", "A7")).status, 409);
  const DecisionService::Reply r1 = service_->Score(Tx("r1"));
  ASSERT_EQ(r1.status, 200) << r1.body;
  EXPECT_EQ(Count(r1), "1 sent in 24 h");
}

// A data dir whose watermark a payment dated 2099 poisoned (written before event times were
// bounded at admission) is repaired at start: real payments are heard again.
TEST_F(DecisionServiceAuditTest, AStatePoisonedByAFutureEventIsRepairedAtStart) {
  {
    FeatureConfig config;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<FeatureStore> store,
                         FeatureStore::Open(dir_, fx_, config, {}, faults_));
    Transaction real, poison;
    for (auto [tx, id, time] : {std::tuple{&real, "old", 1'661'990'400'000'000},
                                std::tuple{&poison, "p", 4'070'908'800'000'000}}) {
      tx->id = id;
      tx->event_time = FromUnixMicros(time);
      tx->originator = {.account_id = "A1", .bank_id = "B1"};
      tx->beneficiary = {.account_id = "Z9", .bank_id = "B2"};
      tx->amount = Money(100, 0, *Currency::FromCode("USD"));
    }
    std::vector<double> row(FeatureExtractor::Schema()->size());
    ASSERT_OK(store->extractor().Process(real, absl::MakeSpan(row)));
    ASSERT_OK(store->extractor().Process(poison, absl::MakeSpan(row)));
    ASSERT_OK(store->Checkpoint({}).status());
  }
  Start();
  const EventTimeRepair& repair = service_->event_time_repair();
  EXPECT_TRUE(repair.repaired());
  EXPECT_EQ(repair.watermark_before_us, 4'070'908'800'000'000);
  EXPECT_EQ(repair.accounts, 2u);
  // Heard, not event_too_late (A1's earlier payment left its state with the 2099 one).
  const DecisionService::Reply reply = service_->Score(Tx("t1"));
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(Count(reply), "1 sent in 24 h");
  // The repair is stored with the decision's group: the next start finds nothing to repair.
  Start();
  EXPECT_FALSE(service_->event_time_repair().repaired());
  EXPECT_EQ(Count(service_->Score(Tx("t2"))), "2 sent in 24 h");
}

}  // namespace
}  // namespace vigil
