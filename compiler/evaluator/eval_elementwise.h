// Internal to compiler/evaluator: how the elementwise family is split across files (unary, binary,
// convert, compare), and element semantics more than one op needs (maximum/minimum are also
// clamp's, shape checks are every elementwise op's).
#ifndef EMBER_COMPILER_EVALUATOR_EVAL_ELEMENTWISE_H_
#define EMBER_COMPILER_EVALUATOR_EVAL_ELEMENTWISE_H_

#include <cmath>
#include <complex>
#include <optional>

#include "compiler/evaluator/eval_util.h"

namespace ember::eval {

void RegisterUnaryOps(OpTable& table);   // eval_unary.cc
void RegisterBinaryOps(OpTable& table);  // eval_binary.cc
void RegisterConvertOps(
    OpTable& table);  // eval_convert.cc: convert, bitcast_convert, reduce_precision
void RegisterCompareOps(OpTable& table);  // eval_compare.cc: compare, select, clamp

// ---- Fast path for regions that are one binary op ----------------------------------------------
// reduce (and windowed reductions) call their body once per element; most bodies are a single
// add / multiply / maximum / minimum / and / or / xor of their two parameters. Folding those
// directly gives bit-identical results (the same element functions) many times faster.

struct SimpleBinaryRegion {
  ir::Opcode opcode;
  bool accumulator_first;  // op(p0, p1) rather than op(p1, p0)
};
// Matches a region `(p0: tensor<T>, p1: tensor<T>) { return op(p0, p1) }` (or op(p1, p0)) of a
// foldable opcode, with T = `type`.
std::optional<SimpleBinaryRegion> MatchSimpleBinaryRegion(const ir::Computation& region,
                                                          ir::ElementType type);
// acc[targets[i]] = op(acc[targets[i]], input[i]) for i = 0, 1, ... in order (op(input[i],
// acc[...]) when !accumulator_first). `input` and `acc` share an element type. Returns false,
// touching nothing, when the opcode or element type is not one this path handles.
bool FoldElements(const SimpleBinaryRegion& region, const ir::Literal& input,
                  absl::Span<const int64_t> targets, ir::Literal& acc);
// The same without gathering first: acc[targets[k]] = op(acc[targets[k]], v_k) for k in order,
// where v_k is input[sources[k]], or the scalar `fill` when sources[k] < 0.
bool FoldElementsAt(const SimpleBinaryRegion& region, const ir::Literal& input,
                    absl::Span<const int64_t> sources, const ir::Literal& fill,
                    absl::Span<const int64_t> targets, ir::Literal& acc);
// Cumulative windows along the middle axis of [outer, n, inner] arrays: for every (o, j), the
// line input[o, :, j] is scanned in XLA's order (tree_scan.h) from the init value out[o, 0, j]
// holds on entry, prefixes or (`reverse`) suffixes, into out[o, :, j].
bool ScanElements(const SimpleBinaryRegion& region, const ir::Literal& input, int64_t outer,
                  int64_t n, int64_t inner, bool reverse, ir::Literal& out);

// `array` must have exactly `dims` (elementwise ops do not broadcast implicitly).
absl::Status CheckDims(const ir::Instruction& instruction, const ir::Literal& array,
                       absl::Span<const int64_t> dims, const char* what);
// "stablehlo.popcnt: element type f32 is not supported (expects integer)".
absl::Status UnsupportedType(const ir::Instruction& instruction, ir::ElementType type,
                             const char* expects);

// maximum / minimum of one element type: pred is or / and, integers by value, real floats as
// IEEE-754 maximum / minimum (a NaN operand gives NaN -- the first NaN operand -- and
// -0 < +0), complex numbers lexicographically on (real, imag) as the spec and its reference
// interpreter do.
template <typename T>
T MaxElement(T a, T b) {
  if constexpr (kIsPred<T>) {
    return a || b;
  } else if constexpr (kIsSignedInt<T>) {
    return IntToI64(a) >= IntToI64(b) ? a : b;
  } else if constexpr (kIsUnsignedInt<T>) {
    return IntToU64(a) >= IntToU64(b) ? a : b;
  } else if constexpr (kIsComplex<T>) {
    const bool lhs = a.real() == b.real() ? a.imag() > b.imag() : a.real() > b.real();
    return lhs ? a : b;
  } else {
    const double x = FloatToDouble(a), y = FloatToDouble(b);
    if (std::isnan(x)) return a;
    if (std::isnan(y)) return b;
    if (x == y) return std::signbit(x) ? b : a;  // max(-0, +0) = +0
    return x > y ? a : b;
  }
}

template <typename T>
T MinElement(T a, T b) {
  if constexpr (kIsPred<T>) {
    return a && b;
  } else if constexpr (kIsSignedInt<T>) {
    return IntToI64(a) <= IntToI64(b) ? a : b;
  } else if constexpr (kIsUnsignedInt<T>) {
    return IntToU64(a) <= IntToU64(b) ? a : b;
  } else if constexpr (kIsComplex<T>) {
    const bool lhs = a.real() == b.real() ? a.imag() < b.imag() : a.real() < b.real();
    return lhs ? a : b;
  } else {
    const double x = FloatToDouble(a), y = FloatToDouble(b);
    if (std::isnan(x)) return a;
    if (std::isnan(y)) return b;
    if (x == y) return std::signbit(x) ? a : b;  // min(-0, +0) = -0
    return x < y ? a : b;
  }
}

}  // namespace ember::eval

#endif  // EMBER_COMPILER_EVALUATOR_EVAL_ELEMENTWISE_H_
