#include "vigil/features/payment_motifs.h"

#include <map>

#include "gtest/gtest.h"
#include "vigil/features/account_state.h"

namespace vigil {
namespace {

constexpr int64_t kBase = 1'661'990'400'000'000;  // 2022-09-01T00:00:00Z
constexpr int64_t kDay = kMicrosPerDay;

// A small payment graph: each payment is folded into both parties' histories, as the extractor
// does.
class Graph {
 public:
  void Pay(uint32_t from, uint32_t to, int64_t t) {
    histories_[from].Observe(to, true, t, 100, 32);
    histories_[to].Observe(from, false, t, 100, 32);
  }
  PaymentMotifs Motifs(uint32_t orig, uint32_t bene, int64_t t, MotifLimits limits = {}) {
    return FindPaymentMotifs(orig, bene, t, limits,
                             [this](uint32_t a) -> const AccountHistory& { return histories_[a]; });
  }

 private:
  std::map<uint32_t, AccountHistory> histories_;
};

TEST(PaymentMotifs, FindsTheShortestTimeOrderedCycle) {
  Graph g;
  // 1 -> 2 -> 3 -> 4 -> 0 over four days: 0 paying 1 closes a cycle of length 5.
  g.Pay(1, 2, kBase);
  g.Pay(2, 3, kBase + kDay);
  g.Pay(3, 4, kBase + 2 * kDay);
  g.Pay(4, 0, kBase + 3 * kDay);
  EXPECT_EQ(g.Motifs(0, 1, kBase + 4 * kDay).cycle_length, 5);
  // A shortcut 2 -> 0 after 1 -> 2 makes it 3.
  g.Pay(2, 0, kBase + 3 * kDay);
  EXPECT_EQ(g.Motifs(0, 1, kBase + 4 * kDay).cycle_length, 3);
  // And 1 -> 0 makes it 2.
  g.Pay(1, 0, kBase + 3 * kDay);
  EXPECT_EQ(g.Motifs(0, 1, kBase + 4 * kDay).cycle_length, 2);
}

TEST(PaymentMotifs, TimeOrderAndTheWindowMatter) {
  Graph g;
  // 1 -> 2 after 2 -> 0: money from 1 cannot have reached 0 through 2.
  g.Pay(2, 0, kBase);
  g.Pay(1, 2, kBase + kDay);
  EXPECT_EQ(g.Motifs(0, 1, kBase + 2 * kDay).cycle_length, 0);
  // Same times order the hops (non-decreasing).
  g.Pay(1, 5, kBase + 3 * kDay);
  g.Pay(5, 0, kBase + 3 * kDay);
  EXPECT_EQ(g.Motifs(0, 1, kBase + 4 * kDay).cycle_length, 3);
  // Thirty days later both hops have left the window.
  EXPECT_EQ(g.Motifs(0, 1, kBase + 34 * kDay).cycle_length, 0);
}

TEST(PaymentMotifs, SixIsTheLongest) {
  Graph g;
  // bene 1 -> 2 -> 3 -> 4 -> 5 -> 6 -> orig 0: a cycle of 7, beyond the bound.
  for (uint32_t a = 1; a <= 6; ++a) g.Pay(a, a == 6 ? 0 : a + 1, kBase + a * kMicrosPerHour);
  EXPECT_EQ(g.Motifs(0, 1, kBase + kDay).cycle_length, 0);
  g.Pay(5, 0, kBase + 6 * kMicrosPerHour);  // 1 -> 2 -> 3 -> 4 -> 5 -> 0: six
  EXPECT_EQ(g.Motifs(0, 1, kBase + kDay).cycle_length, 6);
}

TEST(PaymentMotifs, CountsScatterGatherIntermediaries) {
  Graph g;
  // Source 9 pays 0 (orig) and 3, 4, 5; 3 and 4 pay 1 (bene); 5 does not; 6 pays 1 but has no
  // common source.
  g.Pay(9, 0, kBase);
  for (uint32_t m : {3u, 4u, 5u}) g.Pay(9, m, kBase);
  g.Pay(3, 1, kBase + kDay);
  g.Pay(4, 1, kBase + kDay);
  g.Pay(6, 1, kBase + kDay);
  const PaymentMotifs m = g.Motifs(0, 1, kBase + 2 * kDay);
  EXPECT_EQ(m.scatter_gather, 2);
  EXPECT_EQ(m.histories_read, 1) << "9's history, read once";
}

TEST(PaymentMotifs, BoundsLimitTheWork) {
  Graph g;
  // 0's twenty senders each paid by 1 (bene): twenty cycles of length 3.
  for (uint32_t s = 10; s < 30; ++s) {
    g.Pay(1, s, kBase);
    g.Pay(s, 0, kBase + kDay);
  }
  EXPECT_EQ(g.Motifs(0, 1, kBase + 2 * kDay).cycle_length, 3);
  EXPECT_EQ(g.Motifs(0, 1, kBase + 2 * kDay, MotifLimits{8, 0}).cycle_length, 0)
      << "a budget of 0 turns the search off";
  const PaymentMotifs m = g.Motifs(0, 1, kBase + 2 * kDay, MotifLimits{4, 3});
  EXPECT_LE(m.histories_read, 3);
  EXPECT_EQ(m.cycle_length, 3) << "one hop from each side meets without reading more";
}

}  // namespace
}  // namespace vigil
