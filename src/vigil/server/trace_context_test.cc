#include "vigil/server/trace_context.h"

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil {
namespace {

using ::testing::ElementsAre;

// The example of the specification (section 3.2.2, "traceparent Header Field Values").
constexpr std::string_view kSpecExample = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContext, ParsesTheSpecExample) {
  const std::optional<TraceContext> c = TraceContext::Parse(kSpecExample);
  ASSERT_TRUE(c.has_value());
  EXPECT_THAT(c->trace_id, ElementsAre(0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce,
                                       0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36));
  EXPECT_THAT(c->span_id, ElementsAre(0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7));
  EXPECT_EQ(c->flags, 0x01);
  EXPECT_TRUE(c->sampled());
  EXPECT_EQ(c->TraceIdHex(), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(c->SpanIdHex(), "00f067aa0ba902b7");
  EXPECT_EQ(c->ToTraceparent(), kSpecExample);
}

TEST(TraceContext, RoundTripsFlags) {
  // Not sampled; and a version-00 flag byte with other bits, carried as received.
  for (std::string_view header : {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
                                  "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03",
                                  "00-0000000000000000000000000000000a-0000000000000001-ff"}) {
    const std::optional<TraceContext> c = TraceContext::Parse(header);
    ASSERT_TRUE(c.has_value()) << header;
    EXPECT_EQ(c->ToTraceparent(), header);
    EXPECT_EQ(TraceContext::Parse(c->ToTraceparent()), c);
  }
  EXPECT_FALSE(
      TraceContext::Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")->sampled());
}

TEST(TraceContext, RejectsInvalidHeaders) {
  const std::string trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const std::string span = "00f067aa0ba902b7";
  // Each is invalid for the reason beside it (most from the W3C test suite, test/test.py).
  const std::vector<std::string> invalid = {
      "",                                         // absent
      "00",                                       // too short
      "00-" + trace + "-" + span,                 // no flags
      "00-" + trace + "-" + span + "-0",          // flags too short
      "00-" + trace + "-" + span + "-011",        // flags too long
      "00-" + trace + "-" + span + "-.0",         // flags not hex
      "00-" + trace + "-" + span + "-0G",         // flags not hex
      "00-" + trace + "-" + span + "-0A",         // flags uppercase (HEXDIGLC)
      "00-" + trace + "-" + span + "-01.",        // version 00 has exactly 55 characters
      "00-" + trace + "-" + span + "-01-future",  // ... also no extra fields
      "0-" + trace + "-" + span + "-01",          // version too short
      "000-" + trace + "-" + span + "-01",        // version too long
      ".0-" + trace + "-" + span + "-01",         // version not hex
      "0A-" + trace + "-" + span + "-01",         // version uppercase
      "ff-" + trace + "-" + span + "-01",         // version ff is forbidden
      "ff-" + trace + "-" + span + "-01-future",  // ... with extra fields too
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-" + span + "-01",   // trace-id uppercase
      "00-4bf92f3577b34da6a3ce929d0e0e473-" + span + "-01",    // trace-id 31 digits
      "00-4bf92f3577b34da6a3ce929d0e0e47366-" + span + "-01",  // trace-id 33 digits
      "00-.bf92f3577b34da6a3ce929d0e0e4736-" + span + "-01",   // trace-id not hex
      "00-00000000000000000000000000000000-" + span + "-01",   // trace-id all zeros
      "00-" + trace + "-00F067AA0BA902B7-01",                  // parent-id uppercase
      "00-" + trace + "-00f067aa0ba902b-01",                   // parent-id 15 digits
      "00-" + trace + "-00f067aa0ba902b77-01",                 // parent-id 17 digits
      "00-" + trace + "-00f067aa0ba902b.-01",                  // parent-id not hex
      "00-" + trace + "-0000000000000000-01",                  // parent-id all zeros
      "00_" + trace + "-" + span + "-01",                      // wrong delimiter
      "00-" + trace + "_" + span + "-01",                      // wrong delimiter
      "00-" + trace + "-" + span + "_01",                      // wrong delimiter
      "00 " + trace + " " + span + " 01",                      // wrong delimiter
      "cc-" + trace + "-" + span + "-01.future",               // a later version: 56th must be '-'
      "cc-" + trace + "-" + span + "-0",        // a later version: still >= 55 characters
      "cc-" + trace + "-00000000000000000-01",  // a later version: same field checks
      "\n00-" + trace + "-" + span + "-01",     // not optional whitespace
      "00-" + trace + "-" + span + std::string("-01\0", 4),  // NUL is not whitespace either
  };
  for (const std::string& header : invalid) {
    EXPECT_EQ(TraceContext::Parse(header), std::nullopt) << "'" << header << "'";
  }
}

TEST(TraceContext, AcceptsLaterVersionsAndOptionalWhitespace) {
  const std::string trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const std::string span = "00f067aa0ba902b7";
  const std::optional<TraceContext> expected = TraceContext::Parse(kSpecExample);
  ASSERT_TRUE(expected.has_value());
  // Each parses as the spec example.
  const std::vector<std::string> valid = {
      "cc-" + trace + "-" + span + "-01",                               // later version
      "cc-" + trace + "-" + span + "-01-what-the-future-will-be-like",  // with its new fields
      "01-" + trace + "-" + span + "-01-",                              // 56th is '-'
      "fe-" + trace + "-" + span + "-01",                               // the highest version
      " " + std::string(kSpecExample),                                  // optional whitespace
      "\t" + std::string(kSpecExample) + " \t",
  };
  for (const std::string& header : valid) {
    EXPECT_EQ(TraceContext::Parse(header), expected) << "'" << header << "'";
  }
  // A later version's flags keep only the sampled bit; its re-emitted header is version 00.
  const std::optional<TraceContext> later = TraceContext::Parse("cc-" + trace + "-" + span + "-ff");
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(later->flags, TraceContext::kSampled);
  EXPECT_EQ(later->ToTraceparent(), kSpecExample);
  EXPECT_EQ(TraceContext::Parse("cc-" + trace + "-" + span + "-fe")->flags, 0);
}

TEST(TraceContext, GeneratesValidUniqueSampledContexts) {
  absl::flat_hash_set<std::string> trace_ids;
  absl::flat_hash_set<std::string> span_ids;
  constexpr int kCount = 10'000;
  for (int i = 0; i < kCount; ++i) {
    const TraceContext c = TraceContext::Generate();
    const std::string header = c.ToTraceparent();
    // Parse checks the rest: lowercase hex, delimiters, non-zero ids.
    ASSERT_EQ(TraceContext::Parse(header), c) << header << " must be valid";
    ASSERT_EQ(header.substr(0, 3), "00-");
    ASSERT_EQ(header.substr(52), "-01");
    EXPECT_TRUE(c.sampled());
    trace_ids.insert(c.TraceIdHex());
    span_ids.insert(c.SpanIdHex());
  }
  // 128 and 64 random bits: a collision among 10,000 has probability below 3e-12.
  EXPECT_EQ(trace_ids.size(), static_cast<size_t>(kCount));
  EXPECT_EQ(span_ids.size(), static_cast<size_t>(kCount));
}

TEST(TraceContext, EveryBitOfTheIdsVaries) {
  // A generator that left a byte constant (say, filling only 8 of 16) would fail here: over 256
  // draws, each of the 192 bits is 0 at least once and 1 at least once but with 2^-255.
  std::array<uint8_t, 16> trace_or{}, trace_and;
  std::array<uint8_t, 8> span_or{}, span_and;
  trace_and.fill(0xff);
  span_and.fill(0xff);
  for (int i = 0; i < 256; ++i) {
    const TraceContext c = TraceContext::Generate();
    for (size_t k = 0; k < 16; ++k) {
      trace_or[k] |= c.trace_id[k];
      trace_and[k] &= c.trace_id[k];
    }
    for (size_t k = 0; k < 8; ++k) {
      span_or[k] |= c.span_id[k];
      span_and[k] &= c.span_id[k];
    }
  }
  for (size_t k = 0; k < 16; ++k) {
    EXPECT_EQ(trace_or[k], 0xff) << "trace-id byte " << k;
    EXPECT_EQ(trace_and[k], 0x00) << "trace-id byte " << k;
  }
  for (size_t k = 0; k < 8; ++k) {
    EXPECT_EQ(span_or[k], 0xff) << "span-id byte " << k;
    EXPECT_EQ(span_and[k], 0x00) << "span-id byte " << k;
  }
}

TEST(TraceContext, ChildKeepsTraceAndFlagsWithANewSpan) {
  const std::optional<TraceContext> parent =
      TraceContext::Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(parent.has_value());
  const TraceContext child = parent->Child();
  EXPECT_EQ(child.trace_id, parent->trace_id);
  EXPECT_EQ(child.flags, parent->flags) << "an unsampled caller stays unsampled";
  EXPECT_NE(child.span_id, parent->span_id);
  EXPECT_EQ(TraceContext::Parse(child.ToTraceparent()), child);
  EXPECT_NE(parent->Child().span_id, child.span_id);
}

TEST(TraceContext, GenerateFromManyThreads) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2'000;
  std::vector<std::vector<std::string>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&ids, t] {
      for (int i = 0; i < kPerThread; ++i) ids[t].push_back(TraceContext::Generate().TraceIdHex());
    });
  }
  for (std::thread& t : threads) t.join();
  absl::flat_hash_set<std::string> all;
  for (const auto& per_thread : ids) all.insert(per_thread.begin(), per_thread.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kPerThread))
      << "threads must not share (or repeat) a generator's sequence";
}

}  // namespace
}  // namespace vigil
