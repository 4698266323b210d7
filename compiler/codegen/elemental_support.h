// What the elemental emitter (elemental_emitter.h) can emit, asked without LLVM: the host backend
// and the GPU backend's planner use it to decide which kernels the code generator takes. Target
// neutral; a type or op it accepts is emitted with exactly the reference evaluator's semantics.
#ifndef EMBER_COMPILER_CODEGEN_ELEMENTAL_SUPPORT_H_
#define EMBER_COMPILER_CODEGEN_ELEMENTAL_SUPPORT_H_

#include <cstdint>
#include <vector>

#include "compiler/ir/element_type.h"
#include "compiler/ir/module.h"

namespace ember::codegen {

// Element types held in registers and memory: every element type but token. pred, integers of
// every width (sub-byte ones stored a byte each), f32, f64, c64 and c128, and bf16, f16 and the
// f8/f6/f4 formats as storage types computed in f32 (rounded to the storage type after every
// op, as the evaluator rounds every op's result).
bool ElementalTypeSupported(ir::ElementType type);

// A row-major dense array of an element type the emitter takes (what kernels read and write).
bool ElementalArraySupported(const ir::Value* value);

// The transcendental ops (exp, log, tanh, logistic, expm1, log1p, sin, cos, tan, cbrt, rsqrt;
// power and atan2 binary) the elemental emitter computes in elemental_math.cc, for floats.
bool ElementalMathOp(ir::Opcode opcode);

// Elementwise instructions whose one output element the emitter computes from the operands'
// elements at the same index (not the index-changing ops: those are the kernel emitter's).
// `exact_f16`: f16 values are loaded keeping signalling NaNs (ElementalEmitter::set_exact_f16),
// which TOTALORDER compares of f16 need (the conversion to f32 would quiet such a NaN and move it
// in the order); sort comparators load them so.
bool ElementalOpSupported(const ir::Instruction& instruction, bool exact_f16 = false);

// Whether ElementalEmitter::EmitRegion emits `region`: parameters and values all scalars of the
// emitter's types, computed by scalar constants and ops ElementalOpSupported takes (a reduce
// body such as argmax's, a comparator).
bool ScalarRegionSupported(const ir::Computation& region, bool exact_f16 = false);

// Dimension-number checks the support predicates share: whether `dims` holds `d`, and whether
// `dims` are distinct dims in [0, rank).
bool DimsContain(const std::vector<int64_t>& dims, int64_t d);
bool DistinctDims(const std::vector<int64_t>& dims, int64_t rank);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_ELEMENTAL_SUPPORT_H_
