#include "vigil/rules/internal/expression_parser.h"

#include <algorithm>
#include <initializer_list>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"
#include "vigil/rules/internal/expression_lexer.h"

namespace vigil::rules_internal {

bool IsFunctionName(std::string_view name) {
  return std::find(std::begin(kFunctionNames), std::end(kFunctionNames), name) !=
         std::end(kFunctionNames);
}

bool IsReservedName(std::string_view name) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords) ||
         IsFunctionName(name);
}

namespace {

using Kind = SyntaxNode::Kind;
using NodePtr = std::unique_ptr<SyntaxNode>;

bool IsComparison(const Token& token) {
  for (std::string_view symbol : {"<", "<=", ">", ">=", "==", "!="}) {
    if (token.IsSymbol(symbol)) return true;
  }
  return false;
}

// Each Parse function returns the node it read. After a syntax error (error_ set) it returns
// what it had read, ended by a kError node as ParsedExpression describes, and its callers stop
// reading too.
class Parser {
 public:
  explicit Parser(const ExpressionSource& source) : source_(source), lexer_(source) {}

  ParsedExpression Parse() {
    if (!Advance()) return Done(Stopped());
    NodePtr root = ParseOr();
    if (!failed() && token_.kind != TokenKind::kEnd) {
      root = StoppedAfter(std::move(root), Error(token_.begin, "unexpected text after the end"));
    }
    return Done(std::move(root));
  }

 private:
  // --- reading and stopping

  bool failed() const { return !error_.ok(); }

  // Reads the next token; false (error_ set) on a lexical error.
  bool Advance() {
    absl::StatusOr<Token> next = lexer_.Next();
    if (!next.ok()) {
      error_ = next.status();
      return false;
    }
    token_ = *std::move(next);
    return true;
  }

  absl::Status Error(size_t offset, std::string_view message, std::string_view hint = {}) const {
    return source_.Error(offset, message, hint);
  }

  NodePtr Node(Kind kind, size_t at) const {
    auto node = std::make_unique<SyntaxNode>();
    node->kind = kind;
    node->begin = at;
    node->at = at;
    return node;
  }

  // A node with "first" as its first operand, starting where it starts.
  NodePtr NodeAfter(Kind kind, NodePtr first, size_t at) const {
    NodePtr node = Node(kind, at);
    node->begin = first->begin;
    node->operands.push_back(std::move(first));
    return node;
  }

  // A kError where nothing was read; "error" is the syntax error unless one was met already
  // (a lexical error in Advance).
  NodePtr Stopped(absl::Status error = absl::OkStatus()) {
    if (!error.ok()) error_ = std::move(error);
    return Node(Kind::kError, token_.begin);
  }
  // A kError after the complete node "before".
  NodePtr StoppedAfter(NodePtr before, absl::Status error = absl::OkStatus()) {
    NodePtr stop = Stopped(std::move(error));
    stop->operands.push_back(std::move(before));
    return stop;
  }
  // "node" with a kError as its last operand: it stopped after the operands it has.
  NodePtr StoppedIn(NodePtr node, absl::Status error = absl::OkStatus()) {
    node->operands.push_back(Stopped(std::move(error)));
    return node;
  }
  // "leaf" after reading past its token.
  NodePtr Consumed(NodePtr leaf) {
    if (!Advance()) return StoppedAfter(std::move(leaf));
    return leaf;
  }

  ParsedExpression Done(NodePtr root) { return {std::move(root), std::move(error_)}; }

  // --- nesting

  // Counts one level of nesting (a parenthesis or call, a 'not', a unary '-') for its lifetime.
  class Nested {
   public:
    explicit Nested(Parser& parser) : parser_(parser) { ++parser_.depth_; }
    ~Nested() { --parser_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Parser& parser_;
  };
  // A kError when the nesting went past kMaxExpressionNesting, else null.
  NodePtr TooDeep() {
    if (depth_ <= kMaxExpressionNesting) return nullptr;
    return Stopped(Error(token_.begin,
                         absl::StrCat("nested more than ", kMaxExpressionNesting,
                                      " deep (parentheses, calls, 'not' and unary '-' each "
                                      "count)"),
                         "split the expression into named parts, or simplify it"));
  }

  // --- grammar

  NodePtr ParseOr() {
    Nested nested(*this);
    if (NodePtr stop = TooDeep()) return stop;
    return ParseLogical("or", Kind::kOr, &Parser::ParseAnd);
  }
  NodePtr ParseAnd() { return ParseLogical("and", Kind::kAnd, &Parser::ParseNot); }

  NodePtr ParseLogical(std::string_view word, Kind kind, NodePtr (Parser::*operand)()) {
    NodePtr left = (this->*operand)();
    if (failed() || !token_.IsWord(word)) return left;
    NodePtr node = NodeAfter(kind, std::move(left), token_.begin);
    while (token_.IsWord(word)) {
      if (!Advance()) return StoppedIn(std::move(node));
      node->operands.push_back((this->*operand)());
      if (failed()) return node;
    }
    return node;
  }

  NodePtr ParseNot() {
    if (!token_.IsWord("not")) return ParseComparison();
    Nested nested(*this);
    if (NodePtr stop = TooDeep()) return stop;
    NodePtr node = Node(Kind::kNot, token_.begin);
    if (!Advance()) return StoppedIn(std::move(node));
    node->operands.push_back(ParseNot());
    return node;
  }

  NodePtr ParseComparison() {
    NodePtr left = ParseSum();
    if (failed()) return left;
    if (token_.IsWord("in") || token_.IsWord("not")) return ParseIn(std::move(left));
    if (!IsComparison(token_)) return left;
    NodePtr node = NodeAfter(Kind::kComparison, std::move(left), token_.begin);
    node->text = token_.text;
    if (!Advance()) return StoppedIn(std::move(node));
    node->operands.push_back(ParseSum());
    if (failed()) return node;
    if (IsComparison(token_)) {
      return StoppedAfter(std::move(node), Error(token_.begin, "comparisons do not chain",
                                                 "write 'a < b and b < c', or between(b, a, c)"));
    }
    return node;
  }

  // `in` or `not in` after "element". The kIn node starts where its element does (what an error
  // about it as an operand points at). A syntax error in the words `not in`, or in reading the
  // token after them, leaves the element alone before the kError: the element's type is checked
  // only once the list's first token has been read.
  NodePtr ParseIn(NodePtr element) {
    const bool negate = token_.IsWord("not");
    const size_t op_at = token_.begin;
    if (!Advance()) return StoppedAfter(std::move(element));
    if (negate) {
      if (!token_.IsWord("in")) {
        return StoppedAfter(std::move(element),
                            Error(op_at, "'not' here must be followed by 'in'"));
      }
      if (!Advance()) return StoppedAfter(std::move(element));
    }
    NodePtr node = NodeAfter(Kind::kIn, std::move(element), op_at);
    node->negated = negate;
    node->operands.push_back(ParseList());
    return node;
  }

  // The right side of `in`: [items] or the name of a list.
  NodePtr ParseList() {
    if (token_.kind == TokenKind::kName) {
      NodePtr name = Node(Kind::kName, token_.begin);
      name->text = token_.text;
      return Consumed(std::move(name));
    }
    if (!token_.IsSymbol("[")) {
      return Stopped(Error(token_.begin, "'in' needs a list: [..] or the name of a list"));
    }
    NodePtr list = Node(Kind::kList, token_.begin);
    if (!Advance()) return StoppedIn(std::move(list));
    while (!token_.IsSymbol("]")) {
      list->operands.push_back(ParseListItem());
      if (failed()) return list;
      if (token_.IsSymbol(",")) {
        if (!Advance()) return StoppedIn(std::move(list));
      } else if (!token_.IsSymbol("]")) {
        return StoppedIn(std::move(list), Error(token_.begin, "expected ',' or ']'"));
      }
    }
    return Consumed(std::move(list));
  }

  // One token, after a '-' for a negative number. Any token is read as an item here, and one that
  // is no constant is left to the checker, whose message names the type the list must hold.
  NodePtr ParseListItem() {
    const size_t at = token_.begin;
    bool negative = false;
    if (token_.IsSymbol("-")) {
      negative = true;
      if (!Advance()) return Stopped();
    }
    NodePtr item = Node(Kind::kOtherToken, at);
    item->negated = negative;
    item->text = token_.text;
    if (token_.kind == TokenKind::kNumber) {
      item->kind = Kind::kNumber;
      item->number = token_.number;
    } else if (token_.kind == TokenKind::kString) {
      item->kind = Kind::kString;
      item->string = token_.string;
    }
    return Consumed(std::move(item));
  }

  NodePtr ParseSum() { return ParseArithmetic({"+", "-"}, &Parser::ParseProduct); }
  NodePtr ParseProduct() { return ParseArithmetic({"*", "/", "%"}, &Parser::ParseUnary); }

  // Left-associative: "a - b - c" is (a - b) - c.
  NodePtr ParseArithmetic(std::initializer_list<std::string_view> symbols,
                          NodePtr (Parser::*operand)()) {
    NodePtr left = (this->*operand)();
    while (!failed()) {
      const auto* found = std::find_if(symbols.begin(), symbols.end(),
                                       [&](std::string_view s) { return token_.IsSymbol(s); });
      if (found == symbols.end()) return left;
      NodePtr node = NodeAfter(Kind::kArithmetic, std::move(left), token_.begin);
      node->text = token_.text;
      if (!Advance()) return StoppedIn(std::move(node));
      node->operands.push_back((this->*operand)());
      left = std::move(node);
    }
    return left;
  }

  NodePtr ParseUnary() {
    if (!token_.IsSymbol("-")) return ParsePrimary();
    Nested nested(*this);
    if (NodePtr stop = TooDeep()) return stop;
    NodePtr node = Node(Kind::kNegate, token_.begin);
    if (!Advance()) return StoppedIn(std::move(node));
    node->operands.push_back(ParseUnary());
    return node;
  }

  NodePtr ParsePrimary() {
    const size_t at = token_.begin;
    switch (token_.kind) {
      case TokenKind::kEnd:
        return Stopped(Error(at, "expression ends too early"));
      case TokenKind::kNumber: {
        NodePtr leaf = Node(Kind::kNumber, at);
        leaf->text = token_.text;
        leaf->number = token_.number;
        return Consumed(std::move(leaf));
      }
      case TokenKind::kString: {
        NodePtr leaf = Node(Kind::kString, at);
        leaf->text = token_.text;
        leaf->string = token_.string;
        return Consumed(std::move(leaf));
      }
      case TokenKind::kSymbol:
        return ParseParenthesised();
      case TokenKind::kName:
        break;
    }
    const std::string_view name = token_.text;
    if (name == "true" || name == "false") {
      NodePtr leaf = Node(Kind::kBool, at);
      leaf->text = name;
      leaf->number = name == "true" ? 1.0 : 0.0;
      return Consumed(std::move(leaf));
    }
    if (IsFunctionName(name)) return ParseCall();
    if (IsReservedName(name)) {
      return Stopped(Error(at, absl::StrCat("'", ToAbsl(name), "' cannot start a value")));
    }
    NodePtr leaf = Node(Kind::kName, at);
    leaf->text = name;
    return Consumed(std::move(leaf));
  }

  // REQUIRES: token_ is a symbol.
  NodePtr ParseParenthesised() {
    const size_t at = token_.begin;
    if (token_.IsSymbol("[")) return Stopped(Error(at, "a list is only allowed after 'in'"));
    if (!token_.IsSymbol("(")) {
      return Stopped(Error(at, absl::StrCat("unexpected '", ToAbsl(token_.text), "'")));
    }
    if (!Advance()) return Stopped();
    NodePtr inner = ParseOr();
    if (failed()) return inner;
    if (!token_.IsSymbol(")")) {
      return StoppedAfter(std::move(inner), Error(token_.begin, "expected ')'"));
    }
    if (!Advance()) return StoppedAfter(std::move(inner));
    inner->begin = at;
    return inner;
  }

  // REQUIRES: token_ names a function. A trailing ',' before the ')' is allowed.
  NodePtr ParseCall() {
    NodePtr call = Node(Kind::kCall, token_.begin);
    call->text = token_.text;
    if (!Advance()) return Stopped();
    if (!token_.IsSymbol("(")) {
      return Stopped(Error(token_.begin,
                           absl::StrCat("'", ToAbsl(call->text), "' is a function: expected '('")));
    }
    if (!Advance()) return StoppedIn(std::move(call));
    while (!token_.IsSymbol(")")) {
      call->operands.push_back(ParseOr());
      if (failed()) return call;
      if (token_.IsSymbol(",")) {
        if (!Advance()) return StoppedIn(std::move(call));
      } else if (!token_.IsSymbol(")")) {
        return StoppedIn(std::move(call), Error(token_.begin, "expected ',' or ')'"));
      }
    }
    call->at = token_.begin;
    // Stopping here leaves the call's arguments read but its arity unchecked.
    if (!Advance()) return StoppedIn(std::move(call));
    return call;
  }

  int depth_ = 0;  // the levels of nesting being read (Nested)
  const ExpressionSource& source_;
  ExpressionLexer lexer_;
  Token token_;
  absl::Status error_;
};

}  // namespace

ParsedExpression ParseExpression(const ExpressionSource& source) { return Parser(source).Parse(); }

}  // namespace vigil::rules_internal
