#include "vigil/ingest/event_time_outliers.h"

#include <algorithm>
#include <vector>

namespace vigil {

namespace {
EventTimeOutliers::Options AtLeastOneNeighbour(EventTimeOutliers::Options o) {
  o.neighbours = std::max<size_t>(o.neighbours, 1);
  o.min_neighbours = std::clamp<size_t>(o.min_neighbours, 1, o.neighbours);
  return o;
}
}  // namespace

EventTimeOutliers::EventTimeOutliers(Options options) : options_(AtLeastOneNeighbour(options)) {}

void EventTimeOutliers::Add(int64_t event_time_us, int64_t line, std::string_view raw) {
  Record r;
  if (!spare_.empty()) {
    r = std::move(spare_.front());
    spare_.pop_front();
  }
  r.event_time_us = event_time_us;
  r.line = line;
  r.raw.assign(raw.data(), raw.size());
  held_.push_back(std::move(r));
  times_.push_back(event_time_us);
}

int64_t EventTimeOutliers::Median(size_t from, size_t to) const {
  std::vector<int64_t>& v = scratch_;  // reused: no allocation per record
  v.assign(times_.begin() + static_cast<std::ptrdiff_t>(from),
           times_.begin() + static_cast<std::ptrdiff_t>(to));
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const int64_t upper = v[mid];
  const int64_t lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + (upper - lower) / 2;
}

bool EventTimeOutliers::Coherent(size_t from, size_t to, int64_t median) const {
  if (to - from < options_.min_neighbours) return false;
  const int64_t earliest = *std::min_element(times_.begin() + static_cast<std::ptrdiff_t>(from),
                                             times_.begin() + static_cast<std::ptrdiff_t>(to));
  return median - earliest <= options_.max_lead.count();
}

bool EventTimeOutliers::Pop(Record* out, Verdict* verdict) {
  if (held_.empty()) return false;
  const size_t k = options_.neighbours;
  // The candidate is times_[popped_in_window_]; its followers are the held records after it.
  const size_t after = held_.size() - 1;
  if (after < k && !finished_) return false;
  const size_t at = popped_in_window_;
  *verdict = Verdict{};
  verdict->has_before = at > 0;
  verdict->has_after = after > 0;
  const int64_t t = times_[at];
  const int64_t lead = options_.max_lead.count();
  const size_t after_end = at + 1 + std::min(after, k);
  bool coherent = true;
  if (verdict->has_before) {
    verdict->before_median_us = Median(0, at);
    coherent = coherent && Coherent(0, at, verdict->before_median_us);
  }
  if (verdict->has_after) {
    verdict->after_median_us = Median(at + 1, after_end);
    coherent = coherent && Coherent(at + 1, after_end, verdict->after_median_us);
  }
  if (lead > 0 && coherent && (verdict->has_before || verdict->has_after)) {
    const bool ahead_of_before = !verdict->has_before || t - verdict->before_median_us > lead;
    const bool ahead_of_after = !verdict->has_after || t - verdict->after_median_us > lead;
    verdict->outlier = ahead_of_before && ahead_of_after;
  }
  std::swap(*out, held_.front());
  spare_.push_back(std::move(held_.front()));
  held_.pop_front();
  // The popped record joins the window of those before; the window keeps k of them.
  ++popped_in_window_;
  if (popped_in_window_ > k) {
    times_.pop_front();
    --popped_in_window_;
  }
  return true;
}

}  // namespace vigil
