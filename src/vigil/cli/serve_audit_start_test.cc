// `vigil serve` checks the tail of its audit log before it appends to it, and refuses to start
// on a damaged one, naming the damage and what to run (the real binary, on a data dir whose
// store the test tampers with as someone with write access to it could).
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/signing_key.h"
#include "vigil/cli/testing_serve_process.h"
#include "vigil/common/clock.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::vigil::testing::ServeProcess;

std::string SizeKey(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) out[static_cast<size_t>(i)] = static_cast<char>(v & 0xff);
  return out;
}

class ServeAuditStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/serve_audit_start_", getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/count.yaml") << ::vigil::testing::kCountingPolicy;
    const std::string source = ::vigil::testing::SourceDir();
    argv_ = {VIGIL_BINARY, "serve", "--listen", "127.0.0.1:0", "--plaintext", "--auth", "none",
             "--data-dir", data_dir(), "--policy", dir_ + "/count.yaml", "--lists",
             source + "/policies/lists", "--fx-rates", source + "/data/fx_rates.csv", "--log",
             dir_ + "/requests.log", "--no-drift", "--workers", "2"};
    // A first start makes the data dir: its store, its signing key, the log's first head.
    ASSERT_NO_FATAL_FAILURE(StartAndStop());
    // 250 decisions, heads every 100 records (0, 100, 200) and none at close: a crash after
    // record 249, as the server's own log could be.
    ASSERT_NO_FATAL_FAILURE(AppendRecords(250));
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }
  std::string data_dir() const { return dir_ + "/data"; }

  void StartAndStop() {
    absl::StatusOr<std::unique_ptr<ServeProcess>> server =
        ServeProcess::Start(argv_, dir_ + "/serve.stderr");
    ASSERT_TRUE(server.ok()) << server.status();
    EXPECT_EQ((*server)->Stop(SIGTERM), 0);
  }
  // The exit status and stderr of a start that must fail.
  std::string FailedStart() {
    const std::string log = dir_ + "/refused.stderr";
    std::filesystem::remove(log);
    absl::StatusOr<std::unique_ptr<ServeProcess>> server = ServeProcess::Start(argv_, log);
    EXPECT_FALSE(server.ok()) << "vigil serve started on a damaged audit log";
    if (server.ok()) return "";
    EXPECT_THAT(server.status().message(), HasSubstr("exited with status 1"));
    return ::vigil::testing::ReadFile(log);
  }

  std::unique_ptr<KvStore> OpenStore() {
    KvStoreOptions options;
    options.path = data_dir() + "/features";
    options.create_if_missing = false;
    absl::StatusOr<std::unique_ptr<KvStore>> store = KvStore::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  void AppendRecords(int n) {
    std::unique_ptr<KvStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    audit::AuditLogOptions options;
    ASSERT_OK_AND_ASSIGN(options.signer,
                         audit::LogSigner::FromPemFile(data_dir() + "/audit_signing_key.pem"));
    options.tree_head_every_records = 100;
    options.tree_head_interval = std::chrono::hours(1);
    {
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<audit::AuditLog> log,
                           audit::AuditLog::Open(store.get(), options, RealClock()));
      std::vector<audit::PendingRecord> records;
      for (int i = 0; i < n; ++i) {
        audit::AuditRecord r;
        r.transaction.id = absl::StrCat("tx-", i);
        r.decision.transaction_id = r.transaction.id;
        r.source = "serve";
        r.input_sha256 = audit::Digest(audit::HashAlgorithm::kSha256, r.transaction.id);
        records.push_back({r.transaction.id, audit::EncodeRecordBody(r)});
      }
      ASSERT_OK(log->Append(std::move(records)).status());
    }
    ASSERT_OK(store->Delete("audit_heads", SizeKey(static_cast<uint64_t>(n))));  // no close
  }

  std::string dir_;
  std::vector<std::string> argv_;
};

TEST_F(ServeAuditStartTest, AnIntactLogStartsAndARemovedHeadRefusesTheStart) {
  ASSERT_NO_FATAL_FAILURE(StartAndStop());  // intact: 50 records after the newest head
  EXPECT_THAT(::vigil::testing::ReadFile(dir_ + "/serve.stderr"), Not(HasSubstr("damaged")));
  std::unique_ptr<KvStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  // The server signed a head at its clean stop (250); removing it and head 200 leaves 150
  // records after head 100, which promised the next head within 100.
  ASSERT_OK(store->Delete("audit_heads", SizeKey(250)));
  ASSERT_OK(store->Delete("audit_heads", SizeKey(200)));
  store.reset();
  const std::string stderr_text = FailedStart();
  EXPECT_THAT(stderr_text, HasSubstr("is damaged: missing_head at sequence 100"));
  EXPECT_THAT(stderr_text,
              HasSubstr(absl::StrCat("Run `vigil audit verify --data-dir ", data_dir())));
  // `vigil audit verify` says the same, exit 1.
  const int verified = ::vigil::testing::RunProcess(
      VIGIL_BINARY, {"audit", "verify", "--data-dir", data_dir()}, dir_ + "/verify.out");
  EXPECT_EQ(verified, 1);
  EXPECT_THAT(::vigil::testing::ReadFile(dir_ + "/verify.out"),
              HasSubstr("DAMAGED at sequence 100: missing_head"));
}

TEST_F(ServeAuditStartTest, EveryHeadRemovedRefusesTheStart) {
  std::unique_ptr<KvStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (uint64_t size : {0, 100, 200}) ASSERT_OK(store->Delete("audit_heads", SizeKey(size)));
  store.reset();
  EXPECT_THAT(FailedStart(), HasSubstr("missing_head at sequence 0"));
}

TEST_F(ServeAuditStartTest, ARecordAfterTheNewestHeadEditedRefusesTheStart) {
  std::unique_ptr<KvStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  // The durable head's root changed (as an edit of records 200..249 and their tree without
  // the matching head would leave it).
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> head, store->Get("audit_meta", "head"));
  ASSERT_TRUE(head.has_value());
  (*head)[head->size() - 1] ^= 1;
  ASSERT_OK(store->Put("audit_meta", "head", *head));
  store.reset();
  const std::string stderr_text = FailedStart();
  EXPECT_THAT(stderr_text, HasSubstr("audit log"));
  EXPECT_THAT(stderr_text, HasSubstr("vigil audit verify"));
}

}  // namespace
}  // namespace vigil
