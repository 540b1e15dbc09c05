#include "vigil/rules/internal/expression_lexer.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::rules_internal {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

// Every token of "text" up to and including kEnd, or the first error.
absl::StatusOr<std::vector<Token>> Lex(std::string_view text, const SourceLocation& where = {"f"}) {
  const ExpressionSource source(text, where);
  ExpressionLexer lexer(source);
  std::vector<Token> tokens;
  for (;;) {
    absl::StatusOr<Token> token = lexer.Next();
    if (!token.ok()) return token.status();
    tokens.push_back(*std::move(token));
    if (tokens.back().kind == TokenKind::kEnd) return tokens;
  }
}

TEST(ExpressionLexer, TokensCarryKindOffsetAndText) {
  const std::string text = "amount>=9000 and  country in ['IR', \"K\\'P\"]";
  auto tokens = Lex(text);
  ASSERT_OK(tokens);
  struct Want {
    TokenKind kind;
    size_t begin;
    std::string_view text;
  };
  const Want want[] = {
      {TokenKind::kName, 0, "amount"},   {TokenKind::kSymbol, 6, ">="},
      {TokenKind::kNumber, 8, "9000"},   {TokenKind::kName, 13, "and"},
      {TokenKind::kName, 18, "country"}, {TokenKind::kName, 26, "in"},
      {TokenKind::kSymbol, 29, "["},     {TokenKind::kString, 30, "'IR'"},
      {TokenKind::kSymbol, 34, ","},     {TokenKind::kString, 36, "\"K\\'P\""},
      {TokenKind::kSymbol, 42, "]"},     {TokenKind::kEnd, 43, ""},
  };
  ASSERT_EQ(tokens->size(), std::size(want));
  for (size_t i = 0; i < std::size(want); ++i) {
    EXPECT_EQ((*tokens)[i].kind, want[i].kind) << i;
    EXPECT_EQ((*tokens)[i].begin, want[i].begin) << i;
    EXPECT_EQ((*tokens)[i].text, want[i].text) << i;
  }
  EXPECT_EQ((*tokens)[2].number, 9000);
  EXPECT_EQ((*tokens)[7].string, "IR");
  EXPECT_EQ((*tokens)[9].string, "K'P");  // escapes resolved
}

TEST(ExpressionLexer, NumberForms) {
  // Each: text, the value, and the text of the token that follows (what is left unread).
  const struct {
    std::string_view text;
    double value;
    std::string_view next;
  } cases[] = {
      {"12", 12, ""},     {".5", 0.5, ""},   {"1.5e3", 1500, ""},
      {"2E-2", 0.02, ""}, {"1e+2", 100, ""}, {"3.", 3, ""},  // a trailing dot is part of the number
      {"1-2", 1, "-"},  // '-' is an operator, never part of a number
      {"1e+", 1, "e"},  // an exponent only in full; the name then runs into it (below)
  };
  for (const auto& c : cases) {
    if (c.text == "1e+") {
      EXPECT_THAT(Lex(c.text).status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                                 HasSubstr("f:1:2: a number runs into a name")));
      continue;
    }
    auto tokens = Lex(c.text);
    ASSERT_OK(tokens);
    EXPECT_EQ((*tokens)[0].kind, TokenKind::kNumber) << c.text;
    EXPECT_DOUBLE_EQ((*tokens)[0].number, c.value) << c.text;
    EXPECT_EQ((*tokens)[1].text, c.next) << c.text;
  }
}

TEST(ExpressionLexer, NamesJoinDotsOnlyBeforeALetter) {
  auto tokens = Lex("screening.max_score Amount x.1");
  ASSERT_OK(tokens);
  EXPECT_EQ((*tokens)[0].text, "screening.max_score");
  EXPECT_EQ((*tokens)[1].text, "Amount");  // any case: the checker rejects unknown names
  EXPECT_EQ((*tokens)[2].text, "x");       // ".1" is a number
  EXPECT_EQ((*tokens)[3].kind, TokenKind::kNumber);
  EXPECT_EQ((*tokens)[3].begin, 28u);
}

TEST(ExpressionLexer, LongestSymbolFirst) {
  auto tokens = Lex("<=<!=");
  ASSERT_OK(tokens);
  EXPECT_EQ((*tokens)[0].text, "<=");
  EXPECT_EQ((*tokens)[1].text, "<");
  EXPECT_EQ((*tokens)[2].text, "!=");
}

TEST(ExpressionLexer, KEndRepeats) {
  const SourceLocation where{"f"};
  const ExpressionSource source("  ", where);
  ExpressionLexer lexer(source);
  for (int i = 0; i < 3; ++i) {
    auto token = lexer.Next();
    ASSERT_OK(token);
    EXPECT_EQ(token->kind, TokenKind::kEnd);
    EXPECT_EQ(token->begin, 2u);
  }
}

TEST(ExpressionLexer, ErrorsPointAtTheirCause) {
  // Each: text, the message's first line (file:line:column: message), and the hint if any.
  const struct {
    std::string_view text;
    std::string_view first_line;
    std::string_view hint;
  } cases[] = {
      {"a = 1", "f:1:3: '=' is not an operator", "compare with '=='"},
      {"a && b", "f:1:3: '&' is not an operator", "write 'and', 'or', 'not'"},
      {"!a", "f:1:1: '!' is not an operator", "write 'and', 'or', 'not'"},
      {"a # b", "f:1:3: unexpected character '#'", ""},
      {"x + 12abc", "f:1:7: a number runs into a name", ""},  // at the name, not the number
      {"1.5.2", "f:1:1: '1.5.2' is not a number", ""},
      {"9e999", "f:1:1: '9e999' is not a number", ""},  // not finite
      {"'open", "f:1:1: string is not closed", ""},     // at the opening quote
      {"'a\nb'", "f:1:1: string is not closed", ""},    // a string ends on its line
      {"'a' == \"b'", "f:1:8: string is not closed", ""},
      {"'a\\n'", "f:1:3: unknown escape", ""},  // at the backslash
  };
  for (const auto& c : cases) {
    auto tokens = Lex(c.text);
    ASSERT_THAT(tokens.status(), StatusIs(absl::StatusCode::kInvalidArgument)) << c.text;
    const std::string message(tokens.status().message());
    EXPECT_THAT(message.substr(0, message.find('\n')), HasSubstr(c.first_line)) << c.text;
    EXPECT_EQ(message.find("hint") != std::string::npos, !c.hint.empty()) << c.text;
    if (!c.hint.empty()) {
      EXPECT_THAT(message, HasSubstr(c.hint)) << c.text;
    }
  }
}

}  // namespace
}  // namespace vigil::rules_internal
