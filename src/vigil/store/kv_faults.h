// KvFaults: a seam for fault-injection tests at the file level under a KvStore. While a fault is
// set, the store's file writes or syncs fail with an I/O error, the way a full or failing disk
// makes them fail, so that tests can check that callers stop acknowledging instead of lying
// (the audit log, the feature checkpoints). Production code never sets one.
//
//   auto faults = std::make_shared<KvFaults>();
//   options.faults = faults;                 // KvStoreOptions
//   ... KvStore::Open(options) ...
//   faults->set_fail_syncs(true);            // every fsync/fdatasync now fails
//   faults->set_hold_syncs(true);            // every sync now waits, as on a stalled disk,
//   ...                                      // until set_hold_syncs(false)
//
// After a failed sync RocksDB itself stops accepting writes (a background error) until the
// store is reopened; clearing the fault does not undo that, as with a real disk.
//
// Thread safety: safe for concurrent use.
#ifndef VIGIL_STORE_KV_FAULTS_H_
#define VIGIL_STORE_KV_FAULTS_H_

#include <atomic>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace vigil {

class KvFaults {
 public:
  void set_fail_syncs(bool fail) { fail_syncs_.store(fail, std::memory_order_relaxed); }
  void set_fail_writes(bool fail) { fail_writes_.store(fail, std::memory_order_relaxed); }
  // While held, a sync waits (before it starts) until released. Release before the store
  // closes: closing syncs too.
  void set_hold_syncs(bool hold) {
    absl::MutexLock lock(&hold_mu_);
    hold_syncs_ = hold;
  }
  // Syncs waiting now because they are held.
  uint64_t held() const {
    absl::MutexLock lock(&hold_mu_);
    return held_;
  }
  bool fail_syncs() const { return fail_syncs_.load(std::memory_order_relaxed); }
  bool fail_writes() const { return fail_writes_.load(std::memory_order_relaxed); }

  // Operations failed so far, and syncs attempted (failed or not).
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }
  uint64_t syncs() const { return syncs_.load(std::memory_order_relaxed); }

  // Called by the store's files.
  void CountFailure() { failed_.fetch_add(1, std::memory_order_relaxed); }
  void CountSync() { syncs_.fetch_add(1, std::memory_order_relaxed); }
  void WaitWhileSyncsHeld() {
    absl::MutexLock lock(&hold_mu_);
    if (!hold_syncs_) return;
    ++held_;
    hold_mu_.Await(absl::Condition(
        +[](bool* hold) { return !*hold; }, &hold_syncs_));
    --held_;
  }

 private:
  std::atomic<bool> fail_syncs_{false};
  std::atomic<bool> fail_writes_{false};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> syncs_{0};
  mutable absl::Mutex hold_mu_;
  bool hold_syncs_ ABSL_GUARDED_BY(hold_mu_) = false;
  uint64_t held_ ABSL_GUARDED_BY(hold_mu_) = 0;
};

}  // namespace vigil

#endif  // VIGIL_STORE_KV_FAULTS_H_
