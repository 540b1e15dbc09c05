#include "vigil/audit/audit_export.h"

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/proof_bundle.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/audit/testing_log.h"
#include "vigil/core/currency.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::audit {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::vigil::testing::StatusIs;
using Json = nlohmann::ordered_json;

// A view in the manner of engine's AuditRecordViewJson for what these tests look at: the
// transaction's members under their names, empty ones left out.
std::string TestView(const AuditRecord& r, const Hash& leaf_hash) {
  const auto party = [](const Party& p) {
    Json o = Json::object();
    if (!p.account_id.empty()) o["account_id"] = p.account_id;
    if (!p.name.empty()) o["name"] = p.name;
    if (!p.bank_id.empty()) o["bank_id"] = p.bank_id;
    if (!p.address.empty()) o["address"] = p.address;
    return o;
  };
  const Transaction& tx = r.transaction;
  Json t;
  t["id"] = tx.id;
  t["originator"] = party(tx.originator);
  t["beneficiary"] = party(tx.beneficiary);
  t["amount"] = tx.amount.ToString();
  if (!tx.remittance.empty()) t["remittance"] = tx.remittance;
  if (!tx.agents.empty()) {
    Json agents = Json::array();
    for (const Agent& a : tx.agents) {
      Json o = {{"bic", a.bic}};
      if (!a.account_id.empty()) o["account_id"] = a.account_id;
      agents.push_back(std::move(o));
    }
    t["agents"] = std::move(agents);
  }
  if (tx.ultimate_originator.has_value()) t["ultimate_originator"] = party(*tx.ultimate_originator);
  Json j;
  j["sequence"] = r.sequence;
  j["leaf_hash"] = HashHex(leaf_hash);
  j["transaction"] = std::move(t);
  j["action"] = static_cast<int>(r.decision.action);
  return j.dump();
}

AuditRecord PersonalRecord(int i) {
  AuditRecord r;
  r.transaction.id = absl::StrCat("tx-", i);
  r.transaction.originator = {.account_id = absl::StrCat("DE-", i), .name = "Jürgen Müller",
                              .bank_id = "COBADEFFXXX", .address = {"Hauptstraße 1", ""}};
  r.transaction.beneficiary = {.account_id = "HK-0012", .name = "Golden Harbour Ltd"};
  r.transaction.amount = Money(950'000 + i, 2, *Currency::FromCode("EUR"));
  r.transaction.remittance = absl::StrCat("invoice ", i);
  r.transaction.agents = {{.bic = "IRVTUS3N"}, {.bic = "CHASUS33", .account_id = "/4455"}};
  r.transaction.ultimate_originator = Party{.name = "Müller Holding"};
  r.decision.transaction_id = r.transaction.id;
  r.decision.action = Action::kReview;
  r.source = "test";
  r.input_sha256 = Digest(HashAlgorithm::kSha256, r.transaction.id);
  return r;
}

class AuditExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("audit_export_test_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    kek_ = MakeTestKek(dir_ + "-keys", "kek", KekKind::kRsa);
    other_ = MakeTestKek(dir_ + "-keys", "other", KekKind::kSm2);
    KvStoreOptions options;
    options.path = dir_;
    options.column_families = AuditColumnFamilies();
    ASSERT_OK_AND_ASSIGN(store_, KvStore::Open(options));
    signer_ = TestSigner();
    AuditLogOptions log_options;
    log_options.signer = signer_;
    log_options.record_kek = kek_.public_key;
    log_options.records_per_data_key = 2;
    {
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> writer,
                           AuditLog::Open(store_.get(), log_options, clock_));
      // Records 0-4 sealed (data keys for 0-1, 2-3 and 4), record 5 written in the clear.
      for (int i = 0; i < 6; ++i) {
        const AuditRecord r = PersonalRecord(i);
        RecordBodyFields fields = RecordBodyFields::Of(r);
        const std::shared_ptr<const RecordSealer> sealer = writer->sealer();
        if (i < 5) fields.sealer = sealer.get();
        ASSERT_OK_AND_ASSIGN(std::string body, EncodeRecordBody(fields));
        ASSERT_OK(writer->Append({{r.transaction.id, std::move(body)}}).status());
      }
    }  // closed: a tree head covers every record
    ASSERT_OK_AND_ASSIGN(log_, AuditLog::OpenForReading(store_.get()));
  }
  void TearDown() override {
    log_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
    std::filesystem::remove_all(dir_ + "-keys");
  }

  std::vector<std::string> Export(const ExportRange& range, const RecordOpener* opener,
                                  ExportSummary* summary = nullptr) {
    std::vector<std::string> lines;
    absl::StatusOr<ExportSummary> s =
        WriteExport(*log_, range, opener, TestView, [&](std::string_view line) {
          lines.emplace_back(line);
          return absl::OkStatus();
        });
    EXPECT_TRUE(s.ok()) << s.status();
    if (summary != nullptr && s.ok()) *summary = *s;
    return lines;
  }
  static absl::StatusOr<std::vector<std::string>> Open(const std::vector<std::string>& lines,
                                                       const TestKek& kek) {
    std::istringstream in(absl::StrJoin(lines, "\n") + "\n");
    RecordOpener opener(kek.private_key);
    std::vector<std::string> out;
    absl::StatusOr<ExportSummary> s = OpenExport(in, opener, [&](std::string_view line) {
      out.emplace_back(line);
      return absl::OkStatus();
    });
    if (!s.ok()) return s.status();
    return out;
  }

  std::string dir_;
  ::vigil::testing::FakeClock clock_{FromUnixMicros(1'764'500'000'000'000)};
  TestKek kek_, other_;
  std::shared_ptr<const LogSigner> signer_;
  std::unique_ptr<KvStore> store_;
  std::unique_ptr<AuditLog> log_;
};

TEST_F(AuditExportTest, WithoutAKeySealedFieldsAreShownSealedWithTheirDataKeys) {
  ExportSummary summary;
  const std::vector<std::string> lines = Export({}, nullptr, &summary);
  EXPECT_EQ(summary.examined, 6u);
  EXPECT_EQ(summary.exported, 6u);
  EXPECT_EQ(summary.sealed, 5u);
  EXPECT_EQ(summary.data_keys, 3u);
  ASSERT_EQ(lines.size(), 9u);  // each data key before the first record sealed under it
  const std::string all = absl::StrJoin(lines, "\n");
  for (const char* personal : {"Jürgen Müller", "DE-", "Hauptstraße", "invoice ", "/4455",
                               "Müller Holding", "Golden Harbour"}) {
    // Only the record written in the clear shows them.
    EXPECT_TRUE(absl::StrContains(lines.back(), personal)) << personal;
    EXPECT_FALSE(absl::StrContains(all.substr(0, all.size() - lines.back().size()), personal))
        << personal;
  }
  const Json key = Json::parse(lines[0]);
  ASSERT_TRUE(key.contains("data_key"));
  EXPECT_EQ(key["data_key"]["kek_id"], kek_.public_key->key_id());
  const Json record = Json::parse(lines[1]);
  EXPECT_EQ(record["data_key_id"], key["data_key"]["id"]);
  EXPECT_TRUE(record["transaction"]["originator"]["name"]["sealed"].is_string());
  EXPECT_TRUE(record["transaction"]["originator"]["address"]["sealed"].is_string());
  EXPECT_TRUE(record["transaction"]["agents"][1]["account_id"]["sealed"].is_string());
  EXPECT_FALSE(record["transaction"]["agents"][0].contains("account_id"));
  EXPECT_EQ(record["transaction"]["originator"]["bank_id"], "COBADEFFXXX");
  // Members stay in the view's order: the sealed name where the name would be.
  EXPECT_LT(lines[1].find("\"name\""), lines[1].find("\"bank_id\""));
  EXPECT_FALSE(Json::parse(lines.back()).contains("data_key_id"));
  EXPECT_EQ(lines.back(), TestView(*DecodeRecord(*log_->ReadRecord(5)),
                                   LeafHash(log_->hash(), *log_->ReadRecord(5))));

  // One transaction: its data key, then its record.
  const std::vector<std::string> one = Export({.transaction_id = "tx-3"}, nullptr);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_TRUE(Json::parse(one[0]).contains("data_key"));
  EXPECT_EQ(one[1], lines[5]);
  EXPECT_THAT(WriteExport(*log_, {.transaction_id = "tx-9"}, nullptr, TestView,
                          [](std::string_view) { return absl::OkStatus(); }),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("tx-9 is not in the audit log")));
}

TEST_F(AuditExportTest, PagesCoverTheLogOnceEachWithTheirOwnDataKeys) {
  const std::vector<std::string> whole = Export({}, nullptr);
  std::vector<std::string> records;  // the record lines of all pages, in order
  uint64_t from = 0;
  int pages = 0;
  for (;; ++pages) {
    ASSERT_LT(pages, 10);
    ExportSummary summary;
    const std::vector<std::string> page =
        Export({.from = from, .max_records = 4}, nullptr, &summary);
    EXPECT_LE(summary.exported, 4u);
    for (const std::string& line : page) {
      const Json j = Json::parse(line);
      if (j.contains("data_key")) continue;
      // A page is self-contained: the key of each sealed record is on the page before it.
      if (j.contains("data_key_id")) {
        EXPECT_TRUE(absl::StrContains(absl::StrJoin(page, "\n"),
                                      absl::StrCat("\"id\":\"", j["data_key_id"].get<std::string>())))
            << line;
      }
      records.push_back(line);
    }
    if (!summary.next_from.has_value()) break;
    EXPECT_EQ(*summary.next_from, from + 4);
    from = *summary.next_from;
  }
  EXPECT_EQ(pages, 1);  // 6 records: pages of 4 and 2
  std::vector<std::string> whole_records;
  for (const std::string& line : whole) {
    if (!Json::parse(line).contains("data_key")) whole_records.push_back(line);
  }
  EXPECT_EQ(records, whole_records);
  // A last page that ends exactly at the log's end says there is no next one.
  ExportSummary summary;
  Export({.from = 2, .max_records = 4}, nullptr, &summary);
  EXPECT_EQ(summary.exported, 4u);
  EXPECT_FALSE(summary.next_from.has_value());
}

TEST_F(AuditExportTest, AKeylessExportOpensOfflineToWhatTheKeyedExportWrites) {
  const std::unique_ptr<RecordOpener> opener = RecordOpener::ForLog(*log_, kek_.private_key);
  ExportSummary summary;
  const std::vector<std::string> keyed = Export({}, opener.get(), &summary);
  EXPECT_EQ(summary.sealed, 0u);
  EXPECT_EQ(summary.data_keys, 0u);
  ASSERT_EQ(keyed.size(), 6u);
  const Json first = Json::parse(keyed[0]);
  EXPECT_EQ(first["transaction"]["originator"]["name"], "Jürgen Müller");
  EXPECT_EQ(first["transaction"]["originator"]["address"], Json::array({"Hauptstraße 1", ""}));
  EXPECT_TRUE(first.contains("data_key_id"));

  const std::vector<std::string> keyless = Export({}, nullptr);
  ASSERT_OK_AND_ASSIGN(const std::vector<std::string> opened, Open(keyless, kek_));
  EXPECT_EQ(opened, keyed);
  // Opening what is already open changes nothing.
  ASSERT_OK_AND_ASSIGN(const std::vector<std::string> again, Open(keyed, kek_));
  EXPECT_EQ(again, keyed);

  // Another key-encryption key: refused, naming the keys.
  EXPECT_THAT(Open(keyless, other_).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("line 2"), HasSubstr(kek_.public_key->key_id()),
                             HasSubstr(other_.public_key->key_id()))));
  // A sealed value moved to another record's line does not open.
  std::vector<std::string> moved = keyless;
  Json a = Json::parse(moved[1]), b = Json::parse(moved[2]);
  b["transaction"]["originator"]["name"] = a["transaction"]["originator"]["name"];
  moved[2] = b.dump();
  EXPECT_THAT(Open(moved, kek_).status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("line 3"), HasSubstr("transaction.originator.name"))));
  // Without its data key lines the export cannot be opened.
  std::vector<std::string> keyless_records;
  for (const std::string& line : keyless) {
    if (!absl::StrContains(line, "\"data_key\":")) keyless_records.push_back(line);
  }
  EXPECT_THAT(Open(keyless_records, kek_).status(), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(Open({"not json"}, kek_).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 1")));
}

TEST_F(AuditExportTest, AProofOfASealedRecordChecksWithoutAnyKey) {
  ASSERT_OK_AND_ASSIGN(ProofBundle bundle, InclusionBundle(*log_, "tx-1", TestView));
  EXPECT_THAT(bundle.json, HasSubstr("\"sealed\""));
  EXPECT_THAT(bundle.json, Not(HasSubstr("Jürgen")));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LogVerifier> key,
                       LogVerifier::FromPem(signer_->PublicKeyPem(), "log key"));
  ASSERT_OK_AND_ASSIGN(CheckedProof proof, CheckProofBundle(bundle.json, *key, TestView));
  EXPECT_EQ(proof.transaction_id, "tx-1");
}

}  // namespace
}  // namespace vigil::audit
