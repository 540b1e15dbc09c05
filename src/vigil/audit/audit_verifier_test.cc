#include "vigil/audit/audit_verifier.h"

#include <filesystem>
#include <random>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/audit/testing_log.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::audit {
namespace {

using ::testing::HasSubstr;

constexpr char kHeads[] = "audit_heads";

// Record i; "forged" allows what was blocked.
PendingRecord Record(int i, bool forged = false) {
  AuditRecord r;
  r.transaction.id = absl::StrCat("tx-", i);
  r.decision.transaction_id = r.transaction.id;
  r.decision.action = forged ? Action::kAllow : static_cast<Action>(i % 3);
  r.decision.score = 0.001 * i;
  r.decision.reasons = {{.kind = Reason::Kind::kRule, .code = "rule", .text = "fired"}};
  r.source = "test";
  r.input_sha256 = Digest(HashAlgorithm::kSha256, r.transaction.id);
  r.features = {1.0 * i, 2.0, 3.0};
  return {r.transaction.id, EncodeRecordBody(r)};
}

class AuditVerifierTest : public ::testing::Test {
 protected:
  static constexpr int kRecordsWritten = 300;
  static constexpr uint64_t kHeadEvery = 100;

  void SetUp() override {
    dir_ = (std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("audit_verifier_test_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    clock_.Set(FromUnixMicros(1'764'500'000'000'000));
    signer_ = TestSigner();
    ASSERT_OK_AND_ASSIGN(store_, KvStore::Open(Options(dir_)));
    AuditLogOptions log_options;
    log_options.signer = signer_;
    log_options.tree_head_every_records = kHeadEvery;
    log_options.tree_head_interval = std::chrono::hours(1);
    {
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> writer,
                           AuditLog::Open(store_.get(), log_options, clock_));
      for (int i = 0; i < kRecordsWritten; i += 10) {
        std::vector<PendingRecord> group;
        for (int k = i; k < i + 10; ++k) group.push_back(Record(k));
        ASSERT_OK(writer->Append(std::move(group)).status());
      }
    }  // closed: the tail is signed too
    ASSERT_OK_AND_ASSIGN(log_, AuditLog::OpenForReading(store_.get()));
    ASSERT_OK_AND_ASSIGN(trusted_, LogVerifier::FromPem(signer_->PublicKeyPem(), "trusted"));
    for (int i = 0; i < kRecordsWritten; ++i) {
      ASSERT_OK_AND_ASSIGN(std::string bytes, log_->ReadRecord(static_cast<uint64_t>(i)));
      original_.push_back(bytes);
    }
    original_chunks_ = StoredRecords(store_.get()).Snapshot();
  }
  void TearDown() override {
    log_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
    std::filesystem::remove_all(dir_ + "_pristine");
  }

  static KvStoreOptions Options(const std::string& path) {
    KvStoreOptions options;
    options.path = path;
    options.column_families = AuditColumnFamilies();
    options.block_cache_bytes = size_t{1} << 20;
    options.sync_writes = false;  // tampering writes need no fsync
    return options;
  }

  // Starts again from a copy of the log as written: overwritten versions pile up in RocksDB's
  // memtable and would slow every later scan.
  void Fresh() {
    log_.reset();
    if (!std::filesystem::exists(dir_ + "_pristine")) {
      ASSERT_OK(store_->Checkpoint(dir_ + "_pristine"));
    }
    store_.reset();
    std::filesystem::remove_all(dir_);
    std::filesystem::copy(dir_ + "_pristine", dir_, std::filesystem::copy_options::recursive);
    ASSERT_OK_AND_ASSIGN(store_, KvStore::Open(Options(dir_)));
    ASSERT_OK_AND_ASSIGN(log_, AuditLog::OpenForReading(store_.get()));
  }

  VerifyReport Verify(uint64_t from = 0) {
    VerifyOptions options;
    options.from = from;
    options.trusted_key = trusted_.get();
    absl::StatusOr<VerifyReport> report = VerifyAuditLog(*log_, options);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : VerifyReport{};
  }

  void PutRecord(uint64_t sequence, const std::string& bytes) {
    ASSERT_OK(StoredRecords(store_.get()).Replace(sequence, bytes));
  }
  void Restore() { ASSERT_OK(StoredRecords(store_.get()).Restore(original_chunks_)); }

  std::string dir_;
  ::vigil::testing::FakeClock clock_;
  std::shared_ptr<const LogSigner> signer_;
  std::unique_ptr<KvStore> store_;
  std::unique_ptr<AuditLog> log_;
  std::unique_ptr<LogVerifier> trusted_;
  std::vector<std::string> original_;
  std::vector<std::pair<std::string, std::string>> original_chunks_;
};

TEST_F(AuditVerifierTest, AnIntactLogVerifiesWithTheTrustedKeyAndWithItsOwn) {
  VerifyReport report = Verify();
  EXPECT_TRUE(report.intact()) << report.damage->detail;
  EXPECT_EQ(report.records, 300u);
  EXPECT_EQ(report.records_checked, 300u);
  EXPECT_EQ(report.tree_heads_checked, 4u);  // 0 (when created), 100, 200, 300
  EXPECT_TRUE(report.tree_heads_chained);
  EXPECT_EQ(report.legacy_tree_heads, 0u);
  ASSERT_TRUE(report.latest_tree_head.has_value());
  EXPECT_EQ(report.latest_tree_head->size, 300u);
  EXPECT_TRUE(report.trusted_key);

  ASSERT_OK_AND_ASSIGN(VerifyReport own, VerifyAuditLog(*log_, VerifyOptions{}));
  EXPECT_TRUE(own.intact());
  EXPECT_FALSE(own.trusted_key);
  EXPECT_EQ(own.key_id, signer_->key_id());

  report = Verify(/*from=*/123);
  EXPECT_TRUE(report.intact());
  EXPECT_EQ(report.records_checked, 177u);

  const std::string json = VerifyReportToJson(report);
  EXPECT_THAT(json, HasSubstr("\"intact\":true"));
  EXPECT_THAT(json, HasSubstr("\"records\":300"));
}

// Randomized tampering (seeded): thousands of cases, each detected with its kind and the
// sequence where it starts, then undone.
TEST_F(AuditVerifierTest, EveryTamperingIsDetectedWithItsKindAndPlace) {
  std::mt19937_64 rng(2026);
  int cases = 0;
  const uint64_t n = kRecordsWritten;
  for (int trial = 0; trial < 2000; ++trial) {
    const int op = trial % 4;
    uint64_t k = rng() % n;
    DamageKind want;
    uint64_t where = k;
    StoredRecords stored(store_.get());
    if (op == 0) {  // flip bits of one byte
      std::string bytes = original_[k];
      const size_t at = rng() % bytes.size();
      bytes[at] = static_cast<char>(bytes[at] ^ static_cast<char>(1 + rng() % 255));
      PutRecord(k, bytes);
      want = DamageKind::kModified;
    } else if (op == 1) {  // delete one record (the last one: a truncation)
      ASSERT_OK(stored.Remove(k));
      want = k == n - 1 ? DamageKind::kTruncated : DamageKind::kDeleted;
    } else if (op == 2) {  // swap two records
      uint64_t j = rng() % n;
      while (j == k) j = rng() % n;
      PutRecord(k, original_[j]);
      PutRecord(j, original_[k]);
      where = std::min(j, k);
      want = DamageKind::kReordered;
    } else {  // cut the tail from k
      ASSERT_OK(stored.TruncateFrom(k));
      want = DamageKind::kTruncated;
    }
    const VerifyReport report = Verify();
    ASSERT_TRUE(report.damage.has_value()) << "trial " << trial << " op " << op << " at " << k;
    EXPECT_EQ(DamageKindName(report.damage->kind), DamageKindName(want))
        << "trial " << trial << " op " << op << " at " << k << ": " << report.damage->detail;
    EXPECT_EQ(report.damage->sequence, where)
        << "trial " << trial << " op " << op << ": " << report.damage->detail;
    Restore();
    ++cases;
    if (trial % 250 == 0) {
      ASSERT_TRUE(Verify().intact()) << "restored after trial " << trial;
    }
    if (trial % 100 == 99) Fresh();
  }
  EXPECT_EQ(cases, 2000);
}

// The store's chunks themselves: one that cannot be read, one removed whole.
TEST_F(AuditVerifierTest, DamagedOrMissingChunksAreFoundAtTheirFirstRecord) {
  // Groups of 10 were appended: records 120..129 share a chunk.
  std::string damaged = original_chunks_[12].second;
  ASSERT_EQ(original_chunks_[12].first, SequenceKey(120));
  damaged.resize(damaged.size() / 2);
  ASSERT_OK(store_->Put("audit_records", SequenceKey(120), damaged));
  VerifyReport report = Verify();
  ASSERT_TRUE(report.damage.has_value());
  EXPECT_EQ(report.damage->kind, DamageKind::kModified) << report.damage->detail;
  EXPECT_EQ(report.damage->sequence, 120u);
  EXPECT_THAT(report.damage->detail, HasSubstr("chunk of records from 120 cannot be read"));

  ASSERT_OK(store_->Delete("audit_records", SequenceKey(120)));
  report = Verify();
  ASSERT_TRUE(report.damage.has_value());
  EXPECT_EQ(report.damage->kind, DamageKind::kDeleted) << report.damage->detail;
  EXPECT_EQ(report.damage->sequence, 120u);
  EXPECT_THAT(report.damage->detail, HasSubstr("record 120 is missing (and the next 9 too)"));
  Restore();
  EXPECT_TRUE(Verify().intact());
}

TEST_F(AuditVerifierTest, HeadsResignedWithAnotherKeyAreBadSignatures) {
  std::shared_ptr<const LogSigner> other = TestSigner();
  ASSERT_OK_AND_ASSIGN(std::vector<SignedTreeHead> heads, log_->TreeHeads());
  for (SignedTreeHead head : heads) {
    ASSERT_OK(SignTreeHead(*other, head));
    ASSERT_OK(store_->Put(kHeads, SequenceKey(head.size), TreeHeadToJson(head)));
  }
  VerifyReport report = Verify();
  ASSERT_TRUE(report.damage.has_value());
  EXPECT_EQ(report.damage->kind, DamageKind::kBadSignature) << report.damage->detail;
  EXPECT_EQ(report.damage->sequence, 0u);  // the first head, of size 0
  EXPECT_THAT(report.damage->detail, HasSubstr("tree head of size 0"));
}

TEST_F(AuditVerifierTest, ARewrittenAndResignedLogFailsTheExaminersKey) {
  // A whole new log with one decision changed, signed by the forger's key: consistent in
  // itself (its own header key accepts it), refused by the key the examiner holds.
  const std::string forged_dir = dir_ + "_forged";
  std::filesystem::remove_all(forged_dir);
  {
    KvStoreOptions options;
    options.path = forged_dir;
    options.column_families = AuditColumnFamilies();
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<KvStore> store, KvStore::Open(options));
    AuditLogOptions log_options;
    log_options.signer = TestSigner();
    log_options.tree_head_every_records = kHeadEvery;
    {
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> forged,
                           AuditLog::Open(store.get(), log_options, clock_));
      for (int i = 0; i < kRecordsWritten; i += 10) {
        std::vector<PendingRecord> group;
        for (int k = i; k < i + 10; ++k) group.push_back(Record(k, /*forged=*/k == 77));
        ASSERT_OK(forged->Append(std::move(group)).status());
      }
    }
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> forged, AuditLog::OpenForReading(store.get()));
    ASSERT_OK_AND_ASSIGN(VerifyReport own, VerifyAuditLog(*forged, VerifyOptions{}));
    EXPECT_TRUE(own.intact());
    VerifyOptions examiner;
    examiner.trusted_key = trusted_.get();
    ASSERT_OK_AND_ASSIGN(VerifyReport report, VerifyAuditLog(*forged, examiner));
    ASSERT_TRUE(report.damage.has_value());
    EXPECT_EQ(report.damage->kind, DamageKind::kBadSignature);
  }
  std::filesystem::remove_all(forged_dir);
}

TEST_F(AuditVerifierTest, AConsistentRewriteWithoutTheKeyIsCaughtByTheSignedRoots) {
  // The forger edits record 150 and rewrites every later record's chain link and the stored
  // tree to match, but cannot re-sign: the first signed head after the edit disagrees.
  ASSERT_OK_AND_ASSIGN(AuditRecord r, DecodeRecord(original_[150]));
  r.decision.action = Action::kAllow;
  r.decision.reasons.clear();
  std::vector<Hash> leaves;
  for (int i = 0; i < 150; ++i) leaves.push_back(LeafHash(log_->hash(), original_[i]));
  std::vector<std::string> rewritten = original_;
  rewritten[150] = EncodeRecord(r);
  for (size_t i = 150; i < rewritten.size(); ++i) {
    ASSERT_OK_AND_ASSIGN(AuditRecord ri, DecodeRecord(rewritten[i]));
    ri.previous_leaf_hash = leaves.back();
    rewritten[i] = EncodeRecord(ri);
    leaves.push_back(LeafHash(log_->hash(), rewritten[i]));
  }
  for (size_t i = 150; i < rewritten.size(); ++i) PutRecord(i, rewritten[i]);
  // The leaf tiles too (tile 0 holds leaves 0..255, tile 1 the rest).
  for (uint64_t tile = 0; tile < 2; ++tile) {
    std::string value;
    for (uint64_t i = 256 * tile; i < std::min<uint64_t>(256 * (tile + 1), leaves.size()); ++i) {
      value.append(reinterpret_cast<const char*>(leaves[i].data()), leaves[i].size());
    }
    std::string key(1, '\0');
    key += SequenceKey(tile);
    ASSERT_OK(store_->Put("audit_tree", key, value));
  }
  const VerifyReport report = Verify();
  ASSERT_TRUE(report.damage.has_value());
  EXPECT_EQ(report.damage->kind, DamageKind::kModified) << report.damage->detail;
  EXPECT_EQ(report.damage->sequence, 100u);  // after the last head that still verifies
  EXPECT_THAT(report.damage->detail, HasSubstr("root signed at size 200"));
}

// Sealed personal fields: the log verifies without any key (the chain and the tree cover the
// stored ciphertext); an altered ciphertext is an altered record; a record whose data key the
// log does not hold is damage of its own kind.
TEST(AuditVerifierSealed, AnEncryptedLogVerifiesWithoutAnyKeyAndAMissingDataKeyIsDamage) {
  const std::string dir = (std::filesystem::path(::testing::TempDir()) /
                           absl::StrCat("audit_verifier_sealed_", getpid()))
                              .string();
  std::filesystem::remove_all(dir);
  const TestKek kek = MakeTestKek(dir + "-keys", "kek", KekKind::kRsa);
  ::vigil::testing::FakeClock clock(FromUnixMicros(1'764'500'000'000'000));
  KvStoreOptions store_options;
  store_options.path = dir;
  store_options.column_families = AuditColumnFamilies();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KvStore> store, KvStore::Open(store_options));
  {
    AuditLogOptions options;
    options.signer = TestSigner();
    options.tree_head_every_records = 4;
    options.record_kek = kek.public_key;
    options.records_per_data_key = 4;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> writer,
                         AuditLog::Open(store.get(), options, clock));
    for (int i = 0; i < 10; ++i) {
      AuditRecord r;
      r.transaction.id = absl::StrCat("tx-", i);
      r.transaction.originator = {.account_id = absl::StrCat("ACC-", i), .name = "Jane Roe"};
      r.transaction.remittance = "rent";
      r.decision.transaction_id = r.transaction.id;
      r.source = "test";
      r.input_sha256 = Digest(HashAlgorithm::kSha256, r.transaction.id);
      RecordBodyFields fields = RecordBodyFields::Of(r);
      const std::shared_ptr<const RecordSealer> sealer = writer->sealer();
      fields.sealer = sealer.get();
      ASSERT_OK_AND_ASSIGN(std::string body, EncodeRecordBody(fields));
      ASSERT_OK(writer->Append({{r.transaction.id, std::move(body)}}).status());
    }
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> log, AuditLog::OpenForReading(store.get()));
  ASSERT_OK_AND_ASSIGN(VerifyReport report, VerifyAuditLog(*log, {}));
  EXPECT_TRUE(report.intact()) << report.damage->detail;
  EXPECT_EQ(report.records_checked, 10u);
  EXPECT_EQ(report.sealed_records, 10u);
  EXPECT_EQ(report.data_keys, 3u);  // records 0-3, 4-7, 8-9
  EXPECT_THAT(VerifyReportToJson(report), HasSubstr("\"sealed_records\":10,\"data_keys\":3"));

  // A byte of a sealed field changed: still a record, but not the one the chain holds.
  StoredRecords stored(store.get());
  const auto pristine = stored.Snapshot();
  ASSERT_OK_AND_ASSIGN(std::string bytes, log->ReadRecord(5));
  ASSERT_OK_AND_ASSIGN(AuditRecord five, DecodeRecord(bytes));
  ASSERT_FALSE(five.sealed.empty());
  five.sealed[0].bytes[5] ^= 0x20;
  ASSERT_OK(stored.Replace(5, EncodeRecord(five)));
  ASSERT_OK_AND_ASSIGN(report, VerifyAuditLog(*log, {}));
  ASSERT_TRUE(report.damage.has_value());
  EXPECT_EQ(report.damage->kind, DamageKind::kModified);
  EXPECT_EQ(report.damage->sequence, 5u);
  ASSERT_OK(stored.Restore(pristine));

  // The data key of records 4-7 removed: they can never be opened.
  ASSERT_OK_AND_ASSIGN(AuditRecord four, DecodeRecord(*log->ReadRecord(4)));
  ASSERT_OK(store->Delete(kAuditKeysFamily, four.data_key_id));
  ASSERT_OK_AND_ASSIGN(report, VerifyAuditLog(*log, {}));
  ASSERT_TRUE(report.damage.has_value());
  EXPECT_EQ(report.damage->kind, DamageKind::kMissingKey);
  EXPECT_EQ(DamageKindName(report.damage->kind), "missing_key");
  EXPECT_EQ(report.damage->sequence, 4u);
  EXPECT_THAT(report.damage->detail, HasSubstr(four.data_key_id));
  // A damaged entry is no better.
  ASSERT_OK(store->Put(kAuditKeysFamily, four.data_key_id, "{not json"));
  ASSERT_OK_AND_ASSIGN(report, VerifyAuditLog(*log, {}));
  ASSERT_TRUE(report.damage.has_value());
  EXPECT_EQ(report.damage->kind, DamageKind::kMissingKey);
  EXPECT_EQ(report.damage->sequence, 0u);  // no key can be read: every sealed record
  EXPECT_THAT(report.damage->detail, HasSubstr("cannot read"));
  log.reset();
  store.reset();
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(dir + "-keys");
}

// ---------------------------------------------------------------------------------------------
// The heads themselves, tampered with by someone with write access to the store and without
// the key (docs/audit.md, "What an attacker can hide"). The fixture's heads: sizes 0, 100,
// 200 and 300 (indexes 0-3), each promising the next within 100 records.

class HeadTamperingTest : public AuditVerifierTest {
 protected:
  // The durable head rewritten to say "size" records (the root from the stored tree), as a
  // forger who cut the log there would.
  void RewriteDurableHead(uint64_t size) {
    ASSERT_OK_AND_ASSIGN(Hash root, log_->RootHash(size));
    ASSERT_OK(store_->Put("audit_meta", "head",
                          SequenceKey(size) +
                              std::string(reinterpret_cast<const char*>(root.data()), root.size())));
  }
  void ExpectDamage(const VerifyReport& report, DamageKind kind, uint64_t sequence,
                    const std::string& detail) {
    ASSERT_TRUE(report.damage.has_value()) << "verified as intact";
    EXPECT_EQ(DamageKindName(report.damage->kind), DamageKindName(kind)) << report.damage->detail;
    EXPECT_EQ(report.damage->sequence, sequence) << report.damage->detail;
    EXPECT_THAT(report.damage->detail, HasSubstr(detail));
  }
  VerifyReport VerifyHolding(const SignedTreeHead& held) {
    VerifyOptions options;
    options.trusted_key = trusted_.get();
    options.held_heads = {held};
    absl::StatusOr<VerifyReport> report = VerifyAuditLog(*log_, options);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : VerifyReport{};
  }
};

TEST_F(HeadTamperingTest, EveryHeadDeletedIsMissingHead) {
  for (uint64_t size : {0, 100, 200, 300}) ASSERT_OK(store_->Delete(kHeads, SequenceKey(size)));
  const VerifyReport report = Verify();
  ExpectDamage(report, DamageKind::kMissingHead, 0, "300 records and no signed tree head");
  EXPECT_EQ(DamageKindName(DamageKind::kMissingHead), "missing_head");
  EXPECT_EQ(report.tree_heads_checked, 0u);
}

TEST_F(HeadTamperingTest, AnyOneHeadDeletedIsMissingHead) {
  // The first (of size 0), one in the middle, and the newest (the 100 records after the one
  // before it are as many as it promised: a head must have followed).
  const std::vector<std::pair<uint64_t, uint64_t>> cases = {{0, 0}, {200, 100}, {300, 200}};
  for (const auto& [deleted, where] : cases) {
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> kept,
                         store_->Get(kHeads, SequenceKey(deleted)));
    ASSERT_OK(store_->Delete(kHeads, SequenceKey(deleted)));
    ExpectDamage(Verify(), DamageKind::kMissingHead, where, "from the store");
    ASSERT_OK(store_->Put(kHeads, SequenceKey(deleted), *kept));
    EXPECT_TRUE(Verify().intact()) << "head " << deleted << " put back";
  }
}

TEST_F(HeadTamperingTest, TheNewestHeadAndTheRecordsAfterItDeletedIsMissingHead) {
  // A crash leaves 19 acknowledged records after the newest head (300); the forger removes
  // them and that head and rewrites the durable size: the 100 records after head 200 are
  // more than it promised.
  {
    AuditLogOptions options;
    options.signer = signer_;
    options.tree_head_every_records = kHeadEvery;
    options.tree_head_interval = std::chrono::hours(1);
    log_.reset();
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> writer,
                         AuditLog::Open(store_.get(), options, clock_));
    std::vector<PendingRecord> group;
    for (int k = kRecordsWritten; k < kRecordsWritten + 19; ++k) group.push_back(Record(k));
    ASSERT_OK(writer->Append(std::move(group)).status());
  }
  ASSERT_OK(store_->Delete(kHeads, SequenceKey(319)));  // the crash: no head at close
  ASSERT_OK_AND_ASSIGN(log_, AuditLog::OpenForReading(store_.get()));
  EXPECT_TRUE(Verify().intact()) << "19 records after the newest head are within its promise";
  ASSERT_OK(StoredRecords(store_.get()).TruncateFrom(300));
  ASSERT_OK(store_->Delete(kHeads, SequenceKey(300)));
  RewriteDurableHead(300);
  ExpectDamage(Verify(), DamageKind::kMissingHead, 200,
               "the newest head stored, the head of size 200 (index 2)");
}

TEST_F(HeadTamperingTest, ALiveCheckUpToTheDurableSizeFindsTheNewestHeadMissingToo) {
  // GET /v1/audit/verify checks up to the size durable when asked: the heads up to it were
  // written with its records.
  ASSERT_OK(store_->Delete(kHeads, SequenceKey(300)));
  VerifyOptions options;
  options.trusted_key = trusted_.get();
  options.up_to = 300;
  ASSERT_OK_AND_ASSIGN(VerifyReport report, VerifyAuditLog(*log_, options));
  ExpectDamage(report, DamageKind::kMissingHead, 200, "the newest heads were removed");
  options.up_to = 250;  // a live log may legitimately be 50 records past its newest head
  ASSERT_OK_AND_ASSIGN(report, VerifyAuditLog(*log_, options));
  EXPECT_TRUE(report.intact()) << report.damage->detail;
}

TEST_F(HeadTamperingTest, ARollbackWithinTheCadenceIsFoundOnlyAgainstAHeldHead) {
  // What the store alone cannot show: the log cut back to 250 records and head 300 removed
  // looks like a log that stopped (crashed) 50 records after head 200. An examiner who holds
  // head 300 (from a proof bundle, an earlier report) finds it.
  ASSERT_OK_AND_ASSIGN(std::vector<SignedTreeHead> heads, log_->TreeHeads());
  const SignedTreeHead held = heads.back();
  ASSERT_EQ(held.size, 300u);
  EXPECT_TRUE(VerifyHolding(held).intact());
  EXPECT_EQ(VerifyHolding(held).held_heads_checked, 1u);
  ASSERT_OK(StoredRecords(store_.get()).TruncateFrom(250));
  ASSERT_OK(store_->Delete(kHeads, SequenceKey(300)));
  RewriteDurableHead(250);
  EXPECT_TRUE(Verify().intact());
  ExpectDamage(VerifyHolding(held), DamageKind::kTruncated, 250,
               "a tree head the examiner holds, signed at");
  // A held head that is not the log's, or not signed by the key, is refused outright.
  SignedTreeHead forged = held;
  forged.root[0] ^= 1;
  VerifyOptions options;
  options.trusted_key = trusted_.get();
  options.held_heads = {forged};
  EXPECT_THAT(VerifyAuditLog(*log_, options),
              ::vigil::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("does not verify")));
}

TEST_F(HeadTamperingTest, FlippedBitsInAnyHeadAreFound) {
  // Every byte of every stored head, one bit at a time in turn (seeded: which bit): the head
  // no longer parses, no longer verifies, names another place, or is no longer the log's.
  std::mt19937_64 rng(28);
  int cases = 0;
  for (uint64_t size : {0, 100, 200, 300}) {
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store_->Get(kHeads, SequenceKey(size)));
    ASSERT_TRUE(value.has_value());
    for (size_t at = 0; at < value->size(); at += 7) {
      std::string flipped = *value;
      flipped[at] = static_cast<char>(flipped[at] ^ (1 << (rng() % 8)));
      ASSERT_OK(store_->Put(kHeads, SequenceKey(size), flipped));
      const VerifyReport report = Verify();
      ASSERT_TRUE(report.damage.has_value())
          << "head " << size << " byte " << at << ": " << flipped;
      EXPECT_NE(report.damage->kind, DamageKind::kDeleted);
      ++cases;
    }
    ASSERT_OK(store_->Put(kHeads, SequenceKey(size), *value));
    Fresh();
  }
  EXPECT_TRUE(Verify().intact());
  EXPECT_GT(cases, 100);
}

TEST_F(HeadTamperingTest, AHeadMovedToAnotherKeyOrAForeignHeadIsFound) {
  // Head 200 stored under 250: its key names another size.
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store_->Get(kHeads, SequenceKey(200)));
  ASSERT_OK(store_->Delete(kHeads, SequenceKey(200)));
  ASSERT_OK(store_->Put(kHeads, SequenceKey(250), *value));
  const VerifyReport report = Verify();
  ASSERT_TRUE(report.damage.has_value());
  EXPECT_LE(report.damage->sequence, 249u) << report.damage->detail;
}

}  // namespace
}  // namespace vigil::audit
