#include "vigil/ingest/csv_parser.h"

#include <charconv>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/ingest/internal/csv_fields.h"
#include "vigil/ingest/internal/string_view.h"

namespace vigil {
namespace {

using ingest_internal::ToAbsl;

enum Column : int {
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
  kMaxColumns,
};

// Names used in errors (unique) and in the header (as the IBM files write them).
constexpr std::string_view kColumnNames[kMaxColumns] = {"Timestamp",
                                                        "From Bank",
                                                        "Account",
                                                        "To Bank",
                                                        "Account.1",
                                                        "Amount Received",
                                                        "Receiving Currency",
                                                        "Amount Paid",
                                                        "Payment Currency",
                                                        "Payment Format",
                                                        "Is Laundering",
                                                        "Typology"};
constexpr std::string_view kHeaderNames[kMaxColumns] = {"Timestamp",
                                                        "From Bank",
                                                        "Account",
                                                        "To Bank",
                                                        "Account",
                                                        "Amount Received",
                                                        "Receiving Currency",
                                                        "Amount Paid",
                                                        "Payment Currency",
                                                        "Payment Format",
                                                        "Is Laundering",
                                                        "Typology"};

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    const char c = s[i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// "YYYY/MM/DD HH:MM" (AMLworld) or "YYYY/MM/DD HH:MM:SS", as UTC. Returns the reason on error.
const char* ParseAmlworldTime(std::string_view s, UtcTime* out) {
  using namespace std::chrono;
  int y, mo, d, h, mi, sec = 0;
  if ((s.size() != 16 && s.size() != 19) || s[4] != '/' || s[7] != '/' || s[10] != ' ' ||
      s[13] != ':' || !Digits(s, 0, 4, &y) || !Digits(s, 5, 2, &mo) || !Digits(s, 8, 2, &d) ||
      !Digits(s, 11, 2, &h) || !Digits(s, 14, 2, &mi) ||
      (s.size() == 19 && (s[16] != ':' || !Digits(s, 17, 2, &sec)))) {
    return "expected YYYY/MM/DD HH:MM";
  }
  const year_month_day ymd{year(y), month(static_cast<unsigned>(mo)),
                           day(static_cast<unsigned>(d))};
  if (!ymd.ok()) return "no such date";
  if (h > 23 || mi > 59 || sec > 59) return "time of day out of range";
  *out = UtcTime(sys_days(ymd)) + hours(h) + minutes(mi) + seconds(sec);
  return nullptr;
}

class Failer {
 public:
  Failer(const AmlworldCsvOptions& options, int64_t line, RecordError* error)
      : options_(options), line_(line), error_(error) {}

  // Always returns false, so callers can write `return fail(...)`.
  bool operator()(int column, std::string_view reason, std::string message) const {
    error_->source = options_.source_name;
    error_->line = line_;
    error_->field = column < 0 ? std::string_view() : kColumnNames[column];
    error_->reason.assign(reason);
    error_->message = std::move(message);
    error_->byte_offset = -1;
    return false;
  }

 private:
  const AmlworldCsvOptions& options_;
  const int64_t line_;
  RecordError* const error_;
};

// Parses an amount column without its currency (the currency column comes after it; columns are
// checked left to right so the first error reported is the leftmost).
bool ParseAmount(std::string_view text, int column, const Failer& fail, Money* out) {
  if (text.empty()) return fail(column, "missing_field", "empty amount");
  absl::StatusOr<Money> m = Money::Parse(ToAbsl(text), Currency());
  if (!m.ok()) return fail(column, "invalid_amount", std::string(m.status().message()));
  if (m->is_negative()) {
    return fail(column, "negative_amount", absl::StrCat("amount '", ToAbsl(text), "' is negative"));
  }
  *out = *m;
  return true;
}

bool ParseCurrency(std::string_view text, int column, const Failer& fail, Currency* out) {
  if (text.empty()) return fail(column, "missing_field", "empty currency");
  absl::StatusOr<Currency> c = Currency::FromAmlworldName(ToAbsl(text));
  if (!c.ok()) return fail(column, "unknown_currency", std::string(c.status().message()));
  *out = *c;
  return true;
}

bool Required(std::string_view text, int column, const Failer& fail) {
  if (!text.empty()) return true;
  return fail(column, "missing_field", absl::StrCat("empty ", ToAbsl(kColumnNames[column])));
}

}  // namespace

AmlworldCsvParser::AmlworldCsvParser(AmlworldCsvOptions options) : options_(std::move(options)) {}

std::string_view AmlworldCsvParser::ColumnName(int index) {
  if (index < 0 || index >= kMaxColumns) return {};
  return kColumnNames[index];
}

absl::StatusOr<AmlworldCsvParser> AmlworldCsvParser::ForHeader(std::string_view header,
                                                               AmlworldCsvOptions options) {
  if (!header.empty() && header.back() == '\r') header.remove_suffix(1);
  std::string_view names[kMaxColumns];
  std::string scratch;
  ingest_internal::CsvSplitError split_error;
  const int n = ingest_internal::SplitCsvRecord(header, names, kMaxColumns, &scratch, &split_error);
  if (n < 0) {
    return absl::InvalidArgumentError(absl::StrCat("malformed CSV header: ", split_error.what));
  }
  if (n != 11 && n != 12) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not an AMLworld CSV header: ", n, " columns, expected 11 (", ToAbsl(kAmlworldCsvHeader),
        ") or 12 (with ", ToAbsl(kAmlworldTypologyColumn), ")"));
  }
  for (int i = 0; i < n; ++i) {
    if (names[i] != kHeaderNames[i]) {
      return absl::InvalidArgumentError(absl::StrCat("not an AMLworld CSV header: column ", i + 1,
                                                     " is '", ToAbsl(names[i]), "', expected '",
                                                     ToAbsl(kHeaderNames[i]), "'"));
    }
  }
  options.typology_column = n == 12;
  return AmlworldCsvParser(std::move(options));
}

bool AmlworldCsvParser::Parse(std::string_view record, int64_t line, Transaction* tx,
                              RecordError* error) {
  const Failer fail(options_, line, error);
  if (!record.empty() && record.back() == '\r') record.remove_suffix(1);

  std::string_view f[kMaxColumns];
  ingest_internal::CsvSplitError split_error;
  const int n = ingest_internal::SplitCsvRecord(record, f, kMaxColumns, &scratch_, &split_error);
  if (n < 0) {
    return fail(split_error.column < kMaxColumns ? split_error.column : -1, "malformed_record",
                absl::StrCat(split_error.what, " (RFC 4180 quoting)"));
  }
  if (n != column_count()) {
    return fail(-1, "wrong_column_count",
                absl::StrCat("record has ", n, " columns, expected ", column_count()));
  }

  // Columns left to right.
  if (!Required(f[kTimestamp], kTimestamp, fail)) return false;
  if (const char* why = ParseAmlworldTime(f[kTimestamp], &tx->event_time); why != nullptr) {
    return fail(kTimestamp, "invalid_timestamp",
                absl::StrCat("timestamp '", ToAbsl(f[kTimestamp]), "' is invalid (", why, ")"));
  }
  if (!Required(f[kFromBank], kFromBank, fail)) return false;
  if (f[kFromAccount].empty()) return fail(kFromAccount, "empty_account", "empty account id");
  if (!Required(f[kToBank], kToBank, fail)) return false;
  if (f[kToAccount].empty()) return fail(kToAccount, "empty_account", "empty account id");

  Money received, paid;
  Currency received_currency, paid_currency;
  if (!ParseAmount(f[kAmountReceived], kAmountReceived, fail, &received) ||
      !ParseCurrency(f[kReceivingCurrency], kReceivingCurrency, fail, &received_currency) ||
      !ParseAmount(f[kAmountPaid], kAmountPaid, fail, &paid) ||
      !ParseCurrency(f[kPaymentCurrency], kPaymentCurrency, fail, &paid_currency)) {
    return false;
  }
  if (!Required(f[kPaymentFormat], kPaymentFormat, fail)) return false;
  absl::StatusOr<PaymentFormat> format = ParsePaymentFormat(ToAbsl(f[kPaymentFormat]));
  if (!format.ok()) {
    return fail(kPaymentFormat, "unknown_payment_format", std::string(format.status().message()));
  }
  if (!Required(f[kIsLaundering], kIsLaundering, fail)) return false;
  const std::string_view laundering = f[kIsLaundering];
  if (laundering != "0" && laundering != "1") {
    return fail(kIsLaundering, "invalid_label",
                absl::StrCat("Is Laundering is '", ToAbsl(laundering), "', expected 0 or 1"));
  }

  // All columns are valid: fill the transaction, reusing its strings.
  tx->id.assign(options_.source_name);
  tx->id.push_back(':');
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), line);
  tx->id.append(digits, static_cast<size_t>(end - digits));

  tx->originator.account_id.assign(f[kFromAccount]);
  tx->originator.bank_id.assign(f[kFromBank]);
  tx->originator.name.clear();
  tx->originator.country.clear();
  tx->beneficiary.account_id.assign(f[kToAccount]);
  tx->beneficiary.bank_id.assign(f[kToBank]);
  tx->beneficiary.name.clear();
  tx->beneficiary.country.clear();

  tx->amount = Money(paid.units(), paid.scale(), paid_currency);
  const Money settled(received.units(), received.scale(), received_currency);
  if (settled == tx->amount) {
    tx->settled_amount.reset();
  } else {
    tx->settled_amount = settled;
  }
  tx->payment_format = *format;
  tx->channel.clear();
  tx->remittance.clear();
  tx->priority = options_.default_priority;
  Label& label = tx->label ? *tx->label : tx->label.emplace();
  label.is_laundering = laundering == "1";
  if (options_.typology_column) {
    label.typology.assign(f[kTypology]);
  } else {
    label.typology.clear();
  }
  return true;
}

}  // namespace vigil
