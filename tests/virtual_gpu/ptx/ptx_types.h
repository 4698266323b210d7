// PTX's fundamental types (PTX ISA "Fundamental Types") and the operand-compatibility rule that
// decides whether a register of one type may stand where an instruction names another.
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_TYPES_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_TYPES_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace ember::vgpu::ptx {

enum class Type : uint8_t {
  kNone,
  kPred,
  kB8, kB16, kB32, kB64, kB128,
  kU8, kU16, kU32, kU64,
  kS8, kS16, kS32, kS64,
  kF16, kF16x2, kBF16, kBF16x2, kTF32, kF32, kF64,
};

enum class TypeKind : uint8_t { kNone, kPred, kBits, kUnsigned, kSigned, kFloat };

// ".u32" (with or without the dot) -> kU32; nullopt for anything that is not a type.
std::optional<Type> ParseType(std::string_view name);
const char* TypeName(Type type);  // "u32"
int TypeSize(Type type);               // bytes; a predicate counts as 1
TypeKind KindOf(Type type);
inline bool IsFloat(Type t) { return KindOf(t) == TypeKind::kFloat; }
inline bool IsSigned(Type t) { return KindOf(t) == TypeKind::kSigned; }
inline bool IsInteger(Type t) {
  TypeKind k = KindOf(t);
  return k == TypeKind::kSigned || k == TypeKind::kUnsigned || k == TypeKind::kBits;
}

// PTX ISA "Operand Type Information": a register may be used where `instruction_type` is named
// when the sizes agree and either one is a bit-size type, both are integers, or the types are
// equal. `allow_wider` is the ld/st/cvt relaxation (the register may be wider than the type).
bool RegisterFits(Type register_type, Type instruction_type, bool allow_wider = false);

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_TYPES_H_
