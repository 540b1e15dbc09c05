#include "vigil/cluster/checkpoint_shipping.h"

#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/cluster/testing_nats_servers.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

using ::testing::HasSubstr;

FxRates Fx() {
  return *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\nEUR,0.9\n", "fx");
}

Transaction Payment(int k) {
  Transaction tx;
  tx.id = absl::StrCat("tx-", k);
  tx.event_time = FromUnixMicros(1'700'000'000'000'000 + int64_t{k} * 60'000'000);
  tx.originator.account_id = absl::StrCat("A", k % 300);
  tx.originator.bank_id = "B1";
  tx.beneficiary.account_id = absl::StrCat("A", (k * 7 + 1) % 300);
  tx.beneficiary.bank_id = "B1";
  tx.amount = Money(10'000 + k, 2, *Currency::FromCode("USD"));
  return tx;
}

class CheckpointShippingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(servers_, testing::NatsServers::Start(1, nats_dir_.path()));
    ASSERT_OK_AND_ASSIGN(nats_, servers_->Connect());
    layout_.name = "ship";
    layout_.partitions = 4;
    layout_.replicas = 1;
    ASSERT_OK(EnsureCheckpointStream(nats_.get(), layout_));
  }

  // A node state with "payments" applied and checkpointed, copied to <dir>/copy.
  std::string CheckpointOf(int payments) {
    const std::string state = absl::StrCat(dir_.path(), "/state", payments);
    absl::StatusOr<std::unique_ptr<FeatureStore>> store =
        FeatureStore::Open(state, fx_, FeatureConfig{}, {std::string(kNodeStateFamily)});
    EXPECT_OK(store.status());
    if (!store.ok()) return "";
    std::vector<double> row(FeatureExtractor::Schema()->size());
    for (int k = 0; k < payments; ++k) {
      EXPECT_OK((*store)->extractor().Process(Payment(k), absl::MakeSpan(row)));
    }
    EXPECT_OK((*store)->Checkpoint({{"position", absl::StrCat(payments)}}).status());
    const std::string copy = absl::StrCat(state, "-copy");
    EXPECT_OK((*store)->kv().Flush());  // table files, beside the log
    EXPECT_OK((*store)->kv().Checkpoint(copy));
    return copy;
  }

  vigil::testing::ScratchDir nats_dir_;
  vigil::testing::ScratchDir dir_;
  std::unique_ptr<testing::NatsServers> servers_;
  std::unique_ptr<NatsConnection> nats_;
  ClusterLayout layout_;
  const FxRates fx_ = Fx();
};

TEST_F(CheckpointShippingTest, AShippedCheckpointIsFetchedByteForByteAndOpensAsTheState) {
  ASSERT_OK_AND_ASSIGN(std::optional<CheckpointManifest> none,
                       LastShippedCheckpoint(nats_.get(), layout_));
  EXPECT_FALSE(none.has_value());
  // Enough accounts that a file spans several chunks.
  const std::string copy = CheckpointOf(20'000);
  ASSERT_OK_AND_ASSIGN(CheckpointManifest shipped,
                       ShipCheckpoint(nats_.get(), layout_, copy, 777, "node-a", 1234));
  EXPECT_EQ(shipped.position, 777u);
  EXPECT_GT(shipped.chunks, shipped.files.size()) << "a file larger than a chunk";
  ASSERT_OK_AND_ASSIGN(std::optional<CheckpointManifest> last,
                       LastShippedCheckpoint(nats_.get(), layout_));
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(EncodeManifest(*last), EncodeManifest(shipped));

  // A node with an empty dir opens the shipped state: the same accounts, the same files.
  const std::string fresh = absl::StrCat(dir_.path(), "/fresh");
  ASSERT_OK_AND_ASSIGN(NodeState state, OpenNodeState(nats_.get(), layout_, fresh, fx_,
                                                      FeatureConfig{}, std::chrono::seconds(5)));
  ASSERT_TRUE(state.fetched.has_value());
  EXPECT_EQ(state.fetched->position, 777u);
  EXPECT_EQ(state.store->extractor().num_accounts(), 300u);
  EXPECT_EQ(state.store->cursor().at("position"), "20000");
  int tables = 0;
  for (const ShippedFile& f : shipped.files) {
    // The table files, which RocksDB never changes once written (it may rewrite its log and
    // manifest on open).
    if (!f.name.ends_with(".sst")) continue;
    ++tables;
    EXPECT_TRUE(vigil::testing::SameFile(absl::StrCat(copy, "/", f.name),
                                         absl::StrCat(fresh, "/features/", f.name)))
        << f.name;
  }
  EXPECT_GT(tables, 0);
  // A node that has a state of its own keeps it.
  state.store.reset();
  ASSERT_OK_AND_ASSIGN(NodeState again, OpenNodeState(nats_.get(), layout_, fresh, fx_,
                                                      FeatureConfig{}, std::chrono::seconds(5)));
  EXPECT_FALSE(again.fetched.has_value());
}

TEST_F(CheckpointShippingTest, ANewerShipmentPurgesTheOlderAndAPurgedOneCannotBeFetched) {
  ASSERT_OK_AND_ASSIGN(CheckpointManifest first,
                       ShipCheckpoint(nats_.get(), layout_, CheckpointOf(100), 10, "node-a", 1));
  ASSERT_OK_AND_ASSIGN(CheckpointManifest second,
                       ShipCheckpoint(nats_.get(), layout_, CheckpointOf(200), 20, "node-b", 2));
  ASSERT_OK_AND_ASSIGN(StreamStatus stream, nats_->StatusOf(CheckpointStreamName(layout_)));
  EXPECT_EQ(stream.first_sequence, second.first_sequence);
  EXPECT_EQ(stream.messages, second.chunks);
  const std::string into = absl::StrCat(dir_.path(), "/old");
  const absl::Status old =
      FetchCheckpoint(nats_.get(), layout_, first, into, std::chrono::milliseconds(500));
  EXPECT_TRUE(absl::IsDataLoss(old)) << old;
  EXPECT_FALSE(std::filesystem::exists(into)) << "nothing is left of a failed fetch";
  EXPECT_FALSE(std::filesystem::exists(into + ".fetching"));
  ASSERT_OK(FetchCheckpoint(nats_.get(), layout_, second, into, std::chrono::seconds(5)));
  EXPECT_TRUE(absl::IsAlreadyExists(
      FetchCheckpoint(nats_.get(), layout_, second, into, std::chrono::seconds(5))));
}

TEST_F(CheckpointShippingTest, AFileWhoseHashDiffersIsRefusedNamingIt) {
  ASSERT_OK_AND_ASSIGN(CheckpointManifest shipped,
                       ShipCheckpoint(nats_.get(), layout_, CheckpointOf(50), 5, "node-a", 1));
  CheckpointManifest damaged = shipped;
  damaged.files.back().sha256_hex = std::string(64, '0');
  const absl::Status fetched = FetchCheckpoint(
      nats_.get(), layout_, damaged, absl::StrCat(dir_.path(), "/d"), std::chrono::seconds(5));
  EXPECT_TRUE(absl::IsDataLoss(fetched)) << fetched;
  EXPECT_THAT(fetched.message(), HasSubstr(damaged.files.back().name));
}

TEST(CheckpointManifestTest, RoundTripsAndRefusesWhatItCannotRead) {
  CheckpointManifest m;
  m.position = 42;
  m.node = "n1";
  m.created_unix_ms = 99;
  m.subject = "vigil.x.ckpt.n1_42_99";
  m.first_sequence = 7;
  m.chunks = 3;
  m.files = {{"000009.sst", 1000, std::string(64, 'a')}, {"CURRENT", 16, std::string(64, 'b')}};
  ASSERT_OK_AND_ASSIGN(CheckpointManifest back, DecodeManifest(EncodeManifest(m)));
  EXPECT_EQ(EncodeManifest(back), EncodeManifest(m));
  EXPECT_EQ(back.bytes(), 1016u);
  std::string bad = EncodeManifest(m);
  bad.replace(bad.find("position=42"), 11, "position=x");
  EXPECT_THAT(DecodeManifest(bad).status().message(), HasSubstr("line 2"));
  std::string escape = EncodeManifest(m) + "file=1 " + std::string(64, 'c') + " ../etc\n";
  EXPECT_TRUE(absl::IsDataLoss(DecodeManifest(escape).status()));
}

}  // namespace
}  // namespace vigil::cluster
