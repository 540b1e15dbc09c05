// Helpers for the cluster's binary encodings (log_entries.h, the applied state): varint-
// prefixed strings, little-endian doubles with one canonical NaN, zig-zag integers, and a reader
// that names the first field it cannot read.
#ifndef VIGIL_CLUSTER_INTERNAL_BYTE_CODEC_H_
#define VIGIL_CLUSTER_INTERNAL_BYTE_CODEC_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/common/varint.h"

namespace vigil::cluster::internal {

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

inline void PutString(std::string_view s, std::string* out) {
  PutVarint(s.size(), out);
  out->append(s);
}

inline void PutDouble(double d, std::string* out) {
  uint64_t bits = 0;
  if (std::isnan(d)) {
    bits = 0x7ff8000000000000ULL;
  } else {
    std::memcpy(&bits, &d, sizeof(bits));
  }
  for (int k = 0; k < 8; ++k) out->push_back(static_cast<char>(bits >> (8 * k)));
}

// Reads the fields of one encoding in order, naming the first it cannot read.
class ByteReader {
 public:
  ByteReader(std::string_view in, std::string_view what) : in_(in), what_(what) {}

  absl::Status Magic(std::string_view magic) {
    if (in_.substr(0, magic.size()) != magic) {
      return absl::DataLossError(absl::StrCat(ToAbsl(what_), ": not a ", ToAbsl(what_),
                                              " of version ", static_cast<int>(magic.back()),
                                              " (its first bytes differ)"));
    }
    offset_ = magic.size();
    return absl::OkStatus();
  }
  absl::Status Varint(std::string_view field, uint64_t* v) {
    const size_t at = offset_;
    if (!GetVarint(in_, &offset_, v)) return Bad(field, at, "a malformed varint");
    return absl::OkStatus();
  }
  absl::Status String(std::string_view field, std::string* s) {
    const size_t at = offset_;
    uint64_t length = 0;
    if (!GetVarint(in_, &offset_, &length)) return Bad(field, at, "a malformed length");
    if (length > in_.size() - offset_) return Bad(field, at, "a length past the end");
    s->assign(in_.substr(offset_, length));
    offset_ += length;
    return absl::OkStatus();
  }
  absl::Status Bytes(std::string_view field, uint8_t* out, size_t n) {
    if (n > in_.size() - offset_) return Bad(field, offset_, "too few bytes");
    std::memcpy(out, in_.data() + offset_, n);
    offset_ += n;
    return absl::OkStatus();
  }
  absl::Status Double(std::string_view field, double* d) {
    uint8_t b[8];
    VIGIL_RETURN_IF_ERROR(Bytes(field, b, 8));
    uint64_t bits = 0;
    for (int k = 0; k < 8; ++k) bits |= static_cast<uint64_t>(b[k]) << (8 * k);
    std::memcpy(d, &bits, sizeof(bits));
    if (std::isnan(*d) && bits != 0x7ff8000000000000ULL) {
      return Bad(field, offset_ - 8, "a NaN that is not the quiet NaN");
    }
    return absl::OkStatus();
  }
  bool AtEnd() const { return offset_ == in_.size(); }
  absl::Status End() {
    if (offset_ != in_.size()) return Bad("end", offset_, "bytes after the last field");
    return absl::OkStatus();
  }

 private:
  absl::Status Bad(std::string_view field, size_t at, std::string_view why) const {
    return absl::DataLossError(
        absl::StrCat(ToAbsl(what_), ": ", ToAbsl(field), " at byte ", at, ": ", ToAbsl(why)));
  }

  std::string_view in_;
  std::string_view what_;
  size_t offset_ = 0;
};

}  // namespace vigil::cluster::internal

#endif  // VIGIL_CLUSTER_INTERNAL_BYTE_CODEC_H_
