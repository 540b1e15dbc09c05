// KvIterator: an ordered scan over one column family of a KvStore.
//
// Keys are visited in bytewise order. The iterator reads a consistent point-in-time view: writes
// made after KvStore::NewIterator returned are not seen, while the view is held (which pins
// memory and files: don't keep an iterator open for long).
//
//   VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<KvIterator> it, store.NewIterator("audit"));
//   for (it->Seek(from); it->Valid(); it->Next()) Use(it->key(), it->value());
//   VIGIL_RETURN_IF_ERROR(it->status());
//
// Thread safety: externally synchronized. The KvStore must outlive the iterator.
#ifndef VIGIL_STORE_KV_ITERATOR_H_
#define VIGIL_STORE_KV_ITERATOR_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace vigil {

class KvIterator {
 public:
  ~KvIterator();
  KvIterator(const KvIterator&) = delete;
  KvIterator& operator=(const KvIterator&) = delete;

  // Positions at the first key, or at the first key >= "target".
  void SeekToFirst();
  void Seek(absl::string_view target);
  // Positions at the last key (the newest entry of a log keyed in append order).
  void SeekToLast();
  // Positions at the last key <= "target" (the entry whose range holds "target", in a family
  // keyed by the first position each entry covers).
  void SeekForPrev(absl::string_view target);
  // True while positioned at an entry; false past the end or after an error (see status()).
  bool Valid() const;
  // REQUIRES: Valid().
  void Next();
  // REQUIRES: Valid(). The views stay valid until the next Seek/Next or the iterator's end.
  absl::string_view key() const;
  absl::string_view value() const;
  // OK unless the scan failed (I/O error, corruption); check it when Valid() turns false.
  absl::Status status() const;

 private:
  friend class KvStore;
  struct Rep;
  explicit KvIterator(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

}  // namespace vigil

#endif  // VIGIL_STORE_KV_ITERATOR_H_
