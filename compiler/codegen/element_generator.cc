#include "compiler/codegen/element_generator.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/loop_support.h"
#include "compiler/codegen/reduce_window_support.h"
#include "compiler/codegen/select_and_scatter_support.h"
#include "compiler/passes/rewrite.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

namespace ember::codegen {

using ir::Opcode;

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

llvm::Function* DeclareKernelFunction(llvm::Module& module, const std::string& name) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::FunctionType* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                                     {ptr, ptr, i64, i64}, /*isVarArg=*/false);
  llvm::Function* fn =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  return fn;
}

namespace {

// Floating-point arithmetic in `blocks`: a body with much of it (the polynomial cores of exp,
// log, tanh, logistic, and chains of them) is bound by the latency of its dependent steps.
int FloatArithmetic(const std::vector<llvm::BasicBlock*>& blocks) {
  int n = 0;
  for (llvm::BasicBlock* block : blocks) {
    for (llvm::Instruction& inst : *block) {
      if (llvm::isa<llvm::BinaryOperator>(inst) && inst.getType()->isFPOrFPVectorTy()) {
        ++n;
      } else if (auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
                 call != nullptr && call->getIntrinsicID() == llvm::Intrinsic::fmuladd) {
        ++n;
      }
    }
  }
  return n;
}

}  // namespace

void MarkLoopsParallel(const std::vector<llvm::BasicBlock*>& blocks,
                       const std::vector<llvm::BranchInst*>& back_edges, bool interleave) {
  if (blocks.empty()) return;
  llvm::LLVMContext& ctx = blocks.front()->getContext();
  llvm::MDNode* group = llvm::MDNode::getDistinct(ctx, {});
  for (llvm::BasicBlock* block : blocks) {
    for (llvm::Instruction& inst : *block) {
      if (inst.mayReadOrWriteMemory()) inst.setMetadata(llvm::LLVMContext::MD_access_group, group);
    }
  }
  std::vector<llvm::Metadata*> properties = {
      llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.parallel_accesses"), group})};
  // LLVM interleaves only small loop bodies; a long dependent chain per element leaves the
  // out-of-order core waiting unless two vectors' chains run side by side (exp 1M f32:
  // 0.77 -> 0.53 ms on an AVX2 host).
  if (interleave && FloatArithmetic(blocks) >= kLatencyBoundFloatOps) {
    llvm::Constant* two = llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 2);
    properties.push_back(llvm::MDNode::get(
        ctx, {llvm::MDString::get(ctx, "llvm.loop.interleave.count"),
              llvm::ConstantAsMetadata::get(two)}));
  }
  for (llvm::BranchInst* back : back_edges) {
    std::vector<llvm::Metadata*> loop = {nullptr};
    loop.insert(loop.end(), properties.begin(), properties.end());
    llvm::MDNode* id = llvm::MDNode::getDistinct(ctx, loop);
    id->replaceOperandWith(0, id);
    back->setMetadata(llvm::LLVMContext::MD_loop, id);
  }
}

ElementGenerator::ElementGenerator(const passes::Kernel& kernel, llvm::IRBuilderBase& builder,
                                   ElementalEmitter& elemental)
    : kernel_(kernel), b_(builder), elemental_(elemental) {
  for (const ir::Instruction* inst : kernel.instructions) in_kernel_.insert(inst);
}

void ElementGenerator::LoadInputs(llvm::Value* inputs) {
  llvm::Type* ptr = b_.getPtrTy();
  for (size_t k = 0; k < kernel_.inputs.size(); ++k) {
    const ir::Value* v = kernel_.inputs[k];
    llvm::Value* base = b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, inputs, k));
    input_base_[v] = base;
    if (v->type().dims().empty()) {
      const ir::ElementType t = v->type().element_type();
      const ir::Literal* literal = passes::ConstantLiteral(v);
      scalars_[v] = literal != nullptr && literal->shape() == v->type().shape()
                        ? elemental_.Constant(t, literal->bytes().data())
                        : elemental_.FromStorage(t, b_.CreateLoad(elemental_.StorageType(t), base));
    }
  }
}

llvm::Value* ElementGenerator::ToInt64(llvm::Value* element, ir::ElementType type) {
  return ir::IsSignedInteger(type) ? b_.CreateSExtOrTrunc(element, b_.getInt64Ty())
                                   : b_.CreateZExtOrTrunc(element, b_.getInt64Ty());
}

absl::StatusOr<llvm::Value*> ElementGenerator::IndexComponent(
    const ir::Value* indices, int64_t index_vector_dim, const std::vector<llvm::Value*>& batch,
    int64_t k) {
  const std::vector<int64_t>& dims = indices->type().dims();
  ElementIndex& at = NewIndex(&dims);
  size_t next = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    at.multi.push_back(d == index_vector_dim ? b_.getInt64(k) : batch[next++]);
  }
  at.linear = Linearize(at.multi, dims);
  EMBER_ASSIGN_OR_RETURN(llvm::Value * component, Generate(indices, at));
  return ToInt64(component, indices->type().element_type());
}

absl::StatusOr<llvm::Value*> ElementGenerator::InputAddress(const ir::Value* value) const {
  auto it = input_base_.find(value);
  if (it == input_base_.end()) {
    return absl::InternalError("kernel emitter: a value read by the kernel is no kernel input");
  }
  return it->second;
}

ElementIndex& ElementGenerator::NewIndex(const std::vector<int64_t>* dims) {
  ElementIndex& index = indices_.emplace_back();
  index.id = static_cast<int>(indices_.size()) - 1;
  index.dims = dims;
  return index;
}

void ElementGenerator::Bind(const ir::Value* value, llvm::Value* element) {
  bound_[value] = element;
}

void ElementGenerator::NewScope() {
  memo_.clear();
  bound_.clear();
  scalar_index_ = nullptr;
}

IndexRange ElementGenerator::RangeOf(const ElementIndex& index, size_t d) {
  if (d < index.ranges.size() && index.ranges[d].has_value()) return *index.ranges[d];
  return IndexRange{0, (*index.dims)[d]};
}

void ElementGenerator::SetRange(ElementIndex& index, size_t d, IndexRange range) {
  index.ranges.resize(index.dims->size());
  index.ranges[d] = range;
}

ElementIndex& ElementGenerator::ScalarIndex() {
  if (scalar_index_ == nullptr) {
    scalar_index_ = &NewIndex(&kNoDims);
    scalar_index_->linear = b_.getInt64(0);
  }
  return *scalar_index_;
}

const std::vector<llvm::Value*>& ElementGenerator::Multi(ElementIndex& index) {
  if (index.multi.empty() && !index.dims->empty()) {
    index.multi.resize(index.dims->size());
    llvm::Value* r = index.linear;
    for (int64_t d = static_cast<int64_t>(index.dims->size()) - 1; d >= 0; --d) {
      if (d == 0) {
        index.multi[d] = r;
        break;
      }
      index.multi[d] = b_.CreateURem(r, b_.getInt64((*index.dims)[d]));
      r = b_.CreateUDiv(r, b_.getInt64((*index.dims)[d]));
    }
  }
  return index.multi;
}

llvm::Value* ElementGenerator::Linearize(const std::vector<llvm::Value*>& multi,
                                         const std::vector<int64_t>& dims) {
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  llvm::Value* linear = b_.getInt64(0);
  for (size_t k = 0; k < dims.size(); ++k) {
    linear = b_.CreateAdd(linear, b_.CreateMul(multi[k], b_.getInt64(strides[k])));
  }
  return linear;
}

absl::StatusOr<llvm::Value*> ElementGenerator::Generate(const ir::Value* v, ElementIndex& index) {
  auto key = std::make_pair(v, index.id);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  EMBER_ASSIGN_OR_RETURN(llvm::Value * element, GenerateUncached(v, index));
  memo_[key] = element;
  return element;
}

absl::StatusOr<llvm::Value*> ElementGenerator::GenerateUncached(const ir::Value* v,
                                                                ElementIndex& index) {
  if (auto s = scalars_.find(v); s != scalars_.end()) return s->second;
  if (auto s = bound_.find(v); s != bound_.end()) return s->second;
  const ir::Instruction* inst = v->producer();
  if (inst == nullptr || !in_kernel_.contains(inst)) {
    auto base = input_base_.find(v);
    if (base == input_base_.end()) {
      return absl::InternalError("kernel emitter: a value read by the kernel is no kernel input");
    }
    const ir::ElementType t = v->type().element_type();
    llvm::Type* storage = elemental_.StorageType(t);
    return elemental_.FromStorage(
        t, b_.CreateLoad(storage, b_.CreateGEP(storage, base->second, index.linear)));
  }
  const std::vector<int64_t>& out_dims = v->type().dims();
  switch (inst->opcode()) {
    case Opcode::kReshape: {
      // A reshape that keeps the innermost dim keeps the innermost position: the operand's
      // index is the same inner component under outer ones derived from the result's outer ones
      // (loop-invariant in a row), not a division of the linear index per element.
      const std::vector<int64_t>& in_dims = inst->operand(0)->type().dims();
      ElementIndex& in = NewIndex(&in_dims);
      in.linear = index.linear;
      const size_t rank = out_dims.size();
      if (rank == 0 || in_dims.empty() || in_dims.back() != out_dims.back() ||
          out_dims.back() == 0) {
        return Generate(inst->operand(0), in);
      }
      if (!index.multi.empty()) {
        const std::vector<int64_t> strides = RowMajorStrides(out_dims);
        llvm::Value* rows = b_.getInt64(0);  // the row number, counted in innermost rows
        for (size_t d = 0; d + 1 < rank; ++d) {
          rows = b_.CreateAdd(rows, b_.CreateMul(index.multi[d],
                                                 b_.getInt64(strides[d] / out_dims.back())));
        }
        in.multi.resize(in_dims.size());
        in.multi.back() = index.multi.back();
        for (int64_t d = static_cast<int64_t>(in_dims.size()) - 2; d >= 0; --d) {
          if (d == 0) {
            in.multi[d] = rows;
            break;
          }
          in.multi[d] = b_.CreateURem(rows, b_.getInt64(in_dims[d]));
          rows = b_.CreateUDiv(rows, b_.getInt64(in_dims[d]));
        }
      }
      SetRange(in, in_dims.size() - 1, RangeOf(index, rank - 1));
      return Generate(inst->operand(0), in);
    }
    case Opcode::kBroadcastInDim: {
      const ir::Value* operand = inst->operand(0);
      const std::vector<int64_t>& in_dims = operand->type().dims();
      if (in_dims.empty()) return Generate(operand, ScalarIndex());
      const std::vector<int64_t>& bd = *passes::IntsAttribute(*inst, "broadcast_dimensions");
      const std::vector<llvm::Value*>& m = Multi(index);
      ElementIndex& in = NewIndex(&in_dims);
      for (size_t k = 0; k < in_dims.size(); ++k) {
        in.multi.push_back(in_dims[k] == 1 ? b_.getInt64(0) : m[bd[k]]);
        if (in_dims[k] != 1) SetRange(in, k, RangeOf(index, bd[k]));
      }
      in.linear = Linearize(in.multi, in_dims);
      return Generate(operand, in);
    }
    case Opcode::kTranspose: {
      const std::vector<int64_t>& perm = *passes::IntsAttribute(*inst, "permutation");
      const std::vector<int64_t>& in_dims = inst->operand(0)->type().dims();
      const std::vector<llvm::Value*>& m = Multi(index);
      ElementIndex& in = NewIndex(&in_dims);
      in.multi.resize(in_dims.size());
      for (size_t d = 0; d < perm.size(); ++d) {
        in.multi[perm[d]] = m[d];
        SetRange(in, perm[d], RangeOf(index, d));
      }
      in.linear = Linearize(in.multi, in_dims);
      return Generate(inst->operand(0), in);
    }
    case Opcode::kSlice: {
      const std::vector<int64_t>& start = *passes::IntsAttribute(*inst, "start_indices");
      const std::vector<int64_t>* strides = passes::IntsAttribute(*inst, "strides");
      const std::vector<int64_t>& in_dims = inst->operand(0)->type().dims();
      const std::vector<llvm::Value*>& m = Multi(index);
      ElementIndex& in = NewIndex(&in_dims);
      for (size_t k = 0; k < in_dims.size(); ++k) {
        const int64_t s = strides != nullptr ? (*strides)[k] : 1;
        in.multi.push_back(b_.CreateAdd(b_.getInt64(start[k]), b_.CreateMul(m[k], b_.getInt64(s))));
        const IndexRange r = RangeOf(index, k);
        SetRange(in, k, IndexRange{start[k] + r.lo * s, start[k] + (r.hi - 1) * s + 1});
      }
      in.linear = Linearize(in.multi, in_dims);
      return Generate(inst->operand(0), in);
    }
    case Opcode::kReverse: {
      const std::vector<int64_t>& in_dims = inst->operand(0)->type().dims();
      const std::vector<llvm::Value*>& m = Multi(index);
      ElementIndex& in = NewIndex(&in_dims);
      in.multi = m;
      in.ranges = index.ranges;
      for (int64_t d : *passes::IntsAttribute(*inst, "dimensions")) {
        in.multi[d] = b_.CreateSub(b_.getInt64(in_dims[d] - 1), m[d]);
        const IndexRange r = RangeOf(index, d);
        SetRange(in, d, IndexRange{in_dims[d] - r.hi, in_dims[d] - r.lo});
      }
      in.linear = Linearize(in.multi, in_dims);
      return Generate(inst->operand(0), in);
    }
    case Opcode::kDynamicSlice: {
      // Start indices clamped into [0, dim - size], as the spec (and the evaluator) say.
      const std::vector<int64_t>& in_dims = inst->operand(0)->type().dims();
      const std::vector<llvm::Value*>& m = Multi(index);
      std::vector<llvm::Value*> multi;
      for (size_t d = 0; d < in_dims.size(); ++d) {
        const ir::Value* start = inst->operand(1 + d);
        EMBER_ASSIGN_OR_RETURN(llvm::Value * s, Generate(start, ScalarIndex()));
        s = ToInt64(s, start->type().element_type());
        llvm::Value* hi = b_.getInt64(in_dims[d] - out_dims[d]);
        s = b_.CreateSelect(b_.CreateICmpSLT(s, b_.getInt64(0)), b_.getInt64(0), s);
        s = b_.CreateSelect(b_.CreateICmpSGT(s, hi), hi, s);
        multi.push_back(b_.CreateAdd(m[d], s));
      }
      ElementIndex& in = NewIndex(&in_dims);
      in.multi = std::move(multi);
      in.linear = Linearize(in.multi, in_dims);
      return Generate(inst->operand(0), in);
    }
    case Opcode::kPad: {
      // Result position m is operand element (m - low) / (interior + 1) when that divides and
      // lands inside the operand, else the padding value. The operand is read at a clamped
      // index either way (every lane loads in bounds), then selected.
      const std::vector<int64_t>& in_dims = inst->operand(0)->type().dims();
      const std::vector<int64_t>& low = *passes::IntsAttribute(*inst, "edge_padding_low");
      const std::vector<int64_t>* interior = passes::IntsAttribute(*inst, "interior_padding");
      // A dim whose known range lies wholly inside the operand needs neither; one wholly in the
      // padding makes the element the padding value.
      const std::vector<llvm::Value*>& m = Multi(index);
      llvm::Value* inside = b_.getTrue();
      ElementIndex& in = NewIndex(&in_dims);
      for (size_t d = 0; d < in_dims.size(); ++d) {
        const int64_t step = (interior != nullptr ? (*interior)[d] : 0) + 1;
        const IndexRange r = RangeOf(index, d);
        if (step == 1 && (r.hi - low[d] <= 0 || r.lo - low[d] >= in_dims[d])) {
          return Generate(inst->operand(1), ScalarIndex());
        }
        if (step == 1 && r.lo - low[d] >= 0 && r.hi - low[d] <= in_dims[d]) {
          in.multi.push_back(b_.CreateSub(m[d], b_.getInt64(low[d])));
          SetRange(in, d, IndexRange{r.lo - low[d], r.hi - low[d]});
          continue;
        }
        llvm::Value* p = b_.CreateSub(m[d], b_.getInt64(low[d]));
        llvm::Value* nonneg = b_.CreateICmpSGE(p, b_.getInt64(0));
        llvm::Value* safe_p = b_.CreateSelect(nonneg, p, b_.getInt64(0));
        llvm::Value* q = safe_p;
        if (step > 1) {
          q = b_.CreateUDiv(safe_p, b_.getInt64(step));
          inside = b_.CreateAnd(inside, b_.CreateICmpEQ(b_.CreateURem(safe_p, b_.getInt64(step)),
                                                        b_.getInt64(0)));
        }
        llvm::Value* below = b_.CreateICmpSLT(q, b_.getInt64(in_dims[d]));
        inside = b_.CreateAnd(inside, b_.CreateAnd(nonneg, below));
        in.multi.push_back(b_.CreateSelect(below, q, b_.getInt64(in_dims[d] - 1)));
      }
      in.linear = Linearize(in.multi, in_dims);
      EMBER_ASSIGN_OR_RETURN(llvm::Value * element, Generate(inst->operand(0), in));
      EMBER_ASSIGN_OR_RETURN(llvm::Value * padding, Generate(inst->operand(1), ScalarIndex()));
      return b_.CreateSelect(inside, element, padding);
    }
    case Opcode::kConcatenate: {
      // Each operand read at its clamped position along the dimension, the one whose range
      // holds the index selected.
      const int64_t dim = inst->attribute("dimension")->i;
      const std::vector<llvm::Value*>& m = Multi(index);
      llvm::Value* result = nullptr;
      int64_t offset = 0;
      const IndexRange r = RangeOf(index, dim);
      for (const ir::Value* operand : inst->operands()) {
        const std::vector<int64_t>& in_dims = operand->type().dims();
        const int64_t size = in_dims[dim];
        if (size == 0) continue;
        if (r.lo >= offset && r.hi <= offset + size) {  // the known range picks this operand
          ElementIndex& in = NewIndex(&in_dims);
          in.multi = m;
          in.ranges = index.ranges;
          in.multi[dim] = b_.CreateSub(m[dim], b_.getInt64(offset));
          SetRange(in, dim, IndexRange{r.lo - offset, r.hi - offset});
          in.linear = Linearize(in.multi, in_dims);
          return Generate(operand, in);
        }
        llvm::Value* local = b_.CreateSub(m[dim], b_.getInt64(offset));
        llvm::Value* clamped = b_.CreateSelect(
            b_.CreateICmpSLT(local, b_.getInt64(0)), b_.getInt64(0),
            b_.CreateSelect(b_.CreateICmpSGE(local, b_.getInt64(size)), b_.getInt64(size - 1),
                            local));
        ElementIndex& in = NewIndex(&in_dims);
        in.multi = m;
        in.multi[dim] = clamped;
        in.ranges = index.ranges;
        if (!in.ranges.empty()) in.ranges[dim].reset();
        in.linear = Linearize(in.multi, in_dims);
        EMBER_ASSIGN_OR_RETURN(llvm::Value * element, Generate(operand, in));
        result = result == nullptr
                     ? element
                     : b_.CreateSelect(b_.CreateICmpSGE(m[dim], b_.getInt64(offset)), element,
                                       result);
        offset += size;
      }
      if (result == nullptr) return absl::InternalError("concatenate of empty operands");
      return result;
    }
    case Opcode::kGather: {
      // The element of the operand that result element `m` copies (loop_support.h's
      // GatherDims): start indices read from the indices at m's batch index, clamped so the
      // slice lies inside the operand, as the spec (and the evaluator) say.
      std::optional<GatherDims> g = ReadGatherDims(*inst);
      if (!g.has_value()) return absl::InternalError("gather dims changed after planning");
      const ir::Value* indices = inst->operand(1);
      const std::vector<int64_t>& in_dims = inst->operand(0)->type().dims();
      const std::vector<llvm::Value*>& m = Multi(index);
      std::vector<llvm::Value*> batch;
      for (int64_t d : g->batch_dims) batch.push_back(m[d]);
      std::vector<llvm::Value*> multi(in_dims.size(), b_.getInt64(0));
      for (size_t k = 0; k < g->start_index_map.size(); ++k) {
        EMBER_ASSIGN_OR_RETURN(llvm::Value * start,
                               IndexComponent(indices, g->index_vector_dim, batch, k));
        const int64_t d = g->start_index_map[k];
        llvm::Value* hi = b_.getInt64(in_dims[d] - g->slice_sizes[d]);
        start = b_.CreateSelect(b_.CreateICmpSLT(start, b_.getInt64(0)), b_.getInt64(0), start);
        start = b_.CreateSelect(b_.CreateICmpSGT(start, hi), hi, start);
        multi[d] = b_.CreateAdd(multi[d], start);
      }
      for (size_t i = 0; i < g->operand_batching_dims.size(); ++i) {
        const int64_t d = g->indices_batching_dims[i];
        llvm::Value* position = batch[d - (d < g->index_vector_dim ? 0 : 1)];
        const int64_t od = g->operand_batching_dims[i];
        multi[od] = b_.CreateAdd(multi[od], position);
      }
      for (size_t i = 0; i < g->offset_dims.size(); ++i) {
        const int64_t od = g->offset_operand_dims[i];
        multi[od] = b_.CreateAdd(multi[od], m[g->offset_dims[i]]);
      }
      ElementIndex& in = NewIndex(&in_dims);
      in.multi = std::move(multi);
      in.linear = Linearize(in.multi, in_dims);
      return Generate(inst->operand(0), in);
    }
    case Opcode::kReduceWindow:
      return GenerateReduceWindow(*inst, index);
    case Opcode::kSelectAndScatter:
      return GenerateSelectAndScatter(*inst, index);
    case Opcode::kBitcastConvert: {
      // A narrow float read from memory: its stored bits as they are (NaN payloads and
      // signalling NaNs kept, which the widened value would lose).
      const ir::Value* operand = inst->operand(0);
      const ir::ElementType from = operand->type().element_type();
      auto base = input_base_.find(operand);
      const ir::Instruction* producer = operand->producer();
      if (ir::NarrowFloatFormat(from) != nullptr && base != input_base_.end() &&
          (producer == nullptr || !in_kernel_.contains(producer))) {
        llvm::Type* storage = elemental_.StorageType(from);
        llvm::Value* at = operand->type().dims().empty() ? b_.getInt64(0) : index.linear;
        llvm::Value* bits = b_.CreateLoad(storage, b_.CreateGEP(storage, base->second, at));
        return elemental_.FromStorage(v->type().element_type(), bits);
      }
      break;
    }
    case Opcode::kIota: {
      const int64_t d = inst->attribute("iota_dimension")->i;
      llvm::Value* position = Multi(index)[d];
      // The index converted as an s64 value (the evaluator's ConvertElement of the index).
      return elemental_.ConvertElement(ir::ElementType::kS64, v->type().element_type(),
                                       position);
    }
    default:
      break;
  }
  std::vector<llvm::Value*> operands;
  for (const ir::Value* operand : inst->operands()) {
    const bool scalar = operand->type().dims().empty() && !out_dims.empty();
    EMBER_ASSIGN_OR_RETURN(llvm::Value * element,
                           Generate(operand, scalar ? ScalarIndex() : index));
    operands.push_back(element);
  }
  return elemental_.EmitElementwise(*inst, operands);
}

absl::StatusOr<llvm::Value*> ElementGenerator::GenerateReduceWindow(const ir::Instruction& inst,
                                                                    ElementIndex& index) {
  // Windows of up to this many elements are folded in straight-line code: the kernel's element
  // loop then stays one block and vectorizes (a window over other dims than the innermost one
  // reads consecutive elements across it).
  constexpr int64_t kUnrolledPositions = 32;
  const absl::StatusOr<WindowFold> fold = ReduceWindowFold(inst);
  if (!fold.ok()) {
    return absl::InternalError(
        absl::StrCat(inst.Describe(), " is no reduce_window the emitter folds"));
  }
  const ir::Value* operand = inst.operand(0);
  const std::vector<int64_t>& in_dims = operand->type().dims();
  const size_t rank = in_dims.size();
  const ir::ElementType t = inst.result()->type().element_type();
  EMBER_ASSIGN_OR_RETURN(llvm::Value * init, Generate(inst.operand(1), ScalarIndex()));
  const std::vector<llvm::Value*> m = Multi(index);
  // Per dim: the operand position of window index 0, before base dilation.
  std::vector<llvm::Value*> first(rank);
  for (size_t d = 0; d < rank; ++d) {
    first[d] = b_.CreateSub(b_.CreateMul(m[d], b_.getInt64(fold->strides[d])),
                            b_.getInt64(fold->padding_low[d]));
  }
  // The element at window index `w` (one value per dim): the operand's element there, or the
  // init value at padding and holes. The operand is read at a clamped index either way (every
  // lane loads in bounds), then selected, as pad does.
  auto element_at = [&](const std::vector<llvm::Value*>& w) -> absl::StatusOr<llvm::Value*> {
    ElementIndex& in = NewIndex(&in_dims);
    llvm::Value* inside = nullptr;
    for (size_t d = 0; d < rank; ++d) {
      llvm::Value* q =
          b_.CreateAdd(first[d], b_.CreateMul(w[d], b_.getInt64(fold->window_dilations[d])));
      if (fold->always_inside[d]) {
        in.multi.push_back(q);
        continue;
      }
      llvm::Value* nonneg = b_.CreateICmpSGE(q, b_.getInt64(0));
      llvm::Value* safe = b_.CreateSelect(nonneg, q, b_.getInt64(0));
      llvm::Value* ok = nonneg;
      const int64_t dilation = fold->base_dilations[d];
      if (dilation > 1) {
        ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateURem(safe, b_.getInt64(dilation)),
                                              b_.getInt64(0)));
        safe = b_.CreateUDiv(safe, b_.getInt64(dilation));
      }
      llvm::Value* below = b_.CreateICmpSLT(safe, b_.getInt64(in_dims[d]));
      ok = b_.CreateAnd(ok, below);
      inside = inside == nullptr ? ok : b_.CreateAnd(inside, ok);
      in.multi.push_back(b_.CreateSelect(below, safe, b_.getInt64(in_dims[d] - 1)));
    }
    in.linear = Linearize(in.multi, in_dims);
    EMBER_ASSIGN_OR_RETURN(llvm::Value * x, Generate(operand, in));
    return inside == nullptr ? x : b_.CreateSelect(inside, x, init);
  };
  llvm::Value* acc = init;
  if (fold->positions <= kUnrolledPositions) {
    std::vector<int64_t> w(rank, 0);
    for (int64_t p = 0; p < fold->positions; ++p) {
      std::vector<llvm::Value*> at;
      for (int64_t v : w) at.push_back(b_.getInt64(v));
      EMBER_ASSIGN_OR_RETURN(llvm::Value * x, element_at(at));
      acc = elemental_.EmitBinary(fold->op, t, acc, x);
      for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {  // row-major order
        if (++w[d] < fold->window[d]) break;
        w[d] = 0;
      }
    }
    return acc;
  }
  // Larger windows: a loop per windowed dim, outermost first. Code generated inside the loops
  // is not reused after them (it does not dominate what follows).
  const std::map<std::pair<const ir::Value*, int>, llvm::Value*> outside = memo_;
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  std::vector<llvm::Value*> w(rank, b_.getInt64(0));
  std::vector<llvm::PHINode*> counters, accs;
  std::vector<llvm::BasicBlock*> heads;
  for (size_t d = 0; d < rank; ++d) {
    if (fold->window[d] == 1) continue;
    llvm::BasicBlock* before = b_.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(b_.getContext(), "window", fn);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "w");
    i->addIncoming(b_.getInt64(0), before);
    llvm::PHINode* a = b_.CreatePHI(acc->getType(), 2, "window_acc");
    a->addIncoming(acc, before);
    acc = a;
    w[d] = i;
    counters.push_back(i);
    accs.push_back(a);
    heads.push_back(head);
  }
  EMBER_ASSIGN_OR_RETURN(llvm::Value * x, element_at(w));
  acc = elemental_.EmitBinary(fold->op, t, acc, x);
  // Close the loops innermost first; each loop's result is the next outer one's new value.
  size_t level = counters.size();
  for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
    if (fold->window[d] == 1) continue;
    --level;
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    llvm::Value* next = b_.CreateAdd(counters[level], b_.getInt64(1));
    counters[level]->addIncoming(next, latch);
    accs[level]->addIncoming(acc, latch);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(b_.getContext(), "window_done", fn);
    b_.CreateCondBr(b_.CreateICmpSLT(next, b_.getInt64(fold->window[d])), heads[level], done);
    b_.SetInsertPoint(done);
  }
  memo_ = outside;
  return acc;
}

absl::StatusOr<llvm::Value*> ElementGenerator::GenerateSelectAndScatter(
    const ir::Instruction& inst, ElementIndex& index) {
  const absl::StatusOr<WindowScatter> s = SelectAndScatterFold(inst);
  if (!s.ok()) {
    return absl::InternalError(
        absl::StrCat(inst.Describe(), " is no select_and_scatter the emitter gathers"));
  }
  const ir::Value* operand = inst.operand(0);
  const ir::Value* source = inst.operand(1);
  const std::vector<int64_t>& dims = operand->type().dims();
  const std::vector<int64_t>& source_dims = source->type().dims();
  const size_t rank = dims.size();
  const ir::ElementType t = inst.result()->type().element_type();
  EMBER_ASSIGN_OR_RETURN(llvm::Value * acc, Generate(inst.operand(2), ScalarIndex()));
  const std::vector<llvm::Value*> m = Multi(index);
  // Per dim: the last window holding m (m + low >= 0: padding is never negative here); the
  // windows holding m are the `holding` ones up to it that exist and reach m.
  std::vector<llvm::Value*> last(rank);
  for (size_t d = 0; d < rank; ++d) {
    last[d] = b_.CreateUDiv(b_.CreateAdd(m[d], b_.getInt64(s->padding_low[d])),
                            b_.getInt64(s->strides[d]));
  }
  int64_t combinations = 1;
  for (int64_t h : s->holding) combinations *= h;
  int64_t positions = 1;
  for (int64_t w : s->window) positions *= w;
  std::vector<int64_t> k(rank, 0);
  // The windows in the source's row-major order (the evaluator's scatter order).
  for (int64_t c = 0; c < combinations; ++c) {
    llvm::Value* holds = b_.getTrue();
    std::vector<llvm::Value*> win(rank), offset(rank);
    for (size_t d = 0; d < rank; ++d) {
      llvm::Value* w = b_.CreateSub(last[d], b_.getInt64(s->holding[d] - 1 - k[d]));
      // Its offset of m inside the window: m + low - w * stride (at least 0 as w <= last).
      llvm::Value* off = b_.CreateSub(b_.CreateAdd(m[d], b_.getInt64(s->padding_low[d])),
                                      b_.CreateMul(w, b_.getInt64(s->strides[d])));
      llvm::Value* ok = b_.CreateAnd(
          b_.CreateAnd(b_.CreateICmpSGE(w, b_.getInt64(0)),
                       b_.CreateICmpSLT(w, b_.getInt64(s->windows[d]))),
          b_.CreateICmpSLT(off, b_.getInt64(s->window[d])));
      holds = b_.CreateAnd(holds, ok);
      win[d] = b_.CreateSelect(ok, w, b_.getInt64(0));  // a window that exists, to read
      offset[d] = off;
    }
    // The window's pick: its first element inside the operand, replaced by each later one
    // inside it unless select(pick, candidate) holds.
    llvm::Value* pick = nullptr;
    llvm::Value* pick_at = b_.getInt64(-1);
    llvm::Value* picked = b_.getFalse();
    std::vector<int64_t> p(rank, 0);
    for (int64_t q = 0; q < positions; ++q) {
      ElementIndex& at = NewIndex(&dims);
      llvm::Value* inside = b_.getTrue();
      for (size_t d = 0; d < rank; ++d) {
        llvm::Value* x = b_.CreateSub(
            b_.CreateAdd(b_.CreateMul(win[d], b_.getInt64(s->strides[d])), b_.getInt64(p[d])),
            b_.getInt64(s->padding_low[d]));
        llvm::Value* in = b_.CreateAnd(b_.CreateICmpSGE(x, b_.getInt64(0)),
                                       b_.CreateICmpSLT(x, b_.getInt64(dims[d])));
        inside = b_.CreateAnd(inside, in);
        at.multi.push_back(b_.CreateSelect(in, x, b_.getInt64(0)));
      }
      at.linear = Linearize(at.multi, dims);
      EMBER_ASSIGN_OR_RETURN(llvm::Value * candidate, Generate(operand, at));
      llvm::Value* take = inside;
      if (pick == nullptr) {
        pick = candidate;
      } else {
        const std::vector<llvm::Value*> args =
            s->swapped ? std::vector<llvm::Value*>{candidate, pick}
                       : std::vector<llvm::Value*>{pick, candidate};
        EMBER_ASSIGN_OR_RETURN(llvm::Value * keep, elemental_.EmitElementwise(*s->compare, args));
        take = b_.CreateAnd(inside, b_.CreateOr(b_.CreateNot(picked), b_.CreateNot(keep)));
        pick = b_.CreateSelect(take, candidate, pick);
      }
      pick_at = b_.CreateSelect(take, b_.getInt64(q), pick_at);
      picked = b_.CreateOr(picked, inside);
      for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
        if (++p[d] < s->window[d]) break;
        p[d] = 0;
      }
    }
    llvm::Value* mine = b_.CreateAnd(holds, b_.CreateICmpEQ(pick_at, Linearize(offset, s->window)));
    ElementIndex& from = NewIndex(&source_dims);
    from.multi = win;
    from.linear = Linearize(win, source_dims);
    EMBER_ASSIGN_OR_RETURN(llvm::Value * x, Generate(source, from));
    acc = b_.CreateSelect(mine, elemental_.EmitBinary(s->scatter_op, t, acc, x), acc);
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++k[d] < s->holding[d]) break;
      k[d] = 0;
    }
  }
  return acc;
}

}  // namespace ember::codegen
