#include "vigil/common/file_contents.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil {

absl::StatusOr<std::string> ReadFileContents(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open ", ToAbsl(what), " '", path, "'"));
  }
  // The size is only a hint (the file may change, or be a pipe): reading goes on to the end.
  // One byte more than the size lets the first read meet the end of the file.
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  std::string out(ec ? size_t{64 << 10} : static_cast<size_t>(size) + 1, '\0');
  size_t used = 0;
  while (true) {
    in.read(out.data() + used, static_cast<std::streamsize>(out.size() - used));
    used += static_cast<size_t>(in.gcount());
    if (!in) break;
    out.resize(out.size() * 2);
  }
  out.resize(used);
  if (in.bad()) {
    return absl::DataLossError(absl::StrCat("cannot read ", ToAbsl(what), " '", path, "'"));
  }
  return out;
}

}  // namespace vigil
