// A labelled stream (the AMLworld sample) replayed through a cluster of three nodes over three
// nats-servers (3 replicas), from four concurrent callers, against one node (`vigil serve`'s
// DecisionService) deciding the same payments in the order the cluster's log holds them: the
// same decisions, except where docs/cluster.md's staleness bound allows a difference: a
// payment whose row read an account with a decision in flight (a payment before it in the log
// whose decision batch came after it). The differences are counted and each is checked against
// that condition.
#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/cluster/cluster_node.h"
#include "vigil/cluster/log_entries.h"
#include "vigil/cluster/partition_decider.h"
#include "vigil/cluster/partition_writer.h"
#include "vigil/cluster/stream_reader.h"
#include "vigil/cluster/testing_nats_servers.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/json_writer.h"
#include "vigil/ingest/transaction_reader.h"
#include "vigil/server/decision_service.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

// Rules on the amount and on what was decided before about the parties and their
// counterparties (the columns a decision in flight can leave stale).
constexpr char kPolicy[] = R"(version: "equivalence"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: large
    when: amount_reporting > 20000
    action: review
    reason: "large"
  - id: known_risk
    when: orig_account_rule_hits >= 1 or bene_counterparties_with_rule_hits >= 1
    action: review
    reason: "{orig_account_rule_hits} hits, {bene_counterparties_with_rule_hits} risky"
)";

std::string AccountKey(const Party& p) { return absl::StrCat(p.bank_id, "/", p.account_id); }

// What must agree: the action and the reasons (ids and times differ by nature).
std::string Essence(const std::string& decision_json) {
  const nlohmann::json d = nlohmann::json::parse(decision_json);
  std::string out = d.value("action", "?");
  for (const nlohmann::json& r : d.value("reasons", nlohmann::json::array())) {
    absl::StrAppend(&out, " ", r.value("code", ""), "=", r.value("text", ""));
  }
  return out;
}

TEST(ClusterEquivalenceTest, ALabelledStreamGetsOneNodesDecisionsBarStaleOnes) {
  const FxRates fx = *FxRates::Parse(testing::ReadFile(testing::SourceDir() + "/data/fx_rates.csv"),
                                     "fx_rates.csv");
  const PolicyInputLayout layout(FeatureExtractor::Schema());
  absl::StatusOr<std::shared_ptr<const Policy>> policy =
      Policy::Parse(kPolicy, "p.yaml", layout, ListLibrary{});
  ASSERT_OK(policy);
  auto maker = std::make_shared<DecisionMaker>(*policy, nullptr, layout);

  std::vector<Transaction> stream;
  {
    ASSERT_OK_AND_ASSIGN(
        auto reader,
        OpenTransactionFile(testing::TestDataPath("amlworld/HI-Small_Trans.sample.csv"), {}));
    Transaction tx;
    Transaction parsed;
    RecordError error;
    JsonTransactionParser api;
    while (true) {
      absl::StatusOr<ReadResult> r = reader->Next(&tx, &error);
      ASSERT_OK(r);
      if (*r == ReadResult::kEnd) break;
      // What a front would take: the transactions the API's JSON accepts (not, say, a JPY
      // amount with cents, which the CSV reader lets through).
      if (*r == ReadResult::kRecord && api.Parse(TransactionToJson(tx), &parsed, &error)) {
        stream.push_back(tx);
      }
    }
  }
  // In event-time order, as a history is replayed (the sample's rows are not).
  std::stable_sort(stream.begin(), stream.end(), [](const Transaction& a, const Transaction& b) {
    return a.event_time < b.event_time;
  });
  ASSERT_GT(stream.size(), 600u);

  testing::ScratchDir dir;
  ASSERT_OK_AND_ASSIGN(auto servers, cluster::testing::NatsServers::Start(3, dir.path()));
  struct Node {
    std::unique_ptr<cluster::NatsConnection> nats;
    std::unique_ptr<FeatureExtractor> features;
    std::unique_ptr<cluster::ClusterNode> node;
  };
  std::vector<Node> nodes(3);
  auto decider = std::make_shared<cluster::PartitionDecider>(maker, "none", RealClock());
  for (int k = 0; k < 3; ++k) {
    ASSERT_OK_AND_ASSIGN(nodes[k].nats, servers->Connect());
    nodes[k].features = std::make_unique<FeatureExtractor>(fx, FeatureConfig{});
    cluster::ClusterNodeOptions options;
    options.layout.name = "eq";
    options.layout.partitions = 16;
    options.layout.replicas = 3;
    options.node_id = absl::StrCat("n", k);
    absl::StatusOr<std::unique_ptr<cluster::ClusterNode>> started = cluster::ClusterNode::Start(
        nodes[k].nats.get(), nodes[k].features.get(), decider, RealClock(), options);
    ASSERT_OK(started.status()) << started.status();
    nodes[k].node = *std::move(started);
  }

  // Four callers, each through the nodes in turn, each waiting for its answer.
  std::vector<std::string> answered(stream.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (size_t i = next++; i < stream.size(); i = next++) {
        cluster::PaymentEntry entry;
        entry.transaction = stream[i];
        entry.input_format = "json";
        entry.received_us = ToUnixMicros(RealClock().Now());
        entry.deadline_us = entry.received_us + 10'000'000;
        absl::StatusOr<cluster::ClusterAnswer> a =
            nodes[(i + c) % 3].node->Decide(entry, std::chrono::seconds(30));
        if (a.ok() && a->kind == cluster::ClusterAnswer::Kind::kDecided) {
          answered[i] = Essence(a->decision_json);
        } else if (a.ok() && a->kind == cluster::ClusterAnswer::Kind::kRefused) {
          // Refused by the features (a payment that reached the log too late after another
          // caller's later one): one node in the log's order must refuse it too.
          answered[i] = absl::StrCat("refused at ", RefusedField(a->refusal));
        } else {
          answered[i] = absl::StrCat(
              "not decided: ",
              a.ok() ? absl::StrCat(static_cast<int>(a->kind), " ", a->refusal.ToString())
                     : a.status().ToString());
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  std::map<std::string, size_t> index;  // transaction id → stream index
  for (size_t i = 0; i < stream.size(); ++i) {
    index[stream[i].id] = i;
    ASSERT_EQ(answered[i].rfind("not decided", 0), std::string::npos)
        << stream[i].id << ": " << answered[i];
  }

  // The log: each payment's position and the position of the batch that decided it.
  std::vector<uint64_t> paid_at(stream.size(), 0), decided_at(stream.size(), 0);
  std::vector<size_t> log_order;
  {
    ASSERT_OK_AND_ASSIGN(cluster::StreamStatus status, nodes[0].nats->StatusOf("VIGIL_eq"));
    ASSERT_OK_AND_ASSIGN(auto reader, nodes[0].nats->Read("VIGIL_eq", "", 1));
    for (uint64_t at = 0; at < status.last_sequence;) {
      ASSERT_OK_AND_ASSIGN(std::optional<cluster::StreamMessage> m,
                           reader->Next(std::chrono::seconds(5)));
      ASSERT_TRUE(m.has_value());
      at = m->sequence;
      if (m->Header(cluster::kKindHeader) == cluster::kDecisionsKind) {
        ASSERT_OK_AND_ASSIGN(std::vector<cluster::DecidedPayment> batch,
                             cluster::DecodeDecisions(m->data));
        for (const cluster::DecidedPayment& d : batch) {
          EXPECT_EQ(decided_at[index.at(d.transaction_id)], 0u) << d.transaction_id << " twice";
          decided_at[index.at(d.transaction_id)] = m->sequence;
        }
      } else if (m->Header(cluster::kKindHeader).empty()) {
        ASSERT_OK_AND_ASSIGN(cluster::PaymentEntry p, cluster::DecodePayment(m->data));
        const size_t i = index.at(p.transaction.id);
        EXPECT_EQ(paid_at[i], 0u) << p.transaction.id << " twice in the log";
        paid_at[i] = m->sequence;
        log_order.push_back(i);
      }
    }
  }
  ASSERT_EQ(log_order.size(), stream.size());

  // One node, in the log's order.
  DecisionService one(fx, DecisionServiceOptions{}, maker, RealClock());
  std::map<std::string, std::set<std::string>> counterparties;  // as of each payment
  size_t differ = 0, allowed = 0, with_flight = 0, refused = 0;
  for (size_t k = 0; k < log_order.size(); ++k) {
    const size_t i = log_order[k];
    const Transaction& tx = stream[i];
    const DecisionService::Reply r = one.Score(TransactionToJson(tx));
    ASSERT_TRUE(r.status == 200 || r.status == 422) << r.body;
    const std::string expected =
        r.status == 200 ? Essence(r.body)
                        : absl::StrCat("refused at ",
                                       nlohmann::json::parse(r.body)["error"].value("field", ""));
    // The accounts this payment's row reads: both parties and their counterparties so far.
    std::set<std::string> read = {AccountKey(tx.originator), AccountKey(tx.beneficiary)};
    for (const Party* party : {&tx.originator, &tx.beneficiary}) {
      const auto& cp = counterparties[AccountKey(*party)];
      read.insert(cp.begin(), cp.end());
    }
    // Payments before it in the log whose decisions came after it, touching those accounts.
    bool in_flight = false, any_flight = false;
    for (size_t e = 0; e < k; ++e) {
      const size_t j = log_order[e];
      if (decided_at[j] < paid_at[i]) continue;
      any_flight = true;
      if (read.count(AccountKey(stream[j].originator)) > 0 ||
          read.count(AccountKey(stream[j].beneficiary)) > 0) {
        in_flight = true;
      }
    }
    with_flight += any_flight ? 1 : 0;
    allowed += in_flight ? 1 : 0;
    refused += r.status == 422 ? 1 : 0;
    if (answered[i] != expected) {
      ++differ;
      EXPECT_TRUE(in_flight) << tx.id << " differs from one node's decision without a decision "
                             << "in flight on the accounts it reads: " << answered[i] << " vs "
                             << expected;
    }
    counterparties[AccountKey(tx.originator)].insert(AccountKey(tx.beneficiary));
    counterparties[AccountKey(tx.beneficiary)].insert(AccountKey(tx.originator));
  }
  std::cout << "cluster equivalence: " << stream.size() << " payments, " << with_flight
            << " with a decision in flight, " << allowed
            << " of them on an account their row reads, " << differ
            << " decided otherwise than by one node (each of those among them), " << refused
            << " refused by both as too late\n";
  EXPECT_LT(refused, stream.size() / 10);
}

}  // namespace
}  // namespace vigil
