#include "compiler/codegen/loop_emitter.h"

#include <deque>
#include <map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/loop_support.h"
#include "compiler/passes/rewrite.h"
#include "llvm/IR/IRBuilder.h"

namespace ember::codegen {
namespace {

using ir::Opcode;

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

// An element index into a value of dims `dims`: the row-major linear index, and the index per
// dim, computed from the linear one only when an index op asks (`multi` empty until then).
struct Index {
  int id = 0;
  const std::vector<int64_t>* dims = nullptr;
  llvm::Value* linear = nullptr;
  std::vector<llvm::Value*> multi;
};

class LoopEmitter {
 public:
  LoopEmitter(const passes::Kernel& kernel, llvm::Module& module)
      : kernel_(kernel), module_(module), b_(module.getContext()), elemental_(b_) {
    for (const ir::Instruction* inst : kernel.instructions) in_kernel_.insert(inst);
  }

  absl::Status Emit(const std::string& name) {
    llvm::LLVMContext& ctx = module_.getContext();
    llvm::Type* ptr = b_.getPtrTy();
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::FunctionType* type =
        llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, i64, i64}, /*isVarArg=*/false);
    llvm::Function* fn =
        llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module_);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::Value* inputs = fn->getArg(0);
    llvm::Value* outputs = fn->getArg(1);
    llvm::Value* begin = fn->getArg(2);
    llvm::Value* end = fn->getArg(3);

    llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
    llvm::BasicBlock* outer = llvm::BasicBlock::Create(ctx, "row", fn);
    llvm::BasicBlock* inner = llvm::BasicBlock::Create(ctx, "element", fn);
    llvm::BasicBlock* latch = llvm::BasicBlock::Create(ctx, "row_end", fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn);

    // Entry: the buffers' addresses, and scalar inputs loaded once.
    b_.SetInsertPoint(entry);
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
    std::vector<llvm::Value*> output_base;
    for (size_t k = 0; k < kernel_.outputs.size(); ++k) {
      output_base.push_back(b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, outputs, k)));
    }
    b_.CreateCondBr(b_.CreateICmpSLT(begin, end), outer, exit);

    // Rows of the innermost dim (one row over everything when no op needs per-dim indices).
    const std::vector<int64_t>& dims = kernel_.root()->result()->type().dims();
    const int64_t total = kernel_.root()->result()->type().shape().element_count();
    const bool flat = Flat();
    const int64_t row = flat || dims.empty() ? std::max<int64_t>(1, total) : dims.back();
    b_.SetInsertPoint(outer);
    llvm::PHINode* i = b_.CreatePHI(i64, 2, "i");
    i->addIncoming(begin, entry);
    llvm::Value* row_index = b_.CreateUDiv(i, b_.getInt64(row));
    llvm::Value* row_base = b_.CreateMul(row_index, b_.getInt64(row));
    llvm::Value* j0 = b_.CreateSub(i, row_base);
    llvm::Value* left = b_.CreateSub(end, row_base);
    llvm::Value* j_end = b_.CreateSelect(b_.CreateICmpSLT(left, b_.getInt64(row)), left,
                                         b_.getInt64(row));
    std::vector<llvm::Value*> outer_multi;
    if (!flat && !dims.empty()) {
      outer_multi.resize(dims.size());
      llvm::Value* r = row_index;
      for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
        outer_multi[d] = b_.CreateURem(r, b_.getInt64(dims[d]));
        r = b_.CreateUDiv(r, b_.getInt64(dims[d]));
      }
    }
    b_.CreateBr(inner);

    b_.SetInsertPoint(inner);
    llvm::PHINode* j = b_.CreatePHI(i64, 2, "j");
    j->addIncoming(j0, outer);
    Index& root = NewIndex(&dims);
    root.linear = b_.CreateAdd(row_base, j);
    if (!outer_multi.empty()) {
      root.multi = outer_multi;
      root.multi.back() = j;
    }
    // Every output element is computed before any is stored: a donated parameter may share its
    // buffer with an output (buffer assignment allows that only where both use the same index),
    // and no load of it may come after that store.
    std::vector<llvm::Value*> elements;
    for (const ir::Value* v : kernel_.outputs) {
      EMBER_ASSIGN_OR_RETURN(llvm::Value * element, Generate(v, root));
      elements.push_back(element);
    }
    for (size_t k = 0; k < kernel_.outputs.size(); ++k) {
      const ir::ElementType t = kernel_.outputs[k]->type().element_type();
      llvm::Value* address =
          b_.CreateGEP(elemental_.StorageType(t), output_base[k], root.linear);
      b_.CreateStore(elemental_.ToStorage(t, elements[k]), address);
    }
    llvm::Value* j_next = b_.CreateAdd(j, b_.getInt64(1));
    j->addIncoming(j_next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(j_next, j_end), inner, latch);

    b_.SetInsertPoint(latch);
    llvm::Value* next = b_.CreateAdd(row_base, j_end);
    i->addIncoming(next, latch);
    b_.CreateCondBr(b_.CreateICmpSLT(next, end), outer, exit);

    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
    return absl::OkStatus();
  }

 private:
  // No op needs per-dim indices: only elementwise ops, reshapes and broadcasts of scalars.
  bool Flat() const {
    for (const ir::Instruction* inst : kernel_.instructions) {
      switch (inst->opcode()) {
        case Opcode::kReshape:
          break;
        case Opcode::kBroadcastInDim:
          if (!inst->operand(0)->type().dims().empty()) return false;
          break;
        case Opcode::kTranspose:
        case Opcode::kSlice:
        case Opcode::kIota:
          return false;
        default:
          break;
      }
    }
    return true;
  }

  Index& NewIndex(const std::vector<int64_t>* dims) {
    Index& index = indices_.emplace_back();
    index.id = static_cast<int>(indices_.size()) - 1;
    index.dims = dims;
    return index;
  }

  Index& ScalarIndex() {
    if (scalar_index_ == nullptr) {
      scalar_index_ = &NewIndex(&kNoDims);
      scalar_index_->linear = b_.getInt64(0);
    }
    return *scalar_index_;
  }

  const std::vector<llvm::Value*>& Multi(Index& index) {
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

  // The linear index of `multi` in `dims`.
  llvm::Value* Linearize(const std::vector<llvm::Value*>& multi, const std::vector<int64_t>& dims) {
    const std::vector<int64_t> strides = RowMajorStrides(dims);
    llvm::Value* linear = b_.getInt64(0);
    for (size_t k = 0; k < dims.size(); ++k) {
      linear = b_.CreateAdd(linear, b_.CreateMul(multi[k], b_.getInt64(strides[k])));
    }
    return linear;
  }

  absl::StatusOr<llvm::Value*> Generate(const ir::Value* v, Index& index) {
    auto key = std::make_pair(v, index.id);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    EMBER_ASSIGN_OR_RETURN(llvm::Value * element, GenerateUncached(v, index));
    memo_[key] = element;
    return element;
  }

  absl::StatusOr<llvm::Value*> GenerateUncached(const ir::Value* v, Index& index) {
    if (auto s = scalars_.find(v); s != scalars_.end()) return s->second;
    const ir::Instruction* inst = v->producer();
    if (inst == nullptr || !in_kernel_.contains(inst)) {
      auto base = input_base_.find(v);
      if (base == input_base_.end()) {
        return absl::InternalError("loop emitter: a value read by the kernel is no kernel input");
      }
      const ir::ElementType t = v->type().element_type();
      llvm::Type* storage = elemental_.StorageType(t);
      return elemental_.FromStorage(
          t, b_.CreateLoad(storage, b_.CreateGEP(storage, base->second, index.linear)));
    }
    const std::vector<int64_t>& out_dims = v->type().dims();
    switch (inst->opcode()) {
      case Opcode::kReshape: {
        Index& in = NewIndex(&inst->operand(0)->type().dims());
        in.linear = index.linear;
        return Generate(inst->operand(0), in);
      }
      case Opcode::kBroadcastInDim: {
        const ir::Value* operand = inst->operand(0);
        const std::vector<int64_t>& in_dims = operand->type().dims();
        if (in_dims.empty()) return Generate(operand, ScalarIndex());
        const std::vector<int64_t>& bd = *passes::IntsAttribute(*inst, "broadcast_dimensions");
        const std::vector<llvm::Value*>& m = Multi(index);
        Index& in = NewIndex(&in_dims);
        for (size_t k = 0; k < in_dims.size(); ++k) {
          in.multi.push_back(in_dims[k] == 1 ? b_.getInt64(0) : m[bd[k]]);
        }
        in.linear = Linearize(in.multi, in_dims);
        return Generate(operand, in);
      }
      case Opcode::kTranspose: {
        const std::vector<int64_t>& perm = *passes::IntsAttribute(*inst, "permutation");
        const std::vector<int64_t>& in_dims = inst->operand(0)->type().dims();
        const std::vector<llvm::Value*>& m = Multi(index);
        Index& in = NewIndex(&in_dims);
        in.multi.resize(in_dims.size());
        for (size_t d = 0; d < perm.size(); ++d) in.multi[perm[d]] = m[d];
        in.linear = Linearize(in.multi, in_dims);
        return Generate(inst->operand(0), in);
      }
      case Opcode::kSlice: {
        const std::vector<int64_t>& start = *passes::IntsAttribute(*inst, "start_indices");
        const std::vector<int64_t>* strides = passes::IntsAttribute(*inst, "strides");
        const std::vector<int64_t>& in_dims = inst->operand(0)->type().dims();
        const std::vector<llvm::Value*>& m = Multi(index);
        Index& in = NewIndex(&in_dims);
        for (size_t k = 0; k < in_dims.size(); ++k) {
          const int64_t s = strides != nullptr ? (*strides)[k] : 1;
          in.multi.push_back(
              b_.CreateAdd(b_.getInt64(start[k]), b_.CreateMul(m[k], b_.getInt64(s))));
        }
        in.linear = Linearize(in.multi, in_dims);
        return Generate(inst->operand(0), in);
      }
      case Opcode::kIota: {
        const int64_t d = inst->attribute("iota_dimension")->i;
        llvm::Value* position = Multi(index)[d];
        const ir::ElementType t = v->type().element_type();
        llvm::Type* ct = elemental_.ComputeType(t);
        if (ir::IsFloat(t)) return b_.CreateSIToFP(position, ct);
        return b_.CreateTrunc(position, ct);
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

  static inline const std::vector<int64_t> kNoDims;

  const passes::Kernel& kernel_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  ElementalEmitter elemental_;
  std::unordered_set<const ir::Instruction*> in_kernel_;
  std::map<const ir::Value*, llvm::Value*> input_base_;
  std::map<const ir::Value*, llvm::Value*> scalars_;
  std::deque<Index> indices_;
  Index* scalar_index_ = nullptr;
  std::map<std::pair<const ir::Value*, int>, llvm::Value*> memo_;
};

}  // namespace

absl::Status EmitLoopKernel(const passes::Kernel& kernel, const std::string& name,
                            llvm::Module& module) {
  if (std::string why = LoopKernelRefusal(kernel); !why.empty()) {
    return absl::UnimplementedError(absl::StrCat("loop kernel ", name, ": ", why));
  }
  LoopEmitter emitter(kernel, module);
  return emitter.Emit(name);
}

}  // namespace ember::codegen
