// EventTimeOutliers: finds the records of a file whose event time is far ahead of their
// neighbours in the file, so that `vigil replay` reports them instead of applying them.
//
// A file is history: no wall clock bounds its event times. Replay orders the records by event
// time, so a record dated 2099 in a 2022 file cannot make the rest of that file late; but it
// would still be decided, and its event time would become the state's watermark, so that every
// later replay into the same data dir and every payment `vigil serve` then receives is "too
// late". A record is an outlier when its event time is more than max_lead ahead of the median
// event time of the `neighbours` records before it AND of the `neighbours` after it in file
// order (only one side at the file's start or end), when that side holds at least
// min_neighbours records and they are close together themselves (their median at most max_lead
// after their earliest): a short file, or a collection of messages from several years, gives no
// verdict, since no side of it says what time "around it" is. Both sides:
// where a file's records jump ahead for good (two periods concatenated, a gap of weeks), the
// first records after the jump are close to those that follow them and are not outliers; a
// single record (or a few, fewer than half the neighbours) dated far ahead of both sides is.
//
//   EventTimeOutliers outliers({.max_lead = std::chrono::hours(24 * 30)});
//   for each record: outliers.Add({time_us, line, raw}); while (outliers.Pop(&r, &outlier)) ...
//   outliers.Finish(); while (outliers.Pop(&r, &outlier)) ...
//
// Records come out in the order they went in, each with its verdict, `neighbours` records
// later than they went in (all of them after Finish).
//
// Thread safety: externally synchronized.
#ifndef VIGIL_INGEST_EVENT_TIME_OUTLIERS_H_
#define VIGIL_INGEST_EVENT_TIME_OUTLIERS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

class EventTimeOutliers {
 public:
  struct Options {
    // How far ahead of both sides' median a record may be. 0: no record is an outlier (the
    // filter only delays). Default 30 days: far beyond how unordered real exports are, far
    // below a mistyped year.
    std::chrono::microseconds max_lead = std::chrono::hours(24 * 30);
    // Records on each side whose median is compared (at least 1).
    size_t neighbours = 8;
    // Fewest records a side needs to be compared (at most `neighbours`).
    size_t min_neighbours = 4;
  };
  struct Record {
    int64_t event_time_us = 0;
    int64_t line = 0;
    std::string raw;  // the record's bytes (reused between records)
  };
  // Why a record is an outlier, for the report.
  struct Verdict {
    bool outlier = false;
    int64_t before_median_us = 0;  // of the neighbours before (valid with has_before)
    int64_t after_median_us = 0;   // of the neighbours after (valid with has_after)
    bool has_before = false, has_after = false;
  };

  EventTimeOutliers() : EventTimeOutliers(Options{}) {}
  explicit EventTimeOutliers(Options options);

  // Takes the next record of the file (its raw bytes are copied).
  void Add(int64_t event_time_us, int64_t line, std::string_view raw);
  // No more records: every record held can be popped.
  void Finish() { finished_ = true; }
  // The oldest record whose verdict is known, into *out (its buffer reused); false when none is.
  bool Pop(Record* out, Verdict* verdict);

 private:
  // Of times_[from, to): the median, and whether the side is close enough together to judge by.
  int64_t Median(size_t from, size_t to) const;
  bool Coherent(size_t from, size_t to, int64_t median) const;

  const Options options_;
  bool finished_ = false;
  // The last `neighbours` records already popped (their times only), then the held records.
  std::deque<int64_t> times_;
  size_t popped_in_window_ = 0;  // of times_, the leading ones already popped
  std::deque<Record> held_;
  std::deque<Record> spare_;  // popped records' buffers, for reuse
  mutable std::vector<int64_t> scratch_;  // Median's copy of one side
};

}  // namespace vigil

#endif  // VIGIL_INGEST_EVENT_TIME_OUTLIERS_H_
