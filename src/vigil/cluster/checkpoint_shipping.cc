#include "vigil/cluster/checkpoint_shipping.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "vigil/cluster/key_value_bucket.h"
#include "vigil/cluster/stream_reader.h"
#include "vigil/common/sha256_stream.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::cluster {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kManifestKey = "checkpoint";
constexpr std::string_view kFileHeader = "Vigil-File";
constexpr std::string_view kOffsetHeader = "Vigil-Offset";

absl::StatusOr<std::unique_ptr<KeyValueBucket>> ConfigBucket(NatsConnection* nats,
                                                             const ClusterLayout& layout) {
  return nats->EnsureBucket({.name = BucketName(layout, "config"), .replicas = layout.replicas});
}

absl::Status IoError(std::string_view what, const std::string& path, const std::error_code& ec) {
  return absl::UnavailableError(absl::StrCat(ToAbsl(what), " ", path, ": ", ec.message()));
}

// fsync of a file or a directory: what a fetched checkpoint is renamed into place after, so a
// crash of the machine leaves either no checkpoint or a whole one.
absl::Status Sync(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("opening ", path, ": ", std::strerror(errno)));
  }
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrCat("fsync of ", path, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace

uint64_t CheckpointManifest::bytes() const {
  uint64_t total = 0;
  for (const ShippedFile& f : files) total += f.size;
  return total;
}

std::string EncodeManifest(const CheckpointManifest& m) {
  std::string out = absl::StrCat(
      "format=1\nposition=", m.position, "\nnode=", m.node, "\ncreated_unix_ms=", m.created_unix_ms,
      "\nsubject=", m.subject, "\nfirst_sequence=", m.first_sequence, "\nchunks=", m.chunks, "\n");
  for (const ShippedFile& f : m.files) {
    absl::StrAppend(&out, "file=", f.size, " ", f.sha256_hex, " ", f.name, "\n");
  }
  return out;
}

absl::StatusOr<CheckpointManifest> DecodeManifest(std::string_view text) {
  std::vector<std::string> lines = absl::StrSplit(ToAbsl(text), '\n', absl::SkipEmpty());
  const auto bad = [](size_t line, std::string_view why) {
    return absl::DataLossError(
        absl::StrCat("checkpoint manifest, line ", line + 1, ": ", ToAbsl(why)));
  };
  const char* const fields[] = {"format",  "position",       "node",  "created_unix_ms",
                                "subject", "first_sequence", "chunks"};
  constexpr size_t kFields = sizeof(fields) / sizeof(fields[0]);
  if (lines.size() < kFields) return bad(lines.size(), "the manifest ends early");
  std::string values[kFields];
  for (size_t k = 0; k < kFields; ++k) {
    const std::string prefix = absl::StrCat(fields[k], "=");
    if (lines[k].rfind(prefix, 0) != 0) return bad(k, absl::StrCat("expected ", prefix));
    values[k] = lines[k].substr(prefix.size());
  }
  if (values[0] != "1") return bad(0, absl::StrCat("format ", values[0], " is not 1"));
  CheckpointManifest m;
  m.node = values[2];
  m.subject = values[4];
  if (!absl::SimpleAtoi(values[1], &m.position)) return bad(1, "position is not a number");
  if (!absl::SimpleAtoi(values[3], &m.created_unix_ms)) return bad(3, "not a number");
  if (!absl::SimpleAtoi(values[5], &m.first_sequence)) return bad(5, "not a number");
  if (!absl::SimpleAtoi(values[6], &m.chunks)) return bad(6, "not a number");
  for (size_t k = kFields; k < lines.size(); ++k) {
    if (lines[k].rfind("file=", 0) != 0) return bad(k, "expected file=");
    std::vector<std::string> parts = absl::StrSplit(lines[k].substr(5), absl::MaxSplits(' ', 2));
    ShippedFile f;
    if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &f.size) || parts[1].size() != 64 ||
        parts[2].empty() || parts[2].find('/') != std::string::npos || parts[2] == "." ||
        parts[2] == "..") {
      return bad(k, "expected file=<size> <sha256 hex> <plain file name>");
    }
    f.sha256_hex = std::move(parts[1]);
    f.name = std::move(parts[2]);
    m.files.push_back(std::move(f));
  }
  return m;
}

std::string CheckpointStreamName(const ClusterLayout& layout) {
  return absl::StrCat("VIGIL_", layout.name, "_CKPT");
}

absl::Status EnsureCheckpointStream(NatsConnection* nats, const ClusterLayout& layout) {
  return nats->EnsureStream({.name = CheckpointStreamName(layout),
                             .subjects = {absl::StrCat("vigil.", layout.name, ".ckpt.*")},
                             .replicas = layout.replicas});
}

absl::StatusOr<CheckpointManifest> ShipCheckpoint(NatsConnection* nats, const ClusterLayout& layout,
                                                  const std::string& dir, uint64_t position,
                                                  std::string_view node, int64_t now_unix_ms) {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<KeyValueBucket> config, ConfigBucket(nats, layout));
  uint64_t revision = 0;
  if (absl::StatusOr<KeyValueEntry> before = config->Get(kManifestKey); before.ok()) {
    revision = before->revision;
  } else if (!absl::IsNotFound(before.status())) {
    return before.status();
  }
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint ", dir, " holds ", it->path().string(), ", which is not a plain file"));
    }
    names.push_back(it->path().filename().string());
  }
  if (ec) return IoError("reading checkpoint", dir, ec);
  std::sort(names.begin(), names.end());

  CheckpointManifest m;
  m.position = position;
  m.node = std::string(node);
  m.created_unix_ms = now_unix_ms;
  m.subject =
      absl::StrCat("vigil.", layout.name, ".ckpt.", ToAbsl(node), "_", position, "_", now_unix_ms);
  const std::string stream = CheckpointStreamName(layout);
  std::string chunk_bytes(kCheckpointChunkBytes, '\0');
  for (size_t index = 0; index < names.size(); ++index) {
    const std::string path = absl::StrCat(dir, "/", names[index]);
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::UnavailableError(absl::StrCat("cannot open checkpoint file ", path));
    Sha256Stream hash;
    uint64_t offset = 0;
    // An empty file is one empty chunk: the fetch creates it.
    do {
      in.read(chunk_bytes.data(), static_cast<std::streamsize>(chunk_bytes.size()));
      const size_t n = static_cast<size_t>(in.gcount());
      if (in.bad()) return absl::UnavailableError(absl::StrCat("reading ", path, " failed"));
      const std::string_view data(chunk_bytes.data(), n);
      hash.Update(data);
      PublishOptions chunk;
      chunk.headers = {{std::string(kFileHeader), absl::StrCat(index)},
                       {std::string(kOffsetHeader), absl::StrCat(offset)}};
      VIGIL_ASSIGN_OR_RETURN(const PublishAck ack, nats->Publish(m.subject, data, chunk));
      if (m.chunks == 0) m.first_sequence = ack.sequence;
      ++m.chunks;
      offset += n;
    } while (in);
    m.files.push_back({names[index], offset, hash.FinishHex()});
  }
  const std::string text = EncodeManifest(m);
  absl::StatusOr<uint64_t> stored = revision == 0 ? config->Create(kManifestKey, text)
                                                  : config->Update(kManifestKey, text, revision);
  if (!stored.ok()) {
    if (absl::IsAlreadyExists(stored.status()) || absl::IsFailedPrecondition(stored.status())) {
      return absl::AbortedError(
          absl::StrCat("another checkpoint was shipped while this one (position ", position,
                       ") was: this one is dropped"));
    }
    return stored.status();
  }
  // Older shipments are no longer needed; a purge that fails is repeated by the next one.
  nats->PurgeBefore(stream, m.first_sequence).IgnoreError();
  return m;
}

absl::StatusOr<std::optional<CheckpointManifest>> LastShippedCheckpoint(
    NatsConnection* nats, const ClusterLayout& layout) {
  absl::StatusOr<std::unique_ptr<KeyValueBucket>> config =
      nats->OpenBucket(BucketName(layout, "config"));
  if (absl::IsNotFound(config.status())) return std::nullopt;
  VIGIL_RETURN_IF_ERROR(config.status());
  absl::StatusOr<KeyValueEntry> entry = (*config)->Get(kManifestKey);
  if (absl::IsNotFound(entry.status())) return std::nullopt;
  VIGIL_RETURN_IF_ERROR(entry.status());
  VIGIL_ASSIGN_OR_RETURN(CheckpointManifest m, DecodeManifest(entry->value));
  return m;
}

absl::Status FetchCheckpoint(NatsConnection* nats, const ClusterLayout& layout,
                             const CheckpointManifest& manifest, const std::string& dir,
                             std::chrono::milliseconds wait) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    return absl::AlreadyExistsError(
        absl::StrCat("cannot fetch the shipped checkpoint into ", dir, ": it exists"));
  }
  const std::string staging = dir + ".fetching";
  fs::remove_all(staging, ec);
  if (!fs::create_directory(staging, ec)) return IoError("creating", staging, ec);
  const auto fail = [&](absl::Status s) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    return s;
  };
  const auto lost = [&](std::string_view what) {
    return fail(
        absl::DataLossError(absl::StrCat("the shipped checkpoint at position ", manifest.position,
                                         " (", manifest.subject, "): ", ToAbsl(what))));
  };
  absl::StatusOr<std::unique_ptr<StreamReader>> reader =
      nats->Read(CheckpointStreamName(layout), manifest.subject, manifest.first_sequence);
  if (!reader.ok()) return fail(reader.status());
  // The files' chunks come in file order: each is written as it arrives, and checked once its
  // last chunk is in (the next file's first chunk, or the end).
  size_t file = 0;
  uint64_t written = 0;
  std::ofstream out;
  std::unique_ptr<Sha256Stream> hash;
  const auto finish = [&]() -> absl::Status {
    const ShippedFile& f = manifest.files[file];
    out.close();
    if (!out)
      return absl::UnavailableError(absl::StrCat("writing ", staging, "/", f.name, " failed"));
    if (written != f.size || hash->FinishHex() != f.sha256_hex) {
      return absl::DataLossError(
          absl::StrCat("the shipped checkpoint at position ", manifest.position, " (",
                       manifest.subject, "): file ", f.name, " has ", written,
                       " bytes and another SHA-256 than its manifest's ", f.size));
    }
    return Sync(absl::StrCat(staging, "/", f.name));
  };
  const auto open = [&](size_t index) -> absl::Status {
    file = index;
    written = 0;
    hash = std::make_unique<Sha256Stream>();
    const std::string path = absl::StrCat(staging, "/", manifest.files[index].name);
    out.open(path, std::ios::binary | std::ios::trunc);
    if (!out) return absl::UnavailableError(absl::StrCat("cannot create ", path));
    return absl::OkStatus();
  };
  if (manifest.files.empty() || manifest.chunks < manifest.files.size()) {
    return lost("the manifest lists no files, or fewer chunks than files");
  }
  if (absl::Status s = open(0); !s.ok()) return fail(s);
  for (uint64_t k = 0; k < manifest.chunks; ++k) {
    absl::StatusOr<std::optional<StreamMessage>> next = (*reader)->Next(wait);
    if (!next.ok()) return fail(next.status());
    if (!next->has_value()) {
      return lost(absl::StrCat("chunk ", k + 1, " of ", manifest.chunks, " did not arrive within ",
                               wait.count(), " ms (purged by a newer shipment?)"));
    }
    const StreamMessage& chunk = **next;
    size_t index = 0;
    uint64_t offset = 0;
    if (!absl::SimpleAtoi(ToAbsl(chunk.Header(kFileHeader)), &index) ||
        !absl::SimpleAtoi(ToAbsl(chunk.Header(kOffsetHeader)), &offset) ||
        index >= manifest.files.size() || index < file) {
      return lost(absl::StrCat("chunk ", k + 1, " (sequence ", chunk.sequence,
                               ") names no file of the manifest"));
    }
    if (index != file) {
      if (absl::Status s = finish(); !s.ok()) return fail(s);
      if (index != file + 1)
        return lost(absl::StrCat("no chunk of file ", manifest.files[file + 1].name));
      if (absl::Status s = open(index); !s.ok()) return fail(s);
    }
    if (offset != written) {
      return lost(absl::StrCat("chunk ", k + 1, " (sequence ", chunk.sequence, ") of file ",
                               manifest.files[file].name, " is out of order"));
    }
    out.write(chunk.data.data(), static_cast<std::streamsize>(chunk.data.size()));
    hash->Update(chunk.data);
    written += chunk.data.size();
  }
  if (absl::Status s = finish(); !s.ok()) return fail(s);
  if (file + 1 != manifest.files.size()) {
    return lost(absl::StrCat("no chunk of file ", manifest.files[file + 1].name));
  }
  if (absl::Status s = Sync(staging); !s.ok()) return fail(s);
  fs::rename(staging, dir, ec);
  if (ec) return fail(IoError("renaming the fetched checkpoint to", dir, ec));
  const fs::path parent = fs::path(dir).parent_path();
  return Sync(parent.empty() ? std::string(".") : parent.string());
}

absl::StatusOr<NodeState> OpenNodeState(NatsConnection* nats, const ClusterLayout& layout,
                                        const std::string& dir, const FxRates& fx,
                                        const FeatureConfig& config,
                                        std::chrono::milliseconds wait) {
  NodeState out;
  std::error_code ec;
  const std::string store_dir = absl::StrCat(dir, "/features");
  if (!fs::exists(store_dir, ec)) {
    VIGIL_ASSIGN_OR_RETURN(out.fetched, LastShippedCheckpoint(nats, layout));
    if (out.fetched.has_value()) {
      fs::create_directories(dir, ec);
      if (ec) return IoError("creating", dir, ec);
      VIGIL_RETURN_IF_ERROR(FetchCheckpoint(nats, layout, *out.fetched, store_dir, wait));
    }
  }
  VIGIL_ASSIGN_OR_RETURN(out.store,
                         FeatureStore::Open(dir, fx, config, {std::string(kNodeStateFamily)}));
  return out;
}

}  // namespace vigil::cluster
