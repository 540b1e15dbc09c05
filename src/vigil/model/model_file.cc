#include "vigil/model/model_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/model/lightgbm_text.h"
#include "vigil/model/xgboost_json.h"

namespace vigil {

absl::StatusOr<std::shared_ptr<const TreeEnsemble>> ParseModel(std::string_view content_in,
                                                               std::string_view source_in) {
  const absl::string_view content(content_in.data(), content_in.size());
  const absl::string_view source(source_in.data(), source_in.size());
  const absl::string_view head = absl::StripLeadingAsciiWhitespace(content);
  absl::StatusOr<TreeEnsemble> m;
  if (absl::StartsWith(head, "{")) {
    m = LoadXgboostJson(content_in, source_in);
  } else if (absl::StartsWith(head, "tree\n") || absl::StartsWith(head, "tree\r\n")) {
    m = LoadLightGbmText(content_in, source_in);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        source,
        ": not a model file: expected XGBoost JSON (save_model(\"m.json\")) or a LightGBM "
        "text model (save_model(\"model.txt\"))"));
  }
  if (!m.ok()) return m.status();
  return std::make_shared<const TreeEnsemble>(*std::move(m));
}

absl::StatusOr<std::shared_ptr<const TreeEnsemble>> LoadModelFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open model file '", path, "'"));
  const std::streamoff size = in.tellg();
  if (size < 0 || static_cast<size_t>(size) > kMaxModelFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("model file '", path, "' is larger than ", kMaxModelFileBytes >> 20, " MiB"));
  }
  in.seekg(0);
  std::string content(static_cast<size_t>(size), '\0');
  if (!in.read(content.data(), size)) {
    return absl::DataLossError(absl::StrCat("cannot read model file '", path, "'"));
  }
  return ParseModel(content, path);
}

}  // namespace vigil
