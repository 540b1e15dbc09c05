// Append throughput of the audit log with group commit (target: ≥ 200,000 records/s on the
// 2-core development machine), against the same records written to the same RocksDB store as
// a plain log would, one entry per record and one synced batch per group ("RawStoreBatch"),
// and against one fsync per record (what group commit saves: "OneSyncPerRecord").
//
// Records are realistic and distinct (SampleRecords): decisions over a 60-feature row, with
// parties, amounts and remittance text, about 1 KB encoded, encoded in the measured loop as
// callers do.
//
// "Sealed" variants seal the personal fields (names, accounts, remittance: record_sealer.h)
// under a data key wrapped by an RSA-2048 key-encryption key, as a log with record_kek does;
// the suite is the argument (1 AES-256-GCM, 2 SM4-CTR + HMAC-SM3). Compare records/s with the
// plain variant next to each.
//
// Build with optimization (the default RelWithDebInfo build dir is -O2):
//   build/src/vigil/audit/audit_log_benchmark --benchmark_min_time=2
//   build/src/vigil/audit/audit_log_benchmark --benchmark_filter='Encode|AppendBatches'
#include <atomic>
#include <cmath>
#include <random>
#include <utility>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "benchmark/benchmark.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/record_chunk.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/common/clock.h"
#include "vigil/core/currency.h"
#include "vigil/crypto/envelope.h"
#include "vigil/crypto/key_encryption_key.h"
#include "vigil/store/kv_store.h"

namespace vigil::audit {
namespace {

// A pool of distinct decisions, seeded: parties from pools of names, banks and countries,
// amounts and features drawn per record (flags, counts, sums with cents, full-precision
// averages and ratios), a random input hash and trace context, zero to three reasons. About
// 1 KB encoded; LZ4 chunks of them shrink about as much as chunks of the demo's real decisions
// (records_per_stored_byte below; docs/benchmarks.md), not more: a pool of copies of one record
// would compress far better than any real traffic.
std::vector<AuditRecord> SampleRecords(size_t n) {
  static const char* const kFirst[] = {"Maximilian", "Anna",   "Wei",    "Fatima", "John",
                                       "Olga",       "Kenji",  "Amara",  "Lucas",  "Priya",
                                       "Mohamed",    "Sofia",  "Chen",   "Elena",  "David"};
  static const char* const kLast[] = {"Mustermann", "Schmidt", "Zhang",   "Haddad",  "Smith",
                                      "Ivanova",    "Tanaka",  "Okafor",  "Silva",   "Sharma",
                                      "Ali",        "Rossi",   "Li",      "Popescu", "Cohen"};
  static const char* const kCompany[] = {"Northwind Trading Ltd", "Contoso GmbH",
                                         "Globex Corporation",   "Initech LLC",
                                         "Umbrella Logistics SA", "Stark Industrial BV"};
  static const char* const kCountry[] = {"DE", "GB", "FR", "NL", "CN", "AE", "US", "SG"};
  static const char* const kRules[][2] = {
      {"structuring.below_threshold", "%d payments just below 10,000 EUR in 24 h"},
      {"velocity.out_24h", "sent %d payments in 24 h"},
      {"cycle.round_trip", "funds returned to the originator after %d hops"},
      {"fan_in.many_senders", "%d distinct senders in 7 days"}};
  static const char* const kFeatures[] = {"orig_out_count_24h", "amount_reporting",
                                          "bene_fan_in_7d", "orig_amount_zscore"};
  std::mt19937_64 rng(20261130);
  const auto uniform = [&rng](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  const auto digits = [&rng](int count) {
    std::string out;
    for (int i = 0; i < count; ++i) out.push_back(static_cast<char>('0' + rng() % 10));
    return out;
  };
  const auto hex = [&rng](int count) {
    std::string out;
    for (int i = 0; i < count; ++i) out.push_back("0123456789abcdef"[rng() % 16]);
    return out;
  };
  const auto party = [&](Party& p) {
    const std::string country = kCountry[rng() % std::size(kCountry)];
    p.account_id = absl::StrCat(country, digits(2), "3704", digits(14));
    p.name = rng() % 4 == 0 ? kCompany[rng() % std::size(kCompany)]
                            : absl::StrCat(kFirst[rng() % std::size(kFirst)], " ",
                                           kLast[rng() % std::size(kLast)]);
    p.bank_id = absl::StrCat("BANK", country, "2L", rng() % 2 ? "XXX" : "100");
    p.country = country;
  };
  std::vector<AuditRecord> pool(n);
  UtcTime t = FromUnixMicros(1'764'500'000'000'000);
  for (AuditRecord& r : pool) {
    t += std::chrono::microseconds(rng() % 20'000);
    r.received = t;
    r.decided = t + std::chrono::microseconds(200 + rng() % 800);
    r.source = "serve";
    r.input_format = "json";
    for (uint8_t& b : r.input_sha256) b = static_cast<uint8_t>(rng());
    Transaction& tx = r.transaction;
    tx.event_time = t;
    party(tx.originator);
    party(tx.beneficiary);
    tx.amount = Money(static_cast<int64_t>(std::exp(uniform(3, 15))), 2,
                      *Currency::FromCode(rng() % 3 ? "EUR" : "USD"));
    tx.payment_format = rng() % 2 ? PaymentFormat::kWire : PaymentFormat::kAch;
    tx.channel = "api";
    tx.remittance = rng() % 3 == 0 ? std::string()
                                   : absl::StrCat("Invoice ", 2026, "-", digits(2), "-",
                                                  digits(5), " consulting services");
    r.features.resize(60);
    for (size_t i = 0; i < r.features.size(); ++i) {
      double& f = r.features[i];
      if (i < 16) {
        f = rng() % 10 == 0 ? 1 : 0;                               // flags
      } else if (i < 36) {
        f = static_cast<double>(rng() % 4 == 0 ? 0 : rng() % 30);  // counts
      } else if (i < 50) {
        f = rng() % 3 == 0 ? 0 : std::round(uniform(0, 50'000) * 100) / 100;  // sums
      } else {
        f = uniform(-3, 3);  // averages, z-scores, ratios: every bit random
      }
    }
    Decision& d = r.decision;
    const double score = uniform(0, 1);
    d.action = score > 0.9 ? Action::kBlock : score > 0.7 ? Action::kReview : Action::kAllow;
    d.score = score;
    const size_t reasons = rng() % 4;
    for (size_t k = 0; k < reasons; ++k) {
      if (rng() % 2) {
        const auto& rule = kRules[rng() % std::size(kRules)];
        std::string text = rule[1];
        text.replace(text.find("%d"), 2, std::to_string(2 + rng() % 20));
        d.reasons.push_back({Reason::Kind::kRule, rule[0], text, 0, false});
      } else {
        const char* feature = kFeatures[rng() % std::size(kFeatures)];
        d.reasons.push_back({Reason::Kind::kModel, feature,
                             absl::StrCat(feature, " = ", digits(3)), uniform(0, 1), false});
      }
    }
    d.feature_schema_version = "features-v1-60";
    d.policy_version = "default@3f9a2c1b";
    d.model_version = "model@77e0d1aa";
    d.model_role = "champion";
    d.traceparent = absl::StrCat("00-", hex(32), "-", hex(16), "-01");
    d.timings = {{"parse", std::chrono::microseconds(rng() % 10)},
                 {"features", std::chrono::microseconds(rng() % 20)},
                 {"model", std::chrono::microseconds(20 + rng() % 40)},
                 {"total", std::chrono::microseconds(40 + rng() % 100)}};
  }
  return pool;
}

const std::vector<AuditRecord>& Pool() {
  static const std::vector<AuditRecord> pool = SampleRecords(4096);
  return pool;
}

// The public half of an RSA-2048 key-encryption key made once per process (only wrapping is
// measured: once per data key).
std::shared_ptr<const crypto::KeyEncryptionKey> Kek() {
  static const std::shared_ptr<const crypto::KeyEncryptionKey> kek = [] {
    EVP_PKEY* key = EVP_RSA_gen(2048);
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PUBKEY(bio, key);
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    const std::string pem(data, static_cast<size_t>(size));
    BIO_free(bio);
    EVP_PKEY_free(key);
    return std::make_shared<const crypto::KeyEncryptionKey>(
        *crypto::KeyEncryptionKey::FromPublicKeyPem(pem));
  }();
  return kek;
}

crypto::CipherSuite SuiteArg(int64_t arg) {
  return arg == 2 ? crypto::CipherSuite::kSm4CtrHmacSm3 : crypto::CipherSuite::kAes256Gcm;
}

// The next record to append: a pool record under a new transaction id, encoded from
// references as the engine encodes its decisions (DecisionRecorder), sealed by "sealer" if given.
PendingRecord NextRecord(uint64_t id, const RecordSealer* sealer = nullptr) {
  const AuditRecord& r = Pool()[id % Pool().size()];
  PendingRecord p;
  p.transaction_id = absl::StrCat("tx-", id, "-", r.decision.traceparent.substr(3, 8));
  // Only the ids differ from the pool's record (assignments into buffers kept per thread).
  thread_local Transaction tx;
  thread_local Decision decision;
  tx = r.transaction;
  decision = r.decision;
  tx.id = p.transaction_id;
  decision.transaction_id = p.transaction_id;
  p.body = *EncodeRecordBody(RecordBodyFields{.received = r.received,
                                              .decided = r.decided,
                                              .source = r.source,
                                              .input_format = r.input_format,
                                              .input_sha256 = &r.input_sha256,
                                              .transaction = &tx,
                                              .features = r.features,
                                              .decision = &decision,
                                              .sealer = sealer});
  return p;
}

// Encoded bytes per record, and bytes per record as stored in LZ4 chunks of 256.
std::pair<double, double> PoolSizes() {
  size_t raw = 0, stored = 0;
  RecordChunkBuilder chunk(ChunkCodec::kLz4);
  for (uint64_t i = 0; i < Pool().size(); ++i) {
    const std::string body = NextRecord(i).body;
    raw += body.size();
    chunk.Add(body);
    if (chunk.records() == 256) stored += chunk.Finish().size();
  }
  if (chunk.records() > 0) stored += chunk.Finish().size();
  const double n = static_cast<double>(Pool().size());
  return {static_cast<double>(raw) / n, static_cast<double>(stored) / n};
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
  // "suite": seal personal fields under that suite (0: in the clear).
  AuditLog& OpenLog(size_t group_max_records, bool compress_records = true, int64_t suite = 0) {
    AuditLogOptions options;
    options.compress_records = compress_records;
    if (suite != 0) {
      options.record_kek = Kek();
      options.record_suite = SuiteArg(suite);
    }
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

// Encoded and stored sizes of the pool's records, as counters.
void SizeCounters(benchmark::State& state) {
  static const std::pair<double, double> sizes = PoolSizes();
  state.counters["bytes_per_record"] = sizes.first;
  state.counters["stored_bytes_per_record"] = sizes.second;
}

// The log the threads of one multi-threaded run share: opened by thread 0 before the clock
// starts, closed by it at the end with the log's counters reported.
class SharedLog {
 public:
  // Every thread calls it first; thread 0 opens the log. The others may use it (log()) only
  // inside the measured loop, which starts once thread 0 is there too.
  static void Start(benchmark::State& state, const std::string& name,
                    bool compress_records = true, int64_t suite = 0) {
    if (state.thread_index() != 0) return;
    Pool();  // built before the clock starts
    fixture_ = new Fixture(absl::StrCat(name, "-", state.threads()));
    log_ = &fixture_->OpenLog(16'384, compress_records, suite);
    next_id_ = 0;
  }
  static AuditLog& log() { return *log_; }
  // The first of "n" new transaction numbers.
  static uint64_t Take(uint64_t n) { return next_id_.fetch_add(n); }
  // Every thread calls it last: its records; thread 0 reports and closes.
  static void Finish(benchmark::State& state, uint64_t appended) {
    state.SetItemsProcessed(static_cast<int64_t>(appended));
    if (state.thread_index() != 0) return;
    const AuditLogStats stats = log_->stats();
    state.counters["records_per_group"] =
        static_cast<double>(stats.records) / static_cast<double>(stats.groups);
    // The store's write (and its sync) per record, on the writer thread.
    state.counters["write_us_per_record"] =
        std::chrono::duration<double, std::micro>(stats.write_time).count() /
        static_cast<double>(stats.records);
    delete fixture_;
    fixture_ = nullptr;
  }

 private:
  static inline Fixture* fixture_ = nullptr;
  static inline AuditLog* log_ = nullptr;
  static inline std::atomic<uint64_t> next_id_{0};
};

// Threads appending batches (a replay's shape, or several request threads' batches): each
// Append waits for its group's sync. With one thread the log idles while the caller encodes
// the next batch; with more, encoding, building and writing overlap.
void BM_AppendBatches(benchmark::State& state) {
  SharedLog::Start(state, absl::StrCat("batches-", state.range(0)));
  const size_t batch = static_cast<size_t>(state.range(0));
  uint64_t appended = 0;
  for (auto _ : state) {
    std::vector<PendingRecord> pending(batch);
    const uint64_t first = SharedLog::Take(batch);
    for (size_t i = 0; i < batch; ++i) pending[i] = NextRecord(first + i);
    if (absl::Status s = SharedLog::log().Append(std::move(pending)).status(); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
    }
    appended += batch;
  }
  if (state.thread_index() == 0) SizeCounters(state);
  SharedLog::Finish(state, appended);
}
BENCHMARK(BM_AppendBatches)
    ->Arg(64)
    ->Arg(1024)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// BM_AppendBatches/1024 with the personal fields sealed (the argument is the suite): each
// batch is encoded with the log's current sealer, as DecisionRecorder does.
void BM_AppendBatches_Sealed(benchmark::State& state) {
  SharedLog::Start(state, absl::StrCat("batches-sealed-", state.range(0)), true, state.range(0));
  const size_t batch = 1024;
  uint64_t appended = 0;
  for (auto _ : state) {
    std::vector<PendingRecord> pending(batch);
    const uint64_t first = SharedLog::Take(batch);
    const std::shared_ptr<const RecordSealer> sealer = SharedLog::log().sealer();
    for (size_t i = 0; i < batch; ++i) pending[i] = NextRecord(first + i, sealer.get());
    if (absl::Status s = SharedLog::log().Append(std::move(pending)).status(); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
    }
    appended += batch;
  }
  SharedLog::Finish(state, appended);
}
BENCHMARK(BM_AppendBatches_Sealed)
    ->Arg(1)
    ->Arg(2)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The log's own capacity: bodies encoded before the clock starts (in a server, request threads
// on other cores encode them), only the transaction ids new. Two threads keep it busy. The
// second argument: LZ4 chunks (1) or uncompressed ones (0).
void BM_AppendPreEncoded(benchmark::State& state) {
  static const std::vector<std::string> bodies = [] {
    std::vector<std::string> out;
    for (uint64_t i = 0; i < Pool().size(); ++i) out.push_back(NextRecord(i).body);
    return out;
  }();
  SharedLog::Start(state, absl::StrCat("pre-encoded-", state.range(1)), state.range(1) != 0);
  const size_t batch = static_cast<size_t>(state.range(0));
  uint64_t appended = 0;
  for (auto _ : state) {
    std::vector<PendingRecord> pending(batch);
    const uint64_t first = SharedLog::Take(batch);
    for (size_t i = 0; i < batch; ++i) {
      pending[i].transaction_id = absl::StrCat("tx-", first + i);
      pending[i].body = bodies[(first + i) % bodies.size()];
    }
    if (absl::Status s = SharedLog::log().Append(std::move(pending)).status(); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
    }
    appended += batch;
  }
  SharedLog::Finish(state, appended);
}
BENCHMARK(BM_AppendPreEncoded)
    ->Args({1024, 1})
    ->Args({1024, 0})
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// Many threads each appending one record at a time and waiting for it (the serving shape:
// every request waits for its own record). Group commit gathers them.
void BM_AppendConcurrentSingles(benchmark::State& state) {
  SharedLog::Start(state, "singles");
  uint64_t appended = 0;
  for (auto _ : state) {
    std::vector<PendingRecord> one(1);
    one[0] = NextRecord(SharedLog::Take(1));
    if (!SharedLog::log().Append(std::move(one)).ok()) state.SkipWithError("append failed");
    ++appended;
  }
  SharedLog::Finish(state, appended);
}
BENCHMARK(BM_AppendConcurrentSingles)
    ->Threads(16)
    ->Threads(64)
    ->Threads(256)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The peer: the same records (encoded alike, with their sequence) and index entries, one
// store entry each, in one synced batch per group, straight into the store: no chain, no tree,
// no signing, no chunks. What a plain RocksDB log of these records costs.
void BM_RawStoreBatch(benchmark::State& state) {
  Fixture fixture(absl::StrCat("raw-", state.range(0)));
  const size_t batch = static_cast<size_t>(state.range(0));
  uint64_t id = 0;
  std::string record;
  for (auto _ : state) {
    KvWriteBatch b;
    for (size_t i = 0; i < batch; ++i) {
      PendingRecord p = NextRecord(id);
      std::string key(8, '\0');
      for (int k = 0; k < 8; ++k) key[7 - k] = static_cast<char>(id >> (8 * k));
      record.clear();
      AppendAssembledRecord(id, Hash{}, p.body, &record);
      b.Put("raw", key, record);
      b.Put("raw", p.transaction_id, key);
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
  uint64_t id = 0;
  for (auto _ : state) {
    std::vector<PendingRecord> one(1);
    one[0] = NextRecord(id++);
    if (!log.Append(std::move(one)).ok()) state.SkipWithError("append failed");
  }
  state.SetItemsProcessed(static_cast<int64_t>(id));
}
BENCHMARK(BM_OneSyncPerRecord)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_EncodeRecordBody(benchmark::State& state) {
  const AuditRecord& record = Pool()[0];
  for (auto _ : state) benchmark::DoNotOptimize(EncodeRecordBody(record));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeRecordBody);

// Encoding from references as the engine does, over the pool (NextRecord): in the clear, the
// baseline of the sealed variant below.
void BM_EncodeRecordBody_Pool(benchmark::State& state) {
  uint64_t id = 0;
  for (auto _ : state) benchmark::DoNotOptimize(NextRecord(id++));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeRecordBody_Pool);

// The same with the personal fields sealed (argument: the suite). The pool's records seal 4 or
// 5 fields each: two parties' account and name, and the remittance text on two in three.
void BM_EncodeRecordBody_Sealed(benchmark::State& state) {
  absl::StatusOr<std::unique_ptr<RecordSealer>> sealer =
      RecordSealer::Create(SuiteArg(state.range(0)), *Kek());
  if (!sealer.ok()) {
    state.SkipWithError(std::string(sealer.status().message()).c_str());
    return;
  }
  uint64_t id = 0;
  for (auto _ : state) benchmark::DoNotOptimize(NextRecord(id++, sealer->get()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeRecordBody_Sealed)->Arg(1)->Arg(2);

}  // namespace
}  // namespace vigil::audit
BENCHMARK_MAIN();
