#include "vigil/batching/batch_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"

namespace vigil {

using std::chrono::microseconds;
using std::chrono::milliseconds;

BatchPolicyConfig BatchPolicyConfig::Fast() {
  BatchPolicyConfig c;
  c.classes[0] = {microseconds(0), 1, 16, 1024, true};
  c.classes[1] = {microseconds(500), 1, 64, 4096, false};
  c.classes[2] = {milliseconds(2), 1, 256, 8192, false};
  c.scoring_time = microseconds(200);
  return c;
}

BatchPolicyConfig BatchPolicyConfig::Immediate() {
  BatchPolicyConfig c;
  c.classes[0] = {microseconds(0), 1, 16, 1024, true};
  c.classes[1] = {microseconds(0), 1, 64, 4096, false};
  c.classes[2] = {microseconds(0), 1, 256, 8192, false};
  c.scoring_time = microseconds(200);
  return c;
}

BatchPolicyConfig BatchPolicyConfig::ComplianceGrade() {
  BatchPolicyConfig c;
  c.classes[0] = {milliseconds(5), 1, 16, 1024, true};
  c.classes[1] = {milliseconds(50), 8, 64, 4096, true};
  c.classes[2] = {milliseconds(200), 32, 256, 8192, false};
  c.scoring_time = milliseconds(1);
  return c;
}

absl::Status BatchPolicyConfig::Validate() const {
  for (size_t i = 0; i < classes.size(); ++i) {
    const ClassPolicy& p = classes[i];
    const auto error = [i](auto&&... parts) {
      return absl::InvalidArgumentError(absl::StrCat("batcher class P", i, ": ", parts...));
    };
    if (p.max_batch == 0) return error("max_batch must be at least 1");
    if (p.min_batch == 0 || p.min_batch > p.max_batch) {
      return error("min_batch ", p.min_batch, " must be between 1 and max_batch ", p.max_batch);
    }
    if (p.max_queue == 0) return error("max_queue must be at least 1");
    if (p.max_queue_delay.count() < 0) return error("max_queue_delay must not be negative");
  }
  if (scoring_time.count() < 0) {
    return absl::InvalidArgumentError("batcher: scoring_time must not be negative");
  }
  return absl::OkStatus();
}

BatchPolicy::BatchPolicy(BatchPolicyConfig config) : config_(config) {
  VIGIL_CHECK(config_.Validate().ok());
}

bool BatchPolicy::Enqueue(const BatchRequest& r) {
  const auto c = static_cast<size_t>(r.priority);
  Queue& q = queues_[c];
  if (q.items.size() >= config_.classes[c].max_queue) return false;
  q.items.push_back(r);
  if (config_.classes[c].preempts) {
    for (size_t lower = c + 1; lower < queues_.size(); ++lower) {
      if (!queues_[lower].items.empty()) queues_[lower].flush = true;
    }
  }
  return true;
}

std::vector<BatchRequest> BatchPolicy::TakeExpired(SteadyTime now) {
  std::vector<BatchRequest> expired;
  const SteadyTime latest_start = now + config_.scoring_time;
  for (Queue& q : queues_) {
    auto keep = std::stable_partition(q.items.begin(), q.items.end(), [&](const BatchRequest& r) {
      return r.deadline >= latest_start;
    });
    expired.insert(expired.end(), keep, q.items.end());
    q.items.erase(keep, q.items.end());
    if (q.items.empty()) q.flush = false;
  }
  return expired;
}

bool BatchPolicy::Due(size_t c, SteadyTime now) const {
  const Queue& q = queues_[c];
  if (q.items.empty()) return false;
  const ClassPolicy& p = config_.classes[c];
  if (q.flush || q.items.size() >= p.max_batch) return true;
  if (q.items.size() >= p.min_batch && now - q.items.front().arrival >= p.max_queue_delay) {
    return true;
  }
  // Urgent: the most pressing deadline leaves no more than two scoring times of slack.
  const auto earliest = std::min_element(
      q.items.begin(), q.items.end(),
      [](const BatchRequest& a, const BatchRequest& b) { return a.deadline < b.deadline; });
  return earliest->deadline - now <= 2 * config_.scoring_time;
}

std::vector<BatchRequest> BatchPolicy::NextBatch(SteadyTime now) {
  for (size_t c = 0; c < queues_.size(); ++c) {
    if (!Due(c, now)) continue;
    Queue& q = queues_[c];
    const size_t take = std::min(q.items.size(), config_.classes[c].max_batch);
    // Earliest deadline first; arrival order breaks ties (the deque is in arrival order and the
    // sort is stable).
    std::vector<size_t> order(q.items.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return q.items[a].deadline < q.items[b].deadline; });
    order.resize(take);
    std::sort(order.begin(), order.end());
    std::vector<BatchRequest> batch;
    batch.reserve(take);
    for (size_t i : order) batch.push_back(q.items[i]);  // arrival order
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      q.items.erase(q.items.begin() + static_cast<std::ptrdiff_t>(*it));
    }
    std::stable_sort(batch.begin(), batch.end(), [](const BatchRequest& a, const BatchRequest& b) {
      return a.deadline < b.deadline;
    });
    q.flush = false;
    return batch;
  }
  return {};
}

std::optional<SteadyTime> BatchPolicy::NextWakeup() const {
  std::optional<SteadyTime> wake;
  const auto consider = [&wake](SteadyTime t) {
    if (!wake.has_value() || t < *wake) wake = t;
  };
  for (size_t c = 0; c < queues_.size(); ++c) {
    const Queue& q = queues_[c];
    if (q.items.empty()) continue;
    const ClassPolicy& p = config_.classes[c];
    // Due already: any time not after now will do; the oldest arrival is such a time.
    if (q.flush || q.items.size() >= p.max_batch) consider(q.items.front().arrival);
    if (q.items.size() >= p.min_batch) consider(q.items.front().arrival + p.max_queue_delay);
    for (const BatchRequest& r : q.items) consider(r.deadline - 2 * config_.scoring_time);
  }
  return wake;
}

size_t BatchPolicy::queued() const {
  size_t n = 0;
  for (const Queue& q : queues_) n += q.items.size();
  return n;
}

}  // namespace vigil
