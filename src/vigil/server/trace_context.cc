#include "vigil/server/trace_context.h"

#include <algorithm>
#include <cstddef>

#include "absl/random/random.h"

namespace vigil {
namespace {

// Length of a version-00 traceparent: "vv-" + 32 + "-" + 16 + "-" + "ff".
constexpr size_t kTraceparentLength = 55;

// 0-15 for a lowercase hex digit, -1 for anything else (uppercase included: HEXDIGLC).
int LowerHexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Decodes 2 * N lowercase hex digits from the start of "hex" into "*out".
// REQUIRES: hex.size() >= 2 * N.
template <size_t N>
bool DecodeHex(std::string_view hex, std::array<uint8_t, N>* out) {
  for (size_t i = 0; i < N; ++i) {
    const int hi = LowerHexValue(hex[2 * i]);
    const int lo = LowerHexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

template <size_t N>
bool AllZero(const std::array<uint8_t, N>& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; });
}

void AppendHex(const uint8_t* bytes, size_t n, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; ++i) {
    out->push_back(kHex[bytes[i] >> 4]);
    out->push_back(kHex[bytes[i] & 0xF]);
  }
}

// Fills "*bytes" with random bytes, never all zeros (the spec's invalid value; with 64 or 128
// random bits the retry practically never runs).
template <size_t N>
void FillRandomNonZero(std::array<uint8_t, N>* bytes) {
  // Randen, seeded from the OS; one per thread, so no lock and no sharing.
  thread_local absl::BitGen gen;
  do {
    for (size_t i = 0; i < N; i += 8) {
      uint64_t r = absl::Uniform<uint64_t>(gen);
      for (size_t k = i; k < std::min(N, i + 8); ++k) {
        (*bytes)[k] = static_cast<uint8_t>(r);
        r >>= 8;
      }
    }
  } while (AllZero(*bytes));
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<TraceContext> TraceContext::Parse(std::string_view header) {
  header = TrimOws(header);
  if (header.size() < kTraceparentLength) return std::nullopt;
  std::array<uint8_t, 1> version;
  if (!DecodeHex(header.substr(0, 2), &version) || version[0] == 0xff) return std::nullopt;
  if (version[0] == 0x00) {
    if (header.size() != kTraceparentLength) return std::nullopt;
  } else if (header.size() > kTraceparentLength && header[kTraceparentLength] != '-') {
    return std::nullopt;
  }
  if (header[2] != '-' || header[35] != '-' || header[52] != '-') return std::nullopt;
  TraceContext context;
  std::array<uint8_t, 1> flags;
  if (!DecodeHex(header.substr(3, 32), &context.trace_id) ||
      !DecodeHex(header.substr(36, 16), &context.span_id) ||
      !DecodeHex(header.substr(53, 2), &flags)) {
    return std::nullopt;
  }
  if (AllZero(context.trace_id) || AllZero(context.span_id)) return std::nullopt;
  // A later version may give the other bits other meanings; only "sampled" is known to carry.
  context.flags = version[0] == 0x00 ? flags[0] : static_cast<uint8_t>(flags[0] & kSampled);
  return context;
}

TraceContext TraceContext::Generate() {
  TraceContext context;
  FillRandomNonZero(&context.trace_id);
  FillRandomNonZero(&context.span_id);
  context.flags = kSampled;
  return context;
}

TraceContext TraceContext::Child() const {
  TraceContext child = *this;
  // A new span id that differs from the parent's too, so the two spans stay distinguishable.
  do {
    FillRandomNonZero(&child.span_id);
  } while (child.span_id == span_id);
  return child;
}

std::string TraceContext::ToTraceparent() const {
  std::string out;
  out.reserve(kTraceparentLength);
  out.append("00-");
  AppendHex(trace_id.data(), trace_id.size(), &out);
  out.push_back('-');
  AppendHex(span_id.data(), span_id.size(), &out);
  out.push_back('-');
  AppendHex(&flags, 1, &out);
  return out;
}

std::string TraceContext::TraceIdHex() const {
  std::string out;
  out.reserve(2 * trace_id.size());
  AppendHex(trace_id.data(), trace_id.size(), &out);
  return out;
}

std::string TraceContext::SpanIdHex() const {
  std::string out;
  out.reserve(2 * span_id.size());
  AppendHex(span_id.data(), span_id.size(), &out);
  return out;
}

}  // namespace vigil
