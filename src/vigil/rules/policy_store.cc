#include "vigil/rules/policy_store.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "vigil/common/sha256.h"
#include "vigil/common/status_macros.h"

namespace vigil {
namespace {

constexpr char kFamily[] = "policies";
constexpr char kActiveKey[] = "active";

std::string VersionKey(int64_t id) { return absl::StrFormat("v/%012d", id); }
std::string ActivationKey(int64_t n) { return absl::StrFormat("a/%012d", n); }

absl::StatusOr<nlohmann::json> ParseRecord(absl::string_view key, absl::string_view value) {
  nlohmann::json j = nlohmann::json::parse(value.begin(), value.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::DataLossError(absl::StrCat("policy store: record ", key, " is not JSON"));
  }
  return j;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PolicyStore>> PolicyStore::Open(const std::string& dir,
                                                               PolicyInputLayout layout,
                                                               ListLibrary library,
                                                               const Clock& clock) {
  KvStoreOptions options;
  options.path = dir;
  options.column_families = {kFamily};
  options.block_cache_bytes = 1 << 20;  // a few small records
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<KvStore> kv, KvStore::Open(options));
  std::unique_ptr<PolicyStore> store(
      new PolicyStore(std::move(kv), std::move(layout), std::move(library), clock));
  VIGIL_ASSIGN_OR_RETURN(std::optional<std::string> active, store->kv_->Get(kFamily, kActiveKey));
  if (active.has_value()) {
    int64_t id = 0;
    if (!absl::SimpleAtoi(*active, &id)) {
      return absl::DataLossError(
          absl::StrCat("policy store ", dir, ": active id '", *active, "' is not a number"));
    }
    auto policy = store->Load(id);
    if (!policy.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "policy store ", dir, ": the active policy (id ", id,
          ") no longer checks; activate another version: ", policy.status().message()));
    }
    absl::MutexLock lock(&store->mu_);
    store->active_ = *std::move(policy);
    store->active_id_ = id;
  }
  return store;
}

absl::StatusOr<std::shared_ptr<const Policy>> PolicyStore::Load(int64_t id) const {
  VIGIL_ASSIGN_OR_RETURN(std::optional<std::string> value, kv_->Get(kFamily, VersionKey(id)));
  if (!value.has_value()) {
    return absl::NotFoundError(absl::StrCat("policy store: no version with id ", id));
  }
  VIGIL_ASSIGN_OR_RETURN(nlohmann::json j, ParseRecord(VersionKey(id), *value));
  // The lists the version was checked with, kept with it: a later change to the list library
  // does not change what a stored version means.
  ListLibrary lists;
  if (j.contains("lists") && j["lists"].is_object()) {
    for (const auto& [name, list] : j["lists"].items()) {
      lists.lists[name] = {list.value("values", std::vector<std::string>{}),
                           list.value("source", "")};
    }
  }
  return Policy::Parse(j.value("text", ""), absl::StrCat("policy store entry ", id), layout_,
                       lists);
}

absl::StatusOr<PolicyStore::Entry> PolicyStore::Add(std::string_view text, std::string_view file,
                                                    std::string_view author) {
  VIGIL_ASSIGN_OR_RETURN(std::shared_ptr<const Policy> policy,
                         Policy::Parse(text, file, layout_, library_));
  absl::MutexLock lock(&write_mu_);
  VIGIL_ASSIGN_OR_RETURN(std::vector<Entry> entries, List());
  for (const Entry& e : entries) {
    if (e.sha256 == policy->content_hash()) return e;
  }
  Entry entry;
  entry.id = entries.empty() ? 1 : entries.back().id + 1;
  entry.version = policy->version();
  entry.sha256 = policy->content_hash();
  entry.author = std::string(author);
  entry.added = clock_.Now();
  const nlohmann::json record = {{"id", entry.id},
                                 {"version", entry.version},
                                 {"sha256", entry.sha256},
                                 {"author", entry.author},
                                 {"added_unix_micros", ToUnixMicros(entry.added)},
                                 {"text", std::string(text)}};
  nlohmann::json stored = record;
  stored["lists"] = nlohmann::json::object();
  for (const auto& [name, list] : library_.lists) {
    stored["lists"][name] = {{"values", list.values}, {"source", list.source}};
  }
  VIGIL_RETURN_IF_ERROR(kv_->Put(kFamily, VersionKey(entry.id), stored.dump()));
  return entry;
}

absl::Status PolicyStore::Activate(int64_t id, std::string_view author) {
  absl::MutexLock lock(&write_mu_);
  VIGIL_ASSIGN_OR_RETURN(std::shared_ptr<const Policy> policy, Load(id));
  VIGIL_ASSIGN_OR_RETURN(std::vector<Activation> history, History());
  const nlohmann::json record = {
      {"id", id}, {"author", std::string(author)}, {"at_unix_micros", ToUnixMicros(clock_.Now())}};
  KvWriteBatch batch;
  batch.Put(kFamily, ActivationKey(static_cast<int64_t>(history.size()) + 1), record.dump());
  batch.Put(kFamily, kActiveKey, absl::StrCat(id));
  VIGIL_RETURN_IF_ERROR(kv_->Write(batch, KvWriteOptions{.sync = true}));
  // Durable: now the swap. Holders of the previous policy keep it until they let go.
  absl::MutexLock swap(&mu_);
  active_ = std::move(policy);
  active_id_ = id;
  return absl::OkStatus();
}

absl::Status PolicyStore::Rollback(std::string_view author) {
  int64_t target = 0;
  {
    VIGIL_ASSIGN_OR_RETURN(std::vector<Activation> history, History());
    const std::optional<int64_t> current = active_id();
    for (auto it = history.rbegin(); it != history.rend(); ++it) {
      if (current.has_value() && it->id == *current) continue;
      target = it->id;
      break;
    }
  }
  if (target == 0) {
    return absl::FailedPreconditionError(
        "policy store: no earlier version was ever active; nothing to roll back to");
  }
  return Activate(target, author);
}

std::shared_ptr<const Policy> PolicyStore::Active() const {
  absl::MutexLock lock(&mu_);
  return active_;
}

std::optional<int64_t> PolicyStore::active_id() const {
  absl::MutexLock lock(&mu_);
  return active_id_;
}

absl::StatusOr<std::vector<PolicyStore::Entry>> PolicyStore::List() const {
  std::vector<Entry> entries;
  VIGIL_RETURN_IF_ERROR(kv_->ForEach(
      kFamily, "v/", [&](absl::string_view key, absl::string_view value) -> absl::Status {
        VIGIL_ASSIGN_OR_RETURN(nlohmann::json j, ParseRecord(key, value));
        Entry e;
        e.id = j.value("id", int64_t{0});
        e.version = j.value("version", "");
        e.sha256 = j.value("sha256", "");
        e.author = j.value("author", "");
        e.added = FromUnixMicros(j.value("added_unix_micros", int64_t{0}));
        entries.push_back(std::move(e));
        return absl::OkStatus();
      }));
  return entries;
}

absl::StatusOr<std::vector<PolicyStore::Activation>> PolicyStore::History() const {
  std::vector<Activation> history;
  VIGIL_RETURN_IF_ERROR(kv_->ForEach(
      kFamily, "a/", [&](absl::string_view key, absl::string_view value) -> absl::Status {
        VIGIL_ASSIGN_OR_RETURN(nlohmann::json j, ParseRecord(key, value));
        history.push_back({j.value("id", int64_t{0}), j.value("author", ""),
                           FromUnixMicros(j.value("at_unix_micros", int64_t{0}))});
        return absl::OkStatus();
      }));
  return history;
}

absl::StatusOr<std::string> PolicyStore::Text(int64_t id) const {
  VIGIL_ASSIGN_OR_RETURN(std::optional<std::string> value, kv_->Get(kFamily, VersionKey(id)));
  if (!value.has_value()) {
    return absl::NotFoundError(absl::StrCat("policy store: no version with id ", id));
  }
  VIGIL_ASSIGN_OR_RETURN(nlohmann::json j, ParseRecord(VersionKey(id), *value));
  return j.value("text", "");
}

}  // namespace vigil
