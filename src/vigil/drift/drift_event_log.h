// DriftEventLog: the append-only record of drift events (drift_event.h), numbered 1, 2, ... in
// append order. The monitor appends; readers ask for the newest events (Recent(), from memory)
// or for any range by id (Read(), from the store).
//
// Storage: column family kColumnFamily of a KvStore that may hold other state too; key = the id
// as 8 big-endian bytes (so bytewise key order is id order), value = DriftEventToJson. Without a
// store only the newest keep_recent events are kept, in memory (tools, tests, deployments that
// keep no state).
//
//   VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<DriftEventLog> log,
//                          DriftEventLog::Open(store, RealClock()));
//   VIGIL_ASSIGN_OR_RETURN(DriftEvent stored, log->Append(std::move(event)));
//
// Thread safety: safe for concurrent use. Appends are serialized (an id is assigned and written
// before the next append starts, so ids reach the store in order); Recent(), last_id() and
// appended() do not wait for an append's write.
#ifndef VIGIL_DRIFT_DRIFT_EVENT_LOG_H_
#define VIGIL_DRIFT_DRIFT_EVENT_LOG_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "vigil/common/clock.h"
#include "vigil/drift/drift_event.h"
#include "vigil/store/kv_store.h"

namespace vigil::drift {

class DriftEventLog {
 public:
  static constexpr char kColumnFamily[] = "drift_events";

  // "store" may be null: events are then kept in memory only (the newest keep_recent). With a
  // store, the column family kColumnFamily must have been opened (KvStoreOptions::
  // column_families), else kInvalidArgument; ids continue after the last one stored, and the
  // newest keep_recent stored events are loaded so that Recent() survives a restart. Open reads
  // every key of the family (to find the last id) but parses only the values it loads; one that
  // does not parse is kDataLoss naming its id.
  // "*store" (when not null) and "clock" must outlive the log.
  static absl::StatusOr<std::unique_ptr<DriftEventLog>> Open(KvStore* store, const Clock& clock,
                                                             size_t keep_recent = 1000);

  DriftEventLog(const DriftEventLog&) = delete;
  DriftEventLog& operator=(const DriftEventLog&) = delete;

  // Sets event.id to the next id and event.recorded_at to clock.Now() (whatever the caller put
  // there), writes the event with the store's default durability, keeps it among the recent
  // ones and returns it as stored. On a failed write returns the store's error (its code kept)
  // and the id is not consumed: the next append gets it.
  absl::StatusOr<DriftEvent> Append(DriftEvent event);

  // The newest "max" events kept in memory (at most keep_recent), oldest first.
  std::vector<DriftEvent> Recent(size_t max) const;

  // Events with id >= from_id, at most "max", oldest first. From the store when there is one
  // (kDataLoss naming the id when a stored value does not parse); without one, from the events
  // kept in memory, so older ones are not found.
  absl::StatusOr<std::vector<DriftEvent>> Read(uint64_t from_id, size_t max) const;

  // The id of the newest event, stored or appended; 0 when there is none.
  uint64_t last_id() const;
  // Events appended by this object (not those found in the store at Open).
  uint64_t appended() const;

 private:
  DriftEventLog(KvStore* store, const Clock& clock, size_t keep_recent)
      : store_(store), clock_(clock), keep_recent_(keep_recent) {}

  // Finds the last stored id and loads the newest keep_recent_ stored events.
  absl::Status Load();
  void Keep(DriftEvent event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::vector<DriftEvent>> ReadStore(uint64_t from_id, size_t max) const;
  std::vector<DriftEvent> ReadMemory(uint64_t from_id, size_t max) const;

  // Constant after construction.
  KvStore* const store_;  // null: memory only
  const Clock& clock_;
  const size_t keep_recent_;

  // Held by Append from choosing the id until the event is kept: the store write happens under
  // it, so ids are written in order and a failed write leaves the next id free. Readers take
  // only mu_, which Append holds just to publish the result.
  absl::Mutex append_mu_ ABSL_ACQUIRED_BEFORE(mu_);

  // State below is protected by mu_.
  mutable absl::Mutex mu_;
  std::deque<DriftEvent> recent_ ABSL_GUARDED_BY(mu_);  // oldest first, at most keep_recent_
  uint64_t last_id_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t appended_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_DRIFT_EVENT_LOG_H_
