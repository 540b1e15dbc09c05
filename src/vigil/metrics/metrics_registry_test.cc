#include "vigil/metrics/metrics_registry.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

std::vector<std::string> Lines(const std::string& text) {
  EXPECT_TRUE(text.empty() || text.back() == '\n') << "exposition ends with a newline";
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

TEST(MetricsRegistry, EmptyRegistryRendersNothing) {
  MetricsRegistry registry;
  EXPECT_EQ(registry.RenderPrometheusText(), "");
  EXPECT_EQ(MetricsRegistry::kContentType, "text/plain; version=0.0.4; charset=utf-8");
}

TEST(MetricsRegistry, RendersTextFormat004LineByLine) {
  MetricsRegistry registry;
  ASSERT_OK_AND_ASSIGN(
      Counter * allow,
      registry.AddCounter("vigil_decisions_total", "Decisions by action.", {{"action", "ALLOW"}}));
  ASSERT_OK_AND_ASSIGN(
      Counter * block,
      registry.AddCounter("vigil_decisions_total", "Decisions by action.", {{"action", "BLOCK"}}));
  ASSERT_OK_AND_ASSIGN(Gauge * depth, registry.AddGauge("vigil_queue_depth", "Queued requests."));
  HistogramExportOptions options;
  options.bucket_bounds = {microseconds(100), milliseconds(1), milliseconds(250)};
  ASSERT_OK_AND_ASSIGN(LatencyHistogram * rules,
                       registry.AddHistogram("vigil_stage_latency_seconds", "Time per stage.",
                                             {{"stage", "rules"}}, options));
  ASSERT_OK_AND_ASSIGN(
      LatencyHistogram * total,
      registry.AddHistogram("vigil_total_latency_seconds", "End to end.", {}, options));
  allow->Increment(41);
  allow->Increment();
  block->Increment(3);
  depth->Set(7.5);
  for (int64_t ns : {50'000, 60'000, 500'000, 2'000'000, 900'000'000}) {
    rules->Record(nanoseconds(ns));
  }
  total->Record(microseconds(100) - nanoseconds(8));  // [99840, 100351] crosses 100 us

  EXPECT_THAT(Lines(registry.RenderPrometheusText()),
              ElementsAreArray({
                  "# HELP vigil_decisions_total Decisions by action.",
                  "# TYPE vigil_decisions_total counter",
                  "vigil_decisions_total{action=\"ALLOW\"} 42",
                  "vigil_decisions_total{action=\"BLOCK\"} 3",
                  "# HELP vigil_queue_depth Queued requests.",
                  "# TYPE vigil_queue_depth gauge",
                  "vigil_queue_depth 7.5",
                  "# HELP vigil_stage_latency_seconds Time per stage.",
                  "# TYPE vigil_stage_latency_seconds histogram",
                  // Cumulative: 50 us and 60 us <= 100 us; 500 us <= 1 ms; 2 ms <= 250 ms.
                  "vigil_stage_latency_seconds_bucket{stage=\"rules\",le=\"0.0001\"} 2",
                  "vigil_stage_latency_seconds_bucket{stage=\"rules\",le=\"0.001\"} 3",
                  "vigil_stage_latency_seconds_bucket{stage=\"rules\",le=\"0.25\"} 4",
                  "vigil_stage_latency_seconds_bucket{stage=\"rules\",le=\"+Inf\"} 5",
                  // Exact sum: 50000 + 60000 + 500000 + 2000000 + 900000000 ns.
                  "vigil_stage_latency_seconds_sum{stage=\"rules\"} 0.90261",
                  "vigil_stage_latency_seconds_count{stage=\"rules\"} 5",
                  "# HELP vigil_total_latency_seconds End to end.",
                  "# TYPE vigil_total_latency_seconds histogram",
                  // 99,992 ns is below 100 us, but its bucket is not: counted at the next bound.
                  "vigil_total_latency_seconds_bucket{le=\"0.0001\"} 0",
                  "vigil_total_latency_seconds_bucket{le=\"0.001\"} 1",
                  "vigil_total_latency_seconds_bucket{le=\"0.25\"} 1",
                  "vigil_total_latency_seconds_bucket{le=\"+Inf\"} 1",
                  "vigil_total_latency_seconds_sum 0.000099992",
                  "vigil_total_latency_seconds_count 1",
              }));
}

TEST(MetricsRegistry, DefaultBoundsAreExportedInSeconds) {
  MetricsRegistry registry;
  ASSERT_OK_AND_ASSIGN(LatencyHistogram * h, registry.AddHistogram("lat_seconds", "Latency."));
  h->Record(milliseconds(3));
  std::vector<std::string> le;
  for (const std::string& line : Lines(registry.RenderPrometheusText())) {
    const size_t at = line.find("le=\"");
    if (at != std::string::npos) le.push_back(line.substr(at + 4, line.find('"', at + 4) - at - 4));
  }
  EXPECT_THAT(le, ElementsAre("0.00005", "0.0001", "0.00025", "0.0005", "0.001", "0.002", "0.005",
                              "0.01", "0.05", "0.2", "0.8", "5", "+Inf"));
}

TEST(MetricsRegistry, EscapesHelpAndLabelValues) {
  MetricsRegistry registry;
  ASSERT_OK_AND_ASSIGN(Counter * c,
                       registry.AddCounter("odd_total", "Back\\slash and\nnewline \"kept\".",
                                           {{"path", "C:\\dir \"x\"\nend"}, {"b", ""}}));
  c->Increment();
  EXPECT_THAT(Lines(registry.RenderPrometheusText()),
              ElementsAre("# HELP odd_total Back\\\\slash and\\nnewline \"kept\".",
                          "# TYPE odd_total counter",
                          "odd_total{path=\"C:\\\\dir \\\"x\\\"\\nend\",b=\"\"} 1"));
}

TEST(MetricsRegistry, GaugeSpecialValues) {
  MetricsRegistry registry;
  ASSERT_OK_AND_ASSIGN(Gauge * nan, registry.AddGauge("g", "G.", {{"v", "nan"}}));
  ASSERT_OK_AND_ASSIGN(Gauge * pinf, registry.AddGauge("g", "G.", {{"v", "pinf"}}));
  ASSERT_OK_AND_ASSIGN(Gauge * ninf, registry.AddGauge("g", "G.", {{"v", "ninf"}}));
  ASSERT_OK_AND_ASSIGN(Gauge * small, registry.AddGauge("g", "G.", {{"v", "small"}}));
  ASSERT_OK_AND_ASSIGN(Gauge * whole, registry.AddGauge("g", "G.", {{"v", "whole"}}));
  nan->Set(std::nan(""));
  pinf->Set(std::numeric_limits<double>::infinity());
  ninf->Set(-std::numeric_limits<double>::infinity());
  small->Set(0.1);  // shortest round-trip form, not 0.10000000000000001
  whole->Set(-3);
  EXPECT_THAT(Lines(registry.RenderPrometheusText()),
              ElementsAre("# HELP g G.", "# TYPE g gauge", "g{v=\"nan\"} NaN", "g{v=\"pinf\"} +Inf",
                          "g{v=\"ninf\"} -Inf", "g{v=\"small\"} 0.1", "g{v=\"whole\"} -3"));
}

TEST(MetricsRegistry, RejectsInvalidRegistrations) {
  MetricsRegistry registry;
  const auto invalid = [](const char* substring) {
    return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(substring));
  };
  EXPECT_THAT(registry.AddCounter("", "h"), invalid("name must match"));
  EXPECT_THAT(registry.AddCounter("9lives", "h"), invalid("name must match"));
  EXPECT_THAT(registry.AddCounter("has-dash", "h"), invalid("name must match"));
  EXPECT_THAT(registry.AddCounter("ok", ""), invalid("help text is empty"));
  EXPECT_THAT(registry.AddCounter("ok", "h", {{"__reserved", "x"}}), invalid("label name"));
  EXPECT_THAT(registry.AddCounter("ok", "h", {{"a:b", "x"}}), invalid("label name"));
  EXPECT_THAT(registry.AddCounter("ok", "h", {{"a", "1"}, {"a", "2"}}), invalid("repeated"));
  EXPECT_THAT(registry.AddHistogram("lat", "h", {{"le", "1"}}), invalid("'le' is reserved"));
  HistogramExportOptions bad;
  bad.bucket_bounds = {milliseconds(2), milliseconds(1)};
  EXPECT_THAT(registry.AddHistogram("lat", "h", {}, bad), invalid("strictly ascending"));
  bad.bucket_bounds = {nanoseconds(0)};
  EXPECT_THAT(registry.AddHistogram("lat", "h", {}, bad), invalid("positive"));
  EXPECT_EQ(registry.RenderPrometheusText(), "") << "failed registrations leave nothing behind";
  // A colon is allowed in metric names (recording rules use it).
  EXPECT_OK(registry.AddCounter("vigil:rate", "h").status());
}

TEST(MetricsRegistry, FamiliesMustAgreeWithTheirFirstRegistration) {
  MetricsRegistry registry;
  ASSERT_OK(registry.AddCounter("c_total", "Help.", {{"a", "1"}}).status());
  EXPECT_THAT(registry.AddCounter("c_total", "Help.", {{"a", "1"}}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("already registered")));
  EXPECT_THAT(registry.AddGauge("c_total", "Help.", {{"a", "2"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("another type")));
  EXPECT_THAT(registry.AddCounter("c_total", "Other.", {{"a", "2"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("another help")));
  EXPECT_THAT(registry.AddCounter("c_total", "Help.", {{"b", "2"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("labels (a)")));
  EXPECT_THAT(registry.AddCounter("c_total", "Help."),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("labels (a)")));
  ASSERT_OK(registry.AddHistogram("lat", "Help.", {{"s", "x"}}).status());
  HistogramExportOptions other;
  other.bucket_bounds = {milliseconds(1)};
  EXPECT_THAT(registry.AddHistogram("lat", "Help.", {{"s", "y"}}, other),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bucket bounds")));
}

TEST(MetricsRegistry, HistogramSeriesNamesCannotCollide) {
  MetricsRegistry registry;
  ASSERT_OK(registry.AddHistogram("lat", "Help.").status());
  // "lat_count" is already a series of the histogram "lat".
  EXPECT_THAT(
      registry.AddCounter("lat_count", "Help."),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("collides with metric 'lat'")));
  ASSERT_OK(registry.AddGauge("x_sum", "Help.").status());
  EXPECT_THAT(registry.AddHistogram("x", "Help."),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("collides")));
}

TEST(MetricsRegistry, RenderWhileRecordingAndRegistering) {
  MetricsRegistry registry;
  ASSERT_OK_AND_ASSIGN(LatencyHistogram * h, registry.AddHistogram("lat", "Help."));
  ASSERT_OK_AND_ASSIGN(Counter * c, registry.AddCounter("n_total", "Help."));
  std::thread writer([&] {
    for (int i = 0; i < 200000; ++i) {
      h->Record(nanoseconds(i));
      c->Increment();
    }
  });
  std::thread registrar([&] {
    for (int i = 0; i < 50; ++i) {
      ASSERT_OK(registry.AddGauge("g", "Help.", {{"i", std::to_string(i)}}).status());
    }
  });
  for (int i = 0; i < 20; ++i) {
    const std::string text = registry.RenderPrometheusText();
    ASSERT_THAT(text, HasSubstr("lat_count "));
  }
  writer.join();
  registrar.join();
  EXPECT_THAT(registry.RenderPrometheusText(), HasSubstr("\nlat_count 200000\n"));
}

TEST(MetricsRegistry, RendersValueHistogramsExactly) {
  MetricsRegistry registry;
  ASSERT_OK_AND_ASSIGN(ValueHistogram * scores,
                       registry.AddValueHistogram("vigil_model_score", "Model scores.",
                                                  {{"model", "m1"}}, {0.05, 0.25, 0.5, 1}));
  ASSERT_OK_AND_ASSIGN(
      ValueHistogram * sizes,
      registry.AddValueHistogram("vigil_batch_size", "Rows per batch.", {}, {1, 2.5, 64}));
  for (double s : {0.01, 0.05, 0.3, 0.5, 0.75, 2.0}) scores->Record(s);
  for (double n : {1.0, 3.0, 64.0, 1000.0}) sizes->Record(n);
  EXPECT_THAT(Lines(registry.RenderPrometheusText()),
              ElementsAreArray({
                  "# HELP vigil_model_score Model scores.",
                  "# TYPE vigil_model_score histogram",
                  // Cumulative, le inclusive: 0.01 and 0.05 <= 0.05; then 0.3, 0.5 <= 0.5;
                  // 0.75 <= 1; 2 only in +Inf.
                  "vigil_model_score_bucket{model=\"m1\",le=\"0.05\"} 2",
                  "vigil_model_score_bucket{model=\"m1\",le=\"0.25\"} 2",
                  "vigil_model_score_bucket{model=\"m1\",le=\"0.5\"} 4",
                  "vigil_model_score_bucket{model=\"m1\",le=\"1\"} 5",
                  "vigil_model_score_bucket{model=\"m1\",le=\"+Inf\"} 6",
                  // 0.01 + 0.05 + 0.3 + 0.5 + 0.75 + 2 in double arithmetic, shortest form.
                  "vigil_model_score_sum{model=\"m1\"} 3.61",
                  "vigil_model_score_count{model=\"m1\"} 6",
                  "# HELP vigil_batch_size Rows per batch.",
                  "# TYPE vigil_batch_size histogram",
                  "vigil_batch_size_bucket{le=\"1\"} 1",
                  "vigil_batch_size_bucket{le=\"2.5\"} 1",
                  "vigil_batch_size_bucket{le=\"64\"} 3",
                  "vigil_batch_size_bucket{le=\"+Inf\"} 4",
                  "vigil_batch_size_sum 1068",
                  "vigil_batch_size_count 4",
              }));
}

TEST(MetricsRegistry, ValueHistogramLeIsWrittenAsTheGoClientWritesIt) {
  // strconv.FormatFloat(v, 'g', -1, 64): shortest digits; exponent form below 1e-4 and from 1e6.
  const std::vector<double> bounds = {-2.5, 0,      1e-05,  0.0001,   0.001, 0.1,     1.0 / 3,
                                      12.5, 100000, 123456, 999999.5, 1e+06, 1234567, 1.5e+300};
  MetricsRegistry registry;
  ASSERT_OK_AND_ASSIGN(ValueHistogram * h, registry.AddValueHistogram("v", "V.", {}, bounds));
  h->Record(0.1);
  h->Record(0.2);  // 0.1 + 0.2 = 0.30000000000000004: the sum keeps every digit it needs
  std::vector<std::string> le;
  std::string sum;
  for (const std::string& line : Lines(registry.RenderPrometheusText())) {
    const size_t at = line.find("le=\"");
    if (at != std::string::npos) le.push_back(line.substr(at + 4, line.find('"', at + 4) - at - 4));
    if (line.rfind("v_sum ", 0) == 0) sum = line.substr(6);
  }
  EXPECT_THAT(
      le, ElementsAre("-2.5", "0", "1e-05", "0.0001", "0.001", "0.1", "0.3333333333333333", "12.5",
                      "100000", "123456", "999999.5", "1e+06", "1.234567e+06", "1.5e+300", "+Inf"));
  EXPECT_EQ(sum, "0.30000000000000004");
}

TEST(MetricsRegistry, ValueHistogramSpecialSums) {
  MetricsRegistry registry;
  ASSERT_OK_AND_ASSIGN(ValueHistogram * h, registry.AddValueHistogram("v", "V.", {}, {1}));
  h->Record(std::nan(""));  // ignored
  h->Record(std::numeric_limits<double>::infinity());
  EXPECT_THAT(Lines(registry.RenderPrometheusText()),
              ElementsAre("# HELP v V.", "# TYPE v histogram", "v_bucket{le=\"1\"} 0",
                          "v_bucket{le=\"+Inf\"} 1", "v_sum +Inf", "v_count 1"));
}

TEST(MetricsRegistry, RejectsInvalidValueHistograms) {
  MetricsRegistry registry;
  const auto invalid = [](const char* substring) {
    return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(substring));
  };
  EXPECT_THAT(registry.AddValueHistogram("v", "h", {}, {}), invalid("metric 'v': "));
  EXPECT_THAT(registry.AddValueHistogram("v", "h", {}, {}), invalid("empty"));
  EXPECT_THAT(registry.AddValueHistogram("v", "h", {}, {0.5, 0.5}), invalid("strictly ascending"));
  EXPECT_THAT(registry.AddValueHistogram("v", "h", {}, {1, 0.5}), invalid("strictly ascending"));
  EXPECT_THAT(registry.AddValueHistogram("v", "h", {}, {std::numeric_limits<double>::infinity()}),
              invalid("finite"));
  EXPECT_THAT(registry.AddValueHistogram("v", "h", {}, {std::nan("")}), invalid("finite"));
  EXPECT_THAT(registry.AddValueHistogram("v", "h", {{"le", "1"}}, {1}),
              invalid("'le' is reserved"));
  EXPECT_THAT(registry.AddValueHistogram("9v", "h", {}, {1}), invalid("name must match"));
  EXPECT_THAT(registry.AddValueHistogram("v", "", {}, {1}), invalid("help text is empty"));
  EXPECT_EQ(registry.RenderPrometheusText(), "") << "failed registrations leave nothing behind";
}

TEST(MetricsRegistry, ValueHistogramFamiliesMustAgreeWithTheirFirstRegistration) {
  MetricsRegistry registry;
  ASSERT_OK_AND_ASSIGN(ValueHistogram * a,
                       registry.AddValueHistogram("score", "Help.", {{"m", "a"}}, {0.5, 1}));
  ASSERT_OK_AND_ASSIGN(ValueHistogram * b,
                       registry.AddValueHistogram("score", "Help.", {{"m", "b"}}, {0.5, 1}));
  EXPECT_NE(a, b);
  EXPECT_THAT(registry.AddValueHistogram("score", "Help.", {{"m", "a"}}, {0.5, 1}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("already registered")));
  EXPECT_THAT(registry.AddValueHistogram("score", "Help.", {{"m", "c"}}, {0.5, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("other bucket bounds")));
  EXPECT_THAT(registry.AddValueHistogram("score", "Other.", {{"m", "c"}}, {0.5, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("another help")));
  EXPECT_THAT(registry.AddValueHistogram("score", "Help.", {{"n", "c"}}, {0.5, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("labels (m)")));
  // A latency histogram and a value histogram are different types, even though both export as
  // "histogram".
  EXPECT_THAT(registry.AddHistogram("score", "Help.", {{"m", "c"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("another type")));
  ASSERT_OK(registry.AddHistogram("lat", "Help.").status());
  EXPECT_THAT(registry.AddValueHistogram("lat", "Help.", {}, {1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("another type")));
  // Its _bucket/_sum/_count series names are taken.
  EXPECT_THAT(registry.AddCounter("score_count", "Help."),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("collides with metric")));
  ASSERT_OK(registry.AddGauge("g_sum", "Help.").status());
  EXPECT_THAT(registry.AddValueHistogram("g", "Help.", {}, {1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("collides")));
}

TEST(MetricsRegistry, ValueHistogramRecordsFromManyThreads) {
  MetricsRegistry registry;
  ASSERT_OK_AND_ASSIGN(ValueHistogram * h,
                       registry.AddValueHistogram("batch_rows", "Rows.", {}, {10, 100}));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([h] {
      for (int i = 0; i < 50'000; ++i) h->Record(i % 2 == 0 ? 5 : 50);
    });
  }
  for (int i = 0; i < 20; ++i) {
    EXPECT_THAT(registry.RenderPrometheusText(), HasSubstr("batch_rows_count "));
  }
  for (std::thread& t : threads) t.join();
  EXPECT_THAT(
      Lines(registry.RenderPrometheusText()),
      ElementsAre("# HELP batch_rows Rows.", "# TYPE batch_rows histogram",
                  "batch_rows_bucket{le=\"10\"} 100000", "batch_rows_bucket{le=\"100\"} 200000",
                  "batch_rows_bucket{le=\"+Inf\"} 200000",
                  "batch_rows_sum 5.5e+06",  // 100000 * (5 + 50), as Go writes it
                  "batch_rows_count 200000"));
}

}  // namespace
}  // namespace vigil
