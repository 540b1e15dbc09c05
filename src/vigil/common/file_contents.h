// Reading a whole file into memory, for inputs whose every byte matters at once: a list file is
// hashed for its version and parsed from the same bytes.
//
// Thread safety: pure function.
#ifndef VIGIL_COMMON_FILE_CONTENTS_H_
#define VIGIL_COMMON_FILE_CONTENTS_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil {

// The bytes of the file at "path", unchanged. Errors name "what" ("list file") and the path:
// kNotFound "cannot open <what> '<path>'" when it cannot be opened (absent or not readable),
// kDataLoss "cannot read <what> '<path>'" when reading it fails.
absl::StatusOr<std::string> ReadFileContents(const std::string& path, std::string_view what);

}  // namespace vigil

#endif  // VIGIL_COMMON_FILE_CONTENTS_H_
