#include "tests/virtual_gpu/ptx/ptx_lexer.h"

#include <cctype>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace ember::vgpu::ptx {
namespace {

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

absl::StatusOr<std::vector<Token>> Tokenize(std::string_view text) {
  std::vector<Token> tokens;
  int line = 1;
  size_t i = 0;
  const size_t n = text.size();
  auto error = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", what));
  };
  while (i < n) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\0') {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(text[i] == '*' && text[i + 1] == '/')) {
        if (text[i] == '\n') ++line;
        ++i;
      }
      if (i + 1 >= n) return error("unterminated /* comment");
      i += 2;
      continue;
    }
    Token token;
    token.line = line;
    if (c == '.' && i + 1 < n &&
        (std::isalpha(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '_')) {
      size_t j = i + 1;
      while (j < n && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_' ||
                       (text[j] == ':' && j + 1 < n && text[j + 1] == ':') ||
                       (text[j] == ':' && j > 0 && text[j - 1] == ':'))) {
        ++j;
      }
      token.kind = Token::Kind::kDirective;
      token.text = std::string(text.substr(i, j - i));
      tokens.push_back(std::move(token));
      i = j;
      continue;
    }
    if (IsIdentStart(c)) {
      size_t j = i + 1;
      while (j < n && IsIdentChar(text[j])) ++j;
      token.kind = Token::Kind::kIdentifier;
      token.text = std::string(text.substr(i, j - i));
      tokens.push_back(std::move(token));
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      // 0f / 0d bit patterns
      if (c == '0' && i + 1 < n && (text[i + 1] == 'f' || text[i + 1] == 'F' ||
                                    text[i + 1] == 'd' || text[i + 1] == 'D')) {
        const bool is_double = text[i + 1] == 'd' || text[i + 1] == 'D';
        const size_t digits = is_double ? 16 : 8;
        uint64_t bits = 0;
        size_t k = i + 2;
        for (; k < n && k < i + 2 + digits; ++k) {
          const int d = HexDigit(text[k]);
          if (d < 0) break;
          bits = bits << 4 | static_cast<uint64_t>(d);
        }
        if (k != i + 2 + digits) return error("malformed floating-point bit pattern");
        token.kind = is_double ? Token::Kind::kF64Bits : Token::Kind::kF32Bits;
        token.int_value = bits;
        token.text = std::string(text.substr(i, k - i));
        tokens.push_back(std::move(token));
        i = k;
        continue;
      }
      uint64_t value = 0;
      if (c == '0' && i + 1 < n && (text[i + 1] == 'x' || text[i + 1] == 'X')) {
        j = i + 2;
        const size_t start = j;
        while (j < n && HexDigit(text[j]) >= 0) value = value << 4 | HexDigit(text[j++]);
        if (j == start) return error("malformed hexadecimal literal");
      } else if (c == '0' && i + 1 < n && (text[i + 1] == 'b' || text[i + 1] == 'B')) {
        j = i + 2;
        while (j < n && (text[j] == '0' || text[j] == '1')) value = value << 1 | (text[j++] - '0');
      } else {
        while (j < n && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
        const bool is_float =
            j < n && (text[j] == '.' || text[j] == 'e' || text[j] == 'E') &&
            !(text[j] == '.' && j + 1 < n && std::isalpha(static_cast<unsigned char>(text[j + 1])));
        if (is_float) {
          const std::string spelled(text.substr(i));
          char* end = nullptr;
          token.float_value = std::strtod(spelled.c_str(), &end);
          token.kind = Token::Kind::kDecimal;
          const size_t length = static_cast<size_t>(end - spelled.c_str());
          token.text = spelled.substr(0, length);
          tokens.push_back(std::move(token));
          i += length;
          continue;
        }
        const std::string digits(text.substr(i, j - i));
        // PTX: a leading 0 means octal.
        value = std::strtoull(digits.c_str(), nullptr, digits.size() > 1 && digits[0] == '0' ? 8 : 10);
      }
      if (j < n && (text[j] == 'U' || text[j] == 'u')) ++j;
      token.kind = Token::Kind::kInteger;
      token.int_value = value;
      token.text = std::string(text.substr(i, j - i));
      tokens.push_back(std::move(token));
      i = j;
      continue;
    }
    if (c == '"') {
      size_t j = i + 1;
      while (j < n && text[j] != '"' && text[j] != '\n') ++j;
      if (j >= n || text[j] != '"') return error("unterminated string");
      token.kind = Token::Kind::kString;
      token.text = std::string(text.substr(i + 1, j - i - 1));
      tokens.push_back(std::move(token));
      i = j + 1;
      continue;
    }
    static constexpr std::string_view kPunct = ",;:{}[]()+-!@|<>=";
    if (kPunct.find(c) != std::string_view::npos) {
      token.kind = Token::Kind::kPunct;
      token.text = std::string(1, c);
      tokens.push_back(std::move(token));
      ++i;
      continue;
    }
    return error(absl::StrCat("unexpected character '", std::string(1, c), "'"));
  }
  Token end;
  end.kind = Token::Kind::kEnd;
  end.line = line;
  tokens.push_back(std::move(end));
  return tokens;
}

}  // namespace ember::vgpu::ptx
