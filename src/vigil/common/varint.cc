#include "vigil/common/varint.h"

namespace vigil {

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint(std::string_view in, size_t* offset, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && *offset < in.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in[(*offset)++]);
    if (shift == 63 && byte > 1) return false;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      if (byte == 0 && shift > 0) return false;  // a padded encoding is not canonical
      *v = result;
      return true;
    }
  }
  return false;
}

}  // namespace vigil
