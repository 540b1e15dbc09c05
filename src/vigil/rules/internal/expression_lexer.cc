#include "vigil/rules/internal/expression_lexer.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil::rules_internal {

namespace {

// Longest first, so that "<=" is not read as "<" then "=".
constexpr std::string_view kSymbols[] = {"<=", ">=", "==", "!=", "<", ">", "+", "-",
                                         "*",  "/",  "%",  "(",  ")", "[", "]", ","};

}  // namespace

absl::StatusOr<Token> ExpressionLexer::Next() {
  const std::string_view text = source_.text();
  size_t i = position_;
  while (i < text.size() && absl::ascii_isspace(text[i])) ++i;
  if (i == text.size()) {
    position_ = i;
    Token end;
    end.begin = i;
    return end;
  }
  const char c = text[i];
  if (absl::ascii_isdigit(c) ||
      (c == '.' && i + 1 < text.size() && absl::ascii_isdigit(text[i + 1]))) {
    return LexNumber(i);
  }
  if (absl::ascii_isalpha(c) || c == '_') return LexName(i);
  if (c == '\'' || c == '"') return LexString(i);
  for (std::string_view symbol : kSymbols) {
    if (text.substr(i, symbol.size()) == symbol) {
      Token token;
      token.kind = TokenKind::kSymbol;
      token.begin = i;
      token.text = symbol;
      position_ = i + symbol.size();
      return token;
    }
  }
  if (c == '=') return source_.Error(i, "'=' is not an operator", "compare with '=='");
  const absl::string_view character(&c, 1);
  if (c == '&' || c == '|' || c == '!') {
    return source_.Error(i, absl::StrCat("'", character, "' is not an operator"),
                         "write 'and', 'or', 'not'");
  }
  return source_.Error(i, absl::StrCat("unexpected character '", character, "'"));
}

// Digits and dots, then an exponent when one follows in full ("1e" leaves the 'e' to the
// check below).
absl::StatusOr<Token> ExpressionLexer::LexNumber(size_t begin) {
  const std::string_view text = source_.text();
  size_t j = begin;
  while (j < text.size() && (absl::ascii_isdigit(text[j]) || text[j] == '.')) ++j;
  if (j < text.size() && (text[j] == 'e' || text[j] == 'E')) {
    size_t k = j + 1;
    if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
    if (k < text.size() && absl::ascii_isdigit(text[k])) {
      while (k < text.size() && absl::ascii_isdigit(text[k])) ++k;
      j = k;
    }
  }
  Token token;
  token.kind = TokenKind::kNumber;
  token.begin = begin;
  token.text = text.substr(begin, j - begin);
  if (!absl::SimpleAtod(ToAbsl(token.text), &token.number) || !std::isfinite(token.number)) {
    return source_.Error(begin, absl::StrCat("'", ToAbsl(token.text), "' is not a number"));
  }
  if (j < text.size() && (absl::ascii_isalpha(text[j]) || text[j] == '_')) {
    return source_.Error(j, "a number runs into a name; put a space or an operator between them");
  }
  position_ = j;
  return token;
}

// A dot belongs to a name only when a letter or '_' follows it ("screening.max_score").
Token ExpressionLexer::LexName(size_t begin) {
  const std::string_view text = source_.text();
  size_t j = begin;
  while (j < text.size() && (absl::ascii_isalnum(text[j]) || text[j] == '_' ||
                             (text[j] == '.' && j + 1 < text.size() &&
                              (absl::ascii_isalpha(text[j + 1]) || text[j + 1] == '_')))) {
    ++j;
  }
  Token token;
  token.kind = TokenKind::kName;
  token.begin = begin;
  token.text = text.substr(begin, j - begin);
  position_ = j;
  return token;
}

// A string ends at its own kind of quote, on the line it starts on.
absl::StatusOr<Token> ExpressionLexer::LexString(size_t begin) {
  const std::string_view text = source_.text();
  const char quote = text[begin];
  Token token;
  token.kind = TokenKind::kString;
  token.begin = begin;
  size_t j = begin + 1;
  while (j < text.size() && text[j] != quote) {
    if (text[j] == '\n') break;
    if (text[j] == '\\' && j + 1 < text.size()) {
      const char e = text[j + 1];
      if (e != '\\' && e != '\'' && e != '"') {
        return source_.Error(j, "unknown escape; only \\\\, \\' and \\\" are known");
      }
      token.string.push_back(e);
      j += 2;
      continue;
    }
    token.string.push_back(text[j++]);
  }
  if (j >= text.size() || text[j] != quote) return source_.Error(begin, "string is not closed");
  token.text = text.substr(begin, j + 1 - begin);
  position_ = j + 1;
  return token;
}

}  // namespace vigil::rules_internal
