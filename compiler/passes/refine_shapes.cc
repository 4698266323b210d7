#include "compiler/passes/refine_shapes.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/evaluator/eval_util.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

using ir::Opcode;

// Folded results up to this size become constants (shape computations are a few elements;
// folding a little data along with them is harmless).
constexpr int64_t kMaxFoldedElements = 4096;

std::vector<int64_t> IntsOr(const ir::Instruction& inst, const char* name,
                            std::vector<int64_t> def) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr || a->kind != ir::Attribute::Kind::kInts) return def;
  return a->ints;
}

int64_t IntOr(const ir::Instruction& inst, const char* name, int64_t def) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr || a->kind != ir::Attribute::Kind::kInt) return def;
  return a->i;
}

class Refiner {
 public:
  explicit Refiner(ir::Module& module) : module_(module) {}

  absl::Status Run(ir::Computation& entry, const ShapeRefinement& refinement) {
    // The inference below relies on the structural rules (operand counts, ranks) holding.
    if (absl::Status s = ir::Verify(module_); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("refine_shapes: the program does not verify: ", s.message()));
    }
    if (refinement.arg_types.size() != entry.parameters().size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("refine_shapes: @", entry.name(), " takes ", entry.parameters().size(),
                       " arguments, the refinement gives ", refinement.arg_types.size(), " types"));
    }
    for (size_t i = 0; i < refinement.arg_types.size(); ++i) {
      const ir::ValueType& declared = entry.parameter(i)->type();
      const ir::ValueType& given = refinement.arg_types[i];
      if (!given.is_static() || !declared.IsCompatibleWith(given)) {
        return absl::InvalidArgumentError(
            absl::StrCat("refine_shapes: argument ", i, " of @", entry.name(), " has type ",
                         declared.ToString(), ", which ", given.ToString(),
                         given.is_static() ? " does not refine" : " (not static) cannot refine"));
      }
    }
    for (const auto& [index, value] : refinement.dim_values) {
      if (index < 0 || index >= static_cast<int64_t>(entry.parameters().size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("refine_shapes: dimension variable argument ", index, " is out of range"));
      }
      const ir::ValueType& t = refinement.arg_types[index];
      if (!t.is_tensor() || !t.dims().empty() || !ir::IsInteger(t.element_type())) {
        return absl::InvalidArgumentError(
            absl::StrCat("refine_shapes: dimension variable argument ", index, " has type ",
                         t.ToString(), ", not a scalar integer"));
      }
    }
    // Calls first: a callee's body is then refined with the types of its one call site.
    EMBER_RETURN_IF_ERROR(CreateInlinePass()->Run(module_).status());
    for (size_t i = 0; i < refinement.arg_types.size(); ++i) {
      entry.parameter(i)->set_type(refinement.arg_types[i]);
    }
    dim_values_ = refinement.dim_values;
    entry_ = &entry;
    EMBER_RETURN_IF_ERROR(Refine(entry));
    EMBER_RETURN_IF_ERROR(CreateDcePass()->Run(module_).status());
    // Static types make the full static rules apply: a guess of argument shapes or dimension
    // values that contradicts the program fails here, naming the op.
    if (absl::Status s = ir::Verify(module_); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("refine_shapes: the refined program is inconsistent: ", s.message()));
    }
    // Whatever is left dynamic (in functions no call reaches, say) is reported by the compile
    // path; the refined entry itself must be static.
    for (const auto& inst : entry.instructions()) {
      for (size_t r = 0; r < inst->num_results(); ++r) {
        if (!inst->result(r)->type().is_static()) {
          return absl::InvalidArgumentError(
              absl::StrCat("refine_shapes: ", inst->Describe(), ": result type ",
                           inst->result(r)->type().ToString(), " stays dynamic"));
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  ir::Value* Lookup(ir::Value* v) const {
    for (auto it = map_.find(v); it != map_.end(); it = map_.find(v)) v = it->second;
    return v;
  }

  ir::Instruction* AddConstant(ir::Computation& c, ir::Literal literal, const ir::Location& loc) {
    ir::ValueType type = ir::ValueType::Tensor(literal.shape());
    ir::AttributeMap attrs;
    attrs.Set("value", ir::Attribute::OfLiteral(std::move(literal)));
    return c.AddInstruction(Opcode::kConstant, {}, {std::move(type)}, std::move(attrs), {}, loc);
  }

  absl::StatusOr<ir::Literal> IntegerLiteral(ir::ElementType type, int64_t value) {
    switch (type) {
      case ir::ElementType::kS8:
        return ir::Literal::Scalar<int8_t>(static_cast<int8_t>(value));
      case ir::ElementType::kS16:
        return ir::Literal::Scalar<int16_t>(static_cast<int16_t>(value));
      case ir::ElementType::kS32:
        return ir::Literal::Scalar<int32_t>(static_cast<int32_t>(value));
      case ir::ElementType::kS64:
        return ir::Literal::Scalar<int64_t>(value);
      case ir::ElementType::kU8:
        return ir::Literal::Scalar<uint8_t>(static_cast<uint8_t>(value));
      case ir::ElementType::kU16:
        return ir::Literal::Scalar<uint16_t>(static_cast<uint16_t>(value));
      case ir::ElementType::kU32:
        return ir::Literal::Scalar<uint32_t>(static_cast<uint32_t>(value));
      case ir::ElementType::kU64:
        return ir::Literal::Scalar<uint64_t>(static_cast<uint64_t>(value));
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("refine_shapes: dimension variables of type ",
                         std::string(ir::ElementTypeName(type)), " are not supported"));
    }
  }

  // The values of a 1-D integer constant operand, or an error naming the op.
  absl::StatusOr<std::vector<int64_t>> ShapeValues(const ir::Instruction& inst,
                                                   const std::vector<ir::Value*>& operands,
                                                   size_t i, const char* what) {
    const ir::Literal* lit = ConstantLiteral(operands[i]);
    if (lit == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("refine_shapes: ", inst.Describe(), ": ", what, " (operand ", i,
                       ") does not fold to a constant, so the result shape stays dynamic"));
    }
    std::vector<int64_t> out;
    for (int64_t k = 0; k < lit->shape().element_count(); ++k) {
      EMBER_ASSIGN_OR_RETURN(int64_t v, eval::IntegerElement(*lit, k));
      out.push_back(v);
    }
    return out;
  }

  absl::Status Refine(ir::Computation& computation) {
    // The rebuild frees the old instructions, and a new value may reuse a freed address: the
    // mappings made here must not outlive it (uses are redirected by then).
    added_.emplace_back();
    absl::Status s = RefineInPlace(computation);
    for (const ir::Value* old : added_.back()) map_.erase(old);
    added_.pop_back();
    return s;
  }

  absl::Status RefineInPlace(ir::Computation& computation) {
    bool first = true;
    return RebuildComputation(
        computation, [&](const ir::Instruction& inst, Rebuilder& b) -> absl::StatusOr<bool> {
          if (first && &computation == entry_) {
            // Uses of the dimension variables read constants from here on.
            for (const auto& [index, value] : dim_values_) {
              ir::Value* param = computation.parameter(index);
              EMBER_ASSIGN_OR_RETURN(ir::Literal lit,
                                     IntegerLiteral(param->type().element_type(), value));
              ir::Instruction* c = AddConstant(b.computation(), std::move(lit), {});
              Map(param, c->result(), b);
            }
          }
          first = false;
          EMBER_RETURN_IF_ERROR(Emit(inst, b));
          return true;
        });
  }

  absl::Status Emit(const ir::Instruction& inst, Rebuilder& b) {
    std::vector<ir::Value*> operands;
    for (ir::Value* v : inst.operands()) operands.push_back(Lookup(v));
    ir::Computation& out = b.computation();

    if (inst.opcode() == Opcode::kCustomCall) {
      const ir::Attribute* target = inst.attribute("call_target_name");
      if (target != nullptr && target->kind == ir::Attribute::Kind::kString &&
          target->s == "shape_assertion") {
        return CheckAssertion(inst, operands);
      }
    }
    if (inst.opcode() == Opcode::kGetDimensionSize && !operands.empty() &&
        operands[0]->type().is_tensor()) {
      const int64_t dim = IntOr(inst, "dimension", -1);
      const ir::ValueType& t = operands[0]->type();
      if (dim >= 0 && dim < static_cast<int64_t>(t.dims().size()) &&
          t.dims()[dim] != ir::kDynamicDim) {
        EMBER_ASSIGN_OR_RETURN(ir::Literal lit,
                               IntegerLiteral(ir::ElementType::kS32, t.dims()[dim]));
        ir::Instruction* c = AddConstant(out, std::move(lit), inst.location());
        Map(inst.result(), c->result(), b);
        return absl::OkStatus();
      }
    }
    // Regions first: a while's body and condition take the loop's refined types.
    if (inst.opcode() == Opcode::kWhile) {
      for (ir::Computation* region : inst.regions()) {
        for (size_t i = 0; i < region->parameters().size() && i < operands.size(); ++i) {
          region->parameter(i)->set_type(operands[i]->type());
        }
      }
    }
    for (ir::Computation* region : inst.regions()) EMBER_RETURN_IF_ERROR(Refine(*region));

    Opcode opcode = inst.opcode();
    ir::AttributeMap attrs = inst.attributes();
    std::vector<ir::ValueType> types;
    for (size_t r = 0; r < inst.num_results(); ++r) types.push_back(inst.result(r)->type());
    std::vector<ir::Value*> new_operands = operands;
    EMBER_RETURN_IF_ERROR(Infer(inst, operands, &opcode, &attrs, &types, &new_operands));
    for (size_t r = 0; r < types.size(); ++r) {
      if (!types[r].is_static()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "refine_shapes: ", inst.Describe(), ": cannot infer a static type for result ", r,
            " (declared ", inst.result(r)->type().ToString(), ") from operands of types ",
            OperandTypes(operands)));
      }
      if (!types[r].IsCompatibleWith(inst.result(r)->type())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "refine_shapes: ", inst.Describe(), ": the refined result type ", types[r].ToString(),
            " contradicts the declared ", inst.result(r)->type().ToString(),
            " (the chosen argument shapes or dimension values are inconsistent)"));
      }
    }
    ir::Instruction* emitted = out.AddInstruction(opcode, new_operands, types, std::move(attrs),
                                                  inst.regions(), inst.location());
    emitted->set_callee(inst.callee());
    for (size_t r = 0; r < inst.num_results(); ++r) Map(inst.result(r), emitted->result(r), b);
    if (opcode == Opcode::kReturn) return absl::OkStatus();
    return MaybeFold(*emitted, b);
  }

  void Map(const ir::Value* old, ir::Value* now, Rebuilder& b) {
    map_[old] = now;
    added_.back().push_back(old);
    b.SetMapping(old, now);
  }

  static std::string OperandTypes(const std::vector<ir::Value*>& operands) {
    std::vector<std::string> parts;
    for (const ir::Value* v : operands) parts.push_back(v->type().ToString());
    return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
  }

  absl::Status CheckAssertion(const ir::Instruction& inst,
                              const std::vector<ir::Value*>& operands) {
    std::string message = "shape assertion failed";
    if (const ir::Attribute* m = inst.attribute("error_message");
        m != nullptr && m->kind == ir::Attribute::Kind::kString) {
      message = m->s;
    }
    if (inst.num_results() != 0 || operands.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("refine_shapes: ", inst.Describe(),
                       ": shape_assertion takes an assertion operand and "
                       "has no results"));
    }
    const ir::Literal* lit = ConstantLiteral(operands[0]);
    if (lit == nullptr || lit->shape().element_count() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("refine_shapes: ", inst.Describe(),
                                                     ": the shape assertion (", message,
                                                     ") does not fold to a constant"));
    }
    EMBER_ASSIGN_OR_RETURN(int64_t holds, eval::IntegerElement(*lit, 0));
    if (holds == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("refine_shapes: ", inst.Describe(), ": shape assertion failed: ", message));
    }
    return absl::OkStatus();  // checked: the op goes away
  }

  absl::Status MaybeFold(const ir::Instruction& inst, Rebuilder& b) {
    if (inst.opcode() == Opcode::kConstant || HasSideEffects(inst) || inst.num_results() != 1 ||
        inst.operands().empty() || !inst.regions().empty()) {
      return absl::OkStatus();
    }
    const ir::ValueType& type = inst.result()->type();
    if (!type.is_tensor() || type.shape().element_count() > kMaxFoldedElements) {
      return absl::OkStatus();
    }
    std::vector<eval::EvalValue> values;
    for (const ir::Value* v : inst.operands()) {
      const ir::Literal* lit = ConstantLiteral(v);
      if (lit == nullptr) return absl::OkStatus();
      absl::StatusOr<ir::Literal> copy = lit->Clone();
      if (!copy.ok()) return absl::OkStatus();
      values.push_back(eval::EvalValue::Array(*std::move(copy)));
    }
    eval::OpEvaluator fn = eval::OpTable::Get().Find(inst.opcode());
    if (fn == nullptr) return absl::OkStatus();
    eval::Evaluator evaluator;
    absl::StatusOr<std::vector<eval::EvalValue>> result = fn(inst, values, evaluator);
    // A failure stays for run time, where it is reported with the launch.
    if (!result.ok() || result->size() != 1 || (*result)[0].kind != eval::EvalValue::Kind::kArray ||
        !(*result)[0].array.shape().EqualsIgnoringLayout(type.shape())) {
      return absl::OkStatus();
    }
    ir::Instruction* c =
        AddConstant(b.computation(), std::move((*result)[0].array), inst.location());
    Map(inst.result(), c->result(), b);
    return absl::OkStatus();
  }

  static absl::StatusOr<ir::ValueType> Tensor(ir::ElementType type,
                                              const std::vector<int64_t>& dims) {
    EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::MakeDynamic(type, dims));
    return ir::ValueType::Tensor(std::move(shape));
  }

  // Sets the static result types of `inst` (and for the dynamic_* ops, the static op that
  // replaces it). Leaves a type dynamic where it cannot tell; the caller reports that.
  absl::Status Infer(const ir::Instruction& inst, const std::vector<ir::Value*>& operands,
                     Opcode* opcode, ir::AttributeMap* attrs, std::vector<ir::ValueType>* types,
                     std::vector<ir::Value*>* new_operands) {
    auto type_of = [&](size_t i) -> const ir::ValueType& { return operands[i]->type(); };
    auto dims_of = [&](size_t i) -> const std::vector<int64_t>& { return type_of(i).dims(); };
    bool declared_static = true;
    for (const ir::ValueType& t : *types) declared_static = declared_static && t.is_static();
    // A dynamic_* op whose shape operands read data (not dimension variables) can stay as it is
    // when its declared result is static: the backends run it with that shape.
    auto shape_operands_constant = [&](size_t from, size_t to) {
      for (size_t i = from; i < to && i < operands.size(); ++i) {
        if (ConstantLiteral(operands[i]) == nullptr) return false;
      }
      return true;
    };
    switch (inst.opcode()) {
      case Opcode::kDynamicBroadcastInDim:
      case Opcode::kDynamicReshape:
        if (declared_static && !shape_operands_constant(1, 2)) return absl::OkStatus();
        break;
      case Opcode::kDynamicIota:
        if (declared_static && !shape_operands_constant(0, 1)) return absl::OkStatus();
        break;
      case Opcode::kDynamicPad:
        if (declared_static && !shape_operands_constant(2, 5)) return absl::OkStatus();
        break;
      case Opcode::kRealDynamicSlice:
        if (declared_static && !shape_operands_constant(1, 4)) return absl::OkStatus();
        break;
      case Opcode::kDynamicGather:
        if (declared_static && !shape_operands_constant(2, 3)) return absl::OkStatus();
        break;
      default:
        break;
    }
    const ir::ElementType et = types->empty() || !(*types)[0].is_tensor()
                                   ? ir::ElementType::kInvalid
                                   : (*types)[0].element_type();
    auto set = [&](const std::vector<int64_t>& dims) -> absl::Status {
      EMBER_ASSIGN_OR_RETURN((*types)[0], Tensor(et, dims));
      return absl::OkStatus();
    };
    switch (inst.opcode()) {
      case Opcode::kDynamicBroadcastInDim: {
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                               ShapeValues(inst, operands, 1, "output_dimensions"));
        EMBER_RETURN_IF_ERROR(set(dims));
        *opcode = Opcode::kBroadcastInDim;
        ir::AttributeMap a;
        a.Set("broadcast_dimensions",
              ir::Attribute::Ints(IntsOr(inst, "broadcast_dimensions", {})));
        *attrs = std::move(a);
        new_operands->resize(1);
        return absl::OkStatus();
      }
      case Opcode::kDynamicReshape: {
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                               ShapeValues(inst, operands, 1, "output_shape"));
        EMBER_RETURN_IF_ERROR(set(dims));
        *opcode = Opcode::kReshape;
        *attrs = ir::AttributeMap();
        new_operands->resize(1);
        return absl::OkStatus();
      }
      case Opcode::kDynamicIota: {
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                               ShapeValues(inst, operands, 0, "output_shape"));
        EMBER_RETURN_IF_ERROR(set(dims));
        *opcode = Opcode::kIota;
        ir::AttributeMap a;
        a.Set("iota_dimension", ir::Attribute::Int(IntOr(inst, "iota_dimension", 0)));
        *attrs = std::move(a);
        new_operands->clear();
        return absl::OkStatus();
      }
      case Opcode::kDynamicPad: {
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> lo,
                               ShapeValues(inst, operands, 2, "edge_padding_low"));
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> hi,
                               ShapeValues(inst, operands, 3, "edge_padding_high"));
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> in,
                               ShapeValues(inst, operands, 4, "interior_padding"));
        const std::vector<int64_t>& d = dims_of(0);
        if (lo.size() != d.size() || hi.size() != d.size() || in.size() != d.size()) {
          return absl::InvalidArgumentError(absl::StrCat("refine_shapes: ", inst.Describe(),
                                                         ": padding sizes differ from the rank"));
        }
        std::vector<int64_t> out;
        for (size_t i = 0; i < d.size(); ++i) {
          out.push_back(d[i] == ir::kDynamicDim
                            ? ir::kDynamicDim
                            : d[i] + lo[i] + hi[i] + std::max<int64_t>(d[i] - 1, 0) * in[i]);
        }
        EMBER_RETURN_IF_ERROR(set(out));
        *opcode = Opcode::kPad;
        ir::AttributeMap a;
        a.Set("edge_padding_low", ir::Attribute::Ints(lo));
        a.Set("edge_padding_high", ir::Attribute::Ints(hi));
        a.Set("interior_padding", ir::Attribute::Ints(in));
        *attrs = std::move(a);
        new_operands->resize(2);
        return absl::OkStatus();
      }
      case Opcode::kRealDynamicSlice: {
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> start,
                               ShapeValues(inst, operands, 1, "start_indices"));
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> limit,
                               ShapeValues(inst, operands, 2, "limit_indices"));
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                               ShapeValues(inst, operands, 3, "strides"));
        if (start.size() != limit.size() || start.size() != strides.size()) {
          return absl::InvalidArgumentError(
              absl::StrCat("refine_shapes: ", inst.Describe(), ": slice operands differ in size"));
        }
        std::vector<int64_t> out;
        for (size_t i = 0; i < start.size(); ++i) {
          if (strides[i] <= 0) {
            return absl::InvalidArgumentError(absl::StrCat("refine_shapes: ", inst.Describe(),
                                                           ": stride ", i, " is ", strides[i]));
          }
          out.push_back(std::max<int64_t>(0, (limit[i] - start[i] + strides[i] - 1) / strides[i]));
        }
        EMBER_RETURN_IF_ERROR(set(out));
        *opcode = Opcode::kSlice;
        ir::AttributeMap a;
        a.Set("start_indices", ir::Attribute::Ints(start));
        a.Set("limit_indices", ir::Attribute::Ints(limit));
        a.Set("strides", ir::Attribute::Ints(strides));
        *attrs = std::move(a);
        new_operands->resize(1);
        return absl::OkStatus();
      }
      case Opcode::kDynamicGather: {
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                               ShapeValues(inst, operands, 2, "slice_sizes"));
        *opcode = Opcode::kGather;
        attrs->Set("slice_sizes", ir::Attribute::Ints(sizes));
        new_operands->resize(2);
        if (!(*types)[0].is_static()) EMBER_RETURN_IF_ERROR(set(GatherDims(inst, operands, sizes)));
        return absl::OkStatus();
      }
      case Opcode::kDynamicConv: {
        if (declared_static && !shape_operands_constant(2, 3)) return absl::OkStatus();
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                               ShapeValues(inst, operands, 2, "d_padding"));
        *opcode = Opcode::kConvolution;
        attrs->Set("padding", ir::Attribute::Ints(padding));
        new_operands->resize(2);
        if (!declared_static) {
          std::vector<int64_t> dims = ConvDims(inst, operands, padding);
          if (dims.size() != operands[0]->type().dims().size()) {
            return absl::InvalidArgumentError(absl::StrCat(
                "refine_shapes: ", inst.Describe(),
                ": the window attributes and d_padding do not "
                "describe the convolution's spatial dimensions (one entry each), so its result "
                "shape cannot be inferred"));
          }
          EMBER_RETURN_IF_ERROR(set(dims));
        }
        return absl::OkStatus();
      }
      default:
        break;
    }
    if (declared_static) return absl::OkStatus();
    return InferStaticOp(inst, operands, types);
  }

  std::vector<int64_t> GatherDims(const ir::Instruction& inst,
                                  const std::vector<ir::Value*>& operands,
                                  const std::vector<int64_t>& sizes) {
    const std::vector<int64_t>& indices = operands[1]->type().dims();
    const int64_t ivd = IntOr(inst, "index_vector_dim", static_cast<int64_t>(indices.size()));
    const std::vector<int64_t> offset = IntsOr(inst, "offset_dims", {});
    const std::vector<int64_t> collapsed = IntsOr(inst, "collapsed_slice_dims", {});
    const std::vector<int64_t> obatch = IntsOr(inst, "operand_batching_dims", {});
    std::vector<int64_t> batch;
    for (size_t i = 0; i < indices.size(); ++i) {
      if (static_cast<int64_t>(i) != ivd) batch.push_back(indices[i]);
    }
    std::vector<int64_t> offset_sizes;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const int64_t d = static_cast<int64_t>(i);
      if (std::find(collapsed.begin(), collapsed.end(), d) == collapsed.end() &&
          std::find(obatch.begin(), obatch.end(), d) == obatch.end()) {
        offset_sizes.push_back(sizes[i]);
      }
    }
    const size_t rank = batch.size() + offset.size();
    if (offset.size() != offset_sizes.size()) return {ir::kDynamicDim};
    std::vector<int64_t> out(rank);
    size_t bi = 0, oi = 0;
    for (size_t i = 0; i < rank; ++i) {
      const bool is_offset =
          std::find(offset.begin(), offset.end(), static_cast<int64_t>(i)) != offset.end();
      if (is_offset ? oi >= offset_sizes.size() : bi >= batch.size()) return {ir::kDynamicDim};
      out[i] = is_offset ? offset_sizes[oi++] : batch[bi++];
    }
    return out;
  }

  // Convolution result dims (with `padding` as low/high pairs per spatial dim).
  std::vector<int64_t> ConvDims(const ir::Instruction& inst,
                                const std::vector<ir::Value*>& operands,
                                const std::vector<int64_t>& padding) {
    const std::vector<int64_t>& lhs = operands[0]->type().dims();
    const std::vector<int64_t>& rhs = operands[1]->type().dims();
    const int64_t ib = IntOr(inst, "input_batch_dimension", -1);
    const int64_t kof = IntOr(inst, "kernel_output_feature_dimension", -1);
    const int64_t ob = IntOr(inst, "output_batch_dimension", -1);
    const int64_t of = IntOr(inst, "output_feature_dimension", -1);
    const std::vector<int64_t> is = IntsOr(inst, "input_spatial_dimensions", {});
    const std::vector<int64_t> ks = IntsOr(inst, "kernel_spatial_dimensions", {});
    const std::vector<int64_t> os = IntsOr(inst, "output_spatial_dimensions", {});
    const size_t n = is.size();
    const int64_t bgc = IntOr(inst, "batch_group_count", 1);
    const std::vector<int64_t> strides = IntsOr(inst, "window_strides", std::vector<int64_t>(n, 1));
    const std::vector<int64_t> ldil = IntsOr(inst, "lhs_dilation", std::vector<int64_t>(n, 1));
    const std::vector<int64_t> rdil = IntsOr(inst, "rhs_dilation", std::vector<int64_t>(n, 1));
    const int64_t rank = static_cast<int64_t>(lhs.size());
    auto in_range = [&](int64_t d) { return d >= 0 && d < rank; };
    if (!in_range(ib) || !in_range(ob) || !in_range(of) || kof < 0 ||
        kof >= static_cast<int64_t>(rhs.size()) || ks.size() != n || os.size() != n ||
        strides.size() != n || ldil.size() != n || rdil.size() != n || padding.size() != 2 * n ||
        bgc <= 0) {
      return {ir::kDynamicDim};
    }
    std::vector<int64_t> out(lhs.size(), ir::kDynamicDim);
    out[ob] = lhs[ib] / bgc;
    out[of] = rhs[kof];
    for (size_t i = 0; i < n; ++i) {
      if (!in_range(is[i]) || !in_range(os[i]) || ks[i] < 0 ||
          ks[i] >= static_cast<int64_t>(rhs.size()) || strides[i] <= 0) {
        return {ir::kDynamicDim};
      }
      const int64_t input = lhs[is[i]];
      const int64_t dilated_input = input == 0 ? 0 : (input - 1) * ldil[i] + 1;
      const int64_t padded = dilated_input + padding[2 * i] + padding[2 * i + 1];
      const int64_t window = rhs[ks[i]];
      const int64_t dilated_window = window == 0 ? 0 : (window - 1) * rdil[i] + 1;
      out[os[i]] =
          padded < dilated_window || padded == 0 ? 0 : (padded - dilated_window) / strides[i] + 1;
    }
    return out;
  }

  // Result types of the static ops whose declared result has `?` dims, from static operands.
  absl::Status InferStaticOp(const ir::Instruction& inst, const std::vector<ir::Value*>& operands,
                             std::vector<ir::ValueType>* types) {
    auto dims_of = [&](size_t i) -> const std::vector<int64_t>& {
      return operands[i]->type().dims();
    };
    auto set = [&](size_t r, const std::vector<int64_t>& dims) -> absl::Status {
      EMBER_ASSIGN_OR_RETURN((*types)[r], Tensor((*types)[r].element_type(), dims));
      return absl::OkStatus();
    };
    const size_t rank = (*types)[0].is_tensor() ? (*types)[0].dims().size() : 0;
    switch (inst.opcode()) {
      case Opcode::kWhile:
      case Opcode::kOptimizationBarrier:
        for (size_t r = 0; r < types->size() && r < operands.size(); ++r) {
          (*types)[r] = operands[r]->type();
        }
        return absl::OkStatus();
      case Opcode::kIf:
      case Opcode::kCase: {
        if (inst.regions().empty()) return absl::OkStatus();
        std::vector<ir::ValueType> branch = inst.regions()[0]->result_types();
        for (size_t r = 0; r < types->size() && r < branch.size(); ++r) (*types)[r] = branch[r];
        return absl::OkStatus();
      }
      case Opcode::kSort:
      case Opcode::kScatter:
      case Opcode::kSelectAndScatter:
      case Opcode::kReverse:
      case Opcode::kCholesky:
        for (size_t r = 0; r < types->size() && r < operands.size(); ++r) {
          EMBER_RETURN_IF_ERROR(set(r, dims_of(r)));
        }
        return absl::OkStatus();
      case Opcode::kConvolution: {
        const size_t n = IntsOr(inst, "input_spatial_dimensions", {}).size();
        return set(
            0, ConvDims(inst, operands, IntsOr(inst, "padding", std::vector<int64_t>(2 * n, 0))));
      }
      case Opcode::kDynamicUpdateSlice:
      case Opcode::kDynamicSlice:
        if (inst.opcode() == Opcode::kDynamicUpdateSlice) return set(0, dims_of(0));
        return set(0, IntsOr(inst, "slice_sizes", {}));
      case Opcode::kTriangularSolve:
        return set(0, dims_of(1));
      case Opcode::kConcatenate: {
        const int64_t dim = IntOr(inst, "dimension", 0);
        std::vector<int64_t> out = dims_of(0);
        if (dim < 0 || dim >= static_cast<int64_t>(out.size())) return absl::OkStatus();
        out[dim] = 0;
        for (size_t i = 0; i < operands.size(); ++i) out[dim] += dims_of(i)[dim];
        return set(0, out);
      }
      case Opcode::kTranspose: {
        const std::vector<int64_t> perm = IntsOr(inst, "permutation", {});
        std::vector<int64_t> out;
        for (int64_t p : perm)
          out.push_back(p >= 0 && p < static_cast<int64_t>(dims_of(0).size()) ? dims_of(0)[p]
                                                                              : ir::kDynamicDim);
        return set(0, out);
      }
      case Opcode::kSlice: {
        const std::vector<int64_t> start = IntsOr(inst, "start_indices", {});
        const std::vector<int64_t> limit = IntsOr(inst, "limit_indices", {});
        const std::vector<int64_t> strides =
            IntsOr(inst, "strides", std::vector<int64_t>(start.size(), 1));
        std::vector<int64_t> out;
        for (size_t i = 0; i < start.size() && i < limit.size() && i < strides.size(); ++i) {
          out.push_back(strides[i] > 0 ? std::max<int64_t>(
                                             0, (limit[i] - start[i] + strides[i] - 1) / strides[i])
                                       : ir::kDynamicDim);
        }
        return set(0, out);
      }
      case Opcode::kPad: {
        const std::vector<int64_t>& d = dims_of(0);
        const std::vector<int64_t> lo =
            IntsOr(inst, "edge_padding_low", std::vector<int64_t>(d.size(), 0));
        const std::vector<int64_t> hi =
            IntsOr(inst, "edge_padding_high", std::vector<int64_t>(d.size(), 0));
        const std::vector<int64_t> in =
            IntsOr(inst, "interior_padding", std::vector<int64_t>(d.size(), 0));
        if (lo.size() != d.size() || hi.size() != d.size() || in.size() != d.size())
          return absl::OkStatus();
        std::vector<int64_t> out;
        for (size_t i = 0; i < d.size(); ++i)
          out.push_back(d[i] + lo[i] + hi[i] + std::max<int64_t>(d[i] - 1, 0) * in[i]);
        return set(0, out);
      }
      case Opcode::kReduce: {
        const size_t n = types->size();
        const std::vector<int64_t> dims = IntsOr(inst, "dimensions", {});
        for (size_t r = 0; r < n && r < operands.size(); ++r) {
          std::vector<int64_t> out;
          for (size_t i = 0; i < dims_of(r).size(); ++i) {
            if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(i)) == dims.end())
              out.push_back(dims_of(r)[i]);
          }
          EMBER_RETURN_IF_ERROR(set(r, out));
        }
        return absl::OkStatus();
      }
      case Opcode::kReduceWindow: {
        const std::vector<int64_t>& in = dims_of(0);
        const size_t r = in.size();
        const std::vector<int64_t> window = IntsOr(inst, "window_dimensions", {});
        const std::vector<int64_t> strides =
            IntsOr(inst, "window_strides", std::vector<int64_t>(r, 1));
        const std::vector<int64_t> base =
            IntsOr(inst, "base_dilations", std::vector<int64_t>(r, 1));
        const std::vector<int64_t> wdil =
            IntsOr(inst, "window_dilations", std::vector<int64_t>(r, 1));
        const std::vector<int64_t> pad = IntsOr(inst, "padding", std::vector<int64_t>(2 * r, 0));
        if (window.size() != r || strides.size() != r || base.size() != r || wdil.size() != r ||
            pad.size() != 2 * r) {
          return absl::OkStatus();
        }
        std::vector<int64_t> out;
        for (size_t i = 0; i < r; ++i) {
          if (strides[i] <= 0) return absl::OkStatus();
          const int64_t dilated = in[i] == 0 ? 0 : (in[i] - 1) * base[i] + 1;
          const int64_t padded = dilated + pad[2 * i] + pad[2 * i + 1];
          const int64_t dwin = (window[i] - 1) * wdil[i] + 1;
          out.push_back(padded < dwin ? 0 : (padded - dwin) / strides[i] + 1);
        }
        for (size_t k = 0; k < types->size(); ++k) EMBER_RETURN_IF_ERROR(set(k, out));
        return absl::OkStatus();
      }
      case Opcode::kDotGeneral: {
        const std::vector<int64_t> lb = IntsOr(inst, "lhs_batching_dimensions", {});
        const std::vector<int64_t> rb = IntsOr(inst, "rhs_batching_dimensions", {});
        const std::vector<int64_t> lc = IntsOr(inst, "lhs_contracting_dimensions", {});
        const std::vector<int64_t> rc = IntsOr(inst, "rhs_contracting_dimensions", {});
        std::vector<int64_t> out;
        for (int64_t d : lb)
          out.push_back(d >= 0 && d < static_cast<int64_t>(dims_of(0).size()) ? dims_of(0)[d]
                                                                              : ir::kDynamicDim);
        auto free = [&](size_t o, const std::vector<int64_t>& b, const std::vector<int64_t>& c) {
          for (size_t i = 0; i < dims_of(o).size(); ++i) {
            const int64_t d = static_cast<int64_t>(i);
            if (std::find(b.begin(), b.end(), d) == b.end() &&
                std::find(c.begin(), c.end(), d) == c.end()) {
              out.push_back(dims_of(o)[i]);
            }
          }
        };
        free(0, lb, lc);
        free(1, rb, rc);
        return set(0, out);
      }
      case Opcode::kDot: {
        std::vector<int64_t> out;
        if (dims_of(0).size() == 2) out.push_back(dims_of(0)[0]);
        if (dims_of(1).size() == 2) out.push_back(dims_of(1)[1]);
        return set(0, out);
      }
      case Opcode::kGather:
        return set(0, GatherDims(inst, operands, IntsOr(inst, "slice_sizes", {})));
      case Opcode::kBroadcastInDim: {
        // Sizes of the result dims the operand maps onto (with size > 1); others stay as
        // declared.
        std::vector<int64_t> out = (*types)[0].dims();
        const std::vector<int64_t> bd = IntsOr(inst, "broadcast_dimensions", {});
        for (size_t i = 0; i < bd.size() && i < dims_of(0).size(); ++i) {
          if (bd[i] >= 0 && bd[i] < static_cast<int64_t>(out.size()) && dims_of(0)[i] != 1)
            out[bd[i]] = dims_of(0)[i];
        }
        return set(0, out);
      }
      case Opcode::kReshape: {
        std::vector<int64_t> out = (*types)[0].dims();
        int64_t known = 1, unknown = 0;
        for (int64_t d : out) {
          if (d == ir::kDynamicDim) {
            ++unknown;
          } else {
            known *= d;
          }
        }
        if (unknown == 1 && known > 0) {
          for (int64_t& d : out) {
            if (d == ir::kDynamicDim) d = operands[0]->type().shape().element_count() / known;
          }
        }
        return set(0, out);
      }
      default:
        break;
    }
    // Elementwise ops (and anything else whose result has an operand's rank): the first
    // operand of the result's rank gives the sizes; scalars broadcast (select, clamp).
    for (size_t i = 0; i < operands.size(); ++i) {
      const ir::ValueType& t = operands[i]->type();
      if (t.is_tensor() && t.dims().size() == rank && rank > 0 && IsElementwise(inst.opcode())) {
        return set(0, t.dims());
      }
    }
    return absl::OkStatus();
  }

  static bool IsElementwise(Opcode op) {
    switch (op) {
      case Opcode::kAbs:
      case Opcode::kAdd:
      case Opcode::kAnd:
      case Opcode::kAtan2:
      case Opcode::kBitcastConvert:
      case Opcode::kCbrt:
      case Opcode::kCeil:
      case Opcode::kClamp:
      case Opcode::kCompare:
      case Opcode::kComplex:
      case Opcode::kConvert:
      case Opcode::kCosine:
      case Opcode::kCountLeadingZeros:
      case Opcode::kDivide:
      case Opcode::kExponential:
      case Opcode::kExponentialMinusOne:
      case Opcode::kFloor:
      case Opcode::kImag:
      case Opcode::kIsFinite:
      case Opcode::kLog:
      case Opcode::kLogPlusOne:
      case Opcode::kLogistic:
      case Opcode::kMap:
      case Opcode::kMaximum:
      case Opcode::kMinimum:
      case Opcode::kMultiply:
      case Opcode::kNegate:
      case Opcode::kNot:
      case Opcode::kOr:
      case Opcode::kPopcnt:
      case Opcode::kPower:
      case Opcode::kReal:
      case Opcode::kReducePrecision:
      case Opcode::kRemainder:
      case Opcode::kRoundNearestAfz:
      case Opcode::kRoundNearestEven:
      case Opcode::kRsqrt:
      case Opcode::kSelect:
      case Opcode::kShiftLeft:
      case Opcode::kShiftRightArithmetic:
      case Opcode::kShiftRightLogical:
      case Opcode::kSign:
      case Opcode::kSine:
      case Opcode::kSqrt:
      case Opcode::kSubtract:
      case Opcode::kTan:
      case Opcode::kTanh:
      case Opcode::kXor:
        return true;
      default:
        return false;
    }
  }

  ir::Module& module_;
  ir::Computation* entry_ = nullptr;
  std::map<int64_t, int64_t> dim_values_;
  std::unordered_map<const ir::Value*, ir::Value*> map_;
  std::vector<std::vector<const ir::Value*>> added_;
};

class RefineShapesPass : public Pass {
 public:
  explicit RefineShapesPass(ShapeRefinement refinement) : refinement_(std::move(refinement)) {}
  std::string name() const override { return "refine_shapes"; }
  absl::StatusOr<bool> Run(ir::Module& module) override {
    ir::Computation* entry = module.entry();
    if (entry == nullptr) return absl::InvalidArgumentError("refine_shapes: no entry function");
    EMBER_RETURN_IF_ERROR(RefineShapes(module, *entry, refinement_));
    return true;
  }

 private:
  ShapeRefinement refinement_;
};

}  // namespace

absl::Status RefineShapes(ir::Module& module, ir::Computation& entry,
                          const ShapeRefinement& refinement) {
  Refiner refiner(module);
  return refiner.Run(entry, refinement);
}

std::unique_ptr<Pass> CreateRefineShapesPass(ShapeRefinement refinement) {
  return std::make_unique<RefineShapesPass>(std::move(refinement));
}

}  // namespace ember::passes
