#include "vigil/synth/internal/csv_row_writer.h"

#include <charconv>
#include <cstring>

#include "vigil/synth/generator.h"
#include "vigil/synth/internal/calendar.h"
#include "vigil/synth/internal/currency_table.h"

namespace vigil::synth::internal {
namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;
// No line comes near this: 16 + 2 x (6 + 9) + 2 x (20 + 17) + 12 + 14 + 12 separators.
constexpr size_t kMaxLineBytes = 512;

char* Put(char* p, absl::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// Writes minor units as a decimal with exactly `decimals` digits after the point.
char* PutAmount(char* p, int64_t minor, int decimals) {
  const int64_t scale = decimals == 6 ? 1000000 : 100;
  int64_t fraction = minor % scale;
  p = std::to_chars(p, p + 20, minor / scale).ptr;
  *p++ = '.';
  for (int i = decimals - 1; i >= 0; --i) {
    p[i] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  return p + decimals;
}

}  // namespace

CsvRowWriter::CsvRowWriter(std::ostream* out, const Population* population, int64_t start_epoch_day)
    : out_(*out),
      population_(*population),
      start_epoch_day_(start_epoch_day),
      buffer_(kBufferBytes + kMaxLineBytes) {}

void CsvRowWriter::WriteHeader() {
  char* p = Put(buffer_.data() + used_, kGeneratorCsvHeader);
  *p++ = '\n';
  used_ = static_cast<size_t>(p - buffer_.data());
}

char* CsvRowWriter::AppendAccount(char* p, int32_t account) const {
  const Bank& bank = population_.bank_of(account);
  p = Put(p, absl::string_view(bank.id, bank.id_len));
  *p++ = ',';
  p = Put(p, absl::string_view(population_.hex_id(account), 9));
  *p++ = ',';
  return p;
}

void CsvRowWriter::Append(const SynthRow& row) {
  const int32_t day = row.minute / 1440;
  if (day != cached_day_) {
    FormatDate(CivilFromDays(start_epoch_day_ + day), date_);
    cached_day_ = day;
  }
  char* p = buffer_.data() + used_;
  p = Put(p, absl::string_view(date_, sizeof(date_)));
  *p++ = ' ';
  FormatTimeOfDay(row.minute % 1440, p);
  p += 5;
  *p++ = ',';
  p = AppendAccount(p, row.from);
  p = AppendAccount(p, row.to);
  const SynthCurrency& received = kSynthCurrencies[row.received_ccy];
  const SynthCurrency& paid = kSynthCurrencies[row.paid_ccy];
  p = PutAmount(p, row.received_minor, received.decimals);
  *p++ = ',';
  p = Put(p, received.aml_name);
  *p++ = ',';
  p = PutAmount(p, row.paid_minor, paid.decimals);
  *p++ = ',';
  p = Put(p, paid.aml_name);
  *p++ = ',';
  p = Put(p, PaymentFormatName(row.format));
  *p++ = ',';
  *p++ = row.typology == Typology::kNone ? '0' : '1';
  *p++ = ',';
  p = Put(p, TypologyName(row.typology));
  *p++ = '\n';
  used_ = static_cast<size_t>(p - buffer_.data());
  if (used_ >= kBufferBytes) Drain();
}

void CsvRowWriter::Drain() {
  if (ok_ && used_ > 0) {
    out_.write(buffer_.data(), static_cast<std::streamsize>(used_));
    if (out_) {
      bytes_written_ += static_cast<int64_t>(used_);
    } else {
      ok_ = false;
    }
  }
  used_ = 0;
}

absl::Status CsvRowWriter::Finish() {
  Drain();
  if (ok_) {
    out_.flush();
    ok_ = static_cast<bool>(out_);
  }
  if (!ok_) return absl::UnavailableError("writing the generated CSV failed (disk full?)");
  return absl::OkStatus();
}

}  // namespace vigil::synth::internal
