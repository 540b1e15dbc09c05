#include "vigil/features/feature_store.h"

#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/crypto/pseudonym.h"
#include "vigil/store/kv_store.h"

namespace vigil {
namespace {

constexpr char kAccounts[] = "accounts";
constexpr char kMeta[] = "meta";
constexpr char kCursorPrefix[] = "cursor/";
constexpr std::string_view kPlainAccountKeys = "plain";

std::string AccountNumberKey(uint32_t account) {
  const char bytes[4] = {static_cast<char>(account >> 24), static_cast<char>(account >> 16),
                         static_cast<char>(account >> 8), static_cast<char>(account)};
  return std::string(bytes, 4);
}

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint(absl::string_view* in, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && !in->empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>((*in)[0]);
    in->remove_prefix(1);
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace

FeatureStore::~FeatureStore() = default;

absl::StatusOr<std::unique_ptr<FeatureStore>> FeatureStore::Open(
    const std::string& data_dir, const FxRates& fx, const FeatureConfig& config,
    const std::vector<std::string>& extra_column_families, std::shared_ptr<KvFaults> faults) {
  std::unique_ptr<FeatureStore> store(new FeatureStore());
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot create data dir '", data_dir, "': ", ec.message()));
  }
  KvStoreOptions options;
  options.path = data_dir + "/features";
  options.faults = std::move(faults);
  options.column_families = {kAccounts, kMeta};
  for (const std::string& family : extra_column_families) {
    if (family == kAccounts || family == kMeta) {
      return absl::InvalidArgumentError(
          absl::StrCat("column family '", family, "' belongs to the feature store"));
    }
    options.column_families.push_back(family);
  }
  options.sync_writes = true;
  VIGIL_ASSIGN_OR_RETURN(store->kv_, KvStore::Open(options));
  store->extractor_ = std::make_unique<FeatureExtractor>(fx, config);
  store->account_keys_ =
      config.account_pseudonyms == nullptr
          ? std::string(kPlainAccountKeys)
          : absl::StrCat(ToAbsl(config.account_pseudonyms->name()), ":",
                         config.account_pseudonyms->key_id());
  VIGIL_RETURN_IF_ERROR(store->Restore());
  return store;
}

absl::Status FeatureStore::Restore() {
  const std::string& version = FeatureExtractor::Schema()->version();
  VIGIL_ASSIGN_OR_RETURN(std::optional<std::string> stored_version, kv_->Get(kMeta, "schema"));
  // v2 adds the long memory to v1's state: a v1 state restores with an empty one (its columns
  // learn from the restart on), and the next checkpoint records v2.
  if (stored_version.has_value() && !SchemaExtends(version, *stored_version)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "feature state in ", kv_->path(), " was written by schema ", *stored_version,
        ", this build computes ", version, "; use a new --data-dir or migrate the state"));
  }
  // Accounts keyed one way must never be looked up another way: every account would look new.
  VIGIL_ASSIGN_OR_RETURN(std::optional<std::string> stored_keys, kv_->Get(kMeta, "account_keys"));
  if (!stored_keys.has_value() && stored_version.has_value()) {
    stored_keys = std::string(kPlainAccountKeys);
  }
  if (stored_keys.has_value() && *stored_keys != account_keys_) {
    const auto describe = [](std::string_view keys) {
      return keys == kPlainAccountKeys
                 ? std::string("plain account ids")
                 : absl::StrCat("account pseudonyms ", ToAbsl(keys), " (hash:key id)");
    };
    return absl::FailedPreconditionError(absl::StrCat(
        "feature state in ", kv_->path(), " is keyed by ", describe(*stored_keys),
        ", but this run keys accounts by ", describe(account_keys_),
        "; give the state's own pseudonym key (state.pseudonym_key) or use a new --data-dir"));
  }
  uint32_t expected = 0;
  VIGIL_RETURN_IF_ERROR(kv_->ForEach(kAccounts, "", [&](absl::string_view key,
                                                         absl::string_view value) -> absl::Status {
    const auto corrupt = [&](absl::string_view why) {
      return absl::DataLossError(
          absl::StrCat("feature state in ", kv_->path(), ": account ", expected, ": ", why));
    };
    if (key != AccountNumberKey(expected)) return corrupt("account numbers are not contiguous");
    uint64_t key_len = 0;
    if (!GetVarint(&value, &key_len) || key_len > value.size()) return corrupt("bad key length");
    const absl::string_view account_key = value.substr(0, key_len);
    value.remove_prefix(key_len);
    auto state = AccountState::Decode(std::string_view(value.data(), value.size()));
    if (!state.ok()) return corrupt(state.status().message());
    VIGIL_RETURN_IF_ERROR(extractor_->RestoreAccount(
        std::string_view(account_key.data(), account_key.size()), *std::move(state)));
    ++expected;
    return absl::OkStatus();
  }));
  VIGIL_ASSIGN_OR_RETURN(std::optional<std::string> watermark, kv_->Get(kMeta, "watermark"));
  if (watermark.has_value()) {
    int64_t w = 0;
    if (watermark->size() != sizeof(w)) {
      return absl::DataLossError(absl::StrCat("feature state in ", kv_->path(), ": bad watermark"));
    }
    std::memcpy(&w, watermark->data(), sizeof(w));
    extractor_->RestoreWatermark(w);
  }
  return kv_->ForEach(kMeta, kCursorPrefix, [&](absl::string_view key, absl::string_view value) {
    key.remove_prefix(sizeof(kCursorPrefix) - 1);
    cursor_[std::string(key)] = std::string(value);
    return absl::OkStatus();
  });
}

absl::StatusOr<CheckpointStats> FeatureStore::Checkpoint(
    const std::map<std::string, std::string>& cursor) {
  const StagedCheckpoint staged = Stage(cursor);
  VIGIL_RETURN_IF_ERROR(Commit(staged));
  return staged.stats;
}

FeatureStore::StagedCheckpoint FeatureStore::Stage(
    const std::map<std::string, std::string>& cursor) {
  StagedCheckpoint staged;
  staged.stats = StageAccounts(staged.batch);
  for (const auto& [name, unused] : cursor_) {
    if (!cursor.contains(name)) staged.batch.Delete(kMeta, absl::StrCat(kCursorPrefix, name));
  }
  for (const auto& [name, v] : cursor) {
    staged.batch.Put(kMeta, absl::StrCat(kCursorPrefix, name), v);
  }
  staged.cursor = cursor;
  return staged;
}

void FeatureStore::StageInto(KvWriteBatch& batch) { StageAccounts(batch); }

CheckpointStats FeatureStore::StageAccounts(KvWriteBatch& batch) {
  CheckpointStats stats;
  std::string value;
  for (uint32_t account : extractor_->dirty_accounts()) {
    value.clear();
    const std::string_view key = extractor_->index().key(account);
    PutVarint(&value, key.size());
    value.append(key);
    extractor_->state(account).EncodeTo(&value);
    batch.Put(kAccounts, AccountNumberKey(account), value);
    ++stats.accounts_written;
    stats.bytes_written += value.size() + 4;
  }
  const int64_t w = extractor_->watermark_us();
  batch.Put(kMeta, "watermark", absl::string_view(reinterpret_cast<const char*>(&w), sizeof(w)));
  batch.Put(kMeta, "schema", FeatureExtractor::Schema()->version());
  batch.Put(kMeta, "account_keys", account_keys_);
  extractor_->ClearDirty();
  return stats;
}

absl::Status FeatureStore::Commit(const StagedCheckpoint& staged) {
  VIGIL_RETURN_IF_ERROR(kv_->Write(staged.batch, KvWriteOptions{.sync = true}));
  cursor_ = staged.cursor;
  return absl::OkStatus();
}

}  // namespace vigil
