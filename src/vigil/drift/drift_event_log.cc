#include "vigil/drift/drift_event_log.h"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "vigil/common/status_macros.h"
#include "vigil/store/kv_iterator.h"

namespace vigil::drift {
namespace {

constexpr size_t kKeyBytes = 8;

// Big-endian, so that the store's bytewise key order is id order.
std::string EncodeId(uint64_t id) {
  std::string key(kKeyBytes, '\0');
  for (size_t i = kKeyBytes; i-- > 0; id >>= 8) key[i] = static_cast<char>(id & 0xff);
  return key;
}

absl::StatusOr<uint64_t> DecodeId(const KvStore& store, absl::string_view key) {
  if (key.size() != kKeyBytes) {
    return absl::DataLossError(absl::StrCat("drift event log '", store.path(), "': a key of ",
                                            key.size(), " bytes is not an 8-byte event id"));
  }
  uint64_t id = 0;
  for (char byte : key) id = (id << 8) | static_cast<unsigned char>(byte);
  return id;
}

absl::StatusOr<DriftEvent> DecodeEvent(const KvStore& store, uint64_t id, absl::string_view value) {
  absl::StatusOr<DriftEvent> event =
      DriftEventFromJson(std::string_view(value.data(), value.size()));
  if (!event.ok()) {
    return absl::DataLossError(absl::StrCat("drift event log '", store.path(),
                                            "': stored event id ", id,
                                            " does not parse: ", event.status().message()));
  }
  if (event->id != id) {
    return absl::DataLossError(absl::StrCat("drift event log '", store.path(),
                                            "': stored event id ", id, " holds id ", event->id));
  }
  return event;
}

// "status" with "context" in front of its message; the code is kept.
absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<DriftEventLog>> DriftEventLog::Open(KvStore* store,
                                                                   const Clock& clock,
                                                                   size_t keep_recent) {
  std::unique_ptr<DriftEventLog> log(new DriftEventLog(store, clock, keep_recent));
  if (store == nullptr) return log;
  const std::vector<std::string> families = store->ColumnFamilies();
  if (std::find(families.begin(), families.end(), kColumnFamily) == families.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "drift event log: column family '", kColumnFamily, "' is not open in the store '",
        store->path(), "' (list it in KvStoreOptions::column_families)"));
  }
  VIGIL_RETURN_IF_ERROR(log->Load());
  return log;
}

absl::Status DriftEventLog::Load() {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<KvIterator> it, store_->NewIterator(kColumnFamily));
  // KvIterator only moves forward, so one scan finds the last id and keeps the newest values
  // as it goes. Drift events are rare (a few per level change), so the scan at start-up is short.
  std::deque<std::pair<uint64_t, std::string>> newest;
  uint64_t last = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    VIGIL_ASSIGN_OR_RETURN(last, DecodeId(*store_, it->key()));
    if (keep_recent_ == 0) continue;
    if (newest.size() == keep_recent_) newest.pop_front();
    newest.emplace_back(last, std::string(it->value()));
  }
  if (!it->status().ok()) return Annotate(it->status(), "drift event log: open");
  absl::MutexLock lock(&mu_);
  last_id_ = last;
  for (const auto& [id, value] : newest) {
    VIGIL_ASSIGN_OR_RETURN(DriftEvent event, DecodeEvent(*store_, id, value));
    recent_.push_back(std::move(event));
  }
  return absl::OkStatus();
}

absl::StatusOr<DriftEvent> DriftEventLog::Append(DriftEvent event) {
  absl::MutexLock append_lock(&append_mu_);
  const uint64_t last = last_id();
  if (last == std::numeric_limits<uint64_t>::max()) {
    return absl::ResourceExhaustedError("drift event log: event ids exhausted");
  }
  event.id = last + 1;
  event.recorded_at = clock_.Now();
  if (store_ != nullptr) {
    const absl::Status written =
        store_->Put(kColumnFamily, EncodeId(event.id), DriftEventToJson(event));
    if (!written.ok()) {
      return Annotate(written, absl::StrCat("drift event log: append id ", event.id));
    }
  }
  absl::MutexLock lock(&mu_);
  last_id_ = event.id;
  ++appended_;
  Keep(event);
  return event;
}

void DriftEventLog::Keep(DriftEvent event) {
  if (keep_recent_ == 0) return;
  if (recent_.size() == keep_recent_) recent_.pop_front();
  recent_.push_back(std::move(event));
}

std::vector<DriftEvent> DriftEventLog::Recent(size_t max) const {
  absl::MutexLock lock(&mu_);
  const size_t n = std::min(max, recent_.size());
  return std::vector<DriftEvent>(recent_.end() - static_cast<std::ptrdiff_t>(n), recent_.end());
}

absl::StatusOr<std::vector<DriftEvent>> DriftEventLog::Read(uint64_t from_id, size_t max) const {
  if (store_ == nullptr) return ReadMemory(from_id, max);
  return ReadStore(from_id, max);
}

absl::StatusOr<std::vector<DriftEvent>> DriftEventLog::ReadStore(uint64_t from_id,
                                                                 size_t max) const {
  std::vector<DriftEvent> events;
  if (max == 0) return events;
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<KvIterator> it, store_->NewIterator(kColumnFamily));
  for (it->Seek(EncodeId(from_id)); it->Valid() && events.size() < max; it->Next()) {
    VIGIL_ASSIGN_OR_RETURN(const uint64_t id, DecodeId(*store_, it->key()));
    VIGIL_ASSIGN_OR_RETURN(DriftEvent event, DecodeEvent(*store_, id, it->value()));
    events.push_back(std::move(event));
  }
  if (!it->status().ok()) return Annotate(it->status(), "drift event log: read");
  return events;
}

std::vector<DriftEvent> DriftEventLog::ReadMemory(uint64_t from_id, size_t max) const {
  absl::MutexLock lock(&mu_);
  auto first = std::lower_bound(recent_.begin(), recent_.end(), from_id,
                                [](const DriftEvent& e, uint64_t id) { return e.id < id; });
  const size_t n = std::min(max, static_cast<size_t>(recent_.end() - first));
  return std::vector<DriftEvent>(first, first + static_cast<std::ptrdiff_t>(n));
}

uint64_t DriftEventLog::last_id() const {
  absl::MutexLock lock(&mu_);
  return last_id_;
}

uint64_t DriftEventLog::appended() const {
  absl::MutexLock lock(&mu_);
  return appended_;
}

}  // namespace vigil::drift
