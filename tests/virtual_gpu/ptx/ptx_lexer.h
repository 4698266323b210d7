// Splits PTX text into tokens with their line numbers. Directives and instruction modifiers
// (".global", ".L2::cache_hint") are single tokens; numbers keep their spelling class (integer,
// 0f/0d bit patterns, decimal float) so the parser can give them the right type.
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_LEXER_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_LEXER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ember::vgpu::ptx {

struct Token {
  enum class Kind : uint8_t {
    kIdentifier,  // %r1, $L__BB0_2, _Z3fooPf, ld, _
    kDirective,   // .global (text includes the dot)
    kInteger,     // value in int_value (unsigned 64-bit pattern)
    kF32Bits,     // 0f3F800000
    kF64Bits,     // 0d3FF0000000000000
    kDecimal,     // 1.5e3: value in float_value
    kString,      // "text" (without quotes)
    kPunct,       // one of , ; : { } [ ] ( ) + - ! @ | < > =
    kEnd,
  };
  Kind kind = Kind::kEnd;
  std::string text;
  uint64_t int_value = 0;
  double float_value = 0;
  int line = 0;
  bool Is(char punct) const { return kind == Kind::kPunct && text.size() == 1 && text[0] == punct; }
  bool IsDirective(std::string_view name) const {
    return kind == Kind::kDirective && text == name;
  }
};

// InvalidArgument "line N: ..." for characters PTX does not use or malformed numbers.
absl::StatusOr<std::vector<Token>> Tokenize(std::string_view text);

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_LEXER_H_
