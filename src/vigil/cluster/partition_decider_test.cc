#include "vigil/cluster/partition_decider.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/audit/audit_record.h"
#include "vigil/core/fx_rates.h"
#include "vigil/rules/policy.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

constexpr int kPartitions = 2;

// Scores every row 0.25 and notes the deadline it was given.
class NotingScorer final : public Scorer {
 public:
  const std::string& model_version() const override { return version_; }
  size_t row_width() const override { return FeatureExtractor::Schema()->size(); }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double>, size_t n, absl::Span<double> scores,
                     const ScoreContext& context) const override {
    deadline = context.deadline;
    priority = context.priority;
    for (size_t i = 0; i < n; ++i) scores[i] = 0.25;
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double>, int) const override {
    return std::vector<Reason>{};
  }
  mutable std::optional<std::chrono::steady_clock::time_point> deadline;
  mutable Priority priority = Priority::kP2;

 private:
  std::string version_ = "noting@1";
};

std::shared_ptr<const Policy> BigPaymentPolicy() {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(R"(version: "big"
thresholds: {review: 0.5, block: 0.9}
accounts: {alert_rule_hits: 2, alert_score: 0.95}
rules:
  - id: big
    when: amount_reporting > 600
    action: review
    reason: "big"
)",
                              "p.yaml", layout, ListLibrary{});
  EXPECT_TRUE(policy.ok()) << policy.status();
  return *policy;
}

class PartitionDeciderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    layout_.name = "t";
    layout_.partitions = kPartitions;
    applier_ = std::make_unique<LogApplier>(layout_, &features_);
    scorer_ = std::make_shared<NotingScorer>();
    maker_ = std::make_shared<DecisionMaker>(BigPaymentPolicy(), scorer_,
                                             PolicyInputLayout(FeatureExtractor::Schema()));
  }

  // Applies a payment from "from" of "dollars", arrived now, due "deadline_ms" from now.
  void Pay(int k, const std::string& from, int dollars, int deadline_ms,
           Priority priority = Priority::kP1) {
    PaymentEntry entry;
    entry.transaction.id = absl::StrCat("tx-", k);
    entry.transaction.event_time = FromUnixMicros(ToUnixMicros(clock_.Now()) + k);
    entry.transaction.originator = {.account_id = from, .bank_id = "B1"};
    entry.transaction.beneficiary = {.account_id = "Z", .bank_id = "B1"};
    entry.transaction.amount = Money(dollars, 0, *Currency::FromCode("USD"));
    entry.transaction.priority = priority;
    entry.input_format = "json";
    entry.input_sha256[0] = static_cast<uint8_t>(k);
    entry.received_us = ToUnixMicros(clock_.Now());
    entry.deadline_us = entry.received_us + int64_t{deadline_ms} * 1000;
    entry.actor = "token:t1";
    entry.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    StreamMessage m;
    m.subject = PaymentSubject(layout_, PartitionMap(kPartitions).Of("B1", from));
    m.data = EncodePayment(entry);
    m.sequence = ++sequence_;
    ASSERT_OK(applier_->Apply(m).status());
  }

  std::vector<const PendingPayment*> Pending(int partition) const {
    std::vector<const PendingPayment*> out;
    for (const auto& [sequence, p] : applier_->pending(partition)) out.push_back(&p);
    return out;
  }

  ClusterLayout layout_;
  FxRates fx_ = *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\n", "fx");
  FeatureExtractor features_{fx_, FeatureConfig{}};
  std::unique_ptr<LogApplier> applier_;
  std::shared_ptr<NotingScorer> scorer_;
  std::shared_ptr<DecisionMaker> maker_;
  vigil::testing::FakeClock clock_{FromUnixMicros(1'764'500'000'000'000)};
  UuidV7Generator ids_{clock_, 7};
  uint64_t sequence_ = 0;
};

TEST_F(PartitionDeciderTest, DecidesAsTheDecisionMakerDoesAndRecordsWhatItDecidedOn) {
  const int p = PartitionMap(kPartitions).Of("B1", "A");
  Pay(1, "A", 100, 200);
  Pay(2, "A", 700, 200);
  const std::vector<const PendingPayment*> pending = Pending(p);
  ASSERT_EQ(pending.size(), 2u);
  PartitionDecider decider(maker_, "champion", clock_);
  ASSERT_OK_AND_ASSIGN(std::vector<DecidedPayment> batch, decider.Decide(pending, features_, ids_));
  ASSERT_EQ(batch.size(), 2u);

  // The oracle: the same decision maker on the same rows.
  std::vector<Decision> oracle(2);
  std::vector<const Transaction*> txs = {&pending[0]->entry.transaction,
                                         &pending[1]->entry.transaction};
  std::vector<double> rows = pending[0]->row;
  rows.insert(rows.end(), pending[1]->row.begin(), pending[1]->row.end());
  ASSERT_OK(maker_->DecideBatch(txs, rows, absl::MakeSpan(oracle), ids_));

  for (int k = 0; k < 2; ++k) {
    const DecidedPayment& d = batch[k];
    EXPECT_EQ(d.payment_sequence, pending[k]->sequence);
    EXPECT_EQ(d.transaction_id, absl::StrCat("tx-", k + 1));
    EXPECT_EQ(d.score, 0.25);
    EXPECT_EQ(d.rule_hit, k == 1) << "the big payment fired the rule";
    EXPECT_EQ(d.alert.rule_hits, 2u);
    EXPECT_EQ(d.alert.score, 0.95);
    std::string stored;
    audit::AppendAssembledRecord(0, audit::Hash{}, d.record, &stored);
    ASSERT_OK_AND_ASSIGN(audit::AuditRecord record, audit::DecodeRecord(stored));
    EXPECT_EQ(record.decision.action, oracle[k].action);
    EXPECT_EQ(record.decision.score, 0.25);
    EXPECT_EQ(record.decision.model_role, "champion");
    EXPECT_EQ(record.decision.traceparent, pending[k]->entry.traceparent);
    EXPECT_TRUE(record.decision.accounts_scored);
    EXPECT_EQ(record.source, "cluster");
    EXPECT_EQ(record.actor, "token:t1");
    EXPECT_EQ(record.input_format, "json");
    EXPECT_EQ(record.input_sha256, pending[k]->entry.input_sha256);
    EXPECT_EQ(record.transaction.id, pending[k]->entry.transaction.id);
    ASSERT_EQ(record.features.size(), pending[k]->row.size());
    EXPECT_EQ(std::memcmp(record.features.data(), pending[k]->row.data(),
                          record.features.size() * sizeof(double)),
              0);
    EXPECT_EQ(ToUnixMicros(record.received), pending[k]->entry.received_us);
  }
  // Nothing was recorded in the features: the log's account step does that, on every node.
  EXPECT_TRUE(std::isnan(features_.StandingsOf(pending[1]->entry.transaction)[0].score));
  // The standing stated is the one the decision would give: A's first rule hit, no alert.
  ASSERT_OK_AND_ASSIGN(audit::AuditRecord big, [&] {
    std::string stored;
    audit::AppendAssembledRecord(0, audit::Hash{}, batch[1].record, &stored);
    return audit::DecodeRecord(stored);
  }());
  EXPECT_EQ(big.decision.originator_account.rule_hits, 1u);
  EXPECT_FALSE(big.decision.originator_account.alert);
}

TEST_F(PartitionDeciderTest, TheBatchIsScoredByItsEarliestDeadlineAndHighestPriority) {
  const int p = PartitionMap(kPartitions).Of("B1", "A");
  Pay(1, "A", 100, 900, Priority::kP2);
  Pay(2, "A", 100, 150, Priority::kP0);
  Pay(3, "A", 100, 600, Priority::kP1);
  PartitionDecider decider(maker_, "champion", clock_);
  const auto before = std::chrono::steady_clock::now();
  ASSERT_OK(decider.Decide(Pending(p), features_, ids_).status());
  ASSERT_TRUE(scorer_->deadline.has_value());
  const double ms = std::chrono::duration<double, std::milli>(*scorer_->deadline - before).count();
  EXPECT_GT(ms, 100);
  EXPECT_LE(ms, 150.5);
  EXPECT_EQ(scorer_->priority, Priority::kP0);
  // A deadline already behind the clock gives one behind steady now: the late path.
  Pay(4, "A", 100, -50);
  std::vector<const PendingPayment*> late = {&applier_->pending(p).rbegin()->second};
  ASSERT_OK(decider.Decide(late, features_, ids_).status());
  EXPECT_LT(*scorer_->deadline, std::chrono::steady_clock::now());
}

TEST_F(PartitionDeciderTest, NothingPendingIsAnEmptyBatch) {
  PartitionDecider decider(maker_, "champion", clock_);
  ASSERT_OK_AND_ASSIGN(std::vector<DecidedPayment> none, decider.Decide({}, features_, ids_));
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace vigil::cluster
