// AMLworld CSV ingest throughput. Build RelWithDebInfo or Release; the numbers of a Debug build
// mean nothing. Target: >= 1M records/s per core.
//
//   ninja -C build csv_parser_benchmark && build/src/vigil/ingest/csv_parser_benchmark
//
// Input: the 667 rows of testdata/amlworld/HI-Small_Trans.sample.csv repeated to ~100k records
// (2k under VIGIL_BENCH_SMOKE, the ctest smoke run), built before the timed loop.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "benchmark/benchmark.h"
#include "vigil/ingest/csv_parser.h"
#include "vigil/ingest/transaction_reader.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

struct CsvData {
  std::string file;                    // header + rows
  std::vector<std::string_view> rows;  // views into file
};

const CsvData& Data() {
  static const CsvData* data = [] {
    auto* d = new CsvData;
    std::ifstream in(vigil::testing::TestDataPath("amlworld/HI-Small_Trans.sample.csv"),
                     std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string sample = ss.str();
    if (sample.empty()) {
      std::fprintf(stderr, "cannot read the AMLworld sample (set VIGIL_SOURCE_DIR)\n");
      std::abort();
    }
    const size_t header_end = sample.find('\n') + 1;
    const std::string rows = sample.substr(header_end);
    const int target = std::getenv("VIGIL_BENCH_SMOKE") != nullptr ? 2000 : 100000;
    d->file = sample.substr(0, header_end);
    for (int n = 0; n < target; n += 667) d->file += rows;
    std::string_view rest(d->file);
    rest.remove_prefix(header_end);
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      d->rows.push_back(rest.substr(0, nl));
      rest.remove_prefix(nl + 1);
    }
    return d;
  }();
  return *data;
}

// The record parser alone, on pre-split rows.
void BM_AmlworldCsvParser_Record(benchmark::State& state) {
  const CsvData& data = Data();
  AmlworldCsvOptions options;
  options.source_name = "HI-Small_Trans.sample.csv";
  AmlworldCsvParser parser(options);
  Transaction tx;
  RecordError error;
  int64_t rejected = 0;
  for (auto _ : state) {
    int64_t line = 2;
    for (std::string_view row : data.rows) {
      rejected += !parser.Parse(row, line++, &tx, &error);
    }
    benchmark::DoNotOptimize(tx);
  }
  if (rejected != 0) state.SkipWithError("rows were rejected");
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.rows.size()));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(data.file.size()));
}
BENCHMARK(BM_AmlworldCsvParser_Record)->Unit(benchmark::kMillisecond);

int64_t ReadEverything(TransactionReader& reader) {
  Transaction tx;
  RecordError error;
  int64_t n = 0;
  for (;;) {
    absl::StatusOr<ReadResult> r = reader.Next(&tx, &error);
    if (!r.ok() || *r == ReadResult::kEnd) break;
    n += *r == ReadResult::kRecord;
  }
  return n;
}

// The whole reader (record splitting, line counting, parsing) over an in-memory file.
void BM_AmlworldCsvReader_Buffer(benchmark::State& state) {
  const CsvData& data = Data();
  for (auto _ : state) {
    state.PauseTiming();
    absl::StatusOr<std::unique_ptr<TransactionReader>> reader =
        OpenTransactionBuffer(data.file, {});
    state.ResumeTiming();
    if (!reader.ok() || ReadEverything(**reader) != static_cast<int64_t>(data.rows.size())) {
      state.SkipWithError("read failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.rows.size()));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(data.file.size()));
}
BENCHMARK(BM_AmlworldCsvReader_Buffer)->Unit(benchmark::kMillisecond);

// The same through a file (page cache warm after the first iteration).
void BM_AmlworldCsvReader_File(benchmark::State& state) {
  const CsvData& data = Data();
  const std::string path = "/tmp/vigil_csv_benchmark." + std::to_string(::getpid()) + ".csv";
  std::ofstream(path, std::ios::binary) << data.file;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<TransactionReader>> reader = OpenTransactionFile(path, {});
    if (!reader.ok() || ReadEverything(**reader) != static_cast<int64_t>(data.rows.size())) {
      state.SkipWithError("read failed");
      break;
    }
  }
  std::remove(path.c_str());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.rows.size()));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(data.file.size()));
}
BENCHMARK(BM_AmlworldCsvReader_File)->Unit(benchmark::kMillisecond);

// Baseline: the obvious way (std::getline + absl::StrSplit into std::strings), splitting only,
// no validation or conversion.
void BM_CsvBaseline_GetlineStrSplit(benchmark::State& state) {
  const CsvData& data = Data();
  for (auto _ : state) {
    std::istringstream in(data.file);
    std::string line;
    std::getline(in, line);
    int64_t fields = 0;
    while (std::getline(in, line)) {
      std::vector<std::string> parts = absl::StrSplit(line, ',');
      fields += static_cast<int64_t>(parts.size());
    }
    benchmark::DoNotOptimize(fields);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.rows.size()));
}
BENCHMARK(BM_CsvBaseline_GetlineStrSplit)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
