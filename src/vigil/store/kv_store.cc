#include "vigil/store/kv_store.h"

#include <algorithm>
#include <cstdint>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/checkpoint.h"
#include "rocksdb/write_batch.h"
#include "vigil/common/status_macros.h"
#include "vigil/store/internal/kv_iterator_rep.h"
#include "vigil/store/internal/rocksdb_status.h"

namespace vigil {
namespace {

using store_internal::ToAbslStatus;

rocksdb::Slice ToSlice(absl::string_view s) { return rocksdb::Slice(s.data(), s.size()); }
absl::string_view ToView(const rocksdb::Slice& s) { return absl::string_view(s.data(), s.size()); }

// The smallest key greater than every key that starts with "prefix"; empty when there is none
// (the prefix is empty or all 0xff bytes).
std::string PrefixSuccessor(absl::string_view prefix) {
  std::string s(prefix);
  while (!s.empty()) {
    const auto last = static_cast<unsigned char>(s.back());
    if (last != 0xff) {
      s.back() = static_cast<char>(last + 1);
      return s;
    }
    s.pop_back();
  }
  return s;
}

uint32_t ReadU32(const char*& p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  p += sizeof(v);
  return v;
}

rocksdb::Slice ReadField(const char*& p) {
  const uint32_t n = ReadU32(p);
  const rocksdb::Slice s(p, n);
  p += n;
  return s;
}

}  // namespace

namespace {

// Files whose appends and syncs fail while a KvFaults says so.
class FaultyFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FaultyFile(std::unique_ptr<rocksdb::FSWritableFile> file, std::shared_ptr<KvFaults> faults)
      : FSWritableFileOwnerWrapper(std::move(file)), faults_(std::move(faults)) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    if (faults_->fail_writes()) return Failed("write");
    return FSWritableFileOwnerWrapper::Append(data, options, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    if (faults_->fail_writes()) return Failed("write");
    return FSWritableFileOwnerWrapper::Append(data, options, info, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    faults_->WaitWhileSyncsHeld();
    faults_->CountSync();
    if (faults_->fail_syncs()) return Failed("sync");
    return FSWritableFileOwnerWrapper::Sync(options, dbg);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override {
    faults_->WaitWhileSyncsHeld();
    faults_->CountSync();
    if (faults_->fail_syncs()) return Failed("sync");
    return FSWritableFileOwnerWrapper::Fsync(options, dbg);
  }
  rocksdb::IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override {
    if (faults_->fail_syncs()) return Failed("sync");
    return FSWritableFileOwnerWrapper::RangeSync(offset, nbytes, options, dbg);
  }

 private:
  rocksdb::IOStatus Failed(const char* what) {
    faults_->CountFailure();
    return rocksdb::IOStatus::IOError(absl::StrCat("injected ", what, " failure (KvFaults)"));
  }

  std::shared_ptr<KvFaults> faults_;
};

class FaultyFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  explicit FaultyFileSystem(std::shared_ptr<KvFaults> faults)
      : FileSystemWrapper(rocksdb::FileSystem::Default()), faults_(std::move(faults)) {}

  const char* Name() const override { return "VigilFaultyFileSystem"; }

  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* out,
                                    rocksdb::IODebugContext* dbg) override {
    return Wrap(target()->NewWritableFile(name, options, out, dbg), out);
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& name,
                                       const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* out,
                                       rocksdb::IODebugContext* dbg) override {
    return Wrap(target()->ReopenWritableFile(name, options, out, dbg), out);
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string& name, const std::string& old_name,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSWritableFile>* out,
                                      rocksdb::IODebugContext* dbg) override {
    return Wrap(target()->ReuseWritableFile(name, old_name, options, out, dbg), out);
  }

 private:
  rocksdb::IOStatus Wrap(rocksdb::IOStatus s, std::unique_ptr<rocksdb::FSWritableFile>* out) {
    if (s.ok()) *out = std::make_unique<FaultyFile>(std::move(*out), faults_);
    return s;
  }

  std::shared_ptr<KvFaults> faults_;
};

}  // namespace

// RocksDB's own diagnostic log (DATA/LOG). Debian's RocksDB keeps its assertions, and its
// default file logger asserts on the write after a failed one: a full or failing disk would
// abort the process instead of letting the store report the error. This one writes with stdio
// and ignores write errors (the diagnostics are lost, the process is not).
class DiagnosticLog final : public rocksdb::Logger {
 public:
  explicit DiagnosticLog(const std::string& path)
      : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL), file_(std::fopen(path.c_str(), "a")) {}
  ~DiagnosticLog() override {
    if (file_ != nullptr) std::fclose(file_);
  }
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    if (file_ == nullptr) return;
    absl::MutexLock lock(&mu_);
    std::vfprintf(file_, format, ap);
    std::fputc('\n', file_);
    if (std::ferror(file_)) std::clearerr(file_);
  }
  void Flush() override {
    if (file_ == nullptr) return;
    absl::MutexLock lock(&mu_);
    std::fflush(file_);
    if (std::ferror(file_)) std::clearerr(file_);
  }

 private:
  absl::Mutex mu_;
  std::FILE* const file_;
};

struct KvStore::Impl {
  // Constant after Open.
  std::string path;
  // With KvStoreOptions::faults: the environment of the faulty files. Declared before db, so
  // destroyed after it.
  std::unique_ptr<rocksdb::Env> env;
  bool sync_writes = true;
  std::shared_ptr<rocksdb::Cache> block_cache;  // null when disabled
  std::unique_ptr<rocksdb::DB> db;
  std::vector<std::string> names;                     // open order, "default" first
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // handles[i] is names[i]; owned
  absl::flat_hash_map<std::string, rocksdb::ColumnFamilyHandle*> by_name;

  ~Impl() {
    if (db == nullptr) return;
    for (rocksdb::ColumnFamilyHandle* h : handles)
      db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    // A failed close cannot be reported from a destructor; every acknowledged write is already
    // in the log as durably as its options asked.
    db->Close().PermitUncheckedError();
  }

  absl::StatusOr<rocksdb::ColumnFamilyHandle*> Family(absl::string_view name,
                                                      absl::string_view operation) const {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("KvStore '", path, "': ", operation, ": column family '", name,
                       "' is not open (open: ", absl::StrJoin(names, ", "), ")"));
    }
    return it->second;
  }

  rocksdb::WriteOptions WriteOptionsFor(const KvWriteOptions& options) const {
    rocksdb::WriteOptions w;
    w.sync = options.sync.value_or(sync_writes);
    return w;
  }
};

KvStore::KvStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KvStore::~KvStore() = default;

absl::StatusOr<std::unique_ptr<KvStore>> KvStore::Open(const KvStoreOptions& options) {
  if (options.path.empty()) return absl::InvalidArgumentError("KvStore open: path is empty");
  const std::string& path = options.path;

  std::vector<std::string> names = {rocksdb::kDefaultColumnFamilyName};
  const auto add_name = [&names](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const std::string& name : options.column_families) {
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("KvStore '", path, "': open: column family names must be non-empty"));
    }
    add_name(name);
  }

  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->sync_writes = options.sync_writes;

  rocksdb::Options db_options;
  db_options.create_if_missing = options.create_if_missing;
  db_options.create_missing_column_families = true;
  db_options.keep_log_file_num = 5;  // RocksDB's own info logs, not the WAL
  // Every family's memtables count against one bound, so that a store with many families
  // (the audit log's, the features', drift's) does not hold 128 MiB for each.
  db_options.db_write_buffer_size = options.write_buffer_bytes;
  if (options.faults != nullptr) {
    impl->env = rocksdb::NewCompositeEnv(std::make_shared<FaultyFileSystem>(options.faults));
    db_options.env = impl->env.get();
  }
  rocksdb::BlockBasedTableOptions table_options;
  if (options.block_cache_bytes > 0) {
    impl->block_cache = rocksdb::NewLRUCache(options.block_cache_bytes);
    table_options.block_cache = impl->block_cache;
  } else {
    table_options.no_block_cache = true;
  }
  // Point lookups of absent keys (a new account's state) are common: a bloom filter answers
  // most of them without reading a data block, for about 10 bits per key.
  table_options.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  // One table factory, hence one block cache, for every column family.
  db_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table_options));

  std::error_code ec;
  const bool exists = std::filesystem::exists(std::filesystem::path(path) / "CURRENT", ec);
  if (!exists && !options.create_if_missing) {
    return absl::NotFoundError(absl::StrCat(
        "KvStore '", path, "': open: no store there (and create_if_missing is false)"));
  }
  if (exists) {
    // RocksDB refuses to open a store without naming every family it has; open them all.
    std::vector<std::string> on_disk;
    VIGIL_RETURN_IF_ERROR(
        ToAbslStatus(rocksdb::DB::ListColumnFamilies(db_options, path, &on_disk), path, "open"));
    for (const std::string& name : on_disk) add_name(name);
  }

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.reserve(names.size());
  for (const std::string& name : names) {
    descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions(db_options));
  }
  rocksdb::DB* db = nullptr;
  if (!options.follower_dir.empty()) {
    if (!exists) {
      return absl::NotFoundError(absl::StrCat("KvStore '", path, "': open: no store there"));
    }
    // A follower's diagnostics go to its own directory, never to the primary's LOG.
    db_options.info_log = std::make_shared<DiagnosticLog>(options.follower_dir + "/LOG");
    db_options.max_open_files = -1;  // RocksDB requires it of a secondary instance
    rocksdb::Status s = rocksdb::DB::OpenAsSecondary(db_options, path, options.follower_dir,
                                                     descriptors, &impl->handles, &db);
    if (!s.ok()) return ToAbslStatus(s, path, "open as a follower");
    impl->db.reset(db);
    s = db->TryCatchUpWithPrimary();
    if (!s.ok()) {
      for (rocksdb::ColumnFamilyHandle* h : impl->handles) {
        db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
      }
      impl->handles.clear();
      impl->db.reset();
      return ToAbslStatus(s, path, "catch up with the store's owner");
    }
  } else {
    // RocksDB's diagnostics go to DATA/LOG through a logger that cannot abort the process.
    std::filesystem::create_directories(path, ec);
    db_options.info_log = std::make_shared<DiagnosticLog>(path + "/LOG");
    const rocksdb::Status s =
        rocksdb::DB::Open(db_options, path, descriptors, &impl->handles, &db);
    if (!s.ok()) return ToAbslStatus(s, path, "open");
    impl->db.reset(db);
  }
  impl->names = std::move(names);
  for (size_t i = 0; i < impl->names.size(); ++i) {
    impl->by_name.emplace(impl->names[i], impl->handles[i]);
  }
  return std::unique_ptr<KvStore>(new KvStore(std::move(impl)));
}

absl::StatusOr<std::optional<std::string>> KvStore::Get(absl::string_view column_family,
                                                        absl::string_view key) const {
  VIGIL_ASSIGN_OR_RETURN(rocksdb::ColumnFamilyHandle * family, impl_->Family(column_family, "get"));
  std::string value;
  const rocksdb::Status s = impl_->db->Get(rocksdb::ReadOptions(), family, ToSlice(key), &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok()) return ToAbslStatus(s, impl_->path, "get");
  return std::optional<std::string>(std::move(value));
}

absl::Status KvStore::Put(absl::string_view column_family, absl::string_view key,
                          absl::string_view value, const KvWriteOptions& write_options) {
  VIGIL_ASSIGN_OR_RETURN(rocksdb::ColumnFamilyHandle * family, impl_->Family(column_family, "put"));
  return ToAbslStatus(
      impl_->db->Put(impl_->WriteOptionsFor(write_options), family, ToSlice(key), ToSlice(value)),
      impl_->path, "put");
}

absl::Status KvStore::Delete(absl::string_view column_family, absl::string_view key,
                             const KvWriteOptions& write_options) {
  VIGIL_ASSIGN_OR_RETURN(rocksdb::ColumnFamilyHandle * family,
                         impl_->Family(column_family, "delete"));
  return ToAbslStatus(
      impl_->db->Delete(impl_->WriteOptionsFor(write_options), family, ToSlice(key)), impl_->path,
      "delete");
}

absl::Status KvStore::Write(const KvWriteBatch& batch, const KvWriteOptions& write_options) {
  if (batch.too_large_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "KvStore '", impl_->path, "': write: a key or value in the batch is 4 GiB or larger"));
  }
  if (batch.empty()) return absl::OkStatus();
  // Resolve every family before building anything: an unknown one applies nothing.
  std::vector<rocksdb::ColumnFamilyHandle*> families(batch.families_.size());
  for (size_t i = 0; i < families.size(); ++i) {
    VIGIL_ASSIGN_OR_RETURN(families[i], impl_->Family(batch.families_[i], "write"));
  }
  rocksdb::WriteBatch wb(batch.rep_.size() + 64);
  const char* p = batch.rep_.data();
  const char* const end = p + batch.rep_.size();
  while (p < end) {
    const auto op = static_cast<KvWriteBatch::Op>(*p++);
    rocksdb::ColumnFamilyHandle* family = families[ReadU32(p)];
    const rocksdb::Slice key = ReadField(p);
    rocksdb::Status s;
    if (op == KvWriteBatch::Op::kPut) {
      s = wb.Put(family, key, ReadField(p));
    } else {
      s = wb.Delete(family, key);
    }
    if (!s.ok()) return ToAbslStatus(s, impl_->path, "write");
  }
  return ToAbslStatus(impl_->db->Write(impl_->WriteOptionsFor(write_options), &wb), impl_->path,
                      "write");
}

absl::Status KvStore::ForEach(
    absl::string_view column_family, absl::string_view prefix,
    absl::FunctionRef<absl::Status(absl::string_view key, absl::string_view value)> fn) const {
  VIGIL_ASSIGN_OR_RETURN(rocksdb::ColumnFamilyHandle * family,
                         impl_->Family(column_family, "scan"));
  rocksdb::ReadOptions read_options;
  // The upper bound lets RocksDB stop at the end of the prefix range without reading past it.
  const std::string upper = PrefixSuccessor(prefix);
  const rocksdb::Slice upper_slice(upper);
  if (!upper.empty()) read_options.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(read_options, family));
  for (it->Seek(ToSlice(prefix)); it->Valid(); it->Next()) {
    const absl::string_view key = ToView(it->key());
    if (!absl::StartsWith(key, prefix)) break;
    VIGIL_RETURN_IF_ERROR(fn(key, ToView(it->value())));
  }
  return ToAbslStatus(it->status(), impl_->path, "scan");
}

absl::StatusOr<std::unique_ptr<KvIterator>> KvStore::NewIterator(
    absl::string_view column_family) const {
  VIGIL_ASSIGN_OR_RETURN(rocksdb::ColumnFamilyHandle * family,
                         impl_->Family(column_family, "iterate"));
  auto rep = std::make_unique<KvIterator::Rep>();
  rep->it.reset(impl_->db->NewIterator(rocksdb::ReadOptions(), family));
  rep->path = impl_->path;
  return std::unique_ptr<KvIterator>(new KvIterator(std::move(rep)));
}

absl::Status KvStore::Checkpoint(const std::string& dir) const {
  const std::string operation = absl::StrCat("checkpoint into '", dir, "'");
  if (dir.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("KvStore '", impl_->path, "': checkpoint: directory is empty"));
  }
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    return absl::AlreadyExistsError(
        absl::StrCat("KvStore '", impl_->path, "': ", operation, ": the directory exists"));
  }
  rocksdb::Checkpoint* raw = nullptr;
  VIGIL_RETURN_IF_ERROR(
      ToAbslStatus(rocksdb::Checkpoint::Create(impl_->db.get(), &raw), impl_->path, operation));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  return ToAbslStatus(checkpoint->CreateCheckpoint(dir), impl_->path, operation);
}

absl::Status KvStore::Flush() {
  rocksdb::FlushOptions options;
  options.wait = true;
  return ToAbslStatus(impl_->db->Flush(options, impl_->handles), impl_->path, "flush");
}

uint64_t KvStore::MemtableBytes() const {
  uint64_t total = 0;
  for (rocksdb::ColumnFamilyHandle* h : impl_->handles) {
    uint64_t bytes = 0;
    if (impl_->db->GetIntProperty(h, rocksdb::DB::Properties::kCurSizeAllMemTables, &bytes)) {
      total += bytes;
    }
  }
  return total;
}

const std::string& KvStore::path() const { return impl_->path; }

std::vector<std::string> KvStore::ColumnFamilies() const { return impl_->names; }

}  // namespace vigil
