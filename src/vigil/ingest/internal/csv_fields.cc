#include "vigil/ingest/internal/csv_fields.h"

#include <bit>
#include <cstdint>
#include <cstring>

namespace vigil::ingest_internal {
namespace {

// SplitUnquoted reads 8 bytes as one integer and maps bit positions back to byte offsets.
static_assert(std::endian::native == std::endian::little, "SplitUnquoted assumes little-endian");

// Bit 7 of byte k of the result is set exactly where byte k of "word" equals "value". (The
// shorter (x - 0x01..) & ~x form also flags a 0x01 byte right above a match, e.g. the '-' of
// ",-5"; here no carry crosses a byte: (x & 0x7f) + 0x7f <= 0xfe.)
inline uint64_t BytesEqual(uint64_t word, unsigned char value) {
  constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7FULL;
  const uint64_t x = word ^ (0x0101010101010101ULL * value);
  return ~(((x & kLow7) + kLow7) | x | kLow7);
}

// The common case: no quote in the record. Scans 8 bytes at a time for ',' and '"' (fields are
// short, ~8 bytes in AMLworld: a memchr call per field costs more than the search; a plain
// byte loop is slower still). Returns -1 at the first quote so the caller takes the RFC 4180
// path.
int SplitUnquoted(std::string_view record, std::string_view* fields, int capacity) {
  const char* const begin = record.data();
  const size_t n = record.size();
  int count = 0;
  size_t start = 0;
  const auto emit = [&](size_t comma) {
    if (count < capacity) fields[count] = std::string_view(begin + start, comma - start);
    ++count;
    start = comma + 1;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, begin + i, 8);  // byte k is bits 8k..8k+7
    if (BytesEqual(word, '"') != 0) return -1;
    for (uint64_t commas = BytesEqual(word, ','); commas != 0; commas &= commas - 1) {
      emit(i + static_cast<size_t>(std::countr_zero(commas) >> 3));
    }
  }
  for (; i < n; ++i) {
    if (begin[i] == ',') {
      emit(i);
    } else if (begin[i] == '"') {
      return -1;
    }
  }
  if (count < capacity) fields[count] = std::string_view(begin + start, n - start);
  return count + 1;
}

}  // namespace

int SplitCsvRecord(std::string_view record, std::string_view* fields, int capacity,
                   std::string* scratch, CsvSplitError* error) {
  if (const int count = SplitUnquoted(record, fields, capacity); count >= 0) return count;
  // Unescaped text is never longer than the record, so reserving once keeps the views stable.
  scratch->clear();
  scratch->reserve(record.size());
  const size_t n = record.size();
  size_t i = 0;
  int count = 0;
  for (;;) {
    std::string_view field;
    if (i < n && record[i] == '"') {
      // Quoted field: find the closing quote; "" is an escaped quote.
      const size_t start = i + 1;
      size_t j = start;
      bool escaped = false;
      for (;;) {
        if (j >= n) {
          *error = {count, "unterminated quoted field"};
          return -1;
        }
        if (record[j] == '"') {
          if (j + 1 < n && record[j + 1] == '"') {
            escaped = true;
            j += 2;
            continue;
          }
          break;
        }
        ++j;
      }
      if (!escaped) {
        field = record.substr(start, j - start);
      } else {
        const size_t begin = scratch->size();
        for (size_t k = start; k < j; ++k) {
          scratch->push_back(record[k]);
          if (record[k] == '"') ++k;  // skip the second quote of ""
        }
        field = std::string_view(scratch->data() + begin, scratch->size() - begin);
      }
      i = j + 1;
      if (i < n && record[i] != ',') {
        *error = {count, "unexpected character after closing quote"};
        return -1;
      }
    } else {
      size_t j = i;
      while (j < n && record[j] != ',') {
        if (record[j] == '"') {
          *error = {count, "quote inside an unquoted field"};
          return -1;
        }
        ++j;
      }
      field = record.substr(i, j - i);
      i = j;
    }
    if (count < capacity) fields[count] = field;
    ++count;
    if (i >= n) return count;
    ++i;  // the comma
  }
}

bool CsvQuoteState::ScanLine(std::string_view line) {
  if (!in_quotes_ && std::memchr(line.data(), '"', line.size()) == nullptr) return true;
  // A quote opens a quoted field only at the start of a field; inside one, "" is an escaped
  // quote and a lone " closes it. Stray quotes elsewhere are left for SplitCsvRecord to reject,
  // so they cannot swallow the following lines.
  // A continuation line starts inside a quoted field (the line break belongs to the field).
  bool at_field_start = !in_quotes_;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes_) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          ++i;
        } else {
          in_quotes_ = false;
        }
      }
      continue;
    }
    if (c == '"' && at_field_start) {
      in_quotes_ = true;
      at_field_start = false;
      continue;
    }
    at_field_start = c == ',';
  }
  return !in_quotes_;
}

}  // namespace vigil::ingest_internal
