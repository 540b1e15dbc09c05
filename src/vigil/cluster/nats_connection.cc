#include "vigil/cluster/nats_connection.h"

#include <nats/nats.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "vigil/cluster/internal/nats_handles.h"
#include "vigil/cluster/internal/nats_status.h"
#include "vigil/cluster/key_value_bucket.h"
#include "vigil/cluster/stream_reader.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::cluster {
namespace {

using internal::FromNats;

constexpr int64_t kNanosPerMilli = 1'000'000;

jsStorageType StorageOf(StreamStorage storage) {
  return storage == StreamStorage::kMemory ? js_MemoryStorage : js_FileStorage;
}

const char* StorageName(jsStorageType storage) {
  return storage == js_MemoryStorage ? "memory" : "file";
}

// Whether the existing stream "info" is the one "spec" asks for.
absl::Status CheckStream(const jsStreamConfig& config, const StreamSpec& spec) {
  std::vector<std::string> have(config.Subjects, config.Subjects + config.SubjectsLen);
  std::vector<std::string> want = spec.subjects;
  std::sort(have.begin(), have.end());
  std::sort(want.begin(), want.end());
  if (have != want) {
    return absl::FailedPreconditionError(
        absl::StrCat("stream ", spec.name, " exists with subjects [", absl::StrJoin(have, ", "),
                     "], not [", absl::StrJoin(want, ", "), "]"));
  }
  if (config.Replicas != spec.replicas) {
    return absl::FailedPreconditionError(absl::StrCat(
        "stream ", spec.name, " exists with ", config.Replicas, " replicas, not ", spec.replicas));
  }
  if (config.Storage != StorageOf(spec.storage)) {
    return absl::FailedPreconditionError(absl::StrCat("stream ", spec.name, " exists with ",
                                                      StorageName(config.Storage), " storage, not ",
                                                      StorageName(StorageOf(spec.storage))));
  }
  return absl::OkStatus();
}

// Owns a natsMsg.
struct MsgDeleter {
  void operator()(natsMsg* msg) const { natsMsg_Destroy(msg); }
};
using MsgPtr = std::unique_ptr<natsMsg, MsgDeleter>;

}  // namespace

std::string_view StreamMessage::Header(std::string_view key) const {
  for (const MessageHeader& h : headers) {
    if (h.key == key) return h.value;
  }
  return {};
}

namespace internal {

StreamMessage CopyMessage(natsMsg* msg) {
  StreamMessage out;
  out.subject = natsMsg_GetSubject(msg);
  out.data.assign(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
    out.sequence = meta->Sequence.Stream;
    out.stored_unix_ns = meta->Timestamp;
    jsMsgMetaData_Destroy(meta);
  } else {
    // A message fetched directly (js_GetLastMsg) carries its place in the message itself.
    out.sequence = natsMsg_GetSequence(msg);
    out.stored_unix_ns = natsMsg_GetTime(msg);
  }
  const char** keys = nullptr;
  int count = 0;
  if (natsMsgHeader_Keys(msg, &keys, &count) == NATS_OK) {
    for (int k = 0; k < count; ++k) {
      const char* value = nullptr;
      if (natsMsgHeader_Get(msg, keys[k], &value) == NATS_OK) {
        out.headers.push_back({keys[k], value == nullptr ? "" : value});
      }
    }
    free(static_cast<void*>(keys));
  }
  return out;
}

}  // namespace internal

NatsConnection::NatsConnection(std::unique_ptr<Handles> handles) : handles_(std::move(handles)) {}
NatsConnection::~NatsConnection() = default;

absl::StatusOr<std::unique_ptr<NatsConnection>> NatsConnection::Connect(
    const NatsOptions& options) {
  if (options.servers.empty()) {
    return absl::InvalidArgumentError("NATS: no servers to connect to (cluster.nats_servers)");
  }
  natsOptions* opts = nullptr;
  VIGIL_RETURN_IF_ERROR(FromNats(natsOptions_Create(&opts), "NATS options"));
  std::unique_ptr<natsOptions, void (*)(natsOptions*)> owned(opts, &natsOptions_Destroy);
  std::vector<const char*> urls;
  for (const std::string& s : options.servers) urls.push_back(s.c_str());
  const std::string servers = absl::StrJoin(options.servers, ",");
  VIGIL_RETURN_IF_ERROR(
      FromNats(natsOptions_SetServers(opts, urls.data(), static_cast<int>(urls.size())),
               absl::StrCat("NATS servers ", servers)));
  if (!options.name.empty()) {
    VIGIL_RETURN_IF_ERROR(FromNats(natsOptions_SetName(opts, options.name.c_str()), "NATS name"));
  }
  VIGIL_RETURN_IF_ERROR(
      FromNats(natsOptions_SetTimeout(opts, options.connect_timeout.count()), "NATS timeout"));
  VIGIL_RETURN_IF_ERROR(FromNats(natsOptions_SetMaxReconnect(opts, -1), "NATS reconnect"));
  VIGIL_RETURN_IF_ERROR(FromNats(natsOptions_SetReconnectWait(opts, options.reconnect_wait.count()),
                                 "NATS reconnect wait"));
  VIGIL_RETURN_IF_ERROR(
      FromNats(natsOptions_SetFailRequestsOnDisconnect(opts, true), "NATS request option"));

  auto handles = std::make_unique<Handles>();
  handles->request_timeout = options.request_timeout;
  natsStatus s = natsConnection_Connect(&handles->connection, opts);
  if (s != NATS_OK) {
    handles->connection = nullptr;
    return FromNats(s, absl::StrCat("NATS connect to ", servers));
  }
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.Wait = options.request_timeout.count();
  VIGIL_RETURN_IF_ERROR(
      FromNats(natsConnection_JetStream(&handles->jetstream, handles->connection, &js_options),
               "JetStream context"));
  return std::unique_ptr<NatsConnection>(new NatsConnection(std::move(handles)));
}

bool NatsConnection::connected() const {
  return natsConnection_Status(handles_->connection) == NATS_CONN_STATUS_CONNECTED;
}

absl::Status NatsConnection::CheckJetStream() {
  jsAccountInfo* info = nullptr;
  jsErrCode error = jsErrCode(0);
  const natsStatus s = js_GetAccountInfo(&info, handles_->jetstream, nullptr, &error);
  if (s != NATS_OK) return FromNats(s, "JetStream account info", error);
  jsAccountInfo_Destroy(info);
  return absl::OkStatus();
}

absl::Status NatsConnection::EnsureStream(const StreamSpec& spec) {
  jsErrCode error = jsErrCode(0);
  jsStreamInfo* info = nullptr;
  natsStatus s = js_GetStreamInfo(&info, handles_->jetstream, spec.name.c_str(), nullptr, &error);
  if (s == NATS_OK) {
    absl::Status matches = CheckStream(*info->Config, spec);
    jsStreamInfo_Destroy(info);
    return matches;
  }
  if (s != NATS_NOT_FOUND && error != JSStreamNotFoundErr) {
    return FromNats(s, absl::StrCat("look up stream ", spec.name), error);
  }
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = spec.name.c_str();
  std::vector<const char*> subjects;
  for (const std::string& subject : spec.subjects) subjects.push_back(subject.c_str());
  config.Subjects = subjects.data();
  config.SubjectsLen = static_cast<int>(subjects.size());
  config.Replicas = spec.replicas;
  config.Storage = StorageOf(spec.storage);
  config.MaxAge = std::chrono::duration_cast<std::chrono::nanoseconds>(spec.max_age).count();
  config.Duplicates =
      std::chrono::duration_cast<std::chrono::nanoseconds>(spec.duplicate_window).count();
  config.MaxMsgSize = spec.max_message_bytes;
  error = jsErrCode(0);
  s = js_AddStream(&info, handles_->jetstream, &config, nullptr, &error);
  if (s == NATS_OK) {
    jsStreamInfo_Destroy(info);
    return absl::OkStatus();
  }
  if (error == JSStreamNameExistErr) return EnsureStream(spec);  // created meanwhile: check it
  return FromNats(s, absl::StrCat("create stream ", spec.name), error);
}

absl::StatusOr<PublishAck> NatsConnection::Publish(std::string_view subject, std::string_view data,
                                                   const PublishOptions& options) {
  const std::string subject_text(subject);
  natsMsg* raw = nullptr;
  VIGIL_RETURN_IF_ERROR(FromNats(natsMsg_Create(&raw, subject_text.c_str(), nullptr, data.data(),
                                                static_cast<int>(data.size())),
                                 absl::StrCat("message for ", ToAbsl(subject))));
  MsgPtr msg(raw);
  for (const MessageHeader& h : options.headers) {
    VIGIL_RETURN_IF_ERROR(FromNats(natsMsgHeader_Set(raw, h.key.c_str(), h.value.c_str()),
                                   absl::StrCat("header ", h.key)));
  }
  jsPubOptions pub;
  jsPubOptions_Init(&pub);
  pub.MaxWait = handles_->request_timeout.count();
  if (!options.msg_id.empty()) pub.MsgId = options.msg_id.c_str();
  std::string expected;
  if (options.expected_last_subject_sequence.has_value()) {
    if (*options.expected_last_subject_sequence == 0) {
      pub.ExpectNoMessage = true;
    } else {
      pub.ExpectLastSubjectSeq = *options.expected_last_subject_sequence;
    }
  }
  jsPubAck* ack = nullptr;
  jsErrCode error = jsErrCode(0);
  const natsStatus s = js_PublishMsg(&ack, handles_->jetstream, raw, &pub, &error);
  if (s != NATS_OK) return FromNats(s, absl::StrCat("publish to ", ToAbsl(subject)), error);
  PublishAck out{ack->Sequence, ack->Duplicate};
  jsPubAck_Destroy(ack);
  return out;
}

absl::StatusOr<StreamStatus> NatsConnection::StatusOf(std::string_view stream) {
  const std::string stream_text(stream);
  jsErrCode error = jsErrCode(0);
  jsStreamInfo* info = nullptr;
  const natsStatus s =
      js_GetStreamInfo(&info, handles_->jetstream, stream_text.c_str(), nullptr, &error);
  if (s != NATS_OK) return FromNats(s, absl::StrCat("status of stream ", ToAbsl(stream)), error);
  StreamStatus out;
  out.messages = info->State.Msgs;
  out.first_sequence = info->State.FirstSeq;
  out.last_sequence = info->State.LastSeq;
  if (info->Cluster != nullptr && info->Cluster->Leader != nullptr) {
    out.leader = info->Cluster->Leader;
  }
  jsStreamInfo_Destroy(info);
  return out;
}

absl::Status NatsConnection::PurgeBefore(std::string_view stream, uint64_t before) {
  if (before <= 1) return absl::OkStatus();  // nothing precedes the first message
  const std::string stream_text(stream);
  jsOptions options;
  jsOptions_Init(&options);
  options.Wait = handles_->request_timeout.count();
  options.Stream.Purge.Sequence = before;
  jsErrCode error = jsErrCode(0);
  const natsStatus s = js_PurgeStream(handles_->jetstream, stream_text.c_str(), &options, &error);
  if (s != NATS_OK) {
    return FromNats(s, absl::StrCat("purge of stream ", ToAbsl(stream), " before ", before), error);
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> NatsConnection::LastSequenceOf(std::string_view stream,
                                                        std::string_view subject) {
  const std::string stream_text(stream), subject_text(subject);
  natsMsg* raw = nullptr;
  jsErrCode error = jsErrCode(0);
  const natsStatus s = js_GetLastMsg(&raw, handles_->jetstream, stream_text.c_str(),
                                     subject_text.c_str(), nullptr, &error);
  if (s == NATS_NOT_FOUND) return 0;
  if (s != NATS_OK) {
    return FromNats(s, absl::StrCat("last message of ", ToAbsl(subject), " in ", ToAbsl(stream)),
                    error);
  }
  MsgPtr msg(raw);
  return natsMsg_GetSequence(raw);
}

absl::StatusOr<std::unique_ptr<StreamReader>> NatsConnection::Read(std::string_view stream,
                                                                   std::string_view filter,
                                                                   uint64_t from) {
  const std::string stream_text(stream);
  const std::string filter_text = filter.empty() ? ">" : std::string(filter);
  jsSubOptions options;
  jsSubOptions_Init(&options);
  options.Stream = stream_text.c_str();
  options.Ordered = true;
  options.Config.DeliverPolicy = js_DeliverByStartSequence;
  options.Config.OptStartSeq = std::max<uint64_t>(from, 1);
  // Idle heartbeats let the client see a consumer that went with its server (a killed stream
  // leader) and start it again from the next sequence; flow control keeps a slow reader from
  // being cut off.
  options.Config.Heartbeat =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::milliseconds(500)).count();
  options.Config.FlowControl = true;
  auto subscription = std::make_unique<StreamReader::Subscription>();
  jsErrCode error = jsErrCode(0);
  const natsStatus s = js_SubscribeSync(&subscription->subscription, handles_->jetstream,
                                        filter_text.c_str(), nullptr, &options, &error);
  if (s != NATS_OK) {
    subscription->subscription = nullptr;
    return FromNats(s, absl::StrCat("read ", ToAbsl(stream), " from ", from), error);
  }
  // An ordered consumer may hold many messages in the client before Next takes them.
  natsSubscription_SetPendingLimits(subscription->subscription, -1, -1);
  return std::unique_ptr<StreamReader>(
      new StreamReader(std::move(subscription), std::max<uint64_t>(from, 1) - 1));
}

absl::StatusOr<std::unique_ptr<KeyValueBucket>> NatsConnection::EnsureBucket(
    const BucketSpec& spec) {
  const int64_t ttl_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(spec.ttl).count();
  auto store = std::make_unique<KeyValueBucket::Store>();
  natsStatus s = js_KeyValue(&store->store, handles_->jetstream, spec.name.c_str());
  if (s == NATS_NOT_FOUND) {
    kvConfig config;
    kvConfig_Init(&config);
    config.Bucket = spec.name.c_str();
    config.History = 1;
    config.TTL = ttl_ns;
    config.Replicas = spec.replicas;
    config.StorageType = StorageOf(spec.storage);
    s = js_CreateKeyValue(&store->store, handles_->jetstream, &config);
  }
  if (s != NATS_OK) {
    store->store = nullptr;
    return FromNats(s, absl::StrCat("key-value bucket ", spec.name));
  }
  kvStatus* status = nullptr;
  VIGIL_RETURN_IF_ERROR(FromNats(kvStore_Status(&status, store->store),
                                 absl::StrCat("status of bucket ", spec.name)));
  const int64_t have_ttl = kvStatus_TTL(status);
  const int64_t have_replicas = kvStatus_Replicas(status);
  kvStatus_Destroy(status);
  if (have_ttl != ttl_ns || have_replicas != spec.replicas) {
    return absl::FailedPreconditionError(absl::StrCat(
        "key-value bucket ", spec.name, " exists with TTL ", have_ttl / kNanosPerMilli, " ms and ",
        have_replicas, " replicas, not ", ttl_ns / kNanosPerMilli, " ms and ", spec.replicas));
  }
  return std::unique_ptr<KeyValueBucket>(
      new KeyValueBucket(handles_.get(), std::move(store), spec.name));
}

absl::StatusOr<std::unique_ptr<KeyValueBucket>> NatsConnection::OpenBucket(
    std::string_view name, std::chrono::milliseconds* ttl) {
  const std::string bucket(name);
  auto store = std::make_unique<KeyValueBucket::Store>();
  const natsStatus s = js_KeyValue(&store->store, handles_->jetstream, bucket.c_str());
  if (s == NATS_NOT_FOUND) {
    store->store = nullptr;
    return absl::NotFoundError(absl::StrCat("key-value bucket ", bucket, " does not exist"));
  }
  if (s != NATS_OK) {
    store->store = nullptr;
    return FromNats(s, absl::StrCat("key-value bucket ", bucket));
  }
  if (ttl != nullptr) {
    kvStatus* status = nullptr;
    VIGIL_RETURN_IF_ERROR(
        FromNats(kvStore_Status(&status, store->store), absl::StrCat("status of bucket ", bucket)));
    *ttl = std::chrono::milliseconds(kvStatus_TTL(status) / kNanosPerMilli);
    kvStatus_Destroy(status);
  }
  return std::unique_ptr<KeyValueBucket>(
      new KeyValueBucket(handles_.get(), std::move(store), bucket));
}

absl::Status NatsConnection::Health() const {
  switch (natsConnection_Status(handles_->connection)) {
    case NATS_CONN_STATUS_CONNECTED:
      return absl::OkStatus();
    case NATS_CONN_STATUS_RECONNECTING:
    case NATS_CONN_STATUS_CONNECTING:
      return absl::UnavailableError("the connection to the NATS servers is down; reconnecting");
    default:
      return absl::UnavailableError("the connection to the NATS servers is closed");
  }
}

}  // namespace vigil::cluster
