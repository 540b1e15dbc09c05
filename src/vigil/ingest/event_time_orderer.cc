#include "vigil/ingest/event_time_orderer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "vigil/common/check.h"
#include "vigil/common/status_macros.h"

namespace vigil {
namespace event_order_internal {
namespace {

// I/O buffers: below 4 KiB syscalls dominate; above 1 MiB nothing is gained.
constexpr size_t kMinIoBufferBytes = size_t{4} << 10;
constexpr size_t kMaxIoBufferBytes = size_t{1} << 20;

// Spill record: event_time_us (int64), sequence (int64), payload size (uint32), payload bytes.
// Native byte order: the files never leave this process.
constexpr size_t kRecordHeaderBytes = 2 * sizeof(int64_t) + sizeof(uint32_t);

absl::Status IoError(int error_number, absl::string_view operation,
                     const std::filesystem::path& path) {
  return absl::ErrnoToStatus(error_number,
                             absl::StrCat("EventTimeOrderer: ", operation, " ", path.string()));
}

void EncodeHeader(int64_t event_time_us, int64_t sequence, uint32_t size, char* out) {
  std::memcpy(out, &event_time_us, sizeof(event_time_us));
  std::memcpy(out + 8, &sequence, sizeof(sequence));
  std::memcpy(out + 16, &size, sizeof(size));
}

// Buffered, append-only writer of one spill file.
class FileWriter {
 public:
  static absl::StatusOr<std::unique_ptr<FileWriter>> Create(std::filesystem::path path,
                                                            size_t buffer_bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return IoError(errno, "create", path);
    return std::unique_ptr<FileWriter>(new FileWriter(std::move(path), fd, buffer_bytes));
  }

  ~FileWriter() {
    if (fd_ >= 0) ::close(fd_);
  }

  absl::Status Append(const char* data, size_t size) {
    if (size > buffer_.size() - used_) VIGIL_RETURN_IF_ERROR(Flush());
    if (size >= buffer_.size()) return WriteAll(data, size);  // bypass the buffer
    std::memcpy(buffer_.data() + used_, data, size);
    used_ += size;
    return absl::OkStatus();
  }

  absl::Status AppendRecord(int64_t event_time_us, int64_t sequence, std::string_view payload) {
    char header[kRecordHeaderBytes];
    EncodeHeader(event_time_us, sequence, static_cast<uint32_t>(payload.size()), header);
    VIGIL_RETURN_IF_ERROR(Append(header, sizeof(header)));
    return Append(payload.data(), payload.size());
  }

  // Flushes and closes; close() can report a deferred write error, so it is checked.
  absl::Status Close() {
    VIGIL_RETURN_IF_ERROR(Flush());
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) return IoError(errno, "close", path_);
    return absl::OkStatus();
  }

  int64_t bytes_written() const { return bytes_written_; }

 private:
  FileWriter(std::filesystem::path path, int fd, size_t buffer_bytes)
      : path_(std::move(path)), fd_(fd), buffer_(buffer_bytes) {}

  absl::Status Flush() {
    const size_t used = std::exchange(used_, 0);
    return WriteAll(buffer_.data(), used);
  }

  absl::Status WriteAll(const char* data, size_t size) {
    while (size > 0) {
      const ssize_t n = ::write(fd_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return IoError(errno, "write", path_);
      if (n == 0) return IoError(ENOSPC, "write", path_);
      data += n;
      size -= static_cast<size_t>(n);
      bytes_written_ += n;
    }
    return absl::OkStatus();
  }

  const std::filesystem::path path_;
  int fd_;
  std::vector<char> buffer_;
  size_t used_ = 0;
  int64_t bytes_written_ = 0;
};

// Buffered sequential reader of one spill file.
class FileReader {
 public:
  static absl::StatusOr<std::unique_ptr<FileReader>> Open(std::filesystem::path path,
                                                          size_t buffer_bytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return IoError(errno, "open", path);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // a hint: failure is harmless
    return std::unique_ptr<FileReader>(new FileReader(std::move(path), fd, buffer_bytes));
  }

  ~FileReader() { ::close(fd_); }

  // Reads exactly "size" bytes; a file that ends first is kDataLoss.
  absl::Status Read(char* out, size_t size) {
    while (size > 0) {
      if (pos_ == end_) {
        if (size >= buffer_.size()) return ReadDirect(out, size);  // bypass the buffer
        VIGIL_RETURN_IF_ERROR(Refill());
      }
      const size_t n = std::min(size, end_ - pos_);
      std::memcpy(out, buffer_.data() + pos_, n);
      pos_ += n;
      out += n;
      size -= n;
    }
    return absl::OkStatus();
  }

  const std::filesystem::path& path() const { return path_; }

 private:
  FileReader(std::filesystem::path path, int fd, size_t buffer_bytes)
      : path_(std::move(path)), fd_(fd), buffer_(buffer_bytes) {}

  absl::Status Refill() {
    pos_ = 0;
    end_ = 0;
    VIGIL_ASSIGN_OR_RETURN(end_, ReadSome(buffer_.data(), buffer_.size()));
    return absl::OkStatus();
  }

  absl::Status ReadDirect(char* out, size_t size) {
    while (size > 0) {
      VIGIL_ASSIGN_OR_RETURN(size_t n, ReadSome(out, size));
      out += n;
      size -= n;
    }
    return absl::OkStatus();
  }

  // Reads 1 to "size" bytes.
  absl::StatusOr<size_t> ReadSome(char* out, size_t size) {
    while (true) {
      const ssize_t n = ::read(fd_, out, size);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return IoError(errno, "read", path_);
      if (n == 0) {
        return absl::DataLossError(absl::StrCat("EventTimeOrderer: read ", path_.string(),
                                                ": spill file ends early (truncated?)"));
      }
      return static_cast<size_t>(n);
    }
  }

  const std::filesystem::path path_;
  const int fd_;
  std::vector<char> buffer_;
  size_t pos_ = 0;
  size_t end_ = 0;
};

}  // namespace

// Payload storage for the in-memory batch: payloads are copied back to back into large blocks,
// so a batch costs a few allocations, not one per record. Reset() keeps the blocks for the next
// batch.
class Arena {
 public:
  explicit Arena(size_t block_bytes) : block_bytes_(block_bytes) {}

  // Copies "bytes" and returns where the copy lives (valid until Reset() or Release()).
  const char* Copy(std::string_view bytes) {
    if (bytes.empty()) return "";
    char* dst;
    if (IsLarge(bytes.size())) {
      large_.push_back(std::make_unique_for_overwrite<char[]>(bytes.size()));
      large_bytes_ += bytes.size();
      dst = large_.back().get();
    } else {
      if (used_blocks_ == 0 || offset_ + bytes.size() > block_bytes_) {
        if (used_blocks_ == blocks_.size()) {
          blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_bytes_));
        }
        ++used_blocks_;
        offset_ = 0;
      }
      dst = blocks_[used_blocks_ - 1].get() + offset_;
      offset_ += bytes.size();
    }
    std::memcpy(dst, bytes.data(), bytes.size());
    return dst;
  }

  // Bytes the arena holds after Copy() of "size" more bytes.
  size_t AllocatedAfter(size_t size) const {
    size_t total = allocated_bytes();
    if (size == 0) return total;
    if (IsLarge(size)) return total + size;
    const bool fits = used_blocks_ > 0 && offset_ + size <= block_bytes_;
    if (!fits && used_blocks_ == blocks_.size()) total += block_bytes_;
    return total;
  }

  size_t allocated_bytes() const { return blocks_.size() * block_bytes_ + large_bytes_; }

  void Reset() {
    used_blocks_ = 0;
    offset_ = 0;
    large_.clear();
    large_bytes_ = 0;
  }

  void Release() {
    Reset();
    blocks_.clear();
    blocks_.shrink_to_fit();
  }

 private:
  // A payload over a quarter block gets a block of its own, so block tails waste little.
  bool IsLarge(size_t size) const { return size > block_bytes_ / 4; }

  const size_t block_bytes_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t used_blocks_ = 0;  // blocks_[used_blocks_ - 1] is being filled
  size_t offset_ = 0;       // bytes used in that block
  std::vector<std::unique_ptr<char[]>> large_;
  size_t large_bytes_ = 0;
};

// k-way merge of sorted runs: a min-heap on (event_time_us, sequence) of the runs' current
// records. Each exhausted run file is deleted at once, so disk use shrinks as the merge proceeds.
class RunMerger {
 public:
  struct Input {
    std::unique_ptr<FileReader> reader;
    int64_t remaining = 0;  // records not read yet
  };

  explicit RunMerger(std::vector<Input> inputs) {
    cursors_.reserve(inputs.size());
    for (Input& input : inputs) {
      cursors_.push_back(Cursor{std::move(input.reader), input.remaining, {}});
    }
  }

  ~RunMerger() {
    for (Cursor& cursor : cursors_) {
      if (cursor.reader != nullptr) DeleteInput(cursor);
    }
  }

  // Reads the first record of every run. Call once, before Next().
  absl::Status Start() {
    for (size_t i = 0; i < cursors_.size(); ++i) {
      VIGIL_ASSIGN_OR_RETURN(bool has_record, Advance(cursors_[i]));
      if (has_record) heap_.push_back(i);
    }
    std::make_heap(heap_.begin(), heap_.end(), [this](size_t a, size_t b) { return Less(b, a); });
    return absl::OkStatus();
  }

  absl::StatusOr<bool> Next(EventTimeOrderer::Record* out) {
    if (heap_.empty()) return false;
    Cursor& top = cursors_[heap_.front()];
    out->event_time_us = top.record.event_time_us;
    out->sequence = top.record.sequence;
    out->payload.swap(top.record.payload);  // no copy; the buffers trade places
    VIGIL_ASSIGN_OR_RETURN(bool has_record, Advance(top));
    if (!has_record) {
      heap_.front() = heap_.back();
      heap_.pop_back();
    }
    SiftDown();
    return true;
  }

 private:
  struct Cursor {
    std::unique_ptr<FileReader> reader;  // null once the run is exhausted and deleted
    int64_t remaining;
    EventTimeOrderer::Record record;  // the run's current record
  };

  bool Less(size_t a, size_t b) const {
    const EventTimeOrderer::Record& x = cursors_[a].record;
    const EventTimeOrderer::Record& y = cursors_[b].record;
    return std::tie(x.event_time_us, x.sequence) < std::tie(y.event_time_us, y.sequence);
  }

  // Restores the heap after its root changed (one root-to-leaf walk, no pop + push).
  void SiftDown() {
    const size_t n = heap_.size();
    size_t i = 0;
    while (true) {
      const size_t left = 2 * i + 1;
      if (left >= n) return;
      size_t least = left;
      if (left + 1 < n && Less(heap_[left + 1], heap_[left])) least = left + 1;
      if (!Less(heap_[least], heap_[i])) return;
      std::swap(heap_[i], heap_[least]);
      i = least;
    }
  }

  absl::StatusOr<bool> Advance(Cursor& cursor) {
    if (cursor.remaining == 0) {
      DeleteInput(cursor);
      return false;
    }
    --cursor.remaining;
    char header[kRecordHeaderBytes];
    VIGIL_RETURN_IF_ERROR(cursor.reader->Read(header, sizeof(header)));
    uint32_t size;
    std::memcpy(&cursor.record.event_time_us, header, 8);
    std::memcpy(&cursor.record.sequence, header + 8, 8);
    std::memcpy(&size, header + 16, sizeof(size));
    cursor.record.payload.resize(size);
    VIGIL_RETURN_IF_ERROR(cursor.reader->Read(cursor.record.payload.data(), size));
    return true;
  }

  static void DeleteInput(Cursor& cursor) {
    const std::filesystem::path path = cursor.reader->path();
    cursor.reader.reset();
    std::error_code ignored;  // the spill directory is removed as a whole later anyway
    std::filesystem::remove(path, ignored);
  }

  std::vector<Cursor> cursors_;
  std::vector<size_t> heap_;  // indices into cursors_; heap_[0] holds the least record
};

}  // namespace event_order_internal

using event_order_internal::Arena;
using event_order_internal::FileReader;
using event_order_internal::FileWriter;
using event_order_internal::IoError;
using event_order_internal::RunMerger;

namespace {

// How many records ahead Next() prefetches payloads, in memory; about one DRAM latency of work.
constexpr size_t kPrefetchDistance = 8;

size_t ClampIoBuffer(size_t bytes) {
  return std::clamp(bytes, event_order_internal::kMinIoBufferBytes,
                    event_order_internal::kMaxIoBufferBytes);
}

}  // namespace

EventTimeOrderer::EventTimeOrderer() : EventTimeOrderer(Options()) {}

EventTimeOrderer::EventTimeOrderer(Options options)
    : options_(std::move(options)),
      // Blocks of 1/16 of the budget (4 KiB to 1 MiB): few allocations, bounded tail waste.
      arena_(std::make_unique<Arena>(ClampIoBuffer(options_.memory_budget_bytes / 16))) {}

EventTimeOrderer::~EventTimeOrderer() { RemoveSpillDir(); }

absl::Status EventTimeOrderer::Add(int64_t event_time_us, int64_t sequence,
                                   std::string_view payload) {
  VIGIL_RETURN_IF_ERROR(status_);
  if (finished_) return absl::FailedPreconditionError("EventTimeOrderer: Add() after Finish()");
  if (has_last_sequence_ && sequence <= last_sequence_) {
    return absl::InvalidArgumentError(absl::StrCat("EventTimeOrderer: sequence ", sequence,
                                                   " is not greater than the previous one, ",
                                                   last_sequence_));
  }
  if (payload.size() > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("EventTimeOrderer: payload of ", payload.size(), " bytes exceeds 4 GiB - 1"));
  }
  if (!entries_.empty() && !BatchFits(payload.size())) VIGIL_RETURN_IF_ERROR(SpillBatch());
  if (entries_.size() == entries_.capacity()) {
    entries_.reserve(std::max<size_t>(16, 2 * entries_.capacity()));
  }
  entries_.push_back(
      Entry{event_time_us, sequence, arena_->Copy(payload), static_cast<uint32_t>(payload.size())});
  has_last_sequence_ = true;
  last_sequence_ = sequence;
  ++stats_.records;
  return absl::OkStatus();
}

// The batch is charged for what it has allocated: arena blocks and the entry vector's capacity.
// When the vector must grow, the old and the new array coexist while entries move, so both count.
bool EventTimeOrderer::BatchFits(size_t payload_size) const {
  size_t entry_slots = entries_.capacity();
  if (entries_.size() == entry_slots) entry_slots += std::max<size_t>(16, 2 * entry_slots);
  return arena_->AllocatedAfter(payload_size) + entry_slots * sizeof(Entry) <=
         options_.memory_budget_bytes;
}

// Sorting on (event_time_us, sequence), a key unique per record, gives exactly the order of a
// stable sort by event time (entries are appended in sequence order), but in place: GCC 12's
// std::stable_sort wants a scratch buffer as large as the batch, which would halve what fits.
void EventTimeOrderer::SortBatch() {
  const auto less = [](const Entry& a, const Entry& b) {
    return std::tie(a.event_time_us, a.sequence) < std::tie(b.event_time_us, b.sequence);
  };
  // Replay files are mostly in order already: one linear check often saves the sort.
  if (!std::is_sorted(entries_.begin(), entries_.end(), less)) {
    std::sort(entries_.begin(), entries_.end(), less);
  }
}

absl::Status EventTimeOrderer::SpillBatch() {
  VIGIL_RETURN_IF_ERROR(EnsureSpillDir());
  SortBatch();
  Run run{NextRunPath(), static_cast<int64_t>(entries_.size())};
  absl::StatusOr<std::unique_ptr<FileWriter>> writer =
      FileWriter::Create(run.path, ClampIoBuffer(options_.memory_budget_bytes / 16));
  if (!writer.ok()) return Fail(writer.status());
  for (const Entry& entry : entries_) {
    absl::Status status = (*writer)->AppendRecord(entry.event_time_us, entry.sequence,
                                                  std::string_view(entry.data, entry.size));
    if (!status.ok()) return Fail(std::move(status));
  }
  if (absl::Status status = (*writer)->Close(); !status.ok()) return Fail(std::move(status));
  stats_.bytes_spilled += (*writer)->bytes_written();
  ++stats_.runs_spilled;
  runs_.push_back(std::move(run));
  entries_.clear();  // keeps capacity and arena blocks for the next batch
  arena_->Reset();
  return absl::OkStatus();
}

absl::Status EventTimeOrderer::EnsureSpillDir() {
  if (!spill_dir_.empty()) return absl::OkStatus();
  std::filesystem::path base = options_.temp_dir;
  if (base.empty()) {
    std::error_code error;
    base = std::filesystem::temp_directory_path(error);
    if (error) {
      return Fail(absl::FailedPreconditionError(absl::StrCat(
          "EventTimeOrderer: no temporary directory (set TMPDIR or Options::temp_dir): ",
          error.message())));
    }
  }
  std::string pattern = (base / "vigil-order-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Fail(IoError(errno, "create spill directory", pattern));
  }
  spill_dir_ = pattern;
  return absl::OkStatus();
}

std::filesystem::path EventTimeOrderer::NextRunPath() {
  char name[32];
  std::snprintf(name, sizeof(name), "run-%06lld", static_cast<long long>(next_run_id_++));
  return spill_dir_ / name;
}

absl::Status EventTimeOrderer::Finish() {
  VIGIL_RETURN_IF_ERROR(status_);
  if (finished_) return absl::FailedPreconditionError("EventTimeOrderer: Finish() called twice");
  finished_ = true;
  if (runs_.empty()) {
    SortBatch();
    return absl::OkStatus();
  }
  if (!entries_.empty()) VIGIL_RETURN_IF_ERROR(SpillBatch());
  // The batch memory now goes to the merge's read buffers.
  entries_ = std::vector<Entry>();
  arena_->Release();
  const size_t fan_in = static_cast<size_t>(std::max(2, options_.max_merge_fan_in));
  while (runs_.size() > fan_in) VIGIL_RETURN_IF_ERROR(MergeOnePass());
  absl::StatusOr<std::unique_ptr<RunMerger>> merger = OpenMerger(std::exchange(runs_, {}));
  if (!merger.ok()) return Fail(merger.status());
  merger_ = *std::move(merger);
  return absl::OkStatus();
}

// Merges the oldest max_merge_fan_in runs into one new run at the back of runs_; repeated, this
// merges runs of similar sizes, so every record is rewritten about log_fan_in(runs) times.
absl::Status EventTimeOrderer::MergeOnePass() {
  const size_t fan_in = static_cast<size_t>(std::max(2, options_.max_merge_fan_in));
  std::vector<Run> inputs(std::make_move_iterator(runs_.begin()),
                          std::make_move_iterator(runs_.begin() + fan_in));
  runs_.erase(runs_.begin(), runs_.begin() + fan_in);
  Run merged;
  for (const Run& run : inputs) merged.records += run.records;
  merged.path = NextRunPath();

  absl::StatusOr<std::unique_ptr<RunMerger>> merger = OpenMerger(std::move(inputs));
  if (!merger.ok()) return Fail(merger.status());
  absl::StatusOr<std::unique_ptr<FileWriter>> writer =
      FileWriter::Create(merged.path, MergeBufferBytes(fan_in));
  if (!writer.ok()) return Fail(writer.status());
  Record record;
  while (true) {
    absl::StatusOr<bool> more = (*merger)->Next(&record);
    if (!more.ok()) return Fail(more.status());
    if (!*more) break;
    absl::Status status =
        (*writer)->AppendRecord(record.event_time_us, record.sequence, record.payload);
    if (!status.ok()) return Fail(std::move(status));
  }
  if (absl::Status status = (*writer)->Close(); !status.ok()) return Fail(std::move(status));
  stats_.bytes_spilled += (*writer)->bytes_written();
  ++stats_.merge_passes;
  runs_.push_back(std::move(merged));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RunMerger>> EventTimeOrderer::OpenMerger(std::vector<Run> runs) {
  const size_t buffer_bytes = MergeBufferBytes(runs.size());
  std::vector<RunMerger::Input> inputs;
  inputs.reserve(runs.size());
  for (Run& run : runs) {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<FileReader> reader,
                           FileReader::Open(std::move(run.path), buffer_bytes));
    inputs.push_back(RunMerger::Input{std::move(reader), run.records});
  }
  auto merger = std::make_unique<RunMerger>(std::move(inputs));
  VIGIL_RETURN_IF_ERROR(merger->Start());
  return merger;
}

// The budget is shared by the fan_in read buffers and one write buffer (intermediate passes).
size_t EventTimeOrderer::MergeBufferBytes(size_t fan_in) const {
  return ClampIoBuffer(options_.memory_budget_bytes / (fan_in + 1));
}

absl::StatusOr<bool> EventTimeOrderer::Next(Record* out) {
  VIGIL_RETURN_IF_ERROR(status_);
  if (!finished_) return absl::FailedPreconditionError("EventTimeOrderer: Next() before Finish()");
  if (merger_ == nullptr) {  // ordered in memory, or the merge is over (entries_ is empty then)
    if (next_entry_ == entries_.size()) return false;
    // Sorted entries point all over the arena: fetching the payload a few records ahead hides
    // part of the cache misses of this gather.
    if (next_entry_ + kPrefetchDistance < entries_.size()) {
      const Entry& ahead = entries_[next_entry_ + kPrefetchDistance];
      __builtin_prefetch(ahead.data);
      if (ahead.size > 64) __builtin_prefetch(ahead.data + ahead.size - 1);  // next cache line
    }
    const Entry& entry = entries_[next_entry_++];
    out->event_time_us = entry.event_time_us;
    out->sequence = entry.sequence;
    out->payload.assign(entry.data, entry.size);
    return true;
  }
  absl::StatusOr<bool> more = merger_->Next(out);
  if (!more.ok()) return Fail(more.status());
  if (!*more) RemoveSpillDir();  // done: give the disk space back now
  return more;
}

absl::Status EventTimeOrderer::Fail(absl::Status status) {
  VIGIL_DCHECK(!status.ok());
  status_ = status;
  RemoveSpillDir();
  return status;
}

void EventTimeOrderer::RemoveSpillDir() {
  merger_.reset();  // closes the open run files
  if (spill_dir_.empty()) return;
  std::error_code ignored;  // best effort: nothing useful to do if removal fails
  std::filesystem::remove_all(spill_dir_, ignored);
  spill_dir_.clear();
}

}  // namespace vigil
