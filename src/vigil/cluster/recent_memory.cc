#include "vigil/cluster/recent_memory.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/common/string_view.h"
#include "vigil/common/varint.h"

namespace vigil::cluster {
namespace {

std::string KeyOf(std::string_view prefix, uint64_t ordinal) {
  std::string key(prefix);
  for (int shift = 56; shift >= 0; shift -= 8) key.push_back(static_cast<char>(ordinal >> shift));
  return key;
}

}  // namespace

RecentMemory::RecentMemory(size_t capacity) : capacity_(capacity) { VIGIL_CHECK(capacity > 0); }

bool RecentMemory::Insert(std::string key, std::string value) {
  const auto [it, inserted] = entries_.try_emplace(key, std::move(value));
  if (!inserted) return false;
  order_.push_back(std::move(key));
  ++next_ordinal_;
  ForgetBeyondCapacity();
  return true;
}

void RecentMemory::ForgetBeyondCapacity() {
  while (order_.size() > capacity_) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
}

const std::string* RecentMemory::Find(std::string_view key) const {
  const auto it = entries_.find(ToAbsl(key));
  return it == entries_.end() ? nullptr : &it->second;
}

void RecentMemory::SaveInto(KvWriteBatch& batch, std::string_view column_family,
                            std::string_view prefix) {
  const uint64_t first = first_ordinal();
  const absl::string_view family = ToAbsl(column_family);
  // Saved and forgotten since: [saved_first_, min(first, saved_next_)).
  for (uint64_t o = saved_first_; o < std::min(first, saved_next_); ++o) {
    batch.Delete(family, KeyOf(prefix, o));
  }
  std::string value;
  for (uint64_t o = std::max(saved_next_, first); o < next_ordinal_; ++o) {
    const std::string& key = order_[o - first];
    value.clear();
    PutVarint(key.size(), &value);
    value.append(key);
    value.append(entries_.find(key)->second);
    batch.Put(family, KeyOf(prefix, o), value);
  }
  saved_first_ = first;
  saved_next_ = next_ordinal_;
}

absl::Status RecentMemory::Restore(const KvStore& store, std::string_view column_family,
                                   std::string_view prefix) {
  entries_.clear();
  order_.clear();
  next_ordinal_ = 0;
  bool any = false;
  uint64_t first = 0;
  const absl::Status read = store.ForEach(
      ToAbsl(column_family), ToAbsl(prefix),
      [&](absl::string_view key, absl::string_view value) -> absl::Status {
        const auto bad = [&](std::string_view why) {
          return absl::DataLossError(absl::StrCat("saved memory entry ", absl::CHexEscape(key),
                                                  " in ", ToAbsl(column_family), ": ",
                                                  ToAbsl(why)));
        };
        if (key.size() != prefix.size() + 8) return bad("its key is not prefix + 8 bytes");
        uint64_t ordinal = 0;
        for (size_t k = prefix.size(); k < key.size(); ++k) {
          ordinal = (ordinal << 8) | static_cast<uint8_t>(key[k]);
        }
        if (!any) {
          first = ordinal;
          next_ordinal_ = ordinal;
          any = true;
        }
        if (ordinal != next_ordinal_) return bad("ordinals are not contiguous");
        const std::string_view v = ToStd(value);
        size_t offset = 0;
        uint64_t length = 0;
        if (!GetVarint(v, &offset, &length) || length > v.size() - offset) {
          return bad("its key length is malformed");
        }
        std::string entry_key(v.substr(offset, length));
        if (!entries_.try_emplace(entry_key, std::string(v.substr(offset + length))).second) {
          return bad("its key is held twice");
        }
        order_.push_back(std::move(entry_key));
        ++next_ordinal_;
        return absl::OkStatus();
      });
  if (!read.ok()) {
    entries_.clear();
    order_.clear();
    next_ordinal_ = 0;
    saved_first_ = saved_next_ = 0;
    return read;
  }
  saved_first_ = first;
  saved_next_ = next_ordinal_;
  ForgetBeyondCapacity();
  return absl::OkStatus();
}

}  // namespace vigil::cluster
