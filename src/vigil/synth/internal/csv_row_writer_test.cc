#include "vigil/synth/internal/csv_row_writer.h"

#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "vigil/synth/generator.h"
#include "vigil/synth/internal/calendar.h"
#include "vigil/synth/internal/test_util.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::synth::internal {
namespace {

using ::vigil::testing::StatusIs;

std::string Account(const Population& p, int32_t a) {
  return absl::StrCat(absl::string_view(p.bank_of(a).id, p.bank_of(a).id_len), ",",
                      absl::string_view(p.hex_id(a), 9));
}

TEST(CsvRowWriter, WritesAmlworldLinesWithTypology) {
  const Population population = PopulationForTest(200, 1);
  std::ostringstream out;
  CsvRowWriter writer(&out, &population, DaysFromCivil(2022, 9, 1));
  writer.WriteHeader();

  SynthRow normal;
  normal.minute = 9;
  normal.from = 3;
  normal.to = 7;
  normal.paid_minor = normal.received_minor = 5143;
  normal.paid_ccy = normal.received_ccy = kUsd;
  normal.format = PaymentFormat::kCreditCard;
  writer.Append(normal);

  SynthRow laundering;
  laundering.minute = 2 * 1440 + 23 * 60 + 59;  // 2022/09/03 23:59
  laundering.from = 7;
  laundering.to = 3;
  laundering.paid_minor = 1050;        // 10.50 US Dollar
  laundering.received_minor = 123400;  // 1234.00 Yen
  laundering.paid_ccy = kUsd;
  laundering.received_ccy = 3;
  laundering.format = PaymentFormat::kAch;
  laundering.typology = Typology::kScatterGather;
  writer.Append(laundering);

  SynthRow bitcoin = normal;
  bitcoin.paid_minor = bitcoin.received_minor = 12345;  // 0.012345 BTC
  bitcoin.paid_ccy = bitcoin.received_ccy = kXbt;
  bitcoin.format = PaymentFormat::kBitcoin;
  writer.Append(bitcoin);
  ASSERT_OK(writer.Finish());

  const std::string expected =
      absl::StrCat(kGeneratorCsvHeader, "\n",  //
                   "2022/09/01 00:09,", Account(population, 3), ",", Account(population, 7),
                   ",51.43,US Dollar,51.43,US Dollar,Credit Card,0,\n",  //
                   "2022/09/03 23:59,", Account(population, 7), ",", Account(population, 3),
                   ",1234.00,Yen,10.50,US Dollar,ACH,1,SCATTER-GATHER\n",  //
                   "2022/09/01 00:09,", Account(population, 3), ",", Account(population, 7),
                   ",0.012345,Bitcoin,0.012345,Bitcoin,Bitcoin,0,\n");
  EXPECT_EQ(out.str(), expected);
  EXPECT_EQ(writer.bytes_written(), static_cast<int64_t>(expected.size()));
}

TEST(CsvRowWriter, WritesAmountsWithLeadingZeroAndPaddedFraction) {
  const Population population = PopulationForTest(200, 1);
  std::ostringstream out;
  CsvRowWriter writer(&out, &population, DaysFromCivil(2022, 9, 1));
  SynthRow r;
  r.paid_minor = r.received_minor = 2;  // 0.02
  r.format = PaymentFormat::kCheque;
  writer.Append(r);
  ASSERT_OK(writer.Finish());
  EXPECT_NE(out.str().find(",0.02,US Dollar,0.02,US Dollar,Cheque,0,\n"), std::string::npos)
      << out.str();
}

TEST(CsvRowWriter, ReportsAFailedStream) {
  const Population population = PopulationForTest(200, 1);
  std::ostringstream out;
  out.setstate(std::ios::badbit);  // as after a failed write (disk full)
  CsvRowWriter writer(&out, &population, DaysFromCivil(2022, 9, 1));
  writer.WriteHeader();
  EXPECT_THAT(writer.Finish(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_FALSE(writer.ok());
}

}  // namespace
}  // namespace vigil::synth::internal
