// BatchPolicy: when the dynamic batcher sends which requests to the model, as a pure function of
// the queued requests and the time it is given. No threads, no clock, no sleeping: the batcher
// (and the tests, with made-up times) call it with "now".
//
// Per priority class (P0 urgent, P1 normal, P2 bulk) a ClassPolicy bounds the wait of the
// oldest queued request, the batch size and the queue length. Rules, in order:
//  - A request whose deadline cannot be met (deadline - now < the estimated scoring time) leaves
//    the queue as expired: the caller decides it on rules alone (degraded) instead of waiting.
//  - A class's queue is due when it holds max_batch requests, or its oldest request has waited
//    max_queue_delay and it holds min_batch, or its most urgent request's deadline leaves no more
//    slack than the scoring time, or a preempting class's arrival flushed it.
//  - Of the due classes the highest-priority one goes first; within a class, earliest deadline
//    first (ties: arrival order), up to max_batch.
//  - A queue at max_queue refuses the request (the caller answers 503 Retry-After).
//
// Thread safety: none; the batcher serializes access.
#ifndef VIGIL_BATCHING_BATCH_POLICY_H_
#define VIGIL_BATCHING_BATCH_POLICY_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "vigil/core/transaction.h"

namespace vigil {

using SteadyTime = std::chrono::steady_clock::time_point;

struct ClassPolicy {
  std::chrono::microseconds max_queue_delay{0};
  size_t min_batch = 1;
  size_t max_batch = 64;
  size_t max_queue = 4096;
  bool preempts = false;  // an arrival flushes what lower classes are forming
};

struct BatchPolicyConfig {
  std::array<ClassPolicy, 3> classes;  // indexed by Priority
  // Estimated time to score one batch: requests with less slack than this are due (or expired).
  std::chrono::microseconds scoring_time{200};
  // A call of a no-wait class that finds every queue empty may be scored on the caller's own
  // thread (BatchingScorer), when the model's recent speed says it fits the call's deadline.
  bool inline_when_idle = true;

  // Scaled to vigil's speed (a batch of 64 scores in tens of microseconds): P0 no wait, batch of
  // 1, preempts; P1 waits up to 0.5 ms; P2 up to 2 ms for batches of up to 256.
  static BatchPolicyConfig Fast();
  // No waiting: every class is due as soon as it holds a request, so a batch is what queued
  // while the previous one was scored (batches grow with the load, latency does not).
  static BatchPolicyConfig Immediate();
  // The product's compliance-grade table: P0 5 ms / min 1 / preempts, P1 50 ms / min 8 /
  // preempts, P2 200 ms / min 32 / no preemption.
  static BatchPolicyConfig ComplianceGrade();
  // Errors name the class and field: min_batch 0 or above max_batch, max_batch or max_queue 0.
  absl::Status Validate() const;
};

struct BatchRequest {
  uint64_t id = 0;
  Priority priority = Priority::kP1;
  SteadyTime arrival{};
  SteadyTime deadline{};
};

class BatchPolicy {
 public:
  // REQUIRES: config.Validate().ok().
  explicit BatchPolicy(BatchPolicyConfig config);

  // Queues "r", or returns false when its class's queue is full (nothing is queued).
  bool Enqueue(const BatchRequest& r);

  // Removes and returns the requests that can no longer be scored in time at "now".
  std::vector<BatchRequest> TakeExpired(SteadyTime now);

  // The next batch to score at "now", removed from the queues; empty when nothing is due.
  std::vector<BatchRequest> NextBatch(SteadyTime now);

  // The latest time at which NextBatch or TakeExpired may have something to do (the batcher
  // sleeps until then or until a new arrival); nullopt when every queue is empty.
  std::optional<SteadyTime> NextWakeup() const;

  size_t queued(Priority p) const { return queues_[static_cast<size_t>(p)].items.size(); }
  size_t queued() const;
  const BatchPolicyConfig& config() const { return config_; }

 private:
  struct Queue {
    std::deque<BatchRequest> items;  // in arrival order
    bool flush = false;              // a preempting arrival asked to flush it
  };
  bool Due(size_t c, SteadyTime now) const;

  BatchPolicyConfig config_;
  std::array<Queue, 3> queues_;
};

}  // namespace vigil

#endif  // VIGIL_BATCHING_BATCH_POLICY_H_
