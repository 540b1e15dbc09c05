// TraceContext: the W3C Trace Context `traceparent` header (https://www.w3.org/TR/trace-context/),
// so that a payment's screening shows up inside the caller's distributed trace and vigil's logs
// can be joined with it on the trace id.
//
//   traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
//                ^^ version  ^^ trace-id (16 bytes)  ^^ parent-id (8 bytes)  ^^ flags (01: sampled)
//
// Per request: take the caller's context when its header parses, else start a new trace (what
// the specification asks for an absent or invalid header), then work under a span of our own:
//
//   std::optional<TraceContext> parent = TraceContext::Parse(request.header("traceparent"));
//   const TraceContext ours = parent ? parent->Child() : TraceContext::Generate();
//   response.set_header("traceparent", ours.ToTraceparent());
//   const std::string trace_id = ours.TraceIdHex();  // RequestLogEntry::trace_id views it
//
// Thread safety: a value type. Generate() and Child() are safe for concurrent use: each thread
// draws from its own generator.
#ifndef VIGIL_SERVER_TRACE_CONTEXT_H_
#define VIGIL_SERVER_TRACE_CONTEXT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vigil {

struct TraceContext {
  // The sampled bit of the flags: the caller may be recording this trace.
  static constexpr uint8_t kSampled = 0x01;

  // All zeros is invalid for both ids; Parse() never returns it and Generate() never makes it.
  std::array<uint8_t, 16> trace_id{};
  std::array<uint8_t, 8> span_id{};  // the traceparent's parent-id: the sender's span
  uint8_t flags = 0;

  // Parses a traceparent header value. Optional whitespace (spaces, tabs) around it is ignored,
  // as HTTP does for any field value. Version 00: exactly "00-<32 lowercase hex>-<16 lowercase
  // hex>-<2 lowercase hex>", the version and flags lowercase too (HEXDIGLC in the spec);
  // trace-id and parent-id must not be all zeros. Version "ff" is invalid. A higher version
  // (two lowercase hex digits) is accepted if its first 55 characters parse as above and the
  // 56th, if any, is '-' (fields a later version appends); of its flags only the sampled bit is
  // kept, as the other bits may mean something else there. Anything else: nullopt, for which
  // the spec says to start a new trace.
  static std::optional<TraceContext> Parse(std::string_view header);

  // A new trace: random trace-id and span-id, neither all zeros, from a thread-local generator
  // seeded from the operating system's entropy (absl::BitGen), with flags kSampled.
  static TraceContext Generate();

  // The same trace with a new random span-id (vigil's own span) and the same flags.
  TraceContext Child() const;

  bool sampled() const { return (flags & kSampled) != 0; }

  // "00-<trace-id>-<span-id>-<flags>", lowercase hex: 55 characters.
  std::string ToTraceparent() const;
  // 32 lowercase hex digits.
  std::string TraceIdHex() const;
  // 16 lowercase hex digits.
  std::string SpanIdHex() const;

  friend bool operator==(const TraceContext&, const TraceContext&) = default;
};

}  // namespace vigil

#endif  // VIGIL_SERVER_TRACE_CONTEXT_H_
