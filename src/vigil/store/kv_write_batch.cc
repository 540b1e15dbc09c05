#include "vigil/store/kv_write_batch.h"

#include <cstring>
#include <limits>

namespace vigil {

uint32_t KvWriteBatch::FamilyIndex(absl::string_view column_family) {
  // Batches name a handful of families; a linear scan beats hashing here.
  for (size_t i = 0; i < families_.size(); ++i) {
    if (families_[i] == column_family) return static_cast<uint32_t>(i);
  }
  families_.emplace_back(column_family);
  return static_cast<uint32_t>(families_.size() - 1);
}

void KvWriteBatch::AppendField(absl::string_view field) {
  if (field.size() > std::numeric_limits<uint32_t>::max()) {
    too_large_ = true;
    field = absl::string_view();
  }
  const uint32_t size = static_cast<uint32_t>(field.size());
  rep_.append(reinterpret_cast<const char*>(&size), sizeof(size));
  rep_.append(field.data(), field.size());
}

void KvWriteBatch::Put(absl::string_view column_family, absl::string_view key,
                       absl::string_view value) {
  const uint32_t family = FamilyIndex(column_family);
  rep_.push_back(static_cast<char>(Op::kPut));
  rep_.append(reinterpret_cast<const char*>(&family), sizeof(family));
  AppendField(key);
  AppendField(value);
  ++count_;
}

void KvWriteBatch::Delete(absl::string_view column_family, absl::string_view key) {
  const uint32_t family = FamilyIndex(column_family);
  rep_.push_back(static_cast<char>(Op::kDelete));
  rep_.append(reinterpret_cast<const char*>(&family), sizeof(family));
  AppendField(key);
  ++count_;
}

void KvWriteBatch::Clear() {
  rep_.clear();
  families_.clear();
  count_ = 0;
  too_large_ = false;
}

}  // namespace vigil
