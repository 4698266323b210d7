// The elemental emitter: LLVM IR computing one output element of an elementwise instruction from
// its operands' elements, with exactly the reference evaluator's semantics (NaN, signed zero,
// integer division by zero and overflow, shift amounts, saturating conversions). Target neutral:
// it only uses an IRBuilder, so the host (x86-64 JIT) and GPU (NVPTX) kernel emitters share it.
// Values are held in a "compute" type (pred i1, integers iN, f32/f64, bf16/f16 and the f8/f6/f4
// formats as f32 rounded to their precision, c64/c128 as the struct {re, im}) and moved to and
// from memory in a "storage" type (pred, sub-byte integers and f8/f6/f4 i8, bf16/f16 i16; the
// others as computed).
#ifndef EMBER_COMPILER_CODEGEN_ELEMENTAL_EMITTER_H_
#define EMBER_COMPILER_CODEGEN_ELEMENTAL_EMITTER_H_

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/float_formats.h"
#include "compiler/ir/element_type.h"
#include "compiler/ir/module.h"
#include "llvm/IR/IRBuilder.h"

namespace ember::codegen {

class ElementalEmitter {
 public:
  // `builder` inserts where the caller points it; the emitter adds no blocks (selects only), so
  // its code sits inside any loop body and vectorizes.
  explicit ElementalEmitter(llvm::IRBuilderBase& builder) : b_(builder) {}

  llvm::Type* ComputeType(ir::ElementType type) const;
  llvm::Type* StorageType(ir::ElementType type) const;
  // f16 loads keep signalling NaNs (FromStorage), and TOTALORDER compares of f16 are emitted
  // (ElementalOpSupported's exact_f16): for a sort comparator, a few loads per call.
  void set_exact_f16(bool exact) { exact_f16_ = exact; }

  // A loaded element to the compute type, and back (bf16/f16 round to nearest even here).
  llvm::Value* FromStorage(ir::ElementType type, llvm::Value* stored);
  llvm::Value* ToStorage(ir::ElementType type, llvm::Value* value);
  // A scalar of `type` in the compute type (from the literal's bytes).
  llvm::Value* Constant(ir::ElementType type, const uint8_t* bytes);

  // One element of `instruction` (ElementalOpSupported) from its operands' elements, all in
  // their compute types.
  absl::StatusOr<llvm::Value*> EmitElementwise(const ir::Instruction& instruction,
                                               absl::Span<llvm::Value* const> operands);

  // The values `region` returns for arguments `args` (compute types), its instructions emitted
  // in order: a scalar region ScalarRegionSupported takes (a reduce body, a comparator).
  absl::StatusOr<std::vector<llvm::Value*>> EmitRegion(const ir::Computation& region,
                                                       absl::Span<llvm::Value* const> args);

  // `x` of type `from` converted to `to`, as the evaluator's ConvertElement (stablehlo.convert
  // of one element; an iota's index).
  llvm::Value* ConvertElement(ir::ElementType from, ir::ElementType to, llvm::Value* x) {
    return Convert(from, to, x);
  }

  // op(x, y) of a binary op the elemental emitter takes (a reduce body's fold).
  llvm::Value* EmitBinary(ir::Opcode op, ir::ElementType type, llvm::Value* x, llvm::Value* y) {
    return Binary(op, type, x, y);
  }

 private:
  llvm::Value* Binary(ir::Opcode op, ir::ElementType type, llvm::Value* x, llvm::Value* y);
  llvm::Value* Unary(ir::Opcode op, ir::ElementType type, llvm::Value* x);
  llvm::Value* Compare(const ir::Instruction& instruction, llvm::Value* x, llvm::Value* y);
  llvm::Value* Convert(ir::ElementType from, ir::ElementType to, llvm::Value* x);
  llvm::Value* Maximum(ir::ElementType type, llvm::Value* x, llvm::Value* y, bool max);
  llvm::Value* IntDivide(ir::ElementType type, llvm::Value* x, llvm::Value* y, bool remainder);
  llvm::Value* Shift(ir::Opcode op, ir::ElementType type, llvm::Value* x, llvm::Value* y);
  // A value computed in f32 for a bf16/f16 result, rounded to that precision (identity for
  // other types).
  llvm::Value* Round(ir::ElementType type, llvm::Value* value);
  llvm::Value* F32ToBF16Bits(llvm::Value* f);
  llvm::Value* Intrinsic(llvm::Intrinsic::ID id, llvm::Value* x);
  // a * b + c, fused where the host has fused multiply-adds (llvm.fmuladd): the polynomial
  // cores' steps, one rounding and half the latency each.
  llvm::Value* FusedMulAdd(llvm::Value* a, llvm::Value* b, llvm::Value* c);
  // Transcendentals (elemental_math.cc).
  llvm::Value* Math(ir::Opcode op, ir::ElementType type, llvm::Value* x, llvm::Value* y);
  llvm::Value* ExpF32(llvm::Value* x);
  llvm::Value* LogF32(llvm::Value* x);
  llvm::Value* TanhF32(llvm::Value* x);
  llvm::Value* LibmDouble(const char* name, llvm::Value* x, llvm::Value* y = nullptr);
  // An f8/f6/f4 format's stored byte as the f32 of its value, and an f32 rounded once to the
  // format's byte (elemental_narrow.cc).
  llvm::Value* DecodeNarrow(const FloatFormat& format, llvm::Value* stored);
  llvm::Value* EncodeNarrow(const FloatFormat& format, llvm::Value* value);
  // A double rounded once to bf16/f16, in the compute type.
  llvm::Value* NarrowFromDouble(ir::ElementType type, llvm::Value* d);
  // An integer of `from` rounded once to bf16/f16 (to double rounding to odd, then to the narrow
  // type: the evaluator's IntegerToDoubleRoundToOdd), in the compute type.
  llvm::Value* IntegerToNarrow(ir::ElementType from, ir::ElementType to, llvm::Value* x);
  // Complex numbers (elemental_complex.cc): a value is the struct {re, im} of its part type.
  static ir::ElementType ComplexPart(ir::ElementType type);
  llvm::Value* MakeComplex(ir::ElementType type, llvm::Value* re, llvm::Value* im);
  llvm::Value* Re(llvm::Value* z);
  llvm::Value* Im(llvm::Value* z);
  std::pair<llvm::Value*, llvm::Value*> ToDoubleParts(llvm::Value* z);
  llvm::Value* FromDoubleParts(ir::ElementType type, llvm::Value* re, llvm::Value* im);
  llvm::Value* ComplexCall(const char* name, llvm::ArrayRef<llvm::Value*> args);
  // (a + bi)(c + di) in double, bit for bit libgcc's __muldc3 (C's Annex G): inline, the call
  // only on the rare branch where both parts are NaN (the insert point moves to a new block).
  std::pair<llvm::Value*, llvm::Value*> MultiplyDoubleParts(llvm::Value* a, llvm::Value* b,
                                                            llvm::Value* c, llvm::Value* d);
  // {x, y}, or where both are NaN the double _Complex result of calling `name` on `args`, on a
  // rare branch (the insert point moves to a new block).
  std::pair<llvm::Value*, llvm::Value*> CallWhereBothNan(const char* name,
                                                         llvm::ArrayRef<llvm::Value*> args,
                                                         llvm::Value* x, llvm::Value* y);
  // (a + bi) / (c + di) in double, bit for bit libgcc's __divdc3 (GCC 12's scaled Smith
  // division and C's Annex G recovery): inline and branch-free.
  std::pair<llvm::Value*, llvm::Value*> DivideDoubleParts(llvm::Value* a, llvm::Value* b,
                                                          llvm::Value* c, llvm::Value* d);
  llvm::Value* ComplexAbs(llvm::Value* re, llvm::Value* im);
  // A conversion from or to a complex type.
  llvm::Value* ComplexConvert(ir::ElementType from, ir::ElementType to, llvm::Value* x);
  // add, subtract, multiply, divide, maximum or minimum of two complex numbers.
  llvm::Value* ComplexBinary(ir::Opcode op, ir::ElementType type, llvm::Value* x, llvm::Value* y);
  // An elementwise op with a complex result or operand (ElementalOpSupported's complex ops).
  absl::StatusOr<llvm::Value*> EmitComplex(const ir::Instruction& instruction,
                                           absl::Span<llvm::Value* const> operands);
  absl::StatusOr<llvm::Value*> ComplexMath(ir::Opcode op, ir::ElementType type, llvm::Value* x,
                                           llvm::Value* y);
  // reduce_precision of a float of `type` (the evaluator's bit algorithm, on the type's own
  // encoding).
  llvm::Value* ReducePrecision(ir::ElementType type, llvm::Value* x, int64_t exponent_bits,
                               int64_t mantissa_bits);

  llvm::IRBuilderBase& b_;
  bool exact_f16_ = false;
};

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_ELEMENTAL_EMITTER_H_
