#include "vigil/audit/record_chunk.h"

#include <lz4.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/common/string_view.h"
#include "vigil/common/varint.h"

namespace vigil::audit {
namespace {

constexpr char kMagic[4] = {'V', 'R', 'C', '\x01'};
constexpr size_t kFixedHeader = sizeof(kMagic) + 1;  // magic, codec

absl::Status Damaged(size_t offset, std::string_view what) {
  return absl::DataLossError(absl::StrCat("record chunk, byte ", offset, ": ", ToAbsl(what)));
}

std::string Header(ChunkCodec codec, size_t records, size_t payload_bytes) {
  std::string out(kMagic, sizeof(kMagic));
  out.push_back(static_cast<char>(codec));
  PutVarint(records, &out);
  PutVarint(payload_bytes, &out);
  return out;
}

}  // namespace

void RecordChunkBuilder::Add(std::string_view record) {
  PutVarint(record.size(), &payload_);
  payload_.append(record);
  ++records_;
}

std::string RecordChunkBuilder::Finish() {
  VIGIL_CHECK(records_ > 0);
  VIGIL_CHECK(payload_.size() <= kMaxChunkPayload);
  std::string out;
  if (codec_ == ChunkCodec::kLz4) {
    const int bound = LZ4_compressBound(static_cast<int>(payload_.size()));
    compressed_.resize(static_cast<size_t>(bound));
    const int n = LZ4_compress_default(payload_.data(), compressed_.data(),
                                       static_cast<int>(payload_.size()), bound);
    if (n > 0 && static_cast<size_t>(n) < payload_.size()) {
      out = Header(ChunkCodec::kLz4, records_, payload_.size());
      out.append(compressed_.data(), static_cast<size_t>(n));
    }
  }
  if (out.empty()) {
    out = Header(ChunkCodec::kStored, records_, payload_.size());
    out.append(payload_);
  }
  payload_.clear();
  records_ = 0;
  return out;
}

absl::StatusOr<RecordChunk> RecordChunk::Parse(std::string_view stored) {
  if (stored.size() < kFixedHeader || stored.substr(0, 3) != std::string_view(kMagic, 3)) {
    return Damaged(0, "not a record chunk (no \"VRC\" header)");
  }
  if (stored[3] != kMagic[3]) {
    return Damaged(3, absl::StrCat("chunk format version ", static_cast<int>(stored[3]),
                                   " is not supported (this build reads version 1)"));
  }
  RecordChunk chunk;
  const auto codec = static_cast<uint8_t>(stored[4]);
  if (codec > static_cast<uint8_t>(ChunkCodec::kLz4)) {
    return Damaged(4, absl::StrCat("unknown codec ", static_cast<int>(codec)));
  }
  chunk.codec_ = static_cast<ChunkCodec>(codec);
  size_t offset = kFixedHeader;
  uint64_t count = 0, payload_bytes = 0;
  if (!GetVarint(stored, &offset, &count) || count == 0) {
    return Damaged(kFixedHeader, "bad record count");
  }
  const size_t length_at = offset;
  if (!GetVarint(stored, &offset, &payload_bytes) || payload_bytes > kMaxChunkPayload) {
    return Damaged(length_at, absl::StrCat("bad payload length (at most ", kMaxChunkPayload, ")"));
  }
  const std::string_view body = stored.substr(offset);
  if (chunk.codec_ == ChunkCodec::kStored) {
    if (body.size() != payload_bytes) {
      return Damaged(offset, absl::StrCat("payload of ", body.size(), " bytes, the header says ",
                                          payload_bytes));
    }
    chunk.payload_.assign(body);
  } else {
    chunk.payload_.resize(payload_bytes);
    const int n = LZ4_decompress_safe(body.data(), chunk.payload_.data(),
                                      static_cast<int>(body.size()),
                                      static_cast<int>(payload_bytes));
    if (n < 0 || static_cast<uint64_t>(n) != payload_bytes) {
      return Damaged(offset, absl::StrCat("the LZ4 payload does not decompress to the ",
                                          payload_bytes, " bytes the header says"));
    }
  }
  const std::string_view payload(chunk.payload_);
  size_t at = 0;
  chunk.spans_.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t length = 0;
    const size_t start = at;
    if (!GetVarint(payload, &at, &length) || length > payload.size() - at) {
      return Damaged(offset, absl::StrCat("record ", i, " of ", count, " (payload byte ", start,
                                          ") overruns the payload"));
    }
    chunk.spans_.emplace_back(at, length);
    at += length;
  }
  if (at != payload.size()) {
    return Damaged(offset, absl::StrCat(payload.size() - at, " bytes follow the ", count,
                                        " records the header declares"));
  }
  return chunk;
}

std::string EncodeRecordChunk(const std::vector<std::string>& records, ChunkCodec codec) {
  RecordChunkBuilder builder(codec);
  for (const std::string& r : records) builder.Add(r);
  return builder.Finish();
}

}  // namespace vigil::audit
