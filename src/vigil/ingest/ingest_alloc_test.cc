// Checks the ingest hot paths' promise: no heap allocation per record in steady state. Global
// operator new is replaced to count allocations, which is why this is a test binary of its own.
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "vigil/ingest/csv_parser.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/json_writer.h"
#include "vigil/ingest/transaction_reader.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

// Sanitizer runtimes replace operator new themselves; counting is meaningless there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VIGIL_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define VIGIL_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef VIGIL_COUNT_ALLOCATIONS
#define VIGIL_COUNT_ALLOCATIONS 1
#endif

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

[[maybe_unused]] void* CountedAlloc(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

#if VIGIL_COUNT_ALLOCATIONS
void* operator new(size_t n) { return CountedAlloc(n); }
void* operator new[](size_t n) { return CountedAlloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
#endif

namespace vigil {
namespace {

// Counts allocations made while it is alive.
class AllocationCounter {
 public:
  AllocationCounter() {
    g_allocations = 0;
    g_counting = true;
  }
  ~AllocationCounter() { g_counting = false; }
  long count() const { return g_allocations.load(); }
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> SampleRows() {
  std::istringstream in(
      ReadFile(vigil::testing::TestDataPath("amlworld/HI-Small_Trans.sample.csv")));
  std::vector<std::string> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) rows.push_back(line);
  return rows;
}

TEST(IngestAllocations, CsvParserAllocatesNothingPerRecord) {
  if (!VIGIL_COUNT_ALLOCATIONS) GTEST_SKIP() << "built with a sanitizer";
  const std::vector<std::string> rows = SampleRows();
  ASSERT_EQ(rows.size(), 667u);
  AmlworldCsvOptions options;
  options.source_name = "HI-Small_Trans.sample.csv";
  AmlworldCsvParser parser(options);
  Transaction tx;
  RecordError error;
  for (size_t i = 0; i < rows.size(); ++i) ASSERT_TRUE(parser.Parse(rows[i], 2, &tx, &error));
  long allocations;
  bool ok = true;
  {
    AllocationCounter counter;
    for (size_t i = 0; i < rows.size(); ++i) {
      ok &= parser.Parse(rows[i], static_cast<int64_t>(i + 2), &tx, &error);
    }
    allocations = counter.count();
  }
  EXPECT_TRUE(ok);
  EXPECT_EQ(allocations, 0);
}

TEST(IngestAllocations, CsvReaderAllocatesNothingPerRecord) {
  if (!VIGIL_COUNT_ALLOCATIONS) GTEST_SKIP() << "built with a sanitizer";
  // Several megabytes, so the reader refills and compacts its buffer while counting.
  const std::string sample =
      ReadFile(vigil::testing::TestDataPath("amlworld/HI-Small_Trans.sample.csv"));
  std::string data = sample;
  const std::string rows = sample.substr(sample.find('\n') + 1);
  for (int i = 0; i < 40; ++i) data += rows;
  ASSERT_OK_AND_ASSIGN(auto reader, OpenTransactionBuffer(std::move(data), {}));
  Transaction tx;
  RecordError error;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_THAT(reader->Next(&tx, &error), vigil::testing::IsOkAndHolds(ReadResult::kRecord));
  }
  long allocations;
  int records = 0;
  {
    AllocationCounter counter;
    for (;;) {
      absl::StatusOr<ReadResult> r = reader->Next(&tx, &error);
      if (!r.ok() || *r != ReadResult::kRecord) break;
      ++records;
    }
    allocations = counter.count();
  }
  EXPECT_EQ(records, 41 * 667 - 1000);
  EXPECT_EQ(allocations, 0);
}

TEST(IngestAllocations, JsonParserAllocatesNothingPerDocument) {
  if (!VIGIL_COUNT_ALLOCATIONS) GTEST_SKIP() << "built with a sanitizer";
  // The sample rows as JSON, plus the hand-written examples (names, countries, labels).
  std::vector<std::string> docs;
  {
    ASSERT_OK_AND_ASSIGN(
        auto reader, OpenTransactionFile(
                         vigil::testing::TestDataPath("amlworld/HI-Small_Trans.sample.csv"), {}));
    Transaction tx;
    RecordError error;
    while (*reader->Next(&tx, &error) == ReadResult::kRecord) docs.push_back(TransactionToJson(tx));
    std::istringstream lines(
        ReadFile(vigil::testing::SourceDir() + "/examples/transactions.jsonl"));
    for (std::string line; std::getline(lines, line);) docs.push_back(line);
    docs.push_back(ReadFile(vigil::testing::SourceDir() + "/examples/transaction.json"));
  }
  JsonParserOptions options;
  options.enforce_iso_minor_units = false;  // AMLworld Yen amounts
  JsonTransactionParser parser(options);
  Transaction tx;
  RecordError error;
  for (const std::string& doc : docs) ASSERT_TRUE(parser.Parse(doc, &tx, &error)) << doc;
  long allocations;
  bool ok = true;
  {
    AllocationCounter counter;
    for (const std::string& doc : docs) ok &= parser.Parse(doc, &tx, &error);
    allocations = counter.count();
  }
  EXPECT_TRUE(ok);
  EXPECT_EQ(allocations, 0);
}

}  // namespace
}  // namespace vigil
