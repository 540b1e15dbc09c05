#include "vigil/drift/drift_report.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "vigil/common/html_escape.h"
#include "vigil/core/transaction.h"

namespace vigil::drift {
namespace {

constexpr std::string_view kShort = "short";
// Points per series on a full plot: both windows together stay near one point per pixel of the
// 790-pixel plot area, which keeps a report of many long-running features small.
constexpr size_t kFullPlotBuckets = 400;
constexpr size_t kSmallPlotBuckets = 140;
// The events table starts folded beyond this many rows: a flapping subject can log thousands.
constexpr size_t kEventsShownOpen = 100;
constexpr int64_t kMicrosPerSecond = 1'000'000;

int Rank(DriftLevel level) { return static_cast<int>(level); }
std::string Name(DriftLevel level) { return std::string(DriftLevelName(level)); }

// The bands' light fills, and the strong colour of badges and event marks, per level.
const char* BandFill(DriftLevel level) {
  switch (level) {
    case DriftLevel::kNone:
      return "#e3f4e4";
    case DriftLevel::kL1:
      return "#fff4c2";
    case DriftLevel::kL2:
      return "#ffdcb8";
    case DriftLevel::kL3:
      return "#ffc9c9";
  }
  return "#e3f4e4";
}
const char* StrongColour(DriftLevel level) {
  switch (level) {
    case DriftLevel::kNone:
      return "#2e7d32";
    case DriftLevel::kL1:
      return "#d89b00";
    case DriftLevel::kL2:
      return "#e65100";
    case DriftLevel::kL3:
      return "#c62828";
  }
  return "#2e7d32";
}

std::string Fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "—";
  return absl::StrFormat("%.*f", decimals, v);
}
std::string Severity(double v) { return Fixed(v, 3); }
// SVG coordinates: a tenth of a pixel is below what anyone can see.
std::string Px(double v) { return absl::StrFormat("%.1f", v); }

std::string Badge(DriftLevel level) {
  return absl::StrCat("<span class=\"badge lv-", Name(level), "\">", Name(level), "</span>");
}

// "2 d 4 h", "3 h 20 min", "12 min 5 s", "45 s": the two largest units, for people.
std::string HumanDuration(int64_t us) {
  const int64_t s = (us + kMicrosPerSecond / 2) / kMicrosPerSecond;
  if (s == 0) return us > 0 ? "&lt; 1 s" : "0 s";
  const int64_t units[] = {86400, 3600, 60, 1};
  const char* names[] = {"d", "h", "min", "s"};
  for (int i = 0; i < 3; ++i) {
    if (s < units[i]) continue;
    const int64_t major = s / units[i], minor = (s % units[i]) / units[i + 1];
    return minor == 0 ? absl::StrCat(major, " ", names[i])
                      : absl::StrCat(major, " ", names[i], " ", minor, " ", names[i + 1]);
  }
  return absl::StrCat(s, " s");
}

// One series with its non-finite points dropped, sorted by time.
struct Line {
  const DriftSeries* series;
  std::vector<DriftPoint> points;
};

Line CleanLine(const DriftSeries& series) {
  Line line{&series, {}};
  line.points.reserve(series.points.size());
  for (const DriftPoint& p : series.points) {
    if (std::isfinite(p.severity)) line.points.push_back(p);
  }
  const auto by_time = [](const DriftPoint& a, const DriftPoint& b) { return a.time < b.time; };
  if (!std::is_sorted(line.points.begin(), line.points.end(), by_time)) {
    std::stable_sort(line.points.begin(), line.points.end(), by_time);
  }
  return line;
}

struct Subject {
  std::string name;
  std::vector<Line> lines;  // "short" windows first, so the bold lines are drawn on top
  bool has_points = false;
  DriftLevel worst = DriftLevel::kNone;
  DriftLevel final_level = DriftLevel::kNone;  // the highest of the windows' last levels
  double peak = std::numeric_limits<double>::quiet_NaN();
  double peak_score = 0;
  UtcTime peak_time{};
  std::string peak_window;
  int64_t us_at_l2 = 0;
  int plot_id = 0;

  bool drifted() const { return Rank(worst) > 0; }
};

void Summarize(Subject& s) {
  std::vector<std::pair<int64_t, int64_t>> at_l2;  // [from, to) in micros, per point
  for (const Line& line : s.lines) {
    const std::vector<DriftPoint>& pts = line.points;
    if (pts.empty()) continue;
    s.has_points = true;
    s.final_level = std::max(s.final_level, pts.back().level);
    for (size_t i = 0; i < pts.size(); ++i) {
      const DriftPoint& p = pts[i];
      s.worst = std::max(s.worst, p.level);
      if (std::isnan(s.peak) || p.severity > s.peak ||
          (p.severity == s.peak && p.time < s.peak_time)) {
        s.peak = p.severity;
        s.peak_score = p.score;
        s.peak_time = p.time;
        s.peak_window = line.series->window;
      }
      if (Rank(p.level) >= Rank(DriftLevel::kL2) && i + 1 < pts.size()) {
        at_l2.emplace_back(ToUnixMicros(p.time), ToUnixMicros(pts[i + 1].time));
      }
    }
  }
  // The union of the intervals, so that both windows at L2 at once count once.
  std::sort(at_l2.begin(), at_l2.end());
  int64_t covered_to = std::numeric_limits<int64_t>::min();
  for (const auto& [from, to] : at_l2) {
    const int64_t start = std::max(from, covered_to);
    if (to > start) s.us_at_l2 += to - start;
    covered_to = std::max(covered_to, to);
  }
}

// Subjects in display order (see the header), each summarized.
std::vector<Subject> GatherSubjects(const DriftReport& report) {
  std::vector<Subject> subjects;
  std::map<std::string, size_t> index;
  for (const DriftSeries& series : report.series) {
    const auto [it, inserted] = index.emplace(series.subject, subjects.size());
    if (inserted) subjects.push_back(Subject{.name = series.subject});
    subjects[it->second].lines.push_back(CleanLine(series));
  }
  for (Subject& s : subjects) {
    std::stable_partition(s.lines.begin(), s.lines.end(),
                          [](const Line& l) { return l.series->window == kShort; });
    Summarize(s);
  }
  const auto group = [](const Subject& s) {
    return s.name == kScoreSubject ? 0 : s.drifted() ? 1 : 2;
  };
  std::stable_sort(subjects.begin(), subjects.end(), [&](const Subject& a, const Subject& b) {
    if (group(a) != group(b)) return group(a) < group(b);
    return group(a) == 1 && a.peak > b.peak;
  });
  for (size_t i = 0; i < subjects.size(); ++i) subjects[i].plot_id = static_cast<int>(i) + 1;
  return subjects;
}

// The time axis shared by every plot, [t0, t1] in micros with t1 > t0.
struct TimeAxis {
  int64_t t0 = 0, t1 = 0;
  int64_t span() const { return t1 - t0; }
};

std::optional<TimeAxis> AxisOf(const std::vector<Subject>& subjects) {
  std::optional<TimeAxis> axis;
  for (const Subject& s : subjects) {
    for (const Line& line : s.lines) {
      if (line.points.empty()) continue;
      const int64_t first = ToUnixMicros(line.points.front().time);
      const int64_t last = ToUnixMicros(line.points.back().time);
      if (!axis) axis = TimeAxis{first, last};
      axis->t0 = std::min(axis->t0, first);
      axis->t1 = std::max(axis->t1, last);
    }
  }
  if (axis && axis->t1 == axis->t0) {  // a single evaluation: a minute either side
    axis->t0 -= 60 * kMicrosPerSecond;
    axis->t1 += 60 * kMicrosPerSecond;
  }
  return axis;
}

// A plot's geometry in SVG user units; the plot area is inside the margins.
struct Frame {
  double width, height, left, right, top, bottom;
  bool full;  // axes, labels and event marks; small plots have only bands and lines

  double PlotWidth() const { return width - left - right; }
  double PlotHeight() const { return height - top - bottom; }
  double X(const TimeAxis& axis, int64_t us) const {
    return left +
           static_cast<double>(us - axis.t0) / static_cast<double>(axis.span()) * PlotWidth();
  }
  double Y(double severity) const {
    return top + (1 - std::clamp(severity, 0.0, 1.0)) * PlotHeight();
  }
};
constexpr Frame kFullFrame{860, 200, 40, 30, 14, 36, true};
constexpr Frame kSmallFrame{280, 64, 2, 2, 3, 3, false};

// At most `buckets` points: the axis is cut into equal time buckets and each keeps its
// highest-severity point, so a spike survives any amount of history (a mean or a stride
// would lose it). Returned in time order.
std::vector<const DriftPoint*> Downsample(const std::vector<DriftPoint>& points,
                                          const TimeAxis& axis, size_t buckets) {
  std::vector<const DriftPoint*> out;
  if (points.size() <= buckets) {
    for (const DriftPoint& p : points) out.push_back(&p);
    return out;
  }
  std::vector<const DriftPoint*> best(buckets, nullptr);
  const double span = static_cast<double>(axis.span());
  for (const DriftPoint& p : points) {
    const double f =
        std::clamp(static_cast<double>(ToUnixMicros(p.time) - axis.t0) / span, 0.0, 1.0);
    const size_t b = std::min(buckets - 1, static_cast<size_t>(f * static_cast<double>(buckets)));
    if (best[b] == nullptr || p.severity > best[b]->severity) best[b] = &p;
  }
  for (const DriftPoint* p : best) {
    if (p != nullptr) out.push_back(p);
  }
  return out;
}

// --- Time ticks -------------------------------------------------------------------------------

struct Tick {
  int64_t us;
  std::string label;    // "05:00", "Nov 30", "Dec"
  std::string context;  // second line where it changes: the day under hours, the year under days
};

constexpr int kMaxTicks = 8;
constexpr std::array<int64_t, 21> kStepSeconds = {
    1,    2,    5,    10,    15,    30,    60,    120,    300,    600,    900,
    1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800, 1209600};
constexpr std::array<const char*, 12> kMonthNames = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

std::chrono::year_month_day DayOf(int64_t us) {
  return std::chrono::year_month_day(std::chrono::floor<std::chrono::days>(FromUnixMicros(us)));
}
std::string DayLabel(const std::chrono::year_month_day& ymd) {
  return absl::StrCat(kMonthNames[static_cast<unsigned>(ymd.month()) - 1], " ",
                      static_cast<unsigned>(ymd.day()));
}

std::vector<Tick> FixedStepTicks(const TimeAxis& axis, int64_t step_s) {
  const int64_t step = step_s * kMicrosPerSecond;
  // Multi-week steps start on Mondays (the epoch was a Thursday); others on epoch multiples,
  // which are UTC midnights for whole days.
  const int64_t offset = step_s % 604800 == 0 ? 4 * 86400 * kMicrosPerSecond : 0;
  std::vector<Tick> ticks;
  std::optional<std::chrono::year_month_day> previous;
  for (int64_t us = (FloorDiv(axis.t0 - offset - 1, step) + 1) * step + offset; us <= axis.t1;
       us += step) {
    const std::chrono::year_month_day ymd = DayOf(us);
    const int64_t tod_s =
        FloorDiv(us, kMicrosPerSecond) - FloorDiv(us, 86400 * kMicrosPerSecond) * 86400;
    Tick tick{us, "", ""};
    if (step_s < 86400) {
      tick.label =
          step_s < 60 ? absl::StrFormat("%02d:%02d:%02d", tod_s / 3600, tod_s / 60 % 60, tod_s % 60)
                      : absl::StrFormat("%02d:%02d", tod_s / 3600, tod_s / 60 % 60);
      if (!previous || *previous != ymd) tick.context = DayLabel(ymd);
    } else {
      tick.label = DayLabel(ymd);
      if (!previous || previous->year() != ymd.year()) {
        tick.context = absl::StrCat(static_cast<int>(ymd.year()));
      }
    }
    previous = ymd;
    ticks.push_back(std::move(tick));
  }
  return ticks;
}

// Spans beyond kMaxTicks × two weeks: ticks on the first of every k-th month.
std::vector<Tick> MonthTicks(const TimeAxis& axis) {
  using namespace std::chrono;
  const auto month_index = [](const year_month_day& ymd) {
    return static_cast<int64_t>(static_cast<int>(ymd.year())) * 12 +
           static_cast<unsigned>(ymd.month()) - 1;
  };
  const auto month_start = [](int64_t m) {
    const year_month_day ymd{year{static_cast<int>(FloorDiv(m, 12))},
                             month{static_cast<unsigned>(m - FloorDiv(m, 12) * 12 + 1)}, day{1}};
    return ToUnixMicros(UtcTime(sys_days(ymd)));
  };
  const int64_t m0 = month_index(DayOf(axis.t0)), m1 = month_index(DayOf(axis.t1));
  int64_t k = 1;
  for (int64_t candidate : {1, 2, 3, 6, 12, 24, 60, 120, 300, 600, 1200}) {
    k = candidate;
    if ((m1 - m0 + 1) / k <= kMaxTicks) break;
  }
  std::vector<Tick> ticks;
  std::optional<int> previous_year;
  for (int64_t m = (FloorDiv(m0 - 1, k) + 1) * k; m <= m1; m += k) {
    const int64_t us = month_start(m);
    if (us < axis.t0) continue;
    const int y = static_cast<int>(FloorDiv(m, 12));
    Tick tick{us, "", ""};
    if (k >= 12) {
      tick.label = absl::StrCat(y);
    } else {
      tick.label = std::string(kMonthNames[m - FloorDiv(m, 12) * 12]);
      if (previous_year != y) tick.context = absl::StrCat(y);
    }
    previous_year = y;
    ticks.push_back(std::move(tick));
  }
  return ticks;
}

std::vector<Tick> TimeTicks(const TimeAxis& axis) {
  const double span_s = static_cast<double>(axis.span()) / kMicrosPerSecond;
  for (int64_t step : kStepSeconds) {
    if (span_s / static_cast<double>(step) <= kMaxTicks) return FixedStepTicks(axis, step);
  }
  return MonthTicks(axis);
}

// --- Plots ------------------------------------------------------------------------------------

void AppendBands(std::string& out, const Frame& f, const LevelCutoffs& c) {
  struct Band {
    DriftLevel level;
    double from, to;
  };
  const Band bands[] = {{DriftLevel::kNone, 0, c.l1},
                        {DriftLevel::kL1, c.l1, c.l2},
                        {DriftLevel::kL2, c.l2, c.l3},
                        {DriftLevel::kL3, c.l3, 1}};
  for (const Band& b : bands) {
    const double y = f.Y(b.to), height = std::max(0.0, f.Y(b.from) - y);
    absl::StrAppend(&out, "<rect class=\"band band-", Name(b.level), "\" x=\"", Px(f.left),
                    "\" y=\"", Px(y), "\" width=\"", Px(f.PlotWidth()), "\" height=\"", Px(height),
                    "\" fill=\"", BandFill(b.level), "\"/>");
    if (f.full && b.level != DriftLevel::kNone && height >= 10) {
      absl::StrAppend(&out, "<text class=\"band-label\" x=\"", Px(f.left + f.PlotWidth() + 5),
                      "\" y=\"", Px(y + height / 2 + 4), "\" fill=\"", StrongColour(b.level), "\">",
                      Name(b.level), "</text>");
    }
  }
}

void AppendAxes(std::string& out, const Frame& f, const std::optional<TimeAxis>& axis) {
  const double right = f.left + f.PlotWidth(), bottom = f.top + f.PlotHeight();
  for (double v : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    absl::StrAppend(&out, "<line class=\"grid\" x1=\"", Px(f.left), "\" y1=\"", Px(f.Y(v)),
                    "\" x2=\"", Px(right), "\" y2=\"", Px(f.Y(v)),
                    "\"/><text class=\"ylabel\" x=\"", Px(f.left - 5), "\" y=\"", Px(f.Y(v) + 4),
                    "\">", absl::StrFormat("%g", v), "</text>");
  }
  if (!axis) return;
  for (const Tick& tick : TimeTicks(*axis)) {
    const std::string x = Px(f.X(*axis, tick.us));
    absl::StrAppend(&out, "<line class=\"grid\" x1=\"", x, "\" y1=\"", Px(f.top), "\" x2=\"", x,
                    "\" y2=\"", Px(bottom + 4), "\"/><text class=\"xlabel\" x=\"", x, "\" y=\"",
                    Px(bottom + 16), "\">", tick.label, "</text>");
    if (!tick.context.empty()) {
      absl::StrAppend(&out, "<text class=\"xlabel context\" x=\"", x, "\" y=\"", Px(bottom + 29),
                      "\">", tick.context, "</text>");
    }
  }
}

void AppendLine(std::string& out, const Line& line, const Frame& f, const TimeAxis& axis) {
  const bool thin = line.series->window == kShort;
  const std::vector<const DriftPoint*> points =
      Downsample(line.points, axis, f.full ? kFullPlotBuckets : kSmallPlotBuckets);
  if (points.empty()) return;
  const std::string style =
      thin ? "stroke=\"#5b7bd5\" stroke-width=\"1\" stroke-opacity=\"0.8\""
           : absl::StrCat("stroke=\"#1b2a6b\" stroke-width=\"", f.full ? "2" : "1.6", "\"");
  const std::string window = HtmlEscape(line.series->window);
  if (points.size() == 1) {  // a polyline of one point draws nothing
    absl::StrAppend(&out, "<circle class=\"line\" data-window=\"", window, "\" cx=\"",
                    Px(f.X(axis, ToUnixMicros(points[0]->time))), "\" cy=\"",
                    Px(f.Y(points[0]->severity)), "\" r=\"2\" fill=\"none\" ", style, "/>");
    return;
  }
  absl::StrAppend(&out, "<polyline class=\"line ", thin ? "thin" : "bold", "\" data-window=\"",
                  window, "\" fill=\"none\" stroke-linejoin=\"round\" ", style, " points=\"");
  for (size_t i = 0; i < points.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : " ", Px(f.X(axis, ToUnixMicros(points[i]->time))), ",",
                    Px(f.Y(points[i]->severity)));
  }
  out += "\"/>";
}

// Level changes: a triangle above the plot area (up for a rise, down for a fall) and a faint
// line through it, in the colour of the level entered. Monitor-wide events: dashed lines.
void AppendEventMarks(std::string& out, const Frame& f, const TimeAxis& axis,
                      const std::vector<const DriftEvent*>& events) {
  const double bottom = f.top + f.PlotHeight();
  for (const DriftEvent* e : events) {
    const double x = f.X(axis, ToUnixMicros(e->time));
    if (x < f.left - 0.5 || x > f.left + f.PlotWidth() + 0.5) continue;
    std::string title = absl::StrCat(FormatUtc(e->time), " ", e->kind);
    if (e->from != e->to) absl::StrAppend(&title, " ", Name(e->from), " → ", Name(e->to));
    if (!e->window.empty()) absl::StrAppend(&title, " (", e->window, ")");
    absl::StrAppend(&title, ", severity ", Severity(e->severity));
    if (!e->detail.empty()) absl::StrAppend(&title, ": ", e->detail);
    if (e->subject == kMonitorSubject) {
      absl::StrAppend(&out, "<g class=\"monitor-event\"><title>", HtmlEscape(title),
                      "</title><line x1=\"", Px(x), "\" y1=\"", Px(f.top), "\" x2=\"", Px(x),
                      "\" y2=\"", Px(bottom),
                      "\" stroke=\"#37474f\" stroke-width=\"1\" "
                      "stroke-dasharray=\"4 3\"/></g>");
      continue;
    }
    const char* colour = StrongColour(e->to);
    const bool rise = Rank(e->to) > Rank(e->from);
    const double tip = rise ? f.top - 10 : f.top - 1, base = rise ? f.top - 1 : f.top - 10;
    absl::StrAppend(&out, "<g class=\"event\"><title>", HtmlEscape(title),
                    "</title><line class=\"event-line\" x1=\"", Px(x), "\" y1=\"", Px(f.top),
                    "\" x2=\"", Px(x), "\" y2=\"", Px(bottom), "\" stroke=\"", colour,
                    "\" stroke-width=\"1\" stroke-opacity=\"0.3\"/><path d=\"M", Px(x - 4), " ",
                    Px(base), "L", Px(x + 4), " ", Px(base), "L", Px(x), " ", Px(tip),
                    "Z\" fill=\"", colour, "\"/></g>");
  }
}

void AppendSvg(std::string& out, const Subject& s, const Frame& f,
               const std::optional<TimeAxis>& axis, const LevelCutoffs& cutoffs,
               const std::vector<const DriftEvent*>& events) {
  absl::StrAppend(&out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"",
                  f.full ? "plot-svg" : "plot-svg small", "\" viewBox=\"0 0 ", Px(f.width), " ",
                  Px(f.height), "\" width=\"", Px(f.width), "\" height=\"", Px(f.height),
                  "\" role=\"img\" aria-label=\"severity of ", HtmlEscape(s.name), " over time\">");
  AppendBands(out, f, cutoffs);
  if (f.full) AppendAxes(out, f, axis);
  if (!axis || !s.has_points) {
    absl::StrAppend(&out, "<text class=\"nodata\" x=\"", Px(f.left + f.PlotWidth() / 2), "\" y=\"",
                    Px(f.top + f.PlotHeight() / 2 + 4), "\">no finite severity</text></svg>");
    return;
  }
  if (f.full) AppendEventMarks(out, f, *axis, events);
  for (const Line& line : s.lines) AppendLine(out, line, f, *axis);
  absl::StrAppend(&out, "<rect class=\"frame\" x=\"", Px(f.left), "\" y=\"", Px(f.top),
                  "\" width=\"", Px(f.PlotWidth()), "\" height=\"", Px(f.PlotHeight()),
                  "\" fill=\"none\"/></svg>");
}

std::string PeakText(const Subject& s) {
  if (!s.has_points) return "no finite severity";
  std::string text = absl::StrCat("peak ", Severity(s.peak));
  if (!s.peak_window.empty()) absl::StrAppend(&text, " (", HtmlEscape(s.peak_window), ")");
  return text;
}

void AppendFigure(std::string& out, const Subject& s, const Frame& f,
                  const std::optional<TimeAxis>& axis, const LevelCutoffs& cutoffs,
                  const std::vector<const DriftEvent*>& events) {
  absl::StrAppend(&out, "<figure class=\"", f.full ? "plot" : "plot small", "\" id=\"plot-",
                  s.plot_id, "\" data-subject=\"", HtmlEscape(s.name), "\"><figcaption><span ",
                  "class=\"subject\">", HtmlEscape(s.name), "</span> ");
  if (f.full) {
    absl::StrAppend(&out, Badge(s.worst), " <span class=\"meta\">", PeakText(s));
    if (s.has_points) absl::StrAppend(&out, " at ", FormatUtc(s.peak_time));
    if (s.us_at_l2 > 0) absl::StrAppend(&out, "; ", HumanDuration(s.us_at_l2), " at ≥ L2");
    out += "</span>";
  } else {
    absl::StrAppend(&out, "<span class=\"meta\">", PeakText(s), "</span>");
  }
  out += "</figcaption>";
  AppendSvg(out, s, f, axis, cutoffs, events);
  out += "</figure>\n";
}

// --- Page -------------------------------------------------------------------------------------

// Absl of Debian 12 takes no std::string_view, hence a char array.
constexpr char kStyle[] = R"css(
body{margin:0;background:#f5f6f8;color:#1f2933;
 font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{max-width:940px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:22px;margin:0 0 12px}
h2{font-size:16px;margin:30px 0 10px;padding-bottom:4px;border-bottom:1px solid #dde1e6}
h3{font-size:14px;margin:20px 0 8px;color:#52606d}
table{border-collapse:collapse;background:#fff;border:1px solid #e4e7eb;border-radius:6px}
th,td{padding:4px 10px;text-align:left;vertical-align:top;border-bottom:1px solid #eef0f3}
thead th{font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:#616e7c;
 background:#fafbfc}
table.facts th{color:#52606d;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
time,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
a{color:#1b4fa0;text-decoration:none}
a:hover{text-decoration:underline}
.badge{display:inline-block;min-width:36px;padding:0 8px;border-radius:10px;text-align:center;
 font-size:12px;font-weight:700;color:#fff}
.lv-none{background:#43a047}.lv-L1{background:#f2b600;color:#3b2a00}
.lv-L2{background:#ef6c00}.lv-L3{background:#c62828}
.headline{padding:12px 16px;border-radius:8px;font-size:15px;margin:0 0 16px;border-left:6px solid}
.hl-none{background:#e8f5e9;border-color:#43a047}.hl-L1{background:#fff8dc;border-color:#f2b600}
.hl-L2{background:#fff0e0;border-color:#ef6c00}.hl-L3{background:#fdecea;border-color:#c62828}
.dim,.win,.pct{color:#7b8794}
.legend{display:flex;flex-wrap:wrap;gap:6px 18px;margin:0 0 12px;font-size:12px;color:#3e4c59}
.key{display:inline-flex;align-items:center;gap:6px}
.sw{display:inline-block;width:16px;height:11px;border:1px solid #cfd4da}
.sw-none{background:#e3f4e4}.sw-L1{background:#fff4c2}
.sw-L2{background:#ffdcb8}.sw-L3{background:#ffc9c9}
.ln{display:inline-block;width:24px;height:0;border-top:2px solid #1b2a6b}
.ln.thin{border-top:1px solid #5b7bd5}.ln.dash{border-top:1px dashed #37474f}
.tri{color:#e65100;font-size:11px}
figure{margin:0 0 14px;padding:8px 10px 4px;background:#fff;border:1px solid #e4e7eb;
 border-radius:8px}
figcaption{margin:0 0 2px}
figcaption .subject{font-weight:700}
figcaption .meta{color:#616e7c;font-size:12px}
svg.plot-svg{display:block;width:100%;height:auto}
svg.plot-svg text{font:10px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;fill:#616e7c}
svg.plot-svg .ylabel{text-anchor:end}
svg.plot-svg .xlabel{text-anchor:middle}
svg.plot-svg .context{font-weight:700}
svg.plot-svg .band-label{font-weight:700}
svg.plot-svg .nodata{text-anchor:middle;font-style:italic}
svg.plot-svg .grid{stroke:#ffffff;stroke-width:1;stroke-opacity:.8}
svg.plot-svg .frame{stroke:#cfd4da;stroke-width:1}
.grid-small{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:10px}
.grid-small figure{margin:0;padding:6px 8px 4px}
.grid-small figcaption{font-size:12px;display:flex;justify-content:space-between;gap:8px}
.grid-small figcaption .subject{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
details summary{cursor:pointer;color:#52606d;margin-bottom:6px}
tr.to-L3 td:first-child{box-shadow:inset 4px 0 #c62828}
tr.to-L2 td:first-child{box-shadow:inset 4px 0 #ef6c00}
tr.to-L1 td:first-child{box-shadow:inset 4px 0 #f2b600}
.empty{padding:24px;background:#fff;border:1px dashed #cfd4da;border-radius:8px;
 text-align:center;color:#52606d}
footer{margin-top:36px;color:#7b8794;font-size:12px}
)css";

void AppendHeadline(std::string& out, const std::vector<Subject>& subjects) {
  DriftLevel worst = DriftLevel::kNone;
  const Subject* worst_subject = nullptr;  // the first, in display order, at the worst level
  int drifted = 0, at_l2 = 0, at_worst = 0;
  for (const Subject& s : subjects) {
    drifted += s.drifted();
    at_l2 += Rank(s.worst) >= Rank(DriftLevel::kL2);
    if (worst_subject == nullptr || Rank(s.worst) > Rank(worst)) {
      worst = s.worst;
      worst_subject = &s;
      at_worst = 0;
    }
    at_worst += s.worst == worst;
  }
  absl::StrAppend(&out, "<p class=\"headline hl-", Name(worst), "\">", Badge(worst), " ");
  if (drifted == 0) {
    absl::StrAppend(&out, "No drift: none of the ", subjects.size(),
                    " subjects reached a level.</p>\n");
    return;
  }
  absl::StrAppend(&out, "Worst level reached: <b>", Name(worst), "</b>, by <b>",
                  HtmlEscape(worst_subject->name), "</b>",
                  at_worst > 1 ? absl::StrCat(" and ", at_worst - 1, " more") : "", ". ", drifted,
                  " of ", subjects.size(), " subjects reached a level; ", at_l2,
                  " reached L2 or above.</p>\n");
}

void AppendFacts(std::string& out, const DriftReport& report) {
  if (report.facts.empty()) return;
  out += "<table class=\"facts\"><tbody>\n";
  for (const auto& [key, value] : report.facts) {
    absl::StrAppend(&out, "<tr><th>", HtmlEscape(key), "</th><td>", HtmlEscape(value),
                    "</td></tr>\n");
  }
  out += "</tbody></table>\n";
}

void AppendOverview(std::string& out, const std::vector<Subject>& subjects,
                    const std::optional<TimeAxis>& axis) {
  out +=
      "<h2>Overview</h2>\n<table class=\"overview\"><thead><tr><th>Subject</th><th>Worst</th>"
      "<th>Time at ≥ L2</th><th>Peak severity</th><th>Peak at (UTC)</th><th>Final</th></tr>"
      "</thead><tbody>\n";
  for (const Subject& s : subjects) {
    absl::StrAppend(&out, "<tr data-subject=\"", HtmlEscape(s.name), "\"><td><a href=\"#plot-",
                    s.plot_id, "\">", HtmlEscape(s.name), "</a></td><td class=\"worst\">",
                    Badge(s.worst), "</td><td class=\"at-l2 num\" data-seconds=\"",
                    absl::StrFormat("%.0f", static_cast<double>(s.us_at_l2) / kMicrosPerSecond),
                    "\">");
    if (s.us_at_l2 == 0) {
      out += "<span class=\"dim\">—</span>";
    } else {
      absl::StrAppend(&out, HumanDuration(s.us_at_l2));
      if (axis) {
        const double pct =
            100.0 * static_cast<double>(s.us_at_l2) / static_cast<double>(axis->span());
        absl::StrAppend(&out, " <span class=\"pct\">(", pct < 0.05 ? "&lt; 0.1" : Fixed(pct, 1),
                        "%)</span>");
      }
    }
    if (!s.has_points) {
      out +=
          "</td><td class=\"peak num\">—</td><td class=\"peak-at\">—</td>"
          "<td class=\"final\">—</td></tr>\n";
      continue;
    }
    absl::StrAppend(&out, "</td><td class=\"peak num\" title=\"score ",
                    absl::StrFormat("%.4g", s.peak_score), "\">", Severity(s.peak),
                    " <span class=\"win\">", HtmlEscape(s.peak_window), "</span></td>",
                    "<td class=\"peak-at\"><time>", FormatUtc(s.peak_time), "</time></td>",
                    "<td class=\"final\">", Badge(s.final_level), "</td></tr>\n");
  }
  out += "</tbody></table>\n";
}

void AppendLegend(std::string& out, const LevelCutoffs& c) {
  absl::StrAppend(
      &out, "<div class=\"legend\">",
      "<span class=\"key\"><span class=\"sw sw-none\"></span>no level (&lt; ", Fixed(c.l1, 2),
      ")</span><span class=\"key\"><span class=\"sw sw-L1\"></span>L1 ≥ ", Fixed(c.l1, 2),
      "</span><span class=\"key\"><span class=\"sw sw-L2\"></span>L2 ≥ ", Fixed(c.l2, 2),
      "</span><span class=\"key\"><span class=\"sw sw-L3\"></span>L3 ≥ ", Fixed(c.l3, 2),
      "</span><span class=\"key\"><span class=\"ln thin\"></span>short window</span>"
      "<span class=\"key\"><span class=\"ln\"></span>long window</span>"
      "<span class=\"key\"><span class=\"tri\">▲▼</span>level change</span>"
      "<span class=\"key\"><span class=\"ln dash\"></span>monitor event</span></div>\n");
}

void AppendPlots(std::string& out, const DriftReport& report, const std::vector<Subject>& subjects,
                 const std::optional<TimeAxis>& axis) {
  out += "<h2>Severity over time</h2>\n";
  AppendLegend(out, report.cutoffs);
  if (axis) {
    absl::StrAppend(&out, "<p class=\"dim\">Time axis (UTC): <time>",
                    FormatUtc(FromUnixMicros(axis->t0)), "</time> to <time>",
                    FormatUtc(FromUnixMicros(axis->t1)), "</time></p>\n");
  }
  bool grid_open = false;
  for (const Subject& s : subjects) {
    const bool full = s.name == kScoreSubject || s.drifted();
    if (!full && !grid_open) {
      out += "<h3>Never reached a level</h3>\n<div class=\"grid-small\">\n";
      grid_open = true;
    }
    std::vector<const DriftEvent*> marks;
    for (const DriftEvent& e : report.events) {
      // The monitor's own L1 comings and goings would bury the plot; its retrain requests,
      // freezes and releases are what an analyst looks for.
      if ((e.kind == kLevelChange && e.subject == s.name) ||
          (s.name == kScoreSubject && e.subject == kMonitorSubject && e.kind != kLevelChange)) {
        marks.push_back(&e);
      }
    }
    AppendFigure(out, s, full ? kFullFrame : kSmallFrame, axis, report.cutoffs, marks);
  }
  if (grid_open) out += "</div>\n";
}

void AppendEvents(std::string& out, const DriftReport& report,
                  const std::vector<Subject>& subjects) {
  if (report.events.empty()) return;
  std::map<std::string, int> plot_of;
  for (const Subject& s : subjects) plot_of.emplace(s.name, s.plot_id);
  std::vector<const DriftEvent*> events;
  for (const DriftEvent& e : report.events) events.push_back(&e);
  std::stable_sort(events.begin(), events.end(), [](const DriftEvent* a, const DriftEvent* b) {
    return a->time != b->time ? a->time < b->time : a->id < b->id;
  });
  absl::StrAppend(&out, "<h2>Events</h2>\n<details",
                  events.size() <= kEventsShownOpen ? " open=\"open\"" : "", "><summary>",
                  events.size(), events.size() == 1 ? " event" : " events",
                  ", oldest first</summary>\n<table class=\"events\"><thead><tr><th>Time (UTC)</th>"
                  "<th>Kind</th><th>Subject</th><th>Window</th><th>Level</th><th>Severity</th>"
                  "<th>Score</th><th>Detail</th></tr></thead><tbody>\n");
  for (const DriftEvent* e : events) {
    const auto plot = plot_of.find(e->subject);
    const std::string subject =
        plot == plot_of.end()
            ? HtmlEscape(e->subject)
            : absl::StrCat("<a href=\"#plot-", plot->second, "\">", HtmlEscape(e->subject), "</a>");
    absl::StrAppend(&out, "<tr class=\"to-", Name(e->to), "\"><td><time>", FormatUtc(e->time),
                    "</time></td><td>", HtmlEscape(e->kind), "</td><td>", subject, "</td><td>",
                    HtmlEscape(e->window), "</td><td>");
    if (e->from != e->to) absl::StrAppend(&out, Badge(e->from), " → ", Badge(e->to));
    absl::StrAppend(&out, "</td><td class=\"num\">", Severity(e->severity),
                    "</td><td class=\"num\">",
                    std::isfinite(e->score) ? absl::StrFormat("%.4g", e->score) : "—", "</td><td>",
                    HtmlEscape(e->detail), "</td></tr>\n");
  }
  out += "</tbody></table></details>\n";
}

}  // namespace

std::string RenderDriftReportHtml(const DriftReport& report) {
  const std::vector<Subject> subjects = GatherSubjects(report);
  const std::optional<TimeAxis> axis = AxisOf(subjects);
  std::string out;
  absl::StrAppend(&out,
                  "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
                  "<title>",
                  HtmlEscape(report.title), "</title>\n<style>", kStyle,
                  "</style>\n</head>\n<body>\n<main>\n<h1>", HtmlEscape(report.title), "</h1>\n");
  if (subjects.empty()) {
    AppendFacts(out, report);
    out += "<p class=\"empty\">Nothing to plot: the report has no series.</p>\n";
  } else {
    AppendHeadline(out, subjects);
    AppendFacts(out, report);
    AppendOverview(out, subjects, axis);
    AppendPlots(out, report, subjects, axis);
  }
  AppendEvents(out, report, subjects);
  absl::StrAppend(&out, "<footer>Severity is calibrated to [0, 1], so the cut-offs (L1 ≥ ",
                  Fixed(report.cutoffs.l1, 2), ", L2 ≥ ", Fixed(report.cutoffs.l2, 2), ", L3 ≥ ",
                  Fixed(report.cutoffs.l3, 2),
                  ") mean the same for every subject and window. A level is left only after ",
                  report.cutoffs.release_after, " evaluations below its cut-off − ",
                  Fixed(report.cutoffs.release_margin, 2),
                  ".</footer>\n</main>\n</body>\n</html>\n");
  return out;
}

}  // namespace vigil::drift
