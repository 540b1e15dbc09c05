#include "vigil/drift/live_window.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/common/clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::StatusIs;
using std::chrono::seconds;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A multiple of every slide used here (10, 60, 300 s), so panes start at whole slides from it.
constexpr int64_t kBaseSeconds = 1'699'999'800;
constexpr int64_t kBaseMicros = kBaseSeconds * 1'000'000;
static_assert(kBaseSeconds % 300 == 0);

UtcTime At(double s) { return FromUnixMicros(kBaseMicros + std::llround(s * 1e6)); }

LiveWindowConfig Config(int size_s, int slide_s, int half_life_s = 0, size_t sample = 128,
                        uint64_t seed = 1) {
  LiveWindowConfig c;
  c.size = seconds(size_s);
  c.slide = seconds(slide_s);
  c.decay_half_life = seconds(half_life_s);
  c.sample_rows_per_pane = sample;
  c.seed = seed;
  return c;
}

bool Add(LiveWindow& w, UtcTime t, std::vector<uint32_t> cells, std::vector<double> values) {
  return w.Add(t, cells, values);
}

TEST(LiveWindow, CreateGivesTheRingAndSubjects) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(60, 10), {4, 3}));
  EXPECT_EQ(w.panes(), 6u);
  EXPECT_EQ(w.subjects(), 2u);
  EXPECT_EQ(w.late(), 0u);
  EXPECT_EQ(w.newest_pane(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(w.config().size, seconds(60));
  EXPECT_EQ(w.config().slide, seconds(10));
  ASSERT_OK_AND_ASSIGN(LiveWindow one, LiveWindow::Create(Config(300, 300), {1}));
  EXPECT_EQ(one.panes(), 1u);
  EXPECT_EQ(one.subjects(), 1u);
}

TEST(LiveWindow, CreateErrors) {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_THAT(LiveWindow::Create(Config(60, 0), {3}), StatusIs(kInvalid, HasSubstr("slide")));
  EXPECT_THAT(LiveWindow::Create(Config(60, -10), {3}), StatusIs(kInvalid, HasSubstr("slide")));
  EXPECT_THAT(LiveWindow::Create(Config(45, 10), {3}), StatusIs(kInvalid, HasSubstr("multiple")));
  EXPECT_THAT(LiveWindow::Create(Config(60, 7), {3}), StatusIs(kInvalid, HasSubstr("multiple")));
  EXPECT_THAT(LiveWindow::Create(Config(0, 10), {3}), StatusIs(kInvalid, HasSubstr("size")));
  EXPECT_THAT(LiveWindow::Create(Config(-60, 10), {3}), StatusIs(kInvalid, HasSubstr("size")));
  EXPECT_THAT(LiveWindow::Create(Config(60, 10, -1), {3}), StatusIs(kInvalid, HasSubstr("decay")));
  EXPECT_THAT(LiveWindow::Create(Config(60, 10), {}), StatusIs(kInvalid, HasSubstr("subject")));
  EXPECT_THAT(LiveWindow::Create(Config(60, 10), {3, 0, 2}),
              StatusIs(kInvalid, HasSubstr("subject 1")));
  EXPECT_THAT(LiveWindow::Create(Config(60, 10), {0}), StatusIs(kInvalid, HasSubstr("subject 0")));
  EXPECT_THAT(LiveWindow::Create(Config(60, 10, 0, 0), {3}),
              StatusIs(kInvalid, HasSubstr("sample_rows_per_pane")));
  // The boundaries that are allowed.
  EXPECT_OK(LiveWindow::Create(Config(10, 10, 0, 1), {1}).status());
  EXPECT_OK(LiveWindow::Create(Config(60, 10, 120, 1), {1, 1}).status());
}

TEST(LiveWindow, PaneOfFloorsEventTimeBySlide) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(60, 10), {2}));
  const int64_t base = kBaseSeconds / 10;
  EXPECT_EQ(w.PaneOf(At(0)), base);
  EXPECT_EQ(w.PaneOf(At(9.999999)), base);
  EXPECT_EQ(w.PaneOf(At(10)), base + 1);
  EXPECT_EQ(w.PaneOf(At(-0.000001)), base - 1);
  EXPECT_EQ(w.PaneOf(FromUnixMicros(0)), 0);
  EXPECT_EQ(w.PaneOf(FromUnixMicros(-1)), -1);
  EXPECT_EQ(w.PaneOf(FromUnixMicros(-10'000'000)), -1);
  EXPECT_EQ(w.PaneOf(FromUnixMicros(-10'000'001)), -2);
}

// One row a second for 0..59 s, subject 0 in 4 cells (s % 4), subject 1 in 3 cells (s % 3).
void FillMinute(LiveWindow& w) {
  for (int s = 0; s < 60; ++s) {
    ASSERT_TRUE(Add(w, At(s), {static_cast<uint32_t>(s % 4), static_cast<uint32_t>(s % 3)},
                    {static_cast<double>(s), static_cast<double>(100 + s)}))
        << s;
  }
}

std::vector<double> ExpectedCells(int from_s, int to_s, int modulus) {
  std::vector<double> cells(static_cast<size_t>(modulus), 0.0);
  for (int s = from_s; s <= to_s; ++s) cells[static_cast<size_t>(s % modulus)] += 1;
  return cells;
}

TEST(LiveWindow, CountsEachSubjectExactlyPerCellWithinTheWindow) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(60, 10), {4, 3}));
  FillMinute(w);
  const int64_t as_of = w.PaneOf(At(59));
  EXPECT_EQ(w.newest_pane(), as_of);
  const LiveWindow::Snapshot s0 = w.Take(0, as_of, false);
  EXPECT_EQ(s0.rows, 60u);
  EXPECT_EQ(s0.weight, 60);
  EXPECT_EQ(s0.effective_rows, 60);
  EXPECT_THAT(s0.cells, ElementsAre(15, 15, 15, 15));
  const LiveWindow::Snapshot s1 = w.Take(1, as_of, false);
  EXPECT_EQ(s1.rows, 60u);
  EXPECT_THAT(s1.cells, ElementsAre(20, 20, 20));
  EXPECT_THAT(s0.sample, IsEmpty());
  EXPECT_EQ(s0.end, At(60));
}

TEST(LiveWindow, ExpiredPanesLeaveTheWindow) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(60, 10), {4, 3}));
  FillMinute(w);
  // 85 s: the window is now [30 s, 90 s); the panes 0-29 s have left it.
  ASSERT_TRUE(Add(w, At(85), {3, 2}, {85, 185}));
  const int64_t as_of = w.PaneOf(At(85));
  EXPECT_EQ(w.newest_pane(), as_of);
  EXPECT_EQ(w.RowsAsOf(as_of), 31u);
  const LiveWindow::Snapshot s0 = w.Take(0, as_of, true);
  EXPECT_EQ(s0.rows, 31u);
  std::vector<double> expected0 = ExpectedCells(30, 59, 4);
  expected0[3] += 1;
  EXPECT_THAT(s0.cells, ElementsAreArray(expected0));
  std::vector<double> expected1 = ExpectedCells(30, 59, 3);
  expected1[2] += 1;
  EXPECT_THAT(w.Take(1, as_of, false).cells, ElementsAreArray(expected1));
  // The sample holds only rows of the window.
  ASSERT_EQ(s0.sample.size(), 31u);
  EXPECT_EQ(s0.sample.front(), 30);
  EXPECT_EQ(s0.sample.back(), 85);
  EXPECT_EQ(s0.end, At(90));
  // Far later, everything has expired.
  ASSERT_TRUE(Add(w, At(1000), {0, 0}, {1, 1}));
  const LiveWindow::Snapshot late = w.Take(0, w.newest_pane(), true);
  EXPECT_EQ(late.rows, 1u);
  EXPECT_THAT(late.cells, ElementsAre(1, 0, 0, 0));
  EXPECT_THAT(late.sample, ElementsAre(1));
}

TEST(LiveWindow, LateRowsAreDroppedAndCounted) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(60, 10), {4, 3}));
  FillMinute(w);
  ASSERT_TRUE(Add(w, At(85), {3, 2}, {85, 185}));  // window start: 30 s
  const int64_t as_of = w.newest_pane();
  const LiveWindow::Snapshot before = w.Take(0, as_of, true);
  EXPECT_FALSE(Add(w, At(29.999999), {0, 0}, {-1, -1}));
  EXPECT_EQ(w.late(), 1u);
  EXPECT_FALSE(Add(w, At(3), {1, 1}, {-2, -2}));
  EXPECT_EQ(w.late(), 2u);
  const LiveWindow::Snapshot after = w.Take(0, as_of, true);
  EXPECT_EQ(after.rows, before.rows);
  EXPECT_EQ(after.cells, before.cells);
  EXPECT_EQ(after.sample, before.sample);
  EXPECT_EQ(w.newest_pane(), as_of);
  // The window's first instant is not late, and an out-of-order row inside the window counts.
  EXPECT_TRUE(Add(w, At(30), {0, 0}, {30, 130}));
  EXPECT_TRUE(Add(w, At(47), {0, 0}, {47, 147}));
  EXPECT_EQ(w.late(), 2u);
  EXPECT_EQ(w.Take(0, as_of, false).rows, before.rows + 2);
}

TEST(LiveWindow, RowsAsOfCountsThePanesEndingAtAsOf) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(60, 10), {4, 3}));
  EXPECT_EQ(w.RowsAsOf(0), 0u);
  const int64_t base = w.PaneOf(At(0));
  EXPECT_EQ(w.RowsAsOf(base), 0u);
  FillMinute(w);  // ten rows in each of the panes base .. base + 5
  EXPECT_EQ(w.RowsAsOf(base - 1), 0u);
  EXPECT_EQ(w.RowsAsOf(base), 10u);
  EXPECT_EQ(w.RowsAsOf(base + 2), 30u);
  EXPECT_EQ(w.RowsAsOf(base + 5), 60u);
  EXPECT_EQ(w.RowsAsOf(base + 6), 50u);   // panes base+1 .. base+6
  EXPECT_EQ(w.RowsAsOf(base + 7), 40u);
  EXPECT_EQ(w.RowsAsOf(base + 10), 10u);  // pane base+5 only
  EXPECT_EQ(w.RowsAsOf(base + 11), 0u);
  // Take agrees with RowsAsOf for several as_of.
  for (int64_t as_of = base - 1; as_of <= base + 11; ++as_of) {
    EXPECT_EQ(w.Take(0, as_of, false).rows, w.RowsAsOf(as_of)) << as_of - base;
    EXPECT_EQ(w.Take(1, as_of, false).rows, w.RowsAsOf(as_of)) << as_of - base;
  }
  // Counts as of an earlier pane: the panes 0..29 s.
  EXPECT_THAT(w.Take(0, base + 2, false).cells, ElementsAreArray(ExpectedCells(0, 29, 4)));
}

TEST(LiveWindow, TakeEndIsTheEndOfTheAsOfPane) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(300, 60), {2}));
  ASSERT_TRUE(Add(w, At(125), {1}, {5}));
  const int64_t as_of = w.PaneOf(At(125));
  EXPECT_EQ(w.Take(0, as_of, false).end, FromUnixMicros((as_of + 1) * 60'000'000));
  EXPECT_EQ(w.Take(0, as_of, false).end, At(180));
  EXPECT_EQ(w.Take(0, as_of + 3, false).end, At(360));
  EXPECT_EQ(w.Take(0, as_of - 1, false).end, At(120));
  EXPECT_EQ(w.Take(0, as_of - 1, false).rows, 0u);
}

TEST(LiveWindow, SampleIsTheSubjectsPresentValuesSorted) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(60, 10), {2, 2, 1}));
  std::vector<double> present0, present1;
  for (int i = 0; i < 30; ++i) {
    // Descending values so that sorting is visible; subject 0 missing every third row,
    // subject 1 missing every fifth.
    const double v0 = i % 3 == 0 ? kNaN : 1000.0 - i;
    const double v1 = i % 5 == 0 ? kNaN : -static_cast<double>(i);
    if (!std::isnan(v0)) present0.push_back(v0);
    if (!std::isnan(v1)) present1.push_back(v1);
    ASSERT_TRUE(Add(w, At(i * 2), {i % 3 == 0 ? 0u : 1u, i % 5 == 0 ? 0u : 1u, 0},
                    {v0, v1, 7.0}));
  }
  std::sort(present0.begin(), present0.end());
  std::sort(present1.begin(), present1.end());
  const int64_t as_of = w.newest_pane();
  const LiveWindow::Snapshot s0 = w.Take(0, as_of, true);
  EXPECT_EQ(s0.rows, 30u);
  EXPECT_THAT(s0.cells, ElementsAre(10, 20));  // missing rows are counted in cell 0
  EXPECT_THAT(s0.sample, ElementsAreArray(present0));
  const LiveWindow::Snapshot s1 = w.Take(1, as_of, true);
  EXPECT_THAT(s1.cells, ElementsAre(6, 24));
  EXPECT_THAT(s1.sample, ElementsAreArray(present1));
  EXPECT_EQ(w.Take(2, as_of, true).sample, std::vector<double>(30, 7.0));
  EXPECT_THAT(w.Take(0, as_of, false).sample, IsEmpty());
  // As of an earlier pane, only that pane's rows are sampled: rows 0..4 at 0..8 s.
  EXPECT_THAT(w.Take(1, w.PaneOf(At(0)), true).sample, ElementsAre(-4, -3, -2, -1));
}

TEST(LiveWindow, MemoryIsBoundedWhileCountsStayExact) {
  constexpr size_t kSample = 8;
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(60, 10, 0, kSample), {3, 1}));
  // A burst of 20,000 rows in one pane.
  std::set<double> added;
  for (int i = 0; i < 20'000; ++i) {
    ASSERT_TRUE(
        Add(w, At(5), {static_cast<uint32_t>(i % 3), 0}, {static_cast<double>(1000 + i), 0}));
    added.insert(1000 + i);
  }
  LiveWindow::Snapshot s = w.Take(0, w.newest_pane(), true);
  EXPECT_EQ(s.rows, 20'000u);
  EXPECT_THAT(s.cells, ElementsAre(6667, 6667, 6666));
  EXPECT_EQ(s.sample.size(), kSample);
  EXPECT_TRUE(std::is_sorted(s.sample.begin(), s.sample.end()));
  for (double v : s.sample) EXPECT_TRUE(added.count(v)) << v;
  EXPECT_EQ(std::set<double>(s.sample.begin(), s.sample.end()).size(), kSample);  // distinct rows
  // Traffic in every pane: each keeps at most kSample rows.
  for (int p = 1; p < 6; ++p) {
    for (int i = 0; i < 3'000; ++i) {
      ASSERT_TRUE(Add(w, At(p * 10 + i * 0.001), {0, 0}, {static_cast<double>(p), 0}));
    }
  }
  s = w.Take(0, w.newest_pane(), true);
  EXPECT_EQ(s.rows, 20'000u + 5u * 3'000u);
  EXPECT_EQ(s.cells[0], 6667 + 15'000);
  EXPECT_EQ(s.sample.size(), 6 * kSample);
  for (int p = 1; p < 6; ++p) {
    EXPECT_EQ(std::count(s.sample.begin(), s.sample.end(), static_cast<double>(p)),
              static_cast<long>(kSample))
        << p;
  }
  // A pane reused after expiry starts a fresh sample.
  ASSERT_TRUE(Add(w, At(65), {0, 0}, {-1, 0}));
  s = w.Take(0, w.newest_pane(), true);
  EXPECT_EQ(s.rows, 5u * 3'000u + 1u);
  EXPECT_EQ(s.sample.size(), 5 * kSample + 1);
  EXPECT_EQ(s.sample.front(), -1);
}

TEST(LiveWindow, ReservoirIsUniformOverThePane) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(60, 10, 0, 128, 3), {1}));
  // An increasing stream 0..N-1 in each of the six panes: a sample biased to the first or the
  // last rows would have a mean far from (N - 1) / 2.
  constexpr int kN = 20'000;
  for (int p = 0; p < 6; ++p) {
    for (int i = 0; i < kN; ++i) {
      ASSERT_TRUE(Add(w, At(p * 10 + i * 0.0001), {0}, {static_cast<double>(i)}));
    }
  }
  const LiveWindow::Snapshot s = w.Take(0, w.newest_pane(), true);
  EXPECT_EQ(s.rows, 6u * kN);
  ASSERT_EQ(s.sample.size(), 6u * 128u);
  double mean = 0;
  size_t upper_half = 0;
  for (double v : s.sample) {
    mean += v;
    if (v >= kN / 2) ++upper_half;
  }
  mean /= static_cast<double>(s.sample.size());
  // Standard error: kN / sqrt(12 × 768) ≈ 208.
  EXPECT_NEAR(mean, (kN - 1) / 2.0, 1'000);
  EXPECT_NEAR(static_cast<double>(upper_half) / static_cast<double>(s.sample.size()), 0.5, 0.1);
  // Each decile of the stream is represented.
  for (int d = 0; d < 10; ++d) {
    const auto n = std::count_if(s.sample.begin(), s.sample.end(), [&](double v) {
      return v >= d * kN / 10 && v < (d + 1) * kN / 10;
    });
    EXPECT_GT(n, 40) << d;
    EXPECT_LT(n, 120) << d;
  }
}

std::vector<double> SampleOf(uint64_t seed) {
  auto w = LiveWindow::Create(Config(60, 10, 0, 16, seed), {2, 1});
  EXPECT_TRUE(w.ok());
  for (int i = 0; i < 5'000; ++i) {
    const double v = std::fmod(i * 0.618034, 1.0);
    w->Add(At(i * 0.01), std::vector<uint32_t>{v < 0.5 ? 0u : 1u, 0}, std::vector<double>{v, 1});
  }
  return w->Take(0, w->newest_pane(), true).sample;
}

TEST(LiveWindow, SameSeedAndInputGiveIdenticalSamples) {
  const std::vector<double> a = SampleOf(42);
  const std::vector<double> b = SampleOf(42);
  ASSERT_EQ(a.size(), 5u * 16u);
  EXPECT_EQ(a, b);
  // The seed drives the reservoirs.
  EXPECT_NE(SampleOf(43), a);
}

TEST(LiveWindow, DecayHalvesTheWeightOfAPaneOneHalfLifeOld) {
  // Three panes of 10 s, half-life one slide: weights 1, 0.5, 0.25 from the newest pane back.
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(30, 10, 10), {2}));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Add(w, At(1 + i), {0}, {1}));  // pane a - 2: 4 rows
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(Add(w, At(11 + i), {1}, {2}));  // pane a - 1: 2 rows
  ASSERT_TRUE(Add(w, At(21), {0}, {3}));                                  // pane a: 1 row
  const int64_t a = w.PaneOf(At(21));
  LiveWindow::Snapshot s = w.Take(0, a, true);
  EXPECT_EQ(s.rows, 7u);
  EXPECT_DOUBLE_EQ(s.weight, 0.25 * 4 + 0.5 * 2 + 1 * 1);                   // 3
  EXPECT_THAT(s.cells, ElementsAre(DoubleNear(0.25 * 4 + 1, 1e-12), DoubleNear(0.5 * 2, 1e-12)));
  // Kish: (Σ w n)² / Σ w² n = 9 / (0.0625·4 + 0.25·2 + 1·1) = 9 / 1.75.
  EXPECT_NEAR(s.effective_rows, 9.0 / 1.75, 1e-12);
  // The sample is not weighted.
  EXPECT_THAT(s.sample, ElementsAre(1, 1, 1, 1, 2, 2, 3));
  // A slide later the oldest pane has left and the others are older.
  s = w.Take(0, a + 1, false);
  EXPECT_EQ(s.rows, 3u);
  EXPECT_DOUBLE_EQ(s.weight, 0.25 * 2 + 0.5 * 1);  // 1
  EXPECT_THAT(s.cells, ElementsAre(DoubleNear(0.5, 1e-12), DoubleNear(0.5, 1e-12)));
  EXPECT_NEAR(s.effective_rows, 1.0 / (0.0625 * 2 + 0.25 * 1), 1e-12);
  // Only the newest pane as of a - 2: weight 1.
  s = w.Take(0, a - 2, false);
  EXPECT_EQ(s.rows, 4u);
  EXPECT_DOUBLE_EQ(s.weight, 4);
  EXPECT_DOUBLE_EQ(s.effective_rows, 4);
}

TEST(LiveWindow, DecayWithALongerHalfLife) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(60, 10, 20), {1}));
  ASSERT_TRUE(Add(w, At(5), {0}, {0}));
  ASSERT_TRUE(Add(w, At(15), {0}, {0}));
  const int64_t a = w.PaneOf(At(15));
  const LiveWindow::Snapshot s = w.Take(0, a, false);
  const double w_old = std::pow(2.0, -0.5);  // one slide = half a half-life
  EXPECT_NEAR(s.weight, 1 + w_old, 1e-12);
  EXPECT_NEAR(s.effective_rows, (1 + w_old) * (1 + w_old) / (1 + w_old * w_old), 1e-12);
  // Four slides old: 2^-2.
  EXPECT_NEAR(w.Take(0, a + 3, false).weight, std::pow(2.0, -1.5) + std::pow(2.0, -2.0), 1e-12);
}

// Sum, what the monitor evaluates: every subject's cells side by side at its offset, with the
// window's weight and Kish's effective size, decayed or not.
TEST(LiveWindow, SumWeighsThePanesAsTheyAge) {
  for (const int half_life : {0, 10}) {
    ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(30, 10, half_life), {2, 3}));
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(Add(w, At(1 + i), {0, 2}, {1, 1}));   // pane a - 2
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(Add(w, At(11 + i), {1, 0}, {2, 2}));  // pane a - 1
    ASSERT_TRUE(Add(w, At(21), {0, 1}, {3, 3}));                                   // pane a
    const double w2 = half_life == 0 ? 1 : 0.25, w1 = half_life == 0 ? 1 : 0.5;
    LiveWindow::Totals t;
    w.Sum(w.PaneOf(At(21)), t);
    EXPECT_EQ(t.rows, 7u);
    EXPECT_DOUBLE_EQ(t.weight, w2 * 4 + w1 * 2 + 1);
    EXPECT_NEAR(t.effective_rows,
                t.weight * t.weight / (w2 * w2 * 4 + w1 * w1 * 2 + 1), 1e-12);
    ASSERT_EQ(w.offset(1), 2u);
    EXPECT_THAT(t.cells, ElementsAre(DoubleNear(w2 * 4 + 1, 1e-12), DoubleNear(w1 * 2, 1e-12),
                                     DoubleNear(w1 * 2, 1e-12), DoubleNear(1, 1e-12),
                                     DoubleNear(w2 * 4, 1e-12)))
        << "half-life " << half_life;
  }
}

TEST(LiveWindow, EmptyWindowSnapshot) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create(Config(60, 10, 10), {3}));
  const LiveWindow::Snapshot s = w.Take(0, 17, true);
  EXPECT_EQ(s.rows, 0u);
  EXPECT_EQ(s.weight, 0);
  EXPECT_EQ(s.effective_rows, 0);
  EXPECT_THAT(s.cells, ElementsAre(0, 0, 0));
  EXPECT_THAT(s.sample, IsEmpty());
  EXPECT_EQ(s.end, FromUnixMicros(18 * 10'000'000));
}

}  // namespace
}  // namespace vigil::drift
