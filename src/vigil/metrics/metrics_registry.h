// MetricsRegistry: owns vigil's counters, gauges, latency histograms and value histograms and
// renders them in the Prometheus text exposition format 0.0.4 (what `GET /metrics` serves).
//
// Metrics are registered up front (at pipeline construction), each with its fixed label values;
// the returned pointer is then updated lock-free on the hot path, never looked up by name:
//
//   MetricsRegistry registry;
//   VIGIL_ASSIGN_OR_RETURN(LatencyHistogram* rules,
//       registry.AddHistogram("vigil_stage_latency_seconds", "Time spent per stage.",
//                             {{"stage", "rules"}}));
//   VIGIL_ASSIGN_OR_RETURN(Counter* blocked,
//       registry.AddCounter("vigil_decisions_total", "Decisions by action.",
//                           {{"action", "BLOCK"}}));
//   rules->Record(elapsed);
//   blocked->Increment();
//   std::string body = registry.RenderPrometheusText();
//
// Registering a name again with other label values adds a series to the same family; type, help,
// label names (in order) and, for histograms, the exported bounds must match the first
// registration. Families render in registration order, series in registration order within a
// family. Histograms are exported in seconds: `_bucket{le="..."}` for the configured bounds
// plus "+Inf", `_sum` and `_count`; the full-resolution data stays available through the
// LatencyHistogram itself (percentiles for `vigil bench` and the demo). Value histograms
// (AddValueHistogram: batch sizes, scores) export their own bounds and sum as they are, with
// `le` and `_sum` written the way the Prometheus Go client writes floats (1, 2.5, 0.05, 1e-05,
// 1e+06).
//
// Thread safety: safe for concurrent use. Registration and rendering take an internal mutex;
// the returned metrics are updated without it. Returned pointers stay valid for the registry's
// lifetime.
#ifndef VIGIL_METRICS_METRICS_REGISTRY_H_
#define VIGIL_METRICS_METRICS_REGISTRY_H_

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "vigil/metrics/counter.h"
#include "vigil/metrics/gauge.h"
#include "vigil/metrics/latency_histogram.h"
#include "vigil/metrics/value_histogram.h"

namespace vigil {

// The label pairs of one series, in the family's label-name order: {{"stage", "rules"}}.
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// The `le` bounds exported by default: around vigil's budgets (decision P99 <= 1 ms, end to end
// <= 2 ms) and the interface norms (200 ms, 800 ms), coarse elsewhere. Twelve bounds keep a
// scrape small with one series per stage.
std::vector<std::chrono::nanoseconds> DefaultLatencyBucketBounds();

struct HistogramExportOptions {
  // Upper bounds of the exported buckets, strictly ascending and positive; "+Inf" is always
  // added. Exported counts follow LatencyHistogram::CumulativeCounts (a sample within 1/128 below
  // a bound may be counted at the next bound up).
  std::vector<std::chrono::nanoseconds> bucket_bounds = DefaultLatencyBucketBounds();
};

class MetricsRegistry {
 public:
  // The Content-Type of RenderPrometheusText()'s output.
  static constexpr absl::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // Errors (kInvalidArgument): a name not matching [a-zA-Z_:][a-zA-Z0-9_:]*, empty help, a label
  // name not matching [a-zA-Z_][a-zA-Z0-9_]* or starting with "__", "le" on a histogram, a
  // repeated label name, or a mismatch with the family's first registration (type, help, label
  // names, bounds), or a name that collides with a histogram's _bucket/_sum/_count series.
  // kAlreadyExists: the same name and label values again.
  absl::StatusOr<Counter*> AddCounter(absl::string_view name, absl::string_view help,
                                      const MetricLabels& labels = {});
  absl::StatusOr<Gauge*> AddGauge(absl::string_view name, absl::string_view help,
                                  const MetricLabels& labels = {});
  absl::StatusOr<LatencyHistogram*> AddHistogram(absl::string_view name, absl::string_view help,
                                                 const MetricLabels& labels = {},
                                                 const HistogramExportOptions& options = {});
  // A `histogram` family of non-duration values with the given bucket upper bounds. Errors: as
  // above (a ValueHistogram family is a type of its own: it does not mix with AddHistogram's),
  // plus kInvalidArgument for bounds ValueHistogram::ValidateBounds rejects (empty, not finite,
  // not strictly ascending) or that differ from the family's first registration.
  absl::StatusOr<ValueHistogram*> AddValueHistogram(absl::string_view name, absl::string_view help,
                                                    const MetricLabels& labels,
                                                    std::vector<double> bounds);

  // Every registered metric in Prometheus text format 0.0.4, ending with a newline (empty when
  // nothing is registered).
  std::string RenderPrometheusText() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram, kValueHistogram };
  struct Series;
  struct Family;

  absl::StatusOr<Series*> AddSeries(Type type, absl::string_view name, absl::string_view help,
                                    const MetricLabels& labels,
                                    const HistogramExportOptions* options,
                                    const std::vector<double>* value_bounds = nullptr);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Family>> families_ ABSL_GUARDED_BY(mu_);  // registration order
  // Every name a family exposes (a histogram exposes name_bucket, name_sum, name_count too),
  // to the family's index.
  absl::flat_hash_map<std::string, size_t> exposed_names_ ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil

#endif  // VIGIL_METRICS_METRICS_REGISTRY_H_
