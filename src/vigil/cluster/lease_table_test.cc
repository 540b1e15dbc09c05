#include "vigil/cluster/lease_table.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/cluster/nats_connection.h"
#include "vigil/cluster/testing_nats_servers.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

using ::testing::HasSubstr;

class LeaseTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(servers_, testing::NatsServers::Start(1, dir_.path()));
    ASSERT_OK_AND_ASSIGN(nats_, servers_->Connect());
    ASSERT_OK_AND_ASSIGN(bucket_,
                         nats_->EnsureBucket({.name = "leases", .ttl = std::chrono::seconds(1)}));
  }

  vigil::testing::ScratchDir dir_;
  std::unique_ptr<testing::NatsServers> servers_;
  std::unique_ptr<NatsConnection> nats_;
  std::unique_ptr<KeyValueBucket> bucket_;
};

TEST_F(LeaseTableTest, OfNodesRacingForAPartitionExactlyOneWins) {
  constexpr int kNodes = 6;
  std::vector<std::unique_ptr<NatsConnection>> connections;
  std::vector<std::unique_ptr<KeyValueBucket>> buckets;
  for (int k = 0; k < kNodes; ++k) {
    ASSERT_OK_AND_ASSIGN(auto c, servers_->Connect());
    ASSERT_OK_AND_ASSIGN(auto b,
                         c->EnsureBucket({.name = "leases", .ttl = std::chrono::seconds(1)}));
    connections.push_back(std::move(c));
    buckets.push_back(std::move(b));
  }
  for (int partition = 0; partition < 5; ++partition) {
    std::atomic<int> winners = 0, refused = 0;
    std::vector<std::thread> threads;
    for (int k = 0; k < kNodes; ++k) {
      threads.emplace_back([&, k] {
        LeaseTable table(buckets[k].get(), absl::StrCat("node-", k));
        absl::StatusOr<Lease> lease = table.Acquire(partition);
        if (lease.ok()) ++winners;
        if (absl::IsAlreadyExists(lease.status())) ++refused;
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(winners.load(), 1) << "partition " << partition;
    EXPECT_EQ(refused.load(), kNodes - 1);
  }
}

TEST_F(LeaseTableTest, RenewKeepsTheLeaseReleaseFreesIt) {
  LeaseTable a(bucket_.get(), "node-a"), b(bucket_.get(), "node-b");
  ASSERT_OK_AND_ASSIGN(Lease lease, a.Acquire(3));
  EXPECT_EQ(lease.epoch, lease.revision);
  const absl::Status held = b.Acquire(3).status();
  EXPECT_EQ(held.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(held.message(), HasSubstr("held by node node-a"));
  for (int k = 0; k < 4; ++k) {  // 1.6 s of renewals every 0.4 s outlive the 1 s TTL
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    ASSERT_OK_AND_ASSIGN(lease, a.Renew(lease));
  }
  ASSERT_OK_AND_ASSIGN(Lease holder, b.Holder(3));
  EXPECT_EQ(holder.holder, "node-a");
  EXPECT_LT(lease.epoch, lease.revision);  // renewals keep the epoch
  ASSERT_OK(a.Release(lease));
  EXPECT_EQ(b.Holder(3).status().code(), absl::StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(Lease taken, b.Acquire(3));
  EXPECT_GT(taken.epoch, lease.epoch);
  // The old holder cannot renew or release what it gave up.
  EXPECT_EQ(a.Renew(lease).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(a.Release(lease).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(LeaseTableTest, AnUnrenewedLeaseExpiresAndItsHolderLearnsFromTheRenewal) {
  LeaseTable a(bucket_.get(), "node-a"), b(bucket_.get(), "node-b");
  ASSERT_OK_AND_ASSIGN(Lease old, a.Acquire(0));
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Lease> taken = absl::UnknownError("not tried");
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
    taken = b.Acquire(0);
    if (taken.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_OK(taken.status());
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(waited, 0.9);  // not before the TTL
  std::printf("an unrenewed lease (TTL 1 s) was taken %.2f s after it was written\n", waited);
  EXPECT_GT(taken->epoch, old.epoch);
  const absl::Status lost = a.Renew(old).status();
  EXPECT_EQ(lost.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(lost.message(), HasSubstr("lease of partition 0 was lost"));
  ASSERT_OK_AND_ASSIGN(Lease holder, a.Holder(0));
  EXPECT_EQ(holder.holder, "node-b");
}

}  // namespace
}  // namespace vigil::cluster
