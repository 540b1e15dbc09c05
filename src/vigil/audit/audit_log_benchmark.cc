// Append throughput of the audit log with group commit (target: ≥ 200,000 records/s on the
// 2-core development machine), against the same bytes written to the same RocksDB store with
// one synced batch per group and no log (the store's own cost: "RawStoreBatch"), and against
// one fsync per record (what group commit saves: "OneSyncPerRecord").
//
// Records are realistic: a decision with three reasons over a 60-feature row and a transaction
// with names, banks and remittance text, about 1 KB encoded, encoded in the measured loop.
//
//   build/src/vigil/audit/audit_log_benchmark --benchmark_min_time=2
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/common/clock.h"
#include "vigil/core/currency.h"
#include "vigil/store/kv_store.h"

namespace vigil::audit {
namespace {

AuditRecord SampleRecord() {
  AuditRecord r;
  r.received = FromUnixMicros(1'764'500'000'000'000);
  r.decided = r.received + std::chrono::microseconds(412);
  r.source = "serve";
  r.input_format = "json";
  r.input_sha256 = Digest(HashAlgorithm::kSha256, "input");
  Transaction& tx = r.transaction;
  tx.event_time = r.received;
  tx.originator = {"DE89370400440532013000", "Maximilian Mustermann", "COBADEFFXXX", "DE"};
  tx.beneficiary = {"GB29NWBK60161331926819", "Northwind Trading Ltd", "NWBKGB2LXXX", "GB"};
  tx.amount = Money(1'250'000, 2, *Currency::FromCode("EUR"));
  tx.payment_format = PaymentFormat::kWire;
  tx.channel = "api";
  tx.remittance = "Invoice 2026-11-4471 consulting services November";
  r.features.resize(60);
  for (size_t i = 0; i < r.features.size(); ++i) r.features[i] = 0.37 * static_cast<double>(i);
  Decision& d = r.decision;
  d.action = Action::kReview;
  d.score = 0.8123;
  d.reasons = {{Reason::Kind::kRule, "structuring.below_threshold",
                "3 payments just below 10,000 EUR in 24 h", 0, false},
               {Reason::Kind::kModel, "orig_out_count_24h", "sent 14 payments in 24 h", 0.41,
                false},
               {Reason::Kind::kModel, "amount_reporting", "amount 12,500 EUR", 0.22, false}};
  d.feature_schema_version = "features-v1-60";
  d.policy_version = "default@3f9a2c1b";
  d.model_version = "model@77e0d1aa";
  d.model_role = "champion";
  d.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  d.timings = {{"parse", std::chrono::microseconds(3)},
               {"features", std::chrono::microseconds(4)},
               {"model", std::chrono::microseconds(31)},
               {"total", std::chrono::microseconds(60)}};
  return r;
}

class Fixture {
 public:
  explicit Fixture(const std::string& name) {
    dir_ = absl::StrCat(std::filesystem::temp_directory_path().string(), "/vigil-audit-bench-",
                        getpid(), "-", name);
    std::filesystem::remove_all(dir_);
    KvStoreOptions options;
    options.path = dir_;
    options.column_families = AuditColumnFamilies();
    options.column_families.push_back("raw");
    store_ = *KvStore::Open(options);
  }
  ~Fixture() {
    log_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  AuditLog& OpenLog(size_t group_max_records) {
    AuditLogOptions options;
    options.signer = Signer();
    options.group_max_records = group_max_records;
    options.max_queued_records = size_t{1} << 22;
    log_ = *AuditLog::Open(store_.get(), options, RealClock());
    return *log_;
  }
  KvStore& store() { return *store_; }

 private:
  static std::shared_ptr<const LogSigner> Signer() {
    static const std::shared_ptr<const LogSigner> signer = [] {
      return std::shared_ptr<const LogSigner>(
          *LogSigner::FromPem(*GeneratePrivateKeyPem(SignatureAlgorithm::kEd25519), "bench"));
    }();
    return signer;
  }

  std::string dir_;
  std::unique_ptr<KvStore> store_;
  std::unique_ptr<AuditLog> log_;
};

// One thread appending batches (a replay's shape): each Append waits for its group's sync.
void BM_AppendBatches(benchmark::State& state) {
  Fixture fixture(absl::StrCat("batches-", state.range(0)));
  AuditLog& log = fixture.OpenLog(16'384);
  AuditRecord record = SampleRecord();
  const size_t batch = static_cast<size_t>(state.range(0));
  uint64_t id = 0;
  size_t bytes = 0;
  for (auto _ : state) {
    std::vector<PendingRecord> pending(batch);
    for (PendingRecord& p : pending) {
      record.transaction.id = absl::StrCat("tx-", id++);
      record.decision.transaction_id = record.transaction.id;
      p.transaction_id = record.transaction.id;
      p.body = EncodeRecordBody(record);
      bytes += p.body.size();
    }
    if (!log.Append(std::move(pending)).ok()) state.SkipWithError("append failed");
  }
  state.SetItemsProcessed(static_cast<int64_t>(id));
  state.counters["bytes_per_record"] = static_cast<double>(bytes) / static_cast<double>(id);
  state.counters["records_per_group"] =
      static_cast<double>(log.stats().records) / static_cast<double>(log.stats().groups);
}
BENCHMARK(BM_AppendBatches)->Arg(64)->Arg(1024)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Many threads each appending one record at a time and waiting for it (the serving shape:
// every request waits for its own record). Group commit gathers them.
void BM_AppendConcurrentSingles(benchmark::State& state) {
  static Fixture* fixture = nullptr;
  static AuditLog* log = nullptr;
  static std::atomic<uint64_t> next_id{0};
  if (state.thread_index() == 0) {
    fixture = new Fixture(absl::StrCat("singles-", state.threads()));
    log = &fixture->OpenLog(16'384);
    next_id = 0;
  }
  AuditRecord record = SampleRecord();
  uint64_t appended = 0;
  for (auto _ : state) {
    const uint64_t id = next_id.fetch_add(1);
    record.transaction.id = absl::StrCat("tx-", id);
    record.decision.transaction_id = record.transaction.id;
    std::vector<PendingRecord> one(1);
    one[0].transaction_id = record.transaction.id;
    one[0].body = EncodeRecordBody(record);
    if (!log->Append(std::move(one)).ok()) state.SkipWithError("append failed");
    ++appended;
  }
  state.SetItemsProcessed(static_cast<int64_t>(appended));
  if (state.thread_index() == 0) {
    state.counters["records_per_group"] =
        static_cast<double>(log->stats().records) / static_cast<double>(log->stats().groups);
    delete fixture;
    fixture = nullptr;
  }
}
BENCHMARK(BM_AppendConcurrentSingles)
    ->Threads(16)
    ->Threads(64)
    ->Threads(256)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The peer: the same encoded bytes (records and index entries) in one synced batch per group,
// straight into the store: no chain, no tree, no signing.
void BM_RawStoreBatch(benchmark::State& state) {
  Fixture fixture(absl::StrCat("raw-", state.range(0)));
  AuditRecord record = SampleRecord();
  const size_t batch = static_cast<size_t>(state.range(0));
  uint64_t id = 0;
  for (auto _ : state) {
    KvWriteBatch b;
    for (size_t i = 0; i < batch; ++i) {
      record.transaction.id = absl::StrCat("tx-", id);
      record.decision.transaction_id = record.transaction.id;
      std::string key(8, '\0');
      for (int k = 0; k < 8; ++k) key[7 - k] = static_cast<char>(id >> (8 * k));
      b.Put("raw", key, EncodeRecord(record));
      b.Put("raw", record.transaction.id, key);
      ++id;
    }
    if (!fixture.store().Write(b, {.sync = true}).ok()) state.SkipWithError("write failed");
  }
  state.SetItemsProcessed(static_cast<int64_t>(id));
}
BENCHMARK(BM_RawStoreBatch)->Arg(64)->Arg(1024)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Without group commit: one group (one fsync) per record.
void BM_OneSyncPerRecord(benchmark::State& state) {
  Fixture fixture("one-sync");
  AuditLog& log = fixture.OpenLog(1);
  AuditRecord record = SampleRecord();
  uint64_t id = 0;
  for (auto _ : state) {
    record.transaction.id = absl::StrCat("tx-", id++);
    record.decision.transaction_id = record.transaction.id;
    std::vector<PendingRecord> one(1);
    one[0].transaction_id = record.transaction.id;
    one[0].body = EncodeRecordBody(record);
    if (!log.Append(std::move(one)).ok()) state.SkipWithError("append failed");
  }
  state.SetItemsProcessed(static_cast<int64_t>(id));
}
BENCHMARK(BM_OneSyncPerRecord)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_EncodeRecordBody(benchmark::State& state) {
  const AuditRecord record = SampleRecord();
  for (auto _ : state) benchmark::DoNotOptimize(EncodeRecordBody(record));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeRecordBody);

}  // namespace
}  // namespace vigil::audit
BENCHMARK_MAIN();
