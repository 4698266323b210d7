#include "compiler/evaluator/eval_value.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ember::eval {

absl::StatusOr<EvalValue> EvalValue::TryClone() const {
  EvalValue copy;
  copy.kind = kind;
  if (kind == Kind::kArray) {
    absl::StatusOr<ir::Literal> literal = array.Clone();
    if (!literal.ok()) return literal.status();
    copy.array = *std::move(literal);
  }
  copy.elements.reserve(elements.size());
  for (const EvalValue& element : elements) {
    absl::StatusOr<EvalValue> e = element.TryClone();
    if (!e.ok()) return e.status();
    copy.elements.push_back(*std::move(e));
  }
  return copy;
}

EvalValue EvalValue::Clone() const {
  absl::StatusOr<EvalValue> copy = TryClone();
  if (!copy.ok()) {
    // Only allocation can fail here; there is no way to report it through this signature.
    std::fprintf(stderr, "EvalValue::Clone: %s\n", std::string(copy.status().message()).c_str());
    std::abort();
  }
  return *std::move(copy);
}

ir::ValueType EvalValue::Type() const {
  switch (kind) {
    case Kind::kArray:
      return ir::ValueType::Tensor(array.shape());
    case Kind::kToken:
      return ir::ValueType::Token();
    case Kind::kTuple:
    case Kind::kFuture:
      break;
  }
  std::vector<ir::ValueType> types;
  types.reserve(elements.size());
  for (const EvalValue& e : elements) types.push_back(e.Type());
  return kind == Kind::kTuple ? ir::ValueType::Tuple(std::move(types))
                              : ir::ValueType::Future(std::move(types));
}

}  // namespace ember::eval
