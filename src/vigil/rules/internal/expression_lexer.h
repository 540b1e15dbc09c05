// ExpressionLexer: splits a policy expression's text into tokens, one at a time, each with the
// offset of its first character (which errors turn into file:line:column).
//
//   ExpressionSource source(text, where);
//   ExpressionLexer lexer(source);
//   VIGIL_ASSIGN_OR_RETURN(Token token, lexer.Next());  // ... until token.kind == kEnd
//
// Tokens: numbers (1, 2.5, .5, 1e-3), 'strings' or "strings" with the escapes \\, \' and \",
// names (lower- or upper-case words of letters, digits and '_' joined by dots: keywords and
// function names are names too; the parser tells them apart) and the symbols
// <= >= == != < > + - * / % ( ) [ ] ,. Whitespace separates tokens and is otherwise ignored.
//
// Private to the rules module. Thread safety: externally synchronized (Next advances).
#ifndef VIGIL_RULES_INTERNAL_EXPRESSION_LEXER_H_
#define VIGIL_RULES_INTERNAL_EXPRESSION_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/rules/internal/expression_source.h"

namespace vigil::rules_internal {

enum class TokenKind : uint8_t { kEnd, kNumber, kString, kName, kSymbol };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  size_t begin = 0;       // offset of the first character; the text's size for kEnd
  std::string_view text;  // as written (a string with its quotes); views the source's text
  double number = 0;      // kNumber: the value, finite
  std::string string;     // kString: the value, escapes resolved

  bool IsSymbol(std::string_view symbol) const {
    return kind == TokenKind::kSymbol && text == symbol;
  }
  bool IsWord(std::string_view word) const { return kind == TokenKind::kName && text == word; }
};

class ExpressionLexer {
 public:
  // "source" must remain live while this lexer and the tokens it returns are in use.
  explicit ExpressionLexer(const ExpressionSource& source) : source_(source) {}

  // The next token; kEnd at the end of the text, and again on every later call. The error
  // (kInvalidArgument, ExpressionSource's form) names a number that does not parse or runs into
  // a name, a string that is not closed on its line (at its opening quote), an unknown escape,
  // or a character that starts no token ('=', '&', '|' and '!' with a hint).
  absl::StatusOr<Token> Next();

 private:
  absl::StatusOr<Token> LexNumber(size_t begin);
  absl::StatusOr<Token> LexString(size_t begin);
  Token LexName(size_t begin);

  const ExpressionSource& source_;
  size_t position_ = 0;  // where the next token's search starts
};

}  // namespace vigil::rules_internal

#endif  // VIGIL_RULES_INTERNAL_EXPRESSION_LEXER_H_
