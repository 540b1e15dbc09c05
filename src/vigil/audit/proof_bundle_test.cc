#include "vigil/audit/proof_bundle.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/testing_log.h"
#include "vigil/core/transaction.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::audit {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;
using Json = nlohmann::ordered_json;

// 2026-11-30T10:00:00Z; record i is decided i minutes later.
const UtcTime kStart = FromUnixMicros(1'796'032'800'000'000);

std::string TxId(int i) { return absl::StrCat("tx-", i); }

PendingRecord Record(int i) {
  AuditRecord r;
  r.decided = kStart + std::chrono::minutes(i);
  r.received = r.decided - std::chrono::microseconds(350);
  r.source = "test";
  r.transaction.id = TxId(i);
  r.decision.transaction_id = r.transaction.id;
  r.decision.action = static_cast<Action>(i % 3);
  r.decision.score = 0.01 * i;
  r.input_sha256 = Digest(HashAlgorithm::kSha256, r.transaction.id);
  r.features = {1.0 * i, 2.5, -1.0};
  return {r.transaction.id, EncodeRecordBody(r)};
}

// A stand-in for the CLI's view of a record (the audit module has no JSON writers of its own for
// transactions and decisions): the same facts, with the features named or in order.
std::string View(const AuditRecord& r, const Hash& leaf_hash, bool named_features) {
  Json j;
  j["sequence"] = r.sequence;
  j["leaf_hash"] = HashHex(leaf_hash);
  j["transaction_id"] = r.transaction.id;
  j["action"] = std::string(ActionName(r.decision.action));
  j["decided"] = FormatUtc(r.decided);
  Json features = named_features ? Json::object() : Json::array();
  for (size_t i = 0; i < r.features.size(); ++i) {
    if (named_features) {
      features[absl::StrCat("f", i)] = r.features[i];
    } else {
      features.push_back(r.features[i]);
    }
  }
  j["features"] = std::move(features);
  return j.dump();
}
std::string NamedView(const AuditRecord& r, const Hash& leaf_hash) {
  return View(r, leaf_hash, /*named_features=*/true);
}
std::string UnnamedView(const AuditRecord& r, const Hash& leaf_hash) {
  return View(r, leaf_hash, /*named_features=*/false);
}

// A bundle with one edit applied, as an examiner's editor would write it.
std::string Edited(const std::string& json, const std::function<void(Json&)>& edit) {
  Json bundle = Json::parse(json);
  edit(bundle);
  return bundle.dump(2);
}

// One changed hex digit.
void FlipHex(Json& j) {
  std::string s = j.get<std::string>();
  s[10] = s[10] == '0' ? '1' : '0';
  j = s;
}

// The record bytes of an inclusion bundle, after "edit", with the leaf hash made to match.
void EditRecord(Json& bundle, const std::function<void(std::string&)>& edit) {
  std::string bytes;
  ASSERT_TRUE(absl::Base64Unescape(bundle["record_base64"].get<std::string>(), &bytes));
  edit(bytes);
  bundle["record_base64"] = absl::Base64Escape(bytes);
  bundle["leaf_hash"] = HashHex(LeafHash(HashAlgorithm::kSha256, bytes));
}

// An edit of a bundle and the words the check must name it with.
struct Edit {
  const char* what;
  std::function<void(Json&)> edit;
  const char* message;
};

// 25 records; tree heads signed at 10 and 20 (every 10 records) and 25 (when the writer closed),
// a second apart.
class ProofBundleTest : public ::testing::Test {
 protected:
  static constexpr int kRecords = 25;

  void SetUp() override {
    dir_ = (std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("proof_bundle_test_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    clock_.Set(kStart + std::chrono::hours(1));
    signer_ = TestSigner();
    ASSERT_OK_AND_ASSIGN(store_, KvStore::Open(Options(dir_)));
    {
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> writer, OpenWriter(store_.get()));
      ASSERT_NO_FATAL_FAILURE(AppendRecords(*writer, 0, kRecords));
    }  // closed: the tail is signed too
    ASSERT_OK_AND_ASSIGN(log_, AuditLog::OpenForReading(store_.get()));
    ASSERT_OK_AND_ASSIGN(trusted_, LogVerifier::FromPem(signer_->PublicKeyPem(), "trusted"));
    std::shared_ptr<const LogSigner> other = TestSigner();
    ASSERT_OK_AND_ASSIGN(other_key_, LogVerifier::FromPem(other->PublicKeyPem(), "other"));
    ASSERT_OK_AND_ASSIGN(heads_, log_->TreeHeads());
    // The first head, of size 0 (signed when the log was created), proves nothing here.
    ASSERT_EQ(heads_.front().size, 0u);
    heads_.erase(heads_.begin());
  }
  void TearDown() override {
    log_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
    std::filesystem::remove_all(dir_ + "_second");
  }

  static KvStoreOptions Options(const std::string& path) {
    KvStoreOptions options;
    options.path = path;
    options.column_families = AuditColumnFamilies();
    options.block_cache_bytes = size_t{1} << 20;
    options.sync_writes = false;
    return options;
  }

  absl::StatusOr<std::unique_ptr<AuditLog>> OpenWriter(KvStore* store) {
    AuditLogOptions options;
    options.signer = signer_;
    options.tree_head_every_records = 10;
    options.tree_head_interval = std::chrono::hours(1);
    return AuditLog::Open(store, options, clock_);
  }

  // Records [begin, end), in groups of 5, a second apart.
  void AppendRecords(AuditLog& writer, int begin, int end) {
    for (int i = begin; i < end; i += 5) {
      std::vector<PendingRecord> group;
      for (int k = i; k < std::min(i + 5, end); ++k) group.push_back(Record(k));
      ASSERT_OK(writer.Append(std::move(group)).status());
      clock_.Advance(std::chrono::seconds(1));
    }
  }

  std::string Prove(int i) {
    absl::StatusOr<ProofBundle> bundle = InclusionBundle(*log_, TxId(i), NamedView);
    EXPECT_TRUE(bundle.ok()) << bundle.status();
    return bundle.ok() ? bundle->json : std::string();
  }
  std::string ProveConsistency(size_t old_head, size_t new_head) {
    absl::StatusOr<ProofBundle> bundle =
        ConsistencyBundle(*log_, heads_[old_head], heads_[new_head]);
    EXPECT_TRUE(bundle.ok()) << bundle.status();
    return bundle.ok() ? bundle->json : std::string();
  }
  absl::StatusOr<CheckedProof> Check(const std::string& json) {
    return CheckProofBundle(json, *trusted_, NamedView);
  }

  // Each edit of "original" fails its check with kDataLoss and the edit's words.
  void ExpectEachRefused(const std::string& original, const std::vector<Edit>& edits) {
    for (const Edit& e : edits) {
      const std::string edited = Edited(original, e.edit);
      ASSERT_NE(Json::parse(edited), Json::parse(original)) << e.what;
      EXPECT_THAT(Check(edited), StatusIs(absl::StatusCode::kDataLoss, HasSubstr(e.message)))
          << e.what;
    }
  }

  std::string dir_;
  ::vigil::testing::FakeClock clock_;
  std::shared_ptr<const LogSigner> signer_;
  std::unique_ptr<KvStore> store_;
  std::unique_ptr<AuditLog> log_;
  std::unique_ptr<LogVerifier> trusted_;
  std::unique_ptr<LogVerifier> other_key_;
  std::vector<SignedTreeHead> heads_;
};

TEST_F(ProofBundleTest, AnInclusionBundleOfEveryRecordChecks) {
  ASSERT_EQ(heads_.size(), 3u);
  ASSERT_OK_AND_ASSIGN(const SignedTreeHead latest, log_->LatestTreeHead());
  ASSERT_EQ(latest.size, 25u);
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_OK_AND_ASSIGN(const ProofBundle bundle, InclusionBundle(*log_, TxId(i), NamedView));
    EXPECT_EQ(bundle.proof.type, ProofType::kInclusion);
    EXPECT_EQ(bundle.proof.sequence, static_cast<uint64_t>(i));
    EXPECT_EQ(bundle.proof.tree_head, latest);
    ASSERT_OK_AND_ASSIGN(const CheckedProof checked, Check(bundle.json));
    EXPECT_EQ(checked.type, ProofType::kInclusion);
    EXPECT_EQ(checked.log_id, log_->header().log_id);
    EXPECT_EQ(checked.tree_head, latest);
    EXPECT_FALSE(checked.old_tree_head.has_value());
    EXPECT_EQ(checked.sequence, static_cast<uint64_t>(i));
    EXPECT_EQ(checked.transaction_id, TxId(i));
    EXPECT_EQ(checked.action, static_cast<Action>(i % 3));
    EXPECT_EQ(checked.decided, kStart + std::chrono::minutes(i));
  }
  // Indented, members in the documented order, the view as given.
  const std::string json = Prove(6);
  EXPECT_EQ(json.substr(0, 40), "{\n  \"format\": \"vigil-audit-proof/v1\",\n  ");
  EXPECT_EQ(json.back(), '\n');
  const Json bundle = Json::parse(json);
  std::vector<std::string> members;
  for (const auto& [name, value] : bundle.items()) members.push_back(name);
  EXPECT_THAT(members, ::testing::ElementsAre("format", "type", "log_id", "hash", "transaction_id",
                                              "sequence", "record_base64", "leaf_hash", "tree_head",
                                              "proof", "record"));
  EXPECT_EQ(bundle["record"]["features"]["f0"], 6.0);
}

TEST_F(ProofBundleTest, AConsistencyBundleBetweenEveryPairOfHeadsChecks) {
  for (size_t i = 0; i < heads_.size(); ++i) {
    for (size_t j = i; j < heads_.size(); ++j) {
      ASSERT_OK_AND_ASSIGN(const ProofBundle bundle,
                           ConsistencyBundle(*log_, heads_[i], heads_[j]));
      EXPECT_EQ(bundle.proof.type, ProofType::kConsistency);
      ASSERT_OK_AND_ASSIGN(const CheckedProof checked, Check(bundle.json));
      EXPECT_EQ(checked.type, ProofType::kConsistency);
      EXPECT_EQ(checked.log_id, log_->header().log_id);
      EXPECT_EQ(checked.tree_head, heads_[j]);
      EXPECT_EQ(checked.old_tree_head, heads_[i]);
      // Equal sizes need no hashes.
      EXPECT_EQ(Json::parse(bundle.json)["proof"].empty(), i == j);
    }
  }
}

// Each edit of a meaningful part of an inclusion bundle, and what the check must call it.
TEST_F(ProofBundleTest, EveryEditOfAnInclusionBundleIsNamed) {
  const std::string original = Prove(6);
  ExpectEachRefused(
      original,
      {
          // The record itself: any byte changes its leaf hash.
          {"a record byte",
           [](Json& b) {
             std::string bytes;
             ASSERT_TRUE(absl::Base64Unescape(b["record_base64"].get<std::string>(), &bytes));
             bytes[bytes.size() / 2] ^= 1;
             b["record_base64"] = absl::Base64Escape(bytes);
           },
           "\"leaf_hash\" is not the leaf hash of the record bytes"},
          {"the leaf hash", [](Json& b) { FlipHex(b["leaf_hash"]); },
           "\"leaf_hash\" is not the leaf hash of the record bytes"},
          // With a matching leaf hash: bytes that are no record, another record, and a forged
          // record that claims the same place (only the signed root catches it).
          {"garbage after the record",
           [](Json& b) { EditRecord(b, [](std::string& s) { s.push_back('\xff'); }); },
           "the record bytes do not decode: "},
          {"another record's bytes",
           [this](Json& b) {
             absl::StatusOr<std::string> seven = log_->ReadRecord(7);
             ASSERT_TRUE(seven.ok());
             EditRecord(b, [&](std::string& s) { s = *seven; });
           },
           "the record's own sequence is 7, the bundle says 6"},
          {"a forged record",
           [](Json& b) {
             EditRecord(b, [](std::string& s) {
               absl::StatusOr<AuditRecord> r = DecodeRecord(s);
               ASSERT_TRUE(r.ok());
               r->decision.action = Action::kBlock;  // record 6 was allowed
               s = EncodeRecord(*r);
             });
           },
           "the inclusion proof does not lead to the tree head of size 25 at "},
          // The path: a sibling changed, dropped or added no longer leads to the signed root.
          {"a proof hash", [](Json& b) { FlipHex(b["proof"][1]); },
           "the inclusion proof does not lead to the tree head of size 25"},
          {"a proof hash dropped", [](Json& b) { b["proof"].erase(b["proof"].size() - 1); },
           "the inclusion proof does not lead to the tree head of size 25"},
          {"a proof hash added", [](Json& b) { b["proof"].push_back(b["proof"][0]); },
           "the inclusion proof does not lead to the tree head of size 25"},
          {"a proof hash in upper case",
           [](Json& b) {
             std::string s = b["proof"][0].get<std::string>();
             for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
             b["proof"][0] = s;
           },
           "proof[0] is not a hash (64 lower-case hex digits)"},
          // The head: root, size and time are signed; the signature is the key's.
          {"the head's root", [](Json& b) { FlipHex(b["tree_head"]["root"]); },
           "tree_head: tree head of size 25 at"},
          {"the head's size", [](Json& b) { b["tree_head"]["size"] = 24; },
           "tree_head: tree head of size 24 at"},
          {"the head's time, both spellings",
           [](Json& b) {
             const int64_t us = b["tree_head"]["time_us"].get<int64_t>() + 1;
             b["tree_head"]["time_us"] = us;
             b["tree_head"]["time"] = FormatUtc(FromUnixMicros(us));
           },
           "signature does not verify"},
          {"the head's time_us only",
           [](Json& b) {
             b["tree_head"]["time_us"] = b["tree_head"]["time_us"].get<int64_t>() + 1;
           },
           "tree_head: its members disagree with what is signed"},
          {"the head's readable time only",
           [](Json& b) { b["tree_head"]["time"] = "2020-01-01T00:00:00.000000Z"; },
           "tree_head: its members disagree with what is signed"},
          {"the head's signature",
           [](Json& b) {
             std::string sig;
             ASSERT_TRUE(
                 absl::Base64Unescape(b["tree_head"]["signature"].get<std::string>(), &sig));
             sig[0] ^= 1;
             b["tree_head"]["signature"] = absl::Base64Escape(sig);
           },
           "signature does not verify"},
          {"the head's key id", [](Json& b) { b["tree_head"]["key_id"] = std::string(64, 'a'); },
           "tree_head: names signing key aaaaaaaaaaaaaaaa, the given key is "},
          // The claims: which record, of which transaction, in which log.
          {"the sequence", [](Json& b) { b["sequence"] = 7; },
           "the record's own sequence is 6, the bundle says 7"},
          {"a negative sequence", [](Json& b) { b["sequence"] = -6; },
           "\"sequence\" must be a non-negative integer"},
          {"the transaction id", [](Json& b) { b["transaction_id"] = TxId(7); },
           "the record is of transaction tx-6, the bundle says tx-7"},
          {"the log id", [](Json& b) { b["log_id"] = "0192f000-0000-7000-8000-000000000000"; },
           "the bundle names log 0192f000-0000-7000-8000-000000000000 (sha256)"},
          {"the hash", [](Json& b) { b["hash"] = "sm3"; }, "(sm3)"},
          {"the hash's spelling", [](Json& b) { b["hash"] = "SHA256"; },
           "\"hash\" must be sha256 or sm3, not \"SHA256\""},
          // The informative view must still be what the bytes say.
          {"the view's action", [](Json& b) { b["record"]["action"] = "BLOCK"; },
           "the decoded view \"record\" does not match the record bytes (at /action)"},
          {"a feature in the view", [](Json& b) { b["record"]["features"]["f1"] = 2.25; },
           "does not match the record bytes (at /features/f1)"},
          // Spelling and shape.
          {"unpadded base64",
           [](Json& b) {
             std::string s = b["record_base64"].get<std::string>();
             while (!s.empty() && s.back() == '=') s.pop_back();
             if (s.size() % 4 == 0) s.pop_back();  // no padding to drop: make it not base64
             b["record_base64"] = s;
           },
           "\"record_base64\" is not base64 (RFC 4648, padded, one line)"},
          {"an unknown member", [](Json& b) { b["note"] = "hi"; },
           "the bundle has an unknown member \"note\""},
          {"a missing proof", [](Json& b) { b.erase("proof"); }, "\"proof\" is missing"},
          {"a missing view", [](Json& b) { b.erase("record"); }, "\"record\" is missing"},
          {"a proof that is not a list", [](Json& b) { b["proof"] = "x"; },
           "\"proof\" must be an array"},
          {"an unknown member of the head", [](Json& b) { b["tree_head"]["note"] = 1; },
           "tree_head: its members disagree with what is signed"},
      });
}

TEST_F(ProofBundleTest, EveryEditOfAConsistencyBundleIsNamed) {
  const std::string original = ProveConsistency(0, 2);  // 10 -> 25
  ExpectEachRefused(
      original,
      {
          {"the old root", [](Json& b) { FlipHex(b["old_tree_head"]["root"]); },
           "old_tree_head: tree head of size 10 at"},
          {"the new size", [](Json& b) { b["new_tree_head"]["size"] = 26; },
           "new_tree_head: tree head of size 26 at"},
          {"the new signature",
           [](Json& b) {
             std::string sig;
             ASSERT_TRUE(
                 absl::Base64Unescape(b["new_tree_head"]["signature"].get<std::string>(), &sig));
             sig[5] ^= 1;
             b["new_tree_head"]["signature"] = absl::Base64Escape(sig);
           },
           "new_tree_head: tree head of size 25"},
          {"a proof hash", [](Json& b) { FlipHex(b["proof"][0]); },
           "the consistency proof does not verify: "},
          {"a proof hash dropped", [](Json& b) { b["proof"].erase(0); },
           "the consistency proof does not verify: "},
          {"the heads swapped", [](Json& b) { std::swap(b["old_tree_head"], b["new_tree_head"]); },
           "the old tree head's size 25 must be positive and at most the new one's, 10"},
          {"an unknown member", [](Json& b) { b["record"] = Json::object(); },
           "the bundle has an unknown member \"record\""},
          {"a missing head", [](Json& b) { b.erase("new_tree_head"); },
           "\"new_tree_head\" is missing"},
      });
}

TEST_F(ProofBundleTest, AnotherKeyFailsAndAHeadReSignedWithItToo) {
  const std::string inclusion = Prove(3);
  const std::string consistency = ProveConsistency(0, 1);
  EXPECT_THAT(CheckProofBundle(inclusion, *other_key_, NamedView),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr(absl::StrCat(
                           "tree_head: names signing key ", signer_->key_id().substr(0, 16),
                           ", the given key is ", other_key_->key_id().substr(0, 16)))));
  EXPECT_THAT(CheckProofBundle(consistency, *other_key_, NamedView),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("old_tree_head: names signing key")));
  // A forger with another key re-signs the head and names that key: the examiner's key refuses.
  std::shared_ptr<const LogSigner> forger = TestSigner();
  const std::string forged = Edited(inclusion, [&](Json& b) {
    absl::StatusOr<SignedTreeHead> head = TreeHeadFromJson(b["tree_head"].dump());
    ASSERT_TRUE(head.ok());
    ASSERT_TRUE(SignTreeHead(*forger, *head).ok());
    b["tree_head"] = Json::parse(TreeHeadToJson(*head));
  });
  EXPECT_THAT(Check(forged),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("tree_head: names signing key " +
                                                              forger->key_id().substr(0, 16))));
}

TEST_F(ProofBundleTest, NonBundlesAreRefusedAsSuch) {
  const struct {
    std::string text;
    const char* message;
  } kCases[] = {
      {"", "not a JSON object"},
      {"not json", "not a JSON object"},
      {"[1, 2]", "not a JSON object"},
      {"\"vigil-audit-proof/v1\"", "not a JSON object"},
      {"{}", "\"format\" is missing"},
      {R"({"format": 1})", "\"format\" must be a string"},
      // A later version is not read, however it looks.
      {R"({"format": "vigil-audit-proof/v2", "type": "inclusion"})",
       "format \"vigil-audit-proof/v2\" (this build reads vigil-audit-proof/v1)"},
      {R"({"format": "vigil-audit-proof/v1"})", "\"type\" is missing"},
      {R"({"format": "vigil-audit-proof/v1", "type": "exclusion"})",
       "type \"exclusion\" (inclusion or consistency)"},
  };
  for (const auto& c : kCases) {
    EXPECT_THAT(Check(c.text), StatusIs(absl::StatusCode::kInvalidArgument, c.message)) << c.text;
  }
  // A real bundle of another version is refused the same way.
  EXPECT_THAT(Check(Edited(Prove(1), [](Json& b) { b["format"] = "vigil-audit-proof/v2"; })),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("this build reads")));
}

TEST_F(ProofBundleTest, ReformattingIsNotAnEdit) {
  for (const std::string& json : {Prove(9), ProveConsistency(1, 2)}) {
    EXPECT_OK(Check(Json::parse(json).dump()));  // one line
    // Members sorted by name (the head's too), then in reverse order.
    EXPECT_OK(Check(nlohmann::json::parse(json).dump(4)));
    Json bundle = Json::parse(json);
    Json backwards = Json::object();
    for (auto it = bundle.rbegin(); it != bundle.rend(); ++it) backwards[it.key()] = it.value();
    EXPECT_OK(Check(backwards.dump()));
  }
}

// The producer named the features (it had a schema); a checker without that schema makes an
// array: the values are compared, not the names.
TEST_F(ProofBundleTest, AViewWithoutFeatureNamesComparesTheValues) {
  const std::string named = Prove(4);
  EXPECT_OK(CheckProofBundle(named, *trusted_, UnnamedView));
  const std::string changed = Edited(named, [](Json& b) { b["record"]["features"]["f2"] = 1.0; });
  EXPECT_THAT(CheckProofBundle(changed, *trusted_, UnnamedView),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("(at /features/2)")));
  // A view that is not a JSON object is the caller's bug.
  const auto broken = [](const AuditRecord&, const Hash&) { return std::string("[1]"); };
  EXPECT_THAT(InclusionBundle(*log_, TxId(4), broken), StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(CheckProofBundle(named, *trusted_, broken), StatusIs(absl::StatusCode::kInternal));
}

TEST_F(ProofBundleTest, UnknownAndUncoveredTransactionsHaveNoInclusionBundle) {
  EXPECT_THAT(InclusionBundle(*log_, "tx-nope", NamedView),
              StatusIs(absl::StatusCode::kNotFound, "transaction tx-nope is not in the audit log"));
  // A second log, still open: heads at 10 only, records 10 to 14 not yet covered.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KvStore> store, KvStore::Open(Options(dir_ + "_second")));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> writer, OpenWriter(store.get()));
  ASSERT_NO_FATAL_FAILURE(AppendRecords(*writer, 0, 5));
  EXPECT_THAT(InclusionBundle(*writer, TxId(2), NamedView),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "transaction tx-2 (record 2) is not yet covered by a signed tree head "
                       "(the latest covers 0 records)"));
  ASSERT_NO_FATAL_FAILURE(AppendRecords(*writer, 5, 15));
  EXPECT_THAT(InclusionBundle(*writer, TxId(12), NamedView),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "transaction tx-12 (record 12) is not yet covered by a signed tree head "
                       "(the latest covers 10 records)"));
  ASSERT_OK_AND_ASSIGN(const ProofBundle covered, InclusionBundle(*writer, TxId(9), NamedView));
  EXPECT_EQ(covered.proof.tree_head.size, 10u);
  EXPECT_OK(Check(covered.json));

  // Heads of another log (signed with the same key) are refused on both ends.
  ASSERT_OK_AND_ASSIGN(const SignedTreeHead foreign, writer->LatestTreeHead());
  EXPECT_THAT(ConsistencyBundle(*log_, foreign, heads_[2]),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be of audit log")));
  const std::string mixed = Edited(ProveConsistency(1, 2), [&](Json& b) {
    b["old_tree_head"] = Json::parse(TreeHeadToJson(foreign));
  });
  EXPECT_THAT(Check(mixed), StatusIs(absl::StatusCode::kDataLoss,
                                     HasSubstr("the tree heads are of different logs")));
}

TEST_F(ProofBundleTest, ConsistencyBundlesNeedOrderedHeads) {
  EXPECT_THAT(ConsistencyBundle(*log_, heads_[2], heads_[0]),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("needs 0 < old size <= new size, not 25 and 10")));
}

// A damaged log hands out no bundle: the index leads to another record, a record is missing,
// or a record was rewritten (well-formed, but not what the tree and the signed heads hold).
TEST_F(ProofBundleTest, ADamagedLogHasNoBundle) {
  StoredRecords stored(store_.get());
  ASSERT_OK_AND_ASSIGN(const std::string seven, log_->ReadRecord(7));
  ASSERT_OK(stored.Replace(6, seven));
  EXPECT_THAT(InclusionBundle(*log_, TxId(6), NamedView),
              StatusIs(absl::StatusCode::kDataLoss,
                       "the index points tx-6 at record 6, which is another record"));

  // Records 5..9 share a chunk: without record 8, record 9 moves up and position 9 is empty.
  ASSERT_OK(stored.Remove(8));
  EXPECT_THAT(InclusionBundle(*log_, TxId(8), NamedView),
              StatusIs(absl::StatusCode::kDataLoss,
                       "the index points tx-8 at record 8, which is another record"));
  EXPECT_THAT(InclusionBundle(*log_, TxId(9), NamedView),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("no record 9")));

  ASSERT_OK_AND_ASSIGN(const std::string eleven, log_->ReadRecord(11));
  ASSERT_OK_AND_ASSIGN(AuditRecord forged, DecodeRecord(eleven));
  forged.decision.action = Action::kAllow;
  ASSERT_NE(forged.decision.action, static_cast<Action>(11 % 3));
  ASSERT_OK(stored.Replace(11, EncodeRecord(forged)));
  EXPECT_THAT(InclusionBundle(*log_, TxId(11), NamedView),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("the proof built from the log does not verify (the inclusion "
                                 "proof does not lead to the tree head of size 25")));
  // The other records still prove.
  EXPECT_OK(Check(Prove(12)));
}

}  // namespace
}  // namespace vigil::audit
