// ISO 20022 ingest throughput: ParseIso20022 on corpus messages. Build RelWithDebInfo or
// Release; the numbers of a Debug build mean nothing. Target: >= 100,000 single-transaction
// messages/s per core.
//
//   ninja -C build iso20022_benchmark && build/src/vigil/ingest/iso20022_benchmark
//
// Inputs, read before the timed loops from testdata/iso20022/ (VIGIL_SOURCE_DIR, else the
// source tree this file was compiled from):
//  - pacs.008.001.08 with AppHdr in a SWIFT envelope, prefixed names (5.5 KB, one transaction);
//  - pacs.009.001.11 COV with AppHdr (3.9 KB, one transaction, the underlying customers);
//  - the same pacs.008 with its CdtTrfTxInf repeated 50 times (a batch).
// BM_Pugixml_Load is the baseline: pugixml's parse alone, the floor under ParseIso20022.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <pugixml.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "benchmark/benchmark.h"
#include "vigil/ingest/iso20022.h"

namespace vigil {
namespace {

std::string SourceDir() {
  if (const char* dir = std::getenv("VIGIL_SOURCE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  std::string file = __FILE__;
  return file.substr(0, file.rfind("/src/vigil/ingest/"));
}

std::string ReadCorpus(const std::string& name) {
  const std::string path = SourceDir() + "/testdata/iso20022/messages/" + name;
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().empty()) {
    std::fprintf(stderr, "cannot read %s (set VIGIL_SOURCE_DIR)\n", path.c_str());
    std::abort();
  }
  return ss.str();
}

const std::string& Pacs008() {
  static const std::string* text = new std::string(ReadCorpus("mx_pacs.008.001.08_0007.xml"));
  return *text;
}

const std::string& Pacs009Cov() {
  static const std::string* text = new std::string(ReadCorpus("mx_pacs.009.001.11_0007.xml"));
  return *text;
}

// Pacs008() with its one CdtTrfTxInf repeated 50 times and NbOfTxs 50.
const std::string& Pacs008Batch() {
  static const std::string* text = [] {
    const std::string& one = Pacs008();
    const size_t begin = one.find("<pacs:CdtTrfTxInf>");
    const std::string end_tag = "</pacs:CdtTrfTxInf>";
    const size_t end = one.find(end_tag) + end_tag.size();
    std::string transactions;
    for (int i = 0; i < 50; ++i) transactions += one.substr(begin, end - begin);
    auto* batch = new std::string(one.substr(0, begin) + transactions + one.substr(end));
    *batch = absl::StrReplaceAll(*batch, {{"<pacs:NbOfTxs>1<", "<pacs:NbOfTxs>50<"}});
    return batch;
  }();
  return *text;
}

void Run(benchmark::State& state, const std::string& xml, size_t transactions) {
  size_t parsed = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<Transaction>> txs = ParseIso20022(xml);
    if (!txs.ok()) {
      state.SkipWithError(std::string(txs.status().message()).c_str());
      return;
    }
    parsed += txs->size();
    benchmark::DoNotOptimize(txs);
  }
  if (parsed != transactions * state.iterations()) state.SkipWithError("transactions lost");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));  // messages
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * xml.size()));
  state.counters["tx_per_s"] =
      benchmark::Counter(static_cast<double>(parsed), benchmark::Counter::kIsRate);
}

void BM_ParsePacs008(benchmark::State& state) { Run(state, Pacs008(), 1); }
BENCHMARK(BM_ParsePacs008);

void BM_ParsePacs009(benchmark::State& state) { Run(state, Pacs009Cov(), 1); }
BENCHMARK(BM_ParsePacs009);

void BM_ParsePacs008_50Tx(benchmark::State& state) { Run(state, Pacs008Batch(), 50); }
BENCHMARK(BM_ParsePacs008_50Tx);

// Baseline: pugixml's parse of the same pacs.008 with ParseIso20022's options, nothing else.
void BM_Pugixml_Load(benchmark::State& state) {
  const std::string& xml = Pacs008();
  constexpr unsigned kOptions = pugi::parse_cdata | pugi::parse_escapes | pugi::parse_eol |
                                pugi::parse_doctype | pugi::parse_embed_pcdata;
  for (auto _ : state) {
    pugi::xml_document doc;
    const pugi::xml_parse_result result =
        doc.load_buffer(xml.data(), xml.size(), kOptions, pugi::encoding_utf8);
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * xml.size()));
}
BENCHMARK(BM_Pugixml_Load);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
