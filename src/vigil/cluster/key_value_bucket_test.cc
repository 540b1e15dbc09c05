#include "vigil/cluster/key_value_bucket.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/cluster/nats_connection.h"
#include "vigil/cluster/testing_nats_servers.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class KeyValueBucketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(servers_, testing::NatsServers::Start(1, dir_.path()));
    ASSERT_OK_AND_ASSIGN(nats_, servers_->Connect());
    ASSERT_OK_AND_ASSIGN(bucket_, nats_->EnsureBucket({.name = "kv"}));
  }

  vigil::testing::ScratchDir dir_;
  std::unique_ptr<testing::NatsServers> servers_;
  std::unique_ptr<NatsConnection> nats_;
  std::unique_ptr<KeyValueBucket> bucket_;
};

TEST_F(KeyValueBucketTest, CreateSucceedsOnlyOnAnEmptyKey) {
  ASSERT_OK_AND_ASSIGN(uint64_t revision, bucket_->Create("p.1", "node-a"));
  const absl::Status taken = bucket_->Create("p.1", "node-b").status();
  EXPECT_EQ(taken.code(), absl::StatusCode::kAlreadyExists) << taken;
  ASSERT_OK_AND_ASSIGN(KeyValueEntry entry, bucket_->Get("p.1"));
  EXPECT_EQ(entry.value, "node-a");
  EXPECT_EQ(entry.revision, revision);
  EXPECT_GT(entry.written_unix_ns, 0);
}

TEST_F(KeyValueBucketTest, UpdateAndDeleteAreCompareAndSet) {
  ASSERT_OK_AND_ASSIGN(uint64_t r1, bucket_->Create("k", "1"));
  ASSERT_OK_AND_ASSIGN(uint64_t r2, bucket_->Update("k", "2", r1));
  EXPECT_GT(r2, r1);
  EXPECT_EQ(bucket_->Update("k", "stale", r1).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(bucket_->Delete("k", r1).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_OK_AND_ASSIGN(KeyValueEntry entry, bucket_->Get("k"));
  EXPECT_EQ(entry.value, "2");
  ASSERT_OK(bucket_->Delete("k", r2));
  EXPECT_EQ(bucket_->Get("k").status().code(), absl::StatusCode::kNotFound);
  // A deleted key is free again.
  ASSERT_OK_AND_ASSIGN(uint64_t r3, bucket_->Create("k", "3"));
  EXPECT_GT(r3, r2);
  EXPECT_EQ(bucket_->Update("k", "x", 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(KeyValueBucketTest, KeysAreTheLiveOnesSorted) {
  ASSERT_OK(bucket_->Create("p.2", "a").status());
  ASSERT_OK(bucket_->Create("p.10", "a").status());
  ASSERT_OK_AND_ASSIGN(uint64_t r, bucket_->Create("p.3", "a"));
  ASSERT_OK(bucket_->Delete("p.3", r));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> keys, bucket_->Keys());
  EXPECT_THAT(keys, ElementsAre("p.10", "p.2"));
}

TEST_F(KeyValueBucketTest, BadKeysAreRefusedNamingTheCharacter) {
  const absl::Status s = bucket_->Create("a b", "x").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("' ' is not allowed"));
  EXPECT_EQ(bucket_->Get("a..b").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bucket_->Create("", "x").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bucket_->Create("a.*", "x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(KeyValueBucketTest, AnEntryNotWrittenAgainWithinTheTtlExpires) {
  ASSERT_OK_AND_ASSIGN(auto leases,
                       nats_->EnsureBucket({.name = "leases", .ttl = std::chrono::seconds(1)}));
  ASSERT_OK_AND_ASSIGN(uint64_t r1, leases->Create("p.0", "node-a"));
  // Renewed within the TTL, it stays.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  ASSERT_OK_AND_ASSIGN(uint64_t r2, leases->Update("p.0", "node-a", r1));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  ASSERT_OK(leases->Get("p.0").status());
  // Then left alone, it goes, and the key can be created by another node.
  const auto written = std::chrono::steady_clock::now();
  absl::StatusOr<uint64_t> taken = absl::UnknownError("not tried");
  while (std::chrono::steady_clock::now() - written < std::chrono::seconds(5)) {
    taken = leases->Create("p.0", "node-b");
    if (taken.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_OK(taken.status());
  EXPECT_GT(*taken, r2);
  EXPECT_EQ(leases->Update("p.0", "node-a", r2).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(KeyValueBucketTest, AnExistingBucketKeepsItsTtl) {
  ASSERT_OK(nats_->EnsureBucket({.name = "leases", .ttl = std::chrono::seconds(3)}).status());
  const absl::Status other =
      nats_->EnsureBucket({.name = "leases", .ttl = std::chrono::seconds(5)}).status();
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.message(), HasSubstr("TTL 3000 ms"));
}

}  // namespace
}  // namespace vigil::cluster
