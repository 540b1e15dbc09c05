#include "vigil/common/ids.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace vigil {
namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr uint64_t kLoMask = (uint64_t{1} << 62) - 1;

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Uuid::ToString() const {
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0xf]);
  }
  return out;
}

int64_t Uuid::unix_millis() const {
  int64_t ms = 0;
  for (int i = 0; i < 6; ++i) ms = (ms << 8) | bytes[i];
  return ms;
}

absl::StatusOr<Uuid> ParseUuid(absl::string_view text) {
  if (text.size() != 36) {
    return absl::InvalidArgumentError(
        absl::StrCat("uuid: expected 36 characters (8-4-4-4-12 hex), got ", text.size()));
  }
  Uuid id;
  int byte = 0;
  for (size_t i = 0; i < text.size();) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') {
        return absl::InvalidArgumentError(absl::StrCat("uuid: expected '-' at offset ", i));
      }
      ++i;
      continue;
    }
    const int hi = HexValue(text[i]);
    const int lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError(absl::StrCat("uuid: non-hex character at offset ", i));
    }
    id.bytes[byte++] = static_cast<uint8_t>(hi << 4 | lo);
    i += 2;
  }
  return id;
}

UuidV7Generator::UuidV7Generator(const Clock& clock, uint64_t seed)
    : clock_(clock), rng_state_(seed) {}

Uuid UuidV7Generator::Next() {
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now().time_since_epoch())
          .count();
  absl::MutexLock lock(&mu_);
  if (now_ms > last_millis_) {
    last_millis_ = now_ms;
    // Fresh random sequence start, with the top bit of rand_a clear so that many increments
    // fit before the 74-bit sequence would wrap within one millisecond.
    seq_hi_ = SplitMix64(rng_state_) & 0x7ff;
    seq_lo_ = SplitMix64(rng_state_) & kLoMask;
  } else {
    // Same millisecond, or the clock stepped back: keep the last timestamp and count up, so
    // ids stay strictly increasing.
    if (++seq_lo_ > kLoMask) {
      seq_lo_ = 0;
      if (++seq_hi_ > 0xfff) {
        seq_hi_ = 0;
        ++last_millis_;  // sequence exhausted: borrow the next millisecond
      }
    }
  }
  Uuid id;
  const uint64_t ms = static_cast<uint64_t>(last_millis_);
  for (int i = 0; i < 6; ++i) id.bytes[i] = static_cast<uint8_t>(ms >> (40 - 8 * i));
  id.bytes[6] = static_cast<uint8_t>(0x70 | (seq_hi_ >> 8));
  id.bytes[7] = static_cast<uint8_t>(seq_hi_);
  id.bytes[8] = static_cast<uint8_t>(0x80 | (seq_lo_ >> 56));
  for (int i = 9; i < 16; ++i) id.bytes[i] = static_cast<uint8_t>(seq_lo_ >> (8 * (15 - i)));
  return id;
}

}  // namespace vigil
