#include "vigil/cases/case_event.h"

#include <chrono>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/status_matchers.h"

namespace vigil::cases {
namespace {

using ::testing::HasSubstr;

CaseEvent Closing() {
  CaseEvent e;
  e.kind = CaseEventKind::kProposeClose;
  e.case_id = "case-17";
  e.actor = "alice";
  e.at = FromUnixMicros(1'796'032'800'123'456);
  e.text = "Salary payments from the employer \"ACME\"; documents on file.";
  e.outcome = CaseOutcome::kNotSuspicious;
  return e;
}

TEST(CaseEventTest, AnEventReadsBackAsItWasWritten) {
  const CaseEvent e = Closing();
  const std::string json = CaseEventToJson(e);
  ASSERT_OK_AND_ASSIGN(CaseEvent back, CaseEventFromJson(json));
  EXPECT_EQ(back.kind, e.kind);
  EXPECT_EQ(back.case_id, e.case_id);
  EXPECT_EQ(back.actor, e.actor);
  EXPECT_EQ(back.at, e.at);
  EXPECT_EQ(back.text, e.text);
  EXPECT_EQ(back.outcome, e.outcome);
  EXPECT_EQ(CaseEventToJson(back), json);  // canonical
  const nlohmann::json j = nlohmann::json::parse(json);
  EXPECT_EQ(j["source"], "cases");
  EXPECT_EQ(j["kind"], "propose_close");
  EXPECT_EQ(j["outcome"], "not_suspicious");
  EXPECT_EQ(j["at"], "2026-11-30T10:00:00.123456Z");
}

TEST(CaseEventTest, AScreeningReviewCarriesItsHitPartyVerdictAndEnd) {
  CaseEvent e;
  e.kind = CaseEventKind::kReviewHit;
  e.case_id = "case-4";
  e.actor = "token:a";
  e.at = FromUnixMicros(1'796'032'800'000'000);
  e.text = "a namesake: different date of birth";
  e.alert = 4;
  e.hit = "OFAC SDN:36";
  e.party = "account:A2";
  e.verdict = HitVerdict::kCleared;
  e.expires = e.at + std::chrono::hours(24 * 90);
  const std::string json = CaseEventToJson(e);
  ASSERT_OK_AND_ASSIGN(CaseEvent back, CaseEventFromJson(json));
  EXPECT_EQ(back.alert, 4u);
  EXPECT_EQ(back.hit, e.hit);
  EXPECT_EQ(back.party, e.party);
  EXPECT_EQ(back.verdict, HitVerdict::kCleared);
  EXPECT_EQ(back.expires, e.expires);
  EXPECT_EQ(CaseEventToJson(back), json);
  // A true match has no end; an end on it, or review fields on a note, are refused.
  e.verdict = HitVerdict::kTrueMatch;
  const std::string matched = CaseEventToJson(e);
  EXPECT_EQ(nlohmann::json::parse(matched).count("expires"), 0u);
  nlohmann::json bad = nlohmann::json::parse(matched);
  bad["expires"] = "2027-01-01T00:00:00Z";
  EXPECT_THAT(CaseEventFromJson(bad.dump()).status().message(), HasSubstr("\"expires\""));
  nlohmann::json note = nlohmann::json::parse(CaseEventToJson(Closing()));
  note["hit"] = "OFAC SDN:36";
  EXPECT_THAT(CaseEventFromJson(note.dump()).status().message(), HasSubstr("\"hit\""));
  for (const char* name : {"true_match", "false_match", "cleared"}) {
    ASSERT_OK_AND_ASSIGN(HitVerdict v, ParseHitVerdict(name));
    EXPECT_EQ(HitVerdictName(v), name);
  }
  EXPECT_FALSE(ParseHitVerdict("maybe").ok());
}

TEST(CaseEventTest, EveryKindAndOutcomeHasOneName) {
  for (int k = 0; k <= static_cast<int>(CaseEventKind::kReviewHit); ++k) {
    const auto kind = static_cast<CaseEventKind>(k);
    ASSERT_OK_AND_ASSIGN(CaseEventKind back, ParseCaseEventKind(CaseEventKindName(kind)));
    EXPECT_EQ(back, kind);
  }
  for (const char* name :
       {"suspicious_reported", "not_suspicious", "false_positive", "valuable_alert"}) {
    ASSERT_OK_AND_ASSIGN(CaseOutcome o, ParseCaseOutcome(name));
    EXPECT_EQ(CaseOutcomeName(o), name);
  }
  EXPECT_TRUE(IsSuspicious(CaseOutcome::kSuspiciousReported));
  EXPECT_FALSE(IsSuspicious(CaseOutcome::kValuableAlert));
  EXPECT_THAT(ParseCaseOutcome("none").status().message(),
              HasSubstr("one of suspicious_reported, not_suspicious"));
}

TEST(CaseEventTest, AMalformedEventIsRefusedNamingTheField) {
  const auto refused = [](nlohmann::json j) {
    absl::StatusOr<CaseEvent> e = CaseEventFromJson(j.dump());
    EXPECT_FALSE(e.ok()) << j.dump();
    return std::string(e.status().message());
  };
  const nlohmann::json good = nlohmann::json::parse(CaseEventToJson(Closing()));
  nlohmann::json j = good;
  j["source"] = "drift";
  EXPECT_THAT(refused(j), HasSubstr("\"source\" is not \"cases\""));
  j = good;
  j.erase("case");
  EXPECT_THAT(refused(j), HasSubstr("\"case\" is missing"));
  j = good;
  j["kind"] = "delete";
  EXPECT_THAT(refused(j), HasSubstr("\"kind\" unknown case event \"delete\""));
  j = good;
  j["kind"] = "note";
  EXPECT_THAT(refused(j), HasSubstr("\"outcome\" is not part of a note event"));
  j = good;
  j.erase("outcome");
  EXPECT_THAT(refused(j), HasSubstr("\"outcome\" is missing"));
  j = good;
  j["outcome"] = "maybe";
  EXPECT_THAT(refused(j), HasSubstr("unknown outcome \"maybe\""));
  j = good;
  j["at"] = "yesterday";
  EXPECT_THAT(refused(j), HasSubstr("\"at\""));
  j = good;
  j["text"] = std::string(kMaxCaseText + 1, 'x');
  EXPECT_THAT(refused(j), HasSubstr("\"text\" is longer than 16384 bytes"));
  j = good;
  j["actor"] = 7;
  EXPECT_THAT(refused(j), HasSubstr("\"actor\" must be a string"));
  EXPECT_FALSE(CaseEventFromJson("[1,2").ok());
}

}  // namespace
}  // namespace vigil::cases
