#include "vigil/cluster/log_applier.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/cluster/partition_writer.h"
#include "vigil/core/fx_rates.h"
#include "vigil/features/feature_store.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

using ::testing::HasSubstr;
using Kind = AppliedMessage::Kind;
using Outcome = AppliedMessage::Outcome;

constexpr int kPartitions = 4;

ClusterLayout Layout() {
  ClusterLayout layout;
  layout.name = "t";
  layout.partitions = kPartitions;
  return layout;
}

FxRates Fx() {
  return *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\nEUR,0.9\n", "fx");
}

Transaction Payment(int k, const std::string& from, const std::string& to, int64_t cents) {
  Transaction tx;
  tx.id = absl::StrCat("tx-", k);
  tx.event_time = FromUnixMicros(1'700'000'000'000'000 + int64_t{k} * 60'000'000);
  tx.originator.account_id = from;
  tx.originator.bank_id = "B1";
  tx.beneficiary.account_id = to;
  tx.beneficiary.bank_id = "B1";
  tx.amount = Money(cents, 2, *Currency::FromCode("USD"));
  return tx;
}

StreamMessage PaymentMessage(uint64_t sequence, const Transaction& tx, int partition = -1) {
  PaymentEntry entry;
  entry.transaction = tx;
  entry.input_format = "json";
  if (partition < 0) {
    partition = PartitionMap(kPartitions).Of(tx.originator.bank_id, tx.originator.account_id);
  }
  StreamMessage m;
  m.subject = PaymentSubject(Layout(), partition);
  m.data = EncodePayment(entry);
  m.sequence = sequence;
  return m;
}

StreamMessage DecisionMessage(uint64_t sequence, int partition,
                              const std::vector<DecidedPayment>& decided) {
  StreamMessage m;
  m.subject = DecisionSubject(Layout(), partition);
  m.data = EncodeDecisions(decided);
  m.sequence = sequence;
  m.headers = {{kKindHeader, kDecisionsKind}, {kOwnerHeader, "node-a"}, {kEpochHeader, "1"}};
  return m;
}

bool SameRow(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// A log of payments among a few accounts (so that their windows, pairs, cycles and
// counterparties interact), with each partition's pending payments decided every few messages.
struct Log {
  std::vector<StreamMessage> messages;
  std::vector<Transaction> payments;
};

Log BuildLog(int payments) {
  Log log;
  uint64_t sequence = 0;
  std::vector<std::vector<DecidedPayment>> undecided(kPartitions);
  const PartitionMap map(kPartitions);
  for (int k = 0; k < payments; ++k) {
    const Transaction tx =
        Payment(k, absl::StrCat("A", (k * 7) % 11), absl::StrCat("A", (k * 3 + 1) % 11),
                10'000 + (k * 7919) % 900'000);
    log.payments.push_back(tx);
    log.messages.push_back(PaymentMessage(++sequence, tx));
    DecidedPayment d;
    d.payment_sequence = sequence;
    d.transaction_id = tx.id;
    d.score = k % 5 == 0 ? std::nan("") : (k % 97) / 97.0;
    d.rule_hit = k % 3 == 0;
    d.alert.score = 0.8;
    d.alert.rule_hits = 4;
    undecided[map.Of("B1", tx.originator.account_id)].push_back(d);
    if (k % 6 == 5) {
      for (int p = 0; p < kPartitions; ++p) {
        if (undecided[p].empty()) continue;
        log.messages.push_back(DecisionMessage(++sequence, p, undecided[p]));
        undecided[p].clear();
      }
    }
  }
  return log;
}

TEST(LogApplierTest, RowsAndRiskAreThoseOfOneExtractorApplyingTheLogInOrder) {
  const FxRates fx = Fx();
  FeatureExtractor node_features(fx, FeatureConfig{});
  LogApplier node(Layout(), &node_features);
  // The oracle: one extractor, each payment applied and each decision folded in, in log order.
  FeatureExtractor oracle(fx, FeatureConfig{});
  const Log log = BuildLog(240);
  const size_t width = FeatureExtractor::Schema()->size();
  std::map<std::string, Transaction> by_id;
  int compared = 0;
  for (const StreamMessage& m : log.messages) {
    ASSERT_OK_AND_ASSIGN(AppliedMessage applied, node.Apply(m));
    if (applied.kind == Kind::kPayment) {
      ASSERT_EQ(applied.outcome, Outcome::kPending);
      ASSERT_OK_AND_ASSIGN(PaymentEntry entry, DecodePayment(m.data));
      std::vector<double> row(width);
      ASSERT_OK(oracle.Process(entry.transaction, absl::MakeSpan(row)));
      const PendingPayment& pending = node.pending(applied.partition).at(m.sequence);
      EXPECT_TRUE(SameRow(pending.row, row)) << entry.transaction.id;
      ++compared;
      by_id[entry.transaction.id] = entry.transaction;
    } else {
      ASSERT_EQ(applied.kind, Kind::kDecisions);
      ASSERT_OK_AND_ASSIGN(std::vector<DecidedPayment> batch, DecodeDecisions(m.data));
      EXPECT_EQ(applied.decided.size(), batch.size());
      for (const DecidedPayment& d : batch) {
        oracle.RecordRisk(by_id.at(d.transaction_id), d.score, d.rule_hit, d.alert);
      }
    }
  }
  EXPECT_EQ(compared, 240);
  EXPECT_EQ(node.stats().payments, 240u);
  EXPECT_EQ(node.position(), log.messages.back().sequence);
  // The risk folded in is the oracle's: every party's standing agrees.
  for (const Transaction& tx : log.payments) {
    const auto mine = node_features.StandingsOf(tx);
    const auto theirs = oracle.StandingsOf(tx);
    for (int side = 0; side < 2; ++side) {
      EXPECT_EQ(std::isnan(mine[side].score), std::isnan(theirs[side].score));
      if (!std::isnan(theirs[side].score)) {
        EXPECT_EQ(mine[side].score, theirs[side].score);
      }
      EXPECT_EQ(mine[side].rule_hits, theirs[side].rule_hits);
    }
  }
}

TEST(LogApplierTest, TwoNodesOnTheSameLogHoldTheSameRowsAndARedeliveryChangesNothing) {
  const FxRates fx = Fx();
  FeatureExtractor fa(fx, FeatureConfig{}), fb(fx, FeatureConfig{});
  LogApplier a(Layout(), &fa), b(Layout(), &fb);
  const Log log = BuildLog(100);
  for (const StreamMessage& m : log.messages) ASSERT_OK(a.Apply(m).status());
  // Node b sees the first half twice (a reconnecting reader), then the rest.
  const size_t half = log.messages.size() / 2;
  for (size_t k = 0; k < half; ++k) ASSERT_OK(b.Apply(log.messages[k]).status());
  for (size_t k = 0; k < half; ++k) {
    ASSERT_OK_AND_ASSIGN(AppliedMessage again, b.Apply(log.messages[k]));
    EXPECT_EQ(again.kind, Kind::kSkipped);
  }
  for (size_t k = half; k < log.messages.size(); ++k) ASSERT_OK(b.Apply(log.messages[k]).status());
  EXPECT_EQ(b.stats().redeliveries, half);
  EXPECT_EQ(a.position(), b.position());
  for (int p = 0; p < kPartitions; ++p) {
    ASSERT_EQ(a.pending(p).size(), b.pending(p).size()) << p;
    for (const auto& [sequence, pending] : a.pending(p)) {
      EXPECT_TRUE(SameRow(pending.row, b.pending(p).at(sequence).row));
    }
  }
  // The last payments' rows, still pending, were computed on equal states.
  int pending = 0;
  for (int p = 0; p < kPartitions; ++p) pending += static_cast<int>(a.pending(p).size());
  EXPECT_GT(pending, 0);
}

TEST(LogApplierTest, AStateSavedHalfwayAndRestoredGoesOnAsAnUninterruptedOne) {
  const FxRates fx = Fx();
  vigil::testing::ScratchDir dir;
  FeatureExtractor fa(fx, FeatureConfig{});
  LogApplier a(Layout(), &fa);
  const Log log = BuildLog(123);  // the last three payments pending
  for (const StreamMessage& m : log.messages) ASSERT_OK(a.Apply(m).status());
  // Node b applies half, checkpoints (features and applier in one batch), and stops.
  const size_t half = log.messages.size() / 2;
  {
    ASSERT_OK_AND_ASSIGN(auto store,
                         FeatureStore::Open(dir.path(), fx, FeatureConfig{}, {"cluster"}));
    LogApplier b(Layout(), &store->extractor(), 0, {.idempotency_capacity = 50});
    for (size_t k = 0; k < half; ++k) ASSERT_OK(b.Apply(log.messages[k]).status());
    KvWriteBatch batch;
    store->StageInto(batch);
    b.SaveInto(batch, "cluster");
    ASSERT_OK(store->kv().Write(batch));
  }
  // Restarted from the checkpoint, it applies the rest (and skips a redelivered first half).
  ASSERT_OK_AND_ASSIGN(auto store,
                       FeatureStore::Open(dir.path(), fx, FeatureConfig{}, {"cluster"}));
  LogApplier b(Layout(), &store->extractor(), 0, {.idempotency_capacity = 50});
  ASSERT_OK(b.Restore(store->kv(), "cluster"));
  EXPECT_EQ(b.position(), log.messages[half - 1].sequence);
  for (const StreamMessage& m : log.messages) ASSERT_OK(b.Apply(m).status());
  EXPECT_EQ(b.stats().redeliveries, half);
  EXPECT_EQ(b.position(), a.position());
  EXPECT_EQ(b.stats().payments, a.stats().payments);
  EXPECT_EQ(b.stats().decisions, a.stats().decisions);
  int pending = 0;
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(b.progress(p).decisions, a.progress(p).decisions);
    EXPECT_EQ(b.progress(p).last_decision_sequence, a.progress(p).last_decision_sequence);
    ASSERT_EQ(a.pending(p).size(), b.pending(p).size()) << p;
    for (const auto& [sequence, payment] : a.pending(p)) {
      EXPECT_TRUE(SameRow(payment.row, b.pending(p).at(sequence).row));
      EXPECT_EQ(payment.entry.transaction.id, b.pending(p).at(sequence).entry.transaction.id);
      ++pending;
    }
  }
  EXPECT_GT(pending, 0);
  // The idempotency memory came back: a payment of the first half is a duplicate.
  ASSERT_OK_AND_ASSIGN(
      AppliedMessage again,
      b.Apply(PaymentMessage(log.messages.back().sequence + 1, log.payments[110])));
  EXPECT_EQ(again.outcome, Outcome::kDuplicate);
  // The features are the uninterrupted node's: the next payment's row is the same.
  const Transaction next = Payment(500, "A3", "A4", 12'345);
  std::vector<double> ra(FeatureExtractor::Schema()->size()), rb(ra.size());
  ASSERT_OK(fa.Process(next, absl::MakeSpan(ra)));
  ASSERT_OK(store->extractor().Process(next, absl::MakeSpan(rb)));
  EXPECT_TRUE(SameRow(ra, rb));
}

TEST(LogApplierTest, AStateOfAnotherClusterIsRefusedNamingBoth) {
  const FxRates fx = Fx();
  vigil::testing::ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(auto store,
                       FeatureStore::Open(dir.path(), fx, FeatureConfig{}, {"cluster"}));
  LogApplier a(Layout(), &store->extractor());
  KvWriteBatch batch;
  a.SaveInto(batch, "cluster");
  ASSERT_OK(store->kv().Write(batch));
  ClusterLayout other = Layout();
  other.partitions = 8;
  LogApplier b(other, &store->extractor());
  const absl::Status restored = b.Restore(store->kv(), "cluster");
  EXPECT_TRUE(absl::IsFailedPrecondition(restored)) << restored;
  EXPECT_THAT(restored.message(), HasSubstr("4 partitions"));
  EXPECT_THAT(restored.message(), HasSubstr("8"));
}

TEST(LogApplierTest, ARepeatedIdIsTheSamePaymentOrAConflictAndChangesNothing) {
  const FxRates fx = Fx();
  FeatureExtractor features(fx, FeatureConfig{});
  LogApplier node(Layout(), &features);
  const Transaction tx = Payment(1, "A1", "A2", 50'000);
  ASSERT_OK_AND_ASSIGN(AppliedMessage first, node.Apply(PaymentMessage(1, tx)));
  EXPECT_EQ(first.outcome, Outcome::kPending);
  ASSERT_OK_AND_ASSIGN(AppliedMessage again, node.Apply(PaymentMessage(2, tx)));
  EXPECT_EQ(again.outcome, Outcome::kDuplicate);
  Transaction other = tx;
  other.amount = Money(60'000, 2, *Currency::FromCode("USD"));
  ASSERT_OK_AND_ASSIGN(AppliedMessage conflict, node.Apply(PaymentMessage(3, other)));
  EXPECT_EQ(conflict.outcome, Outcome::kConflict);
  EXPECT_THAT(conflict.refusal.message(), HasSubstr("already used by another payment"));
  EXPECT_EQ(node.pending(first.partition).size(), 1u);
  EXPECT_EQ(node.stats().payments, 1u);
  EXPECT_EQ(node.stats().duplicates, 1u);
  EXPECT_EQ(node.stats().conflicts, 1u);
  EXPECT_EQ(node.position(), 3u);
  // Only one payment reached the features: the originator sent once.
  std::vector<double> row(FeatureExtractor::Schema()->size());
  ASSERT_OK(features.Process(Payment(9, "A1", "A3", 100), absl::MakeSpan(row)));
  EXPECT_EQ(row[*FeatureExtractor::Schema()->IndexOf("orig_out_count_24h")], 2.0);
}

TEST(LogApplierTest, ARefusedPaymentIsNotRememberedAndAMisroutedOneIsRefused) {
  const FxRates fx = Fx();
  FeatureExtractor features(fx, FeatureConfig{});
  LogApplier node(Layout(), &features);
  Transaction unconvertible = Payment(1, "A1", "A2", 100);
  unconvertible.amount = Money(100, 2, *Currency::FromCode("JPY"));  // no JPY rate
  ASSERT_OK_AND_ASSIGN(AppliedMessage refused, node.Apply(PaymentMessage(1, unconvertible)));
  EXPECT_EQ(refused.outcome, Outcome::kRefused);
  EXPECT_EQ(RefusedField(refused.refusal), "$.amount.currency");
  // The corrected payment under the same id is applied: the refusal was not remembered.
  ASSERT_OK_AND_ASSIGN(AppliedMessage fixed,
                       node.Apply(PaymentMessage(2, Payment(1, "A1", "A2", 100))));
  EXPECT_EQ(fixed.outcome, Outcome::kPending);

  const Transaction tx = Payment(2, "A5", "A2", 100);
  const int home = PartitionMap(kPartitions).Of("B1", "A5");
  ASSERT_OK_AND_ASSIGN(AppliedMessage misrouted,
                       node.Apply(PaymentMessage(3, tx, (home + 1) % kPartitions)));
  EXPECT_EQ(misrouted.outcome, Outcome::kRefused);
  EXPECT_THAT(misrouted.refusal.message(), HasSubstr(absl::StrCat("partition is ", home)));
  EXPECT_EQ(node.stats().payments, 1u);
}

TEST(LogApplierTest, ADecisionOfNoPendingPaymentChangesNothing) {
  const FxRates fx = Fx();
  FeatureExtractor features(fx, FeatureConfig{});
  LogApplier node(Layout(), &features);
  const Transaction tx = Payment(1, "A1", "A2", 100);
  ASSERT_OK_AND_ASSIGN(AppliedMessage paid, node.Apply(PaymentMessage(1, tx)));
  const int p = paid.partition;
  DecidedPayment d;
  d.payment_sequence = 1;
  d.transaction_id = tx.id;
  d.score = 0.99;
  d.alert.score = 0.5;
  DecidedPayment wrong_id = d;
  wrong_id.transaction_id = "tx-other";
  DecidedPayment elsewhere = d;
  ASSERT_OK_AND_ASSIGN(AppliedMessage none,
                       node.Apply(DecisionMessage(2, (p + 1) % kPartitions, {elsewhere})));
  EXPECT_TRUE(none.decided.empty());
  ASSERT_OK_AND_ASSIGN(AppliedMessage one, node.Apply(DecisionMessage(3, p, {wrong_id, d})));
  ASSERT_EQ(one.decided.size(), 1u);
  EXPECT_TRUE(node.pending(p).empty());
  // Decided again (it cannot be, fenced; but were it): counted, not folded in twice.
  ASSERT_OK_AND_ASSIGN(AppliedMessage twice, node.Apply(DecisionMessage(4, p, {d})));
  EXPECT_TRUE(twice.decided.empty());
  EXPECT_EQ(node.stats().unexpected_decisions, 3u);
  EXPECT_EQ(node.stats().decisions, 1u);
  EXPECT_EQ(node.progress(p).decisions, 1u);
  EXPECT_EQ(node.progress(p).last_decision_sequence, 4u);
  EXPECT_NEAR(features.StandingsOf(tx)[0].score, 0.99, 1e-4);  // kept to 1/65534
}

TEST(LogApplierTest, TakeoverMarkersAndUnreadableMessagesMoveThePosition) {
  const FxRates fx = Fx();
  FeatureExtractor features(fx, FeatureConfig{});
  LogApplier node(Layout(), &features);
  StreamMessage takeover;
  takeover.subject = DecisionSubject(Layout(), 2);
  takeover.sequence = 5;
  takeover.headers = {{kKindHeader, kTakeoverKind}, {kOwnerHeader, "node-b"}, {kEpochHeader, "17"}};
  ASSERT_OK_AND_ASSIGN(AppliedMessage marker, node.Apply(takeover));
  EXPECT_EQ(marker.kind, Kind::kTakeover);
  EXPECT_EQ(node.progress(2).owner, "node-b");
  EXPECT_EQ(node.progress(2).epoch, 17u);
  EXPECT_EQ(node.progress(2).last_decision_sequence, 5u);

  StreamMessage garbage;
  garbage.subject = PaymentSubject(Layout(), 1);
  garbage.sequence = 6;
  garbage.data = "not an entry";
  ASSERT_OK_AND_ASSIGN(AppliedMessage unreadable, node.Apply(garbage));
  EXPECT_EQ(unreadable.kind, Kind::kUnreadable);
  EXPECT_EQ(unreadable.refusal.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(node.stats().unreadable, 1u);
  EXPECT_EQ(node.position(), 6u);

  StreamMessage foreign;
  foreign.subject = "vigil.other.pay.1";
  foreign.sequence = 7;
  EXPECT_EQ(node.Apply(foreign).status().code(), absl::StatusCode::kInvalidArgument);
  foreign.subject = PaymentSubject(Layout(), kPartitions);  // no such partition
  EXPECT_EQ(node.Apply(foreign).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(node.position(), 6u);
}

}  // namespace
}  // namespace vigil::cluster
