// The RocksDB side of KvIterator, shared by kv_iterator.cc and kv_store.cc (which creates it).
//
// Thread safety: as KvIterator (externally synchronized).
#ifndef VIGIL_STORE_INTERNAL_KV_ITERATOR_REP_H_
#define VIGIL_STORE_INTERNAL_KV_ITERATOR_REP_H_

#include <memory>
#include <string>

#include "rocksdb/iterator.h"
#include "vigil/store/kv_iterator.h"

namespace vigil {

struct KvIterator::Rep {
  std::unique_ptr<rocksdb::Iterator> it;
  std::string path;  // of the store, for error messages
};

}  // namespace vigil

#endif  // VIGIL_STORE_INTERNAL_KV_ITERATOR_REP_H_
