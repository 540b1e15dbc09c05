#include "vigil/metrics/metrics_registry.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace vigil {
namespace {

using std::chrono::nanoseconds;

bool IsMetricName(absl::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool IsLabelName(absl::string_view s) {
  if (s.empty() || absl::StartsWith(s, "__")) return false;  // "__" is reserved for Prometheus
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// HELP text escapes backslash and newline; label values also escape the double quote.
std::string Escape(absl::string_view s, bool quote) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// Shortest text that reads back as the same double; Prometheus spellings for the specials.
std::string FormatDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

// What the Prometheus Go client writes for a float (strconv.FormatFloat(v, 'g', -1, 64)): the
// shortest digits that read back as v, in exponent form when the decimal exponent is below -4
// or at least 6: 1, 2.5, 0.05, 0.0001, 100000, 1e-05, 1e+06, 1.5e+07. Histogram `le` values are
// label strings, so writing them as the most common client does keeps vigil's series joinable
// with other exporters' on `le`.
std::string FormatGoFloat(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  // Shortest round trip in exponent form: "-d.ddde-XX", the exponent at least two digits as in
  // Go's %e.
  const std::to_chars_result r =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  // 32 bytes hold any double's shortest form (at most 24 characters), so this always holds;
  // FormatDouble is a valid sample value should it not.
  if (r.ec != std::errc()) return FormatDouble(v);
  const std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
  const size_t e = sci.find('e');
  if (e == std::string_view::npos || e + 2 >= sci.size()) return FormatDouble(v);
  int exp = 0;
  const char* exp_begin = sci.data() + e + (sci[e + 1] == '+' ? 2 : 1);
  if (std::from_chars(exp_begin, sci.data() + sci.size(), exp).ec != std::errc()) {
    return FormatDouble(v);
  }
  if (exp < -4 || exp >= 6) return std::string(sci);
  std::string out;
  std::string_view mantissa = sci.substr(0, e);
  if (mantissa.front() == '-') {
    out.push_back('-');
    mantissa.remove_prefix(1);
  }
  std::string digits;
  for (const char c : mantissa) {
    if (c != '.') digits.push_back(c);
  }
  const int point = exp + 1;  // digits before the decimal point; <= 0: zeros after it first
  if (point <= 0) {
    out.append("0.").append(static_cast<size_t>(-point), '0').append(digits);
  } else if (digits.size() <= static_cast<size_t>(point)) {
    out.append(digits).append(static_cast<size_t>(point) - digits.size(), '0');
  } else {
    out.append(digits, 0, static_cast<size_t>(point))
        .append(".")
        .append(digits, static_cast<size_t>(point));
  }
  return out;
}

// Nanoseconds as exact decimal seconds: 50000 -> "0.00005", 2000000000 -> "2".
std::string FormatSeconds(uint64_t ns) {
  std::string out = absl::StrCat(ns / 1'000'000'000);
  uint64_t frac = ns % 1'000'000'000;
  if (frac == 0) return out;
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%09llu", static_cast<unsigned long long>(frac));
  size_t len = 9;
  while (buf[len - 1] == '0') --len;
  absl::StrAppend(&out, ".", absl::string_view(buf, len));
  return out;
}

uint64_t ToUnsigned(nanoseconds d) { return d.count() < 0 ? 0 : static_cast<uint64_t>(d.count()); }

}  // namespace

std::vector<nanoseconds> DefaultLatencyBucketBounds() {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  return {microseconds(50), microseconds(100), microseconds(250), microseconds(500),
          milliseconds(1),  milliseconds(2),   milliseconds(5),   milliseconds(10),
          milliseconds(50), milliseconds(200), milliseconds(800), seconds(5)};
}

struct MetricsRegistry::Series {
  std::vector<std::string> label_values;
  // Exactly one is set, per the family's type.
  std::unique_ptr<Counter> counter;
  std::unique_ptr<Gauge> gauge;
  std::unique_ptr<LatencyHistogram> histogram;
  std::unique_ptr<ValueHistogram> value_histogram;
};

struct MetricsRegistry::Family {
  std::string name;
  std::string help;
  Type type;
  std::vector<std::string> label_names;
  std::vector<nanoseconds> bounds;   // histograms only
  std::vector<double> value_bounds;  // value histograms only
  std::vector<std::unique_ptr<Series>> series;
};

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

absl::StatusOr<Counter*> MetricsRegistry::AddCounter(absl::string_view name, absl::string_view help,
                                                     const MetricLabels& labels) {
  absl::StatusOr<Series*> series = AddSeries(Type::kCounter, name, help, labels, nullptr);
  if (!series.ok()) return series.status();
  return (*series)->counter.get();
}

absl::StatusOr<Gauge*> MetricsRegistry::AddGauge(absl::string_view name, absl::string_view help,
                                                 const MetricLabels& labels) {
  absl::StatusOr<Series*> series = AddSeries(Type::kGauge, name, help, labels, nullptr);
  if (!series.ok()) return series.status();
  return (*series)->gauge.get();
}

absl::StatusOr<LatencyHistogram*> MetricsRegistry::AddHistogram(
    absl::string_view name, absl::string_view help, const MetricLabels& labels,
    const HistogramExportOptions& options) {
  absl::StatusOr<Series*> series = AddSeries(Type::kHistogram, name, help, labels, &options);
  if (!series.ok()) return series.status();
  return (*series)->histogram.get();
}

absl::StatusOr<ValueHistogram*> MetricsRegistry::AddValueHistogram(absl::string_view name,
                                                                   absl::string_view help,
                                                                   const MetricLabels& labels,
                                                                   std::vector<double> bounds) {
  absl::StatusOr<Series*> series =
      AddSeries(Type::kValueHistogram, name, help, labels, nullptr, &bounds);
  if (!series.ok()) return series.status();
  return (*series)->value_histogram.get();
}

absl::StatusOr<MetricsRegistry::Series*> MetricsRegistry::AddSeries(
    Type type, absl::string_view name, absl::string_view help, const MetricLabels& labels,
    const HistogramExportOptions* options, const std::vector<double>* value_bounds) {
  const auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("metric '", name, "': ", why));
  };
  if (!IsMetricName(name)) return error("name must match [a-zA-Z_:][a-zA-Z0-9_:]*");
  if (help.empty()) return error("help text is empty");
  std::vector<std::string> label_names;
  std::vector<std::string> label_values;
  for (const auto& [label, value] : labels) {
    if (!IsLabelName(label)) {
      return error(absl::StrCat("label name '", label,
                                "' must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __"));
    }
    if ((type == Type::kHistogram || type == Type::kValueHistogram) && label == "le") {
      return error("'le' is reserved for histogram buckets");
    }
    for (const std::string& seen : label_names) {
      if (seen == label) return error(absl::StrCat("label '", label, "' repeated"));
    }
    label_names.push_back(label);
    label_values.push_back(value);
  }
  if (options != nullptr) {
    for (size_t i = 0; i < options->bucket_bounds.size(); ++i) {
      if (options->bucket_bounds[i].count() <= 0 ||
          (i > 0 && options->bucket_bounds[i] <= options->bucket_bounds[i - 1])) {
        return error("histogram bucket bounds must be positive and strictly ascending");
      }
    }
  }
  // Created (and its bounds checked) before taking the lock; dropped if registration fails.
  std::unique_ptr<ValueHistogram> value_histogram;
  if (value_bounds != nullptr) {
    absl::StatusOr<std::unique_ptr<ValueHistogram>> created = ValueHistogram::Create(*value_bounds);
    if (!created.ok()) return error(created.status().message());
    value_histogram = *std::move(created);
  }
  std::vector<std::string> exposed = {std::string(name)};
  if (type == Type::kHistogram || type == Type::kValueHistogram) {
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      exposed.push_back(absl::StrCat(name, suffix));
    }
  }

  absl::MutexLock lock(&mu_);
  Family* family = nullptr;
  for (const std::string& n : exposed) {
    auto it = exposed_names_.find(n);
    if (it == exposed_names_.end()) continue;
    Family* other = families_[it->second].get();
    if (other->name != name) {
      return error(absl::StrCat("its series '", n, "' collides with metric '", other->name, "'"));
    }
    family = other;
  }
  if (family != nullptr) {
    if (family->type != type) return error("registered before with another type");
    if (family->help != help) return error("registered before with another help text");
    if (family->label_names != label_names) {
      return error(absl::StrCat("registered before with labels (",
                                absl::StrJoin(family->label_names, ", "), ")"));
    }
    if (options != nullptr && family->bounds != options->bucket_bounds) {
      return error("registered before with other bucket bounds");
    }
    if (value_bounds != nullptr && family->value_bounds != *value_bounds) {
      return error("registered before with other bucket bounds");
    }
    for (const auto& s : family->series) {
      if (s->label_values == label_values) {
        return absl::AlreadyExistsError(absl::StrCat("metric '", name, "' with labels {",
                                                     absl::StrJoin(label_values, ", "),
                                                     "} is already registered"));
      }
    }
  } else {
    auto created = std::make_unique<Family>();
    created->name = std::string(name);
    created->help = std::string(help);
    created->type = type;
    created->label_names = label_names;
    if (options != nullptr) created->bounds = options->bucket_bounds;
    if (value_bounds != nullptr) created->value_bounds = *value_bounds;
    families_.push_back(std::move(created));
    for (const std::string& n : exposed) exposed_names_.emplace(n, families_.size() - 1);
    family = families_.back().get();
  }
  auto series = std::make_unique<Series>();
  series->label_values = std::move(label_values);
  switch (type) {
    case Type::kCounter:
      series->counter = std::make_unique<Counter>();
      break;
    case Type::kGauge:
      series->gauge = std::make_unique<Gauge>();
      break;
    case Type::kHistogram:
      series->histogram = std::make_unique<LatencyHistogram>();
      break;
    case Type::kValueHistogram:
      series->value_histogram = std::move(value_histogram);
      break;
  }
  family->series.push_back(std::move(series));
  return family->series.back().get();
}

std::string MetricsRegistry::RenderPrometheusText() const {
  std::string out;
  absl::MutexLock lock(&mu_);
  for (const std::unique_ptr<Family>& family : families_) {
    const char* type_name = family->type == Type::kCounter ? "counter"
                            : family->type == Type::kGauge ? "gauge"
                                                           : "histogram";
    absl::StrAppend(&out, "# HELP ", family->name, " ", Escape(family->help, false), "\n",
                    "# TYPE ", family->name, " ", type_name, "\n");
    for (const std::unique_ptr<Series>& series : family->series) {
      std::string labels;  // k1="v1",k2="v2"
      for (size_t i = 0; i < family->label_names.size(); ++i) {
        absl::StrAppend(&labels, i == 0 ? "" : ",", family->label_names[i], "=\"",
                        Escape(series->label_values[i], true), "\"");
      }
      const std::string braced = labels.empty() ? "" : absl::StrCat("{", labels, "}");
      switch (family->type) {
        case Type::kCounter:
          absl::StrAppend(&out, family->name, braced, " ", series->counter->value(), "\n");
          break;
        case Type::kGauge:
          absl::StrAppend(&out, family->name, braced, " ", FormatDouble(series->gauge->value()),
                          "\n");
          break;
        case Type::kHistogram: {
          // One pass over the buckets, so the le counts, +Inf and _count agree.
          const std::vector<uint64_t> counts = series->histogram->CumulativeCounts(family->bounds);
          const std::string prefix = labels.empty() ? "" : absl::StrCat(labels, ",");
          for (size_t i = 0; i < family->bounds.size(); ++i) {
            absl::StrAppend(&out, family->name, "_bucket{", prefix, "le=\"",
                            FormatSeconds(ToUnsigned(family->bounds[i])), "\"} ", counts[i], "\n");
          }
          absl::StrAppend(&out, family->name, "_bucket{", prefix, "le=\"+Inf\"} ", counts.back(),
                          "\n");
          absl::StrAppend(&out, family->name, "_sum", braced, " ",
                          FormatSeconds(ToUnsigned(series->histogram->sum())), "\n");
          absl::StrAppend(&out, family->name, "_count", braced, " ", counts.back(), "\n");
          break;
        }
        case Type::kValueHistogram: {
          // One pass over the buckets, so the le counts, +Inf and _count agree.
          const std::vector<uint64_t> counts = series->value_histogram->CumulativeCounts();
          const std::string prefix = labels.empty() ? "" : absl::StrCat(labels, ",");
          for (size_t i = 0; i < family->value_bounds.size(); ++i) {
            absl::StrAppend(&out, family->name, "_bucket{", prefix, "le=\"",
                            FormatGoFloat(family->value_bounds[i]), "\"} ", counts[i], "\n");
          }
          absl::StrAppend(&out, family->name, "_bucket{", prefix, "le=\"+Inf\"} ", counts.back(),
                          "\n");
          absl::StrAppend(&out, family->name, "_sum", braced, " ",
                          FormatGoFloat(series->value_histogram->sum()), "\n");
          absl::StrAppend(&out, family->name, "_count", braced, " ", counts.back(), "\n");
          break;
        }
      }
    }
  }
  return out;
}

}  // namespace vigil
