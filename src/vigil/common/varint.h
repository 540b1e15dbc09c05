// Unsigned LEB128 varints, canonical: the minimal encoding only, so that one value has one
// encoding (the audit log's record chunks, the cluster log's messages).
//
// Thread safety: pure functions.
#ifndef VIGIL_COMMON_VARINT_H_
#define VIGIL_COMMON_VARINT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vigil {

// Appends v's minimal encoding (1 to 10 bytes).
void PutVarint(uint64_t v, std::string* out);

// Reads the varint at in[*offset] into *v and moves *offset past it; false (offset undefined)
// when it is truncated, longer than 64 bits, or padded (not minimal).
bool GetVarint(std::string_view in, size_t* offset, uint64_t* v);

}  // namespace vigil

#endif  // VIGIL_COMMON_VARINT_H_
