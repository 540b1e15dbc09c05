// Screening against a 100,000-entry list, built from the OFAC SDN sample with variants: each
// copy of an entry has one token of its name and of each alias replaced by a token of another
// entry of its type (a different person or company built from real name parts), so the list
// has a real list's vocabulary with 14 times its combinations, and far more near-duplicates
// than a real list. Letters are not mutated in the list (a real list holds no typos of its
// own names); the queries carry the typos.
//
// Queries: half are list names with a typo (they hit), half are names made of tokens that are
// common on the list but in combinations it does not hold (they mostly miss, after touching
// many candidates: the expensive case). The benchmark reports per-name latency percentiles
// (p50_us, p99_us), names/s on one thread, the index's memory and its build time; and, in
// the same run, the full scan over every name the index replaces (BM_ScanName, same scores).
//
// Run: build/src/vigil/screening/screening_benchmark (VIGIL_SOURCE_DIR set to the repository).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "vigil/screening/name_normalizer.h"
#include "vigil/screening/ofac_sdn.h"
#include "vigil/screening/screener.h"
#include "vigil/screening/watchlist_index.h"
#include "vigil/testing/testdata.h"

namespace vigil::screening {
namespace {

constexpr size_t kListSize = 100'000;

std::vector<std::string> Words(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ' ' || c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) absl::StrAppend(&out, out.empty() ? "" : " ", w);
  return out;
}

// A variant of "name": one word replaced by a word of "pool".
std::string Variant(const std::string& name, const std::vector<std::string>& pool,
                    std::mt19937& rng) {
  std::vector<std::string> words = Words(name);
  if (words.empty()) return name;
  words[rng() % words.size()] = pool[rng() % pool.size()];
  return Join(words);
}

// "size" entries recombined from "sdn" (the file comment): the sample itself, then copies with
// one token of each name replaced by a token of another entry of its type.
std::shared_ptr<const Watchlist> RecombinedList(const Watchlist& sdn, size_t size,
                                                const std::vector<std::string>& person_words,
                                                const std::vector<std::string>& entity_words,
                                                std::mt19937& rng, const std::string& name) {
  std::vector<WatchlistEntry> entries;
  entries.reserve(size);
  for (size_t i = 0; i < size; ++i) {
    const WatchlistEntry& base = sdn.entries()[i % sdn.size()];
    const size_t copy = i / sdn.size();
    WatchlistEntry e = base;
    if (copy > 0) {
      const auto& pool =
          base.type == WatchlistEntry::Type::kIndividual ? person_words : entity_words;
      e.id = absl::StrCat(base.id, "-", copy);
      e.name = Variant(base.name, pool, rng);
      for (std::string& alias : e.aliases) alias = Variant(alias, pool, rng);
      e.identifiers.clear();
    }
    entries.push_back(std::move(e));
  }
  return std::make_shared<const Watchlist>(
      *Watchlist::Create(name, "synthetic", std::move(entries)));
}

struct Fixture {
  std::shared_ptr<const NameNormalizer> normalizer;
  std::shared_ptr<const WatchlistIndex> index;
  std::shared_ptr<const WatchlistIndex> sdn_index;  // the 7,379-entry sample itself
  std::vector<NormalizedName> queries;
  double build_seconds = 0;
  // What the lists are recombined from (the larger list reuses them).
  std::shared_ptr<const Watchlist> sdn;
  std::vector<std::string> person_words, entity_words;
};

const Fixture& GetFixture() {
  static const Fixture* fixture = [] {
    auto* f = new Fixture;
    f->normalizer = *NameNormalizer::Create(NormalizerOptions::Defaults());
    const Watchlist sdn =
        *LoadOfacSdn(vigil::testing::TestDataPath("sanctions/ofac_sdn_legacy_csv_2019"));
    f->sdn_index = *WatchlistIndex::Build(std::make_shared<const Watchlist>(sdn), f->normalizer);
    std::mt19937 rng(2026);
    std::vector<std::string> person_words, entity_words;
    for (const WatchlistEntry& e : sdn.entries()) {
      for (const std::string& w : Words(e.name)) {
        (e.type == WatchlistEntry::Type::kIndividual ? person_words : entity_words).push_back(w);
      }
    }
    auto list = RecombinedList(sdn, kListSize, person_words, entity_words, rng, "SDN x14");
    const auto start = std::chrono::steady_clock::now();
    f->index = *WatchlistIndex::Build(list, f->normalizer);
    f->build_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    for (size_t q = 0; q < 2000; ++q) {
      std::string name;
      if (q % 2 == 0) {
        const WatchlistEntry& e = sdn.entries()[rng() % sdn.size()];
        name = e.name;
        if (name.size() > 4) name[1 + rng() % (name.size() - 2)] = 'x';
      } else {
        std::vector<std::string> words;
        const size_t n = 2 + rng() % 2;
        for (size_t k = 0; k < n; ++k) words.push_back(person_words[rng() % person_words.size()]);
        name = Join(words);
      }
      f->queries.push_back(f->normalizer->Normalize(name));
    }
    f->sdn = std::make_shared<const Watchlist>(sdn);
    f->person_words = std::move(person_words);
    f->entity_words = std::move(entity_words);
    return f;
  }();
  return *fixture;
}

// The 1,000,000-entry list (the size of a sanctions and PEP data set such as OpenSanctions'
// default collection), recombined the same way; 20,000 entries under VIGIL_BENCH_SMOKE (ctest).
struct MillionFixture {
  std::shared_ptr<const WatchlistIndex> index;
  double build_seconds = 0;
};

const MillionFixture& GetMillion() {
  static const MillionFixture* million = [] {
    const Fixture& f = GetFixture();
    const size_t size = std::getenv("VIGIL_BENCH_SMOKE") != nullptr ? 20'000 : 1'000'000;
    std::mt19937 rng(2027);
    auto list = RecombinedList(*f.sdn, size, f.person_words, f.entity_words, rng, "SDN x136");
    auto* m = new MillionFixture;
    const auto start = std::chrono::steady_clock::now();
    m->index = *WatchlistIndex::Build(list, f.normalizer);
    m->build_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return m;
  }();
  return *million;
}

// Per-name latency percentiles and the search's cost counters over the query mix.
void SearchWithPercentiles(benchmark::State& state, const WatchlistIndex& index) {
  const Fixture& f = GetFixture();
  std::vector<WatchlistMatch> out;
  std::vector<double> micros;
  micros.reserve(1 << 20);
  size_t i = 0, hits = 0;
  SearchCost cost;
  for (auto _ : state) {
    const NormalizedName& q = f.queries[i++ % f.queries.size()];
    out.clear();
    const auto start = std::chrono::steady_clock::now();
    index.SearchName(q, {0.88, 10}, out, &cost);
    const auto end = std::chrono::steady_clock::now();
    micros.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    hits += !out.empty();
  }
  std::sort(micros.begin(), micros.end());
  auto pct = [&](double p) {
    return micros.empty() ? 0.0 : micros[std::min(micros.size() - 1,
                                                  static_cast<size_t>(p * micros.size()))];
  };
  const WatchlistIndex::Stats stats = index.stats();
  state.counters["p50_us"] = pct(0.50);
  state.counters["p99_us"] = pct(0.99);
  state.counters["max_us"] = micros.empty() ? 0.0 : micros.back();
  state.counters["hit_rate"] = static_cast<double>(hits) / std::max<size_t>(1, micros.size());
  const double n = static_cast<double>(std::max<size_t>(1, micros.size()));
  state.counters["trigram_postings"] = static_cast<double>(cost.trigram_postings) / n;
  state.counters["tokens_checked"] = static_cast<double>(cost.tokens_checked) / n;
  state.counters["names_touched"] = static_cast<double>(cost.names_touched) / n;
  state.counters["names_scored"] = static_cast<double>(cost.names_scored) / n;
  state.counters["names"] = static_cast<double>(stats.names);
  state.counters["vocabulary"] = static_cast<double>(stats.vocabulary);
  state.counters["index_MiB"] = static_cast<double>(stats.memory_bytes) / (1 << 20);
  state.SetItemsProcessed(static_cast<int64_t>(micros.size()));
}
void BM_SearchName100k(benchmark::State& state) {
  SearchWithPercentiles(state, *GetFixture().index);
  state.counters["build_s"] = GetFixture().build_seconds;
}
BENCHMARK(BM_SearchName100k)->Unit(benchmark::kMicrosecond);

void BM_SearchName1M(benchmark::State& state) {
  SearchWithPercentiles(state, *GetMillion().index);
  state.counters["build_s"] = GetMillion().build_seconds;
}
BENCHMARK(BM_SearchName1M)->Unit(benchmark::kMicrosecond);

// Where the tail goes: each query of the mix timed alone (the median of 5 passes), then the cost
// counters of the slowest 1% beside those of the rest, so that a change aimed at P99 shows
// what it cut (tail_names_touched against rest_names_touched, ...).
void BM_SearchNameTail100k(benchmark::State& state) {
  const Fixture& f = GetFixture();
  const WatchlistIndex& index = *f.index;
  std::vector<WatchlistMatch> out;
  struct Query {
    double micros = 0;
    SearchCost cost;
    size_t index = 0;
  };
  std::vector<Query> queries(f.queries.size());
  for (auto _ : state) {
    for (size_t q = 0; q < f.queries.size(); ++q) {
      std::vector<double> runs;
      for (int pass = 0; pass < 5; ++pass) {
        SearchCost cost;
        out.clear();
        const auto start = std::chrono::steady_clock::now();
        index.SearchName(f.queries[q], {0.88, 10}, out, &cost);
        runs.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count());
        queries[q].cost = cost;
      }
      std::sort(runs.begin(), runs.end());
      queries[q].micros = runs[runs.size() / 2];
      queries[q].index = q;
    }
  }
  std::sort(queries.begin(), queries.end(),
            [](const Query& a, const Query& b) { return a.micros > b.micros; });
  const size_t tail = std::max<size_t>(1, queries.size() / 100);
  if (std::getenv("VIGIL_BENCH_SHOW_TAIL") != nullptr) {  // the slowest queries, to stderr
    for (size_t k = 0; k < tail; ++k) {
      std::string text;
      for (const std::string& t : f.queries[queries[k].index].tokens) text += t + " ";
      std::fprintf(stderr, "%8.0f us  touched %6zu  scored %6zu  %s\n", queries[k].micros,
                   queries[k].cost.names_touched, queries[k].cost.names_scored, text.c_str());
    }
  }
  const auto mean = [&](size_t from, size_t to, auto field) {
    double sum = 0;
    for (size_t k = from; k < to; ++k) sum += static_cast<double>(field(queries[k]));
    return sum / static_cast<double>(std::max<size_t>(1, to - from));
  };
  state.counters["tail_us"] = mean(0, tail, [](const Query& q) { return q.micros; });
  state.counters["rest_us"] = mean(tail, queries.size(), [](const Query& q) { return q.micros; });
  state.counters["tail_names_touched"] =
      mean(0, tail, [](const Query& q) { return q.cost.names_touched; });
  state.counters["rest_names_touched"] =
      mean(tail, queries.size(), [](const Query& q) { return q.cost.names_touched; });
  state.counters["tail_names_scored"] =
      mean(0, tail, [](const Query& q) { return q.cost.names_scored; });
  state.counters["rest_names_scored"] =
      mean(tail, queries.size(), [](const Query& q) { return q.cost.names_scored; });
  state.counters["tail_tokens_checked"] =
      mean(0, tail, [](const Query& q) { return q.cost.tokens_checked; });
  state.counters["rest_tokens_checked"] =
      mean(tail, queries.size(), [](const Query& q) { return q.cost.tokens_checked; });
}
BENCHMARK(BM_SearchNameTail100k)->Unit(benchmark::kMillisecond)->Iterations(1);

// The same queries against the OFAC SDN sample alone (the list the serving benchmark screens
// against).
void BM_SearchNameSdn(benchmark::State& state) { SearchWithPercentiles(state, *GetFixture().sdn_index); }
BENCHMARK(BM_SearchNameSdn)->Unit(benchmark::kMicrosecond);


// Normalization included: what screening one name of a payment costs.
void BM_NormalizeAndSearch100k(benchmark::State& state) {
  const Fixture& f = GetFixture();
  std::vector<WatchlistMatch> out;
  NormalizedName q;
  std::vector<std::string> names = {"Ayman al-Zawahiri", "Greta Lindqvist", "Banco Nacional de Cuba",
                                    "Northwind Trading LLC", "Mohammed Hassan Ali"};
  size_t i = 0;
  for (auto _ : state) {
    f.normalizer->NormalizeInto(names[i++ % names.size()], q);
    out.clear();
    f.index->SearchName(q, {0.88, 10}, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NormalizeAndSearch100k)->Unit(benchmark::kMicrosecond);

// The same queries scored against every name: what the index saves.
void BM_ScanName100k(benchmark::State& state) {
  const Fixture& f = GetFixture();
  std::vector<WatchlistMatch> out;
  size_t i = 0;
  for (auto _ : state) {
    out.clear();
    f.index->ScanName(f.queries[i++ % f.queries.size()], {0.88, 10}, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ScanName100k)->Unit(benchmark::kMillisecond)->Iterations(20);

}  // namespace
}  // namespace vigil::screening

BENCHMARK_MAIN();
