// Algebraic simplification: rewrites that are exact for every input (bit for bit, signed zeros
// and NaNs included), so results match the unsimplified program:
//   x + 0 -> x (integers; floats only for -0, since -0 + +0 = +0), x - 0 -> x (+0 for floats),
//   x * 1 -> x, x / 1 -> x, reshape/transpose/convert/broadcast_in_dim/slice that change nothing
//   -> their operand, reshape(reshape(x)) -> reshape(x), broadcast_in_dim(broadcast_in_dim(x))
//   -> one broadcast_in_dim, transpose(dot_general(a, b)) -> dot_general(b, a) for a matrix
//   product read only by the transpose (each element is the same products summed in the same
//   order; the kernels then never read a transposed matrix element by element),
//   reshape(all_reduce(reshape(x))) -> all_reduce(x) when the outer reshape restores x's shape
//   (an all-reduce is position-wise; the reshapes were copies around it), custom_call
//   @Sharding(x) -> x (a sharding constraint left after spmd-partition, which has already split
//   the program as it says or found nothing split, or in a program of one device: the value
//   itself, which the evaluator's op table copied).
#include <cmath>
#include <cstring>
#include <numeric>
#include <unordered_set>

#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

using ir::Opcode;

template <typename T>
bool AllEqual(const ir::Literal& literal, T value) {
  absl::StatusOr<absl::Span<const T>> data = literal.data<T>();
  if (!data.ok()) return false;
  for (T x : *data) {
    if (std::memcmp(&x, &value, sizeof(T)) != 0) return false;
  }
  return true;
}

enum class Splat { kPositiveZero, kNegativeZero, kOne };

// Is `value` a constant (or a broadcast of one) whose every element is the given splat?
bool IsSplat(const ir::Value* value, Splat splat) {
  const ir::Instruction* producer = value->producer();
  for (int depth = 0; producer != nullptr && depth < 4; ++depth) {
    if (producer->opcode() == Opcode::kBroadcastInDim || producer->opcode() == Opcode::kReshape) {
      producer = producer->operand(0)->producer();
      continue;
    }
    break;
  }
  if (producer == nullptr || producer->opcode() != Opcode::kConstant) return false;
  const ir::Attribute* attr = producer->attribute("value");
  if (attr == nullptr || attr->kind != ir::Attribute::Kind::kLiteral || attr->literal == nullptr) {
    return false;
  }
  const ir::Literal& lit = *attr->literal;
  switch (lit.element_type()) {
    case ir::ElementType::kF32:
      return AllEqual<float>(lit, splat == Splat::kOne ? 1.0f
                                  : splat == Splat::kNegativeZero ? -0.0f : 0.0f);
    case ir::ElementType::kF64:
      return AllEqual<double>(lit, splat == Splat::kOne ? 1.0
                                   : splat == Splat::kNegativeZero ? -0.0 : 0.0);
    case ir::ElementType::kS32:
      return AllEqual<int32_t>(lit, splat == Splat::kOne ? 1 : 0);
    case ir::ElementType::kS64:
      return AllEqual<int64_t>(lit, splat == Splat::kOne ? 1 : 0);
    case ir::ElementType::kU32:
      return AllEqual<uint32_t>(lit, splat == Splat::kOne ? 1u : 0u);
    case ir::ElementType::kU64:
      return AllEqual<uint64_t>(lit, splat == Splat::kOne ? 1u : 0u);
    default:
      return false;
  }
}

bool IsZeroFor(const ir::Value* value, bool float_needs_negative) {
  const ir::ElementType t = value->type().element_type();
  if (ir::IsFloat(t)) {
    return IsSplat(value, float_needs_negative ? Splat::kNegativeZero : Splat::kPositiveZero);
  }
  return IsSplat(value, Splat::kPositiveZero);
}

bool IsIota(const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The value `inst` can be replaced with, or null.
ir::Value* Simplify(ir::Instruction& inst) {
  if (inst.num_results() != 1 || !inst.result()->type().is_tensor()) return nullptr;
  const ir::ValueType& type = inst.result()->type();
  auto same = [&](ir::Value* v) { return v->type() == type ? v : nullptr; };
  switch (inst.opcode()) {
    case Opcode::kAdd:
      if (IsZeroFor(inst.operand(1), true)) return same(inst.operand(0));
      if (IsZeroFor(inst.operand(0), true)) return same(inst.operand(1));
      return nullptr;
    case Opcode::kSubtract:
      if (IsZeroFor(inst.operand(1), false)) return same(inst.operand(0));
      return nullptr;
    case Opcode::kMultiply:
      if (IsSplat(inst.operand(1), Splat::kOne)) return same(inst.operand(0));
      if (IsSplat(inst.operand(0), Splat::kOne)) return same(inst.operand(1));
      return nullptr;
    case Opcode::kDivide:
      if (IsSplat(inst.operand(1), Splat::kOne)) return same(inst.operand(0));
      return nullptr;
    case Opcode::kReshape: {
      ir::Value* x = inst.operand(0);
      if (x->producer() != nullptr && x->producer()->opcode() == Opcode::kReshape) {
        inst.set_operand(0, x->producer()->operand(0));  // reshape(reshape(y)) = reshape(y)
        x = inst.operand(0);
      }
      return same(x);
    }
    case Opcode::kConvert:
      return same(inst.operand(0));
    case Opcode::kTranspose: {
      const std::vector<int64_t>* perm = IntsAttribute(inst, "permutation");
      if (perm != nullptr && IsIota(*perm)) return same(inst.operand(0));
      return nullptr;
    }
    case Opcode::kSlice: {
      const std::vector<int64_t>* strides = IntsAttribute(inst, "strides");
      if (strides != nullptr) {
        for (int64_t s : *strides) {
          if (s != 1) return nullptr;
        }
      }
      return same(inst.operand(0));  // same type with unit strides: the whole operand
    }
    case Opcode::kBroadcastInDim: {
      const std::vector<int64_t>* dims = IntsAttribute(inst, "broadcast_dimensions");
      if (dims == nullptr) return nullptr;
      ir::Value* x = inst.operand(0);
      const ir::Instruction* inner = x->producer();
      if (inner != nullptr && inner->opcode() == Opcode::kBroadcastInDim) {
        const std::vector<int64_t>* inner_dims = IntsAttribute(*inner, "broadcast_dimensions");
        if (inner_dims != nullptr) {
          std::vector<int64_t> composed;
          for (int64_t d : *inner_dims) {
            if (d < 0 || d >= static_cast<int64_t>(dims->size())) return nullptr;
            composed.push_back((*dims)[d]);
          }
          inst.set_operand(0, inner->operand(0));
          inst.mutable_attributes().Set("broadcast_dimensions", ir::Attribute::Ints(composed));
          dims = IntsAttribute(inst, "broadcast_dimensions");
          x = inst.operand(0);
        }
      }
      if (IsIota(*dims) && dims->size() == type.dims().size()) return same(x);
      return nullptr;
    }
    case Opcode::kCustomCall:
      if (IsShardingConstraint(inst) && inst.operands().size() == 1) return same(inst.operand(0));
      return nullptr;
    default:
      return nullptr;
  }
}

// transpose(dot_general(a, b), [1, 0]) with one free dim per operand and no batch dims, when the
// transpose is the product's only reader: swaps the product's operands (and their attributes) and
// gives it the transpose's type. Returns the rewritten product, or null.
ir::Value* FoldTransposeIntoDot(ir::Instruction& transpose,
                                std::unordered_map<const ir::Value*, int64_t>& uses) {
  const std::vector<int64_t>* perm = IntsAttribute(transpose, "permutation");
  if (perm == nullptr || *perm != std::vector<int64_t>{1, 0}) return nullptr;
  ir::Value* product = transpose.operand(0);
  ir::Instruction* dot = product->producer();
  if (dot == nullptr || dot->opcode() != Opcode::kDotGeneral || dot->num_results() != 1 ||
      dot->operands().size() != 2 || !dot->regions().empty()) {
    return nullptr;
  }
  auto count = uses.find(product);
  if (count == uses.end() || count->second != 1) return nullptr;
  for (const auto& [name, attr] : dot->attributes().entries()) {
    if (name != "lhs_batching_dimensions" && name != "rhs_batching_dimensions" &&
        name != "lhs_contracting_dimensions" && name != "rhs_contracting_dimensions" &&
        name != "precision_config") {
      return nullptr;  // algorithm attributes name the operands' roles: leave them be
    }
  }
  for (const char* batch : {"lhs_batching_dimensions", "rhs_batching_dimensions"}) {
    const std::vector<int64_t>* b = IntsAttribute(*dot, batch);
    if (b != nullptr && !b->empty()) return nullptr;
  }
  const std::vector<int64_t>* lc = IntsAttribute(*dot, "lhs_contracting_dimensions");
  const std::vector<int64_t>* rc = IntsAttribute(*dot, "rhs_contracting_dimensions");
  if (lc == nullptr || rc == nullptr) return nullptr;
  const ir::Value* lhs = dot->operand(0);
  const ir::Value* rhs = dot->operand(1);
  if (!lhs->type().is_tensor() || !rhs->type().is_tensor() ||
      lhs->type().dims().size() != lc->size() + 1 || rhs->type().dims().size() != rc->size() + 1 ||
      product->type().element_type() != transpose.result()->type().element_type()) {
    return nullptr;
  }
  const std::vector<int64_t> new_lc = *rc, new_rc = *lc;
  ir::AttributeMap& attrs = dot->mutable_attributes();
  attrs.Set("lhs_contracting_dimensions", ir::Attribute::Ints(new_lc));
  attrs.Set("rhs_contracting_dimensions", ir::Attribute::Ints(new_rc));
  if (const ir::Attribute* precision = attrs.Find("precision_config");
      precision != nullptr && precision->kind == ir::Attribute::Kind::kList &&
      precision->list.size() == 2) {
    ir::Attribute swapped = *precision;
    std::swap(swapped.list[0], swapped.list[1]);
    attrs.Set("precision_config", swapped);
  }
  ir::Value* a = dot->operand(0);
  dot->set_operand(0, dot->operand(1));
  dot->set_operand(1, a);
  product->set_type(transpose.result()->type());
  // The transpose, now unused, stays valid (an identity) until DCE removes it. It still reads
  // the product, which the transpose's users now read too: the product has more than one use,
  // so that a transpose of this transpose does not fold the product back (that would leave the
  // identity transpose reading a product of the other shape).
  transpose.mutable_attributes().Set("permutation", ir::Attribute::Ints({0, 1}));
  uses[product] += 1;
  return product;
}

// Does `inst` only rename the shape of its operand (a reshape, or a broadcast_in_dim that only
// inserts unit dimensions), keeping the elements in order?
bool IsShapeOnly(const ir::Instruction& inst) {
  if (inst.num_results() != 1 || inst.operands().size() != 1) return false;
  const ir::ValueType& in = inst.operand(0)->type();
  const ir::ValueType& out = inst.result()->type();
  if (!in.is_tensor() || !out.is_tensor() || !in.is_static() || !out.is_static() ||
      in.element_type() != out.element_type() ||
      in.shape().element_count() != out.shape().element_count()) {
    return false;
  }
  if (inst.opcode() == Opcode::kReshape) return true;
  if (inst.opcode() != Opcode::kBroadcastInDim) return false;
  const std::vector<int64_t>* dims = IntsAttribute(inst, "broadcast_dimensions");
  if (dims == nullptr || dims->size() != in.dims().size()) return false;
  for (size_t i = 0; i < dims->size(); ++i) {
    if ((i > 0 && (*dims)[i] <= (*dims)[i - 1]) || (*dims)[i] < 0 ||
        (*dims)[i] >= static_cast<int64_t>(out.dims().size()) ||
        out.dims()[(*dims)[i]] != in.dims()[i]) {
      return false;
    }
  }
  return true;
}

// reshape(all_reduce(reshape(x))) back to x's shape, each reshape read only by the next: an
// all-reduce combines elements position by position, so it runs on x itself and both reshapes
// (copies, for the kernels) go. JAX's pmap wraps every psum so ([1, n] -> [n] and back).
// Returns the all-reduce, retyped, or null.
ir::Value* FoldReshapesAroundAllReduce(ir::Instruction& outer,
                                       const std::unordered_map<const ir::Value*, int64_t>& uses) {
  if (!IsShapeOnly(outer)) return nullptr;
  ir::Value* reduced = outer.operand(0);
  ir::Instruction* reduce = reduced->producer();
  if (reduce == nullptr || reduce->opcode() != Opcode::kAllReduce ||
      reduce->operands().size() != 1 || reduce->num_results() != 1) {
    return nullptr;
  }
  ir::Instruction* inner = reduce->operand(0)->producer();
  if (inner == nullptr || !IsShapeOnly(*inner)) return nullptr;
  ir::Value* x = inner->operand(0);
  if (x->type() != outer.result()->type()) return nullptr;
  for (const ir::Value* v : {reduced, reduce->operand(0)}) {
    auto count = uses.find(v);
    if (count == uses.end() || count->second != 1) return nullptr;
  }
  reduce->set_operand(0, x);
  reduced->set_type(x->type());
  // `outer`, now unused, stays valid (an identity) until DCE removes it.
  if (outer.opcode() == Opcode::kBroadcastInDim) {
    std::vector<int64_t> identity(x->type().dims().size());
    std::iota(identity.begin(), identity.end(), 0);
    outer.mutable_attributes().Set("broadcast_dimensions", ir::Attribute::Ints(identity));
  }
  return reduced;
}

class AlgebraicSimplifierPass : public Pass {
 public:
  std::string name() const override { return "algsimp"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    ValueMap replacements;
    bool changed = false;
    std::unordered_map<const ir::Value*, int64_t> uses = CountUses(module);
    std::unordered_set<const ir::Instruction*> dropped;
    for (const auto& computation : module.computations()) {
      for (const auto& instruction : computation->instructions()) {
        ir::Instruction& inst = *instruction;
        for (size_t i = 0; i < inst.operands().size(); ++i) {
          auto it = replacements.find(inst.operand(i));
          if (it != replacements.end()) inst.set_operand(i, it->second);
        }
        const std::vector<ir::Value*> before = inst.operands();
        ir::Value* replacement = Simplify(inst);
        if (replacement == nullptr && inst.opcode() == Opcode::kTranspose) {
          replacement = FoldTransposeIntoDot(inst, uses);
        }
        if (replacement == nullptr) replacement = FoldReshapesAroundAllReduce(inst, uses);
        if (inst.operands() != before) changed = true;
        if (replacement != nullptr && replacement != inst.result()) {
          replacements[inst.result()] = replacement;
          if (inst.opcode() == Opcode::kCustomCall) dropped.insert(&inst);
        }
      }
    }
    if (!replacements.empty()) {
      ReplaceUses(module, replacements);
      changed = true;
    }
    // The sharding constraints replaced go too (DCE keeps every custom call): a reduction region
    // is then its one op again (collective_reduction.h).
    if (!dropped.empty()) {
      for (const auto& computation : module.computations()) {
        computation->RemoveInstructionsIf(
            [&](const ir::Instruction& inst) { return dropped.contains(&inst); });
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateAlgebraicSimplifierPass() {
  return std::make_unique<AlgebraicSimplifierPass>();
}

}  // namespace ember::passes
