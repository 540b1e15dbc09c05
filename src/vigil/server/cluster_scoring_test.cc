// ClusterScoring against `vigil serve`'s own DecisionService as the oracle: the same requests,
// in the same order, get the same answers (status, error code and field; for decisions the
// action and reasons), one service deciding in-process, the other through a cluster's log on
// a real nats-server.
#include "vigil/server/cluster_scoring.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/cluster/cluster_node.h"
#include "vigil/cluster/partition_decider.h"
#include "vigil/cluster/testing_nats_servers.h"
#include "vigil/server/decision_service.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

constexpr char kPolicy[] = R"(version: "svc"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: count
    when: orig_out_count_24h >= 2
    action: review
    reason: "{orig_out_count_24h} sent in 24 h"
)";

std::string Tx(const std::string& id, const std::string& account, const std::string& currency,
               const std::string& timestamp = "2022-09-01T08:00:00Z") {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":")", timestamp, R"(",)",
                      R"("originator":{"account_id":")", account, R"(","bank_id":"B1"},)",
                      R"("beneficiary":{"account_id":"Z9","bank_id":"B2"},)",
                      R"("amount":{"value":"9000.00","currency":")", currency, R"("}})");
}

struct Request {
  std::string body;
  bool batch = false;
  MessageFormat format = MessageFormat::kJson;
};

// What must agree between the two: the status, and the error's code and field or the
// decision's action and reasons (ids, times and latencies differ by nature).
std::string Essence(const ScoreReply& r) {
  const nlohmann::json j = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  const auto one = [](const nlohmann::json& d) -> std::string {
    if (d.contains("error")) {
      return absl::StrCat("error ", d["error"].value("code", ""), " at ",
                          d["error"].value("field", ""));
    }
    std::string reasons;
    for (const nlohmann::json& reason : d.value("reasons", nlohmann::json::array())) {
      absl::StrAppend(&reasons, reason.value("code", ""), "=", reason.value("text", ""), ";");
    }
    return absl::StrCat(d.value("action", "?"), " ", reasons);
  };
  if (j.is_object() && j.contains("results")) {
    std::string out = absl::StrCat(r.status, " batch:");
    for (const nlohmann::json& item : j["results"]) {
      absl::StrAppend(&out, " [", item.value("status", 200), " ", one(item), "]");
    }
    return out;
  }
  return absl::StrCat(r.status, " ", j.is_object() ? one(j) : "not json");
}

ScoreReply Ask(ScoringService& service, const Request& q) {
  ScoreReply out;
  ScoreRequest request;
  request.format = q.format;
  const auto done = [&out](ScoreReply r) { out = std::move(r); };
  if (q.batch) {
    service.ScoreBatchThen(q.body, request, done);
  } else {
    service.ScoreThen(q.body, request, done);
  }
  return out;
}

TEST(ClusterScoringTest, AnswersAsVigilServeDoesRequestForRequest) {
  const FxRates fx =
      *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\nEUR,0.5\n", "fx");
  const PolicyInputLayout layout(FeatureExtractor::Schema());
  absl::StatusOr<std::shared_ptr<const Policy>> policy =
      Policy::Parse(kPolicy, "p.yaml", layout, ListLibrary{});
  ASSERT_OK(policy);
  auto maker = std::make_shared<DecisionMaker>(*policy, nullptr, layout);
  DecisionService serve(fx, DecisionServiceOptions{}, maker, RealClock());

  testing::ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(auto servers, cluster::testing::NatsServers::Start(1, dir.path()));
  ASSERT_OK_AND_ASSIGN(auto nats, servers->Connect());
  FeatureExtractor features(fx, FeatureConfig{});
  cluster::ClusterNodeOptions options;
  options.layout.partitions = 4;
  options.layout.replicas = 1;
  options.node_id = "n1";
  options.lease_ttl = std::chrono::milliseconds(1000);
  ASSERT_OK_AND_ASSIGN(auto node,
                       cluster::ClusterNode::Start(
                           nats.get(), &features,
                           std::make_shared<cluster::PartitionDecider>(maker, "none", RealClock()),
                           RealClock(), options));
  ClusterScoringOptions scoring_options;
  scoring_options.score_budget = std::chrono::seconds(5);  // the node takes its leases first
  ClusterScoring cluster(node.get(), scoring_options, RealClock());

  const std::string mt103 =
      testing::ReadFile(testing::TestDataPath("swift_mt/messages/mt103_0002.fin"));
  const std::vector<Request> requests = {
      {Tx("t1", "A1", "USD")},
      {Tx("t2", "A1", "USD")},                          // the second of A1: reviewed, "2 sent"
      {Tx("t1", "A1", "USD")},                          // a retry: the first decision
      {Tx("t1", "A1", "EUR")},                          // another payment under t1: 409
      {Tx("t3", "A2", "GBP")},                          // no FX rate: 422 features_refused
      {Tx("t3", "A2", "GBP")},                          // the same refused payment again
      {Tx("t3", "A2", "EUR")},                          // corrected under the same id: decided
      {Tx("t4", "A2", "USD", "2999-01-01T00:00:00Z")},  // 422 event_in_future
      {R"({"id":"t5","amount":{"value":"1,5"}})"},      // 400, naming the field
      {"not json"},
      {absl::StrCat("[", Tx("b1", "A3", "USD"), ",7,", Tx("b2", "A3", "USD"), ",",
                    Tx("t1", "A1", "EUR"), "]"),
       true},
      {"[]", true},
      {"{}", true},
      // Last: a payment message is timed by its arrival, which moves the accounts' clock to
      // today (the JSON payments above are of 2022, and would then be too late).
      {mt103, false, MessageFormat::kSwiftMt},
  };
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("request ", i, ": ", requests[i].body.substr(0, 80)));
    const ScoreReply expected = Ask(serve, requests[i]);
    const ScoreReply got = Ask(cluster, requests[i]);
    EXPECT_EQ(Essence(got), Essence(expected)) << got.body << "\nvs\n" << expected.body;
    EXPECT_EQ(got.error_code, expected.error_code);
    EXPECT_EQ(got.action, expected.action);
  }
  // Decided through the log: both parties' account step applied once per payment.
  EXPECT_EQ(node->status().applied.decisions, 6u);  // t1 t2 t3 b1 b2 and the MT103
}

}  // namespace
}  // namespace vigil
