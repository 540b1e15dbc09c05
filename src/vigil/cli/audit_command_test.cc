// End-to-end tests of `vigil audit` through the binary, over a log that the test writes with the
// audit module itself: ten decisions in a data dir's store, tree heads signed at 4, 8 and 10.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/audit/signing_key.h"
#include "vigil/audit/testing_log.h"
#include "vigil/core/transaction.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::vigil::testing::ReadFile;
using ::vigil::testing::RunProcess;
using Json = nlohmann::json;

constexpr int kRecords = 10;
// 2026-11-30T10:00:00Z: record i is decided i minutes later (and received 350 µs before).
const UtcTime kStart = FromUnixMicros(1'796'032'800'000'000);

// The first line of "output" that is a JSON object (stdout and stderr share the file, and
// their order there is not the order they were written in).
Json FirstJsonLine(const std::string& output) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!line.empty() && line[0] == '{') return Json::parse(line.begin(), line.end());
  }
  ADD_FAILURE() << "no JSON line in: " << output;
  return Json();
}

std::string TxId(int i) { return absl::StrCat("tx-2026-", 1000 + i); }
std::string Time(int minutes) { return FormatUtc(kStart + std::chrono::minutes(minutes)); }

// A wire from a German account to a Hong Kong company just below a reporting threshold;
// every fourth one also hits a watchlist, and record 7 was decided without the model.
audit::AuditRecord MakeRecord(int i) {
  audit::AuditRecord r;
  r.decided = kStart + std::chrono::minutes(i);
  r.received = r.decided - std::chrono::microseconds(350);
  r.actor = "token-ops-7";
  r.source = "serve";
  r.input_format = "json";
  r.input_sha256 = audit::Digest(audit::HashAlgorithm::kSha256, TxId(i));
  Transaction& tx = r.transaction;
  tx.id = TxId(i);
  tx.event_time = r.decided - std::chrono::seconds(2);
  tx.originator = {absl::StrCat("DE8937040044053201300", i), "Jürgen Müller", "COBADEFFXXX", "DE"};
  tx.beneficiary = {"HK-0012-88831", "Golden Harbour Trading Ltd", "HSBCHKHHHKH", "HK"};
  if (i == 3) tx.beneficiary.address = {"18 Harbour Road", "", "Wan Chai, Hong Kong"};
  tx.amount = Money(950'000 + i, 2, *Currency::FromCode("EUR"));
  tx.settled_amount = Money(7'790'000 + i, 2, *Currency::FromCode("HKD"));
  tx.payment_format = PaymentFormat::kWire;
  tx.channel = "online";
  tx.remittance = absl::StrCat("INV 2026/11/", i);
  const auto schema = FeatureExtractor::Schema();
  r.features.assign(schema->size(), 1.5 + i);
  r.features[1] = std::nan("");
  Decision& d = r.decision;
  d.transaction_id = tx.id;
  d.trace_id.bytes[0] = static_cast<uint8_t>(i + 1);
  d.action = i % 2 == 0 ? Action::kReview : Action::kAllow;
  d.score = 0.25 + 0.05 * i;
  d.feature_schema_version = schema->version();
  d.policy_version = "default-2026.11.1";
  d.model_version = "xgb-2026.11.2";
  d.model_role = "champion";
  d.reasons.push_back({Reason::Kind::kRule, "structuring.below_threshold",
                       "amount within 5% below the 10000 EUR reporting threshold", 0, false});
  d.reasons.push_back({Reason::Kind::kRule, "velocity.new_beneficiary_burst",
                       "third new beneficiary in 24 h", 0, true});
  d.reasons.push_back(
      {Reason::Kind::kModel, "orig_out_count_24h", "outgoing payments in 24 h", 0.41, false});
  if (i % 4 == 3) {
    d.reasons.push_back({Reason::Kind::kScreening, "OFAC-SDN-36117",
                         "beneficiary name 0.93 similar to a listed entity", 0, false});
  }
  if (i == 7) {
    d.degraded = true;
    d.degraded_reason = "model deadline exceeded; rules only";
    d.score = std::nan("");
    d.model_version.clear();
    d.model_role.clear();
  }
  return r;
}

class AuditCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/vigil_audit_cli_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    data_ = Path("data");
    std::filesystem::create_directories(data_);
    absl::StatusOr<std::string> pem =
        audit::GeneratePrivateKeyPem(audit::SignatureAlgorithm::kEd25519);
    ASSERT_TRUE(pem.ok()) << pem.status();
    absl::StatusOr<std::unique_ptr<audit::LogSigner>> signer =
        audit::LogSigner::FromPem(*pem, "key");
    ASSERT_TRUE(signer.ok()) << signer.status();
    signer_ = *std::move(signer);
    Write("pub.pem", signer_->PublicKeyPem());
    absl::StatusOr<std::string> other =
        audit::GeneratePrivateKeyPem(audit::SignatureAlgorithm::kEd25519);
    ASSERT_TRUE(other.ok());
    Write("other.pem", *other);
    BuildLog();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<KvStore> OpenStore(const std::string& data_dir = "") const {
    KvStoreOptions options;
    options.path = (data_dir.empty() ? data_ : data_dir) + "/features";
    options.column_families = audit::AuditColumnFamilies();
    options.block_cache_bytes = size_t{1} << 20;
    absl::StatusOr<std::unique_ptr<KvStore>> store = KvStore::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  // One record per append, so that heads are signed at 4 and 8, and at 10 when the log closes.
  // With "kek", the records' personal fields are sealed, under a new data key every 4 records.
  void BuildLog(const std::string& data_dir = "",
                std::shared_ptr<const crypto::KeyEncryptionKey> kek = nullptr) {
    std::unique_ptr<KvStore> store = OpenStore(data_dir.empty() ? data_ : data_dir);
    ASSERT_NE(store, nullptr);
    ::vigil::testing::FakeClock clock(kStart);
    audit::AuditLogOptions options;
    options.signer = signer_;
    options.tree_head_every_records = 4;
    options.tree_head_interval = std::chrono::hours(1);
    options.record_kek = kek;
    options.records_per_data_key = 4;
    absl::StatusOr<std::unique_ptr<audit::AuditLog>> log =
        audit::AuditLog::Open(store.get(), options, clock);
    ASSERT_TRUE(log.ok()) << log.status();
    for (int i = 0; i < kRecords; ++i) {
      clock.Set(kStart + std::chrono::minutes(i) + std::chrono::milliseconds(1));
      const audit::AuditRecord r = MakeRecord(i);
      if (kek == nullptr) {
        ASSERT_TRUE((*log)->Append({{r.transaction.id, audit::EncodeRecordBody(r)}}).ok());
        continue;
      }
      audit::RecordBodyFields fields = audit::RecordBodyFields::Of(r);
      const std::shared_ptr<const audit::RecordSealer> sealer = (*log)->sealer();
      fields.sealer = sealer.get();
      absl::StatusOr<std::string> body = audit::EncodeRecordBody(fields);
      ASSERT_TRUE(body.ok()) << body.status();
      ASSERT_TRUE((*log)->Append({{r.transaction.id, *std::move(body)}}).ok());
    }
  }

  // Record 5 of the log in "data_dir" (default: data_) edited in place: its remittance text
  // changed, still a valid record, of another payment.
  void EditRecord5(const std::string& data_dir = "") const {
    std::unique_ptr<KvStore> store = OpenStore(data_dir);
    ASSERT_NE(store, nullptr);
    audit::StoredRecords stored(store.get());
    absl::StatusOr<std::string> bytes = stored.Read(5);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    std::string edited = *bytes;
    const size_t at = edited.find("INV 2026/11/5");
    ASSERT_NE(at, std::string::npos);
    edited[at + 12] = '6';
    ASSERT_TRUE(stored.Replace(5, edited).ok());
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  void Write(const std::string& name, const std::string& content) const {
    std::ofstream(Path(name), std::ios::binary) << content;
  }
  // Runs vigil with stdout and stderr in Output().
  int Vigil(std::vector<std::string> args) const {
    return RunProcess(VIGIL_BINARY, std::move(args), Path("log"));
  }
  std::string Output() const { return ReadFile(Path("log")); }

  std::string dir_;
  std::string data_;
  std::shared_ptr<const audit::LogSigner> signer_;
};

TEST_F(AuditCommandTest, VerifySaysIntactAndWhatWasChecked) {
  ASSERT_EQ(Vigil({"audit", "verify", "--data-dir", data_}), 0) << Output();
  EXPECT_THAT(Output(), HasSubstr(absl::StrCat("intact: 10 records, 4 signed tree heads, latest "
                                               "tree head size 10 at ",
                                               Time(9).substr(0, 16))));
  EXPECT_THAT(Output(), HasSubstr(absl::StrCat("(key ", signer_->key_id().substr(0, 16), ")")));
  EXPECT_THAT(Output(), HasSubstr("without --pubkey this proves only that the log is consistent "
                                  "with itself"));

  ASSERT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--pubkey", Path("pub.pem"), "--json"}),
            0)
      << Output();
  const Json report = Json::parse(Output());  // nothing else: the note is only without --pubkey
  EXPECT_EQ(report["intact"], true);
  EXPECT_EQ(report["records"], 10);
  EXPECT_EQ(report["trusted_key"], true);
  EXPECT_EQ(report["latest_tree_head"]["size"], 10);

  ASSERT_EQ(
      Vigil({"audit", "verify", "--data-dir", data_, "--from", "6", "--pubkey", Path("pub.pem")}),
      0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("intact: 10 records (checked from sequence 6), 4 signed"));
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--from", "11"}), 2);
  EXPECT_THAT(Output(), HasSubstr("--from 11 is past the end of the log (10 records)"));
}

TEST_F(AuditCommandTest, VerifyNamesAFlippedByteAndAForeignKey) {
  // The log re-signed by nobody: the examiner's own key does not sign these heads.
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--pubkey", Path("other.pem")}), 1);
  EXPECT_THAT(Output(), HasSubstr("DAMAGED at sequence 0: bad_signature: tree head of size 0 "));

  ASSERT_NO_FATAL_FAILURE(EditRecord5());
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--pubkey", Path("pub.pem")}), 1)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("DAMAGED at sequence 5: modified: "));
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--json"}), 1);
  const Json report = FirstJsonLine(Output());
  EXPECT_EQ(report["intact"], false);
  EXPECT_EQ(report["damage"]["kind"], "modified");
  EXPECT_EQ(report["damage"]["sequence"], 5);
  // A proof from the damaged log is refused rather than handed out.
  EXPECT_EQ(Vigil({"audit", "prove", "--data-dir", data_, TxId(5)}), 1);
  EXPECT_THAT(Output(), HasSubstr("run `vigil audit verify`"));
}

TEST_F(AuditCommandTest, ProveWritesABundleThatChecksWithTheLogsKeyOnly) {
  ASSERT_EQ(Vigil({"audit", "prove", "--data-dir", data_, TxId(5), "--out", Path("p.json")}), 0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("record 5) in the tree head of size 10"));
  const Json bundle = Json::parse(ReadFile(Path("p.json")));
  EXPECT_EQ(bundle["format"], "vigil-audit-proof/v1");
  EXPECT_EQ(bundle["type"], "inclusion");
  EXPECT_EQ(bundle["transaction_id"], TxId(5));
  EXPECT_EQ(bundle["sequence"], 5);
  EXPECT_EQ(bundle["hash"], "sha256");
  EXPECT_EQ(bundle["tree_head"]["size"], 10);
  EXPECT_EQ(bundle["tree_head"]["key_id"], signer_->key_id());
  EXPECT_EQ(bundle["proof"].size(), 4u);  // leaf 5 of 10: leaf 4, [6,8), [0,4), [8,10)
  EXPECT_EQ(bundle["record"]["transaction"]["id"], TxId(5));
  std::string bytes;
  ASSERT_TRUE(absl::Base64Unescape(bundle["record_base64"].get<std::string>(), &bytes));
  EXPECT_EQ(audit::HashHex(audit::LeafHash(audit::HashAlgorithm::kSha256, bytes)),
            bundle["leaf_hash"]);

  ASSERT_EQ(Vigil({"audit", "check-proof", Path("p.json"), "--pubkey", Path("pub.pem")}), 0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr(absl::StrCat("valid: transaction ", TxId(5),
                                               " is record 5 of "
                                               "audit log ")));
  EXPECT_THAT(Output(), HasSubstr("included in the tree head of size 10"));
  EXPECT_EQ(Vigil({"audit", "check-proof", Path("p.json"), "--pubkey", Path("other.pem")}), 1);
  EXPECT_THAT(Output(), HasSubstr("INVALID: tree_head: names signing key"));
  // Leaf 0 (a proof with a perfect left subtree only) and the last leaf work the same way.
  for (int i : {0, 9}) {
    ASSERT_EQ(Vigil({"audit", "prove", "--data-dir", data_, TxId(i), "--out", Path("q.json")}), 0);
    EXPECT_EQ(Vigil({"audit", "check-proof", Path("q.json"), "--pubkey", Path("pub.pem")}), 0)
        << Output();
  }
}

// Each edit of a meaningful part of an inclusion bundle, and why it must be caught.
TEST_F(AuditCommandTest, EveryEditOfAnInclusionProofMakesItInvalid) {
  ASSERT_EQ(Vigil({"audit", "prove", "--data-dir", data_, TxId(6), "--out", Path("p.json")}), 0)
      << Output();
  const Json original = Json::parse(ReadFile(Path("p.json")));
  const auto flip_hex = [](Json& j) {
    std::string s = j.get<std::string>();
    s[10] = s[10] == '0' ? '1' : '0';
    j = s;
  };
  const auto record_bytes = [](Json& bundle, const std::function<void(std::string&)>& edit) {
    std::string bytes;
    ASSERT_TRUE(absl::Base64Unescape(bundle["record_base64"].get<std::string>(), &bytes));
    edit(bytes);
    bundle["record_base64"] = absl::Base64Escape(bytes);
  };
  const struct {
    const char* what;
    std::function<void(Json&)> edit;
  } kEdits[] = {
      // The record itself: any byte changes its leaf hash.
      {"a record byte",
       [&](Json& b) { record_bytes(b, [](std::string& s) { s[s.size() / 2] ^= 1; }); }},
      {"the record and its leaf hash",
       [&](Json& b) {
         record_bytes(b, [](std::string& s) { s.back() ^= 1; });
         std::string bytes;
         (void)absl::Base64Unescape(b["record_base64"].get<std::string>(), &bytes);
         b["leaf_hash"] = audit::HashHex(audit::LeafHash(audit::HashAlgorithm::kSha256, bytes));
       }},
      {"the leaf hash", [&](Json& b) { flip_hex(b["leaf_hash"]); }},
      // The path: a sibling changed, dropped or added no longer leads to the signed root.
      {"a proof hash", [&](Json& b) { flip_hex(b["proof"][1]); }},
      {"a proof hash dropped", [](Json& b) { b["proof"].erase(b["proof"].size() - 1); }},
      {"a proof hash added", [](Json& b) { b["proof"].push_back(b["proof"][0]); }},
      // The head: root, size, time and log id are signed; the signature is the key's.
      {"the head's root", [&](Json& b) { flip_hex(b["tree_head"]["root"]); }},
      {"the head's size", [](Json& b) { b["tree_head"]["size"] = 11; }},
      {"the head's time",
       [](Json& b) { b["tree_head"]["time_us"] = b["tree_head"]["time_us"].get<int64_t>() + 1; }},
      {"the head's readable time",
       [](Json& b) { b["tree_head"]["time"] = "2020-01-01T00:00:00.000000Z"; }},
      {"the head's signature",
       [](Json& b) {
         std::string sig;
         (void)absl::Base64Unescape(b["tree_head"]["signature"].get<std::string>(), &sig);
         sig[0] ^= 1;
         b["tree_head"]["signature"] = absl::Base64Escape(sig);
       }},
      // The claims: which record, of which transaction, in which log.
      {"the sequence", [](Json& b) { b["sequence"] = 7; }},
      {"the transaction id", [](Json& b) { b["transaction_id"] = TxId(7); }},
      {"the log id", [](Json& b) { b["log_id"] = "0192f000-0000-7000-8000-000000000000"; }},
      // The informative view must still be what the bytes say.
      {"the view's action", [](Json& b) { b["record"]["decision"]["action"] = "ALLOW"; }},
      {"the view's amount",
       [](Json& b) { b["record"]["transaction"]["amount"]["value"] = "95.00"; }},
      {"the format", [](Json& b) { b["format"] = "vigil-audit-proof/v2"; }},
  };
  for (const auto& e : kEdits) {
    Json bundle = original;
    e.edit(bundle);
    ASSERT_NE(bundle, original) << e.what;
    Write("edited.json", bundle.dump(2));
    EXPECT_EQ(Vigil({"audit", "check-proof", Path("edited.json"), "--pubkey", Path("pub.pem")}), 1)
        << e.what << ": " << Output();
    EXPECT_THAT(Output(), HasSubstr("INVALID: ")) << e.what;
  }
  // Not an edit: reformatting the JSON changes no value.
  Write("compact.json", original.dump());
  EXPECT_EQ(Vigil({"audit", "check-proof", Path("compact.json"), "--pubkey", Path("pub.pem")}), 0)
      << Output();
}

TEST_F(AuditCommandTest, ProveRefusesUnknownAndUncoveredTransactions) {
  EXPECT_EQ(Vigil({"audit", "prove", "--data-dir", data_, "tx-unknown"}), 1);
  EXPECT_THAT(Output(), HasSubstr("transaction tx-unknown is not in the audit log"));
  {
    // As after a crash: records 8 and 9 are durable, the head that would cover them never came.
    std::unique_ptr<KvStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Delete("audit_heads", audit::SequenceKey(10)).ok());
  }
  EXPECT_EQ(Vigil({"audit", "prove", "--data-dir", data_, TxId(9)}), 1);
  EXPECT_THAT(Output(), HasSubstr("is not yet covered by a signed tree head (the latest covers 8 "
                                  "records); try again after the next head (every 10000 records"));
  EXPECT_EQ(Vigil({"audit", "prove", "--data-dir", data_, TxId(7), "--out", Path("p.json")}), 0)
      << Output();
  EXPECT_EQ(Json::parse(ReadFile(Path("p.json")))["tree_head"]["size"], 8);
}

// A cluster's export (`vigil cluster audit-export`: DIR/partition-<p>, no log of its own):
// verify checks every partition's log and is intact only when each is; prove finds the
// partition that holds the decision.
TEST_F(AuditCommandTest, AClusterExportIsVerifiedPartitionByPartition) {
  const std::string exported = Path("export");
  for (int p = 0; p < 2; ++p) {
    const std::string partition = absl::StrCat(exported, "/partition-", p);
    std::filesystem::create_directories(partition);
    ASSERT_NO_FATAL_FAILURE(BuildLog(partition));
  }
  ASSERT_EQ(Vigil({"audit", "verify", "--data-dir", exported, "--pubkey", Path("pub.pem")}), 0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("partition-0: intact: 10 records, 4 signed tree heads"));
  EXPECT_THAT(Output(), HasSubstr("partition-1: intact: 10 records, 4 signed tree heads"));
  EXPECT_THAT(Output(), HasSubstr("intact: 2 partition logs, 20 records in all"));
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", exported, "--from", "3"}), 2);
  EXPECT_THAT(Output(), HasSubstr("is a cluster's export of 2 partition logs: --from and "
                                  "--held-head check one log; give --data-dir"));
  EXPECT_EQ(Vigil({"audit", "prove", "--data-dir", exported, TxId(3), "--out", Path("p.json")}), 0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr(absl::StrCat("(record 3 of ", exported, "/partition-0)")));
  EXPECT_EQ(Vigil({"audit", "prove", "--data-dir", exported, "tx-unknown"}), 1);
  EXPECT_THAT(Output(), HasSubstr("transaction tx-unknown is in none of the 2 partition logs"));

  // One record of partition 1 edited: the whole export is damaged, and says where.
  ASSERT_NO_FATAL_FAILURE(EditRecord5(exported + "/partition-1"));
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", exported, "--pubkey", Path("pub.pem")}), 1);
  EXPECT_THAT(Output(), HasSubstr("partition-0: intact: 10 records"));
  EXPECT_THAT(Output(), HasSubstr("partition-1: DAMAGED at sequence 5: modified: "));
  EXPECT_THAT(Output(), HasSubstr("DAMAGED: 1 of 2 partition logs (partition-1)"));
  EXPECT_EQ(
      Vigil({"audit", "verify", "--data-dir", exported, "--pubkey", Path("pub.pem"), "--json"}), 1);
  const Json report = Json::parse(Output());
  EXPECT_EQ(report["intact"], false);
  EXPECT_EQ(report["damaged"], Json::array({1}));
  ASSERT_EQ(report["partitions"].size(), 2u);
  EXPECT_EQ(report["partitions"][0]["report"]["intact"], true);
  EXPECT_EQ(report["partitions"][1]["partition"], 1);
  EXPECT_EQ(report["partitions"][1]["report"]["damage"]["kind"], "modified");
}

TEST_F(AuditCommandTest, ConsistencyProofsCheckAndEditsDoNot) {
  ASSERT_EQ(Vigil({"audit", "prove-consistency", "--data-dir", data_, "--old", "4", "--out",
                   Path("c.json")}),
            0)
      << Output();
  const Json original = Json::parse(ReadFile(Path("c.json")));
  EXPECT_EQ(original["type"], "consistency");
  EXPECT_EQ(original["old_tree_head"]["size"], 4);
  EXPECT_EQ(original["new_tree_head"]["size"], 10);
  ASSERT_EQ(Vigil({"audit", "check-proof", Path("c.json"), "--pubkey", Path("pub.pem")}), 0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("valid: the tree head of size 4 at "));
  EXPECT_THAT(Output(), HasSubstr("is a prefix of the tree head of size 10 at "));
  EXPECT_EQ(Vigil({"audit", "check-proof", Path("c.json"), "--pubkey", Path("other.pem")}), 1);

  const struct {
    const char* what;
    std::function<void(Json&)> edit;
  } kEdits[] = {
      {"the old root", [](Json& b) { b["old_tree_head"]["root"] = std::string(64, 'a'); }},
      {"the new size", [](Json& b) { b["new_tree_head"]["size"] = 12; }},
      {"a proof hash", [](Json& b) { b["proof"][0] = std::string(64, 'b'); }},
      {"the heads swapped", [](Json& b) { std::swap(b["old_tree_head"], b["new_tree_head"]); }},
  };
  for (const auto& e : kEdits) {
    Json bundle = original;
    e.edit(bundle);
    Write("edited.json", bundle.dump(2));
    EXPECT_EQ(Vigil({"audit", "check-proof", Path("edited.json"), "--pubkey", Path("pub.pem")}), 1)
        << e.what << ": " << Output();
  }

  ASSERT_EQ(Vigil({"audit", "prove-consistency", "--data-dir", data_, "--old", "4", "--new", "8",
                   "--out", Path("c48.json")}),
            0);
  EXPECT_EQ(Vigil({"audit", "check-proof", Path("c48.json"), "--pubkey", Path("pub.pem")}), 0)
      << Output();
  // The examiner's old head is not one the log signed: the log is found wanting.
  EXPECT_EQ(Vigil({"audit", "prove-consistency", "--data-dir", data_, "--old", "5"}), 1);
  EXPECT_THAT(Output(), HasSubstr("no signed tree head of size 5 (4 heads, of sizes 0, 4, 8, 10)"));
  EXPECT_EQ(Vigil({"audit", "prove-consistency", "--data-dir", data_, "--old", "8", "--new", "4"}),
            2);
}

// The heads as someone with write access to the store and without the key could tamper with
// them (docs/audit.md, "What an attacker can hide"). The log's heads: sizes 0, 4, 8, 10.
TEST_F(AuditCommandTest, VerifyFindsARemovedHeadAsMissingHead) {
  {
    std::unique_ptr<KvStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Delete("audit_heads", audit::SequenceKey(4)).ok());
  }
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--pubkey", Path("pub.pem")}), 1);
  EXPECT_THAT(Output(), HasSubstr("DAMAGED at sequence 0: missing_head: the head of size 8 "
                                  "(index 2)"));
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--json"}), 1);
  EXPECT_EQ(FirstJsonLine(Output())["damage"]["kind"], "missing_head");
  {
    std::unique_ptr<KvStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    for (uint64_t size : {0, 8, 10}) {
      ASSERT_TRUE(store->Delete("audit_heads", audit::SequenceKey(size)).ok());
    }
  }
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--pubkey", Path("pub.pem")}), 1);
  EXPECT_THAT(Output(), HasSubstr("DAMAGED at sequence 0: missing_head: the log holds 10 records "
                                  "and no signed tree head"));
}

TEST_F(AuditCommandTest, AHeldHeadCatchesARollbackTheStoreAloneCannotShow) {
  // The examiner keeps what it was given: a proof bundle (head 10) and a report.
  ASSERT_EQ(Vigil({"audit", "prove", "--data-dir", data_, TxId(3), "--out", Path("p.json")}), 0)
      << Output();
  ASSERT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--json"}), 0);
  Write("report.json", FirstJsonLine(Output()).dump());
  ASSERT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--pubkey", Path("pub.pem"),
                   "--held-head", Path("p.json"), "--held-head", Path("report.json")}),
            0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("; extends 2 held tree heads"));
  {
    // Head 8's own JSON, as an examiner may keep it: the log extends it.
    std::unique_ptr<KvStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    absl::StatusOr<std::optional<std::string>> head8 =
        store->Get("audit_heads", audit::SequenceKey(8));
    ASSERT_TRUE(head8.ok() && head8->has_value());
    Write("head8.json", **head8);
  }
  ASSERT_EQ(Vigil({"audit", "prove-consistency", "--data-dir", data_, "--old-head",
                   Path("head8.json"), "--out", Path("c.json")}),
            0)
      << Output();
  ASSERT_EQ(Vigil({"audit", "check-proof", Path("c.json"), "--pubkey", Path("pub.pem")}), 0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("valid: the tree head of size 8 at "));

  {
    // The forger cuts the log back to 9 records, removes head 10 and rewrites the durable
    // head: 1 record after head 8, within its promise of 4, as a crash could leave it.
    std::unique_ptr<KvStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(audit::StoredRecords(store.get()).TruncateFrom(9).ok());
    ASSERT_TRUE(store->Delete("audit_heads", audit::SequenceKey(10)).ok());
    absl::StatusOr<std::unique_ptr<audit::AuditLog>> log =
        audit::AuditLog::OpenForReading(store.get());
    ASSERT_TRUE(log.ok()) << log.status();
    absl::StatusOr<audit::Hash> root = (*log)->RootHash(9);
    ASSERT_TRUE(root.ok());
    ASSERT_TRUE(store
                    ->Put("audit_meta", "head",
                          audit::SequenceKey(9) +
                              std::string(reinterpret_cast<const char*>(root->data()), 32))
                    .ok());
  }
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--pubkey", Path("pub.pem")}), 0)
      << "the store alone cannot show it: " << Output();
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--pubkey", Path("pub.pem"),
                   "--held-head", Path("p.json")}),
            1);
  EXPECT_THAT(Output(), HasSubstr("DAMAGED at sequence 9: truncated: the log ends at record 9 but "
                                  "a tree head the examiner holds"));
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--held-head", Path("report.json")}),
            1);
  EXPECT_EQ(Vigil({"audit", "prove-consistency", "--data-dir", data_, "--old-head",
                   Path("p.json")}),
            1);
  EXPECT_THAT(Output(), HasSubstr("the log does not extend the tree head of size 10"));
  // Usage: one of --old and --old-head; a file without a head.
  EXPECT_EQ(Vigil({"audit", "prove-consistency", "--data-dir", data_}), 2);
  Write("empty.json", "{}");
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_, "--held-head", Path("empty.json")}),
            2);
  EXPECT_THAT(Output(), HasSubstr("holds no signed tree head"));
}

TEST_F(AuditCommandTest, ShowNamesTheDecisionAndItsReasons) {
  ASSERT_EQ(Vigil({"audit", "show", "--data-dir", data_, TxId(3)}), 0) << Output();
  const std::string out = Output();
  EXPECT_THAT(out, HasSubstr(absl::StrCat("transaction ", TxId(3), ": record 3 of audit log ")));
  EXPECT_THAT(out, HasSubstr("decided       " + Time(3) + " (350 µs after it was received)"));
  EXPECT_THAT(out, HasSubstr("action        ALLOW, score 0.400000"));
  EXPECT_THAT(out, HasSubstr("model         xgb-2026.11.2 (champion)"));
  EXPECT_THAT(out, HasSubstr("policy        default-2026.11.1"));
  EXPECT_THAT(out, HasSubstr("degraded      no"));
  EXPECT_THAT(out, HasSubstr("rule       structuring.below_threshold: amount within 5% below"));
  EXPECT_THAT(out, HasSubstr("rule       velocity.new_beneficiary_burst (shadow: recorded, did "
                             "not decide)"));
  EXPECT_THAT(out, HasSubstr("model      orig_out_count_24h +0.4100: outgoing payments in 24 h"));
  EXPECT_THAT(out, HasSubstr("screening  OFAC-SDN-36117: beneficiary name 0.93 similar"));
  EXPECT_THAT(out, HasSubstr("amount        9500.03 EUR (settled 77900.03 HKD)"));
  EXPECT_THAT(out, HasSubstr("originator    DE89370400440532013003, Jürgen Müller, bank "
                             "COBADEFFXXX, DE"));
  EXPECT_THAT(out, HasSubstr("beneficiary   HK-0012-88831, Golden Harbour Trading Ltd"));
  EXPECT_THAT(out, HasSubstr("input sha256  " + audit::HashHex(audit::Digest(
                                                    audit::HashAlgorithm::kSha256, TxId(3)))));

  ASSERT_EQ(Vigil({"audit", "show", "--data-dir", data_, TxId(7)}), 0) << Output();
  EXPECT_THAT(Output(), HasSubstr("score none (no model scored)"));
  EXPECT_THAT(Output(), HasSubstr("degraded      yes: model deadline exceeded; rules only"));
  EXPECT_THAT(Output(), HasSubstr("model         none (rules only)"));

  ASSERT_EQ(Vigil({"audit", "show", "--data-dir", data_, TxId(3), "--json"}), 0) << Output();
  EXPECT_EQ(Json::parse(Output())["sequence"], 3);
  EXPECT_EQ(Vigil({"audit", "show", "--data-dir", data_, "tx-unknown"}), 1);
}

TEST_F(AuditCommandTest, ExportFiltersByDecisionTimeAndTransaction) {
  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", data_, "--since", Time(2), "--until", Time(5),
                   "--out", Path("e.jsonl")}),
            0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("exported 3 of 10 records"));
  const std::vector<std::string> lines =
      absl::StrSplit(ReadFile(Path("e.jsonl")), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  const auto schema = FeatureExtractor::Schema();
  for (size_t i = 0; i < lines.size(); ++i) {
    const Json line = Json::parse(lines[i]);  // throws (fails the test) when not JSON
    for (const char* field : {"sequence", "leaf_hash", "previous_leaf_hash", "received", "decided",
                              "actor", "source", "input_format", "input_sha256", "transaction",
                              "features", "decision", "fired_rules", "screening_hits"}) {
      EXPECT_TRUE(line.contains(field)) << field << " in " << lines[i];
    }
    EXPECT_EQ(line["sequence"], 2 + i);
    EXPECT_EQ(line["decided"], Time(2 + static_cast<int>(i)));
    EXPECT_EQ(line["transaction"]["id"], TxId(2 + static_cast<int>(i)));
    EXPECT_EQ(line["decision"]["transaction_id"], TxId(2 + static_cast<int>(i)));
    EXPECT_EQ(line["fired_rules"], Json::array({"structuring.below_threshold"}));  // not shadow
    ASSERT_TRUE(line["features"].is_object());
    EXPECT_EQ(line["features"].size(), schema->size());
    EXPECT_TRUE(line["features"][schema->names()[1]].is_null());  // NaN
    EXPECT_EQ(line["features"][schema->names()[0]], 1.5 + 2 + static_cast<double>(i));
  }
  EXPECT_EQ(Json::parse(lines[1])["screening_hits"], Json::array({"OFAC-SDN-36117"}));
  EXPECT_EQ(Json::parse(lines[0])["screening_hits"], Json::array());
  // Chained: each record names the leaf hash of the one before it.
  EXPECT_EQ(Json::parse(lines[1])["previous_leaf_hash"], Json::parse(lines[0])["leaf_hash"]);

  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", data_, "--tx", TxId(7)}), 0) << Output();
  const std::string out = Output();
  const Json line = FirstJsonLine(out);
  EXPECT_EQ(line["sequence"], 7);
  EXPECT_EQ(line["decision"]["degraded"], true);
  EXPECT_TRUE(line["decision"]["score"].is_null());
  EXPECT_THAT(out, HasSubstr("exported 1 of 1 record\n"));
  EXPECT_EQ(Vigil({"audit", "export", "--data-dir", data_, "--tx", "tx-unknown"}), 1);
  EXPECT_EQ(Vigil({"audit", "export", "--data-dir", data_, "--since", "yesterday"}), 2);
}

TEST_F(AuditCommandTest, KeygenWritesAKeyOnlyItsOwnerReadsAndNeverOverwrites) {
  for (const char* algorithm : {"ed25519", "sm2"}) {
    const std::string key = Path(absl::StrCat(algorithm, ".pem"));
    const std::string pub = Path(absl::StrCat(algorithm, "_pub.pem"));
    ASSERT_EQ(
        Vigil({"audit", "keygen", "--out", key, "--algorithm", algorithm, "--public-out", pub}), 0)
        << Output();
    struct stat st {};
    ASSERT_EQ(stat(key.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << algorithm;
    absl::StatusOr<std::unique_ptr<audit::LogSigner>> signer = audit::LogSigner::FromPemFile(key);
    ASSERT_TRUE(signer.ok()) << signer.status();
    EXPECT_THAT(Output(), HasSubstr((*signer)->PublicKeyPem()));
    EXPECT_THAT(Output(), HasSubstr("key id " + (*signer)->key_id()));
    EXPECT_EQ(ReadFile(pub), (*signer)->PublicKeyPem());
    EXPECT_EQ(RunProcess("/usr/bin/openssl", {"pkey", "-in", key, "-noout"}, Path("openssl.log")),
              0)
        << ReadFile(Path("openssl.log"));

    const std::string before = ReadFile(key);
    EXPECT_EQ(Vigil({"audit", "keygen", "--out", key, "--algorithm", algorithm}), 2);
    EXPECT_THAT(Output(), HasSubstr("exists; refusing to overwrite it"));
    EXPECT_EQ(ReadFile(key), before);
  }
  EXPECT_EQ(Vigil({"audit", "keygen", "--out", Path("k.pem"), "--algorithm", "rsa"}), 2);
  EXPECT_FALSE(std::filesystem::exists(Path("k.pem")));
}

TEST_F(AuditCommandTest, AMissingStoreIsAnEnvironmentErrorAndAHeldOneIsReadAsAFollower) {
  EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", Path("nowhere")}), 2);
  EXPECT_THAT(Output(), HasSubstr("data dir '" + Path("nowhere") + "' does not exist"));
  std::filesystem::create_directories(Path("empty"));
  EXPECT_EQ(Vigil({"audit", "show", "--data-dir", Path("empty"), TxId(1)}), 2);
  EXPECT_THAT(Output(), HasSubstr("no vigil store at '" + Path("empty") + "/features'"));
  EXPECT_EQ(Vigil({"audit", "verify"}), 2);  // --data-dir is required
  {
    // A replay's feature store without decisions: no log, and none is created by looking.
    KvStoreOptions options;
    options.path = Path("plain/features");
    options.column_families = {"accounts"};
    std::filesystem::create_directories(Path("plain"));
    ASSERT_TRUE(KvStore::Open(options).ok());
  }
  EXPECT_EQ(Vigil({"audit", "export", "--data-dir", Path("plain")}), 2);
  EXPECT_THAT(Output(), HasSubstr("no audit log in '" + Path("plain") + "/features'"));
  {
    KvStoreOptions options;
    options.path = Path("plain/features");
    absl::StatusOr<std::unique_ptr<KvStore>> plain = KvStore::Open(options);
    ASSERT_TRUE(plain.ok());
    EXPECT_THAT((*plain)->ColumnFamilies(), ::testing::ElementsAre("default", "accounts"));
  }
  {
    // A store a running server holds is read as a follower, as it is at that moment.
    std::unique_ptr<KvStore> held = OpenStore();
    ASSERT_NE(held, nullptr);
    EXPECT_EQ(Vigil({"audit", "verify", "--data-dir", data_}), 0) << Output();
    EXPECT_THAT(Output(), HasSubstr("held by a running vigil serve"));
    EXPECT_THAT(Output(), HasSubstr("intact: 10 records"));
  }
  EXPECT_EQ(Vigil({"audit", "check-proof", Path("none.json"), "--pubkey", Path("pub.pem")}), 2);
}

// ---------------------------------------------------------------------------------------------
// Sealed personal fields (docs/audit.md, "Sealed fields").

// The lines of a JSON Lines file.
std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST_F(AuditCommandTest, ASealedLogVerifiesAndProvesWithoutAKeyAndShowsSealedFields) {
  const audit::TestKek kek = audit::MakeTestKek(Path("keys"), "kek", audit::KekKind::kRsa);
  const std::string sealed = Path("sealed");
  BuildLog(sealed, kek.public_key);
  ASSERT_EQ(Vigil({"audit", "verify", "--data-dir", sealed, "--pubkey", Path("pub.pem")}), 0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("intact: 10 records, 4 signed tree heads"));
  ASSERT_EQ(Vigil({"audit", "verify", "--data-dir", sealed, "--json"}), 0) << Output();
  const Json report = FirstJsonLine(Output());
  EXPECT_EQ(report["sealed_records"], 10);
  EXPECT_EQ(report["data_keys"], 3);
  ASSERT_EQ(Vigil({"audit", "prove", "--data-dir", sealed, TxId(5), "--out", Path("p.json")}), 0)
      << Output();
  EXPECT_THAT(ReadFile(Path("p.json")), Not(HasSubstr("Jürgen")));
  ASSERT_EQ(Vigil({"audit", "check-proof", Path("p.json"), "--pubkey", Path("pub.pem")}), 0)
      << Output();

  ASSERT_EQ(Vigil({"audit", "show", "--data-dir", sealed, TxId(3)}), 0) << Output();
  EXPECT_THAT(Output(), HasSubstr("originator    [sealed], [sealed], bank COBADEFFXXX, DE"));
  EXPECT_THAT(Output(), HasSubstr("remittance    [sealed]"));
  EXPECT_THAT(Output(), HasSubstr("beneficiary   [sealed], [sealed], bank HSBCHKHHHKH, HK\n"
                                  "    address     [sealed]\n"));
  EXPECT_THAT(Output(), HasSubstr("sealed        6 sealed personal fields under data key "));
  EXPECT_THAT(Output(), HasSubstr("; --kek opens them"));
  EXPECT_THAT(Output(), HasSubstr("action        ALLOW, score 0.400000"));  // in the clear
  EXPECT_THAT(Output(), Not(HasSubstr("Jürgen")));
  ASSERT_EQ(Vigil({"audit", "show", "--data-dir", sealed, TxId(3), "--kek", kek.private_pem}), 0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("originator    DE89370400440532013003, Jürgen Müller, bank "
                                  "COBADEFFXXX, DE"));
  EXPECT_THAT(Output(), HasSubstr("remittance    INV 2026/11/3"));
  // The address's empty line is left out, its other lines joined.
  EXPECT_THAT(Output(), HasSubstr("    address     18 Harbour Road; Wan Chai, Hong Kong\n"));
  EXPECT_THAT(Output(), HasSubstr(", opened"));
  ASSERT_EQ(Vigil({"audit", "show", "--data-dir", sealed, TxId(3), "--json"}), 0) << Output();
  const Json line = Json::parse(Output());
  EXPECT_TRUE(line["transaction"]["originator"]["name"]["sealed"].is_string());
  EXPECT_TRUE(line["data_key_id"].is_string());

  // A private key others may read is refused; so is another key-encryption key, naming both.
  const audit::TestKek other = audit::MakeTestKek(Path("keys"), "other", audit::KekKind::kSm2);
  ASSERT_EQ(Vigil({"audit", "show", "--data-dir", sealed, TxId(3), "--kek", other.private_pem}),
            2);
  EXPECT_THAT(Output(), HasSubstr(kek.public_key->key_id()));
  EXPECT_THAT(Output(), HasSubstr(other.public_key->key_id()));
  EXPECT_THAT(Output(), HasSubstr("data key "));
  ::chmod(kek.private_pem.c_str(), 0644);
  EXPECT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--kek", kek.private_pem}), 2);
  EXPECT_THAT(Output(), HasSubstr("--kek: "));
}

TEST_F(AuditCommandTest, AKeylessExportOpensOfflineToTheKeyedExport) {
  const audit::TestKek kek = audit::MakeTestKek(Path("keys"), "kek", audit::KekKind::kSm2);
  const std::string sealed = Path("sealed");
  BuildLog(sealed, kek.public_key);

  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--out", Path("keyless.jsonl")}), 0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("exported 10 of 10 records to " + Path("keyless.jsonl") +
                                  "; 10 with sealed personal fields (--kek opens them), 3 data "
                                  "keys included"));
  const std::vector<std::string> keyless = Lines(ReadFile(Path("keyless.jsonl")));
  ASSERT_EQ(keyless.size(), 13u);  // 10 records and, before the first under each, 3 data keys
  EXPECT_EQ(Json::parse(keyless[0])["data_key"]["kek_id"], kek.public_key->key_id());
  EXPECT_THAT(ReadFile(Path("keyless.jsonl")), Not(HasSubstr("Jürgen")));
  EXPECT_THAT(ReadFile(Path("keyless.jsonl")), Not(HasSubstr("INV 2026")));
  const Json first = Json::parse(keyless[1]);
  EXPECT_TRUE(first["transaction"]["remittance"]["sealed"].is_string());
  EXPECT_EQ(first["transaction"]["originator"]["bank_id"], "COBADEFFXXX");
  EXPECT_EQ(first["decision"]["action"], "REVIEW");

  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--kek", kek.private_pem, "--out",
                   Path("keyed.jsonl")}),
            0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("exported 10 of 10 records"));
  const std::vector<std::string> keyed = Lines(ReadFile(Path("keyed.jsonl")));
  ASSERT_EQ(keyed.size(), 10u);
  EXPECT_EQ(Json::parse(keyed[3])["transaction"]["originator"]["name"], "Jürgen Müller");
  EXPECT_EQ(Json::parse(keyed[3])["transaction"]["remittance"], "INV 2026/11/3");

  // Offline, from a file and from stdin: the keyed export, byte for byte.
  ASSERT_EQ(Vigil({"audit", "open", "--kek", kek.private_pem, "--input", Path("keyless.jsonl"),
                   "--out", Path("opened.jsonl")}),
            0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("opened 10 of 10 records (3 data keys)"));
  EXPECT_EQ(ReadFile(Path("opened.jsonl")), ReadFile(Path("keyed.jsonl")));
  ASSERT_EQ(RunProcess("/bin/sh",
                       {"-c", absl::StrCat(VIGIL_BINARY, " audit open --kek ", kek.private_pem,
                                           " < ", Path("keyless.jsonl"), " > ",
                                           Path("stdin.jsonl"))},
                       Path("log")),
            0)
      << Output();
  EXPECT_EQ(ReadFile(Path("stdin.jsonl")), ReadFile(Path("keyed.jsonl")));

  // One transaction, with and without the key.
  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--tx", TxId(6)}), 0) << Output();
  EXPECT_THAT(Output(), HasSubstr("\"data_key\":"));
  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--tx", TxId(6), "--kek",
                   kek.private_pem}),
            0);
  EXPECT_EQ(FirstJsonLine(Output()), Json::parse(keyed[6]));

  // Not an export; an export opened with another key.
  Write("bad.jsonl", "{\"sequence\": 1\n");
  EXPECT_EQ(Vigil({"audit", "open", "--kek", kek.private_pem, "--input", Path("bad.jsonl")}), 1);
  EXPECT_THAT(Output(), HasSubstr("line 1"));
  const audit::TestKek other = audit::MakeTestKek(Path("keys"), "other", audit::KekKind::kRsa);
  EXPECT_EQ(
      Vigil({"audit", "open", "--kek", other.private_pem, "--input", Path("keyless.jsonl")}), 2);
  EXPECT_THAT(Output(), HasSubstr(other.public_key->key_id()));
  // A log written in the clear exports as before, with or without a key.
  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", data_, "--out", Path("clear.jsonl")}), 0);
  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", data_, "--kek", kek.private_pem, "--out",
                   Path("clear-keyed.jsonl")}),
            0);
  EXPECT_EQ(ReadFile(Path("clear.jsonl")), ReadFile(Path("clear-keyed.jsonl")));
  EXPECT_THAT(ReadFile(Path("clear.jsonl")), Not(HasSubstr("data_key")));
}

TEST_F(AuditCommandTest, RewrapRotatesTheKeyEncryptionKeyAndLeavesTheRecords) {
  const audit::TestKek old_kek = audit::MakeTestKek(Path("keys"), "old", audit::KekKind::kRsa);
  const audit::TestKek new_kek = audit::MakeTestKek(Path("keys"), "new", audit::KekKind::kSm2);
  const std::string sealed = Path("sealed");
  BuildLog(sealed, old_kek.public_key);
  ASSERT_EQ(Vigil({"audit", "verify", "--data-dir", sealed, "--json"}), 0) << Output();
  const Json before = FirstJsonLine(Output());

  ASSERT_EQ(Vigil({"audit", "rewrap", "--data-dir", sealed, "--kek", old_kek.private_pem,
                   "--new-kek", new_kek.public_pem}),
            0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr(absl::StrCat("re-wrapped 3 data keys from key-encryption key ",
                                               old_kek.public_key->key_id(), " to ",
                                               new_kek.public_key->key_id())));
  ASSERT_EQ(Vigil({"audit", "verify", "--data-dir", sealed, "--json"}), 0) << Output();
  const Json after = FirstJsonLine(Output());
  EXPECT_EQ(after["latest_tree_head"], before["latest_tree_head"]);  // the records as they were
  EXPECT_EQ(after["intact"], true);

  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--kek", new_kek.private_pem}), 0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("Jürgen Müller"));
  EXPECT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--kek", old_kek.private_pem}), 2);
  EXPECT_THAT(Output(), HasSubstr(absl::StrCat("wrapped by key-encryption key ",
                                               new_kek.public_key->key_id())));
  // Again: nothing left to do. A log without sealed records has no keys.
  ASSERT_EQ(Vigil({"audit", "rewrap", "--data-dir", sealed, "--kek", old_kek.private_pem,
                   "--new-kek", new_kek.public_pem}),
            0);
  EXPECT_THAT(Output(), HasSubstr("re-wrapped 0 data keys"));
  EXPECT_THAT(Output(), HasSubstr("(3 already under "));
  ASSERT_EQ(Vigil({"audit", "rewrap", "--data-dir", data_, "--kek", old_kek.private_pem,
                   "--new-kek", new_kek.public_pem}),
            0);
  EXPECT_THAT(Output(), HasSubstr("no data keys"));
  EXPECT_EQ(Vigil({"audit", "rewrap", "--data-dir", sealed, "--kek", old_kek.private_pem,
                   "--new-kek", old_kek.public_pem}),
            2);
}

// The key-management hook: the private half stays with a key service (here the openssl command
// line with a key file vigil never reads, standing in for an HSM's client), reached by a command.
TEST_F(AuditCommandTest, AKeyManagementHookOpensWhatTheKeyFileOpens) {
  const audit::TestKek kek = audit::MakeTestKek(Path("keys"), "kek", audit::KekKind::kRsa);
  const std::string sealed = Path("sealed");
  BuildLog(sealed, kek.public_key);
  // The hook unwraps for this key only, and says so on stderr otherwise.
  Write("hook.sh",
        absl::StrCat("#!/bin/sh\n"
                     "if [ \"$VIGIL_KEK_ID\" != '",
                     kek.public_key->key_id(),
                     "' ] || [ \"$VIGIL_KEK_ALGORITHM\" != rsa-oaep-sha256 ]; then\n"
                     "  echo \"hsm: no key $VIGIL_KEK_ID ($VIGIL_KEK_ALGORITHM)\" >&2; exit 3\n"
                     "fi\n"
                     "base64 -d | openssl pkeyutl -decrypt -inkey '",
                     kek.private_pem,
                     "' -pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256 -pkeyopt "
                     "rsa_mgf1_md:sha256 | base64 -w0\n"));
  ::chmod(Path("hook.sh").c_str(), 0700);
  const std::vector<std::string> hook = {"--kek-command", Path("hook.sh"), "--kek-public",
                                         kek.public_pem};
  const auto with_hook = [&](std::vector<std::string> args) {
    args.insert(args.end(), hook.begin(), hook.end());
    return args;
  };

  // show: the same text as with the private key file.
  ASSERT_EQ(Vigil({"audit", "show", "--data-dir", sealed, TxId(3), "--kek", kek.private_pem}), 0)
      << Output();
  const std::string with_file = Output();
  ASSERT_EQ(Vigil(with_hook({"audit", "show", "--data-dir", sealed, TxId(3)})), 0) << Output();
  EXPECT_EQ(Output(), with_file);
  EXPECT_THAT(Output(), HasSubstr("originator    DE89370400440532013003, Jürgen Müller, bank "
                                  "COBADEFFXXX, DE"));
  EXPECT_THAT(Output(), HasSubstr("remittance    INV 2026/11/3"));
  // The address's empty line is left out, its other lines joined.
  EXPECT_THAT(Output(), HasSubstr("    address     18 Harbour Road; Wan Chai, Hong Kong\n"));
  EXPECT_THAT(Output(), HasSubstr(", opened"));

  // export, and open of a keyless export: the same lines as with the key file.
  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--kek", kek.private_pem, "--out",
                   Path("keyed.jsonl")}),
            0)
      << Output();
  ASSERT_EQ(
      Vigil(with_hook({"audit", "export", "--data-dir", sealed, "--out", Path("hooked.jsonl")})), 0)
      << Output();
  EXPECT_EQ(ReadFile(Path("hooked.jsonl")), ReadFile(Path("keyed.jsonl")));
  EXPECT_THAT(ReadFile(Path("hooked.jsonl")), HasSubstr("Jürgen Müller"));
  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--out", Path("keyless.jsonl")}), 0);
  ASSERT_EQ(Vigil(with_hook({"audit", "open", "--input", Path("keyless.jsonl"), "--out",
                             Path("opened.jsonl")})),
            0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("opened 10 of 10 records (3 data keys)"));
  EXPECT_EQ(ReadFile(Path("opened.jsonl")), ReadFile(Path("keyed.jsonl")));

  // A hook that fails: exit 2, naming its exit status and what it said, not the log as damaged.
  // (Another key's public half: refused by key id, naming both, before the hook runs.)
  const audit::TestKek other = audit::MakeTestKek(Path("keys"), "other", audit::KekKind::kSm2);
  EXPECT_EQ(Vigil({"audit", "show", "--data-dir", sealed, TxId(3), "--kek-command", Path("hook.sh"),
                   "--kek-public", other.public_pem}),
            2);
  EXPECT_THAT(Output(), HasSubstr(other.public_key->key_id()));
  EXPECT_THAT(Output(), HasSubstr(kek.public_key->key_id()));
  EXPECT_THAT(Output(), Not(HasSubstr("hsm: no key")));
  EXPECT_EQ(Vigil({"audit", "show", "--data-dir", sealed, TxId(3), "--kek-command",
                   "cat > /dev/null; echo 'hsm: slot 0 is locked' >&2; exit 3", "--kek-public",
                   kek.public_pem}),
            2);
  EXPECT_THAT(Output(), HasSubstr("the command exited with status 3: hsm: slot 0 is locked"));
  EXPECT_THAT(Output(), Not(HasSubstr("vigil audit verify")));
  EXPECT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--kek-command", "echo 'not a key!'",
                   "--kek-public", kek.public_pem}),
            2);
  EXPECT_THAT(Output(), HasSubstr("not base64"));
  EXPECT_EQ(Vigil({"audit", "open", "--input", Path("keyless.jsonl"), "--kek-command",
                   "echo QUFBQQ==", "--kek-public", kek.public_pem}),
            2);
  EXPECT_THAT(Output(), HasSubstr("to 4 bytes; a aes-256-gcm data key is 32 bytes"));

  // Usage: the hook or the key file, and the hook with its public half.
  EXPECT_EQ(
      Vigil(with_hook({"audit", "show", "--data-dir", sealed, TxId(3), "--kek", kek.private_pem})),
      2);
  EXPECT_THAT(Output(), HasSubstr("--kek and --kek-command/--kek-public are alternatives"));
  EXPECT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--kek-command", Path("hook.sh")}), 2);
  EXPECT_THAT(Output(), HasSubstr("--kek-command needs --kek-public FILE"));
  EXPECT_EQ(Vigil({"audit", "open", "--kek-public", kek.public_pem}), 2);
  EXPECT_THAT(Output(), HasSubstr("give --kek-command CMD too"));
  EXPECT_EQ(Vigil({"audit", "open", "--input", Path("keyless.jsonl")}), 2);
  EXPECT_THAT(Output(), HasSubstr("give --kek FILE"));
  EXPECT_EQ(Vigil({"audit", "show", "--data-dir", sealed, TxId(3), "--kek-command", Path("hook.sh"),
                   "--kek-public", kek.private_pem}),
            2);
  EXPECT_THAT(Output(), HasSubstr("--kek-public: "));
  EXPECT_THAT(Output(), HasSubstr("only the public half is wanted"));

  // rewrap from the hook's key to a new one, then the new key's file opens.
  ASSERT_EQ(
      Vigil(with_hook({"audit", "rewrap", "--data-dir", sealed, "--new-kek", other.public_pem})), 0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr(absl::StrCat("re-wrapped 3 data keys from key-encryption key ",
                                               kek.public_key->key_id(), " to ",
                                               other.public_key->key_id())));
  ASSERT_EQ(Vigil({"audit", "export", "--data-dir", sealed, "--kek", other.private_pem, "--out",
                   Path("rotated.jsonl")}),
            0)
      << Output();
  EXPECT_EQ(ReadFile(Path("rotated.jsonl")), ReadFile(Path("keyed.jsonl")));
  EXPECT_EQ(
      Vigil(with_hook({"audit", "rewrap", "--data-dir", sealed, "--new-kek", kek.public_pem})), 2);
  EXPECT_THAT(Output(), HasSubstr("--new-kek is the same key-encryption key as --kek-public"));
}

}  // namespace
}  // namespace vigil
