// CsvRowWriter: formats SynthRows as AMLworld CSV lines plus the Typology column, into a large
// buffer that goes to the output stream in 1 MiB writes (numbers by std::to_chars, no iostream
// formatting per field: this is most of the generator's time).
//
//   CsvRowWriter writer(&out, &population, start_epoch_day);
//   writer.WriteHeader();
//   for (const SynthRow& r : rows) writer.Append(r);
//   VIGIL_RETURN_IF_ERROR(writer.Finish());
//
// Line format (no quoting is ever needed: no field contains a comma or a quote):
//   2022/09/01 00:09,014433,801CA7940,004523,8119D8750,51.43,US Dollar,51.43,US Dollar,Credit
//   Card,0,
// Amounts have 2 decimals (Bitcoin 6); Is Laundering is 1 exactly when Typology is non-empty.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_SYNTH_INTERNAL_CSV_ROW_WRITER_H_
#define VIGIL_SYNTH_INTERNAL_CSV_ROW_WRITER_H_

#include <cstdint>
#include <ostream>
#include <vector>

#include "absl/status/status.h"
#include "vigil/synth/internal/population.h"
#include "vigil/synth/internal/synth_row.h"

namespace vigil::synth::internal {

class CsvRowWriter {
 public:
  // "*out" and "*population" must outlive the writer. Minute 0 of the rows is 00:00 UTC of
  // `start_epoch_day` (days since 1970-01-01).
  CsvRowWriter(std::ostream* out, const Population* population, int64_t start_epoch_day);
  CsvRowWriter(const CsvRowWriter&) = delete;
  CsvRowWriter& operator=(const CsvRowWriter&) = delete;

  void WriteHeader();
  // REQUIRES: the row's accounts and currencies are valid for the population; minute >= 0.
  void Append(const SynthRow& row);

  // False once a write to the stream has failed; later rows are dropped.
  bool ok() const { return ok_; }
  // Flushes the buffer and the stream. kUnavailable if any write failed (disk full, closed pipe).
  absl::Status Finish();
  int64_t bytes_written() const { return bytes_written_; }

 private:
  void Drain();
  char* AppendAccount(char* p, int32_t account) const;

  std::ostream& out_;
  const Population& population_;
  const int64_t start_epoch_day_;
  std::vector<char> buffer_;
  size_t used_ = 0;
  int32_t cached_day_ = -1;
  char date_[10] = {};
  bool ok_ = true;
  int64_t bytes_written_ = 0;
};

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_CSV_ROW_WRITER_H_
