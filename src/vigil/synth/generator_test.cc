#include "vigil/synth/generator.h"

#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "vigil/core/currency.h"
#include "vigil/core/money.h"
#include "vigil/synth/internal/test_util.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::synth {
namespace {

using ::vigil::synth::internal::RepositoryFxRates;
using ::vigil::testing::StatusIs;

// Columns of the output (test-local on purpose: the ingest module is not a dependency).
enum Column {
  kTimestamp = 0,
  kFromBank,
  kFromAccount,
  kToBank,
  kToAccount,
  kAmountReceived,
  kReceivingCurrency,
  kAmountPaid,
  kPaymentCurrency,
  kPaymentFormat,
  kIsLaundering,
  kTypology,
  kNumColumns,
};

using Row = std::vector<absl::string_view>;

absl::StatusOr<std::string> Generate(const GeneratorOptions& options,
                                     GeneratorStats* stats = nullptr) {
  std::ostringstream out;
  absl::StatusOr<GeneratorStats> s = GenerateTransactions(options, RepositoryFxRates(), out);
  if (!s.ok()) return s.status();
  if (stats != nullptr) *stats = *s;
  return out.str();
}

// Splits the CSV text into the header and rows of fields (no quoting in this format).
std::vector<Row> SplitRows(absl::string_view text, absl::string_view* header) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  EXPECT_TRUE(!lines.empty() && lines.back().empty()) << "the last line lacks its newline";
  lines.pop_back();
  *header = lines.front();
  std::vector<Row> rows;
  rows.reserve(lines.size());
  for (size_t i = 1; i < lines.size(); ++i) rows.push_back(absl::StrSplit(lines[i], ','));
  return rows;
}

// "2022/09/01 00:09" -> minutes since the Unix epoch.
int64_t ParseMinute(absl::string_view ts) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  EXPECT_EQ(ts.size(), 16u) << ts;
  EXPECT_TRUE(absl::SimpleAtoi(ts.substr(0, 4), &y) && absl::SimpleAtoi(ts.substr(5, 2), &mo) &&
              absl::SimpleAtoi(ts.substr(8, 2), &d) && absl::SimpleAtoi(ts.substr(11, 2), &h) &&
              absl::SimpleAtoi(ts.substr(14, 2), &mi))
      << ts;
  const std::chrono::sys_days day{std::chrono::year(y) / mo / d};
  return day.time_since_epoch().count() * 1440 + h * 60 + mi;
}

int64_t UsdMicros(absl::string_view amount, absl::string_view aml_currency) {
  absl::StatusOr<Currency> c = Currency::FromAmlworldName(aml_currency);
  EXPECT_TRUE(c.ok()) << aml_currency;
  absl::StatusOr<Money> m = Money::Parse(amount, *c);
  EXPECT_TRUE(m.ok()) << amount;
  absl::StatusOr<int64_t> micros = RepositoryFxRates().ToReportingMicros(*m);
  EXPECT_TRUE(micros.ok()) << micros.status();
  return *micros;
}

std::string AccountKey(const Row& r, Column bank) {
  return absl::StrCat(r[bank], "/", r[bank + 1]);
}

// A moderate stream with a high laundering rate, shared by the tests that inspect its rows.
class GeneratedStream : public ::testing::Test {
 protected:
  static GeneratorOptions Options() {
    GeneratorOptions o;
    o.accounts = 10000;
    o.days = 28;
    o.seed = 11;
    o.laundering_rate = 0.02;
    return o;
  }

  static void SetUpTestSuite() {
    stats_ = new GeneratorStats;
    absl::StatusOr<std::string> text = Generate(Options(), stats_);
    ASSERT_TRUE(text.ok()) << text.status();
    text_ = new std::string(*std::move(text));
    rows_ = new std::vector<Row>(SplitRows(*text_, &header_));
  }
  static void TearDownTestSuite() {
    delete rows_;
    delete text_;
    delete stats_;
  }

  static const std::vector<Row>& rows() { return *rows_; }
  static std::vector<Row> RowsOf(Typology t) {
    std::vector<Row> out;
    for (const Row& r : rows()) {
      if (r[kTypology] == TypologyName(t)) out.push_back(r);
    }
    return out;
  }

  static inline std::string* text_ = nullptr;
  static inline absl::string_view header_;
  static inline std::vector<Row>* rows_ = nullptr;
  static inline GeneratorStats* stats_ = nullptr;
};

TEST_F(GeneratedStream, HasTheHeaderAndTwelveWellFormedColumns) {
  EXPECT_EQ(header_,
            "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,"
            "Amount Paid,Payment Currency,Payment Format,Is Laundering,Typology");
  const std::set<absl::string_view> formats = {"ACH",         "Bitcoin",      "Cash", "Cheque",
                                               "Credit Card", "Reinvestment", "Wire"};
  std::set<absl::string_view> seen_formats;
  std::set<absl::string_view> seen_currencies;
  ASSERT_GT(rows().size(), 100000u);
  for (const Row& r : rows()) {
    ASSERT_EQ(r.size(), static_cast<size_t>(kNumColumns)) << absl::StrJoin(r, ",");
    for (Column bank : {kFromBank, kToBank}) {
      ASSERT_EQ(r[bank].size(), 6u);
      for (char c : r[bank]) ASSERT_TRUE(absl::ascii_isdigit(c)) << r[bank];
      ASSERT_EQ(r[bank + 1].size(), 9u);
      for (char c : r[bank + 1]) {
        ASSERT_TRUE(absl::ascii_isdigit(c) || (c >= 'A' && c <= 'F')) << r[bank + 1];
      }
    }
    for (Column amount : {kAmountReceived, kAmountPaid}) {
      const size_t decimals = r[amount + 1] == "Bitcoin" ? 6 : 2;
      ASSERT_EQ(r[amount].size() - r[amount].find('.') - 1, decimals) << r[amount];
      ASSERT_TRUE(Currency::FromAmlworldName(r[amount + 1]).ok()) << r[amount + 1];
      seen_currencies.insert(r[amount + 1]);
    }
    ASSERT_TRUE(formats.count(r[kPaymentFormat])) << r[kPaymentFormat];
    seen_formats.insert(r[kPaymentFormat]);
    ASSERT_EQ(r[kPaymentFormat] == "Bitcoin", r[kPaymentCurrency] == "Bitcoin");
    ASSERT_EQ(r[kIsLaundering], r[kTypology].empty() ? "0" : "1");
    ASSERT_TRUE(ParseTypology(r[kTypology]).ok()) << r[kTypology];
  }
  EXPECT_EQ(seen_formats.size(), formats.size());
  EXPECT_EQ(seen_currencies.size(), 15u);
}

TEST_F(GeneratedStream, StatsMatchTheOutput) {
  EXPECT_EQ(stats_->rows, static_cast<int64_t>(rows().size()));
  EXPECT_EQ(stats_->bytes, static_cast<int64_t>(text_->size()));
  int64_t laundering = 0;
  for (int i = 0; i < kNumTypologies; ++i) {
    const auto n = static_cast<int64_t>(RowsOf(kAllTypologies[i]).size());
    EXPECT_EQ(stats_->rows_by_typology[i], n) << TypologyName(kAllTypologies[i]);
    laundering += n;
  }
  EXPECT_EQ(stats_->laundering_rows, laundering);
}

TEST_F(GeneratedStream, EveryTypologyIsPresentWithEnoughRows) {
  for (Typology t : kAllTypologies) {
    EXPECT_GE(RowsOf(t).size(), 60u) << TypologyName(t);
    EXPECT_GE(stats_->attempts_by_typology[TypologyIndex(t)], 10) << TypologyName(t);
  }
}

TEST_F(GeneratedStream, LaunderingShareIsTheRate) {
  const double share = static_cast<double>(stats_->laundering_rows) / stats_->rows;
  EXPECT_NEAR(share, Options().laundering_rate, 0.05 * Options().laundering_rate);
}

TEST_F(GeneratedStream, TimestampsLieInTheWindowInOrder) {
  const int64_t start = ToUnixMicros(Options().start) / 60000000;
  const int64_t end = start + Options().days * 1440;
  int64_t previous = start;
  for (const Row& r : rows()) {
    const int64_t minute = ParseMinute(r[kTimestamp]);
    ASSERT_GE(minute, start) << r[kTimestamp];
    ASSERT_LT(minute, end) << r[kTimestamp];
    ASSERT_GE(minute, previous) << "rows are written in timestamp order";
    previous = minute;
  }
}

TEST_F(GeneratedStream, MoreRowsInBusinessHoursThanAtNight) {
  std::map<int, int64_t> by_hour;
  for (const Row& r : rows()) ++by_hour[(ParseMinute(r[kTimestamp]) % 1440) / 60];
  double day = 0;
  double night = 0;
  for (int h = 10; h < 17; ++h) day += by_hour[h] / 7.0;  // 10:00-17:00
  for (int h = 1; h < 5; ++h) night += by_hour[h] / 4.0;  // 01:00-05:00
  EXPECT_GT(day, 5 * night) << "per hour: day " << day << ", night " << night;
}

TEST_F(GeneratedStream, FewerRowsAtWeekends) {
  std::map<int64_t, int64_t> by_day;
  for (const Row& r : rows()) ++by_day[ParseMinute(r[kTimestamp]) / 1440];
  double weekend = 0;
  double weekdays = 0;
  int weekend_days = 0;
  for (const auto& [day, n] : by_day) {
    const unsigned wd =
        std::chrono::weekday(std::chrono::sys_days(std::chrono::days(day))).iso_encoding();
    if (wd >= 6) {
      weekend += n;
      ++weekend_days;
    } else {
      weekdays += n;
    }
  }
  ASSERT_EQ(weekend_days, 8);  // four weekends in 28 days
  EXPECT_LT(weekend / 8, 0.75 * weekdays / 20);
}

TEST_F(GeneratedStream, StructuringAmountsAreJustUnderTheUsdThreshold) {
  const std::vector<Row> structuring = RowsOf(Typology::kStructuring);
  ASSERT_FALSE(structuring.empty());
  int cash = 0;
  for (const Row& r : structuring) {
    const int64_t usd_micros = UsdMicros(r[kAmountPaid], r[kPaymentCurrency]);
    EXPECT_GE(usd_micros, 8000'000000) << absl::StrJoin(r, ",");
    EXPECT_LT(usd_micros, 9990'000000) << absl::StrJoin(r, ",");
    cash += r[kPaymentFormat] == "Cash";
  }
  EXPECT_GT(cash, static_cast<int>(structuring.size() / 3));
}

TEST_F(GeneratedStream, CyclesClose) {
  // A union of closed cycles pays out of every account exactly as often as into it; an open
  // chain would leave its two ends unbalanced.
  std::map<std::string, int> balance;
  for (const Row& r : RowsOf(Typology::kCycle)) {
    ++balance[AccountKey(r, kFromBank)];
    --balance[AccountKey(r, kToBank)];
  }
  ASSERT_FALSE(balance.empty());
  for (const auto& [account, b] : balance) EXPECT_EQ(b, 0) << account;
}

TEST_F(GeneratedStream, CrossCurrencyRowsConvertAtTheTableRates) {
  int cross = 0;
  for (const Row& r : rows()) {
    if (r[kReceivingCurrency] == r[kPaymentCurrency]) {
      ASSERT_EQ(r[kAmountReceived], r[kAmountPaid]);
      continue;
    }
    ++cross;
    const int64_t paid = UsdMicros(r[kAmountPaid], r[kPaymentCurrency]);
    const int64_t received = UsdMicros(r[kAmountReceived], r[kReceivingCurrency]);
    // Received is rounded to its minor unit: at most half of one, in USD, apart.
    const int64_t half_unit =
        UsdMicros(r[kReceivingCurrency] == "Bitcoin" ? "0.000001" : "0.01", r[kReceivingCurrency]) /
        2;
    ASSERT_LE(std::abs(paid - received), half_unit + 2 + paid / 1'000'000'000)
        << absl::StrJoin(r, ",");
  }
  EXPECT_GT(cross, static_cast<int>(rows().size() / 50));
}

TEST_F(GeneratedStream, ReinvestmentIsASelfTransfer) {
  for (const Row& r : rows()) {
    if (r[kPaymentFormat] != "Reinvestment") continue;
    ASSERT_EQ(AccountKey(r, kFromBank), AccountKey(r, kToBank));
  }
}

TEST_F(GeneratedStream, LaunderersAlsoDoNormalBusiness) {
  std::set<std::string> normal;
  std::set<std::string> laundering;
  for (const Row& r : rows()) {
    (r[kIsLaundering] == "1" ? laundering : normal).insert(AccountKey(r, kFromBank));
  }
  int camouflaged = 0;
  for (const std::string& a : laundering) camouflaged += normal.count(a);
  EXPECT_GT(camouflaged, static_cast<int>(0.8 * laundering.size()));
}

TEST(GenerateTransactions, SameSeedGivesTheSameBytes) {
  GeneratorOptions o;
  o.accounts = 2000;
  o.days = 10;
  o.seed = 5;
  o.laundering_rate = 0.01;
  absl::StatusOr<std::string> a = Generate(o);
  absl::StatusOr<std::string> b = Generate(o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  o.seed = 6;
  absl::StatusOr<std::string> c = Generate(o);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(*a, *c);
}

TEST(GenerateTransactions, NormalTrafficDoesNotDependOnTheLaunderingRate) {
  // Population, normal traffic and laundering draw from separate random streams, so a stream
  // with laundering is the same stream without it plus the labelled rows.
  GeneratorOptions o;
  o.accounts = 2000;
  o.days = 10;
  o.laundering_rate = 0;
  absl::StatusOr<std::string> clean = Generate(o);
  o.laundering_rate = 0.05;
  absl::StatusOr<std::string> dirty = Generate(o);
  ASSERT_TRUE(clean.ok() && dirty.ok());
  std::string normal_rows;
  for (absl::string_view line : absl::StrSplit(*dirty, '\n', absl::SkipEmpty())) {
    if (line.find(",1,") == absl::string_view::npos) {  // amounts always have a decimal point
      absl::StrAppend(&normal_rows, line, "\n");
    }
  }
  EXPECT_LT(normal_rows.size(), dirty->size());
  EXPECT_EQ(normal_rows, *clean);
}

TEST(GenerateTransactions, OutputIsPinned) {
  // Guards determinism across builds and platforms: the bytes for these options must not change
  // unless the model is changed on purpose (then update the digest and say so in the commit).
  // The FX table is inlined (a copy of data/fx_rates.csv) so that editing that file does not
  // move the digest.
  absl::StatusOr<FxRates> rates = FxRates::Parse(
      "reporting_currency,USD\ncurrency,per_reporting_unit\n"
      "AUD,1.412800\nBRL,5.640000\nCAD,1.311800\nCHF,0.915000\nCNY,6.697600\nEUR,0.8533727\n"
      "GBP,0.7740176\nILS,3.360000\nINR,73.46649\nJPY,105.4000\nMXN,21.12348\nRUB,77.80400\n"
      "SAR,3.750000\nXBT,0.0000848\n",
      "pinned");
  ASSERT_TRUE(rates.ok()) << rates.status();
  GeneratorOptions o;
  o.accounts = 1000;
  o.days = 7;
  o.seed = 1;
  o.laundering_rate = 0.01;
  std::ostringstream out;
  ASSERT_TRUE(GenerateTransactions(o, *rates, out).ok());
  const std::string text = out.str();
  uint64_t fnv = 0xCBF29CE484222325ULL;  // FNV-1a, 64 bit
  for (unsigned char c : text) fnv = (fnv ^ c) * 0x100000001B3ULL;
  EXPECT_EQ(fnv, 0xBDDAD7879EF07DFEULL)
      << std::hex << fnv << " over " << std::dec << text.size() << " bytes";
}

TEST(GenerateTransactions, LaunderingShareAtTheDefaultRate) {
  GeneratorOptions o;
  o.accounts = 20000;
  o.days = 30;
  GeneratorStats stats;
  ASSERT_TRUE(Generate(o, &stats).ok());
  const double share = static_cast<double>(stats.laundering_rows) / stats.rows;
  EXPECT_NEAR(share, 0.001, 0.0002) << stats.laundering_rows << " of " << stats.rows;
}

TEST(GenerateTransactions, ZeroRateWritesNoLaundering) {
  GeneratorOptions o;
  o.accounts = 1000;
  o.days = 3;
  o.laundering_rate = 0;
  GeneratorStats stats;
  absl::StatusOr<std::string> text = Generate(o, &stats);
  ASSERT_TRUE(text.ok());
  EXPECT_GT(stats.rows, 0);
  EXPECT_EQ(stats.laundering_rows, 0);
  EXPECT_EQ(text->find(",1,"), std::string::npos);
}

TEST(GenerateTransactions, StartMovesTheWindow) {
  GeneratorOptions o;
  o.accounts = 1000;
  o.days = 2;
  o.start = std::chrono::sys_days(std::chrono::year(2023) / 12 / 31);
  absl::StatusOr<std::string> text = Generate(o);
  ASSERT_TRUE(text.ok());
  absl::string_view header;
  const std::vector<Row> rows = SplitRows(*text, &header);
  ASSERT_FALSE(rows.empty());
  for (const Row& r : rows) {
    ASSERT_TRUE(absl::StartsWith(r[kTimestamp], "2023/12/31") ||
                absl::StartsWith(r[kTimestamp], "2024/01/01"))
        << r[kTimestamp];
  }
}

TEST(GenerateTransactions, RejectsBadOptions) {
  const auto invalid = [](auto mutate) {
    GeneratorOptions o;
    o.accounts = 1000;
    o.days = 2;
    mutate(o);
    return Generate(o).status();
  };
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_THAT(invalid([](GeneratorOptions& o) { o.accounts = 99; }), StatusIs(kInvalid));
  EXPECT_THAT(invalid([](GeneratorOptions& o) { o.days = 0; }), StatusIs(kInvalid));
  EXPECT_THAT(invalid([](GeneratorOptions& o) { o.days = 3651; }), StatusIs(kInvalid));
  EXPECT_THAT(invalid([](GeneratorOptions& o) { o.laundering_rate = 0.6; }), StatusIs(kInvalid));
  EXPECT_THAT(invalid([](GeneratorOptions& o) { o.laundering_rate = -0.1; }), StatusIs(kInvalid));
  EXPECT_THAT(invalid([](GeneratorOptions& o) { o.start += std::chrono::hours(1); }),
              StatusIs(kInvalid));
  EXPECT_THAT(invalid([](GeneratorOptions& o) { o.structuring_threshold = 0; }),
              StatusIs(kInvalid));
  EXPECT_THAT(invalid([](GeneratorOptions& o) { o.structuring_threshold_currency = "KWD"; }),
              StatusIs(kInvalid));
}

TEST(GenerateTransactions, StructuringThresholdInAnotherCurrency) {
  // China's large-value cash report: 50,000 CNY.
  GeneratorOptions o;
  o.accounts = 2000;
  o.days = 14;
  o.laundering_rate = 0.05;
  o.structuring_threshold = 50000;
  o.structuring_threshold_currency = "CNY";
  absl::StatusOr<std::string> text = Generate(o);
  ASSERT_TRUE(text.ok()) << text.status();
  absl::string_view header;
  const int64_t threshold = UsdMicros("50000.00", "Yuan");
  int seen = 0;
  for (const Row& r : SplitRows(*text, &header)) {
    if (r[kTypology] != "STRUCTURING") continue;
    ++seen;
    const int64_t usd = UsdMicros(r[kAmountPaid], r[kPaymentCurrency]);
    EXPECT_GE(usd, threshold * 8 / 10);
    EXPECT_LT(usd, threshold * 999 / 1000);
  }
  EXPECT_GT(seen, 0);
}

TEST(GenerateTransactions, NeedsAUsDollarRate) {
  absl::StatusOr<FxRates> no_usd =
      FxRates::Parse("reporting_currency,EUR\ncurrency,per_reporting_unit\nGBP,0.9\n", "t.csv");
  ASSERT_TRUE(no_usd.ok());
  std::ostringstream out;
  GeneratorOptions o;
  o.accounts = 1000;
  EXPECT_THAT(GenerateTransactions(o, *no_usd, out), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(GenerateTransactions, ReportsAFailedWrite) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  GeneratorOptions o;
  o.accounts = 1000;
  o.days = 2;
  EXPECT_THAT(GenerateTransactions(o, RepositoryFxRates(), out),
              StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace vigil::synth
