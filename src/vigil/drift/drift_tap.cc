#include "vigil/drift/drift_tap.h"

#include <algorithm>
#include <chrono>

namespace vigil::drift {

DriftTap::DriftTap(DriftMonitor* monitor, size_t capacity_rows, WhenFull when_full)
    : monitor_(monitor), capacity_(std::max<size_t>(1, capacity_rows)), when_full_(when_full) {
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
                     absl::Span<const double> scores) {
  const size_t width = monitor_->width();
  const size_t n = times.size();
  if (n == 0) return true;
  if (n > capacity_) {
    bool all = true;
    for (size_t begin = 0; begin < n; begin += capacity_) {
      const size_t len = std::min(capacity_, n - begin);
      all &= Offer(times.subspan(begin, len), features.subspan(begin * width, len * width),
                   scores.subspan(begin, len));
    }
    return all;
  }
  Chunk chunk;
  chunk.times.assign(times.begin(), times.end());
  chunk.features.assign(features.begin(), features.end());
  chunk.scores.assign(scores.begin(), scores.end());
  absl::MutexLock lock(&mu_);
  if (when_full_ == WhenFull::kDrop) {
    if (queued_rows_ + n > capacity_) {
      dropped_ += n;
      return false;
    }
  } else {
    const auto room = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return queued_rows_ + n <= capacity_;
    };
    if (!room()) {
      const auto start = std::chrono::steady_clock::now();
      mu_.Await(absl::Condition(&room));
      blocked_seconds_ +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  queued_rows_ += n;
  queue_.push_back(std::move(chunk));
  return true;
}

void DriftTap::Run() {
  for (;;) {
    Chunk chunk;
    {
      absl::MutexLock lock(&mu_);
      const auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return !queue_.empty() || stop_;
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping, and everything is observed
      chunk = std::move(queue_.front());
      queue_.pop_front();
      in_flight_rows_ = chunk.times.size();
    }
    absl::Status s = monitor_->ObserveBatch(chunk.times, chunk.features, chunk.scores);
    absl::MutexLock lock(&mu_);
    if (!s.ok() && status_.ok()) status_ = std::move(s);
    queued_rows_ -= in_flight_rows_;
    observed_ += in_flight_rows_;
    in_flight_rows_ = 0;
  }
}

void DriftTap::Drain() {
  absl::MutexLock lock(&mu_);
  const auto drained = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return queued_rows_ == 0; };
  mu_.Await(absl::Condition(&drained));
}

uint64_t DriftTap::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

double DriftTap::blocked_seconds() const {
  absl::MutexLock lock(&mu_);
  return blocked_seconds_;
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
