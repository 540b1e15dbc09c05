#include "vigil/features/feature_store.h"

#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "vigil/crypto/pseudonym.h"
#include "vigil/features/account_index.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::vigil::testing::StatusIs;

constexpr int64_t kBase = 1'661'990'400'000'000;

class FeatureStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/feature_store_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    fx_ = *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\n", "test");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<Transaction> Stream(int n) {
    std::mt19937_64 rng(11);
    std::vector<Transaction> txs;
    int64_t t = kBase;
    for (int i = 0; i < n; ++i) {
      t += static_cast<int64_t>(rng() % 3'600'000'000ULL);  // up to an hour apart
      Transaction tx;
      tx.id = std::to_string(i);
      tx.event_time = FromUnixMicros(t);
      tx.originator = {"A" + std::to_string(rng() % 40), "", "B", ""};
      tx.beneficiary = {"A" + std::to_string(rng() % 40), "", "B", ""};
      tx.amount = Money(static_cast<int64_t>(rng() % 2'000'000), 2, *Currency::FromCode("USD"));
      txs.push_back(tx);
    }
    return txs;
  }

  std::vector<double> Row(FeatureExtractor& fe, const Transaction& tx) {
    std::vector<double> row(FeatureExtractor::Schema()->size());
    EXPECT_OK(fe.Process(tx, absl::MakeSpan(row)));
    return row;
  }

  static bool SameRow(const std::vector<double>& a, const std::vector<double>& b) {
    // Bitwise: NaN equals NaN, and a restored state must reproduce every bit.
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
  }

  std::string dir_;
  FxRates fx_;
};

TEST_F(FeatureStoreTest, RestartFromCheckpointReproducesEveryRow) {
  const std::vector<Transaction> txs = Stream(600);
  FeatureExtractor uninterrupted(fx_, FeatureConfig{});
  std::vector<std::vector<double>> expected;
  for (const Transaction& tx : txs) expected.push_back(Row(uninterrupted, tx));

  {
    ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}));
    EXPECT_TRUE(store->cursor().empty());
    for (int i = 0; i < 250; ++i) ASSERT_TRUE(SameRow(Row(store->extractor(), txs[i]), expected[i]));
    ASSERT_OK(store->Checkpoint({{"position", "250"}}).status());
    // Work after the checkpoint is lost with the process: the restart must not see it.
    for (int i = 250; i < 300; ++i) Row(store->extractor(), txs[i]);
  }
  ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}));
  EXPECT_EQ(store->cursor().at("position"), "250");
  for (int i = 250; i < 600; ++i) {
    ASSERT_TRUE(SameRow(Row(store->extractor(), txs[i]), expected[i])) << "row " << i;
  }
  EXPECT_EQ(store->extractor().num_accounts(), uninterrupted.num_accounts());
}

// Busy accounts (many events, many receivers) cross the counterparty-index thresholds both ways;
// restarting from a checkpoint every 250 payments must still reproduce every row bit for bit,
// cycle lengths included (they read the most recent receivers of third accounts).
TEST_F(FeatureStoreTest, ManyRestartsOfBusyAccountsReproduceEveryRow) {
  std::mt19937_64 rng(5);
  std::vector<Transaction> txs;
  int64_t t = kBase;
  for (int i = 0; i < 6000; ++i) {
    // Bursts of activity and quiet days, so accounts go in and out of the index.
    t += rng() % 50 == 0 ? int64_t{3} * 24 * 3'600'000'000 : static_cast<int64_t>(rng() % 600'000'000);
    Transaction tx;
    tx.id = std::to_string(i);
    tx.event_time = FromUnixMicros(t);
    // A few hubs with more than 48 counterparties (hash-map representation) among quiet
    // accounts with a handful (sorted-vector or no index).
    const auto pick = [&] { return rng() % 3 == 0 ? rng() % 4 : rng() % 120; };
    tx.originator = {"A" + std::to_string(pick()), "", "B", ""};
    tx.beneficiary = {"A" + std::to_string(pick()), "", "B", ""};
    tx.amount = Money(1 + static_cast<int64_t>(rng() % 2'000'000), 2, *Currency::FromCode("USD"));
    txs.push_back(tx);
  }
  FeatureExtractor uninterrupted(fx_, FeatureConfig{});
  std::vector<std::vector<double>> expected;
  for (const Transaction& tx : txs) expected.push_back(Row(uninterrupted, tx));
  size_t next = 0;
  while (next < txs.size()) {
    ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}));
    const size_t end = std::min(txs.size(), next + 250);
    for (; next < end; ++next) {
      ASSERT_TRUE(SameRow(Row(store->extractor(), txs[next]), expected[next])) << "row " << next;
    }
    ASSERT_OK(store->Checkpoint({}).status());
  }
}

TEST_F(FeatureStoreTest, CheckpointWritesOnlyChangedAccountsAndReplacesTheCursor) {
  const std::vector<Transaction> txs = Stream(50);
  ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}));
  for (const Transaction& tx : txs) Row(store->extractor(), tx);
  ASSERT_OK_AND_ASSIGN(CheckpointStats first, store->Checkpoint({{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(first.accounts_written, store->extractor().num_accounts());
  Transaction again = txs.back();
  again.event_time += std::chrono::seconds(1);
  again.originator.account_id = "fresh";  // a new account and an existing one
  Row(store->extractor(), again);
  ASSERT_OK_AND_ASSIGN(CheckpointStats second, store->Checkpoint({{"a", "3"}}));
  EXPECT_EQ(second.accounts_written, 2u);
  store.reset();
  ASSERT_OK_AND_ASSIGN(store, FeatureStore::Open(dir_, fx_, FeatureConfig{}));
  EXPECT_EQ(store->cursor(), (std::map<std::string, std::string>{{"a", "3"}}));
}

FeatureConfig Pseudonymized(char key_byte, crypto::Pseudonymizer::Hash hash =
                                               crypto::Pseudonymizer::Hash::kHmacSha256) {
  FeatureConfig config;
  config.account_pseudonyms = std::make_shared<const crypto::Pseudonymizer>(
      *crypto::Pseudonymizer::Create(hash, std::string(32, key_byte)));
  return config;
}

// Accounts known by pseudonyms give the same rows as accounts known by their ids, the state
// (in memory and stored) holds only the keyed hashes, and a restart with the key continues it.
TEST_F(FeatureStoreTest, PseudonymizedStateHoldsNoAccountIdAndReproducesEveryRow) {
  const std::vector<Transaction> txs = Stream(400);
  FeatureExtractor plain(fx_, FeatureConfig{});
  std::vector<std::vector<double>> expected;
  for (const Transaction& tx : txs) expected.push_back(Row(plain, tx));
  const FeatureConfig config = Pseudonymized('k');
  {
    ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, config));
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(SameRow(Row(store->extractor(), txs[i]), expected[i]));
    ASSERT_OK(store->Checkpoint({}).status());
    const AccountIndex& index = store->extractor().index();
    const std::string first = AccountKey(txs[0].originator.bank_id, txs[0].originator.account_id);
    bool found = false;
    for (uint32_t a = 0; a < store->extractor().num_accounts(); ++a) {
      EXPECT_EQ(index.key(a).size(), 32u);
      for (const Transaction& tx : txs) {
        for (const Party* p : {&tx.originator, &tx.beneficiary}) {
          ASSERT_EQ(index.key(a).find(AccountKey(p->bank_id, p->account_id)),
                    std::string_view::npos)
              << "an account id in the state";
        }
      }
      found |= index.key(a) == config.account_pseudonyms->Of(first);
    }
    EXPECT_TRUE(found);
  }
  {
    // What the store holds: no stored value carries an account id.
    KvStoreOptions options;
    options.path = dir_ + "/features";
    options.column_families = {"accounts", "meta"};
    ASSERT_OK_AND_ASSIGN(auto kv, KvStore::Open(options));
    size_t accounts = 0;
    ASSERT_OK(kv->ForEach("accounts", "", [&](absl::string_view, absl::string_view value) {
      ++accounts;
      // varint length 32, then the pseudonym
      EXPECT_EQ(static_cast<uint8_t>(value[0]), 32u);
      return absl::OkStatus();
    }));
    EXPECT_GT(accounts, 0u);
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> keys, kv->Get("meta", "account_keys"));
    ASSERT_TRUE(keys.has_value());
    EXPECT_EQ(*keys, absl::StrCat("hmac-sha256:", config.account_pseudonyms->key_id()));
  }
  ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, config));
  for (int i = 200; i < 400; ++i) {
    ASSERT_TRUE(SameRow(Row(store->extractor(), txs[i]), expected[i])) << "row " << i;
  }
}

TEST_F(FeatureStoreTest, RefusesStateKeyedAnotherWay) {
  const std::vector<Transaction> txs = Stream(20);
  {
    ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, Pseudonymized('k')));
    for (const Transaction& tx : txs) Row(store->extractor(), tx);
    ASSERT_OK(store->Checkpoint({}).status());
  }
  // Another key, another hash, or plain ids: every account would look new.
  EXPECT_THAT(FeatureStore::Open(dir_, fx_, Pseudonymized('j')).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::HasSubstr("pseudonym")));
  EXPECT_THAT(
      FeatureStore::Open(dir_, fx_, Pseudonymized('k', crypto::Pseudonymizer::Hash::kHmacSm3))
          .status(),
      StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::HasSubstr("hmac-sm3")));
  EXPECT_THAT(FeatureStore::Open(dir_, fx_, FeatureConfig{}).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       ::testing::HasSubstr("keyed by account pseudonyms hmac-sha256:")));
  std::filesystem::remove_all(dir_ + "/features");
  {
    ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}));
    for (const Transaction& tx : txs) Row(store->extractor(), tx);
    ASSERT_OK(store->Checkpoint({}).status());
  }
  EXPECT_THAT(FeatureStore::Open(dir_, fx_, Pseudonymized('k')).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       ::testing::HasSubstr("keyed by plain account ids")));
}

TEST_F(FeatureStoreTest, RefusesStateOfAnotherSchemaVersion) {
  {
    KvStoreOptions options;
    options.path = dir_ + "/features";
    options.column_families = {"accounts", "meta"};
    ASSERT_OK_AND_ASSIGN(auto kv, KvStore::Open(options));
    ASSERT_OK(kv->Put("meta", "schema", "vigil.features.v0"));
  }
  EXPECT_THAT(FeatureStore::Open(dir_, fx_, FeatureConfig{}),
              StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::HasSubstr("v0")));
}

TEST_F(FeatureStoreTest, RestoresStateOfSchemaV1WithAnEmptyLongMemory) {
  const std::vector<Transaction> txs = Stream(30);
  {
    ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}));
    for (const Transaction& tx : txs) Row(store->extractor(), tx);
    ASSERT_OK(store->Checkpoint({}).status());
  }
  {
    // Rewrite the state as v1 wrote it: account encoding 2, no long memory after the events.
    KvStoreOptions options;
    options.path = dir_ + "/features";
    options.column_families = {"accounts", "meta"};
    ASSERT_OK_AND_ASSIGN(auto kv, KvStore::Open(options));
    std::vector<std::pair<std::string, std::string>> v1;
    ASSERT_OK(kv->ForEach("accounts", "", [&](absl::string_view key, absl::string_view value) {
      // The record: the account key's length (one varint byte here), the key, the state.
      const size_t state_at = 1 + static_cast<uint8_t>(value[0]);
      auto state = AccountState::Decode(
          std::string_view(value.data() + state_at, value.size() - state_at));
      if (!state.ok()) return state.status();
      std::string history;  // and the account risk after it
      state->history().EncodeTo(&history);
      state->risk().EncodeTo(&history);
      std::string old(value.substr(0, value.size() - history.size()));
      old[state_at] = 2;
      v1.emplace_back(std::string(key), old);
      return absl::OkStatus();
    }));
    ASSERT_FALSE(v1.empty());
    for (const auto& [key, value] : v1) ASSERT_OK(kv->Put("accounts", key, value));
    ASSERT_OK(kv->Put("meta", "schema", "vigil.features.v1"));
  }
  ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}));
  ASSERT_GT(store->extractor().num_accounts(), 0u);
  size_t events = 0;
  for (uint32_t a = 0; a < store->extractor().num_accounts(); ++a) {
    EXPECT_TRUE(store->extractor().state(a).history().pairs().empty());
    events += store->extractor().state(a).num_events();
  }
  EXPECT_EQ(events, 2 * txs.size()) << "the 7-day events come back";
}

TEST_F(FeatureStoreTest, DamagedAccountRecordIsDataLoss) {
  {
    ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}));
    for (const Transaction& tx : Stream(10)) Row(store->extractor(), tx);
    ASSERT_OK(store->Checkpoint({}).status());
  }
  {
    KvStoreOptions options;
    options.path = dir_ + "/features";
    ASSERT_OK_AND_ASSIGN(auto kv, KvStore::Open(options));
    ASSERT_OK(kv->Put("accounts", std::string("\0\0\0\1", 4), std::string("\x05short", 6)));
  }
  EXPECT_THAT(FeatureStore::Open(dir_, fx_, FeatureConfig{}),
              StatusIs(absl::StatusCode::kDataLoss, ::testing::HasSubstr("account 1")));
}

TEST_F(FeatureStoreTest, AStagedCheckpointIsWhatTheCommitMakesDurable) {
  const std::vector<Transaction> txs = Stream(40);
  std::vector<std::vector<double>> expected;
  {
    ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}));
    for (size_t i = 0; i < 30; ++i) Row(store->extractor(), txs[i]);
    FeatureStore::StagedCheckpoint staged = store->Stage({{"at", "30"}});
    EXPECT_EQ(staged.stats.accounts_written, store->extractor().num_accounts());
    EXPECT_TRUE(store->extractor().dirty_accounts().empty());  // the stage took them
    // Traffic after the stage is not in it: the commit writes the state as staged.
    for (size_t i = 30; i < 40; ++i) Row(store->extractor(), txs[i]);
    ASSERT_OK(store->Commit(staged));
    // What a restart from the staged state must reproduce.
    FeatureExtractor reference(fx_, FeatureConfig{});
    for (size_t i = 0; i < 30; ++i) Row(reference, txs[i]);
    for (size_t i = 30; i < 40; ++i) expected.push_back(Row(reference, txs[i]));
  }
  ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}));
  EXPECT_EQ(store->cursor(), (std::map<std::string, std::string>{{"at", "30"}}));
  for (size_t i = 30; i < 40; ++i) {
    EXPECT_TRUE(SameRow(Row(store->extractor(), txs[i]), expected[i - 30])) << i;
  }
}

// Staged into another module's batch (the audit log's groups), with that module's own writes:
// one atomic write, and the state restored is the one staged.
TEST_F(FeatureStoreTest, StateStagedIntoAnotherBatchIsRestoredWithIt) {
  const std::vector<Transaction> txs = Stream(40);
  std::vector<std::vector<double>> expected;
  {
    ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}, {"other"}));
    for (size_t i = 0; i < 30; ++i) Row(store->extractor(), txs[i]);
    KvWriteBatch batch;
    batch.Put("other", "record", "30");
    store->StageInto(batch);
    EXPECT_TRUE(store->extractor().dirty_accounts().empty());
    for (size_t i = 30; i < 40; ++i) Row(store->extractor(), txs[i]);  // not in the batch
    ASSERT_OK(store->kv().Write(batch, {.sync = true}));
    FeatureExtractor reference(fx_, FeatureConfig{});
    for (size_t i = 0; i < 30; ++i) Row(reference, txs[i]);
    for (size_t i = 30; i < 40; ++i) expected.push_back(Row(reference, txs[i]));
  }
  ASSERT_OK_AND_ASSIGN(auto store, FeatureStore::Open(dir_, fx_, FeatureConfig{}, {"other"}));
  EXPECT_THAT(store->kv().Get("other", "record"),
              ::vigil::testing::IsOkAndHolds(std::optional<std::string>("30")));
  for (size_t i = 30; i < 40; ++i) {
    EXPECT_TRUE(SameRow(Row(store->extractor(), txs[i]), expected[i - 30])) << i;
  }
}

// Other state may share the store's directory and log: its families are opened beside the
// store's own and survive a restart; the store's own names are refused.
TEST_F(FeatureStoreTest, OpensExtraColumnFamiliesForOtherState) {
  {
    ASSERT_OK_AND_ASSIGN(auto store,
                         FeatureStore::Open(dir_, fx_, FeatureConfig{}, {"drift_events"}));
    ASSERT_OK(store->kv().Put("drift_events", "k", "v"));
  }
  ASSERT_OK_AND_ASSIGN(auto store,
                       FeatureStore::Open(dir_, fx_, FeatureConfig{}, {"drift_events"}));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> v, store->kv().Get("drift_events", "k"));
  EXPECT_EQ(v, "v");
  store.reset();
  EXPECT_THAT(FeatureStore::Open(dir_, fx_, FeatureConfig{}, {"accounts"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace vigil
