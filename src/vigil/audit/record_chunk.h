// RecordChunk: how the audit log stores consecutive records: one stored value per run of up to
// a few hundred records, optionally LZ4-compressed, instead of one value per record.
//
// Why: a value per record costs the store a memtable insert, a write-ahead-log entry and, at
// flush, a block entry each, and the records' bytes cross the disk twice (log, then table);
// decisions of one group repeat their versions, reason texts and field tags, so a chunk of them
// compresses 2.1 to 2.7 times with LZ4 at several hundred MB/s (docs/benchmarks.md). The records themselves, which
// the hash chain and the Merkle tree cover, are unchanged: the chunk is storage, not evidence;
// a damaged chunk is found by the verifier like a damaged record.
//
// Stored form (docs/audit.md "Record chunks"), version 1:
//   "VRC" 0x01 | codec (1 byte: 0 stored, 1 LZ4 block) | record count (varint, >= 1) |
//   payload length before compression (varint) | the payload, compressed by the codec
//   payload := (record length (varint) | record bytes) for each record, in sequence order
// A chunk is stored under the sequence number of its first record (8 bytes big-endian).
#ifndef VIGIL_AUDIT_RECORD_CHUNK_H_
#define VIGIL_AUDIT_RECORD_CHUNK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil::audit {

enum class ChunkCodec : uint8_t {
  kStored = 0,
  kLz4 = 1,
};

// The largest payload a chunk may declare: a bound on what a damaged length can make a reader
// allocate. The log's chunks stay far below it (AuditLog closes a chunk at 1 MiB).
inline constexpr size_t kMaxChunkPayload = size_t{64} << 20;

// Builds one chunk. Not thread-safe.
class RecordChunkBuilder {
 public:
  explicit RecordChunkBuilder(ChunkCodec codec) : codec_(codec) {}

  void Add(std::string_view record);
  size_t records() const { return records_; }
  // Bytes added so far, before compression.
  size_t payload_bytes() const { return payload_.size(); }

  // The chunk's stored bytes; the builder is empty again after. REQUIRES: records() > 0.
  // With kLz4, a payload that does not shrink is stored uncompressed (codec 0): a reader then
  // pays no decompression for nothing.
  std::string Finish();

 private:
  ChunkCodec codec_;
  size_t records_ = 0;
  std::string payload_;
  std::string compressed_;  // reused between chunks
};

// A parsed chunk: its records' bytes.
class RecordChunk {
 public:
  // Checks the header, decompresses, and splits the payload. Errors (kDataLoss) name the
  // byte offset and what is wrong; nothing non-canonical is accepted (a declared count or
  // length that disagrees with the bytes, trailing bytes, an unknown codec or version).
  static absl::StatusOr<RecordChunk> Parse(std::string_view stored);

  size_t size() const { return spans_.size(); }
  std::string_view record(size_t i) const {
    return std::string_view(payload_).substr(spans_[i].first, spans_[i].second);
  }
  ChunkCodec codec() const { return codec_; }

 private:
  ChunkCodec codec_ = ChunkCodec::kStored;
  std::string payload_;
  std::vector<std::pair<size_t, size_t>> spans_;  // offset, length in payload_
};

// Re-encodes records as one chunk (tests and tools that rewrite a chunk).
std::string EncodeRecordChunk(const std::vector<std::string>& records, ChunkCodec codec);

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_RECORD_CHUNK_H_
