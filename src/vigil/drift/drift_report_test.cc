#include "vigil/drift/drift_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil::drift {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int64_t kHour = 3'600'000'000;

// 2026-11-30T00:00:00Z plus `hours`.
UtcTime At(double hours) {
  using namespace std::chrono;
  const int64_t base = ToUnixMicros(UtcTime(sys_days(year{2026} / November / 30)));
  return FromUnixMicros(base + static_cast<int64_t>(std::llround(hours * kHour)));
}

DriftPoint Point(double hours, double severity, DriftLevel level = DriftLevel::kNone) {
  return DriftPoint{At(hours), severity / 10, severity, level};
}

// Hourly points with the given severities, starting at hour 0; levels follow the cut-offs
// without hysteresis.
DriftSeries Hourly(std::string subject, std::string window, const std::vector<double>& sev,
                   const LevelCutoffs& c = {}) {
  DriftSeries s{std::move(subject), std::move(window), {}};
  for (size_t i = 0; i < sev.size(); ++i) {
    const DriftLevel level = sev[i] >= c.l3   ? DriftLevel::kL3
                             : sev[i] >= c.l2 ? DriftLevel::kL2
                             : sev[i] >= c.l1 ? DriftLevel::kL1
                                              : DriftLevel::kNone;
    s.points.push_back(Point(static_cast<double>(i), sev[i], level));
  }
  return s;
}

DriftEvent LevelChangeEvent(std::string subject, double hours, DriftLevel from, DriftLevel to) {
  DriftEvent e;
  e.time = At(hours);
  e.kind = std::string(kLevelChange);
  e.subject = std::move(subject);
  e.window = "short";
  e.from = from;
  e.to = to;
  e.severity = 0.75;
  return e;
}

// absl::StrCat of Debian 12 takes no std::string_view.
std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out.append(part);
  return out;
}

size_t Count(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The <figure> of one subject ("" when absent); `subject` as escaped in the page.
std::string FigureOf(const std::string& doc, std::string_view subject) {
  const size_t at = doc.find(Cat({"data-subject=\"", subject, "\"><figcaption"}));
  if (at == std::string::npos) return "";
  const size_t start = doc.rfind("<figure", at);
  return doc.substr(start, doc.find("</figure>", at) - start);
}

// The overview row of one subject.
std::string RowOf(const std::string& doc, std::string_view subject) {
  const size_t at = doc.find(Cat({"<tr data-subject=\"", subject, "\">"}));
  if (at == std::string::npos) return "";
  return doc.substr(at, doc.find("</tr>", at) - at);
}

// The numeric attribute `name` of the first tag at or after `from` in `text`.
double Attr(std::string_view text, size_t from, std::string_view name) {
  const std::string key = Cat({" ", name, "=\""});
  const size_t at = text.find(key, from);
  if (at == std::string_view::npos) return std::numeric_limits<double>::quiet_NaN();
  return std::strtod(std::string(text.substr(at + key.size(), 32)).c_str(), nullptr);
}

struct Rect {
  double x, y, width, height;
};
Rect BandOf(std::string_view figure, std::string_view level) {
  const size_t at = figure.find(Cat({"class=\"band band-", level, "\""}));
  EXPECT_NE(at, std::string_view::npos) << level;
  return {Attr(figure, at, "x"), Attr(figure, at, "y"), Attr(figure, at, "width"),
          Attr(figure, at, "height")};
}

// The (x, y) pairs of every polyline in `figure`.
std::vector<std::pair<double, double>> PolylinePoints(std::string_view figure,
                                                      std::string_view line_class) {
  std::vector<std::pair<double, double>> out;
  const std::string start = Cat({"<polyline class=\"line ", line_class, "\""});
  for (size_t at = figure.find(start); at != std::string_view::npos;
       at = figure.find(start, at + 1)) {
    const size_t begin = figure.find("points=\"", at) + 8;
    std::string list(figure.substr(begin, figure.find('"', begin) - begin));
    const char* p = list.c_str();
    char* end = nullptr;
    while (*p != '\0') {
      const double x = std::strtod(p, &end);
      const double y = std::strtod(end + 1, &end);  // skips the ','
      out.emplace_back(x, y);
      p = *end == ' ' ? end + 1 : end;
    }
  }
  return out;
}

// Checks that every element is closed in order, as an XML parser would; returns the first
// problem or "".
std::string CheckTagsBalanced(std::string_view doc) {
  std::vector<std::string> open;
  for (size_t at = doc.find('<'); at != std::string_view::npos; at = doc.find('<', at + 1)) {
    const size_t end = doc.find('>', at);
    if (end == std::string_view::npos) return absl::StrCat("unterminated tag at ", at);
    const std::string_view tag = doc.substr(at + 1, end - at - 1);
    if (tag.substr(0, 8) == "!DOCTYPE") continue;
    if (tag.find('<') != std::string_view::npos) return absl::StrCat("'<' inside a tag at ", at);
    if (tag.back() == '/') continue;
    const bool closing = tag.front() == '/';
    const std::string_view body = closing ? tag.substr(1) : tag;
    const std::string name(body.substr(0, body.find_first_of(" \n")));
    if (!closing) {
      open.push_back(name);
    } else if (open.empty() || open.back() != name) {
      return absl::StrCat("</", name, "> closes <", open.empty() ? "" : open.back(), "> at ", at);
    } else {
      open.pop_back();
    }
  }
  return open.empty() ? "" : absl::StrCat("<", open.back(), "> not closed");
}

// Parses `doc` with Python's XML parser: stricter than the check above (attributes, entities,
// characters). scripts/setup installs /usr/bin/python3; without it the check fails rather than
// passing unasked. About 0.1 s a call, so only two tests make it.
bool XmlParses(const std::string& doc) {
  if (std::system("test -x /usr/bin/python3") != 0) {
    ADD_FAILURE() << "no /usr/bin/python3 to parse the page with (scripts/setup installs it)";
    return false;
  }
  const std::string path = absl::StrCat(::testing::TempDir(), "drift_report_test.html");
  std::ofstream(path) << doc;
  return std::system(absl::StrCat("/usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; "
                                  "E.parse(sys.argv[1])' ",
                                  path)
                         .c_str()) == 0;
}

// Every "http" in the page must be the SVG namespace: nothing is fetched.
void ExpectSelfContained(std::string_view doc) {
  for (size_t at = doc.find("http"); at != std::string_view::npos; at = doc.find("http", at + 1)) {
    EXPECT_EQ(doc.substr(at, 26), "http://www.w3.org/2000/svg") << doc.substr(at, 60);
  }
  EXPECT_THAT(std::string(doc), Not(HasSubstr("<script")));
  EXPECT_THAT(std::string(doc), Not(HasSubstr(" src=")));
}

DriftReport ThreeSubjects() {
  DriftReport r;
  r.title = "Drift of transactions.csv against model.json's reference";
  r.facts = {{"reference", "model.json"}, {"rows", "120000"}};
  r.series = {Hourly("amount", "short", {0.1, 0.6, 0.8, 0.95, 0.4, 0.2}),
              Hourly("amount", "long", {0.1, 0.3, 0.5, 0.6, 0.5, 0.3}),
              Hourly("hour_of_day", "short", {0.1, 0.2, 0.1, 0.2, 0.1, 0.1}),
              Hourly("model_score", "short", {0.2, 0.3, 0.4, 0.5, 0.3, 0.2})};
  r.events = {LevelChangeEvent("amount", 1, DriftLevel::kNone, DriftLevel::kL1),
              LevelChangeEvent("amount", 2.5, DriftLevel::kL1, DriftLevel::kL2)};
  return r;
}

TEST(DriftReport, IsAWellFormedSelfContainedPageWithOnePlotPerSubject) {
  const std::string doc = RenderDriftReportHtml(ThreeSubjects());
  EXPECT_THAT(doc, StartsWith("<!DOCTYPE html>\n<html"));
  EXPECT_THAT(doc, HasSubstr("</html>"));
  EXPECT_EQ(CheckTagsBalanced(doc), "");
  ExpectSelfContained(doc);
  EXPECT_EQ(Count(doc, "<svg "), 3u);
  EXPECT_EQ(Count(doc, "</svg>"), 3u);
  EXPECT_EQ(Count(doc, "<figure class=\"plot"), 3u);
  for (std::string_view subject : {"amount", "hour_of_day", "model_score"}) {
    EXPECT_NE(FigureOf(doc, subject), "") << subject;
    EXPECT_NE(RowOf(doc, subject), "") << subject;
  }
  EXPECT_THAT(doc, HasSubstr("<td>model.json</td>"));
}

TEST(DriftReport, EscapesEveryStringFromTheData) {
  DriftReport r = ThreeSubjects();
  const std::string nasty = "<script>&\"";
  r.title = nasty;
  r.facts.push_back({nasty, nasty});
  r.series.push_back(Hourly(nasty, "short", {0.2, 0.9, 0.1}));
  r.series.push_back(Hourly("quiet", nasty, {0.1, 0.1, 0.1}));
  r.events.push_back(LevelChangeEvent(nasty, 1, DriftLevel::kNone, DriftLevel::kL3));
  r.events.back().detail = nasty;
  r.events.back().kind = nasty;
  const std::string doc = RenderDriftReportHtml(r);
  EXPECT_THAT(doc, Not(HasSubstr("<script")));
  EXPECT_THAT(doc, Not(HasSubstr("&\"")));
  EXPECT_THAT(doc, HasSubstr("<title>&lt;script&gt;&amp;&quot;</title>"));
  EXPECT_NE(FigureOf(doc, "&lt;script&gt;&amp;&quot;"), "");
  EXPECT_EQ(CheckTagsBalanced(doc), "");
  EXPECT_TRUE(XmlParses(doc));
}

TEST(DriftReport, DownsamplingKeepsASingleSpikeAmongManyPoints) {
  constexpr int kPoints = 100'000;
  constexpr int kSpikeAt = 12'345;
  DriftSeries s{"amount", "short", {}};
  s.points.reserve(kPoints);
  for (int i = 0; i < kPoints; ++i) {
    // A low, wiggling baseline: a bucket's mean or a stride would both miss the spike.
    const double severity = i == kSpikeAt ? 0.97 : 0.1 + 0.05 * ((i * 7919) % 100) / 100.0;
    s.points.push_back(Point(i / 3600.0, severity, DriftLevel::kNone));
  }
  DriftReport r;
  r.series = {std::move(s)};
  const std::string doc = RenderDriftReportHtml(r);
  EXPECT_LT(doc.size(), 100'000u);  // the page stays small
  const std::string figure = FigureOf(doc, "amount");
  ASSERT_NE(figure, "");
  const Rect none = BandOf(figure, "none"), l3 = BandOf(figure, "L3");
  const double y0 = none.y + none.height, y1 = l3.y;
  const std::vector<std::pair<double, double>> points = PolylinePoints(figure, "thin");
  ASSERT_GE(points.size(), 100u);
  EXPECT_LE(points.size(), 800u);
  std::pair<double, double> top = points[0];
  for (const auto& p : points) {
    if (p.second < top.second) top = p;
  }
  EXPECT_NEAR((y0 - top.second) / (y0 - y1), 0.97, 0.002);
  const double expected_x = none.x + none.width * kSpikeAt / (kPoints - 1.0);
  EXPECT_NEAR(top.first, expected_x, 0.1);
  // And the peak is reported in full.
  EXPECT_THAT(RowOf(doc, "amount"), HasSubstr(">0.970 "));
}

TEST(DriftReport, BandsFollowTheCutoffs) {
  for (const LevelCutoffs& c : {LevelCutoffs{0.5, 0.7, 0.9}, LevelCutoffs{0.3, 0.6, 0.8}}) {
    DriftReport r;
    r.cutoffs = c;
    r.series = {Hourly("model_score", "long", {0.1, 0.2, 0.3}, c)};
    const std::string figure = FigureOf(RenderDriftReportHtml(r), "model_score");
    const Rect none = BandOf(figure, "none"), b1 = BandOf(figure, "L1"), b2 = BandOf(figure, "L2"),
               b3 = BandOf(figure, "L3");
    const double y0 = none.y + none.height, y1 = b3.y, h = y0 - y1;
    ASSERT_GT(h, 50);
    const auto y = [&](double severity) { return y0 - severity * h; };
    EXPECT_NEAR(none.y, y(c.l1), 0.1);
    EXPECT_NEAR(b1.y, y(c.l2), 0.1);
    EXPECT_NEAR(b1.y + b1.height, y(c.l1), 0.1);
    EXPECT_NEAR(b2.y, y(c.l3), 0.1);
    EXPECT_NEAR(b2.y + b2.height, y(c.l2), 0.1);
    EXPECT_NEAR(b3.y + b3.height, y(c.l3), 0.1);
  }
}

TEST(DriftReport, MarksASubjectsLevelChangesOnItsOwnPlot) {
  DriftReport r = ThreeSubjects();
  r.events = {LevelChangeEvent("amount", 2.5, DriftLevel::kL1, DriftLevel::kL2)};
  DriftEvent freeze;
  freeze.time = At(4);
  freeze.kind = std::string(kFreeze);
  freeze.subject = "monitor";
  r.events.push_back(freeze);
  const std::string doc = RenderDriftReportHtml(r);
  const std::string amount = FigureOf(doc, "amount");
  ASSERT_EQ(Count(amount, "<g class=\"event\">"), 1u);
  const Rect band = BandOf(amount, "none");
  const double x = Attr(amount, amount.find("class=\"event-line\""), "x1");
  EXPECT_NEAR(x, band.x + band.width * 2.5 / 5, 0.1);  // the plots span hours 0..5
  EXPECT_THAT(amount, HasSubstr("L1 → L2 (short)"));
  EXPECT_EQ(Count(FigureOf(doc, "model_score"), "<g class=\"event\">"), 0u);
  EXPECT_EQ(Count(FigureOf(doc, "model_score"), "<g class=\"monitor-event\">"), 1u);
  EXPECT_EQ(Count(amount, "monitor-event"), 0u);
  // The events table lists both, oldest first.
  const size_t table = doc.find("<table class=\"events\">");
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(doc.find("level_change", table), doc.find("freeze", table));
}

TEST(DriftReport, OverviewGivesWorstLevelAndTimeAtL2AcrossWindows) {
  using L = DriftLevel;
  DriftReport r;
  DriftSeries s{"amount", "short", {}};
  const L short_levels[] = {L::kNone, L::kL1,   L::kL2,   L::kL2,   L::kL3,  L::kL2,
                            L::kL1,   L::kNone, L::kNone, L::kNone, L::kNone};
  for (int h = 0; h <= 10; ++h) s.points.push_back(Point(h, h == 4 ? 0.95 : 0.5, short_levels[h]));
  // At >= L2: short over hours [2, 6), long over [5, 9); together [2, 9) = 7 h (a sum would
  // give 8 h). The long window's points come unsorted.
  DriftSeries l{"amount",
                "long",
                {Point(7, 0.7, L::kL2), Point(9, 0.2), Point(5, 0.75, L::kL2), Point(0, 0.1)}};
  r.series = {s, l, Hourly("quiet", "short", {0.1, 0.2})};
  const std::string doc = RenderDriftReportHtml(r);
  const std::string row = RowOf(doc, "amount");
  EXPECT_THAT(row, HasSubstr("<td class=\"worst\"><span class=\"badge lv-L3\">L3</span>"));
  EXPECT_THAT(row, HasSubstr("data-seconds=\"25200\">7 h "));
  EXPECT_THAT(row, HasSubstr("(70.0%)"));  // of the 10 hours plotted
  EXPECT_THAT(row, HasSubstr(">0.950 <span class=\"win\">short</span>"));
  EXPECT_THAT(row, HasSubstr("<time>2026-11-30T04:00:00.000000Z</time>"));
  EXPECT_THAT(row, HasSubstr("<td class=\"final\"><span class=\"badge lv-none\">none</span>"));
  const std::string quiet = RowOf(doc, "quiet");
  EXPECT_THAT(quiet, HasSubstr("lv-none"));
  EXPECT_THAT(quiet, HasSubstr("data-seconds=\"0\""));
  EXPECT_THAT(doc, HasSubstr("Worst level reached: <b>L3</b>, by <b>amount</b>"));
}

TEST(DriftReport, OrdersModelScoreThenDriftedByPeakThenTheRestAsSmallPlots) {
  DriftReport r;
  r.series = {Hourly("calm_a", "short", {0.1, 0.2}), Hourly("mild", "short", {0.1, 0.6}),
              Hourly("severe", "long", {0.2, 0.95}), Hourly("calm_b", "short", {0.3, 0.1}),
              Hourly("model_score", "short", {0.1, 0.1})};
  const std::string doc = RenderDriftReportHtml(r);
  std::vector<std::pair<size_t, std::string>> order;
  for (std::string_view name : {"model_score", "severe", "mild", "calm_a", "calm_b"}) {
    const size_t at = doc.find(Cat({"data-subject=\"", name, "\"><figcaption"}));
    ASSERT_NE(at, std::string::npos) << name;
    order.emplace_back(at, std::string(name));
  }
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << doc;
  EXPECT_THAT(FigureOf(doc, "calm_a"), StartsWith("<figure class=\"plot small\""));
  EXPECT_THAT(FigureOf(doc, "model_score"), StartsWith("<figure class=\"plot\""));
  EXPECT_THAT(FigureOf(doc, "mild"), StartsWith("<figure class=\"plot\""));
  EXPECT_LT(doc.find("<tr data-subject=\"severe\""), doc.find("<tr data-subject=\"mild\""));
}

TEST(DriftReport, SkipsNonFiniteValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  DriftReport r;
  r.series = {Hourly("amount", "short", {0.1, nan, 0.3, inf, 0.2}),
              Hourly("empty", "short", {nan, nan})};
  r.events = {LevelChangeEvent("amount", 1, DriftLevel::kNone, DriftLevel::kL1)};
  r.events.back().severity = nan;
  r.events.back().score = inf;
  const std::string doc = RenderDriftReportHtml(r);
  EXPECT_THAT(doc, Not(HasSubstr("nan")));
  EXPECT_THAT(doc, Not(HasSubstr("inf")));
  EXPECT_EQ(PolylinePoints(FigureOf(doc, "amount"), "thin").size(), 3u);
  EXPECT_THAT(FigureOf(doc, "empty"), HasSubstr("no finite severity"));
  EXPECT_EQ(CheckTagsBalanced(doc), "");
}

TEST(DriftReport, LabelsTheTimeAxisForTheSpan) {
  DriftReport r;
  r.series = {Hourly("model_score", "short", std::vector<double>(49, 0.1))};  // 48 hours
  std::string doc = RenderDriftReportHtml(r);
  EXPECT_THAT(doc, HasSubstr(">06:00</text>"));
  EXPECT_THAT(doc, HasSubstr("context\" x=\""));
  EXPECT_THAT(doc, HasSubstr(">Dec 1</text>"));
  // Over a year: months, with the year where it changes.
  r.series = {DriftSeries{"model_score", "short", {Point(0, 0.1), Point(400 * 24, 0.2)}}};
  doc = RenderDriftReportHtml(r);
  EXPECT_THAT(doc, HasSubstr(">2027</text>"));
  EXPECT_THAT(doc, HasSubstr(">Jul</text>"));
  EXPECT_THAT(doc, Not(HasSubstr(">06:00</text>")));
}

TEST(DriftReport, EmptyReportSaysThereIsNothingToPlot) {
  DriftReport r;
  r.title = "Drift of nothing";
  const std::string doc = RenderDriftReportHtml(r);
  EXPECT_THAT(doc, StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(doc, HasSubstr("Nothing to plot"));
  EXPECT_THAT(doc, Not(HasSubstr("<svg")));
  EXPECT_EQ(CheckTagsBalanced(doc), "");
  ExpectSelfContained(doc);
}

// Three days of a replay: twelve features and the model's score on both windows, two features
// drifting on the second day. Writes the page to $VIGIL_DRIFT_REPORT_SAMPLE when set, for
// people to look at.
TEST(DriftReport, RealisticReplayRendersAPageOfBoundedSize) {
  DriftReport r;
  r.title = "Drift of transactions.csv against model.json's reference";
  r.facts = {{"reference", "model.json (reference_profile.json, 100,000 rows)"},
             {"rows replayed", "2,592,000"},
             {"windows", "short 60 s every 10 s; long 300 s every 60 s"},
             {"calibration", "null permutations, 200 per window size"}};
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 0.05);
  const std::vector<std::string> subjects = {
      "model_score",     "amount_reporting", "hour_of_day",    "payment_format", "out_degree_24h",
      "fan_in_1h",       "amount_z_account", "cross_currency", "weekday",        "tx_count_1h",
      "new_beneficiary", "round_amount",     "bank_pair_freq"};
  // amount_reporting: a bump over hours 30..44 peaking at 0.95; fan_in_1h: a plateau at 0.6
  // over hours 36..40; the model's score follows amount_reporting at half strength.
  const auto drift = [](std::string_view subject, double hours) {
    const double bump =
        hours > 30 && hours < 44 ? 0.8 * std::sin((hours - 30) / 14 * std::numbers::pi) : 0.0;
    if (subject == "amount_reporting") return bump;
    if (subject == "model_score") return bump / 2;
    if (subject == "fan_in_1h" && hours > 36 && hours < 40) return 0.45;
    return 0.0;
  };
  const LevelCutoffs cutoffs;
  for (const std::string& subject : subjects) {
    for (const auto& [window, step_s] : {std::pair<std::string, int>{"short", 10}, {"long", 60}}) {
      DriftSeries s{subject, window, {}};
      LevelTracker tracker(&cutoffs);
      for (int t = 0; t < 72 * 3600; t += step_s) {
        const double hours = t / 3600.0;
        const double sev = std::clamp(
            0.15 + (window == "short" ? 1.0 : 0.5) * noise(rng) + drift(subject, hours), 0.0, 1.0);
        if (const std::optional<LevelChange> change = tracker.Observe(sev); change.has_value()) {
          DriftEvent e = LevelChangeEvent(subject, hours, change->from, change->to);
          e.window = window;
          e.severity = sev;
          e.score = sev / 8;
          e.id = r.events.size() + 1;
          r.events.push_back(e);
        }
        s.points.push_back(DriftPoint{At(hours), sev / 8, sev, tracker.level()});
      }
      r.series.push_back(std::move(s));
    }
  }
  DriftEvent retrain;
  retrain.time = At(36.2);
  retrain.kind = std::string(kRetrainRequested);
  retrain.subject = "monitor";
  retrain.severity = 0.74;
  retrain.detail = "amount_reporting and fan_in_1h at L2";
  r.events.push_back(retrain);
  const std::string doc = RenderDriftReportHtml(r);
  EXPECT_EQ(CheckTagsBalanced(doc), "");
  EXPECT_TRUE(XmlParses(doc));
  ExpectSelfContained(doc);
  EXPECT_EQ(Count(doc, "<figure class=\"plot"), subjects.size());
  EXPECT_LT(doc.size(), 1'000'000u);
  if (const char* path = std::getenv("VIGIL_DRIFT_REPORT_SAMPLE"); path != nullptr) {
    std::ofstream(path) << doc;
  }
}

}  // namespace
}  // namespace vigil::drift
