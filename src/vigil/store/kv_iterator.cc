#include "vigil/store/kv_iterator.h"

#include <utility>

#include "vigil/common/check.h"
#include "vigil/store/internal/kv_iterator_rep.h"
#include "vigil/store/internal/rocksdb_status.h"

namespace vigil {

KvIterator::KvIterator(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
KvIterator::~KvIterator() = default;

void KvIterator::SeekToFirst() { rep_->it->SeekToFirst(); }

void KvIterator::Seek(absl::string_view target) {
  rep_->it->Seek(rocksdb::Slice(target.data(), target.size()));
}

void KvIterator::SeekToLast() { rep_->it->SeekToLast(); }

void KvIterator::SeekForPrev(absl::string_view target) {
  rep_->it->SeekForPrev(rocksdb::Slice(target.data(), target.size()));
}

bool KvIterator::Valid() const { return rep_->it->Valid(); }

void KvIterator::Next() {
  VIGIL_DCHECK(Valid());
  rep_->it->Next();
}

absl::string_view KvIterator::key() const {
  VIGIL_DCHECK(Valid());
  const rocksdb::Slice k = rep_->it->key();
  return absl::string_view(k.data(), k.size());
}

absl::string_view KvIterator::value() const {
  VIGIL_DCHECK(Valid());
  const rocksdb::Slice v = rep_->it->value();
  return absl::string_view(v.data(), v.size());
}

absl::Status KvIterator::status() const {
  return store_internal::ToAbslStatus(rep_->it->status(), rep_->path, "iterate");
}

}  // namespace vigil
