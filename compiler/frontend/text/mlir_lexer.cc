// MLIR text tokenizer (see mlir_lexer.h).
#include "compiler/frontend/text/mlir_lexer.h"

#include <algorithm>

namespace ember::frontend::text {
namespace {

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
// Characters that may continue a bare identifier.
bool IsBareIdChar(char c) { return IsLetter(c) || IsDigit(c) || c == '_' || c == '$' || c == '.'; }
// Characters of a suffix id after %, ^, #, !, @ (MLIR allows '-' there).
bool IsSuffixIdChar(char c) { return IsBareIdChar(c) || c == '-'; }

int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

const char* TokKindName(TokKind kind) {
  switch (kind) {
    case TokKind::kEof: return "end of input";
    case TokKind::kError: return "invalid token";
    case TokKind::kBareIdent: return "identifier";
    case TokKind::kAtIdent: return "symbol (@name)";
    case TokKind::kHashIdent: return "'#' identifier";
    case TokKind::kBangIdent: return "'!' identifier";
    case TokKind::kPercentIdent: return "SSA value (%name)";
    case TokKind::kCaretIdent: return "block label (^name)";
    case TokKind::kInteger: return "integer";
    case TokKind::kFloat: return "float";
    case TokKind::kString: return "string";
    case TokKind::kLParen: return "'('";
    case TokKind::kRParen: return "')'";
    case TokKind::kLBrace: return "'{'";
    case TokKind::kRBrace: return "'}'";
    case TokKind::kLSquare: return "'['";
    case TokKind::kRSquare: return "']'";
    case TokKind::kLess: return "'<'";
    case TokKind::kGreater: return "'>'";
    case TokKind::kColon: return "':'";
    case TokKind::kComma: return "','";
    case TokKind::kEqual: return "'='";
    case TokKind::kArrow: return "'->'";
    case TokKind::kQuestion: return "'?'";
    case TokKind::kStar: return "'*'";
    case TokKind::kPlus: return "'+'";
    case TokKind::kMinus: return "'-'";
    case TokKind::kVerticalBar: return "'|'";
    case TokKind::kFileMetadataBegin: return "'{-#'";
    case TokKind::kFileMetadataEnd: return "'#-}'";
  }
  return "token";
}

Lexer::Lexer(std::string_view source) : source_(source) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < source_.size(); ++i) {
    if (source_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

void Lexer::LineCol(size_t offset, uint32_t* line, uint32_t* col) const {
  offset = std::min(offset, source_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const size_t index = static_cast<size_t>(it - line_starts_.begin()) - 1;
  *line = static_cast<uint32_t>(index + 1);
  *col = static_cast<uint32_t>(offset - line_starts_[index] + 1);
}

size_t Lexer::SkipTrivia(size_t pos) const {
  const size_t n = source_.size();
  while (pos < n) {
    const char c = source_[pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++pos;
    } else if (c == '/' && pos + 1 < n && source_[pos + 1] == '/') {
      while (pos < n && source_[pos] != '\n') ++pos;
    } else {
      break;
    }
  }
  return pos;
}

Token Lexer::LexAt(size_t offset) const {
  const size_t n = source_.size();
  size_t pos = SkipTrivia(offset);
  Token tok;
  tok.offset = pos;
  auto make = [&](TokKind kind, size_t end) {
    tok.kind = kind;
    tok.text = source_.substr(pos, end - pos);
    return tok;
  };
  if (pos >= n) return make(TokKind::kEof, n);
  const char c = source_[pos];
  const char next = pos + 1 < n ? source_[pos + 1] : '\0';
  switch (c) {
    case '(': return make(TokKind::kLParen, pos + 1);
    case ')': return make(TokKind::kRParen, pos + 1);
    case '{':
      if (next == '-' && pos + 2 < n && source_[pos + 2] == '#') {
        return make(TokKind::kFileMetadataBegin, pos + 3);
      }
      return make(TokKind::kLBrace, pos + 1);
    case '}': return make(TokKind::kRBrace, pos + 1);
    case '[': return make(TokKind::kLSquare, pos + 1);
    case ']': return make(TokKind::kRSquare, pos + 1);
    case '<': return make(TokKind::kLess, pos + 1);
    case '>': return make(TokKind::kGreater, pos + 1);
    case ':': return make(TokKind::kColon, pos + 1);
    case ',': return make(TokKind::kComma, pos + 1);
    case '=': return make(TokKind::kEqual, pos + 1);
    case '?': return make(TokKind::kQuestion, pos + 1);
    case '*': return make(TokKind::kStar, pos + 1);
    case '+': return make(TokKind::kPlus, pos + 1);
    case '|': return make(TokKind::kVerticalBar, pos + 1);
    case '-':
      if (next == '>') return make(TokKind::kArrow, pos + 2);
      return make(TokKind::kMinus, pos + 1);
    case '"': {
      size_t p = pos + 1;
      while (p < n && source_[p] != '"') {
        if (source_[p] == '\\') ++p;  // skip the escaped character
        if (p < n && source_[p] == '\n') return make(TokKind::kError, p);
        ++p;
      }
      if (p >= n) return make(TokKind::kError, n);
      return make(TokKind::kString, p + 1);
    }
    case '@': {
      if (next == '"') {
        Token s = LexAt(pos + 1);
        if (s.kind != TokKind::kString) return make(TokKind::kError, pos + 1);
        return make(TokKind::kAtIdent, s.offset + s.text.size());
      }
      size_t p = pos + 1;
      while (p < n && IsSuffixIdChar(source_[p])) ++p;
      if (p == pos + 1) return make(TokKind::kError, p);
      return make(TokKind::kAtIdent, p);
    }
    case '#':
      if (next == '-' && pos + 2 < n && source_[pos + 2] == '}') {
        return make(TokKind::kFileMetadataEnd, pos + 3);
      }
      [[fallthrough]];
    case '%':
    case '^':
    case '!': {
      size_t p = pos + 1;
      while (p < n && IsSuffixIdChar(source_[p])) ++p;
      if (p == pos + 1) return make(TokKind::kError, p);
      const TokKind kind = c == '#'   ? TokKind::kHashIdent
                           : c == '%' ? TokKind::kPercentIdent
                           : c == '^' ? TokKind::kCaretIdent
                                      : TokKind::kBangIdent;
      return make(kind, p);
    }
    default: break;
  }
  if (IsDigit(c)) {
    size_t p = pos;
    if (c == '0' && next == 'x' && pos + 2 < n && IsHexDigit(source_[pos + 2])) {
      p = pos + 2;
      while (p < n && IsHexDigit(source_[p])) ++p;
      return make(TokKind::kInteger, p);
    }
    while (p < n && IsDigit(source_[p])) ++p;
    if (p < n && source_[p] == '.') {
      ++p;
      while (p < n && IsDigit(source_[p])) ++p;
      if (p < n && (source_[p] == 'e' || source_[p] == 'E')) {
        size_t q = p + 1;
        if (q < n && (source_[q] == '+' || source_[q] == '-')) ++q;
        if (q < n && IsDigit(source_[q])) {
          while (q < n && IsDigit(source_[q])) ++q;
          p = q;
        }
      }
      return make(TokKind::kFloat, p);
    }
    return make(TokKind::kInteger, p);
  }
  if (IsLetter(c) || c == '_') {
    size_t p = pos + 1;
    while (p < n && IsBareIdChar(source_[p])) ++p;
    return make(TokKind::kBareIdent, p);
  }
  return make(TokKind::kError, pos + 1);
}

bool DecodeStringToken(std::string_view token, std::string* out) {
  out->clear();
  if (token.size() < 2 || token.front() != '"' || token.back() != '"') return false;
  for (size_t i = 1; i + 1 < token.size(); ++i) {
    const char c = token[i];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (i + 2 >= token.size()) return false;
    const char e = token[++i];
    switch (e) {
      case 'n': out->push_back('\n'); break;
      case 't': out->push_back('\t'); break;
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      default: {
        if (i + 1 >= token.size() - 1) return false;
        const int hi = HexValue(e);
        const int lo = HexValue(token[i + 1]);
        if (hi < 0 || lo < 0) return false;
        out->push_back(static_cast<char>(hi * 16 + lo));
        ++i;
      }
    }
  }
  return true;
}

}  // namespace ember::frontend::text
