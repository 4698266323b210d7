// A runtime value of the reference evaluator: a dense array (Literal, row-major layout), a token,
// a tuple of values, or a future (the ready values of an async_start: the evaluator runs
// asynchronous ops to completion when they start, as the spec allows).
#ifndef EMBER_COMPILER_EVALUATOR_EVAL_VALUE_H_
#define EMBER_COMPILER_EVALUATOR_EVAL_VALUE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/value_type.h"

namespace ember::eval {

struct EvalValue {
  enum class Kind { kArray, kToken, kTuple, kFuture };
  Kind kind = Kind::kArray;
  ir::Literal array;               // kArray (row-major)
  std::vector<EvalValue> elements;  // kTuple, kFuture

  static EvalValue Array(ir::Literal literal) {
    EvalValue v;
    v.array = std::move(literal);
    return v;
  }
  static EvalValue Token() {
    EvalValue v;
    v.kind = Kind::kToken;
    return v;
  }
  static EvalValue Tuple(std::vector<EvalValue> elements) {
    EvalValue v;
    v.kind = Kind::kTuple;
    v.elements = std::move(elements);
    return v;
  }
  static EvalValue Future(std::vector<EvalValue> elements) {
    EvalValue v;
    v.kind = Kind::kFuture;
    v.elements = std::move(elements);
    return v;
  }
  // A deep copy. Clone() aborts if memory runs out; TryClone() returns the error instead.
  EvalValue Clone() const;
  absl::StatusOr<EvalValue> TryClone() const;
  // The value's type in IR terms (tensor type of the array, token, or tuple / future of those).
  ir::ValueType Type() const;
};

}  // namespace ember::eval

#endif  // EMBER_COMPILER_EVALUATOR_EVAL_VALUE_H_
