// ExpressionSource: an expression's text and where it starts in its file, which turns an offset
// into the text into the error every stage of the expression compiler reports:
//
//   policy.yaml:12:27: unknown name 'cont_24h'
//     amount > 10 and cont_24h >= 3
//                     ^
//     hint: did you mean 'count_24h'?
//
// Private to the rules module. Thread safety: immutable; safe for concurrent use.
#ifndef VIGIL_RULES_INTERNAL_EXPRESSION_SOURCE_H_
#define VIGIL_RULES_INTERNAL_EXPRESSION_SOURCE_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "vigil/rules/expression.h"

namespace vigil::rules_internal {

class ExpressionSource {
 public:
  // "text" and "where" must remain live while this ExpressionSource is in use.
  ExpressionSource(std::string_view text, const SourceLocation& where)
      : text_(text), where_(where) {}

  std::string_view text() const { return text_; }

  // kInvalidArgument: "file:line:column: message", the line of the text that holds "offset", a
  // caret under it and, when "hint" is not empty, the hint. Lines after the first start their
  // columns after where.indent. An offset past the end points just after the text.
  absl::Status Error(size_t offset, std::string_view message, std::string_view hint = {}) const;

 private:
  std::string_view text_;
  const SourceLocation& where_;
};

}  // namespace vigil::rules_internal

#endif  // VIGIL_RULES_INTERNAL_EXPRESSION_SOURCE_H_
