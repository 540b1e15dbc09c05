#include "vigil/drift/drift_monitor.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/common/string_view.h"
#include "vigil/drift/measured_null.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

constexpr char kSchema[] = "test.features.v1";

// A profile entry as tools/train.py writes it: numpy deciles (linear interpolation, unique),
// numpy.histogram counts, mean, std, and 2,000 evenly spaced order statistics.
nlohmann::json ProfileEntry(const std::vector<double>& values) {
  std::vector<double> present;
  for (double v : values) {
    if (!std::isnan(v)) present.push_back(v);
  }
  std::sort(present.begin(), present.end());
  nlohmann::json entry = {{"count", values.size()}, {"missing", values.size() - present.size()}};
  if (present.empty()) return entry;
  std::vector<double> edges;
  for (int i = 0; i <= 10; ++i) {
    const double pos = i / 10.0 * static_cast<double>(present.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const double frac = pos - static_cast<double>(lo);
    const double q = lo + 1 < present.size() ? present[lo] + frac * (present[lo + 1] - present[lo])
                                              : present[lo];
    if (edges.empty() || q != edges.back()) edges.push_back(q);
  }
  std::vector<double> counts;
  if (edges.size() == 1) {
    edges.push_back(edges[0]);
    counts.push_back(static_cast<double>(present.size()));
  } else {
    const ReferenceBins bins = *ReferenceBins::Create(edges, std::vector<double>(edges.size() - 1, 1));
    counts.assign(edges.size() - 1, 0);
    for (double v : present) counts[bins.Bin(v)] += 1;
  }
  double mean = 0, var = 0;
  for (double v : present) mean += v;
  mean /= static_cast<double>(present.size());
  for (double v : present) var += (v - mean) * (v - mean);
  std::vector<double> sample;
  const size_t m = std::min<size_t>(2000, present.size());
  for (size_t i = 0; i < m; ++i) {
    sample.push_back(present[static_cast<size_t>(static_cast<double>(i) *
                                                 static_cast<double>(present.size() - 1) /
                                                 static_cast<double>(m - 1))]);
  }
  entry["bin_edges"] = edges;
  entry["bin_counts"] = counts;
  entry["mean"] = mean;
  entry["std"] = std::sqrt(var / static_cast<double>(present.size()));
  entry["sample"] = sample;
  return entry;
}

// The synthetic world: five features and a score, each with a no-drift generator.
//   amount     log-normal            (mean shift: ×1.5)
//   balance    normal(0, 1)          (variance change: σ 1 → 2)
//   category   codes 0..3            (new category share: code 7 in 15% of rows)
//   tenure     normal, 5% missing    (missing surge: 40% missing)
//   hour_of_day 0..23                (seasonal: excluded)
//   score      beta-like in (0, 1)   (score shift)
const std::vector<std::string> kFeatures = {"amount", "balance", "category", "tenure",
                                            "hour_of_day"};

struct Row {
  std::vector<double> features;
  double score;
};

struct World {
  std::mt19937_64 rng{42};
  std::lognormal_distribution<double> amount{4, 1};
  std::normal_distribution<double> normal{0, 1};
  std::discrete_distribution<int> category{50, 30, 15, 5};
  std::uniform_real_distribution<double> unit{0, 1};
  std::gamma_distribution<double> ga{2, 1}, gb{8, 1};

  Row Draw(const std::string& shift = "") {
    Row r;
    const double a = amount(rng) * (shift == "mean" ? 1.5 : 1.0);
    const double b = normal(rng) * (shift == "variance" ? 2.0 : 1.0);
    double c = category(rng);
    if (shift == "category" && unit(rng) < 0.15) c = 7;
    double t = 10 + 3 * normal(rng);
    if (unit(rng) < (shift == "missing" ? 0.40 : 0.05)) t = std::nan("");
    const double hour = std::floor(unit(rng) * 24);
    r.features = {a, b, c, t, hour};
    const double x = ga(rng), y = gb(rng);
    r.score = x / (x + y);
    if (shift == "score") r.score = std::min(1.0, r.score * 1.6);
    return r;
  }
};

ReferenceProfile MakeProfile(const std::string& schema = kSchema) {
  World w;
  w.rng.seed(7);  // the reference: another sample of the same world
  std::vector<std::vector<double>> columns(kFeatures.size());
  std::vector<double> scores;
  for (int i = 0; i < 100'000; ++i) {
    const Row r = w.Draw();
    for (size_t f = 0; f < kFeatures.size(); ++f) columns[f].push_back(r.features[f]);
    scores.push_back(r.score);
  }
  nlohmann::json profile = {{"feature_schema_version", schema}, {"rows", 100'000}};
  for (size_t f = 0; f < kFeatures.size(); ++f) profile["features"][kFeatures[f]] = ProfileEntry(columns[f]);
  profile["score"] = ProfileEntry(scores);
  return *ReferenceProfile::Parse(profile.dump(), "test profile");
}

UtcTime At(double seconds) {
  return FromUnixMicros(1'700'000'000'000'000 + static_cast<int64_t>(std::llround(seconds * 1e6)));
}

class DriftMonitorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { profile_ = new ReferenceProfile(MakeProfile()); }
  static void TearDownTestSuite() { delete profile_; }

  // The tests of statistics and levels feed rows of unknown sources from t = 0 and expect levels
  // to follow severity at once: without "guards" the warm-up and the dwell are off (the
  // burst-resistance tests below turn them on).
  std::unique_ptr<DriftMonitor> Monitor(DriftConfig config = {}, DriftEventLog* log = nullptr,
                                        bool guards = false) {
    if (!guards) {
      config.warmup = std::chrono::seconds(0);
      config.min_dwell = std::chrono::seconds(0);
    }
    absl::StatusOr<std::unique_ptr<DriftMonitor>> m =
        DriftMonitor::Create(*profile_, kSchema, kFeatures, std::move(config), log);
    EXPECT_TRUE(m.ok()) << m.status();
    return *std::move(m);
  }

  // Feeds "rate" rows per second from "from" to "to" seconds, drawn with "shift".
  static void Feed(DriftMonitor& m, World& w, double from, double to, double rate,
                   const std::string& shift = "") {
    for (double t = from; t < to; t += 1.0 / rate) {
      const Row r = w.Draw(shift);
      ASSERT_OK(m.Observe(At(t), r.features, r.score));
    }
  }

  static const DriftSubjectState& Subject(const DriftState& s, const std::string& name) {
    for (const DriftSubjectState& subject : s.subjects) {
      if (subject.name == name) return subject;
    }
    ADD_FAILURE() << "no subject " << name;
    return s.subjects.front();
  }

  static ReferenceProfile* profile_;
};
ReferenceProfile* DriftMonitorTest::profile_ = nullptr;

TEST_F(DriftMonitorTest, MonitorsEveryFeatureButTheSeasonalOnesAndTheScore) {
  auto m = Monitor();
  const DriftState s = m->State(false);
  std::vector<std::string> names;
  for (const auto& subject : s.subjects) names.push_back(subject.name);
  EXPECT_THAT(names, ::testing::ElementsAre("amount", "balance", "category", "tenure",
                                            "model_score"));
  EXPECT_THAT(s.unmonitored, ::testing::ElementsAre("hour_of_day (excluded by configuration)"));
  EXPECT_EQ(s.calibration, "null");
}

TEST_F(DriftMonitorTest, AProfileOfV1MonitorsItsColumnsUnderV2) {
  const ReferenceProfile v1 = MakeProfile("vigil.features.v1");
  std::vector<std::string> v2_names = kFeatures;
  v2_names.push_back("pair_count_before");  // a column v2 appends
  auto m = DriftMonitor::Create(v1, "vigil.features.v2", v2_names, {}, nullptr);
  ASSERT_TRUE(m.ok()) << m.status();
  const DriftState s = (*m)->State(false);
  EXPECT_THAT(s.unmonitored, ::testing::Contains("pair_count_before (not in the reference profile)"));
  EXPECT_THAT(DriftMonitor::Create(MakeProfile("vigil.features.v2"), "vigil.features.v1",
                                   kFeatures, {}, nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(DriftMonitorTest, RefusesAProfileOfAnotherSchemaAndBadConfig) {
  EXPECT_THAT(DriftMonitor::Create(*profile_, "vigil.features.v2", kFeatures, {}, nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("test.features.v1")));
  DriftConfig bad;
  bad.windows[0].slide = std::chrono::seconds(7);
  EXPECT_THAT(DriftMonitor::Create(*profile_, kSchema, kFeatures, bad, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("drift.windows.short")));
  DriftConfig all_out;
  all_out.exclude = kFeatures;
  all_out.monitor_score = false;
  EXPECT_THAT(DriftMonitor::Create(*profile_, kSchema, kFeatures, all_out, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no feature to monitor")));
  auto m = Monitor();
  EXPECT_THAT(m->Observe(At(0), std::vector<double>{1, 2}, 0.5),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("schema has 5")));
}

// Each synthetic shift, starting at 600 s after ten quiet minutes, is detected at L2 or above
// on its subject within one long window (300 s), and raises the monitor to a freeze; the
// subjects that did not change stay below L2.
TEST_F(DriftMonitorTest, SyntheticShiftsAreDetectedWithinOneLongWindow) {
  const std::map<std::string, std::string> shifted = {{"mean", "amount"},
                                                      {"variance", "balance"},
                                                      {"category", "category"},
                                                      {"missing", "tenure"},
                                                      {"score", "model_score"}};
  for (const auto& [shift, subject] : shifted) {
    SCOPED_TRACE(shift);
    testing::FakeClock clock;
    ASSERT_OK_AND_ASSIGN(auto log, DriftEventLog::Open(nullptr, clock));
    auto m = Monitor({}, log.get());
    World w;
    Feed(*m, w, 0, 600, 20);
    DriftState quiet = m->State(false);
    EXPECT_LT(quiet.level, DriftLevel::kL2);
    EXPECT_FALSE(m->frozen());
    Feed(*m, w, 600, 900, 20, shift);
    const DriftState s = m->State(true);
    const DriftSubjectState& drifted = Subject(s, subject);
    EXPECT_GE(drifted.level, DriftLevel::kL2) << subject;
    for (const DriftSubjectState& other : s.subjects) {
      if (other.name != subject && other.name != "model_score") {
        EXPECT_LT(other.level, DriftLevel::kL2) << other.name;
      }
    }
    // Level changes are dated within the long window after the shift.
    for (const DriftWindowState& ws : drifted.windows) {
      if (ws.level >= DriftLevel::kL2) {
        EXPECT_GE(ws.level_since, At(600));
        EXPECT_LE(ws.level_since, At(900));
      }
    }
    std::vector<std::string> kinds;
    for (const DriftEvent& e : log->Recent(1000)) kinds.push_back(e.kind);
    EXPECT_THAT(kinds, ::testing::Contains(std::string(kRetrainRequested)));
    EXPECT_GE(s.level, DriftLevel::kL2);
    if (s.level == DriftLevel::kL3) {
      EXPECT_TRUE(m->frozen());
      EXPECT_THAT(kinds, ::testing::Contains(std::string(kFreeze)));
      EXPECT_THAT(kinds, ::testing::Contains(std::string(kTicketOpened)));
    }
  }
}

TEST_F(DriftMonitorTest, AFreezeIsReleasedWithHysteresisWhenTheDriftEnds) {
  testing::FakeClock clock;
  ASSERT_OK_AND_ASSIGN(auto log, DriftEventLog::Open(nullptr, clock));
  auto m = Monitor({}, log.get());
  World w;
  Feed(*m, w, 0, 600, 20);
  Feed(*m, w, 600, 900, 20, "mean");
  ASSERT_TRUE(m->frozen());
  ASSERT_EQ(m->level(), DriftLevel::kL3);
  // Back to normal: the long window still holds shifted rows for 300 s, then hysteresis steps
  // the levels down one evaluation run at a time.
  Feed(*m, w, 900, 2400, 20);
  EXPECT_FALSE(m->frozen());
  EXPECT_LT(m->level(), DriftLevel::kL2);
  std::vector<std::string> kinds;
  for (const DriftEvent& e : log->Recent(1000)) kinds.push_back(e.kind);
  EXPECT_THAT(kinds, ::testing::Contains(std::string(kFreezeReleased)));
  EXPECT_THAT(kinds, ::testing::Contains(std::string(kCritical)));

  // The monitor's own tallies (what a replay summarizes) agree with the events.
  const DriftState state = m->State(false);
  EXPECT_EQ(state.worst_level, DriftLevel::kL3);
  std::map<std::string, uint64_t> by_kind;
  double frozen_seconds = 0;
  UtcTime frozen_at{};
  std::map<std::string, DriftLevel> worst;
  for (const DriftEvent& e : log->Recent(1000)) {
    ++by_kind[e.kind];
    if (e.kind == kFreeze) frozen_at = e.time;
    if (e.kind == kFreezeReleased) frozen_seconds += std::chrono::duration<double>(e.time - frozen_at).count();
    if (e.kind == kLevelChange) worst[e.subject] = std::max(worst[e.subject], e.to);
  }
  EXPECT_EQ(state.events_by_kind, by_kind);
  EXPECT_GT(frozen_seconds, 0);
  EXPECT_DOUBLE_EQ(state.frozen_seconds, frozen_seconds);
  for (const DriftSubjectState& s : state.subjects) {
    EXPECT_EQ(s.worst, worst.count(s.name) ? worst[s.name] : DriftLevel::kNone) << s.name;
  }
}

// The calibration's promise on a whole stream: with a false-alarm target of one L2 per subject
// per 2 hours (so a day gives enough alarms to count), a stationary day raises about as many
// L2 severities as targeted, and no more.
TEST_F(DriftMonitorTest, StationaryFalseAlarmRateStaysWithinTheCalibratedRate) {
  DriftConfig config;
  config.false_alarm_period = std::chrono::hours(2);
  config.history_points = 100'000;  // every evaluation of a day, unmerged
  auto m = Monitor(config);
  World w;
  w.rng.seed(2024);
  for (int i = 0; i < 24 * 3600 * 5; ++i) {  // 24 h at 5 rows/s
    const Row r = w.Draw();
    ASSERT_OK(m->Observe(At(i / 5.0), r.features, r.score));
  }
  int exceed = 0, evaluations = 0;
  for (const DriftSeries& series : m->History()) {
    for (const DriftPoint& p : series.points) {
      ++evaluations;
      exceed += p.severity >= config.levels.l2;
    }
  }
  // Budget per evaluation: slide / period / 2 windows. Per subject and day: 8,640 short and
  // 1,440 long evaluations, so 5 subjects expect 5 × (8640 × 10 + 1440 × 60) / 7200 / 2 = 60.
  const double expected = 5.0 * (8640 * 10 + 1440 * 60) / 7200.0 / 2.0;
  EXPECT_NEAR(evaluations, 5 * (8640 + 1440), 10);
  std::printf("stationary day: %d of %d evaluations at or above L2, %.0f expected\n", exceed,
              evaluations, expected);
  EXPECT_LE(exceed, expected * 1.5);
  EXPECT_GE(exceed, expected * 0.2);
}

TEST_F(DriftMonitorTest, RawPresetUsesFixedCutoffsAndAlarmsOnSmallWindows) {
  // The preset is what the calibration replaces: at 1 row/s the short window has 60 rows and
  // sampling noise alone crosses the fixed cut-offs, while the calibrated severity stays low.
  DriftConfig config;
  config.calibration = DriftCalibration::kRawPreset;
  config.min_rows = 20;
  config.history_points = 100'000;
  auto raw = Monitor(config);
  config.calibration = DriftCalibration::kNull;
  auto calibrated = Monitor(config);
  World w1, w2;
  Feed(*raw, w1, 0, 3600, 1);
  Feed(*calibrated, w2, 0, 3600, 1);
  EXPECT_EQ(raw->State(false).calibration, "raw-preset");
  const auto share_at_l1 = [&](const DriftMonitor& m) {
    int at = 0, all = 0;
    for (const DriftSeries& series : m.History()) {
      for (const DriftPoint& p : series.points) {
        ++all;
        at += p.severity >= config.levels.l1;
      }
    }
    return static_cast<double>(at) / all;
  };
  EXPECT_GT(share_at_l1(*raw), 0.2);
  EXPECT_LT(share_at_l1(*calibrated), 0.01);
  EXPECT_GE(raw->level(), DriftLevel::kL1);
}

TEST_F(DriftMonitorTest, ExactStatisticsInState) {
  auto m = Monitor();
  World w;
  Feed(*m, w, 0, 400, 20);
  const DriftState s = m->State(true);
  const DriftSubjectState& amount = Subject(s, "amount");
  for (const DriftWindowState& ws : amount.windows) {
    ASSERT_TRUE(ws.ks.has_value());
    EXPECT_GT(ws.sample_size, 100u);
    EXPECT_LT(*ws.ks, 0.15);
    EXPECT_GT(*ws.ks_pvalue, 1e-4);
    EXPECT_GT(*ws.wasserstein_norm, 0);
    EXPECT_LT(*ws.wasserstein_norm, 0.3);
    EXPECT_TRUE(ws.evaluated);
    EXPECT_GT(ws.rows, 1000u);
  }
  const std::string json = DriftStateToJson(s);
  const nlohmann::json parsed = nlohmann::json::parse(json);
  EXPECT_EQ(parsed["subjects"][0]["name"], "amount");
  EXPECT_TRUE(parsed["subjects"][0]["windows"][0].contains("ks_pvalue"));
  EXPECT_EQ(parsed["unmonitored"].size(), 1u);
}

TEST_F(DriftMonitorTest, HistoryIsBoundedAndKeepsPeaks) {
  DriftConfig config;
  config.history_points = 64;
  auto m = Monitor(config);
  World w;
  Feed(*m, w, 0, 3000, 5);
  Feed(*m, w, 3000, 3100, 5, "mean");
  Feed(*m, w, 3100, 6000, 5);
  const std::vector<DriftSeries> history = m->History();
  ASSERT_FALSE(history.empty());
  for (const DriftSeries& series : history) {
    EXPECT_LE(series.points.size(), 64u) << series.subject << " " << series.window;
    if (series.subject == "amount" && series.window == "short") {
      double peak = 0;
      for (const DriftPoint& p : series.points) peak = std::max(peak, p.severity);
      EXPECT_GT(peak, 0.7);
    }
  }
}

// A stream whose windows vary more than iid samples (bursts of one amount class) alarms
// against the simulated null alone; measured on a training stream of the same kind, the
// monitor takes the larger no-drift probability and stays quiet on a fresh stream of that kind.
TEST_F(DriftMonitorTest, MeasuredNullAbsorbsTheTrainingStreamsOwnBursts) {
  const auto bursty = [](DriftMonitor& m, uint64_t seed) {
    World w;
    w.rng.seed(seed);
    std::uniform_real_distribution<double> u(0, 1);
    for (int i = 0; i < 6 * 3600 * 5; ++i) {  // 6 h at 5 rows/s
      Row r = w.Draw();
      // Every 10 minutes, one minute where a third of the rows repeat one large amount.
      if ((i / 300) % 10 == 0 && u(w.rng) < 0.33) r.features[0] = 2000;
      ASSERT_OK(m.Observe(At(i / 5.0), r.features, r.score));
    }
  };
  DriftConfig record;
  record.record_null = true;
  record.freeze_on_l3 = false;
  auto training = Monitor(record);
  bursty(*training, 1);
  auto measured = std::make_shared<MeasuredNull>(training->RecordedNull());
  ASSERT_EQ(measured->windows.size(), 2u);
  EXPECT_GT(measured->windows[0].evaluations, 2000u);
  EXPECT_EQ(measured->windows[0].scores.count("amount"), 1u);
  ASSERT_OK_AND_ASSIGN(MeasuredNull parsed, MeasuredNull::Parse(measured->ToJson(), "null"));

  DriftConfig plain;
  plain.freeze_on_l3 = false;
  plain.history_points = 100'000;
  auto simulated_only = Monitor(plain);
  bursty(*simulated_only, 2);
  DriftConfig with_measured = plain;
  with_measured.measured_null = std::make_shared<const MeasuredNull>(parsed);
  auto both = Monitor(with_measured);
  bursty(*both, 2);
  EXPECT_EQ(both->State(false).calibration, "null+measured");
  // Evaluations of "amount" at or above the L2 cut-off.
  const auto l2_evaluations = [](const DriftMonitor& m) {
    int n = 0;
    for (const DriftSeries& s : m.History()) {
      if (s.subject != "amount") continue;
      for (const DriftPoint& p : s.points) n += p.severity >= 0.7;
    }
    return n;
  };
  EXPECT_GT(l2_evaluations(*simulated_only), 20);
  EXPECT_EQ(l2_evaluations(*both), 0);

  // A measured null of other windows is refused.
  DriftConfig other = with_measured;
  other.windows[0].size = std::chrono::seconds(120);
  EXPECT_THAT(DriftMonitor::Create(*profile_, kSchema, kFeatures, other, nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no window 'short'")));
}

TEST_F(DriftMonitorTest, UnscoredRowsDoNotMoveTheScoresDistribution) {
  // Half the decisions unscored (a model outage, rules-only fallbacks): the features still
  // count every row, the score is judged on the scored half, and nothing drifts.
  auto m = Monitor();
  World w;
  for (int i = 0; i < 900 * 20; ++i) {
    const Row r = w.Draw();
    ASSERT_OK(m->Observe(At(i / 20.0), r.features, i % 2 == 0 ? r.score : std::nan("")));
  }
  const DriftState s = m->State(false);
  const DriftSubjectState& score = Subject(s, "model_score");
  EXPECT_LT(score.level, DriftLevel::kL2);
  EXPECT_NEAR(score.windows[0].effective_rows, 600, 1);  // half of the 1,200 rows scored
  EXPECT_NEAR(Subject(s, "amount").windows[0].effective_rows, 1200, 1);
}

TEST_F(DriftMonitorTest, LateRowsAreCountedNotObserved) {
  auto m = Monitor();
  World w;
  Feed(*m, w, 1000, 1100, 5);
  const Row r = w.Draw();
  ASSERT_OK(m->Observe(At(100), r.features, r.score));  // 900 s late: outside both windows
  EXPECT_EQ(m->State(false).late, 2u);                    // one per window
}

// Rows from many accounts: each payment between two of "accounts" accounts drawn at random,
// submitted by one client.
struct Population {
  std::mt19937_64 rng{99};
  uint64_t accounts = 5000;
  RowSource Next() {
    std::uniform_int_distribution<uint64_t> pick(1, accounts);
    return RowSource{SourceHash(absl::StrCat("acct-", pick(rng))),
                     SourceHash(absl::StrCat("acct-", pick(rng))), SourceHash("token:gateway")};
  }
};

// Normal traffic at "rate" rows/s over [from, to); with "cents" every "cents"-th second also
// carries a one-cent payment from a population account (a shift spread over many accounts).
void FeedMany(DriftMonitor& m, World& w, Population& p, double from, double to, double rate,
              int cents_every = 0) {
  double next_cent = from;
  for (double t = from; t < to; t += 1.0 / rate) {
    const Row r = w.Draw();
    ASSERT_OK(m.Observe(At(t), r.features, r.score, p.Next()));
    if (cents_every > 0 && t >= next_cent) {
      Row cent = w.Draw();
      cent.features[0] = 0.01;
      ASSERT_OK(m.Observe(At(t), cent.features, cent.score, p.Next()));
      next_cent += cents_every;
    }
  }
}

// 3,000 one-cent payments of one account to one counterparty within one second of event time.
void Burst(DriftMonitor& m, World& w, double at) {
  const RowSource one{SourceHash("B1\x1f" "A1"), SourceHash("B2\x1f" "A2"), SourceHash("token:x")};
  for (int i = 0; i < 3000; ++i) {
    Row r = w.Draw();
    r.features[0] = 0.01;
    ASSERT_OK(m.Observe(At(at + i / 3000.0), r.features, r.score, one));
  }
}

std::vector<DriftEvent> Rising(const DriftEventLog& log) {
  std::vector<DriftEvent> out;
  for (const DriftEvent& e : log.Recent(10'000)) {
    if (e.kind == kLevelChange && e.to > e.from) out.push_back(e);
  }
  return out;
}

// The attack seen on a live server: one account's 3,000 one-cent payments in a second, amid
// ordinary traffic. Its rows beyond the account's cap are left out of every window, so the
// levels move exactly as they do on the same traffic without the burst; without the guards
// the same burst froze the model.
TEST_F(DriftMonitorTest, OneAccountsBurstRaisesNoLevel) {
  const auto run = [&](bool burst, bool guards, DriftState* state) {
    testing::FakeClock clock;
    absl::StatusOr<std::unique_ptr<DriftEventLog>> log = DriftEventLog::Open(nullptr, clock);
    EXPECT_TRUE(log.ok());
    DriftConfig config;
    config.warmup = std::chrono::seconds(0);  // a warm feature state
    if (!guards) {
      config.account_cap_rows = 1'000'000'000;
      config.min_accounts = 1;
    }
    auto m = Monitor(config, log->get(), guards);
    World w, attacker;  // the burst's own draws leave the ordinary traffic as it is
    attacker.rng.seed(5);
    Population p;
    FeedMany(*m, w, p, 0, 1200, 2);
    if (burst) Burst(*m, attacker, 1200.5);
    FeedMany(*m, w, p, 1201, 3600, 2);
    *state = m->State(false);
    std::vector<std::string> rises;
    for (const DriftEvent& e : Rising(**log)) {
      rises.push_back(absl::StrCat(e.subject, " ", e.window, " ", ToUnixMicros(e.time), " ",
                                   ToAbsl(DriftLevelName(e.to))));
    }
    return rises;
  };
  DriftState quiet, attacked, unguarded;
  const std::vector<std::string> without = run(false, true, &quiet);
  EXPECT_EQ(run(true, true, &attacked), without);
  EXPECT_EQ(attacked.worst_level, quiet.worst_level);
  EXPECT_LT(attacked.worst_level, DriftLevel::kL2);
  EXPECT_GE(attacked.capped, 2 * 2990u);  // both windows left all but one of them out
  run(true, false, &unguarded);
  EXPECT_EQ(unguarded.worst_level, DriftLevel::kL3);
  EXPECT_EQ(unguarded.capped, 0u);
}

// The same shift (one-cent payments) spread over many accounts is drift: it raises the levels,
// one step per dwell, and freezes the model once the evidence has held for two dwells.
TEST_F(DriftMonitorTest, TheSameShiftFromManyAccountsRaisesLevelsOneStepPerDwell) {
  testing::FakeClock clock;
  ASSERT_OK_AND_ASSIGN(auto log, DriftEventLog::Open(nullptr, clock));
  DriftConfig config;
  config.warmup = std::chrono::seconds(0);
  auto m = Monitor(config, log.get(), /*guards=*/true);
  World w;
  Population p;
  FeedMany(*m, w, p, 0, 1200, 2);
  ASSERT_TRUE(Rising(*log).empty());
  // From 1200 s on, one extra one-cent payment a second from the population's accounts.
  FeedMany(*m, w, p, 1200, 1200 + 3600, 2, /*cents_every=*/1);
  const DriftState s = m->State(false);
  EXPECT_EQ(Subject(s, "amount").worst, DriftLevel::kL3);
  EXPECT_TRUE(m->frozen());
  UtcTime first_rise = At(1e9), freeze{};
  for (const DriftEvent& e : log->Recent(10'000)) {
    if (e.kind == kLevelChange && e.to > e.from && e.subject == "amount") {
      first_rise = std::min(first_rise, e.time);
    }
    if (e.kind == kFreeze) freeze = e.time;
  }
  EXPECT_GE(first_rise, At(1200));
  EXPECT_GE(freeze - first_rise, 2 * config.min_dwell);
  // Per subject and window, no two rises are closer than the dwell, and each is one step.
  std::map<std::string, UtcTime> last;
  for (const DriftEvent& e : Rising(*log)) {
    if (e.subject == kMonitorSubject) continue;
    EXPECT_EQ(static_cast<int>(e.to), static_cast<int>(e.from) + 1) << e.subject;
    const std::string key = e.subject + "/" + e.window;
    if (last.count(key) > 0 && e.from != DriftLevel::kNone) {
      EXPECT_GE(e.time - last[key], config.min_dwell) << key;
    }
    last[key] = e.time;
  }
}

// A window with rows of too few distinct accounts is not evaluated at all.
TEST_F(DriftMonitorTest, AWindowOfTooFewAccountsIsNotEvaluated) {
  DriftConfig config;
  config.warmup = std::chrono::seconds(0);
  config.account_cap_rows = 1'000'000;  // no cap: only the distinct-account bound acts
  config.account_cap_share = 1;
  auto m = Monitor(config, nullptr, /*guards=*/true);
  World w;
  Population few;
  few.accounts = 5;  // at most 5 accounts: fewer than min_accounts (20)
  for (double t = 0; t < 900; t += 0.05) {
    Row r = w.Draw("mean");
    ASSERT_OK(m->Observe(At(t), r.features, r.score, few.Next()));
  }
  const DriftState s = m->State(false);
  EXPECT_EQ(s.evaluations, 0u);
  EXPECT_GT(s.skipped_sources, 0u);
  EXPECT_EQ(s.worst_level, DriftLevel::kNone);
}

// A fresh feature state describes every account as new: no window is evaluated in the warm-up
// after the state's first payment; a state restored warm (warm_since) is watched at once.
TEST_F(DriftMonitorTest, NoWindowIsEvaluatedDuringTheWarmUp) {
  DriftConfig config;
  config.warmup = std::chrono::seconds(3600);
  auto fresh = Monitor(config, nullptr, /*guards=*/true);
  config.warm_since = At(-7200);
  auto warm = Monitor(config, nullptr, /*guards=*/true);
  World w1, w2;
  Population p1, p2;
  FeedMany(*fresh, w1, p1, 0, 1800, 2);
  FeedMany(*warm, w2, p2, 0, 1800, 2);
  EXPECT_EQ(fresh->State(false).evaluations, 0u);
  EXPECT_GT(fresh->State(false).skipped_warmup, 0u);
  EXPECT_EQ(fresh->State(false).warm_from, At(3600));
  EXPECT_GT(warm->State(false).evaluations, 0u);
  FeedMany(*fresh, w1, p1, 1800, 4000, 2);
  EXPECT_GT(fresh->State(false).evaluations, 0u);
}

// An operator's release: the model decides again, the event names who and why, and the levels
// stay; a release when nothing is frozen is refused.
TEST_F(DriftMonitorTest, AnOperatorReleasesTheFreeze) {
  testing::FakeClock clock;
  ASSERT_OK_AND_ASSIGN(auto log, DriftEventLog::Open(nullptr, clock));
  auto m = Monitor({}, log.get());
  std::vector<DriftEvent> heard;
  m->SetListener([&](const DriftEvent& e) { heard.push_back(e); });
  EXPECT_THAT(m->Release("token:ops", "checked"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("not frozen")));
  World w;
  Feed(*m, w, 0, 600, 20);
  Feed(*m, w, 600, 900, 20, "mean");
  ASSERT_TRUE(m->frozen());
  ASSERT_OK_AND_ASSIGN(DriftEvent e, m->Release("token:ops", "reviewed: a new merchant"));
  EXPECT_FALSE(m->frozen());
  EXPECT_EQ(e.kind, kFreezeReleased);
  EXPECT_THAT(e.detail, HasSubstr("token:ops"));
  EXPECT_THAT(e.detail, HasSubstr("reviewed: a new merchant"));
  EXPECT_EQ(m->level(), DriftLevel::kL3);
  EXPECT_TRUE(m->State(false).released_by_operator);
  ASSERT_FALSE(heard.empty());
  EXPECT_EQ(heard.back().kind, kFreezeReleased);
  EXPECT_EQ(heard.back().id, log->last_id());  // heard as stored
  // Still at L3 in this episode: more drift does not freeze it again.
  Feed(*m, w, 900, 1000, 20, "mean");
  EXPECT_FALSE(m->frozen());
}

}  // namespace
}  // namespace vigil::drift
