// The SWIFT MT message types vigil reads (MT103, MT103 STP, MT202, MT202COV), and the rules
// of their fields that do not depend on a field's content: which fields are mandatory and
// which option letters each field allows.
//
// An MT203, MT205 or any other type is refused as kUnimplemented ("unsupported message type"):
// a well-formed message vigil does not screen, which callers report differently from a broken
// one (kInvalidArgument).
#ifndef VIGIL_INGEST_SWIFT_MT_TYPES_H_
#define VIGIL_INGEST_SWIFT_MT_TYPES_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/ingest/swift_mt.h"

namespace vigil {

enum class MtType {
  kMt103,     // single customer credit transfer
  kMt103Stp,  // the same under the STP rules (block 3 field 119 "STP")
  kMt202,     // general financial institution transfer
  kMt202Cov,  // the cover of a customer transfer (block 3 field 119 "COV"), with sequence B
};

// "MT103", "MT103STP", "MT202", "MT202COV".
std::string_view MtTypeName(MtType type);

// The message's type, from block 2 and block 3 field 119. kUnimplemented for other types.
absl::StatusOr<MtType> SupportedMtType(const SwiftMtMessage& message);

// Every mandatory field present (for MT202COV in both sequences: A up to 58a and 72, B from the
// underlying customer's 50a), and every field's option letter one its tag allows. Errors name
// the type, the tag and its line.
absl::Status CheckMtFields(const SwiftMtMessage& message, MtType type);

}  // namespace vigil

#endif  // VIGIL_INGEST_SWIFT_MT_TYPES_H_
