#include "vigil/cluster/cluster_node.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/cluster/testing_nats_servers.h"
#include "vigil/core/fx_rates.h"
#include "vigil/rules/policy.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

using ::testing::HasSubstr;

constexpr int kPartitions = 8;

std::shared_ptr<const Policy> CountingPolicy() {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(R"(version: "count"
thresholds: {review: 0.5, block: 0.9}
accounts: {alert_rule_hits: 3}
rules:
  - id: busy
    when: orig_out_count_24h >= 3
    action: review
    reason: "{orig_out_count_24h} sent in 24 h"
)",
                              "p.yaml", layout, ListLibrary{});
  EXPECT_TRUE(policy.ok()) << policy.status();
  return *policy;
}

// A node with its own connection and feature state, as a separate process would have.
struct Node {
  std::unique_ptr<NatsConnection> nats;
  std::unique_ptr<FeatureExtractor> features;
  std::unique_ptr<ClusterNode> node;
};

class ClusterNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(servers_, testing::NatsServers::Start(1, dir_.path()));
    decider_ = std::make_shared<PartitionDecider>(
        std::make_shared<DecisionMaker>(CountingPolicy(), nullptr,
                                        PolicyInputLayout(FeatureExtractor::Schema())),
        "none", RealClock());
  }

  Node StartNode(const std::string& id) {
    Node n;
    absl::StatusOr<std::unique_ptr<NatsConnection>> nats = servers_->Connect();
    EXPECT_OK(nats.status());
    n.nats = std::move(*nats);
    n.features = std::make_unique<FeatureExtractor>(fx_, FeatureConfig{});
    ClusterNodeOptions options;
    options.layout.name = "c1";
    options.layout.partitions = kPartitions;
    options.layout.replicas = 1;
    options.node_id = id;
    options.lease_ttl = std::chrono::milliseconds(1000);
    absl::StatusOr<std::unique_ptr<ClusterNode>> node =
        ClusterNode::Start(n.nats.get(), n.features.get(), decider_, RealClock(), options);
    EXPECT_OK(node.status()) << node.status();
    if (node.ok()) n.node = std::move(*node);
    return n;
  }

  PaymentEntry Payment(int k) {
    PaymentEntry p;
    p.transaction.id = absl::StrCat("tx-", k);
    p.transaction.event_time = FromUnixMicros(1'764'500'000'000'000 + int64_t{k} * 1'000'000);
    p.transaction.originator = {.account_id = absl::StrCat("A", k % 13), .bank_id = "B1"};
    p.transaction.beneficiary = {.account_id = absl::StrCat("A", (k * 5 + 1) % 13),
                                 .bank_id = "B1"};
    p.transaction.amount = Money(100 + k, 0, *Currency::FromCode("USD"));
    p.input_format = "json";
    p.received_us = ToUnixMicros(RealClock().Now());
    p.deadline_us = p.received_us + 5'000'000;
    return p;
  }

  // Until "done" holds or "timeout" passes; whether it held.
  template <typename F>
  bool WaitFor(F done, std::chrono::milliseconds timeout) {
    const auto give_up = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < give_up) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
  }

  static std::set<int> Owned(const Node& n) {
    const std::vector<int> owned = n.node->status().owned;
    return {owned.begin(), owned.end()};
  }

  vigil::testing::ScratchDir dir_;
  std::unique_ptr<testing::NatsServers> servers_;
  FxRates fx_ = *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\n", "fx");
  std::shared_ptr<PartitionDecider> decider_;
};

TEST_F(ClusterNodeTest, TwoNodesShareThePartitionsAndDecideEveryPaymentOnce) {
  Node a = StartNode("node-a");
  Node b = StartNode("node-b");
  ASSERT_NE(a.node, nullptr);
  ASSERT_NE(b.node, nullptr);
  // The first node takes every partition until the second registers; then the second's share
  // moves to it (rendezvous hashing).
  ASSERT_TRUE(WaitFor(
      [&] {
        return !Owned(a).empty() && !Owned(b).empty() &&
               Owned(a).size() + Owned(b).size() == kPartitions;
      },
      std::chrono::seconds(10)));
  std::set<int> all = Owned(a);
  for (const int p : Owned(b)) EXPECT_TRUE(all.insert(p).second) << "partition " << p << " twice";

  constexpr int kPayments = 300;
  for (int k = 0; k < kPayments; ++k) {
    ASSERT_OK((k % 2 == 0 ? a : b).node->Submit(Payment(k)).status());
  }
  // A retry of a payment the front published already is the same message.
  ASSERT_OK_AND_ASSIGN(PublishAck retry, a.node->Submit(Payment(7)));
  EXPECT_TRUE(retry.duplicate);
  ASSERT_TRUE(WaitFor(
      [&] {
        return a.node->status().applied.decisions == kPayments &&
               b.node->status().applied.decisions == kPayments;
      },
      std::chrono::seconds(20)))
      << a.node->status().applied.decisions << " " << b.node->status().applied.decisions;
  for (const Node* n : {&a, &b}) {
    const ClusterNodeStatus s = n->node->status();
    EXPECT_EQ(s.applied.payments, static_cast<uint64_t>(kPayments));
    EXPECT_EQ(s.applied.unexpected_decisions, 0u);
    EXPECT_EQ(s.fenced, 0u);
  }
  EXPECT_EQ(a.node->status().position, b.node->status().position);
  // Both hold the same account risk, folded from the same decisions.
  for (int k = 0; k < 13; ++k) {
    const Transaction probe = Payment(k).transaction;
    EXPECT_EQ(a.features->StandingsOf(probe)[0].rule_hits,
              b.features->StandingsOf(probe)[0].rule_hits);
  }
}

TEST_F(ClusterNodeTest, ACrashedNodesPartitionsAreTakenOverAfterTheLeaseExpires) {
  Node a = StartNode("node-a");
  Node b = StartNode("node-b");
  ASSERT_TRUE(
      WaitFor([&] { return !Owned(b).empty() && Owned(a).size() + Owned(b).size() == kPartitions; },
              std::chrono::seconds(10)));
  for (int k = 0; k < 100; ++k) ASSERT_OK(a.node->Submit(Payment(k)).status());
  ASSERT_TRUE(
      WaitFor([&] { return a.node->status().applied.decisions == 100; }, std::chrono::seconds(20)));
  // b stops as in a crash: its leases are left to expire, and payments keep coming.
  const size_t b_share = Owned(b).size();
  const uint64_t takeovers_before = a.node->status().takeovers;
  ASSERT_GT(b_share, 0u);
  b.node->Abandon();
  const auto crashed = std::chrono::steady_clock::now();
  for (int k = 100; k < 160; ++k) ASSERT_OK(a.node->Submit(Payment(k)).status());
  ASSERT_TRUE(
      WaitFor([&] { return a.node->status().applied.decisions == 160; }, std::chrono::seconds(20)))
      << a.node->status().applied.decisions;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - crashed).count();
  std::printf("every payment decided %.2f s after node-b stopped (lease TTL 1 s)\n", seconds);
  EXPECT_EQ(Owned(a).size(), static_cast<size_t>(kPartitions));
  EXPECT_EQ(a.node->status().applied.unexpected_decisions, 0u);
  // At least b's share: b may have taken one more partition between the count and its stop
  // (a lease it was acquiring), which a then takes over too.
  EXPECT_GE(a.node->status().takeovers, takeovers_before + b_share);
  EXPECT_LE(a.node->status().takeovers, takeovers_before + kPartitions);
}

TEST_F(ClusterNodeTest, AFrontAnswersWithTheOwnersDecisionOnceAndTheSameOnEveryNode) {
  Node a = StartNode("node-a");
  Node b = StartNode("node-b");
  ASSERT_TRUE(WaitFor(
      [&] {
        return !Owned(a).empty() && !Owned(b).empty() &&
               Owned(a).size() + Owned(b).size() == kPartitions;
      },
      std::chrono::seconds(10)));
  // Four payments of one account, each answered through b whichever node owns the account:
  // the policy reviews the account's third payment in 24 h and after.
  std::vector<std::string> answers;
  for (int k = 0; k < 4; ++k) {
    PaymentEntry p = Payment(13 * k);  // originator A0 each time
    ASSERT_OK_AND_ASSIGN(ClusterAnswer answer, b.node->Decide(p, std::chrono::seconds(10)));
    ASSERT_EQ(answer.kind, ClusterAnswer::Kind::kDecided) << k;
    EXPECT_THAT(answer.decision_json,
                HasSubstr(absl::StrCat("\"transaction_id\":\"tx-", 13 * k, "\"")));
    EXPECT_THAT(answer.decision_json,
                HasSubstr(k < 2 ? "\"action\":\"ALLOW\"" : "\"action\":\"REVIEW\""))
        << answer.decision_json;
    answers.push_back(answer.decision_json);
  }
  EXPECT_THAT(answers[3], HasSubstr("4 sent in 24 h"));
  // A retry, through either node, is the first answer byte for byte: decided once.
  ASSERT_TRUE(
      WaitFor([&] { return a.node->status().applied.decisions == 4; }, std::chrono::seconds(5)));
  ASSERT_OK_AND_ASSIGN(ClusterAnswer retry_a, a.node->Decide(Payment(26), std::chrono::seconds(5)));
  ASSERT_OK_AND_ASSIGN(ClusterAnswer retry_b, b.node->Decide(Payment(26), std::chrono::seconds(5)));
  EXPECT_EQ(retry_a.decision_json, answers[2]);
  EXPECT_EQ(retry_b.decision_json, answers[2]);
  EXPECT_EQ(a.node->status().applied.decisions, 4u);
  // Another payment under a used id is a conflict (the log dropped it as a duplicate id).
  PaymentEntry other = Payment(26);
  other.transaction.amount = Money(999, 0, *Currency::FromCode("USD"));
  ASSERT_OK_AND_ASSIGN(ClusterAnswer conflict, a.node->Decide(other, std::chrono::seconds(5)));
  EXPECT_EQ(conflict.kind, ClusterAnswer::Kind::kConflict);
  // A payment the features refuse is answered with the reason, naming the field.
  PaymentEntry unconvertible = Payment(100);
  unconvertible.transaction.amount = Money(5, 0, *Currency::FromCode("JPY"));
  ASSERT_OK_AND_ASSIGN(ClusterAnswer refused,
                       b.node->Decide(unconvertible, std::chrono::seconds(5)));
  EXPECT_EQ(refused.kind, ClusterAnswer::Kind::kRefused);
  EXPECT_EQ(RefusedField(refused.refusal), "$.amount.currency");
  EXPECT_EQ(b.node->status().applied.decisions, 4u);
}

// Three JetStream servers and three nodes: the stream's leader killed with SIGKILL while
// payments are submitted; every payment a front got acknowledged is decided exactly once.
TEST(ClusterOnThreeServersTest, KillingANatsServerUnderLoadLosesNoAcknowledgedPayment) {
  vigil::testing::ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(auto servers, testing::NatsServers::Start(3, dir.path()));
  const FxRates fx = *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\n", "fx");
  auto decider = std::make_shared<PartitionDecider>(
      std::make_shared<DecisionMaker>(CountingPolicy(), nullptr,
                                      PolicyInputLayout(FeatureExtractor::Schema())),
      "none", RealClock());
  std::vector<Node> nodes(3);
  const auto nats_of = [&nodes](int k) { return nodes[k].nats.get(); };
  for (int k = 0; k < 3; ++k) {
    ASSERT_OK_AND_ASSIGN(nodes[k].nats, servers->Connect());
    nodes[k].features = std::make_unique<FeatureExtractor>(fx, FeatureConfig{});
    ClusterNodeOptions options;
    options.layout.name = "c3";
    options.layout.partitions = kPartitions;
    options.layout.replicas = 3;
    options.node_id = absl::StrCat("node-", k);
    options.lease_ttl = std::chrono::milliseconds(2000);
    absl::StatusOr<std::unique_ptr<ClusterNode>> started =
        ClusterNode::Start(nats_of(k), nodes[k].features.get(), decider, RealClock(), options);
    ASSERT_OK(started.status()) << started.status();
    nodes[k].node = *std::move(started);
  }
  constexpr int kPayments = 400;
  int killed = -1;
  for (int k = 0; k < kPayments; ++k) {
    if (k == kPayments / 3) {
      ASSERT_OK_AND_ASSIGN(StreamStatus log, nodes[0].nats->StatusOf("VIGIL_c3"));
      ASSERT_EQ(log.leader.size(), 2u) << log.leader;
      killed = log.leader[1] - '0';
      servers->Kill(killed);
    }
    PaymentEntry p;
    p.transaction.id = absl::StrCat("tx-", k);
    p.transaction.event_time = FromUnixMicros(1'764'500'000'000'000 + int64_t{k} * 1'000'000);
    p.transaction.originator = {.account_id = absl::StrCat("A", k % 17), .bank_id = "B1"};
    p.transaction.beneficiary = {.account_id = absl::StrCat("A", (k + 3) % 17), .bank_id = "B1"};
    p.transaction.amount = Money(100 + k, 0, *Currency::FromCode("USD"));
    p.input_format = "json";
    // A front retries what was not acknowledged, under the same id (the log keeps it once).
    absl::StatusOr<PublishAck> ack = absl::UnknownError("not tried");
    for (int attempt = 0; attempt < 200 && !ack.ok(); ++attempt) {
      ack = nodes[k % 3].node->Submit(p);
      if (!ack.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_OK(ack.status()) << "payment " << k;
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const auto all_decided = [&] {
    for (const Node& n : nodes) {
      if (n.node->status().applied.decisions < kPayments) return false;
    }
    return true;
  };
  while (!all_decided() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (const Node& n : nodes) {
    const ClusterNodeStatus s = n.node->status();
    EXPECT_EQ(s.applied.payments, static_cast<uint64_t>(kPayments));
    EXPECT_EQ(s.applied.decisions, static_cast<uint64_t>(kPayments)) << "killed n" << killed;
    EXPECT_EQ(s.applied.unexpected_decisions, 0u);
  }
  EXPECT_EQ(nodes[0].node->status().position, nodes[2].node->status().position);
}

TEST_F(ClusterNodeTest, ANodeThatLeavesHandsItsPartitionsOver) {
  Node a = StartNode("node-a");
  {
    Node b = StartNode("node-b");
    ASSERT_TRUE(WaitFor(
        [&] { return !Owned(b).empty() && Owned(a).size() + Owned(b).size() == kPartitions; },
        std::chrono::seconds(10)));
  }  // b stops and releases its leases
  const auto left = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return Owned(a).size() == kPartitions; }, std::chrono::seconds(5)));
  EXPECT_LT(std::chrono::steady_clock::now() - left, std::chrono::milliseconds(1500))
      << "released leases are taken at the next round, not after their TTL";
  for (int k = 0; k < 20; ++k) ASSERT_OK(a.node->Submit(Payment(k)).status());
  ASSERT_TRUE(
      WaitFor([&] { return a.node->status().applied.decisions == 20; }, std::chrono::seconds(10)));
}

}  // namespace
}  // namespace vigil::cluster
