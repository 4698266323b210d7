// Module structure (computations end in a return, values are defined before use in the same or
// an enclosing computation, regions belong to one op) and the dispatch to the per-family checks.
#include "compiler/ir/verifier.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/verifier_internal.h"

namespace ember::ir {
namespace verifier {

std::string Dims(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

ValueType TensorOf(ElementType type, const std::vector<int64_t>& dims) {
  absl::StatusOr<Shape> shape = Shape::MakeDynamic(type, dims);
  return ValueType::Tensor(shape.ok() ? *std::move(shape) : Shape::Scalar(type));
}

std::vector<ValueType> ResultTypesOf(const Computation& c) { return c.result_types(); }

absl::Status OpChecker::OperandCount(size_t n) const {
  if (num_operands() != n) return Error("expects ", n, " operands, got ", num_operands());
  return absl::OkStatus();
}
absl::Status OpChecker::OperandCountAtLeast(size_t n) const {
  if (num_operands() < n) return Error("expects at least ", n, " operands, got ", num_operands());
  return absl::OkStatus();
}
absl::Status OpChecker::ResultCount(size_t n) const {
  if (num_results() != n) return Error("expects ", n, " results, got ", num_results());
  return absl::OkStatus();
}
absl::Status OpChecker::RegionCount(size_t n) const {
  if (inst_.regions().size() != n) {
    return Error("expects ", n, " regions, got ", inst_.regions().size());
  }
  return absl::OkStatus();
}
absl::Status OpChecker::TensorOperand(size_t i) const {
  if (!operand(i).is_tensor()) {
    return Error("operand ", i, " must be a tensor, got ", operand(i).ToString());
  }
  return absl::OkStatus();
}
absl::Status OpChecker::TensorResult(size_t i) const {
  if (!result(i).is_tensor()) {
    return Error("result ", i, " must be a tensor, got ", result(i).ToString());
  }
  return absl::OkStatus();
}
absl::Status OpChecker::AllTensors() const {
  for (size_t i = 0; i < num_operands(); ++i) {
    absl::Status s = TensorOperand(i);
    if (!s.ok()) return s;
  }
  for (size_t i = 0; i < num_results(); ++i) {
    absl::Status s = TensorResult(i);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}
absl::Status OpChecker::ResultIs(size_t i, const ValueType& inferred) const {
  // With dynamic dims on either side the spec asks for compatible types, not equal ones.
  const bool ok = result(i).is_static() && inferred.is_static() ? result(i) == inferred
                                                                 : result(i).IsCompatibleWith(inferred);
  if (!ok) {
    return Error(num_results() == 1 ? std::string("result type ") : absl::StrCat("result ", i, " type "),
                 result(i).ToString(), " does not match the inferred ", inferred.ToString());
  }
  return absl::OkStatus();
}
absl::Status OpChecker::ResultDims(size_t i, const std::vector<int64_t>& dims) const {
  if (!result(i).is_tensor() ||
      !result(i).IsCompatibleWith(TensorOf(result(i).element_type(), dims))) {
    return Error("result shape ", result(i).ToString(), " does not match the inferred shape ",
                 Dims(dims));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> OpChecker::Int(const char* name) const {
  const Attribute* a = inst_.attribute(name);
  if (a == nullptr || a->kind != Attribute::Kind::kInt) {
    return Error("missing integer attribute ", name);
  }
  return a->i;
}
absl::StatusOr<std::vector<int64_t>> OpChecker::Ints(const char* name) const {
  const Attribute* a = inst_.attribute(name);
  if (a == nullptr || a->kind != Attribute::Kind::kInts) {
    return Error("missing integer-list attribute ", name);
  }
  return a->ints;
}
absl::StatusOr<std::string> OpChecker::String(const char* name) const {
  const Attribute* a = inst_.attribute(name);
  if (a == nullptr || a->kind != Attribute::Kind::kString) {
    return Error("missing string attribute ", name);
  }
  return a->s;
}
int64_t OpChecker::IntOr(const char* name, int64_t def) const {
  const Attribute* a = inst_.attribute(name);
  return a != nullptr && a->kind == Attribute::Kind::kInt ? a->i : def;
}
bool OpChecker::BoolOr(const char* name, bool def) const {
  const Attribute* a = inst_.attribute(name);
  return a != nullptr && a->kind == Attribute::Kind::kBool ? a->b : def;
}
std::vector<int64_t> OpChecker::IntsOr(const char* name, std::vector<int64_t> def) const {
  const Attribute* a = inst_.attribute(name);
  return a != nullptr && a->kind == Attribute::Kind::kInts ? a->ints : def;
}

absl::Status OpChecker::DimInRange(const char* name, size_t i, int64_t v, int64_t rank) const {
  if (v < 0 || v >= rank) {
    return Error(name, "[", i, "] = ", v, " is out of range for rank ", rank);
  }
  return absl::OkStatus();
}
absl::Status OpChecker::DimsInRange(const char* name, const std::vector<int64_t>& dims,
                                    int64_t rank) const {
  for (size_t i = 0; i < dims.size(); ++i) {
    absl::Status s = DimInRange(name, i, dims[i], rank);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}
absl::Status OpChecker::DimsUnique(const char* name, const std::vector<int64_t>& dims) const {
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    if (!seen.insert(d).second) return Error(name, " ", Dims(dims), " repeats dimension ", d);
  }
  return absl::OkStatus();
}
absl::Status OpChecker::DimsSorted(const char* name, const std::vector<int64_t>& dims) const {
  if (!std::is_sorted(dims.begin(), dims.end())) {
    return Error(name, " ", Dims(dims), " must be sorted");
  }
  return absl::OkStatus();
}
absl::Status OpChecker::SizeIs(const char* name, const std::vector<int64_t>& v, size_t n,
                               const char* what) const {
  if (v.size() != n) return Error(name, " has ", v.size(), " elements, expected ", n, " (", what, ")");
  return absl::OkStatus();
}

absl::StatusOr<int64_t> OpChecker::WindowCount(size_t dim, int64_t size, int64_t base_dilation,
                                               int64_t low, int64_t high, int64_t window,
                                               int64_t window_dilation, int64_t stride) const {
  int64_t dilated = 0, padded = 0, dilated_window = 0;
  const bool overflow =
      (size > 0 && (__builtin_mul_overflow(size - 1, base_dilation, &dilated) ||
                    __builtin_add_overflow(dilated, 1, &dilated))) ||
      __builtin_add_overflow(dilated, low, &padded) ||
      __builtin_add_overflow(padded, high, &padded) ||
      __builtin_mul_overflow(window - 1, window_dilation, &dilated_window) ||
      __builtin_add_overflow(dilated_window, 1, &dilated_window);
  if (overflow) {
    return Error("dimension ", dim, ": the dilated and padded input or the dilated window ",
                 "overflows int64 (size ", size, ", dilation ", base_dilation, ", padding (", low,
                 ", ", high, "), window ", window, ", window dilation ", window_dilation, ")");
  }
  if (padded < dilated_window) return 0;
  return (padded - dilated_window) / stride + 1;
}

absl::Status OpChecker::RegionSignature(size_t region, const std::vector<ValueType>& params,
                                        const std::vector<ValueType>& results,
                                        const char* what) const {
  const Computation* r = inst_.regions()[region];
  std::vector<std::string> want, got;
  for (const ValueType& t : params) want.push_back(t.ToString());
  for (const auto& p : r->parameters()) got.push_back(p->type().ToString());
  if (want != got) {
    return Error(what, " takes (", absl::StrJoin(got, ", "), ") but must take (",
                 absl::StrJoin(want, ", "), ")");
  }
  want.clear();
  got.clear();
  for (const ValueType& t : results) want.push_back(t.ToString());
  for (const ValueType& t : r->result_types()) got.push_back(t.ToString());
  if (want != got) {
    return Error(what, " returns (", absl::StrJoin(got, ", "), ") but must return (",
                 absl::StrJoin(want, ", "), ")");
  }
  return absl::OkStatus();
}

namespace {

// `type` with every `?` dimension read as 1 (tensors only; anything else unchanged).
ValueType WithUnitDynamicDims(const ValueType& type) {
  if (!type.is_tensor() || type.is_static()) return type;
  std::vector<int64_t> dims = type.dims();
  for (int64_t& d : dims) {
    if (d == kDynamicDim) d = 1;
  }
  absl::StatusOr<Shape> shape = type.shape().is_quantized()
                                    ? Shape::MakeQuantized(*type.shape().quantized(), dims)
                                    : Shape::Make(type.element_type(), dims);
  return shape.ok() ? ValueType::Tensor(*std::move(shape)) : type;
}

}  // namespace

absl::Status VerifyFamilies(const OpChecker& c) {
  const Instruction& inst = c.inst();
  bool dynamic = false;
  std::vector<ValueType> operands, results;
  for (size_t i = 0; i < c.num_operands(); ++i) {
    dynamic = dynamic || !c.operand(i).is_static();
    operands.push_back(WithUnitDynamicDims(c.operand(i)));
  }
  for (size_t i = 0; i < c.num_results(); ++i) {
    dynamic = dynamic || !c.result(i).is_static();
    results.push_back(WithUnitDynamicDims(c.result(i)));
  }
  // The static rules do arithmetic on sizes, which a `?` (kDynamicDim, INT64_MIN) would
  // overflow: they see every `?` as 1. A failure then goes to VerifyDynamicFallback (below),
  // and a dynamic op passes only the checks that hold for every refinement until refine_shapes
  // makes it static and it is verified in full.
  const OpChecker unit(inst, std::move(operands), std::move(results));
  const OpChecker& checked = dynamic ? unit : c;
  for (auto* family : {&VerifyElementwise, &VerifyShapeOp, &VerifyLinalg, &VerifyControl,
                       &VerifyGatherScatter, &VerifyDynamicShapeOp}) {
    absl::Status s = (*family)(family == &VerifyDynamicShapeOp ? c : checked);
    if (!s.ok()) {
      // The static rules compute sizes from operand dims; a `?` in them makes some of those
      // rules unanswerable (a sum or product with an unknown size). Such ops get the rules that
      // hold for every refinement (ranks, element types, compatible known dims) and are checked
      // in full once refine_shapes has made them static.
      if (dynamic) return VerifyDynamicFallback(c, s, family == &VerifyElementwise);
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace verifier

namespace {

using verifier::OpChecker;

absl::Status VerifyCallLike(const OpChecker& c) {
  const Computation* callee = c.inst().callee();
  if (callee == nullptr) return c.Error("has no callee");
  if (callee->parameters().size() != c.num_operands()) {
    return c.Error("passes ", c.num_operands(), " operands to @", callee->name(), ", which takes ",
                   callee->parameters().size());
  }
  for (size_t i = 0; i < c.num_operands(); ++i) {
    if (callee->parameter(i)->type() != c.operand(i)) {
      return c.Error("operand ", i, " has type ", c.operand(i).ToString(), " but @",
                     callee->name(), " takes ", callee->parameter(i)->type().ToString());
    }
  }
  std::vector<ValueType> results = callee->result_types();
  if (results.size() != c.num_results()) {
    return c.Error("has ", c.num_results(), " results but @", callee->name(), " returns ",
                   results.size());
  }
  for (size_t i = 0; i < results.size(); ++i) {
    absl::Status s = c.ResultIs(i, results[i]);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status VerifyOp(const Instruction& inst) {
  OpChecker c(inst);
  switch (inst.opcode()) {
    case Opcode::kReturn: return absl::OkStatus();
    case Opcode::kCall: return VerifyCallLike(c);
    case Opcode::kComposite: {
      absl::Status s = VerifyCallLike(c);
      if (!s.ok()) return s;
      return c.String("name").status();
    }
    default: break;
  }
  if (verifier::UsesQuantizedTypes(inst)) return verifier::VerifyQuantized(inst);
  return verifier::VerifyFamilies(c);
}

}  // namespace

absl::Status VerifyInstruction(const Instruction& instruction) { return VerifyOp(instruction); }

absl::Status Verify(const Module& module) {
  // Which computation encloses each region (for values captured from enclosing scopes).
  std::unordered_map<const Computation*, const Computation*> parent;
  std::unordered_set<const Computation*> functions(module.functions().begin(),
                                                   module.functions().end());
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      for (const Computation* r : inst->regions()) {
        if (r == nullptr || r->module() != &module) {
          return absl::InvalidArgumentError(
              absl::StrCat(inst->Describe(), ": a region is not a computation of the module"));
        }
        if (functions.count(r) != 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              inst->Describe(), ": function @", r->name(), " is used as a region"));
        }
        if (!parent.emplace(r, c.get()).second) {
          return absl::InvalidArgumentError(absl::StrCat(
              inst->Describe(), ": region @", r->name(), " belongs to two ops"));
        }
      }
      if (inst->callee() != nullptr && functions.count(inst->callee()) == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            inst->Describe(), ": callee @", inst->callee()->name(), " is not a function"));
      }
    }
  }
  for (const auto& c : module.computations()) {
    const auto& insts = c->instructions();
    if (insts.empty() || insts.back()->opcode() != Opcode::kReturn) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation @", c->name(), " does not end with a return"));
    }
    if (functions.count(c.get()) == 0 && parent.count(c.get()) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("region @", c->name(), " is not used by any op"));
    }
    std::unordered_set<const Value*> defined;
    for (const auto& p : c->parameters()) defined.insert(p.get());
    for (size_t k = 0; k < insts.size(); ++k) {
      const Instruction& inst = *insts[k];
      if (inst.opcode() == Opcode::kReturn && k + 1 != insts.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat(inst.Describe(), ": a return must be the last op of @", c->name()));
      }
      for (size_t i = 0; i < inst.operands().size(); ++i) {
        const Value* v = inst.operand(i);
        bool ok = v != nullptr && defined.count(v) != 0;
        if (!ok && v != nullptr) {
          // A value of an enclosing computation (regions may capture them).
          for (auto it = parent.find(c.get()); it != parent.end(); it = parent.find(it->second)) {
            if (v->owner() == it->second) ok = true;
          }
        }
        if (!ok) {
          return absl::InvalidArgumentError(absl::StrCat(
              inst.Describe(), ": operand ", i, " is not defined before its use in @", c->name()));
        }
      }
      absl::Status s = VerifyOp(inst);
      if (!s.ok()) return s;
      for (size_t i = 0; i < inst.num_results(); ++i) defined.insert(inst.result(i));
    }
  }
  return absl::OkStatus();
}

}  // namespace ember::ir
