#include "vigil/drift/drift_tap.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "absl/time/time.h"

namespace vigil::drift {

DriftTap::DriftTap(DriftMonitor* monitor, size_t capacity_rows, WhenFull when_full,
                   size_t wake_rows)
    : monitor_(monitor),
      capacity_(std::max<size_t>(1, capacity_rows)),
      when_full_(when_full),
      wake_rows_(std::clamp<size_t>(wake_rows, 1, capacity_)) {
  thread_ = std::thread([this] { Run(); });
}

DriftTap::~DriftTap() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

bool DriftTap::Offer(absl::Span<const UtcTime> times, absl::Span<const double> features,
                     absl::Span<const double> scores, absl::Span<const RowSource> sources) {
  const size_t width = monitor_->width();
  const size_t n = times.size();
  if (n == 0) return true;
  if (n > capacity_) {
    bool all = true;
    for (size_t begin = 0; begin < n; begin += capacity_) {
      const size_t len = std::min(capacity_, n - begin);
      all &= Offer(times.subspan(begin, len), features.subspan(begin * width, len * width),
                   scores.subspan(begin, len),
                   sources.empty() ? sources : sources.subspan(begin, len));
    }
    return all;
  }
  Rows rows;
  rows.times.assign(times.begin(), times.end());
  rows.features.assign(features.begin(), features.end());
  rows.scores.assign(scores.begin(), scores.end());
  rows.sources.assign(sources.begin(), sources.end());
  return Enqueue(std::move(rows));
}

DriftTap::Rows DriftTap::Spare() {
  absl::MutexLock lock(&mu_);
  if (spare_.empty()) return {};
  Rows rows = std::move(spare_.back());
  spare_.pop_back();
  spare_rows_ -= rows.scores.capacity();
  return rows;
}

bool DriftTap::Offer(Rows&& rows) {
  if (rows.times.empty()) return true;
  return Enqueue(std::move(rows));
}

bool DriftTap::Enqueue(Rows rows) {
  const size_t n = rows.times.size();
  absl::MutexLock lock(&mu_);
  if (when_full_ == WhenFull::kDrop) {
    if (queued_rows_ + n > capacity_) {
      dropped_ += n;
      return false;
    }
  } else {
    // A batch beyond the capacity waits for an empty queue (else it could never enter).
    const auto room = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return queued_rows_ + n <= capacity_ || queued_rows_ == 0;
    };
    if (!room()) {
      const auto start = std::chrono::steady_clock::now();
      mu_.Await(absl::Condition(&room));
      blocked_seconds_ +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  queued_rows_ += n;
  queue_.push_back(std::move(rows));
  return true;
}

void DriftTap::Run() {
  // The thread wakes when a batch of rows is waiting (or after kMaxDelay with fewer), not per
  // row: at tens of thousands of single-row offers a second, a wake-up per offer would cost
  // the decision path more in context switches than the monitor costs itself.
  // Best effort (a container may forbid it): the thread's own nice value, not the process's.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
  const size_t batch_rows = wake_rows_;
  const absl::Duration max_delay = absl::Milliseconds(50);
  for (;;) {
    std::deque<Rows> chunks;
    {
      absl::MutexLock lock(&mu_);
      const auto ready = [this, batch_rows]() ABSL_SHARED_LOCKS_REQUIRED(mu_) -> bool {
        return queued_rows_ >= batch_rows || stop_ || draining_ > 0;
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready), max_delay);
      if (queue_.empty()) {
        if (stop_) return;  // stopping, and everything is observed
        continue;
      }
      chunks.swap(queue_);
      for (const Rows& c : chunks) in_flight_rows_ += c.times.size();
    }
    absl::Status status;
    const double cpu_start = ThreadCpuSeconds();
    for (const Rows& c : chunks) {
      status.Update(monitor_->ObserveBatch(c.times, c.features, c.scores, c.sources));
    }
    const double cpu = ThreadCpuSeconds() - cpu_start;
    absl::MutexLock lock(&mu_);
    monitor_cpu_seconds_ += cpu;
    if (!status.ok() && status_.ok()) status_ = std::move(status);
    queued_rows_ -= in_flight_rows_;
    observed_ += in_flight_rows_;
    in_flight_rows_ = 0;
    for (Rows& c : chunks) {
      if (spare_rows_ + c.scores.capacity() > wake_rows_) break;
      spare_rows_ += c.scores.capacity();
      c.times.clear();
      c.features.clear();
      c.scores.clear();
      c.sources.clear();
      spare_.push_back(std::move(c));
    }
  }
}

void DriftTap::Drain() {
  absl::MutexLock lock(&mu_);
  ++draining_;  // wakes the thread at once, however few rows are queued
  const auto drained = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return queued_rows_ == 0; };
  mu_.Await(absl::Condition(&drained));
  --draining_;
}

uint64_t DriftTap::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

double DriftTap::blocked_seconds() const {
  absl::MutexLock lock(&mu_);
  return blocked_seconds_;
}

double DriftTap::monitor_cpu_seconds() const {
  absl::MutexLock lock(&mu_);
  return monitor_cpu_seconds_;
}

uint64_t DriftTap::observed() const {
  absl::MutexLock lock(&mu_);
  return observed_;
}

absl::Status DriftTap::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

}  // namespace vigil::drift
