#include "vigil/batching/batching_scorer.h"

#include <sched.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "vigil/common/status_macros.h"

namespace vigil {

namespace {
using Steady = std::chrono::steady_clock;

// The cores this process may run on (its affinity mask, as taskset or a container sets it),
// not the machine's.
unsigned UsableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    return std::max(1, CPU_COUNT(&set));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

// One call in flight. Shared by the caller and the batcher: a caller that gives up at its
// deadline leaves, and the batcher may still finish the request later without harm.
struct BatchingScorer::Pending {
  std::vector<double> rows;
  size_t n = 0;
  Priority priority = Priority::kP1;
  Steady::time_point deadline = Steady::time_point::max();
  std::vector<double> scores;
  ScoreBackend backend = ScoreBackend::kNone;  // which backend scored its batch
  absl::Status status;
  absl::Notification done;
};

absl::StatusOr<std::unique_ptr<BatchingScorer>> BatchingScorer::Create(
    std::shared_ptr<const Scorer> inner, BatchPolicyConfig config, ValueHistogram* batch_sizes) {
  VIGIL_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<BatchingScorer> scorer(
      new BatchingScorer(std::move(inner), config, batch_sizes));
  scorer->thread_ = std::thread([s = scorer.get()] { s->Run(); });
  return scorer;
}

BatchingScorer::BatchingScorer(std::shared_ptr<const Scorer> inner, BatchPolicyConfig config,
                               ValueHistogram* batch_sizes)
    : inner_(std::move(inner)),
      batch_sizes_(batch_sizes),
      max_inline_(UsableCores()),
      policy_(config) {}

void BatchingScorer::RecordDuration(Steady::duration took) const {
  // A decaying maximum: one slow call holds inlining off for a while, then it is forgotten.
  recent_max_ = std::max(took, recent_max_ - recent_max_ / 16);
}

size_t BatchingScorer::queued(Priority p) const {
  absl::MutexLock lock(&mu_);
  return policy_.queued(p);
}

BatchingScorer::~BatchingScorer() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
  absl::MutexLock lock(&mu_);
  for (auto& [id, p] : pending_) {
    Complete(*p, absl::UnavailableError("the batcher is shutting down"));
  }
  pending_.clear();
}

void BatchingScorer::Complete(Pending& p, absl::Status status) const {
  p.status = std::move(status);
  p.done.Notify();
}

absl::Status BatchingScorer::Score(absl::Span<const double> rows, size_t n,
                                   absl::Span<double> scores, const ScoreContext& context) const {
  if (n == 0) return absl::OkStatus();
  const ClassPolicy& cls = policy_.config().classes[static_cast<size_t>(context.priority)];
  if (cls.max_queue_delay.count() == 0 && policy_.config().inline_when_idle &&
      inner_->latency_bounded()) {
    // Nothing to wait for: with no request queued (none is passed over), a core free, and the
    // model recently fast enough to finish well within the deadline, the caller scores on its
    // own thread, sparing two thread handoffs. Under load the queue fills and batches form as
    // usual; a model turning slow sends calls back to the queue, where deadlines are enforced.
    bool run_inline = false;
    const Steady::time_point now = Steady::now();
    {
      absl::MutexLock lock(&mu_);
      const bool fits = !context.deadline.has_value() ||
                        now + 2 * recent_max_ < *context.deadline;
      if (fits && policy_.queued() == 0 && inline_running_ < max_inline_) {
        ++inline_running_;
        ++stats_.calls;
        ++stats_.inline_calls;
        run_inline = true;
      }
    }
    if (run_inline) {
      if (batch_sizes_ != nullptr) batch_sizes_->Record(static_cast<double>(n));
      const absl::Status status = inner_->Score(rows, n, scores, context);
      const Steady::duration took = Steady::now() - now;
      absl::MutexLock lock(&mu_);
      --inline_running_;
      RecordDuration(took);
      return status;
    }
  }
  auto p = std::make_shared<Pending>();
  const size_t width = row_width();
  p->rows.assign(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n * width));
  p->n = n;
  p->priority = context.priority;
  const Steady::time_point now = Steady::now();
  const Steady::time_point deadline = context.deadline.value_or(Steady::time_point::max());
  p->deadline = deadline;
  {
    absl::MutexLock lock(&mu_);
    ++stats_.calls;
    const uint64_t id = next_id_++;
    if (!policy_.Enqueue({id, context.priority, now, deadline})) {
      ++stats_.rejected;
      return absl::ResourceExhaustedError(absl::StrCat(
          "the batcher's ", PriorityName(context.priority), " queue is full (",
          policy_.config().classes[static_cast<size_t>(context.priority)].max_queue, " requests)"));
    }
    pending_[id] = p;
    arrived_ = true;
  }
  if (context.deadline.has_value()) {
    // The batcher expires the request at its deadline; the wait adds a margin for its wakeup.
    const auto wait = deadline - Steady::now() + std::chrono::milliseconds(5);
    if (!p->done.WaitForNotificationWithTimeout(absl::FromChrono(wait))) {
      return absl::DeadlineExceededError("no model score before the deadline");
    }
  } else {
    p->done.WaitForNotification();
  }
  if (!p->status.ok()) return p->status;
  std::copy(p->scores.begin(), p->scores.end(), scores.begin());
  if (context.backend != nullptr) *context.backend = p->backend;
  return absl::OkStatus();
}

void BatchingScorer::Run() {
  const size_t width = inner_->row_width();
  std::vector<double> rows, scores;
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    const Steady::time_point now = Steady::now();
    for (const BatchRequest& r : policy_.TakeExpired(now)) {
      auto it = pending_.find(r.id);
      ++stats_.expired;
      Complete(*it->second, absl::DeadlineExceededError(kExpiredInQueueMessage));
      pending_.erase(it);
    }
    const std::vector<BatchRequest> batch = policy_.NextBatch(now);
    if (batch.empty()) {
      // Sleep until something may be due or a call arrives.
      arrived_ = false;
      const auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return arrived_ || stop_; };
      const std::optional<Steady::time_point> wake = policy_.NextWakeup();
      if (wake.has_value()) {
        mu_.AwaitWithTimeout(
            absl::Condition(&woken),
            absl::FromChrono(std::max(*wake - Steady::now(), Steady::duration(0))));
      } else {
        mu_.Await(absl::Condition(&woken));
      }
      continue;
    }
    std::vector<std::shared_ptr<Pending>> members;
    size_t total = 0;
    for (const BatchRequest& r : batch) {
      auto it = pending_.find(r.id);
      total += it->second->n;
      members.push_back(std::move(it->second));
      pending_.erase(it);
    }
    ++stats_.batches;
    mu_.Unlock();
    rows.clear();
    for (const auto& m : members) rows.insert(rows.end(), m->rows.begin(), m->rows.end());
    scores.assign(total, 0.0);
    if (batch_sizes_ != nullptr) batch_sizes_->Record(static_cast<double>(total));
    // The batch is as urgent as its class and must be back by its earliest member's deadline
    // (a backend router spends no longer than that on the GPU).
    ScoreBackend backend = ScoreBackend::kNone;
    ScoreContext context;
    context.priority = members.front()->priority;
    context.backend = &backend;
    Steady::time_point earliest = Steady::time_point::max();
    for (const auto& m : members) earliest = std::min(earliest, m->deadline);
    if (earliest != Steady::time_point::max()) context.deadline = earliest;
    const Steady::time_point started = Steady::now();
    const absl::Status status = inner_->Score(absl::MakeConstSpan(rows).subspan(0, total * width),
                                              total, absl::MakeSpan(scores), context);
    const Steady::duration took = Steady::now() - started;
    size_t offset = 0;
    for (const auto& m : members) {
      if (status.ok()) {
        m->scores.assign(scores.begin() + static_cast<std::ptrdiff_t>(offset),
                         scores.begin() + static_cast<std::ptrdiff_t>(offset + m->n));
        m->backend = backend;
      }
      offset += m->n;
    }
    mu_.Lock();
    RecordDuration(took);
    for (const auto& m : members) Complete(*m, status);
  }
}

BatchingScorer::Stats BatchingScorer::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace vigil
