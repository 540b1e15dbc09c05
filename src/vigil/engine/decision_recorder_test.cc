#include "vigil/engine/decision_recorder.h"

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_verifier.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/audit/testing_log.h"
#include "vigil/common/sha256.h"
#include "vigil/core/currency.h"
#include "vigil/store/kv_faults.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

class DecisionRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("decision_recorder_test_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    clock_.Set(FromUnixMicros(1'764'500'000'000'000));
  }
  void TearDown() override {
    log_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // log_: a log in a fresh store under dir_, signed by the data dir's default key.
  void OpenLog(std::shared_ptr<KvFaults> faults = nullptr) {
    audit::AuditLogOptions log_options;
    ASSERT_OK_AND_ASSIGN(log_options.signer, LoadOrCreateSigningKey(DefaultSigningKeyPath(dir_)));
    KvStoreOptions store_options;
    store_options.path = dir_ + "/features";
    store_options.column_families = audit::AuditColumnFamilies();
    store_options.faults = std::move(faults);
    ASSERT_OK_AND_ASSIGN(store_, KvStore::Open(store_options));
    ASSERT_OK_AND_ASSIGN(log_, audit::AuditLog::Open(store_.get(), log_options, clock_));
  }

  std::string dir_;
  ::vigil::testing::FakeClock clock_;
  std::unique_ptr<KvStore> store_;
  std::unique_ptr<audit::AuditLog> log_;
};

TEST_F(DecisionRecorderTest, RecordsWhatWasDecidedOnWhatInputByWhomAndWhen) {
  ASSERT_NO_FATAL_FAILURE(OpenLog());
  audit::AuditLog* log = log_.get();
  DecisionRecorder trail(log, {.source = "serve", .input_format = "json"});
  EXPECT_TRUE(trail.durable_ack());

  Transaction tx;
  tx.id = "tx-1";
  tx.originator.account_id = "A";
  tx.beneficiary.account_id = "B";
  tx.amount = Money(12345, 2, *Currency::FromCode("EUR"));
  Decision d;
  d.transaction_id = "tx-1";
  d.action = Action::kBlock;
  d.score = 0.93;
  d.reasons = {{.kind = Reason::Kind::kRule, .code = "r1", .text = "fired"}};
  const std::string input = R"({"id":"tx-1"})";
  const std::vector<double> row = {1.5, 2.5};
  const UtcTime received = clock_.Now();
  const UtcTime decided = received + std::chrono::microseconds(700);
  const DecisionToRecord one{.transaction = &tx, .input = input, .features = row,
                             .decision = &d, .received = received, .decided = decided};
  ASSERT_OK(trail.Record({&one, 1}, "token:ab12"));
  EXPECT_EQ(log->size(), 1u);

  ASSERT_OK_AND_ASSIGN(std::optional<audit::AuditRecord> r, trail.Recorded("tx-1"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->sequence, 0u);
  EXPECT_EQ(r->transaction, tx);
  EXPECT_EQ(audit::HashHex(r->input_sha256), Sha256Hex(input));
  EXPECT_THAT(r->features, ElementsAre(1.5, 2.5));
  EXPECT_EQ(r->decision.action, Action::kBlock);
  EXPECT_EQ(r->decision.score, 0.93);
  ASSERT_EQ(r->decision.reasons.size(), 1u);
  EXPECT_EQ(r->decision.reasons[0].code, "r1");
  EXPECT_EQ(r->received, received);
  EXPECT_EQ(r->decided, decided);
  EXPECT_EQ(r->actor, "token:ab12");
  EXPECT_EQ(r->source, "serve");
  EXPECT_EQ(r->input_format, "json");
  ASSERT_OK_AND_ASSIGN(std::optional<audit::AuditRecord> none, trail.Recorded("tx-2"));
  EXPECT_FALSE(none.has_value());

  // Without durable acknowledgement Record returns at once; Flush makes it durable.
  DecisionRecorder quick(log, {.source = "replay", .input_format = "json", .durable_ack = false});
  tx.id = d.transaction_id = "tx-2";
  ASSERT_OK(quick.Record({&one, 1}));
  ASSERT_OK(log->Flush());
  EXPECT_EQ(log->size(), 2u);
}

// What waits for the log is bounded in count and in time: beyond either, RecordThen refuses
// at once (its callback is never called) and Congestion says so before any work is done.
TEST_F(DecisionRecorderTest, ABacklogBeyondTheAdmissionBoundsIsRefusedAtOnce) {
  auto faults = std::make_shared<KvFaults>();
  ASSERT_NO_FATAL_FAILURE(OpenLog(faults));
  audit::AuditLog* log = log_.get();
  using Steady = std::chrono::steady_clock;
  Steady::time_point now = Steady::now();
  DecisionRecorder trail(log, {.source = "serve",
                               .input_format = "json",
                               .max_waiting = 3,
                               .max_wait = std::chrono::milliseconds(50),
                               .now = [&now] { return now; }});
  Transaction tx;
  tx.amount = Money(100, 2, *Currency::FromCode("EUR"));
  Decision d;
  const std::vector<double> row = {1.0};
  std::vector<std::string> ids;
  std::atomic<int> told{0};
  const auto record = [&](int n) {
    std::vector<Transaction> txs(static_cast<size_t>(n), tx);
    std::vector<DecisionToRecord> records;
    for (Transaction& t : txs) {
      t.id = absl::StrCat("tx-", ids.size());
      ids.push_back(t.id);
      records.push_back({.transaction = &t, .input = t.id, .features = row, .decision = &d});
    }
    return trail.RecordThen(records, "token:1", [&](absl::Status s) {
      EXPECT_OK(s);
      ++told;
    });
  };
  faults->set_hold_syncs(true);  // the disk stalls
  EXPECT_OK(trail.Congestion());
  ASSERT_OK(record(1));
  now += std::chrono::milliseconds(40);
  EXPECT_OK(trail.Congestion());
  ASSERT_OK(record(1));
  EXPECT_EQ(trail.waiting(), 2u);
  // In time: the oldest has waited 60 ms of at most 50.
  now += std::chrono::milliseconds(20);
  EXPECT_THAT(trail.Congestion(), StatusIs(absl::StatusCode::kResourceExhausted,
                                           HasSubstr("has waited 60 ms (at most 50")));
  EXPECT_THAT(record(1), StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("60 ms")));
  EXPECT_EQ(trail.waiting(), 2u);
  faults->set_hold_syncs(false);
  ASSERT_OK(log->Flush());
  EXPECT_EQ(told, 2);
  EXPECT_EQ(trail.waiting(), 0u);
  EXPECT_OK(trail.Congestion());  // nothing waits: however late the clock

  // In count: three may wait, not four.
  faults->set_hold_syncs(true);
  ASSERT_OK(record(3));
  EXPECT_THAT(trail.Congestion(), StatusIs(absl::StatusCode::kResourceExhausted,
                                           HasSubstr("3 records are waiting")));
  EXPECT_THAT(record(1), StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("at most 3")));
  faults->set_hold_syncs(false);
  ASSERT_OK(log->Flush());
  EXPECT_EQ(told, 3);
  EXPECT_EQ(log->size(), 5u);  // what was refused was not recorded
  ASSERT_OK_AND_ASSIGN(std::optional<audit::AuditRecord> refused, trail.Recorded("tx-2"));
  EXPECT_FALSE(refused.has_value());
}

// An event (a drift freeze, say) is a record among the decisions: chained, in the tree, shown
// by the examiner's view, and found by no transaction id.
TEST_F(DecisionRecorderTest, AnEventIsRecordedAmongTheDecisionsAndVerifies) {
  ASSERT_NO_FATAL_FAILURE(OpenLog());
  audit::AuditLog* log = log_.get();
  DecisionRecorder trail(log, {.source = "serve", .input_format = "json"});
  Transaction tx;
  tx.amount = Money(100, 2, *Currency::FromCode("EUR"));
  Decision d;
  const std::vector<double> row = {1.0};
  const auto decide = [&](const std::string& id) {
    tx.id = id;
    const DecisionToRecord one{.transaction = &tx, .input = id, .features = row, .decision = &d};
    return trail.Record({&one, 1});
  };
  ASSERT_OK(decide("tx-0"));
  const std::string event = R"({"id":1,"kind":"freeze","subject":"monitor"})";
  ASSERT_OK(trail.RecordEvent("drift", event, clock_.Now(), "token:ops"));
  ASSERT_OK(decide("tx-2"));
  ASSERT_EQ(log->size(), 3u);

  ASSERT_OK_AND_ASSIGN(std::string bytes, log->ReadRecord(1));
  ASSERT_OK_AND_ASSIGN(audit::AuditRecord record, audit::DecodeRecord(bytes));
  EXPECT_EQ(record.event, event);
  EXPECT_EQ(record.source, "drift");
  EXPECT_EQ(record.actor, "token:ops");
  EXPECT_EQ(record.received, clock_.Now());
  EXPECT_EQ(audit::HashHex(record.input_sha256), Sha256Hex(event));
  const nlohmann::json view = nlohmann::json::parse(AuditRecordViewJson(record, audit::Hash{}));
  EXPECT_EQ(view["event"]["kind"], "freeze");
  EXPECT_EQ(view["source"], "drift");
  EXPECT_FALSE(view.contains("transaction"));
  EXPECT_FALSE(view.contains("decision"));
  ASSERT_OK_AND_ASSIGN(std::optional<uint64_t> none, log->FindTransaction(""));
  EXPECT_FALSE(none.has_value());
  ASSERT_OK_AND_ASSIGN(std::optional<uint64_t> after, log->FindTransaction("tx-2"));
  EXPECT_EQ(after, std::optional<uint64_t>(2));
  ASSERT_OK_AND_ASSIGN(audit::VerifyReport report, audit::VerifyAuditLog(*log, {}));
  EXPECT_TRUE(report.intact()) << report.damage->detail;
  EXPECT_EQ(report.records_checked, 3u);
  EXPECT_THAT(trail.RecordEvent("drift", "", clock_.Now()),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// With a key-encryption key the trail seals the personal fields with the log's sealer; the
// decision stays readable, so a repeated transaction id is answered without any key.
TEST_F(DecisionRecorderTest, SealsPersonalFieldsWhenTheLogHasAKeyEncryptionKey) {
  const audit::TestKek kek = audit::MakeTestKek(dir_ + "/keys", "kek", audit::KekKind::kRsa);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const audit::LogSigner> signer,
                       LoadOrCreateSigningKey(DefaultSigningKeyPath(dir_)));
  KvStoreOptions store_options;
  store_options.path = dir_ + "/features";
  store_options.column_families = audit::AuditColumnFamilies();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KvStore> store, KvStore::Open(store_options));
  audit::AuditLogOptions log_options;
  log_options.signer = signer;
  log_options.record_kek = kek.public_key;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<audit::AuditLog> log,
                       audit::AuditLog::Open(store.get(), log_options, clock_));
  DecisionRecorder trail(log.get(), {.source = "serve", .input_format = "json"});
  Transaction tx;
  tx.id = "tx-1";
  tx.originator = {.account_id = "DE89370400440532013000", .name = "Jane Roe"};
  tx.beneficiary = {.account_id = "B", .name = "Harbour Ltd"};
  tx.amount = Money(12345, 2, *Currency::FromCode("EUR"));
  tx.remittance = "rent";
  Decision d;
  d.transaction_id = "tx-1";
  d.action = Action::kReview;
  d.reasons = {{.kind = Reason::Kind::kRule, .code = "r1", .text = "fired"}};
  const DecisionToRecord one{.transaction = &tx, .input = "{}", .decision = &d,
                             .received = clock_.Now(), .decided = clock_.Now()};
  ASSERT_OK(trail.Record({&one, 1}));

  ASSERT_OK_AND_ASSIGN(std::optional<audit::AuditRecord> r, trail.Recorded("tx-1"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->decision.action, Action::kReview);
  EXPECT_EQ(r->decision.reasons[0].text, "fired");
  EXPECT_EQ(r->transaction.originator.name, "");  // sealed
  EXPECT_EQ(r->data_key_id, log->sealer()->data_key_id());
  EXPECT_EQ(r->sealed.size(), 5u);
  ASSERT_OK_AND_ASSIGN(std::string bytes, log->ReadRecord(0));
  EXPECT_EQ(bytes.find("Jane Roe"), std::string::npos);
  const std::unique_ptr<audit::RecordOpener> opener =
      audit::RecordOpener::ForLog(*log, kek.private_key);
  ASSERT_OK(opener->Open(*r));
  EXPECT_EQ(r->transaction, tx);
}

TEST_F(DecisionRecorderTest, TheDefaultKeyIsCreatedOncePrivatelyAndThenReused) {
  const std::string path = DefaultSigningKeyPath(dir_);
  bool created = false;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const audit::LogSigner> first,
                       LoadOrCreateSigningKey(path, &created));
  EXPECT_TRUE(created);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const audit::LogSigner> again,
                       LoadOrCreateSigningKey(path, &created));
  EXPECT_FALSE(created);
  EXPECT_EQ(again->key_id(), first->key_id());
  EXPECT_EQ(first->algorithm(), audit::SignatureAlgorithm::kEd25519);

  // A configured key is the one used (and never created); the default only without one.
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const audit::LogSigner> by_default,
                       DataDirSigningKey("", dir_, &created));
  EXPECT_EQ(by_default->key_id(), first->key_id());
  const std::string other = dir_ + "/other.pem";
  { std::ofstream(other) << *audit::GeneratePrivateKeyPem(audit::SignatureAlgorithm::kSm2); }
  ::chmod(other.c_str(), 0600);  // key files are private to their owner
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const audit::LogSigner> configured,
                       DataDirSigningKey(other, dir_, &created));
  EXPECT_FALSE(created);
  EXPECT_EQ(configured->algorithm(), audit::SignatureAlgorithm::kSm2);
  absl::StatusOr<std::shared_ptr<const audit::LogSigner>> missing =
      DataDirSigningKey(dir_ + "/missing.pem", dir_);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("missing.pem"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/missing.pem"));
}

TEST_F(DecisionRecorderTest, AKeyFileThatIsNotAKeyIsRefused) {
  std::filesystem::create_directories(dir_);
  const std::string path = dir_ + "/bad.pem";
  { std::ofstream(path) << "not a key"; }
  absl::StatusOr<std::shared_ptr<const audit::LogSigner>> refused = LoadOrCreateSigningKey(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr(path));
}

}  // namespace
}  // namespace vigil
