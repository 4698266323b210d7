#include "tests/virtual_gpu/ptx/ptx_types.h"

#include <array>
#include <utility>

namespace ember::vgpu::ptx {
namespace {

struct TypeInfo {
  Type type;
  const char* name;
  int size;
  TypeKind kind;
};

constexpr std::array<TypeInfo, 22> kTypes = {{
    {Type::kNone, "none", 0, TypeKind::kNone},
    {Type::kPred, "pred", 1, TypeKind::kPred},
    {Type::kB8, "b8", 1, TypeKind::kBits},
    {Type::kB16, "b16", 2, TypeKind::kBits},
    {Type::kB32, "b32", 4, TypeKind::kBits},
    {Type::kB64, "b64", 8, TypeKind::kBits},
    {Type::kB128, "b128", 16, TypeKind::kBits},
    {Type::kU8, "u8", 1, TypeKind::kUnsigned},
    {Type::kU16, "u16", 2, TypeKind::kUnsigned},
    {Type::kU32, "u32", 4, TypeKind::kUnsigned},
    {Type::kU64, "u64", 8, TypeKind::kUnsigned},
    {Type::kS8, "s8", 1, TypeKind::kSigned},
    {Type::kS16, "s16", 2, TypeKind::kSigned},
    {Type::kS32, "s32", 4, TypeKind::kSigned},
    {Type::kS64, "s64", 8, TypeKind::kSigned},
    {Type::kF16, "f16", 2, TypeKind::kFloat},
    {Type::kF16x2, "f16x2", 4, TypeKind::kFloat},
    {Type::kBF16, "bf16", 2, TypeKind::kFloat},
    {Type::kBF16x2, "bf16x2", 4, TypeKind::kFloat},
    {Type::kTF32, "tf32", 4, TypeKind::kFloat},
    {Type::kF32, "f32", 4, TypeKind::kFloat},
    {Type::kF64, "f64", 8, TypeKind::kFloat},
}};

const TypeInfo& Info(Type type) { return kTypes[static_cast<size_t>(type)]; }

}  // namespace

std::optional<Type> ParseType(std::string_view name) {
  if (!name.empty() && name.front() == '.') name.remove_prefix(1);
  for (const TypeInfo& info : kTypes) {
    if (info.type != Type::kNone && name == info.name) return info.type;
  }
  return std::nullopt;
}

const char* TypeName(Type type) { return Info(type).name; }
int TypeSize(Type type) { return Info(type).size; }
TypeKind KindOf(Type type) { return Info(type).kind; }

bool RegisterFits(Type register_type, Type instruction_type, bool allow_wider) {
  if (register_type == instruction_type) return true;
  const TypeKind rk = KindOf(register_type);
  const TypeKind ik = KindOf(instruction_type);
  if (rk == TypeKind::kPred || ik == TypeKind::kPred) return false;
  const int rs = TypeSize(register_type);
  const int is = TypeSize(instruction_type);
  if (allow_wider) {
    // ld/st/cvt: a wider register holds a narrower integer or bit value; floats must match in
    // size except through a bit-size register (PTX ISA "Operand Size Exceeding Instruction-Type
    // Size").
    if (rs > is) return rk != TypeKind::kFloat && ik != TypeKind::kFloat ? true : rk == TypeKind::kBits;
  }
  if (rs != is) return false;
  if (rk == TypeKind::kBits || ik == TypeKind::kBits) return true;
  const bool r_int = rk == TypeKind::kSigned || rk == TypeKind::kUnsigned;
  const bool i_int = ik == TypeKind::kSigned || ik == TypeKind::kUnsigned;
  if (r_int && i_int) return true;
  // f16x2/bf16x2 values live in .b32 registers; .f16 and .bf16 in .b16 (handled above); an
  // .f32 register may hold a tf32 operand.
  if (register_type == Type::kF32 && instruction_type == Type::kTF32) return true;
  return false;
}

}  // namespace ember::vgpu::ptx
