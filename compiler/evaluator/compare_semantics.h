// What `compare` means for one pair of elements, shared by the compare op and by compiled scalar
// regions (sort comparators): the direction and compare type read from the instruction, and the
// element predicate for every element type. The semantics are described in eval_compare.cc.
#ifndef EMBER_COMPILER_EVALUATOR_COMPARE_SEMANTICS_H_
#define EMBER_COMPILER_EVALUATOR_COMPARE_SEMANTICS_H_

#include "absl/status/statusor.h"
#include "compiler/evaluator/eval_util.h"

namespace ember::eval {

enum class Direction { kEq, kNe, kGe, kGt, kLe, kLt };
enum class CompareType { kSigned, kUnsigned, kFloat, kTotalOrder };

// comparison_direction of a compare instruction.
absl::StatusOr<Direction> ParseDirection(const ir::Instruction& instruction);
// compare_type of a compare instruction over elements of `type` (absent: the type's natural one);
// an error when it does not apply to the type.
absl::StatusOr<CompareType> ParseCompareType(const ir::Instruction& instruction,
                                             ir::ElementType type);

template <typename K>
bool Holds(Direction d, K a, K b) {
  switch (d) {
    case Direction::kEq:
      return a == b;
    case Direction::kNe:
      return a != b;
    case Direction::kGe:
      return a >= b;
    case Direction::kGt:
      return a > b;
    case Direction::kLe:
      return a <= b;
    case Direction::kLt:
      return a < b;
  }
  return false;
}

// A signed integer whose order is IEEE totalOrder on the encoding (sign-magnitude bits mapped to
// two's complement). f8E8M0FNU has no sign bit: its encodings are already ordered.
template <typename T>
int64_t TotalOrderKey(T x) {
  constexpr int kBits = BitWidthOf<T>();
  const uint64_t bits = FloatBits(x);
  if constexpr (std::is_same_v<T, ir::F8E8M0FNU>) {
    return static_cast<int64_t>(bits);
  } else {
    const uint64_t sign = uint64_t{1} << (kBits - 1);
    const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
    return (bits & sign) ? -magnitude - 1 : magnitude;  // -0 sorts just below +0
  }
}

template <typename T>
bool CompareElements(Direction d, CompareType type, T a, T b) {
  if constexpr (kIsPred<T>) {
    return Holds(d, static_cast<int>(a), static_cast<int>(b));
  } else if constexpr (kIsInt<T>) {
    if (type == CompareType::kSigned) {
      constexpr int kWidth = BitWidthOf<T>();
      auto sext = [](uint64_t v) {
        if (kWidth < 64 && ((v >> (kWidth - 1)) & 1)) v |= ~((uint64_t{1} << kWidth) - 1);
        return static_cast<int64_t>(v);
      };
      return Holds(d, sext(IntToU64(a)), sext(IntToU64(b)));
    }
    constexpr int kWidth = BitWidthOf<T>();
    constexpr uint64_t kMask = kWidth == 64 ? ~uint64_t{0} : (uint64_t{1} << kWidth) - 1;
    return Holds(d, IntToU64(a) & kMask, IntToU64(b) & kMask);
  } else if constexpr (kIsRealFloat<T>) {
    if (type == CompareType::kTotalOrder) return Holds(d, TotalOrderKey(a), TotalOrderKey(b));
    return Holds(d, FloatToDouble(a), FloatToDouble(b));  // IEEE: NaN only satisfies NE
  } else {
    static_assert(kIsComplex<T>);
    const bool eq = a.real() == b.real() && a.imag() == b.imag();
    auto less = [](T x, T y) {
      return x.real() < y.real() || (x.real() == y.real() && x.imag() < y.imag());
    };
    switch (d) {
      case Direction::kEq:
        return eq;
      case Direction::kNe:
        return !eq;
      case Direction::kLt:
        return less(a, b);
      case Direction::kLe:
        return less(a, b) || eq;
      case Direction::kGt:
        return less(b, a);
      case Direction::kGe:
        return less(b, a) || eq;
    }
    return false;
  }
}

}  // namespace ember::eval

#endif  // EMBER_COMPILER_EVALUATOR_COMPARE_SEMANTICS_H_
