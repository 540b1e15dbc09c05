// EventTimeOrderer: puts a stream of opaque records into event-time order, also when the stream
// does not fit in memory (an external merge sort).
//
// `vigil replay` must process a file's records in event-time order, so that windows and velocity
// features see what production would have seen; files are only roughly in that order and may be
// larger than memory. The orderer knows a record only as (event time, sequence, opaque bytes):
//
//   EventTimeOrderer orderer({.memory_budget_bytes = size_t{64} << 20});
//   for (int64_t line_no = 0; ...; ++line_no) {
//     VIGIL_RETURN_IF_ERROR(orderer.Add(EventTimeOf(line), line_no, line));
//   }
//   VIGIL_RETURN_IF_ERROR(orderer.Finish());
//   EventTimeOrderer::Record record;  // reused: its payload buffer is recycled
//   while (true) {
//     VIGIL_ASSIGN_OR_RETURN(bool more, orderer.Next(&record));
//     if (!more) break;
//     Process(record.payload);
//   }
//
// Order: ascending event time; records with equal event times come out in the order they were
// added. That is the order of a stable sort by event time (and, as sequences strictly increase,
// the order of (event_time_us, sequence)).
//
// How: Add() appends a 32-byte entry per record and copies the payload into an arena of large
// blocks. When the next record would take the batch past memory_budget_bytes, the batch is sorted
// and written to a temporary file as a sorted run (buffered, length-prefixed binary records).
// Finish() sorts the last batch. If nothing was spilled, Next() walks the sorted batch; otherwise
// Finish() spills the last batch too and Next() merges all runs with a min-heap, reading each run
// through a bounded buffer. With more runs than max_merge_fan_in, groups of runs are first merged
// into larger runs (extra passes over the data).
//
// Temporary files: a private directory <temp_dir>/vigil-order-XXXXXX, created at the first spill.
// Each run file is deleted once it has been merged; the directory goes when the output is
// exhausted, on the first error, and on destruction. A process killed mid-sort leaves it behind.
//
// Errors: I/O failures (disk full, unwritable temp_dir, a truncated spill file) come back as
// absl::Status values naming the operation and the path. After the first I/O error the orderer is
// failed: its temporary files are removed and every later call returns that error.
//
// Thread safety: externally synchronized (one thread at a time, typically the replay reader).
#ifndef VIGIL_INGEST_EVENT_TIME_ORDERER_H_
#define VIGIL_INGEST_EVENT_TIME_ORDERER_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace vigil {

namespace event_order_internal {
class Arena;
class RunMerger;
}  // namespace event_order_internal

class EventTimeOrderer {
 public:
  struct Options {
    // Memory the orderer may use for records: payload bytes (arena blocks) plus 32 bytes per
    // record, and, while merging, the read buffers of the runs. Default 256 MiB.
    // Larger: more inputs are ordered with no disk I/O at all, and a spilled input makes fewer,
    // longer runs (larger read buffers, fewer merge passes). Smaller: less RAM, but each spill
    // writes every record once and reads it back once (plus once more per extra merge pass).
    // With 100-byte payloads the default holds about 2M records in memory.
    // Peak use is this budget plus one I/O buffer (at most 1 MiB) and, while merging, one record
    // per run; read buffers are never below 4 KiB, however small the budget. A record larger than
    // the whole budget is still accepted (it forms a run of its own).
    size_t memory_budget_bytes = size_t{256} << 20;

    // Where spill files go; empty means std::filesystem::temp_directory_path() ($TMPDIR, else
    // /tmp). Needs free space for about the whole input (twice during an extra merge pass).
    // Nothing is created there unless the input exceeds memory_budget_bytes.
    std::filesystem::path temp_dir;

    // Most runs merged at once (each is an open file with its read buffer). Beyond this, runs are
    // merged in passes. Values below 2 count as 2.
    int max_merge_fan_in = 128;
  };

  struct Record {
    int64_t event_time_us = 0;
    int64_t sequence = 0;
    // Reusing one Record across Next() calls reuses this buffer's capacity.
    std::string payload;
  };

  struct Stats {
    int64_t records = 0;        // records added
    int64_t runs_spilled = 0;   // sorted runs written from memory; 0 when ordered in memory
    int64_t merge_passes = 0;   // intermediate merges of max_merge_fan_in runs into one
    int64_t bytes_spilled = 0;  // bytes written to temporary files, all passes included
  };

  EventTimeOrderer();
  explicit EventTimeOrderer(Options options);
  // Closes and removes every temporary file.
  ~EventTimeOrderer();

  EventTimeOrderer(const EventTimeOrderer&) = delete;
  EventTimeOrderer& operator=(const EventTimeOrderer&) = delete;

  // Adds one record; copies "payload" (any bytes, NULs included, at most 4 GiB - 1).
  // REQUIRES: Finish() not called yet (else kFailedPrecondition).
  // "sequence" must be greater than that of the previous Add() (else kInvalidArgument; the
  // record is not added and the orderer stays usable). May spill to disk: I/O errors fail it.
  absl::Status Add(int64_t event_time_us, int64_t sequence, std::string_view payload);

  // Ends input: sorts the last batch, and, if the input was spilled, writes it too and prepares
  // the merge. REQUIRES: called once (a second call returns kFailedPrecondition).
  absl::Status Finish();

  // Stores the next record in event-time order into "*out" and returns true; returns false once
  // every record has been returned (and on every later call).
  // REQUIRES: Finish() returned OK (else kFailedPrecondition).
  absl::StatusOr<bool> Next(Record* out);

  const Stats& stats() const { return stats_; }

 private:
  // One record of the in-memory batch; the payload lives in arena_.
  struct Entry {
    int64_t event_time_us;
    int64_t sequence;
    const char* data;
    uint32_t size;
  };
  // A sorted run on disk.
  struct Run {
    std::filesystem::path path;
    int64_t records = 0;
  };

  bool BatchFits(size_t payload_size) const;
  void SortBatch();
  absl::Status SpillBatch();
  absl::Status EnsureSpillDir();
  std::filesystem::path NextRunPath();
  absl::Status MergeOnePass();
  absl::StatusOr<std::unique_ptr<event_order_internal::RunMerger>> OpenMerger(
      std::vector<Run> runs);
  // Records "status" as the orderer's failure and removes the temporary files; returns it.
  absl::Status Fail(absl::Status status);
  void RemoveSpillDir();
  size_t MergeBufferBytes(size_t fan_in) const;

  // Constant after construction.
  const Options options_;

  absl::Status status_;  // first I/O error; every call returns it once set
  bool finished_ = false;
  bool has_last_sequence_ = false;
  int64_t last_sequence_ = 0;
  Stats stats_;

  // The in-memory batch; after Finish() without spills, the sorted output.
  std::vector<Entry> entries_;
  std::unique_ptr<event_order_internal::Arena> arena_;
  size_t next_entry_ = 0;  // next entry Next() returns (in-memory case)

  // Spilling: empty until the first spill.
  std::filesystem::path spill_dir_;
  int64_t next_run_id_ = 0;
  std::vector<Run> runs_;                                    // runs not merged yet, oldest first
  std::unique_ptr<event_order_internal::RunMerger> merger_;  // set by Finish() after a spill
};

}  // namespace vigil

#endif  // VIGIL_INGEST_EVENT_TIME_ORDERER_H_
