#include "vigil/synth/internal/pattern_builder.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "vigil/synth/internal/test_util.h"

namespace vigil::synth::internal {
namespace {

constexpr int kAttempts = 300;

class PatternBuilderTest : public ::testing::Test {
 protected:
  PatternBuilderTest()
      : population_(PopulationForTest(5000, 21)),
        builder_(&population_, &RepositoryFxConverter(), 10000.0) {}

  // kAttempts attempts of `t`, each checked for the properties every typology shares.
  std::vector<std::vector<SynthRow>> BuildMany(Typology t) {
    std::vector<std::vector<SynthRow>> attempts;
    Rng rng(static_cast<uint64_t>(t), 99);
    for (int i = 0; i < kAttempts; ++i) {
      std::vector<SynthRow> rows;
      const int n = builder_.Build(t, rng, &rows);
      EXPECT_EQ(n, static_cast<int>(rows.size()));
      for (const SynthRow& r : rows) {
        EXPECT_EQ(r.typology, t);
        EXPECT_GE(r.minute, 0);
        EXPECT_NE(r.from, r.to);
        EXPECT_GT(r.paid_minor, 0);
        EXPECT_EQ(r.format == PaymentFormat::kBitcoin, r.paid_ccy == kXbt);
      }
      attempts.push_back(std::move(rows));
    }
    return attempts;
  }

  double Usd(const SynthRow& r) const {
    return RepositoryFxConverter().ToUsd(r.paid_minor, r.paid_ccy);
  }

  Population population_;
  PatternBuilder builder_;
};

TEST_F(PatternBuilderTest, CyclesReturnToTheirStart) {
  std::set<int> hop_counts;
  for (const auto& rows : BuildMany(Typology::kCycle)) {
    const int hops = static_cast<int>(rows.size());
    ASSERT_GE(hops, kCycleMinHops);
    ASSERT_LE(hops, kCycleMaxHops);
    hop_counts.insert(hops);
    std::set<int32_t> accounts;
    for (int i = 0; i < hops; ++i) {
      accounts.insert(rows[i].from);
      // Each hop pays on what the previous one received, later and a little less.
      if (i > 0) {
        EXPECT_EQ(rows[i].from, rows[i - 1].to);
        EXPECT_GE(rows[i].minute, rows[i - 1].minute + 30);
        EXPECT_LT(Usd(rows[i]), Usd(rows[i - 1]));
      }
    }
    EXPECT_EQ(rows.back().to, rows.front().from) << "the cycle does not close";
    EXPECT_EQ(accounts.size(), rows.size()) << "an account repeats inside the cycle";
  }
  EXPECT_EQ(hop_counts.size(), static_cast<size_t>(kCycleMaxHops - kCycleMinHops + 1));
}

TEST_F(PatternBuilderTest, FanOutDegreeIsInRange) {
  std::set<size_t> degrees;
  for (const auto& rows : BuildMany(Typology::kFanOut)) {
    std::set<int32_t> sources;
    std::set<int32_t> targets;
    for (const SynthRow& r : rows) {
      sources.insert(r.from);
      targets.insert(r.to);
    }
    EXPECT_EQ(sources.size(), 1u);
    EXPECT_EQ(targets.size(), rows.size());
    EXPECT_GE(targets.size(), static_cast<size_t>(kFanMinDegree));
    EXPECT_LE(targets.size(), static_cast<size_t>(kFanMaxDegree));
    degrees.insert(targets.size());
  }
  EXPECT_EQ(degrees.size(), static_cast<size_t>(kFanMaxDegree - kFanMinDegree + 1));
}

TEST_F(PatternBuilderTest, FanInDegreeIsInRange) {
  for (const auto& rows : BuildMany(Typology::kFanIn)) {
    std::set<int32_t> sources;
    std::set<int32_t> targets;
    for (const SynthRow& r : rows) {
      sources.insert(r.from);
      targets.insert(r.to);
    }
    EXPECT_EQ(targets.size(), 1u);
    EXPECT_EQ(sources.size(), rows.size());
    EXPECT_GE(sources.size(), static_cast<size_t>(kFanMinDegree));
    EXPECT_LE(sources.size(), static_cast<size_t>(kFanMaxDegree));
  }
}

TEST_F(PatternBuilderTest, ScatterGatherPassesThroughIntermediariesToOneDestination) {
  for (const auto& rows : BuildMany(Typology::kScatterGather)) {
    ASSERT_EQ(rows.size() % 2, 0u);
    const int32_t source = rows[0].from;
    const int32_t destination = rows[1].to;
    const int width = static_cast<int>(rows.size() / 2);
    EXPECT_GE(width, kScatterMinWidth);
    EXPECT_LE(width, kScatterMaxWidth);
    for (int i = 0; i < width; ++i) {
      const SynthRow& out = rows[2 * i];
      const SynthRow& in = rows[2 * i + 1];
      EXPECT_EQ(out.from, source);
      EXPECT_EQ(in.to, destination);
      EXPECT_EQ(in.from, out.to);
      EXPECT_GE(in.minute, out.minute);  // an intermediary forwards only what it received
    }
  }
}

TEST_F(PatternBuilderTest, GatherScatterPaysOutAfterEverythingCameIn) {
  for (const auto& rows : BuildMany(Typology::kGatherScatter)) {
    const int32_t hub = rows[0].to;
    int in = 0;
    int32_t last_in = 0;
    int32_t first_out = INT32_MAX;
    for (const SynthRow& r : rows) {
      ASSERT_TRUE(r.to == hub || r.from == hub);
      if (r.to == hub) {
        ++in;
        last_in = std::max(last_in, r.minute);
      } else {
        first_out = std::min(first_out, r.minute);
      }
    }
    const int out = static_cast<int>(rows.size()) - in;
    EXPECT_GE(in, kGatherMinWidth);
    EXPECT_LE(in, kGatherMaxWidth);
    EXPECT_GE(out, kGatherMinWidth);
    EXPECT_LE(out, kGatherMaxWidth);
    EXPECT_GE(first_out, last_in);
  }
}

TEST_F(PatternBuilderTest, BipartiteSidesAllTakePart) {
  for (const auto& rows : BuildMany(Typology::kBipartite)) {
    std::set<int32_t> left;
    std::set<int32_t> right;
    for (const SynthRow& r : rows) {
      left.insert(r.from);
      right.insert(r.to);
    }
    for (int32_t a : left) EXPECT_EQ(right.count(a), 0u) << "an account on both sides";
    EXPECT_GE(left.size(), static_cast<size_t>(kBipartiteMinSide));
    EXPECT_LE(left.size(), static_cast<size_t>(kBipartiteMaxSide));
    EXPECT_GE(right.size(), static_cast<size_t>(kBipartiteMinSide));
    EXPECT_LE(right.size(), static_cast<size_t>(kBipartiteMaxSide));
  }
}

TEST_F(PatternBuilderTest, StackLayersPayOnOnlyAfterBeingPaid) {
  for (const auto& rows : BuildMany(Typology::kStack)) {
    std::map<int32_t, int32_t> last_paid;  // account -> latest minute it received
    std::set<int32_t> payers;
    std::set<int32_t> payees;
    for (const SynthRow& r : rows) {
      payers.insert(r.from);
      payees.insert(r.to);
      last_paid[r.to] = std::max(last_paid[r.to], r.minute);
    }
    for (const SynthRow& r : rows) {
      if (last_paid.count(r.from)) {
        EXPECT_GT(r.minute, last_paid[r.from]);
      }
    }
    // At least three layers: some account both receives and pays.
    int middle = 0;
    for (int32_t a : payers) middle += payees.count(a) ? 1 : 0;
    EXPECT_GE(middle, kStackMinLayerSize);
  }
}

TEST_F(PatternBuilderTest, StructuringStaysJustUnderTheThreshold) {
  for (const auto& rows : BuildMany(Typology::kStructuring)) {
    EXPECT_GE(rows.size(), static_cast<size_t>(kStructuringMinPayments));
    EXPECT_LE(rows.size(), static_cast<size_t>(kStructuringMaxPayments));
    for (const SynthRow& r : rows) {
      EXPECT_GE(Usd(r), kStructuringLow * 10000.0);
      EXPECT_LT(Usd(r), kStructuringHigh * 10000.0);
      EXPECT_LT(r.minute, 2 * 1440);
      EXPECT_TRUE(r.format == PaymentFormat::kCash || r.format == PaymentFormat::kAch ||
                  r.format == PaymentFormat::kCheque);
    }
  }
}

TEST_F(PatternBuilderTest, PassThroughMoneyLeavesWithinHoursInASimilarTotal) {
  for (const auto& rows : BuildMany(Typology::kPassThrough)) {
    // The mule is the one account that both receives and pays.
    int32_t mule = -1;
    for (const SynthRow& r : rows) {
      for (const SynthRow& s : rows) {
        if (r.to == s.from) mule = r.to;
      }
    }
    ASSERT_GE(mule, 0);
    double in = 0;
    double out = 0;
    int32_t last_in = 0;
    int32_t last_out = 0;
    for (const SynthRow& r : rows) {
      if (r.to == mule) {
        in += Usd(r);
        last_in = std::max(last_in, r.minute);
      } else {
        EXPECT_EQ(r.from, mule);
        out += Usd(r);
        last_out = std::max(last_out, r.minute);
      }
    }
    EXPECT_LE(last_out - last_in, kPassThroughMaxHoldMinutes);
    EXPECT_GT(out, 0.91 * in);
    EXPECT_LT(out, 1.0 * in);
  }
}

TEST_F(PatternBuilderTest, SameRngSameAttempt) {
  Rng a(5, 1);
  Rng b(5, 1);
  std::vector<SynthRow> x;
  std::vector<SynthRow> y;
  builder_.Build(Typology::kStack, a, &x);
  builder_.Build(Typology::kStack, b, &y);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i].from, y[i].from);
    EXPECT_EQ(x[i].to, y[i].to);
    EXPECT_EQ(x[i].minute, y[i].minute);
    EXPECT_EQ(x[i].paid_minor, y[i].paid_minor);
  }
}

}  // namespace
}  // namespace vigil::synth::internal
