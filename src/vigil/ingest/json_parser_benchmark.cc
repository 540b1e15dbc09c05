// JSON ingest throughput. Build RelWithDebInfo or Release; the numbers of a Debug build mean
// nothing. Target: >= 1M records/s per core.
//
//   ninja -C build json_parser_benchmark && build/src/vigil/ingest/json_parser_benchmark
//
// Input: the 667 AMLworld sample rows written as JSON (TransactionToJson, ~270 bytes each) plus
// the hand-written examples, repeated to ~100k documents (2k under VIGIL_BENCH_SMOKE), built
// before the timed loop.
#include <simdjson.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/json_writer.h"
#include "vigil/ingest/transaction_reader.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

struct JsonData {
  std::vector<std::string> docs;
  std::string lines;  // the same documents as JSON Lines
  std::vector<Transaction> transactions;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const JsonData& Data() {
  static const JsonData* data = [] {
    auto* d = new JsonData;
    std::vector<std::string> base;
    absl::StatusOr<std::unique_ptr<TransactionReader>> reader =
        OpenTransactionFile(vigil::testing::TestDataPath("amlworld/HI-Small_Trans.sample.csv"), {});
    if (!reader.ok()) {
      std::fprintf(stderr, "cannot read the AMLworld sample (set VIGIL_SOURCE_DIR)\n");
      std::abort();
    }
    Transaction tx;
    RecordError error;
    while (*(*reader)->Next(&tx, &error) == ReadResult::kRecord) {
      base.push_back(TransactionToJson(tx));
    }
    std::istringstream examples(
        ReadFile(vigil::testing::SourceDir() + "/examples/transactions.jsonl"));
    for (std::string line; std::getline(examples, line);) base.push_back(line);
    const size_t target = std::getenv("VIGIL_BENCH_SMOKE") != nullptr ? 2000 : 100000;
    while (d->docs.size() < target) {
      for (const std::string& doc : base) d->docs.push_back(doc);
    }
    for (const std::string& doc : d->docs) d->lines += doc + "\n";
    JsonParserOptions options;
    options.enforce_iso_minor_units = false;
    JsonTransactionParser parser(options);
    for (const std::string& doc : base) d->transactions.push_back(*parser.Parse(doc));
    return d;
  }();
  return *data;
}

int64_t TotalBytes(const std::vector<std::string>& docs) {
  int64_t n = 0;
  for (const std::string& d : docs) n += static_cast<int64_t>(d.size());
  return n;
}

// The document parser alone (what the HTTP server runs per request).
void BM_JsonTransactionParser_Record(benchmark::State& state) {
  const JsonData& data = Data();
  JsonParserOptions options;
  options.enforce_iso_minor_units = false;  // AMLworld Yen amounts carry 2 decimals
  JsonTransactionParser parser(options);
  Transaction tx;
  RecordError error;
  int64_t rejected = 0;
  for (auto _ : state) {
    for (const std::string& doc : data.docs) rejected += !parser.Parse(doc, &tx, &error);
    benchmark::DoNotOptimize(tx);
  }
  if (rejected != 0) state.SkipWithError("documents were rejected");
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.docs.size()));
  state.SetBytesProcessed(state.iterations() * TotalBytes(data.docs));
}
BENCHMARK(BM_JsonTransactionParser_Record)->Unit(benchmark::kMillisecond);

// The JSON Lines reader over an in-memory file.
void BM_JsonLinesReader_Buffer(benchmark::State& state) {
  const JsonData& data = Data();
  ReaderOptions options;
  options.enforce_iso_minor_units = false;
  for (auto _ : state) {
    state.PauseTiming();
    absl::StatusOr<std::unique_ptr<TransactionReader>> reader =
        OpenTransactionBuffer(data.lines, options);
    state.ResumeTiming();
    if (!reader.ok()) {
      state.SkipWithError("open failed");
      break;
    }
    Transaction tx;
    RecordError error;
    size_t n = 0;
    for (;;) {
      absl::StatusOr<ReadResult> r = (*reader)->Next(&tx, &error);
      if (!r.ok() || *r != ReadResult::kRecord) break;
      ++n;
    }
    if (n != data.docs.size()) {
      state.SkipWithError("records were rejected");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.docs.size()));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(data.lines.size()));
}
BENCHMARK(BM_JsonLinesReader_Buffer)->Unit(benchmark::kMillisecond);

// The JSON Lines reader over a file (page cache warm after the first iteration), as replay runs.
void BM_JsonLinesReader_File(benchmark::State& state) {
  const JsonData& data = Data();
  const std::string path = "/tmp/vigil_json_benchmark." + std::to_string(::getpid()) + ".jsonl";
  std::ofstream(path, std::ios::binary) << data.lines;
  ReaderOptions options;
  options.enforce_iso_minor_units = false;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<TransactionReader>> reader = OpenTransactionFile(path, options);
    if (!reader.ok()) {
      state.SkipWithError("open failed");
      break;
    }
    Transaction tx;
    RecordError error;
    size_t n = 0;
    for (;;) {
      absl::StatusOr<ReadResult> r = (*reader)->Next(&tx, &error);
      if (!r.ok() || *r != ReadResult::kRecord) break;
      ++n;
    }
    if (n != data.docs.size()) {
      state.SkipWithError("records were rejected");
      break;
    }
  }
  std::remove(path.c_str());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.docs.size()));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(data.lines.size()));
}
BENCHMARK(BM_JsonLinesReader_File)->Unit(benchmark::kMillisecond);

// Baseline: simdjson's DOM parse alone, no schema mapping (the floor for the parser above).
void BM_JsonBaseline_SimdjsonDomParse(benchmark::State& state) {
  const JsonData& data = Data();
  std::vector<simdjson::padded_string> padded;
  for (const std::string& doc : data.docs) padded.emplace_back(doc);
  simdjson::dom::parser parser;
  for (auto _ : state) {
    for (const simdjson::padded_string& doc : padded) {
      simdjson::dom::element root;
      benchmark::DoNotOptimize(parser.parse(doc).get(root));
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.docs.size()));
}
BENCHMARK(BM_JsonBaseline_SimdjsonDomParse)->Unit(benchmark::kMillisecond);

void BM_TransactionToJson(benchmark::State& state) {
  const JsonData& data = Data();
  std::string out;
  for (auto _ : state) {
    for (const Transaction& tx : data.transactions) {
      out.clear();
      AppendTransactionJson(tx, &out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.transactions.size()));
}
BENCHMARK(BM_TransactionToJson);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
