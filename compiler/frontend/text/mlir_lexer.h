// Tokenizer for MLIR's textual form (mlir/lib/AsmParser/Lexer.cpp semantics, our own code).
// Tokens point into the source buffer; the lexer can be rewound to any offset so that parsers of
// shapes (`2x?x3xf32`) and other context-sensitive syntax can rescan raw characters.
#ifndef EMBER_COMPILER_FRONTEND_TEXT_MLIR_LEXER_H_
#define EMBER_COMPILER_FRONTEND_TEXT_MLIR_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ember::frontend::text {

enum class TokKind : uint8_t {
  kEof,
  kError,          // an invalid character or unterminated string; text holds it
  kBareIdent,      // foo, stablehlo.add, i32, x3xf32
  kAtIdent,        // @name or @"quoted"
  kHashIdent,      // #name, #0 (result number), #stablehlo
  kBangIdent,      // !name
  kPercentIdent,   // %name
  kCaretIdent,     // ^bb0
  kInteger,        // 42, 0x1F
  kFloat,          // 1.5, 2.0e-3
  kString,         // "..." (text includes the quotes, escapes undecoded)
  kLParen, kRParen, kLBrace, kRBrace, kLSquare, kRSquare, kLess, kGreater,
  kColon, kComma, kEqual, kArrow, kQuestion, kStar, kPlus, kMinus, kVerticalBar,
  kFileMetadataBegin,  // {-#
  kFileMetadataEnd,    // #-}
};

const char* TokKindName(TokKind kind);

struct Token {
  TokKind kind = TokKind::kEof;
  std::string_view text;
  size_t offset = 0;  // byte offset of the first character
};

class Lexer {
 public:
  explicit Lexer(std::string_view source);

  // Lexes the token starting at or after `offset` (whitespace and comments skipped).
  Token LexAt(size_t offset) const;

  std::string_view source() const { return source_; }
  // 1-based line and column of a byte offset.
  void LineCol(size_t offset, uint32_t* line, uint32_t* col) const;
  // Offset of the first non-space, non-comment character at or after `offset`.
  size_t SkipTrivia(size_t offset) const;

 private:
  std::string_view source_;
  std::vector<size_t> line_starts_;
};

// Decodes the body of a string token (including its quotes): \n \t \" \\ and \XX hex escapes.
// Returns false on a malformed escape.
bool DecodeStringToken(std::string_view token, std::string* out);

}  // namespace ember::frontend::text

#endif  // EMBER_COMPILER_FRONTEND_TEXT_MLIR_LEXER_H_
