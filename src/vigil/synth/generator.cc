#include "vigil/synth/generator.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/common/status_macros.h"
#include "vigil/core/currency.h"
#include "vigil/synth/internal/alias_table.h"
#include "vigil/synth/internal/csv_row_writer.h"
#include "vigil/synth/internal/fx_converter.h"
#include "vigil/synth/internal/normal_traffic.h"
#include "vigil/synth/internal/pattern_builder.h"
#include "vigil/synth/internal/population.h"
#include "vigil/synth/internal/rng.h"

namespace vigil::synth {
namespace {

using internal::AliasTable;
using internal::CsvRowWriter;
using internal::FxConverter;
using internal::HourProfile;
using internal::HourWeights;
using internal::NormalTraffic;
using internal::PatternBuilder;
using internal::Population;
using internal::Rng;
using internal::SynthRow;

constexpr int kMaxDays = 3650;
constexpr int kMinutesPerDay = 1440;
constexpr int64_t kMicrosPerDay = int64_t{86400} * 1000000;

absl::Status Validate(const GeneratorOptions& o) {
  if (o.days < 1 || o.days > kMaxDays) {
    return absl::InvalidArgumentError(
        absl::StrCat("days must be in [1, ", kMaxDays, "], got ", o.days));
  }
  if (!(o.laundering_rate >= 0.0 && o.laundering_rate <= 0.5)) {
    return absl::InvalidArgumentError(
        absl::StrCat("laundering rate must be in [0, 0.5], got ", o.laundering_rate));
  }
  if (ToUnixMicros(o.start) % kMicrosPerDay != 0) {
    return absl::InvalidArgumentError("start must be midnight UTC");
  }
  const int64_t start_day = ToUnixMicros(o.start) / kMicrosPerDay;
  if (start_day < 0 || start_day + o.days > 2932896) {  // 1970-01-01 .. 9999-12-31
    return absl::InvalidArgumentError("start must lie between 1970 and 9999");
  }
  if (!(o.structuring_threshold > 0.0)) {
    return absl::InvalidArgumentError("structuring threshold must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<double> ThresholdUsd(const GeneratorOptions& o, const FxRates& rates) {
  VIGIL_ASSIGN_OR_RETURN(const Currency currency,
                         Currency::FromCode(o.structuring_threshold_currency));
  const double per_unit = internal::ReportingPerUnit(rates, currency);
  const double usd = internal::ReportingPerUnit(rates, *Currency::FromCode("USD"));
  if (per_unit <= 0.0 || usd <= 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the FX rates table has no rate for the structuring threshold currency ",
                     o.structuring_threshold_currency));
  }
  return o.structuring_threshold * per_unit / usd;
}

// Orders one day's rows by minute, keeping the order of equal minutes (a counting sort: the day
// has only 1440 distinct keys).
void SortDay(int32_t day_start, std::vector<SynthRow>& rows, std::vector<SynthRow>& scratch) {
  std::array<int32_t, kMinutesPerDay + 1> first{};
  for (const SynthRow& r : rows) ++first[r.minute - day_start + 1];
  for (int m = 0; m < kMinutesPerDay; ++m) first[m + 1] += first[m];
  scratch.resize(rows.size());
  for (const SynthRow& r : rows) scratch[first[r.minute - day_start]++] = r;
  rows.swap(scratch);
}

// Chooses the laundering typologies in shuffled rounds of all nine, so that even a short stream
// has every typology and a long one has them in equal numbers of attempts.
class TypologyDeck {
 public:
  Typology Next(Rng& rng) {
    if (next_ == kNumTypologies) {
      for (int i = kNumTypologies - 1; i > 0; --i) {
        std::swap(deck_[i], deck_[rng.UniformInt(static_cast<uint64_t>(i) + 1)]);
      }
      next_ = 0;
    }
    return deck_[next_++];
  }

 private:
  std::array<Typology, kNumTypologies> deck_ = kAllTypologies;
  int next_ = kNumTypologies;
};

// Injects laundering attempts so that their rows are `rate` of all rows, and holds their rows
// until the day they fall on.
//
// Accounting: each normal row adds rate / (1 - rate) rows owed; an attempt is committed once half
// its rows are owed, which keeps the running share unbiased (committing as soon as any row is
// owed would overshoot by half an attempt on average).
class LaunderingInjector {
 public:
  // "*patterns" must outlive the injector.
  LaunderingInjector(const PatternBuilder* patterns, double rate, int32_t end_minute, uint64_t seed)
      : patterns_(*patterns),
        per_normal_row_(rate / (1.0 - rate)),
        end_minute_(end_minute),
        rng_(seed, /*stream=*/3) {
    // Attempts start at any hour: half the business-hours profile, half around the clock.
    const auto& business = HourWeights(HourProfile::kBusiness);
    const auto& flat = HourWeights(HourProfile::kAroundTheClock);
    const double business_sum = std::accumulate(business.begin(), business.end(), 0.0);
    const double flat_sum = std::accumulate(flat.begin(), flat.end(), 0.0);
    std::array<double, 24> hours{};
    for (int h = 0; h < 24; ++h) hours[h] = business[h] / business_sum + flat[h] / flat_sum;
    start_hour_ = AliasTable(hours);
    NextAttempt();
  }

  // Commits the attempts owed after `normal_rows` more normal rows, each starting at a random
  // time of the day that begins at `day_start`.
  void Schedule(int32_t day_start, size_t normal_rows, GeneratorStats* stats) {
    if (per_normal_row_ <= 0) return;
    owed_ += per_normal_row_ * static_cast<double>(normal_rows);
    while (owed_ >= 0.5 * static_cast<double>(attempt_.size())) {
      const int32_t first = day_start + static_cast<int32_t>(start_hour_.Sample(rng_.Next())) * 60 +
                            static_cast<int32_t>(rng_.UniformInt(60));
      Commit(first);
      ++stats->attempts_by_typology[TypologyIndex(typology_)];
      owed_ -= static_cast<double>(attempt_.size());
      NextAttempt();
    }
  }

  // Moves the committed rows before `end` to *rows, keeping their order; the rest wait.
  void TakeDue(int32_t end, std::vector<SynthRow>* rows) {
    size_t kept = 0;
    for (const SynthRow& r : pending_) {
      if (r.minute < end) {
        rows->push_back(r);
      } else {
        pending_[kept++] = r;
      }
    }
    pending_.resize(kept);
  }

  bool empty() const { return pending_.empty(); }

 private:
  void NextAttempt() {
    attempt_.clear();
    typology_ = deck_.Next(rng_);
    patterns_.Build(typology_, rng_, &attempt_);
  }

  // Places the prepared attempt at `first`; one that would run past the end of the stream is
  // compressed in time to fit (its order of payments is kept).
  void Commit(int32_t first) {
    int32_t span = 0;
    for (const SynthRow& r : attempt_) span = std::max(span, r.minute);
    const double squeeze =
        first + span < end_minute_ ? 1.0 : static_cast<double>(end_minute_ - 1 - first) / span;
    for (SynthRow r : attempt_) {
      r.minute = first + static_cast<int32_t>(r.minute * squeeze);
      pending_.push_back(r);
    }
  }

  const PatternBuilder& patterns_;
  const double per_normal_row_;
  const int32_t end_minute_;
  Rng rng_;
  AliasTable start_hour_;
  TypologyDeck deck_;
  double owed_ = 0;
  std::vector<SynthRow> attempt_;  // the next attempt, minutes relative to its first payment
  Typology typology_ = Typology::kNone;
  std::vector<SynthRow> pending_;  // committed rows of later days, in commit order
};

}  // namespace

std::string FormatGeneratorStats(const GeneratorStats& stats) {
  std::string s = absl::StrCat(stats.rows, " rows, ", stats.laundering_rows, " laundering (");
  for (int i = 0; i < kNumTypologies; ++i) {
    absl::StrAppend(&s, i == 0 ? "" : ", ", TypologyName(kAllTypologies[i]), " ",
                    stats.rows_by_typology[i]);
  }
  absl::StrAppend(&s, ")");
  return s;
}

absl::StatusOr<GeneratorStats> GenerateTransactions(const GeneratorOptions& options,
                                                    const FxRates& fx_rates, std::ostream& out) {
  VIGIL_RETURN_IF_ERROR(Validate(options));
  VIGIL_ASSIGN_OR_RETURN(const FxConverter fx, FxConverter::Create(fx_rates));
  VIGIL_ASSIGN_OR_RETURN(const double threshold_usd, ThresholdUsd(options, fx_rates));
  VIGIL_ASSIGN_OR_RETURN(const Population population,
                         Population::Build(options.accounts, options.seed, fx));
  NormalTraffic traffic(&population, &fx, options.seed);
  const PatternBuilder patterns(&population, &fx, threshold_usd);
  const int32_t end_minute = options.days * kMinutesPerDay;
  LaunderingInjector laundering(&patterns, options.laundering_rate, end_minute, options.seed);
  const int64_t start_day = ToUnixMicros(options.start) / kMicrosPerDay;
  CsvRowWriter writer(&out, &population, start_day);
  writer.WriteHeader();

  GeneratorStats stats;
  std::vector<SynthRow> day_rows;
  std::vector<SynthRow> scratch;
  for (int day = 0; day < options.days && writer.ok(); ++day) {
    const int32_t day_start = day * kMinutesPerDay;
    day_rows.clear();
    traffic.GenerateDay(day, start_day + day, &day_rows);
    laundering.Schedule(day_start, day_rows.size(), &stats);
    laundering.TakeDue(day_start + kMinutesPerDay, &day_rows);
    SortDay(day_start, day_rows, scratch);
    for (const SynthRow& r : day_rows) {
      writer.Append(r);
      if (r.typology != Typology::kNone) ++stats.rows_by_typology[TypologyIndex(r.typology)];
    }
    stats.rows += static_cast<int64_t>(day_rows.size());
  }
  VIGIL_RETURN_IF_ERROR(writer.Finish());
  VIGIL_CHECK(laundering.empty());
  for (int64_t n : stats.rows_by_typology) stats.laundering_rows += n;
  stats.bytes = writer.bytes_written();
  return stats;
}

}  // namespace vigil::synth
