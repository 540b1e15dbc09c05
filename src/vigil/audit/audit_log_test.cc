#include "vigil/audit/audit_log.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <atomic>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/audit_verifier.h"
#include "vigil/audit/record_chunk.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/audit/testing_log.h"
#include "vigil/core/currency.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::audit {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

PendingRecord Record(const std::string& id) {
  AuditRecord r;
  r.transaction.id = id;
  r.decision.transaction_id = id;
  r.decision.action = Action::kReview;
  r.source = "test";
  r.input_sha256 = Digest(HashAlgorithm::kSha256, id);
  r.features = {1.0, 2.0, 3.0};
  return {id, EncodeRecordBody(r)};
}

// A record with personal fields, sealed with the log's current sealer as DecisionRecorder encodes.
AuditRecord PersonalRecord(const std::string& id) {
  AuditRecord r;
  r.transaction.id = id;
  r.transaction.originator = {.account_id = "DE-" + id, .name = "Jane Roe " + id,
                              .address = {"1 Main St"}};
  r.transaction.beneficiary = {.account_id = "HK-" + id, .name = "Harbour Ltd"};
  r.transaction.amount = Money(100, 2, *Currency::FromCode("EUR"));
  r.transaction.remittance = "invoice " + id;
  r.decision.transaction_id = id;
  r.decision.action = Action::kBlock;
  r.source = "test";
  r.input_sha256 = Digest(HashAlgorithm::kSha256, id);
  return r;
}
PendingRecord SealedRecord(const AuditLog& log, const std::string& id) {
  const AuditRecord r = PersonalRecord(id);
  const std::shared_ptr<const RecordSealer> sealer = log.sealer();
  RecordBodyFields fields = RecordBodyFields::Of(r);
  fields.sealer = sealer.get();
  absl::StatusOr<std::string> body = EncodeRecordBody(fields);
  EXPECT_TRUE(body.ok()) << body.status();
  return {id, body.ok() ? *std::move(body) : std::string()};
}

const std::string& KekDir() {
  static const std::string* dir = new std::string(
      (std::filesystem::path(::testing::TempDir()) / absl::StrCat("audit_log_test_keks_", getpid()))
          .string());
  return *dir;
}

// Key-encryption keys, made once per process (and removed when it exits).
const TestKek& Kek(int n, KekKind kind = KekKind::kRsa) {
  static std::map<int, TestKek>* keks = [] {
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(KekDir(), ec);
    });
    return new std::map<int, TestKek>();
  }();
  auto it = keks->find(n);
  if (it == keks->end()) {
    it = keks->emplace(n, MakeTestKek(KekDir(), absl::StrCat("kek", n), kind)).first;
  }
  return it->second;
}

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("audit_log_test_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    clock_.Set(FromUnixMicros(1'764'500'000'000'000));
    signer_ = TestSigner(SignatureAlgorithm::kEd25519);
    OpenStore();
  }
  void TearDown() override {
    log_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void OpenStore() {
    KvStoreOptions options;
    options.faults = faults_;
    options.path = dir_;
    options.column_families = AuditColumnFamilies();
    options.block_cache_bytes = size_t{1} << 20;
    absl::StatusOr<std::unique_ptr<KvStore>> store = KvStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  AuditLogOptions Options() const {
    AuditLogOptions o;
    o.signer = signer_;
    o.tree_head_every_records = 100;
    o.tree_head_interval = std::chrono::hours(1);
    return o;
  }

  void OpenLog(AuditLogOptions options) {
    absl::StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::Open(store_.get(), options, clock_);
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = *std::move(log);
  }

  void Reopen(AuditLogOptions options) {
    log_.reset();
    store_.reset();
    OpenStore();
    OpenLog(options);
  }

  std::vector<AppendedRecord> AppendIds(int first, int count) {
    std::vector<PendingRecord> records;
    for (int i = first; i < first + count; ++i) records.push_back(Record(absl::StrCat("tx-", i)));
    absl::StatusOr<std::vector<AppendedRecord>> appended = log_->Append(std::move(records));
    EXPECT_TRUE(appended.ok()) << appended.status();
    return appended.ok() ? *appended : std::vector<AppendedRecord>();
  }

  // Leaf hashes recomputed from the stored records, checking the chain on the way.
  std::vector<Hash> WalkChain() {
    std::vector<Hash> leaves;
    const absl::Status s = log_->ForEachRecord(0, [&](uint64_t sequence, std::string_view bytes) {
      EXPECT_EQ(sequence, leaves.size());
      absl::StatusOr<AuditRecord> record = DecodeRecord(bytes);
      EXPECT_TRUE(record.ok()) << record.status();
      if (!record.ok()) return record.status();
      EXPECT_EQ(record->sequence, sequence);
      if (sequence > 0) {
        EXPECT_EQ(record->previous_leaf_hash, leaves.back());
      }
      leaves.push_back(LeafHash(log_->hash(), bytes));
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << s;
    return leaves;
  }

  std::string dir_;
  ::vigil::testing::FakeClock clock_;
  std::shared_ptr<const LogSigner> signer_;
  std::shared_ptr<KvFaults> faults_ = std::make_shared<KvFaults>();
  std::unique_ptr<KvStore> store_;
  std::unique_ptr<AuditLog> log_;
};

TEST_F(AuditLogTest, AppendedRecordsAreChainedHashedAndFoundById) {
  OpenLog(Options());
  const std::vector<AppendedRecord> first = AppendIds(0, 3);
  const std::vector<AppendedRecord> second = AppendIds(3, 2);
  ASSERT_EQ(first.size(), 3u);
  ASSERT_EQ(second.size(), 2u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(first[i].sequence, i);
  EXPECT_EQ(second[0].sequence, 3u);
  EXPECT_EQ(log_->size(), 5u);

  const std::vector<Hash> leaves = WalkChain();
  ASSERT_EQ(leaves.size(), 5u);
  EXPECT_EQ(leaves[4], second[1].leaf_hash);
  for (uint64_t i = 0; i < 5; ++i) {
    EXPECT_THAT(log_->StoredLeafHash(i), ::vigil::testing::IsOkAndHolds(leaves[i]));
  }
  EXPECT_THAT(log_->FindTransaction("tx-3"),
              ::vigil::testing::IsOkAndHolds(std::optional<uint64_t>(3)));
  EXPECT_THAT(log_->FindTransaction("tx-9"),
              ::vigil::testing::IsOkAndHolds(std::optional<uint64_t>()));
  ASSERT_OK_AND_ASSIGN(std::string bytes, log_->ReadRecord(3));
  ASSERT_OK_AND_ASSIGN(AuditRecord r, DecodeRecord(bytes));
  EXPECT_EQ(r.transaction.id, "tx-3");
  EXPECT_EQ(r.decision.action, Action::kReview);
  EXPECT_THAT(log_->ReadRecord(5), StatusIs(absl::StatusCode::kNotFound));

  // The durable head's root is the RFC 9162 root of the recomputed leaves.
  const InMemorySubtreeSource reference(log_->hash(), leaves);
  ASSERT_OK_AND_ASSIGN(AuditLog::DurableHead head, log_->ReadDurableHead());
  EXPECT_EQ(head.size, 5u);
  EXPECT_THAT(RootHash(log_->hash(), reference, 5), ::vigil::testing::IsOkAndHolds(head.root));
}

TEST_F(AuditLogTest, TreeHeadsAreSignedEveryNRecordsAndAtClose) {
  AuditLogOptions options = Options();
  options.tree_head_every_records = 10;
  OpenLog(options);
  // A new log starts with a head of size 0, signed when it is created.
  ASSERT_OK_AND_ASSIGN(SignedTreeHead first, log_->LatestTreeHead());
  EXPECT_EQ(first.size, 0u);
  ASSERT_TRUE(first.chain.has_value());
  EXPECT_EQ(first.chain->index, 0u);
  EXPECT_FALSE(first.chain->previous.has_value());
  EXPECT_EQ(first.chain->every_records, 10u);
  EXPECT_EQ(log_->header().format, 2);
  for (int i = 0; i < 25; ++i) AppendIds(i, 1);  // one group each
  ASSERT_OK_AND_ASSIGN(std::vector<SignedTreeHead> heads, log_->TreeHeads());
  ASSERT_EQ(heads.size(), 3u);
  EXPECT_EQ(heads[1].size, 10u);
  EXPECT_EQ(heads[2].size, 20u);
  log_.reset();  // closing signs the tail
  OpenLog(options);
  ASSERT_OK_AND_ASSIGN(heads, log_->TreeHeads());
  ASSERT_EQ(heads.size(), 4u);
  EXPECT_EQ(heads[3].size, 25u);
  // Chained: each names the one before it.
  for (size_t i = 1; i < heads.size(); ++i) {
    ASSERT_TRUE(heads[i].chain.has_value());
    EXPECT_EQ(heads[i].chain->index, i);
    EXPECT_EQ(heads[i].chain->previous, TreeHeadHash(heads[i - 1]));
  }

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LogVerifier> verifier,
                       LogVerifier::FromPem(log_->header().public_key_pem, "header"));
  for (const SignedTreeHead& head : heads) {
    EXPECT_OK(VerifyTreeHead(*verifier, head));
    EXPECT_EQ(head.log_id, log_->header().log_id);
    EXPECT_THAT(log_->RootHash(head.size), ::vigil::testing::IsOkAndHolds(head.root));
  }
  ASSERT_OK_AND_ASSIGN(SignedTreeHead latest, log_->LatestTreeHead());
  EXPECT_EQ(latest, heads.back());
}

TEST_F(AuditLogTest, HeadsFallExactlyEveryNRecordsWithinAGroupAndKeepTheirPromise) {
  AuditLogOptions options = Options();
  options.tree_head_every_records = 100;
  OpenLog(options);
  AppendIds(0, 250);  // one group: heads at 100 and 200 inside it
  ASSERT_OK_AND_ASSIGN(std::vector<SignedTreeHead> heads, log_->TreeHeads());
  ASSERT_EQ(heads.size(), 3u);
  EXPECT_EQ(heads[1].size, 100u);
  EXPECT_EQ(heads[2].size, 200u);
  EXPECT_EQ(log_->stats().tree_heads, 2u);
  for (const SignedTreeHead& head : heads) {
    EXPECT_THAT(log_->RootHash(head.size), ::vigil::testing::IsOkAndHolds(head.root));
  }
  // Closed (a head at 250) and reopened with a larger cadence: the newest head promised 100,
  // so the next one still comes 100 records after it; later ones follow the new cadence.
  options.tree_head_every_records = 1000;
  Reopen(options);
  AppendIds(250, 1100);
  ASSERT_OK_AND_ASSIGN(heads, log_->TreeHeads());
  ASSERT_EQ(heads.size(), 6u);
  EXPECT_EQ(heads[3].size, 250u);  // at close
  EXPECT_EQ(heads[4].size, 350u);
  EXPECT_EQ(heads[4].chain->every_records, 1000u);
  EXPECT_EQ(heads[5].size, 1350u);
}

TEST_F(AuditLogTest, ALegacyLogGoesOnChainedFromItsUnchainedHeads) {
  // A log as the format before chaining wrote it: heads without index, header format 1.
  AuditLogOptions options = Options();
  options.tree_head_every_records = 10;
  OpenLog(options);
  AppendIds(0, 30);
  ASSERT_OK_AND_ASSIGN(std::vector<SignedTreeHead> written, log_->TreeHeads());
  log_.reset();
  for (const SignedTreeHead& head : written) {
    ASSERT_OK(store_->Delete("audit_heads", SequenceKey(head.size)));
    if (head.size == 0) continue;
    SignedTreeHead legacy = head;
    legacy.chain.reset();
    ASSERT_OK(SignTreeHead(*signer_, legacy));
    ASSERT_OK(store_->Put("audit_heads", SequenceKey(head.size), TreeHeadToJson(legacy)));
  }
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> header, store_->Get("audit_meta", "header"));
  const size_t at = header->find("\"format\":2");
  ASSERT_NE(at, std::string::npos);
  header->replace(at, 10, "\"format\":1");
  ASSERT_OK(store_->Put("audit_meta", "header", *header));
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> legacy, AuditLog::OpenForReading(store_.get()));
    EXPECT_EQ(legacy->header().format, 1);
    ASSERT_OK_AND_ASSIGN(VerifyReport report, VerifyAuditLog(*legacy, {}));
    EXPECT_TRUE(report.intact()) << report.damage->detail;
    EXPECT_FALSE(report.tree_heads_chained);
    EXPECT_EQ(report.legacy_tree_heads, 3u);
    // Unchained heads: one removed is not found (docs/audit.md says so).
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> kept,
                         store_->Get("audit_heads", SequenceKey(20)));
    ASSERT_OK(store_->Delete("audit_heads", SequenceKey(20)));
    ASSERT_OK_AND_ASSIGN(report, VerifyAuditLog(*legacy, {}));
    EXPECT_TRUE(report.intact());
    ASSERT_OK(store_->Put("audit_heads", SequenceKey(20), *kept));
  }
  // Continued by this version: chained from the legacy heads' number, the header upgraded.
  OpenLog(options);
  AppendIds(30, 15);
  log_.reset();
  OpenLog(options);
  EXPECT_EQ(log_->header().format, 2);
  ASSERT_OK_AND_ASSIGN(std::vector<SignedTreeHead> heads, log_->TreeHeads());
  ASSERT_EQ(heads.size(), 5u);  // 10, 20, 30 (legacy), 40, 45
  EXPECT_FALSE(heads[2].chain.has_value());
  ASSERT_TRUE(heads[3].chain.has_value());
  EXPECT_EQ(heads[3].chain->index, 3u);
  EXPECT_EQ(heads[3].chain->previous, TreeHeadHash(heads[2]));
  ASSERT_OK_AND_ASSIGN(VerifyReport report, VerifyAuditLog(*log_, {}));
  EXPECT_TRUE(report.intact()) << report.damage->detail;
  EXPECT_TRUE(report.tree_heads_chained);
  EXPECT_EQ(report.legacy_tree_heads, 3u);
  // Now a legacy head removed is found: the chained heads count them.
  ASSERT_OK(store_->Delete("audit_heads", SequenceKey(10)));
  ASSERT_OK_AND_ASSIGN(report, VerifyAuditLog(*log_, {}));
  ASSERT_TRUE(report.damage.has_value());
  EXPECT_EQ(report.damage->kind, DamageKind::kMissingHead) << report.damage->detail;
}

TEST_F(AuditLogTest, ATreeHeadIsSignedWhenTheIntervalPassesAndTheLogGrew) {
  AuditLogOptions options = Options();
  options.tree_head_every_records = 1'000'000;
  options.tree_head_interval = std::chrono::milliseconds(5);
  OpenLog(options);
  AppendIds(0, 3);
  clock_.Advance(std::chrono::milliseconds(10));
  // The committer wakes every interval (real time) and signs when the log's clock says so.
  for (int i = 0; i < 400 && log_->stats().tree_heads == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_OK_AND_ASSIGN(SignedTreeHead head, log_->LatestTreeHead());
  EXPECT_EQ(head.size, 3u);
  EXPECT_EQ(head.time, clock_.Now());
  // Without growth, no new head however long it waits.
  clock_.Advance(std::chrono::seconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(log_->stats().tree_heads, 1u);
}

TEST_F(AuditLogTest, ProofsVerifyAgainstTheSignedHeadsAcrossReopenAndTileBoundaries) {
  AuditLogOptions options = Options();
  options.tree_head_every_records = 300;
  OpenLog(options);
  // Sizes that cross tile boundaries (256 leaves, 65,536 leaves) between reopenings.
  int next = 0;
  for (int chunk : {255, 1, 1, 700, 64'579, 3}) {
    for (int done = 0; done < chunk; done += 250) {  // groups of at most 250: many heads
      AppendIds(next + done, std::min(250, chunk - done));
    }
    next += chunk;
    Reopen(options);
  }
  ASSERT_EQ(log_->size(), static_cast<uint64_t>(next));
  const std::vector<Hash> leaves = WalkChain();
  ASSERT_EQ(leaves.size(), static_cast<size_t>(next));
  const InMemorySubtreeSource reference(log_->hash(), leaves);
  ASSERT_OK_AND_ASSIGN(std::vector<SignedTreeHead> heads, log_->TreeHeads());
  ASSERT_GE(heads.size(), 100u);
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const SignedTreeHead& head = heads[1 + rng() % (heads.size() - 1)];  // not the empty one
    EXPECT_THAT(RootHash(log_->hash(), reference, head.size),
                ::vigil::testing::IsOkAndHolds(head.root));
    const uint64_t sequence = rng() % head.size;
    ASSERT_OK_AND_ASSIGN(std::vector<Hash> proof, log_->InclusionProof(sequence, head.size));
    EXPECT_OK(VerifyInclusion(log_->hash(), sequence, head.size, leaves[sequence], proof,
                              head.root));
    const SignedTreeHead& older = heads[rng() % heads.size()];
    if (older.size > 0 && older.size <= head.size) {
      ASSERT_OK_AND_ASSIGN(std::vector<Hash> consistency,
                           log_->ConsistencyProof(older.size, head.size));
      EXPECT_OK(VerifyConsistency(log_->hash(), older.size, head.size, older.root, head.root,
                                  consistency));
    }
  }
  EXPECT_THAT(log_->InclusionProof(0, log_->size() + 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("beyond")));
}

TEST_F(AuditLogTest, ConcurrentAppendsAreContiguousPerCallAndUniqueOverall) {
  AuditLogOptions options = Options();
  options.group_max_records = 64;
  OpenLog(options);
  constexpr int kThreads = 8, kCalls = 200;
  std::vector<std::vector<AppendedRecord>> got(kThreads * kCalls);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        const int call = t * kCalls + c;
        std::vector<PendingRecord> records;
        for (int k = 0; k <= call % 3; ++k) records.push_back(Record(absl::StrCat(call, "/", k)));
        absl::StatusOr<std::vector<AppendedRecord>> r = log_->Append(std::move(records));
        ASSERT_TRUE(r.ok()) << r.status();
        got[call] = *r;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<uint64_t> sequences;
  for (int call = 0; call < kThreads * kCalls; ++call) {
    ASSERT_EQ(got[call].size(), static_cast<size_t>(call % 3 + 1));
    for (size_t k = 0; k < got[call].size(); ++k) {
      EXPECT_EQ(got[call][k].sequence, got[call][0].sequence + k);  // contiguous
      EXPECT_TRUE(sequences.insert(got[call][k].sequence).second);
      EXPECT_THAT(log_->FindTransaction(absl::StrCat(call, "/", k)),
                  ::vigil::testing::IsOkAndHolds(std::optional<uint64_t>(got[call][k].sequence)));
    }
  }
  EXPECT_EQ(*sequences.rbegin() + 1, sequences.size());  // no gaps
  EXPECT_EQ(WalkChain().size(), sequences.size());
  EXPECT_LT(log_->stats().groups, log_->stats().records);  // groups did form
}

TEST_F(AuditLogTest, AnotherSigningKeyIsRefusedOnOpen) {
  OpenLog(Options());
  AppendIds(0, 1);
  AuditLogOptions other = Options();
  other.signer = TestSigner(SignatureAlgorithm::kEd25519);
  log_.reset();
  EXPECT_THAT(AuditLog::Open(store_.get(), other, clock_),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("signed with key")));
}

TEST_F(AuditLogTest, Sm3AndSm2LogsWork) {
  AuditLogOptions options = Options();
  options.hash = HashAlgorithm::kSm3;
  options.signer = TestSigner(SignatureAlgorithm::kSm2);
  options.tree_head_every_records = 4;
  signer_ = options.signer;
  OpenLog(options);
  AppendIds(0, 9);
  EXPECT_EQ(log_->hash(), HashAlgorithm::kSm3);
  const std::vector<Hash> leaves = WalkChain();
  ASSERT_OK_AND_ASSIGN(SignedTreeHead head, log_->LatestTreeHead());
  EXPECT_EQ(head.hash, HashAlgorithm::kSm3);
  EXPECT_EQ(head.signature_algorithm, SignatureAlgorithm::kSm2);
  EXPECT_EQ(leaves[0], LeafHash(HashAlgorithm::kSm3, *log_->ReadRecord(0)));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LogVerifier> verifier,
                       LogVerifier::FromPem(signer_->PublicKeyPem(), "sm2"));
  EXPECT_OK(VerifyTreeHead(*verifier, head));
  // The algorithm is the header's: reopening with the default (SHA-256) keeps SM3.
  options.hash = HashAlgorithm::kSha256;
  Reopen(options);
  EXPECT_EQ(log_->hash(), HashAlgorithm::kSm3);
  AppendIds(9, 1);
  EXPECT_EQ(WalkChain().size(), 10u);
}

TEST_F(AuditLogTest, AFullQueueIsAnsweredNotAbsorbed) {
  AuditLogOptions options = Options();
  options.max_queued_records = 4;
  OpenLog(options);
  std::vector<PendingRecord> five;
  for (int i = 0; i < 5; ++i) five.push_back(Record(absl::StrCat("q", i)));
  EXPECT_THAT(log_->Append(std::move(five)),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("queue full")));
  EXPECT_EQ(log_->stats().refused, 5u);
  EXPECT_OK(log_->health());
}

TEST_F(AuditLogTest, AppendWithoutWaitingIsDurableAfterFlush) {
  OpenLog(Options());
  ASSERT_OK_AND_ASSIGN(std::vector<AppendedRecord> none, log_->Append({Record("a")}, false));
  EXPECT_TRUE(none.empty());
  EXPECT_OK(log_->Flush());
  EXPECT_EQ(log_->size(), 1u);
}

TEST_F(AuditLogTest, TheCompanionsStateIsWrittenWithTheGroup) {
  KvStoreOptions with_state;
  log_.reset();
  store_.reset();
  with_state.path = dir_;
  with_state.column_families = AuditColumnFamilies();
  with_state.column_families.push_back("state");
  ASSERT_OK_AND_ASSIGN(store_, KvStore::Open(with_state));
  OpenLog(Options());
  std::vector<std::string> seen;
  log_->SetCompanion([&](absl::Span<const std::string> ids, KvWriteBatch& batch) {
    for (const std::string& id : ids) {
      seen.push_back(id);
      batch.Put("state", id, "counted");
    }
  });
  AppendIds(0, 2);
  EXPECT_THAT(seen, ::testing::ElementsAre("tx-0", "tx-1"));
  EXPECT_THAT(store_->Get("state", "tx-1"),
              ::vigil::testing::IsOkAndHolds(std::optional<std::string>("counted")));
}

TEST_F(AuditLogTest, ReadOnlyLogsReadAndRefuseAppends) {
  EXPECT_THAT(AuditLog::OpenForReading(store_.get()), StatusIs(absl::StatusCode::kNotFound));
  OpenLog(Options());
  AppendIds(0, 3);
  log_.reset();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> reader, AuditLog::OpenForReading(store_.get()));
  EXPECT_EQ(reader->size(), 3u);
  EXPECT_THAT(reader->Append({Record("x")}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("read-only")));
  ASSERT_OK_AND_ASSIGN(SignedTreeHead head, reader->LatestTreeHead());
  EXPECT_EQ(head.size, 3u);
}

TEST_F(AuditLogTest, AFailedSyncStopsTheLogWithoutLosingWhatWasDurable) {
  OpenLog(Options());
  AppendIds(0, 5);
  faults_->set_fail_syncs(true);
  std::vector<PendingRecord> lost;
  for (int i = 5; i < 8; ++i) lost.push_back(Record(absl::StrCat("tx-", i)));
  EXPECT_THAT(log_->Append(std::move(lost)),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("nothing of this group")));
  EXPECT_FALSE(log_->health().ok());
  EXPECT_EQ(log_->size(), 5u);
  // Refused from now on, even with the disk back: nothing is acknowledged that might be lost.
  faults_->set_fail_syncs(false);
  EXPECT_THAT(log_->Append({Record("tx-9")}),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("stopped after a failed write")));
  EXPECT_GE(log_->stats().refused, 1u);
  EXPECT_EQ(log_->stats().failed_writes, 1u);
  EXPECT_THAT(log_->Flush(), StatusIs(absl::StatusCode::kUnavailable));

  // After a restart the log holds what was durable, and continues from there. The failed
  // group was written, only not synced: the system may still have put it on disk (here it
  // did, in the page cache), so it may be there too, whole and chained. It was never
  // acknowledged; a retry is then answered with it.
  Reopen(Options());
  EXPECT_OK(log_->health());
  const uint64_t size = log_->size();
  EXPECT_TRUE(size == 5 || size == 8) << size;
  const std::vector<AppendedRecord> more = AppendIds(100, 2);
  ASSERT_EQ(more.size(), 2u);
  EXPECT_EQ(more[0].sequence, size);
  EXPECT_EQ(WalkChain().size(), size + 2);
}

// AppendThen holds no thread while a group syncs: it returns at once, and its callback runs
// once the records are durable, in the order appended.
TEST_F(AuditLogTest, AppendThenReturnsAtOnceAndIsToldWhenDurableInOrder) {
  OpenLog(Options());
  AppendIds(0, 2);
  faults_->set_hold_syncs(true);  // the disk stalls: nothing becomes durable
  absl::Mutex mu;
  std::vector<std::pair<std::string, uint64_t>> told;  // in the order told
  for (int i = 2; i < 12; ++i) {
    const std::string id = absl::StrCat("tx-", i);
    ASSERT_OK(log_->AppendThen(
        {Record(id)}, [&, id](absl::StatusOr<std::vector<AppendedRecord>> appended) {
          ASSERT_OK(appended);
          ASSERT_EQ(appended->size(), 1u);
          absl::MutexLock lock(&mu);
          told.emplace_back(id, (*appended)[0].sequence);
        }));
  }
  // Every append returned while the sync waits, and none was told durable.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (faults_->held() == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GE(faults_->held(), 1u);
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(told.empty());
  }
  EXPECT_EQ(log_->size(), 2u);
  faults_->set_hold_syncs(false);
  ASSERT_OK(log_->Flush());  // released after everything queued before it
  absl::MutexLock lock(&mu);
  ASSERT_EQ(told.size(), 10u);
  for (size_t k = 0; k < told.size(); ++k) {
    EXPECT_EQ(told[k].first, absl::StrCat("tx-", k + 2));
    EXPECT_EQ(told[k].second, k + 2);
  }
  EXPECT_EQ(log_->size(), 12u);
}

// A failed sync is told to every AppendThen of its group, with the error; later appends are
// refused at once (the callback is not called).
TEST_F(AuditLogTest, AppendThenIsToldOfAFailedSyncAndRefusedAfter) {
  OpenLog(Options());
  AppendIds(0, 3);
  faults_->set_fail_syncs(true);
  absl::Notification told;
  absl::Status outcome;
  ASSERT_OK(log_->AppendThen({Record("tx-3"), Record("tx-4")},
                             [&](absl::StatusOr<std::vector<AppendedRecord>> appended) {
                               outcome = appended.status();
                               told.Notify();
                             }));
  ASSERT_TRUE(told.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_THAT(outcome, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("nothing of this group")));
  bool called = false;
  EXPECT_THAT(log_->AppendThen({Record("tx-5")},
                               [&](absl::StatusOr<std::vector<AppendedRecord>>) { called = true; }),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("stopped after a failed write")));
  EXPECT_FALSE(called);
  faults_->set_fail_syncs(false);
}

TEST_F(AuditLogTest, RecordsAreStoredInChunksAndReadFromAnywhere) {
  OpenLog(Options());
  AppendIds(0, 600);  // one group: chunks of 256, 256 and 88 records
  std::vector<std::string> keys;
  for (const auto& [key, value] : StoredRecords(store_.get()).Snapshot()) {
    keys.push_back(key);
    ASSERT_OK_AND_ASSIGN(RecordChunk chunk, RecordChunk::Parse(value));
    EXPECT_EQ(chunk.codec(), ChunkCodec::kLz4);  // similar records compress
  }
  EXPECT_THAT(keys, ::testing::ElementsAre(SequenceKey(0), SequenceKey(256), SequenceKey(512)));
  std::vector<std::string> walked;
  ASSERT_OK(log_->ForEachRecord(300, [&](uint64_t sequence, std::string_view bytes) {
    EXPECT_EQ(sequence, 300 + walked.size());
    walked.emplace_back(bytes);
    return absl::OkStatus();
  }));
  ASSERT_EQ(walked.size(), 300u);
  for (uint64_t i : {0, 255, 256, 300, 511, 512, 599}) {
    ASSERT_OK_AND_ASSIGN(std::string bytes, log_->ReadRecord(i));
    ASSERT_OK_AND_ASSIGN(AuditRecord record, DecodeRecord(bytes));
    EXPECT_EQ(record.sequence, i);
    EXPECT_EQ(record.transaction.id, absl::StrCat("tx-", i));
    if (i >= 300) {
      EXPECT_EQ(bytes, walked[i - 300]);
    }
  }
  EXPECT_THAT(log_->ReadRecord(600), StatusIs(absl::StatusCode::kNotFound, HasSubstr("600")));

  // Uncompressed chunks from here on: the log reads both kinds alike.
  AuditLogOptions plain = Options();
  plain.compress_records = false;
  Reopen(plain);
  AppendIds(600, 10);
  const auto chunks = StoredRecords(store_.get()).Snapshot();
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks.back().first, SequenceKey(600));
  ASSERT_OK_AND_ASSIGN(RecordChunk last, RecordChunk::Parse(chunks.back().second));
  EXPECT_EQ(last.codec(), ChunkCodec::kStored);
  EXPECT_EQ(WalkChain().size(), 610u);
  ASSERT_OK_AND_ASSIGN(std::optional<uint64_t> found, log_->FindTransaction("tx-605"));
  EXPECT_EQ(found, std::optional<uint64_t>(605));
}

TEST_F(AuditLogTest, ADamagedChunkIsDataLossNamingIt) {
  OpenLog(Options());
  AppendIds(0, 10);
  AppendIds(10, 10);
  ASSERT_OK(store_->Put("audit_records", SequenceKey(10), "VRC\x01 damaged"));
  EXPECT_THAT(log_->ReadRecord(12),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("chunk of records from 10")));
  EXPECT_OK(log_->ReadRecord(9).status());
  EXPECT_THAT(log_->ForEachRecord(0, [](uint64_t, std::string_view) { return absl::OkStatus(); }),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("chunk of records from 10")));
}

// While the writer syncs one group the committer builds the next; when a sync fails, no
// group built behind it is acknowledged, and everything acknowledged is in the log after a
// restart, in order.
TEST_F(AuditLogTest, WhatIsAcknowledgedUnderConcurrentLoadSurvivesAFailedSync) {
  OpenLog(Options());
  constexpr int kThreads = 4;
  std::atomic<int> acknowledged_count{0}, finished{0};
  std::vector<std::vector<std::pair<std::string, uint64_t>>> acknowledged(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 400; ++i) {
        const std::string id = absl::StrCat("t", t, "-", i);
        absl::StatusOr<std::vector<AppendedRecord>> r = log_->Append({Record(id)});
        if (!r.ok()) {
          EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
          continue;
        }
        acknowledged[t].emplace_back(id, (*r)[0].sequence);
        ++acknowledged_count;
      }
      ++finished;
    });
  }
  while (acknowledged_count < 200 && finished < kThreads) std::this_thread::yield();
  faults_->set_fail_syncs(true);
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(log_->health().ok());
  const uint64_t durable = log_->size();
  faults_->set_fail_syncs(false);
  Reopen(Options());
  EXPECT_GE(log_->size(), durable);
  for (const auto& per_thread : acknowledged) {
    uint64_t previous = 0;
    for (const auto& [id, sequence] : per_thread) {
      EXPECT_LT(sequence, durable) << id;
      if (&id != &per_thread.front().first) {
        EXPECT_GT(sequence, previous) << id;
      }
      previous = sequence;
      ASSERT_OK_AND_ASSIGN(std::optional<uint64_t> found, log_->FindTransaction(id));
      EXPECT_EQ(found, std::optional<uint64_t>(sequence)) << id;
    }
  }
  EXPECT_EQ(WalkChain().size(), log_->size());
}

// With a key-encryption key the records' personal fields are sealed; the log starts a segment
// (a new data key, stored before use) when it opens and after records_per_data_key records.
TEST_F(AuditLogTest, SealedRecordsRotateDataKeysAndAllOpen) {
  AuditLogOptions options = Options();
  options.record_kek = Kek(1).public_key;
  options.records_per_data_key = 3;
  OpenLog(options);
  ASSERT_NE(log_->sealer(), nullptr);
  EXPECT_EQ(log_->sealer()->suite(), crypto::CipherSuite::kAes256Gcm);
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(log_->Append({SealedRecord(*log_, absl::StrCat("tx-", i))}).status());
  }
  // Keys for records 0-2, 3-5, 6-8 and 9: a new one after every third record.
  EXPECT_EQ(log_->stats().data_keys, 4u);
  ASSERT_OK_AND_ASSIGN(std::vector<crypto::WrappedDataKey> keys, log_->DataKeys());
  ASSERT_EQ(keys.size(), 4u);
  for (const crypto::WrappedDataKey& key : keys) {
    EXPECT_EQ(key.kek_id, Kek(1).public_key->key_id());
    EXPECT_EQ(key.suite, crypto::CipherSuite::kAes256Gcm);
  }
  // Restarting starts a segment of its own.
  Reopen(options);
  ASSERT_OK(log_->Append({SealedRecord(*log_, "tx-10")}).status());
  ASSERT_OK_AND_ASSIGN(keys, log_->DataKeys());
  EXPECT_EQ(keys.size(), 5u);

  const std::unique_ptr<RecordOpener> opener = RecordOpener::ForLog(*log_, Kek(1).private_key);
  std::map<std::string, int> per_key;
  ASSERT_OK(log_->ForEachRecord(0, [&](uint64_t sequence, std::string_view bytes) {
    absl::StatusOr<AuditRecord> clear = DecodeRecord(bytes);
    EXPECT_TRUE(clear.ok()) << clear.status();
    if (!clear.ok()) return clear.status();
    EXPECT_EQ(clear->transaction.originator.name, "");  // sealed
    ++per_key[clear->data_key_id];
    absl::StatusOr<AuditRecord> opened = opener->Decode(bytes);
    EXPECT_TRUE(opened.ok()) << opened.status();
    if (opened.ok()) {
      EXPECT_EQ(opened->transaction,
                PersonalRecord(absl::StrCat("tx-", sequence)).transaction);
    }
    return absl::OkStatus();
  }));
  std::vector<int> counts;
  for (const auto& [id, count] : per_key) counts.push_back(count);
  EXPECT_THAT(counts, ::testing::UnorderedElementsAre(3, 3, 3, 1, 1));
  ASSERT_OK_AND_ASSIGN(VerifyReport report, VerifyAuditLog(*log_, {}));
  EXPECT_TRUE(report.intact()) << report.damage->detail;
  EXPECT_EQ(report.sealed_records, 11u);
  EXPECT_EQ(report.data_keys, 5u);
}

TEST_F(AuditLogTest, TheNationalProfileSealsWithSm4UnderAnSm2Key) {
  AuditLogOptions options = Options();
  options.record_kek = Kek(2, KekKind::kSm2).public_key;
  options.record_suite = crypto::CipherSuite::kSm4CtrHmacSm3;
  OpenLog(options);
  ASSERT_OK(log_->Append({SealedRecord(*log_, "tx-0"), SealedRecord(*log_, "tx-1")}).status());
  ASSERT_OK_AND_ASSIGN(std::vector<crypto::WrappedDataKey> keys, log_->DataKeys());
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].suite, crypto::CipherSuite::kSm4CtrHmacSm3);
  EXPECT_EQ(keys[0].wrap, crypto::KeyWrapAlgorithm::kSm2);
  const std::unique_ptr<RecordOpener> opener =
      RecordOpener::ForLog(*log_, Kek(2, KekKind::kSm2).private_key);
  ASSERT_OK_AND_ASSIGN(std::string bytes, log_->ReadRecord(1));
  EXPECT_FALSE(absl::StrContains(bytes, "Jane Roe"));
  ASSERT_OK_AND_ASSIGN(AuditRecord opened, opener->Decode(bytes));
  EXPECT_EQ(opened.transaction, PersonalRecord("tx-1").transaction);
}

// Rotating the key-encryption key re-wraps the data keys; the records stay as they were.
TEST_F(AuditLogTest, RewrapChangesOnlyTheWrappedKeys) {
  AuditLogOptions options = Options();
  options.record_kek = Kek(1).public_key;
  options.records_per_data_key = 2;
  OpenLog(options);
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK(log_->Append({SealedRecord(*log_, absl::StrCat("tx-", i))}).status());
  }
  log_.reset();
  const auto records_before = StoredRecords(store_.get()).Snapshot();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> reader, AuditLog::OpenForReading(store_.get()));
  EXPECT_EQ(reader->sealer(), nullptr);
  ASSERT_OK_AND_ASSIGN(std::vector<crypto::WrappedDataKey> before, reader->DataKeys());
  ASSERT_EQ(before.size(), 3u);  // records 0-1, 2-3, 4
  // The public half cannot unwrap; a key that wrapped nothing is refused, naming the keys.
  EXPECT_THAT(reader->RewrapDataKeys(*Kek(1).public_key, *Kek(3).public_key),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(reader->RewrapDataKeys(*Kek(3).private_key, *Kek(4).public_key),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(absl::StrCat("wrapped by key-encryption key ",
                                              Kek(1).public_key->key_id()))));
  EXPECT_THAT(reader->RewrapDataKeys(*Kek(1).private_key, *Kek(3).public_key),
              ::vigil::testing::IsOkAndHolds(3u));
  // Run again: nothing left to re-wrap.
  EXPECT_THAT(reader->RewrapDataKeys(*Kek(1).private_key, *Kek(3).public_key),
              ::vigil::testing::IsOkAndHolds(0u));
  ASSERT_OK_AND_ASSIGN(std::vector<crypto::WrappedDataKey> after, reader->DataKeys());
  ASSERT_EQ(after.size(), 3u);
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].id, before[i].id);
    EXPECT_EQ(after[i].kek_id, Kek(3).public_key->key_id());
  }
  EXPECT_EQ(StoredRecords(store_.get()).Snapshot(), records_before);

  ASSERT_OK_AND_ASSIGN(VerifyReport report, VerifyAuditLog(*reader, {}));
  EXPECT_TRUE(report.intact());
  const std::unique_ptr<RecordOpener> new_key = RecordOpener::ForLog(*reader, Kek(3).private_key);
  const std::unique_ptr<RecordOpener> old_key = RecordOpener::ForLog(*reader, Kek(1).private_key);
  for (uint64_t i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string bytes, reader->ReadRecord(i));
    ASSERT_OK_AND_ASSIGN(AuditRecord opened, new_key->Decode(bytes));
    EXPECT_EQ(opened.transaction, PersonalRecord(absl::StrCat("tx-", i)).transaction);
    EXPECT_THAT(old_key->Decode(bytes).status(),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr(Kek(3).public_key->key_id())));
  }
}

TEST_F(AuditLogTest, WithoutAKekRecordsAreWrittenInTheClearAsBefore) {
  OpenLog(Options());
  EXPECT_EQ(log_->sealer(), nullptr);
  AppendIds(0, 2);
  EXPECT_THAT(log_->DataKeys(), ::vigil::testing::IsOkAndHolds(::testing::IsEmpty()));
  EXPECT_EQ(log_->stats().data_keys, 0u);
  ASSERT_OK_AND_ASSIGN(std::string bytes, log_->ReadRecord(1));
  ASSERT_OK_AND_ASSIGN(AuditRecord record, DecodeRecord(bytes));
  EXPECT_TRUE(record.sealed.empty());
  EXPECT_EQ(record.data_key_id, "");
  EXPECT_EQ(EncodeRecord(record), bytes);
}

// A store from before field encryption has no audit_keys family: it reads as a log without
// data keys, and a key-encryption key cannot be used with it until the family is opened.
TEST_F(AuditLogTest, AStoreWithoutTheKeysFamilyReadsAsUnsealed) {
  KvStoreOptions old;
  old.path = dir_ + "-old";
  old.column_families = {"audit_records", "audit_tree", "audit_heads", "audit_index",
                         "audit_meta"};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KvStore> store, KvStore::Open(old));
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> log,
                         AuditLog::Open(store.get(), Options(), clock_));
    ASSERT_OK(log->Append({Record("tx-0")}).status());
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> reader, AuditLog::OpenForReading(store.get()));
  EXPECT_THAT(reader->DataKeys(), ::vigil::testing::IsOkAndHolds(::testing::IsEmpty()));
  EXPECT_THAT(reader->DataKey("0123456789abcdef"),
              ::vigil::testing::IsOkAndHolds(std::optional<crypto::WrappedDataKey>()));
  ASSERT_OK_AND_ASSIGN(VerifyReport report, VerifyAuditLog(*reader, {}));
  EXPECT_TRUE(report.intact());
  reader.reset();
  AuditLogOptions options = Options();
  options.record_kek = Kek(1).public_key;
  EXPECT_THAT(AuditLog::Open(store.get(), options, clock_).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("audit_keys")));
  store.reset();
  std::filesystem::remove_all(old.path);
}

}  // namespace
}  // namespace vigil::audit
