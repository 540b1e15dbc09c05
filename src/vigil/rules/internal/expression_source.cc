#include "vigil/rules/internal/expression_source.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil::rules_internal {

absl::Status ExpressionSource::Error(size_t offset, std::string_view message,
                                     std::string_view hint) const {
  int line = where_.line, column = where_.column;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      column = where_.indent + 1;
      line_start = i + 1;
    } else {
      ++column;
    }
  }
  size_t line_end = text_.find('\n', line_start);
  if (line_end == std::string_view::npos) line_end = text_.size();
  std::string out =
      absl::StrCat(where_.file, ":", line, ":", column, ": ", ToAbsl(message), "\n  ",
                   ToAbsl(text_.substr(line_start, line_end - line_start)), "\n  ",
                   std::string(std::min(offset, text_.size()) - line_start, ' '), "^");
  if (!hint.empty()) absl::StrAppend(&out, "\n  hint: ", ToAbsl(hint));
  return absl::InvalidArgumentError(out);
}

}  // namespace vigil::rules_internal
