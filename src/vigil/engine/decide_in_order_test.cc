#include "vigil/engine/decide_in_order.h"

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "vigil/common/clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

constexpr int64_t kBase = 1'661'990'400'000'000;  // 2022-09-01T00:00:00Z
constexpr int64_t kSecond = 1'000'000;

FxRates Rates() {
  auto fx = FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\n", "t");
  EXPECT_TRUE(fx.ok()) << fx.status();
  return *std::move(fx);
}

// Rules only, and one rule that reads the counterparty-risk columns: a payment's decision
// depends on the decisions before it, so a stale row decides otherwise.
std::shared_ptr<const Policy> RiskPolicy() {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(R"(version: "risk"
thresholds: {review: 0.5, block: 0.9}
accounts: {alert_rule_hits: 3}
rules:
  - id: big
    when: amount_reporting > 600
    action: review
    reason: "big"
  - id: known
    when: orig_account_rule_hits >= 2 or bene_counterparties_with_rule_hits >= 1
    action: block
    reason: "known"
)",
                              "p.yaml", layout, ListLibrary{});
  EXPECT_TRUE(policy.ok()) << policy.status();
  return *policy;
}

std::vector<Transaction> Stream(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Transaction> txs;
  int64_t now = kBase;
  for (int i = 0; i < n; ++i) {
    now += static_cast<int64_t>(rng() % 120) * kSecond;
    const int from = static_cast<int>(rng() % 12);
    const int to = (from + 1 + static_cast<int>(rng() % 11)) % 12;
    Transaction tx;
    tx.id = absl::StrCat("p", i);
    tx.event_time = FromUnixMicros(now);
    tx.originator.bank_id = tx.beneficiary.bank_id = "B";
    tx.originator.account_id = absl::StrCat("A", from);
    tx.beneficiary.account_id = absl::StrCat("A", to);
    tx.amount = Money(static_cast<int64_t>(100 + rng() % 1000) * 100, 2,
                      *Currency::FromCode("USD"));
    txs.push_back(std::move(tx));
  }
  return txs;
}

// What a decision is, without its per-run id.
std::string Summary(const Decision& d) {
  std::string s = absl::StrCat(ActionName(d.action), " role=", d.model_role, " reasons=");
  for (const Reason& r : d.reasons) absl::StrAppend(&s, r.code, ",");
  for (const AccountStanding* a : {&d.originator_account, &d.beneficiary_account}) {
    absl::StrAppend(&s, " hits=", a->rule_hits, " alert=", a->alert);
  }
  return s;
}

class DecideInOrderTest : public ::testing::Test {
 protected:
  DecideInOrderTest() : fx_(Rates()), decider_(RiskPolicy(), nullptr, layout()) {
    config_.counterparty_risk_max = 4;
  }
  static PolicyInputLayout layout() { return PolicyInputLayout(FeatureExtractor::Schema()); }

  FxRates fx_;
  FeatureConfig config_;
  DecisionMaker decider_;
  UuidV7Generator ids_{RealClock(), 7};
};

// Decided a batch at a time (rows computed before any decision of the batch), the decisions,
// standings and rows are those of one payment at a time.
TEST_F(DecideInOrderTest, ABatchDecidesAsPaymentsOneAtATime) {
  const std::vector<Transaction> txs = Stream(1500, 11);
  const size_t width = FeatureExtractor::Schema()->size();

  FeatureExtractor alone(fx_, config_);
  std::vector<Decision> expected(txs.size());
  std::vector<double> expected_rows(txs.size() * width);
  const DecisionStep alone_step{
      .decider = &decider_, .features = &alone, .ids = &ids_, .model_role = "none"};
  AccountsChanged unused;
  for (size_t i = 0; i < txs.size(); ++i) {
    const absl::Span<double> row = absl::MakeSpan(expected_rows).subspan(i * width, width);
    ASSERT_OK(alone.Process(txs[i], row));
    const Transaction* tx = &txs[i];
    ASSERT_OK_AND_ASSIGN(const int64_t redecided,
                         DecideInOrder(alone_step, {.txs = absl::MakeConstSpan(&tx, 1), .rows = row},
                                       {}, unused, absl::MakeSpan(&expected[i], 1)));
    EXPECT_EQ(redecided, 0);
  }

  FeatureExtractor batched(fx_, config_);
  absl::Mutex mu;
  const DecisionStep step{.decider = &decider_,
                          .features = &batched,
                          .features_mu = &mu,
                          .ids = &ids_,
                          .model_role = "none"};
  constexpr size_t kBatch = 50;
  int64_t redecided = 0;
  int stale_decisions = 0;
  for (size_t start = 0; start < txs.size(); start += kBatch) {
    const absl::Span<const Transaction> batch = absl::MakeConstSpan(txs).subspan(start, kBatch);
    std::vector<double> rows(batch.size() * width);
    std::vector<absl::Status> statuses(batch.size());
    RiskReads reads;
    batched.ProcessBatch(batch, absl::MakeSpan(rows), absl::MakeSpan(statuses), &reads);
    std::vector<const Transaction*> ptrs;
    std::vector<size_t> read_of;
    for (size_t k = 0; k < batch.size(); ++k) {
      ASSERT_OK(statuses[k]);
      ptrs.push_back(&batch[k]);
      read_of.push_back(k);
    }
    // The same batch decided without repair, for the count of decisions repair changed.
    std::vector<Decision> unrepaired(batch.size());
    ASSERT_OK(decider_.DecideBatch(ptrs, rows, absl::MakeSpan(unrepaired), ids_));
    std::vector<Decision> decisions(batch.size());
    AccountsChanged changed;
    ASSERT_OK_AND_ASSIGN(
        const int64_t n,
        DecideInOrder(step, {.txs = ptrs, .rows = absl::MakeSpan(rows), .reads = &reads,
                             .read_of = read_of},
                      {}, changed, absl::MakeSpan(decisions)));
    redecided += n;
    for (size_t k = 0; k < batch.size(); ++k) {
      const size_t i = start + k;
      EXPECT_EQ(Summary(decisions[k]), Summary(expected[i])) << "payment " << i;
      // Bit for bit: a NaN column stays a NaN.
      EXPECT_EQ(std::memcmp(rows.data() + k * width, expected_rows.data() + i * width,
                            width * sizeof(double)),
                0)
          << "row " << i;
      stale_decisions += unrepaired[k].action != decisions[k].action;
    }
  }
  // The stream must make rows stale within a batch, and stale rows decide otherwise.
  EXPECT_GT(redecided, 20);
  EXPECT_GT(stale_decisions, 5);
}

// A row whose reads are not known (kept from an earlier attempt) is decided as it is.
TEST_F(DecideInOrderTest, ARowWithoutReadsIsNotRepaired) {
  const std::vector<Transaction> txs = Stream(2, 3);
  FeatureExtractor features(fx_, config_);
  const size_t width = FeatureExtractor::Schema()->size();
  std::vector<double> rows(2 * width);
  std::vector<absl::Status> statuses(2);
  RiskReads reads;
  features.ProcessBatch(txs, absl::MakeSpan(rows), absl::MakeSpan(statuses), &reads);
  const std::vector<const Transaction*> ptrs = {&txs[0], &txs[1]};
  const std::vector<size_t> read_of = {PaymentsInOrder::kNotRead, PaymentsInOrder::kNotRead};
  AccountsChanged changed = {0, 1, 2, 3};  // every account changed: all would be repaired
  std::vector<Decision> decisions(2);
  const DecisionStep step{
      .decider = &decider_, .features = &features, .ids = &ids_, .model_role = "champion"};
  ASSERT_OK_AND_ASSIGN(const int64_t n,
                       DecideInOrder(step,
                                     {.txs = ptrs, .rows = absl::MakeSpan(rows), .reads = &reads,
                                      .read_of = read_of},
                                     {}, changed, absl::MakeSpan(decisions)));
  EXPECT_EQ(n, 0);
  EXPECT_EQ(decisions[0].model_role, "champion");
  EXPECT_TRUE(decisions[1].accounts_scored);
}

}  // namespace
}  // namespace vigil
