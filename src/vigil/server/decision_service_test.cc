#include "vigil/server/decision_service.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/batching/batching_scorer.h"
#include "vigil/drift/drift_monitor.h"
#include "vigil/drift/drift_tap.h"
#include "vigil/drift/reference_profile.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;

constexpr char kPolicy[] = R"(version: "svc"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: count
    when: amount_reporting > 5000
    action: review
    reason: "{orig_out_count_24h} sent in 24 h"
)";

std::string Tx(const std::string& id, const std::string& currency = "USD",
               const std::string& value = "9000.00") {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":"2022-09-01T08:00:00Z",)",
                      R"("originator":{"account_id":"A1","bank_id":"B1"},)",
                      R"("beneficiary":{"account_id":"A2","bank_id":"B2"},)",
                      R"("amount":{"value":")", value, R"(","currency":")", currency, R"("}})");
}

class DecisionServiceTest : public ::testing::Test {
 protected:
  DecisionServiceTest() {
    // The payments below are dated 2022-09-01 08:00; the server's clock is a little later.
    clock_.Set(FromUnixMicros(1'662'022'800'000'000));  // 2022-09-01T09:00:00Z
    auto fx =
        FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\nEUR,0.5\n", "test");
    EXPECT_TRUE(fx.ok()) << fx.status();
    fx_ = *std::move(fx);
    PolicyInputLayout layout(FeatureExtractor::Schema());
    auto policy = Policy::Parse(kPolicy, "p.yaml", layout, ListLibrary{});
    EXPECT_TRUE(policy.ok()) << policy.status();
    service_ = std::make_unique<DecisionService>(
        fx_, DecisionServiceOptions{}, std::make_shared<DecisionMaker>(*policy, nullptr, layout),
        clock_);
  }

  FxRates fx_ = *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\n", "x");
  testing::FakeClock clock_;
  std::unique_ptr<DecisionService> service_;
};

TEST_F(DecisionServiceTest, DecidesAndARepeatedIdGetsTheFirstDecision) {
  const DecisionService::Reply first = service_->Score(Tx("t1"));
  ASSERT_EQ(first.status, 200) << first.body;
  const nlohmann::json j = nlohmann::json::parse(first.body);
  EXPECT_EQ(j["transaction_id"], "t1");
  EXPECT_EQ(j["action"], "REVIEW");
  EXPECT_EQ(j["reasons"][0]["text"], "1 sent in 24 h");
  EXPECT_EQ(j["policy_version"].get<std::string>().substr(0, 4), "svc@");
  // The same id again: the same reply byte for byte (same trace id), features untouched.
  EXPECT_EQ(service_->Score(Tx("t1")).body, first.body);
  // The same payment written otherwise (members reordered, white space, 9000.0 for 9000.00).
  const std::string rewritten = absl::StrCat(
      R"({ "amount": {"currency":"USD","value":"9000.0"}, "id":"t1",)",
      R"( "beneficiary":{"bank_id":"B2","account_id":"A2"},)",
      R"( "originator":{"account_id":"A1","bank_id":"B1"}, "timestamp":"2022-09-01T08:00:00Z" })");
  EXPECT_EQ(service_->Score(rewritten).body, first.body);
  const nlohmann::json next = nlohmann::json::parse(service_->Score(Tx("t2")).body);
  EXPECT_EQ(next["reasons"][0]["text"], "2 sent in 24 h");  // not 4: t1 counted once
}

// The same id with another payment (900,000 instead of 9,000) is refused, never answered with
// the first payment's decision, and changes nothing.
TEST_F(DecisionServiceTest, ARepeatedIdWithAnotherPaymentIsAConflict) {
  MetricsRegistry metrics;
  ASSERT_OK(service_->RegisterMetrics(metrics));
  const DecisionService::Reply first = service_->Score(Tx("t1"));
  ASSERT_EQ(first.status, 200) << first.body;
  const DecisionService::Reply other = service_->Score(Tx("t1", "USD", "900000.00"));
  EXPECT_EQ(other.status, 409) << other.body;
  EXPECT_EQ(other.error_code, "idempotency_conflict");
  const nlohmann::json e = nlohmann::json::parse(other.body);
  EXPECT_EQ(e["error"]["code"], "idempotency_conflict");
  EXPECT_EQ(e["error"]["field"], "$.id");
  EXPECT_THAT(e["error"]["message"].get<std::string>(), HasSubstr("\"t1\""));
  // Another beneficiary is another payment too.
  std::string mule = Tx("t1");
  mule.replace(mule.find("\"A2\""), 4, "\"MULE\"");
  EXPECT_EQ(service_->Score(mule).status, 409);
  EXPECT_THAT(metrics.RenderPrometheusText(), HasSubstr("vigil_idempotency_conflicts_total 2"));
  // Nothing was counted for the refused ones, and the first stays the id's answer.
  EXPECT_EQ(service_->Score(Tx("t1")).body, first.body);
  const nlohmann::json next = nlohmann::json::parse(service_->Score(Tx("t2")).body);
  EXPECT_EQ(next["reasons"][0]["text"], "2 sent in 24 h");
}

TEST_F(DecisionServiceTest, ABatchWithOneIdForTwoPaymentsRefusesTheSecond) {
  const std::string body = absl::StrCat("[", Tx("b1"), ",", Tx("b1", "USD", "1.00"), ",",
                                        Tx("b1"), "]");
  const nlohmann::json j = nlohmann::json::parse(service_->ScoreBatch(body).body);
  ASSERT_EQ(j["results"].size(), 3u);
  EXPECT_EQ(j["results"][0]["action"], "REVIEW");
  EXPECT_EQ(j["results"][1]["status"], 409);
  EXPECT_EQ(j["results"][1]["error"]["code"], "idempotency_conflict");
  EXPECT_EQ(j["results"][2], j["results"][0]);  // the same payment again: the same answer
}

// One payment dated far ahead must not move the lateness watermark: it is refused, and every
// real payment after it is still heard.
TEST_F(DecisionServiceTest, AnEventDatedPastTheClockBoundIsRefusedAndChangesNothing) {
  MetricsRegistry metrics;
  ASSERT_OK(service_->RegisterMetrics(metrics));
  std::string poison = Tx("p2099");
  poison.replace(poison.find("2022-09-01T08:00:00Z"), 20, "2099-01-01T00:00:00Z");
  const DecisionService::Reply refused = service_->Score(poison);
  EXPECT_EQ(refused.status, 422) << refused.body;
  EXPECT_EQ(refused.error_code, "event_in_future");
  const nlohmann::json e = nlohmann::json::parse(refused.body);
  EXPECT_EQ(e["error"]["field"], "$.timestamp");
  const std::string message = e["error"]["message"];
  EXPECT_THAT(message, HasSubstr("2099-01-01T00:00:00"));  // the event time
  EXPECT_THAT(message, HasSubstr("2022-09-01T09:00:00"));  // the server's
  EXPECT_THAT(message, HasSubstr("300 s"));                // the bound
  EXPECT_THAT(metrics.RenderPrometheusText(), HasSubstr("vigil_event_in_future_total 1"));
  // Just inside the bound (a sender's clock 4 minutes fast) is accepted.
  std::string fast = Tx("fast");
  fast.replace(fast.find("2022-09-01T08:00:00Z"), 20, "2022-09-01T09:04:00Z");
  EXPECT_EQ(service_->Score(fast).status, 200);
  // That moved the watermark to 09:04 at most: a payment 5 minutes behind the clock is
  // within the 10 minutes' lateness of it, and heard.
  std::string real = Tx("real");
  real.replace(real.find("2022-09-01T08:00:00Z"), 20, "2022-09-01T08:55:00Z");
  EXPECT_EQ(service_->Score(real).status, 200);
  // The refused id was not remembered: the corrected payment is decided.
  std::string corrected = Tx("p2099");
  corrected.replace(corrected.find("2022-09-01T08:00:00Z"), 20, "2022-09-01T08:58:00Z");
  EXPECT_EQ(service_->Score(corrected).status, 200);
  // In a batch the item alone is refused.
  const nlohmann::json j = nlohmann::json::parse(
      service_->ScoreBatch(absl::StrCat("[", poison, ",", Tx("b-ok"), "]")).body);
  EXPECT_EQ(j["results"][0]["status"], 422);
  EXPECT_EQ(j["results"][0]["error"]["code"], "event_in_future");
}

TEST_F(DecisionServiceTest, BadBodiesAre400AndRefusedTransactions422) {
  const DecisionService::Reply bad = service_->Score(R"({"id":"x","amount":{"value":"1,5"}})");
  EXPECT_EQ(bad.status, 400);
  const nlohmann::json e = nlohmann::json::parse(bad.body);
  EXPECT_FALSE(e["error"]["field"].get<std::string>().empty());
  EXPECT_FALSE(e["error"]["message"].get<std::string>().empty());
  EXPECT_EQ(service_->Score("not json").status, 400);
  // No FX rate for GBP: the features refuse it; a corrected retry with the same id is decided.
  const DecisionService::Reply refused = service_->Score(Tx("t3", "GBP"));
  EXPECT_EQ(refused.status, 422) << refused.body;
  EXPECT_THAT(refused.body, HasSubstr("features_refused"));
  EXPECT_EQ(service_->Score(Tx("t3", "EUR")).status, 200);
}

TEST_F(DecisionServiceTest, ConcurrentDuplicatesAllGetTheOneDecision) {
  std::vector<std::thread> threads;
  std::vector<std::string> bodies(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back(
        [&, i] { bodies[static_cast<size_t>(i)] = service_->Score(Tx("same")).body; });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& b : bodies) EXPECT_EQ(b, bodies[0]);
  const nlohmann::json after = nlohmann::json::parse(service_->Score(Tx("other")).body);
  EXPECT_EQ(after["reasons"][0]["text"], "2 sent in 24 h");
}

// A model path whose queue is always full.
class OverloadedScorer final : public Scorer {
 public:
  const std::string& model_version() const override { return version_; }
  size_t row_width() const override { return FeatureExtractor::Schema()->size(); }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double>, size_t, absl::Span<double>,
                     const ScoreContext& context) const override {
    last_priority = context.priority;
    had_deadline = context.deadline.has_value();
    return absl::ResourceExhaustedError("the batcher's P0 queue is full (1 requests)");
  }
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double>, int) const override {
    return std::vector<Reason>{};
  }
  mutable Priority last_priority = Priority::kP2;
  mutable bool had_deadline = false;

 private:
  std::string version_ = "busy";
};

TEST_F(DecisionServiceTest, AnOverloadedModelPathAnswers503AndTheIdCanBeRetried) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(kPolicy, "p.yaml", layout, ListLibrary{});
  ASSERT_OK(policy);
  auto scorer = std::make_shared<OverloadedScorer>();
  DecisionService service(fx_, DecisionServiceOptions{},
                          std::make_shared<DecisionMaker>(*policy, scorer, layout), clock_);
  std::string body = Tx("busy-1");
  body.insert(body.size() - 1, R"(,"priority":"P0")");
  const DecisionService::Reply reply = service.Score(body);
  EXPECT_EQ(reply.status, 503) << reply.body;
  EXPECT_THAT(reply.body, HasSubstr("overloaded"));
  EXPECT_EQ(scorer->last_priority, Priority::kP0);  // the request's class reached the batcher
  EXPECT_TRUE(scorer->had_deadline);                // with the SLA budget as its deadline
  EXPECT_EQ(service.Score(body).status, 503);       // not cached: a retry is tried again
}

// A model path whose queue expires every call before the model sees it (overload).
class ExpiringScorer final : public Scorer {
 public:
  const std::string& model_version() const override { return version_; }
  size_t row_width() const override { return FeatureExtractor::Schema()->size(); }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double>, size_t, absl::Span<double>,
                     const ScoreContext&) const override {
    return absl::DeadlineExceededError(kExpiredInQueueMessage);
  }
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double>, int) const override {
    return std::vector<Reason>{};
  }

 private:
  std::string version_ = "late";
};

// A decision degraded because its deadline passed in the model's queue says overload, and is
// counted as such.
TEST_F(DecisionServiceTest, ADecisionDegradedByOverloadSaysSoAndIsCounted) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(kPolicy, "p.yaml", layout, ListLibrary{});
  ASSERT_OK(policy);
  DecisionService service(
      fx_, DecisionServiceOptions{},
      std::make_shared<DecisionMaker>(*policy, std::make_shared<ExpiringScorer>(), layout), clock_);
  MetricsRegistry metrics;
  ASSERT_OK(service.RegisterMetrics(metrics));
  const DecisionService::Reply reply = service.Score(Tx("late-1"));
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_TRUE(reply.degraded);
  EXPECT_EQ(reply.degraded_reason, kOverloadReason);
  const nlohmann::json d = nlohmann::json::parse(reply.body);
  EXPECT_EQ(d["degraded"], true);
  EXPECT_EQ(d["degraded_reason"], std::string(kOverloadReason));
  const std::string text = metrics.RenderPrometheusText();
  EXPECT_THAT(text, HasSubstr("vigil_overload_degraded_decisions_total{class=\"P1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("vigil_degraded_decisions_total{class=\"P1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("vigil_shed_total{class=\"P1\",reason=\"batcher\"} 0\n"));
}

// A retry after a 503 is decided on the row computed the first time: the payment is counted once.
TEST_F(DecisionServiceTest, ARetryAfter503CountsThePaymentOnce) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(kPolicy, "p.yaml", layout, ListLibrary{});
  ASSERT_OK(policy);
  // Overloaded first, then fine: a scorer that refuses exactly once.
  class OnceOverloaded final : public Scorer {
   public:
    const std::string& model_version() const override { return version_; }
    size_t row_width() const override { return FeatureExtractor::Schema()->size(); }
    using Scorer::Score;
    absl::Status Score(absl::Span<const double>, size_t n, absl::Span<double> scores,
                       const ScoreContext&) const override {
      if (!refused_) {
        refused_ = true;
        return absl::ResourceExhaustedError("full");
      }
      for (size_t i = 0; i < n; ++i) scores[i] = 0.1;
      return absl::OkStatus();
    }
    absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double>, int) const override {
      return std::vector<Reason>{};
    }

   private:
    mutable bool refused_ = false;
    std::string version_ = "once";
  };
  DecisionService service(
      fx_, DecisionServiceOptions{},
      std::make_shared<DecisionMaker>(*policy, std::make_shared<OnceOverloaded>(), layout), clock_);
  EXPECT_EQ(service.Score(Tx("r1")).status, 503);
  const DecisionService::Reply retry = service.Score(Tx("r1"));
  ASSERT_EQ(retry.status, 200) << retry.body;
  EXPECT_EQ(nlohmann::json::parse(retry.body)["reasons"][0]["text"], "1 sent in 24 h");
  EXPECT_EQ(nlohmann::json::parse(service.Score(Tx("r2")).body)["reasons"][0]["text"],
            "2 sent in 24 h");
}

TEST_F(DecisionServiceTest, DecisionsCarryAccountStandingsAndRaiseAccountAlertsOnce) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(absl::StrCat("accounts: {alert_rule_hits: 2}\n", kPolicy), "p.yaml",
                              layout, ListLibrary{});
  ASSERT_OK(policy);
  DecisionService service(fx_, DecisionServiceOptions{},
                          std::make_shared<DecisionMaker>(*policy, nullptr, layout), clock_);
  MetricsRegistry metrics;
  ASSERT_OK(service.RegisterMetrics(metrics));
  const nlohmann::json first = nlohmann::json::parse(service.Score(Tx("a1")).body);
  EXPECT_EQ(first["accounts"]["originator"]["rule_hits"], 1);
  EXPECT_TRUE(first["accounts"]["originator"]["score"].is_null()) << "rules only: no score";
  EXPECT_EQ(first["accounts"]["originator"]["alert"], false);
  const DecisionService::Reply second = service.Score(Tx("a2"));
  const nlohmann::json j = nlohmann::json::parse(second.body);
  EXPECT_EQ(j["accounts"]["originator"]["alert"], true);
  EXPECT_EQ(j["accounts"]["originator"]["alert_cause"], "rule_hits");
  EXPECT_EQ(j["accounts"]["beneficiary"]["alert"], true);
  EXPECT_EQ(j["action"], "REVIEW") << "the payment's own action is the rule's";
  // The repeated id is the same answer, alert included; the next payment raises none.
  EXPECT_EQ(service.Score(Tx("a2")).body, second.body);
  const nlohmann::json third = nlohmann::json::parse(service.Score(Tx("a3")).body);
  EXPECT_EQ(third["accounts"]["originator"]["rule_hits"], 3);
  EXPECT_EQ(third["accounts"]["originator"]["alert"], false);
  EXPECT_THAT(metrics.RenderPrometheusText(),
              HasSubstr("vigil_account_alerts_total{cause=\"rule_hits\"} 2"));
  EXPECT_THAT(metrics.RenderPrometheusText(),
              HasSubstr("vigil_account_alerts_total{cause=\"score\"} 0"));
}

TEST_F(DecisionServiceTest, DecidesABatchInOrderWithAnErrorPerRefusedItem) {
  const DecisionService::Reply early = service_->Score(Tx("early"));
  ASSERT_EQ(early.status, 200) << early.body;
  const std::string bad = R"({"id":"b2","amount":{"value":"1,5"}})";
  const DecisionService::Reply r = service_->ScoreBatch(
      absl::StrCat("[", Tx("b1"), ",", bad, ",", Tx("b3"), ",", Tx("b1"), ",", Tx("early"), "]"));
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json j = nlohmann::json::parse(r.body);
  ASSERT_EQ(j["results"].size(), 5u) << r.body;
  EXPECT_EQ(j["results"][0]["transaction_id"], "b1");
  EXPECT_EQ(j["results"][1]["index"], 1);
  EXPECT_EQ(j["results"][1]["status"], 400);
  EXPECT_FALSE(j["results"][1]["error"]["field"].get<std::string>().empty()) << r.body;
  EXPECT_FALSE(j["results"][1]["error"]["code"].get<std::string>().empty()) << r.body;
  EXPECT_EQ(j["results"][2]["transaction_id"], "b3");
  // A duplicate within the batch gets the first one's decision, and is counted once.
  EXPECT_EQ(j["results"][3], j["results"][0]);
  EXPECT_EQ(j["results"][0]["reasons"][0]["text"], "2 sent in 24 h");  // after "early"
  EXPECT_EQ(j["results"][2]["reasons"][0]["text"], "3 sent in 24 h");
  // An id decided before: that decision.
  EXPECT_EQ(j["results"][4], nlohmann::json::parse(early.body));
  EXPECT_EQ(nlohmann::json::parse(service_->Score(Tx("after")).body)["reasons"][0]["text"],
            "4 sent in 24 h");
}

TEST_F(DecisionServiceTest, RefusesWholeBatchesThatAreNotArraysOfTransactionsOrTooLarge) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(kPolicy, "p.yaml", layout, ListLibrary{});
  ASSERT_OK(policy);
  DecisionServiceOptions options;
  options.max_batch = 2;
  DecisionService service(fx_, options, std::make_shared<DecisionMaker>(*policy, nullptr, layout),
                          clock_);
  struct Case {
    std::string body;
    int status;
    const char* why;
  };
  const Case cases[] = {
      {Tx("c1"), 400, "an object, not an array"},
      {"[]", 400, "no transactions"},
      {"[{", 400, "not JSON"},
      {absl::StrCat("[", Tx("c1"), ",", Tx("c2"), ",", Tx("c3"), "]"), 413, "over max_batch"},
  };
  for (const Case& c : cases) {
    const DecisionService::Reply r = service.ScoreBatch(c.body);
    EXPECT_EQ(r.status, c.status) << c.why << ": " << r.body;
    EXPECT_THAT(r.body, HasSubstr("\"error\"")) << c.why;
  }
  // Nothing of a refused batch was decided or counted.
  const DecisionService::Reply c1 = service.Score(Tx("c1"));
  ASSERT_EQ(c1.status, 200) << c1.body;
  EXPECT_EQ(nlohmann::json::parse(c1.body)["reasons"][0]["text"], "1 sent in 24 h");
  const DecisionService::Reply two =
      service.ScoreBatch(absl::StrCat("[", Tx("c2"), ",", Tx("c3"), "]"));
  EXPECT_EQ(two.status, 200) << two.body;
}

// The idempotency memory holds the last idempotency_capacity ids decided; an id refused first
// (here: no FX rate) and decided on its retry is remembered like any other.
TEST_F(DecisionServiceTest, ARefusedThenDecidedIdIsRememberedForTheWholeCapacity) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(kPolicy, "p.yaml", layout, ListLibrary{});
  ASSERT_OK(policy);
  DecisionServiceOptions options;
  options.idempotency_capacity = 3;
  DecisionService service(fx_, options, std::make_shared<DecisionMaker>(*policy, nullptr, layout),
                          clock_);
  ASSERT_EQ(service.Score(Tx("x", "GBP")).status, 422);
  const DecisionService::Reply x = service.Score(Tx("x"));
  ASSERT_EQ(x.status, 200) << x.body;
  ASSERT_EQ(service.Score(Tx("y")).status, 200);
  ASSERT_EQ(service.Score(Tx("z")).status, 200);
  // x, y, z: three ids, within the capacity of three.
  const DecisionService::Reply again = service.Score(Tx("x"));
  EXPECT_TRUE(again.repeated);
  EXPECT_EQ(again.body, x.body);
  // A fourth id pushes out the oldest, x: it is decided anew (and counted again).
  ASSERT_EQ(service.Score(Tx("w")).status, 200);
  const DecisionService::Reply forgotten = service.Score(Tx("x"));
  EXPECT_FALSE(forgotten.repeated);
  EXPECT_EQ(nlohmann::json::parse(forgotten.body)["reasons"][0]["text"], "5 sent in 24 h");
}

// With room for one id, a refused id retried at once is decided (this used to evict the retry's
// own entry while it was being claimed: a crash).
TEST_F(DecisionServiceTest, ARetryOfARefusedIdIsDecidedWithACapacityOfOne) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(kPolicy, "p.yaml", layout, ListLibrary{});
  ASSERT_OK(policy);
  DecisionServiceOptions options;
  options.idempotency_capacity = 1;
  DecisionService service(fx_, options, std::make_shared<DecisionMaker>(*policy, nullptr, layout),
                          clock_);
  ASSERT_EQ(service.Score(Tx("one", "GBP")).status, 422);
  const DecisionService::Reply decided = service.Score(Tx("one"));
  ASSERT_EQ(decided.status, 200) << decided.body;
  EXPECT_EQ(service.Score(Tx("one")).body, decided.body);
}

TEST_F(DecisionServiceTest, ABatchItemThatIsNotAnObjectIsThatItemsErrorOnly) {
  const DecisionService::Reply r =
      service_->ScoreBatch(absl::StrCat("[1, ", Tx("nb1"), ", \"x\"]"));
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json j = nlohmann::json::parse(r.body);
  ASSERT_EQ(j["results"].size(), 3u);
  EXPECT_EQ(j["results"][0]["status"], 400);
  EXPECT_EQ(j["results"][0]["error"]["field"], "$[0]");
  EXPECT_EQ(j["results"][1]["transaction_id"], "nb1");
  EXPECT_EQ(j["results"][2]["error"]["field"], "$[2]");
}

// A payment of 9000 USD at 2022-09-01T08:00:00Z + "second" s of event time.
std::string TxAt(const std::string& id, int second) {
  return absl::StrFormat(R"({"id":"%s","timestamp":"2022-09-01T08:%02d:%02dZ",)"
                         R"("originator":{"account_id":"A1","bank_id":"B1"},)"
                         R"("beneficiary":{"account_id":"A2","bank_id":"B2"},)"
                         R"("amount":{"value":"9000.00","currency":"USD"}})",
                         id, second / 60, second % 60);
}

// The drift monitor of a service: a reference where amount_reporting lies in [0, 10] (far
// below the payments above), windows of 10 s of event time evaluated from 5 rows on the raw
// preset's fixed cut-offs, so the first evaluation is L3 and freezes the model.
class DecisionServiceDriftTest : public DecisionServiceTest {
 protected:
  void SetUp() override {
    nlohmann::json edges = nlohmann::json::array();
    for (int i = 0; i <= 10; ++i) edges.push_back(i);
    const nlohmann::json profile = {
        {"feature_schema_version", FeatureExtractor::Schema()->version()},
        {"rows", 100},
        {"features",
         {{"amount_reporting",
           {{"count", 100},
            {"missing", 0},
            {"bin_edges", edges},
            {"bin_counts", std::vector<int>(10, 10)},
            {"mean", 5},
            {"std", 2.9},
            {"sample", {0, 2, 4, 6, 8, 10}}}}}}};
    auto parsed = drift::ReferenceProfile::Parse(profile.dump(), "profile.json");
    ASSERT_OK(parsed);
    profile_ = *std::move(parsed);
    drift::DriftConfig config;
    config.calibration = drift::DriftCalibration::kRawPreset;
    config.windows = {{"short", std::chrono::seconds(10), std::chrono::seconds(10), {}}};
    config.min_rows = 5;
    // One pair of accounts from t = 0: no warm-up, dwell or source floor (the monitor's own
    // tests cover them).
    config.warmup = std::chrono::seconds(0);
    config.min_dwell = std::chrono::seconds(0);
    config.min_accounts = 1;
    config.account_cap_rows = 1'000'000;
    const auto schema = FeatureExtractor::Schema();
    auto monitor =
        drift::DriftMonitor::Create(profile_, schema->version(), schema->names(), config, nullptr);
    ASSERT_OK(monitor);
    monitor_ = *std::move(monitor);
    tap_ =
        std::make_unique<drift::DriftTap>(monitor_.get(), 1000, drift::DriftTap::WhenFull::kDrop);
    service_->AttachDrift(monitor_.get(), tap_.get());
    ASSERT_OK(service_->RegisterMetrics(metrics_));
  }

  drift::ReferenceProfile profile_;
  std::unique_ptr<drift::DriftMonitor> monitor_;
  std::unique_ptr<drift::DriftTap> tap_;
  MetricsRegistry metrics_;
};

TEST_F(DecisionServiceDriftTest, OffersEachDecidedTransactionOnce) {
  ASSERT_EQ(service_->Score(TxAt("d1", 0)).status, 200);
  ASSERT_EQ(service_->Score(TxAt("d1", 0)).status, 200);  // a repeat
  ASSERT_EQ(service_->Score("not json").status, 400);
  ASSERT_EQ(service_->Score(Tx("d2", "GBP")).status, 422);  // refused by the features
  const DecisionService::Reply batch = service_->ScoreBatch(absl::StrCat(
      "[", TxAt("d3", 1), ",", TxAt("d4", 2), ",", TxAt("d3", 1), ",", TxAt("d1", 0), "]"));
  ASSERT_EQ(batch.status, 200) << batch.body;
  tap_->Drain();
  EXPECT_EQ(monitor_->State(false).rows, 3u);  // d1, d3, d4
  EXPECT_EQ(tap_->dropped(), 0u);
}

TEST_F(DecisionServiceDriftTest, AFrozenModelLeavesTheRulesToDecideDegraded) {
  // Seconds 0..9 fill a pane; the payment at second 10 completes it: evaluated, L3, frozen.
  for (int i = 0; i <= 10; ++i) {
    const DecisionService::Reply r = service_->Score(TxAt(absl::StrCat("f", i), i));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_FALSE(r.degraded) << r.body;
  }
  tap_->Drain();
  ASSERT_TRUE(monitor_->frozen());
  const DecisionService::Reply frozen = service_->Score(TxAt("f11", 11));
  ASSERT_EQ(frozen.status, 200) << frozen.body;
  EXPECT_TRUE(frozen.degraded);
  EXPECT_EQ(frozen.degraded_reason, "drift_freeze");
  const nlohmann::json d = nlohmann::json::parse(frozen.body);
  EXPECT_EQ(d["degraded"], true);
  EXPECT_EQ(d["degraded_reason"], "drift_freeze");
  EXPECT_EQ(d["model_role"], "none");
  EXPECT_EQ(d["action"], "REVIEW");  // the policy's rule still fires
  const std::string text = metrics_.RenderPrometheusText();
  EXPECT_THAT(text, HasSubstr("vigil_drift_frozen_decisions_total{class=\"P1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("vigil_degraded_decisions_total{class=\"P1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("vigil_drift_rows_dropped_total 0\n"));
}

}  // namespace
}  // namespace vigil
