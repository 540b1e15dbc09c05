// SWIFT MT103 read throughput, one thread. Build RelWithDebInfo or Release. Target: >= 1M
// MT103 messages/s per core, split, checked and mapped to a Transaction.
//
//   ninja -C build swift_mt_benchmark && build/src/vigil/ingest/swift_mt_benchmark
//
// Input: every complete MT103 and MT103 STP of testdata/swift_mt (56 messages, 300 to 900 bytes),
// read before the timed loop and taken in turn.
//   BM_SplitMt103      blocks and fields only (SwiftMtMessage::Parse)
//   BM_ReadMt103       split, type and mandatory fields, content checks, mapped into one reused
//                      message and Transaction (what a file reader does)
//   BM_ParseSwiftMt    the same into a new Transaction per message (ParseSwiftMt)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "benchmark/benchmark.h"
#include "vigil/ingest/swift_mt.h"
#include "vigil/ingest/swift_mt_transaction.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::vector<std::string>& Messages() {
  static const std::vector<std::string>* messages = [] {
    auto* m = new std::vector<std::string>;
    std::istringstream manifest(ReadFile(vigil::testing::TestDataPath("swift_mt/manifest.csv")));
    std::string line;
    std::getline(manifest, line);
    while (std::getline(manifest, line)) {
      const std::vector<std::string> c = absl::StrSplit(line, ',');
      if (c.size() < 5 || c[4] != "valid_sample" || (c[2] != "103" && c[2] != "103STP")) continue;
      m->push_back(ReadFile(vigil::testing::TestDataPath("swift_mt/" + c[1])));
      if (!ParseSwiftMt(m->back()).ok()) {
        std::fprintf(stderr, "%s does not read\n", c[1].c_str());
        std::abort();
      }
    }
    if (m->empty()) {
      std::fprintf(stderr, "no MT103 in testdata/swift_mt (set VIGIL_SOURCE_DIR)\n");
      std::abort();
    }
    return m;
  }();
  return *messages;
}

void Count(benchmark::State& state, size_t bytes) {
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void BM_SplitMt103(benchmark::State& state) {
  const std::vector<std::string>& messages = Messages();
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const std::string& text = messages[i];
    i = i + 1 == messages.size() ? 0 : i + 1;
    absl::StatusOr<SwiftMtMessage> m = SwiftMtMessage::Parse(text);
    benchmark::DoNotOptimize(m);
    bytes += text.size();
  }
  Count(state, bytes);
}
BENCHMARK(BM_SplitMt103);

void BM_ReadMt103(benchmark::State& state) {
  const std::vector<std::string>& messages = Messages();
  size_t i = 0, bytes = 0;
  Transaction tx;
  SwiftMtMessage m;
  for (auto _ : state) {
    const std::string& text = messages[i];
    i = i + 1 == messages.size() ? 0 : i + 1;
    absl::Status s = SwiftMtMessage::ParseInto(text, &m);
    if (s.ok()) s = SwiftMtToTransaction(m, &tx);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(tx);
    bytes += text.size();
  }
  Count(state, bytes);
}
BENCHMARK(BM_ReadMt103);

void BM_ParseSwiftMt(benchmark::State& state) {
  const std::vector<std::string>& messages = Messages();
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const std::string& text = messages[i];
    i = i + 1 == messages.size() ? 0 : i + 1;
    absl::StatusOr<Transaction> tx = ParseSwiftMt(text);
    benchmark::DoNotOptimize(tx);
    bytes += text.size();
  }
  Count(state, bytes);
}
BENCHMARK(BM_ParseSwiftMt);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
