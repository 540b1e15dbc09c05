// DriftTap: feeds a DriftMonitor from the decision path without putting the monitor's work on
// it. The caller copies its rows into a bounded queue (a memcpy); one background thread
// observes them in order.
//
// When the queue is full the tap either waits for room (kBlock: replay, where losing rows would
// make the drift seen depend on timing) or drops the rows and counts them (kDrop: serving,
// where a decision must never wait on monitoring). Either way memory stays bounded. The thread
// takes rows in batches (256, or whatever waited 50 ms), so single-row offers do not wake it
// one by one.
//
// Thread safety: Offer may be called from several threads (rows are observed in the order the
// offers took the queue's lock); Drain and the destructor from any one thread.
#ifndef VIGIL_DRIFT_DRIFT_TAP_H_
#define VIGIL_DRIFT_DRIFT_TAP_H_

#include <cstdint>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "vigil/common/clock.h"
#include "vigil/drift/drift_monitor.h"

namespace vigil::drift {

class DriftTap {
 public:
  enum class WhenFull { kBlock, kDrop };

  // "monitor" must outlive the tap. "capacity_rows" >= 1 bounds the rows queued. The thread
  // wakes when "wake_rows" rows wait (or 50 ms after the first): a bulk feeder such as replay
  // sets it high, so that the two threads hand over large batches and rarely signal each other.
  // The thread runs at a lower scheduling priority (nice +10) than its feeders: where cores are
  // short, decisions come first and the monitor takes what is left (kDrop: it drops rows, and
  // counts them; kBlock: the feeder waits for it only when the queue is full).
  DriftTap(DriftMonitor* monitor, size_t capacity_rows, WhenFull when_full,
           size_t wake_rows = 256);
  // Observes what is queued, then stops the thread.
  ~DriftTap();
  DriftTap(const DriftTap&) = delete;
  DriftTap& operator=(const DriftTap&) = delete;

  // Queues n = times.size() rows (features: n × monitor width, scores: n, NaN when not
  // scored; sources: n, or empty when unknown). Returns false when the rows were dropped (kDrop
  // and no room). A batch larger than the capacity is split.
  bool Offer(absl::Span<const UtcTime> times, absl::Span<const double> features,
             absl::Span<const double> scores, absl::Span<const RowSource> sources = {});

  // Rows in the caller's buffers, taken instead of copied.
  struct Rows {
    std::vector<UtcTime> times;
    std::vector<double> features;  // times.size() × monitor width
    std::vector<double> scores;    // times.size()
    std::vector<RowSource> sources;  // times.size(), or empty: unknown (source_ledger.h)
  };
  // Empty buffers, with the capacity of rows already observed when there are such: the tap
  // keeps observed buffers up to a wake batch's worth of rows, so a feeder that fills these
  // and offers them allocates little in steady state, and its buffers are seldom freed on the
  // tap's thread.
  Rows Spare();
  // The same as the copying Offer, taking the buffers (sizes as above; no split: a batch beyond
  // the capacity waits, or is dropped, whole).
  bool Offer(Rows&& rows);

  // Waits until every row offered so far has been observed.
  void Drain();

  uint64_t dropped() const;
  // Time Offer spent waiting for room (kBlock): how much the feeder was held back.
  double blocked_seconds() const;
  // CPU time the tap's thread spent observing rows: the monitor's own cost, whether or not
  // anyone waited for it.
  double monitor_cpu_seconds() const;
  uint64_t observed() const;
  // The first error the monitor returned (an event it could not store), OK if none.
  absl::Status status() const;

 private:
  void Run();
  bool Enqueue(Rows rows);

  DriftMonitor* const monitor_;
  const size_t capacity_;
  const WhenFull when_full_;
  const size_t wake_rows_;
  mutable absl::Mutex mu_;
  std::deque<Rows> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<Rows> spare_ ABSL_GUARDED_BY(mu_);
  size_t spare_rows_ ABSL_GUARDED_BY(mu_) = 0;  // their capacity, in rows
  size_t queued_rows_ ABSL_GUARDED_BY(mu_) = 0;
  size_t in_flight_rows_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int draining_ ABSL_GUARDED_BY(mu_) = 0;  // Drain calls waiting
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t observed_ ABSL_GUARDED_BY(mu_) = 0;
  double blocked_seconds_ ABSL_GUARDED_BY(mu_) = 0;
  double monitor_cpu_seconds_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_DRIFT_TAP_H_
