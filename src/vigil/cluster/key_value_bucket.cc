#include "vigil/cluster/key_value_bucket.h"

#include <nats/nats.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "vigil/cluster/internal/nats_handles.h"
#include "vigil/cluster/internal/nats_status.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::cluster {
namespace {

using internal::FromNats;

// What NATS accepts as a key: tokens of [A-Za-z0-9_=-] separated by single dots.
absl::Status CheckKey(std::string_view key) {
  bool token_empty = true;
  for (const char c : key) {
    if (c == '.') {
      if (token_empty) break;
      token_empty = true;
      continue;
    }
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '=') {
      return absl::InvalidArgumentError(
          absl::StrCat("key-value key \"", ToAbsl(key), "\": '", std::string(1, c),
                       "' is not allowed (letters, digits, '-', '_', '=' and '.')"));
    }
    token_empty = false;
  }
  if (key.empty() || token_empty) {
    return absl::InvalidArgumentError(
        absl::StrCat("key-value key \"", ToAbsl(key), "\": empty, or an empty token between dots"));
  }
  return absl::OkStatus();
}

}  // namespace

KeyValueBucket::KeyValueBucket(NatsConnection::Handles* handles, std::unique_ptr<Store> store,
                               std::string name)
    : handles_(handles), store_(std::move(store)), name_(std::move(name)) {}
KeyValueBucket::~KeyValueBucket() = default;

// A write is a message on the bucket's subject for the key, as the KV protocol defines it (a
// delete is an empty message with header KV-Operation: DEL), published with the revision
// expected, so that it is a compare-and-set for creates, updates and deletes alike.
absl::StatusOr<uint64_t> KeyValueBucket::Write(std::string_view key, std::string_view value,
                                               bool remove, uint64_t revision) {
  VIGIL_RETURN_IF_ERROR(CheckKey(key));
  const std::string subject = absl::StrCat("$KV.", name_, ".", ToAbsl(key));
  natsMsg* msg = nullptr;
  VIGIL_RETURN_IF_ERROR(FromNats(
      natsMsg_Create(&msg, subject.c_str(), nullptr, value.data(), static_cast<int>(value.size())),
      absl::StrCat("write of ", subject)));
  if (remove) natsMsgHeader_Set(msg, "KV-Operation", "DEL");
  jsPubOptions options;
  jsPubOptions_Init(&options);
  options.MaxWait = handles_->request_timeout.count();
  if (revision == 0) {
    options.ExpectNoMessage = true;
  } else {
    options.ExpectLastSubjectSeq = revision;
  }
  jsPubAck* ack = nullptr;
  jsErrCode error = jsErrCode(0);
  const natsStatus s = js_PublishMsg(&ack, handles_->jetstream, msg, &options, &error);
  natsMsg_Destroy(msg);
  if (s != NATS_OK) {
    return FromNats(s, absl::StrCat(remove ? "delete " : "write ", name_, "/", ToAbsl(key)), error);
  }
  const uint64_t written = ack->Sequence;
  jsPubAck_Destroy(ack);
  return written;
}

absl::StatusOr<uint64_t> KeyValueBucket::Create(std::string_view key, std::string_view value) {
  absl::StatusOr<uint64_t> created = Write(key, value, /*remove=*/false, 0);
  if (created.ok() || !absl::IsFailedPrecondition(created.status())) return created;
  // The key has a message: a value (taken) or a delete marker (free, at that revision).
  natsMsg* last = nullptr;
  const std::string stream = absl::StrCat("KV_", name_);
  const std::string subject = absl::StrCat("$KV.", name_, ".", ToAbsl(key));
  jsErrCode error = jsErrCode(0);
  natsStatus s =
      js_GetLastMsg(&last, handles_->jetstream, stream.c_str(), subject.c_str(), nullptr, &error);
  if (s == NATS_NOT_FOUND) return Write(key, value, false, 0);  // expired meanwhile
  if (s != NATS_OK) return FromNats(s, absl::StrCat("read ", name_, "/", ToAbsl(key)), error);
  const char* operation = nullptr;
  const bool deleted =
      natsMsgHeader_Get(last, "KV-Operation", &operation) == NATS_OK && operation != nullptr &&
      (std::string_view(operation) == "DEL" || std::string_view(operation) == "PURGE");
  const uint64_t revision = natsMsg_GetSequence(last);
  natsMsg_Destroy(last);
  if (!deleted) {
    return absl::AlreadyExistsError(
        absl::StrCat(name_, "/", ToAbsl(key), " holds a value (revision ", revision, ")"));
  }
  absl::StatusOr<uint64_t> again = Write(key, value, false, revision);
  if (absl::IsFailedPrecondition(again.status())) {
    return absl::AlreadyExistsError(
        absl::StrCat(name_, "/", ToAbsl(key), " was written meanwhile"));
  }
  return again;
}

absl::StatusOr<uint64_t> KeyValueBucket::Update(std::string_view key, std::string_view value,
                                                uint64_t revision) {
  if (revision == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("update of ", name_, "/", ToAbsl(key), ": revision 0 (use Create)"));
  }
  return Write(key, value, /*remove=*/false, revision);
}

absl::Status KeyValueBucket::Delete(std::string_view key, uint64_t revision) {
  if (revision == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("delete of ", name_, "/", ToAbsl(key), ": revision 0"));
  }
  return Write(key, "", /*remove=*/true, revision).status();
}

absl::StatusOr<KeyValueEntry> KeyValueBucket::Get(std::string_view key) {
  VIGIL_RETURN_IF_ERROR(CheckKey(key));
  const std::string key_text(key);
  kvEntry* entry = nullptr;
  const natsStatus s = kvStore_Get(&entry, store_->store, key_text.c_str());
  if (s == NATS_NOT_FOUND) {
    return absl::NotFoundError(absl::StrCat(name_, "/", ToAbsl(key), " holds nothing"));
  }
  if (s != NATS_OK) return FromNats(s, absl::StrCat("read ", name_, "/", ToAbsl(key)));
  KeyValueEntry out;
  out.value.assign(static_cast<const char*>(kvEntry_Value(entry)),
                   static_cast<size_t>(kvEntry_ValueLen(entry)));
  out.revision = kvEntry_Revision(entry);
  out.written_unix_ns = kvEntry_Created(entry);
  kvEntry_Destroy(entry);
  return out;
}

absl::StatusOr<std::vector<std::string>> KeyValueBucket::Keys() {
  kvKeysList list;
  const natsStatus s = kvStore_Keys(&list, store_->store, nullptr);
  std::vector<std::string> keys;
  if (s == NATS_NOT_FOUND) return keys;
  if (s != NATS_OK) return FromNats(s, absl::StrCat("keys of ", name_));
  for (int k = 0; k < list.Count; ++k) keys.emplace_back(list.Keys[k]);
  kvKeysList_Destroy(&list);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace vigil::cluster
