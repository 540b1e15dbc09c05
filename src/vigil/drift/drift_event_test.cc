#include "vigil/drift/drift_event.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::vigil::testing::StatusIs;

// 2026-11-30T05:00:10Z.
constexpr int64_t kTimeMicros = 1'796'014'810'000'000;

DriftEvent FullEvent() {
  DriftEvent e;
  e.id = 17;
  e.time = FromUnixMicros(kTimeMicros);
  e.recorded_at = FromUnixMicros(kTimeMicros + 123'456);
  e.kind = std::string(kLevelChange);
  e.subject = "amount_reporting";
  e.window = "short";
  e.from = DriftLevel::kL1;
  e.to = DriftLevel::kL2;
  e.severity = 0.73125;
  e.score = 0.0412;
  e.detail = "psi 0.31 \"quoted\"";
  return e;
}

// Field by field in the failure message, through the event's JSON.
void ExpectSameEvent(const DriftEvent& a, const DriftEvent& b) {
  EXPECT_EQ(a, b) << DriftEventToJson(a) << "\n  vs " << DriftEventToJson(b);
}

TEST(DriftEventJson, WritesTheDocumentedForm) {
  EXPECT_EQ(DriftEventToJson(FullEvent()),
            R"({"id":17,"time":"2026-11-30T05:00:10.000000Z",)"
            R"("recorded_at":"2026-11-30T05:00:10.123456Z","kind":"level_change",)"
            R"("subject":"amount_reporting","window":"short","from":"L1","to":"L2",)"
            R"("severity":0.73125,"score":0.0412,"detail":"psi 0.31 \"quoted\""})");
}

TEST(DriftEventJson, RoundTripsEveryMember) {
  DriftEvent e = FullEvent();
  // Values that a lossy writer would change: a large id, sub-millisecond times, doubles that
  // need 17 significant digits.
  e.id = (uint64_t{1} << 63) + 5;
  e.time = FromUnixMicros(kTimeMicros + 1);
  e.recorded_at = FromUnixMicros(kTimeMicros + 999'999);
  e.kind = std::string(kFreeze);
  e.subject = "monitor";
  e.window = "long";
  e.from = DriftLevel::kL2;
  e.to = DriftLevel::kL3;
  e.severity = 0.1 + 0.2;
  e.score = -1.0 / 3;
  e.detail = "features: amount_reporting, hour_of_day\nline two \xc3\xa9";
  ASSERT_OK_AND_ASSIGN(const DriftEvent back, DriftEventFromJson(DriftEventToJson(e)));
  ExpectSameEvent(back, e);
}

TEST(DriftEventJson, RoundTripsEveryLevel) {
  for (DriftLevel level : {DriftLevel::kNone, DriftLevel::kL1, DriftLevel::kL2, DriftLevel::kL3}) {
    SCOPED_TRACE(DriftLevelName(level));
    DriftEvent e = FullEvent();
    e.from = level;
    e.to = level;
    const std::string json = DriftEventToJson(e);
    const std::string_view name = DriftLevelName(level);
    EXPECT_THAT(json, HasSubstr("\"to\":\"" + std::string(name) + "\""));
    ASSERT_OK_AND_ASSIGN(const DriftEvent back, DriftEventFromJson(json));
    EXPECT_EQ(back.from, level);
    EXPECT_EQ(back.to, level);
  }
}

TEST(DriftEventJson, OmitsEmptyWindowAndDetail) {
  DriftEvent e = FullEvent();
  e.kind = std::string(kRetrainRequested);
  e.subject = "monitor";
  e.window.clear();
  e.detail.clear();
  const std::string json = DriftEventToJson(e);
  EXPECT_THAT(json, Not(HasSubstr("window")));
  EXPECT_THAT(json, Not(HasSubstr("detail")));
  ASSERT_OK_AND_ASSIGN(const DriftEvent back, DriftEventFromJson(json));
  ExpectSameEvent(back, e);
}

TEST(DriftEventJson, NonFiniteNumbersAreWrittenAsNullAndReadAsNaN) {
  DriftEvent e = FullEvent();
  e.severity = std::numeric_limits<double>::quiet_NaN();
  e.score = -std::numeric_limits<double>::infinity();
  const std::string json = DriftEventToJson(e);
  EXPECT_THAT(json, HasSubstr(R"("severity":null,"score":null)"));
  ASSERT_OK_AND_ASSIGN(const DriftEvent back, DriftEventFromJson(json));
  EXPECT_TRUE(std::isnan(back.severity));
  EXPECT_TRUE(std::isnan(back.score));
}

TEST(DriftEventJson, InvalidUtf8InTextStillGivesValidJson) {
  DriftEvent e = FullEvent();
  e.detail = "bad \xff byte";
  ASSERT_OK_AND_ASSIGN(const DriftEvent back, DriftEventFromJson(DriftEventToJson(e)));
  EXPECT_EQ(back.detail, "bad \xef\xbf\xbd byte");  // U+FFFD
}

TEST(DriftEventJson, ReadsAnyMemberOrderIntegersOffsetsAndIgnoresUnknownMembers) {
  ASSERT_OK_AND_ASSIGN(
      const DriftEvent e,
      DriftEventFromJson(R"({"score":2,"severity":1,"to":"L3","from":"none","subject":"s",)"
                         R"("kind":"critical","recorded_at":"2026-11-30T06:00:10+01:00",)"
                         R"("time":"2026-11-30T05:00:10Z","id":0,"future_member":[1,2]})"));
  EXPECT_EQ(e.id, 0u);
  EXPECT_EQ(e.time, FromUnixMicros(kTimeMicros));
  EXPECT_EQ(e.recorded_at, FromUnixMicros(kTimeMicros));
  EXPECT_EQ(e.kind, kCritical);
  EXPECT_EQ(e.subject, "s");
  EXPECT_EQ(e.window, "");
  EXPECT_EQ(e.from, DriftLevel::kNone);
  EXPECT_EQ(e.to, DriftLevel::kL3);
  EXPECT_EQ(e.severity, 1.0);
  EXPECT_EQ(e.score, 2.0);
  EXPECT_EQ(e.detail, "");
}

// The members of a valid event as raw JSON text, in the documented order.
std::vector<std::pair<std::string, std::string>> ValidMembers() {
  return {{"id", "17"},
          {"time", R"("2026-11-30T05:00:10.000000Z")"},
          {"recorded_at", R"("2026-11-30T05:00:10.123456Z")"},
          {"kind", R"("level_change")"},
          {"subject", R"("amount_reporting")"},
          {"window", R"("short")"},
          {"from", R"("L1")"},
          {"to", R"("L2")"},
          {"severity", "0.73125"},
          {"score", "0.0412"},
          {"detail", R"("x")"}};
}

// A valid event with member "name" replaced by "raw" (removed when nullopt).
std::string WithMember(const std::string& name, const std::optional<std::string>& raw) {
  std::string json = "{";
  for (const auto& [member, value] : ValidMembers()) {
    const std::string* text = &value;
    if (member == name) {
      if (!raw.has_value()) continue;
      text = &*raw;
    }
    absl::StrAppend(&json, json.size() > 1 ? "," : "", "\"", member, "\":", *text);
  }
  return json + "}";
}

TEST(DriftEventJson, TheValidMembersParse) {
  EXPECT_OK(DriftEventFromJson(WithMember("", std::nullopt)));
}

TEST(DriftEventJson, ErrorsNameTheMalformedMember) {
  struct Case {
    std::string member;
    std::optional<std::string> raw;  // nullopt: the member is removed
    std::string message;             // expected in the error
  };
  const Case cases[] = {
      {"id", std::nullopt, "member 'id': missing"},
      {"id", R"("17")", "member 'id': not a non-negative integer"},  // a string, not a number
      {"id", "-1", "member 'id': not a non-negative integer"},
      {"id", "1.5", "member 'id': not a non-negative integer"},
      {"time", std::nullopt, "member 'time': missing"},
      {"time", R"("yesterday")", "member 'time': not an RFC 3339 time"},
      {"time", "1796014810", "member 'time': not an RFC 3339 time"},  // Unix seconds: not a time
      {"recorded_at", std::nullopt, "member 'recorded_at': missing"},
      // Month 13: the shape is right, the date is not.
      {"recorded_at", R"("2026-13-30T05:00:10Z")", "member 'recorded_at': not an RFC 3339 time"},
      {"kind", std::nullopt, "member 'kind': missing"},
      {"kind", "3", "member 'kind': not a string"},
      {"subject", std::nullopt, "member 'subject': missing"},
      {"subject", "null", "member 'subject': not a string"},
      {"window", "1", "member 'window': not a string"},  // optional, but a string when present
      {"from", std::nullopt, "member 'from': missing"},
      {"from", R"("L4")", "member 'from': not \"none\", \"L1\", \"L2\" or \"L3\": 'L4'"},
      {"to", R"("l2")", "member 'to':"},  // names are case-sensitive
      {"to", "2", "member 'to':"},        // the name, not the number
      {"severity", std::nullopt, "member 'severity': missing"},
      {"severity", R"("high")", "member 'severity': not a number or null"},
      {"score", "true", "member 'score': not a number or null"},
      {"score", std::nullopt, "member 'score': missing"},
      {"detail", "[]", "member 'detail': not a string"},
  };
  for (const Case& c : cases) {
    const std::string json = WithMember(c.member, c.raw);
    SCOPED_TRACE(json);
    EXPECT_THAT(DriftEventFromJson(json),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat("drift event: ", c.message))));
  }
}

TEST(DriftEventJson, LongBadLevelIsQuotedOnlyInPart) {
  const std::string json = WithMember("to", absl::StrCat("\"", std::string(1000, 'x'), "\""));
  const auto event = DriftEventFromJson(json);
  EXPECT_THAT(event, StatusIs(absl::StatusCode::kInvalidArgument,
                              HasSubstr("member 'to': not \"none\", \"L1\", \"L2\" or \"L3\": "
                                        "'xxxxxxxxxxxxxxxx...'")));
  EXPECT_LT(event.status().message().size(), 100u);
}

TEST(DriftEventJson, RejectsTextThatIsNotAJsonObject) {
  EXPECT_THAT(DriftEventFromJson(""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not valid JSON")));
  EXPECT_THAT(DriftEventFromJson(R"({"id":1)"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not valid JSON")));
  EXPECT_THAT(DriftEventFromJson(WithMember("", std::nullopt) + "x"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not valid JSON")));
  EXPECT_THAT(DriftEventFromJson("[1,2]"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a JSON object")));
  EXPECT_THAT(DriftEventFromJson("null"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a JSON object")));
}

}  // namespace
}  // namespace vigil::drift
