#include "vigil/decision/decision_maker.h"

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/rules/policy_store.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::Field;
using ::testing::HasSubstr;

// Scores are the row's second column divided by 100; fails on demand; explains with one reason.
class FakeScorer final : public Scorer {
 public:
  const std::string& model_version() const override { return version_; }
  size_t row_width() const override { return 2; }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                     const ScoreContext& context) const override {
    ++calls;
    if (fail) return absl::DeadlineExceededError("scorer deadline passed");
    if (overloaded) return absl::ResourceExhaustedError("queue full");
    if (context.backend != nullptr) *context.backend = backend;
    for (size_t i = 0; i < n; ++i) scores[i] = rows[i * 2 + 1] / 100;
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double>, int) const override {
    ++explains;
    return std::vector<Reason>{{Reason::Kind::kModel, "orig_out_count_24h", "x", 0.7, false}};
  }
  bool fail = false;
  bool overloaded = false;
  ScoreBackend backend = ScoreBackend::kGpu;  // reported as the backend that scored
  mutable int calls = 0, explains = 0;

 private:
  std::string version_ = "fake@1";
};

constexpr char kPolicy[] = R"(version: "p1"
thresholds: {review: 0.5, block: 0.9}
lists:
  blocked: [KP]
rules:
  - id: big
    when: amount_reporting >= 10000
    action: review
    reason: "amount {amount_reporting}"
  - id: country
    when: bene_country in blocked
    action: block
    reason: "beneficiary in {bene_country}"
  - id: watch
    when: amount_reporting > 1
    action: block
    mode: shadow
    reason: "shadow"
  - id: tagged
    when: channel == 'api'
    action: tag
    reason: "api"
)";

class DecisionMakerTest : public ::testing::Test {
 protected:
  DecisionMakerTest()
      : schema_(*FeatureSchema::Create("t.v1", {"amount_reporting", "orig_out_count_24h"})),
        layout_(schema_),
        ids_(clock_, 1) {
    auto policy = Policy::Parse(kPolicy, "p.yaml", layout_, ListLibrary{});
    EXPECT_TRUE(policy.ok()) << policy.status();
    policy_ = *policy;
  }

  Transaction Tx(std::string id, std::string bene_country, std::string channel = "online") {
    Transaction tx;
    tx.id = std::move(id);
    tx.amount = Money(100, 0, *Currency::FromCode("USD"));
    tx.beneficiary.country = std::move(bene_country);
    tx.channel = std::move(channel);
    return tx;
  }

  std::vector<Decision> Decide(const DecisionMaker& maker, const std::vector<Transaction>& txs,
                               const std::vector<double>& rows) {
    std::vector<const Transaction*> pointers;
    for (const Transaction& tx : txs) pointers.push_back(&tx);
    std::vector<Decision> decisions(txs.size());
    EXPECT_OK(maker.DecideBatch(pointers, rows, absl::MakeSpan(decisions), ids_));
    return decisions;
  }

  std::shared_ptr<const FeatureSchema> schema_;
  PolicyInputLayout layout_;
  testing::FakeClock clock_;
  UuidV7Generator ids_;
  std::shared_ptr<const Policy> policy_;
};

TEST_F(DecisionMakerTest, MostSevereOfActiveRulesAndScoreDecides) {
  auto scorer = std::make_shared<FakeScorer>();
  DecisionMaker maker(policy_, scorer, layout_);
  const std::vector<Transaction> txs = {Tx("allow", "DE"), Tx("rule-review", "DE"),
                                        Tx("score-review", "DE"), Tx("list-block", "KP"),
                                        Tx("score-block", "DE", "api")};
  // Rows: amount, score × 100.
  const std::vector<double> rows = {1, 10, 20000, 10, 1, 60, 1, 10, 1, 95};
  const std::vector<Decision> d = Decide(maker, txs, rows);
  EXPECT_EQ(scorer->calls, 1);  // one call for the batch
  EXPECT_EQ(d[0].action, Action::kAllow);
  EXPECT_EQ(d[1].action, Action::kReview);
  EXPECT_EQ(d[2].action, Action::kReview);
  EXPECT_EQ(d[3].action, Action::kBlock);
  EXPECT_EQ(d[4].action, Action::kBlock);
  // The shadow rule fires everywhere (amount > 1 except the first) and never decides.
  EXPECT_THAT(d[0].reasons, ::testing::IsEmpty());
  ASSERT_GE(d[1].reasons.size(), 2u);
  EXPECT_EQ(d[1].reasons[0].code, "big");
  EXPECT_EQ(d[1].reasons[0].text, "amount 20000");
  EXPECT_FALSE(d[1].reasons[0].shadow);
  EXPECT_EQ(d[1].reasons[1].code, "watch");
  EXPECT_TRUE(d[1].reasons[1].shadow);
  EXPECT_EQ(d[3].reasons[0].text, "beneficiary in KP");
  // A tag rule is listed and changes nothing; the score's threshold is a reason.
  EXPECT_THAT(d[4].reasons, ::testing::Contains(Field(&Reason::code, "tagged")));
  EXPECT_THAT(d[4].reasons, ::testing::Contains(
                                Field(&Reason::text, "model score 0.9500 >= block threshold 0.9")));
  // Reason codes for REVIEW and BLOCK only.
  EXPECT_EQ(scorer->explains, 4);
  EXPECT_EQ(d[1].reasons.back().code, "orig_out_count_24h");
  for (const Decision& x : d) {
    EXPECT_EQ(x.policy_version.substr(0, 3), "p1@");
    EXPECT_EQ(x.model_version, "fake@1");
    EXPECT_EQ(x.model_backend, "gpu");  // as the scorer reported
    EXPECT_EQ(x.feature_schema_version, "t.v1");
    EXPECT_FALSE(x.degraded);
  }
  EXPECT_DOUBLE_EQ(d[2].score, 0.6);
  EXPECT_NE(d[0].trace_id, d[1].trace_id);
}

TEST_F(DecisionMakerTest, FailingScorerFallsBackToRulesAndSaysSo) {
  auto scorer = std::make_shared<FakeScorer>();
  scorer->fail = true;
  DecisionMaker maker(policy_, scorer, layout_);
  const std::vector<Decision> d = Decide(maker, {Tx("a", "DE"), Tx("b", "KP")}, {1, 99, 1, 99});
  EXPECT_EQ(d[0].action, Action::kAllow);  // the score (0.99) is not known
  EXPECT_EQ(d[1].action, Action::kBlock);  // the rule still decides
  for (const Decision& x : d) {
    EXPECT_TRUE(x.degraded);
    EXPECT_THAT(x.degraded_reason, HasSubstr("rules only: the model failed: scorer deadline"));
    EXPECT_TRUE(std::isnan(x.score));
    EXPECT_EQ(x.model_backend, "");  // no backend scored
  }
  EXPECT_EQ(scorer->explains, 0);
}

// An overloaded model path is not a degraded decision: nothing is decided, and the caller says
// so (503), rather than silently deciding without the model under load.
TEST_F(DecisionMakerTest, AnOverloadedScorerDecidesNothing) {
  auto scorer = std::make_shared<FakeScorer>();
  scorer->overloaded = true;
  DecisionMaker maker(policy_, scorer, layout_);
  const Transaction tx = Tx("a", "KP");
  const Transaction* txs[] = {&tx};
  const std::vector<double> row = {1, 1};
  Decision d;
  EXPECT_THAT(maker.DecideBatch(txs, row, absl::MakeSpan(&d, 1), ids_),
              testing::StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(d.transaction_id, "");
}

TEST_F(DecisionMakerTest, WithoutAScorerRulesDecideAndNothingIsDegraded) {
  DecisionMaker maker(policy_, nullptr, layout_);
  const std::vector<Decision> d = Decide(maker, {Tx("a", "DE")}, {20000, 99});
  EXPECT_EQ(d[0].action, Action::kReview);
  EXPECT_FALSE(d[0].degraded);
  EXPECT_EQ(d[0].model_version, "");
  EXPECT_TRUE(std::isnan(d[0].score));
}

// A policy activated between two batches applies from the next batch on; each decision names
// the version that made it.
TEST_F(DecisionMakerTest, ActivatingAVersionAppliesFromTheNextBatch) {
  const std::string dir = ::testing::TempDir() + "/decision_policy_store";
  std::filesystem::remove_all(dir);
  auto store = PolicyStore::Open(dir, layout_, ListLibrary{}, clock_);
  ASSERT_OK(store);
  std::shared_ptr<PolicyStore> policies = *std::move(store);
  EXPECT_THAT(DecisionMaker::Create(policies, nullptr, layout_).status(),
              testing::StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_OK(policies->Add(kPolicy, "p.yaml", "alice"));
  std::string stricter = kPolicy;
  stricter.replace(stricter.find("\"p1\""), 4, "\"p2\"");
  stricter.replace(stricter.find(">= 10000"), 8, ">= 5000");
  ASSERT_OK(policies->Add(stricter, "p2.yaml", "bob"));
  ASSERT_OK(policies->Activate(1, "alice"));
  auto maker = DecisionMaker::Create(policies, nullptr, layout_);
  ASSERT_OK(maker);
  const std::vector<double> row = {7000, 0};
  std::vector<Decision> d = Decide(**maker, {Tx("a", "DE")}, row);
  EXPECT_EQ(d[0].action, Action::kAllow);
  EXPECT_EQ(d[0].policy_version.substr(0, 3), "p1@");
  ASSERT_OK(policies->Activate(2, "bob"));
  d = Decide(**maker, {Tx("b", "DE")}, row);
  EXPECT_EQ(d[0].action, Action::kReview);
  EXPECT_EQ(d[0].policy_version.substr(0, 3), "p2@");
  std::filesystem::remove_all(dir);
}

// Watchlist hits decide through the policy's screening thresholds, are reasons, and are
// offered to rules as screening.* inputs; the decision names the lists' versions.
TEST_F(DecisionMakerTest, ScreeningHitsReviewOrBlockAndFeedRules) {
  ASSERT_OK_AND_ASSIGN(auto normalizer,
                       screening::NameNormalizer::Create(screening::NormalizerOptions::Defaults()));
  screening::WatchlistEntry acme;
  acme.id = "7";
  acme.name = "ACME TRADING LLC";
  acme.type = screening::WatchlistEntry::Type::kEntity;
  acme.identifiers = {"ACMEIRTHXXX"};
  screening::WatchlistEntry person;
  person.id = "8";
  person.name = "PETROV, Ivan Sergeyevich";
  person.type = screening::WatchlistEntry::Type::kIndividual;
  ASSERT_OK_AND_ASSIGN(screening::Watchlist list,
                       screening::Watchlist::Create("SANCTIONS", "sha256:abc", {acme, person}));
  ASSERT_OK_AND_ASSIGN(
      auto lists, screening::ScreeningLists::Build(
                      {std::make_shared<const screening::Watchlist>(std::move(list))}, normalizer));
  auto screener = std::make_shared<const screening::Screener>(lists);

  constexpr char kScreeningPolicy[] = R"yaml(version: "s1"
thresholds: {review: 0.5, block: 0.9}
screening: {review: 0.85, block: 0.97}
rules:
  - id: listed_bank
    when: screening.by_identifier == 1 and screening.party == 'beneficiary_bank'
    action: review
    reason: "bank listed on {screening.list}"
  - id: near_person
    when: screening.max_score >= 0.8 and screening.entry_type == 'individual'
    action: tag
    reason: "near a listed person ({screening.max_score}, {screening.hit_count} hits)"
)yaml";
  ASSERT_OK_AND_ASSIGN(auto policy,
                       Policy::Parse(kScreeningPolicy, "s.yaml", layout_, ListLibrary{}));
  DecisionMaker maker(policy, nullptr, layout_, {}, screener);

  std::vector<Transaction> txs = {Tx("clean", "DE"), Tx("exact", "DE"), Tx("near", "DE"),
                                  Tx("bank", "DE")};
  txs[0].beneficiary.name = "Northwind Logistics";
  txs[1].beneficiary.name = "Acme Trading";
  txs[2].originator.name = "Ivan Petrov";
  txs[3].beneficiary.bank_id = "ACMEIRTH";
  const std::vector<double> rows(txs.size() * 2, 1.0);
  const std::vector<Decision> d = Decide(maker, txs, rows);

  EXPECT_EQ(d[0].action, Action::kAllow);
  EXPECT_EQ(d[0].screening_score, 0.0);
  EXPECT_THAT(d[0].screening_lists, ::testing::ElementsAre("SANCTIONS@sha256:abc"));
  EXPECT_THAT(d[0].reasons, ::testing::IsEmpty());
  EXPECT_TRUE(std::any_of(d[0].timings.begin(), d[0].timings.end(),
                          [](const StageTiming& t) { return t.stage == "screening"; }));

  // "Acme Trading" is the listed name without its legal form: a block.
  EXPECT_EQ(d[1].action, Action::kBlock);
  EXPECT_DOUBLE_EQ(d[1].screening_score, 1.0);
  ASSERT_EQ(d[1].reasons.size(), 1u);
  EXPECT_EQ(d[1].reasons[0].kind, Reason::Kind::kScreening);
  EXPECT_EQ(d[1].reasons[0].code, "SANCTIONS:7");
  EXPECT_DOUBLE_EQ(d[1].reasons[0].contribution, 1.0);
  EXPECT_EQ(d[1].reasons[0].text,
            "beneficiary name matches SANCTIONS 7 \"ACME TRADING LLC\", score 1.0000 "
            ">= block threshold 0.97");
  // The party's own name is not in the decision (it is answered and recorded in the clear).
  EXPECT_THAT(d[1].reasons[0].text, ::testing::Not(::testing::HasSubstr("Acme")));

  // Two of three tokens: between the thresholds, a review; the tag rule sees it too.
  EXPECT_EQ(d[2].action, Action::kReview) << d[2].screening_score;
  EXPECT_GE(d[2].screening_score, 0.85);
  EXPECT_LT(d[2].screening_score, 0.97);
  EXPECT_THAT(d[2].reasons, ::testing::Contains(Field(&Reason::code, "near_person")));
  EXPECT_THAT(d[2].reasons, ::testing::Contains(Field(&Reason::code, "SANCTIONS:8")));

  // The bank's BIC branch matches the listed BIC: identifier hits score 1 (a block) and the
  // rule on screening.by_identifier fires.
  EXPECT_EQ(d[3].action, Action::kBlock);
  EXPECT_THAT(d[3].reasons, ::testing::Contains(Field(&Reason::text, "bank listed on SANCTIONS")));
  EXPECT_THAT(d[3].reasons,
              ::testing::Contains(Field(&Reason::text,
                                        "beneficiary_bank identifier is listed by SANCTIONS 7 "
                                        "\"ACME TRADING LLC\" (identifier \"ACMEIRTHXXX\")")));

  // Without a screener: no screening score, no lists, the screening inputs read 0 and "".
  DecisionMaker unscreened(policy, nullptr, layout_);
  const std::vector<Decision> u = Decide(unscreened, txs, rows);
  for (const Decision& x : u) {
    EXPECT_TRUE(std::isnan(x.screening_score));
    EXPECT_TRUE(x.screening_lists.empty());
    EXPECT_EQ(x.action, Action::kAllow);
  }
}

}  // namespace
}  // namespace vigil
