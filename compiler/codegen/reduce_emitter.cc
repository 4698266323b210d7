#include "compiler/codegen/reduce_emitter.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/element_generator.h"
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/reduce_support.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"

namespace ember::codegen {
namespace {

using ir::ElementType;
using ir::Opcode;

class ReduceEmitter {
 public:
  ReduceEmitter(const passes::Kernel& kernel, const ReduceKernelLayout& layout,
                llvm::Module& module)
      : kernel_(kernel),
        layout_(layout),
        module_(module),
        b_(module.getContext()),
        elemental_(b_),
        generator_(kernel, b_, elemental_) {}

  absl::Status Emit(const std::string& name) {
    llvm::LLVMContext& ctx = module_.getContext();
    llvm::Type* ptr = b_.getPtrTy();
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::FunctionType* type =
        llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, i64, i64}, /*isVarArg=*/false);
    llvm::Function* fn =
        llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module_);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::Value* row_begin = fn->getArg(2);
    llvm::Value* row_end = fn->getArg(3);

    llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
    llvm::BasicBlock* row = llvm::BasicBlock::Create(ctx, "row", fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
    b_.SetInsertPoint(entry);
    generator_.LoadInputs(fn->getArg(0));
    std::vector<llvm::Value*> output_base;
    for (size_t k = 0; k < kernel_.outputs.size(); ++k) {
      output_base.push_back(b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, fn->getArg(1), k)));
    }
    // The init values: scalar kernel inputs, loaded in the entry block.
    std::vector<llvm::Value*> inits;
    for (const ir::Instruction* reduce : layout_.reduces) {
      ElementIndex& at = generator_.NewIndex(&reduce->operand(1)->type().dims());
      at.linear = b_.getInt64(0);
      EMBER_ASSIGN_OR_RETURN(llvm::Value * init, generator_.Generate(reduce->operand(1), at));
      inits.push_back(init);
    }
    b_.CreateCondBr(b_.CreateICmpSLT(row_begin, row_end), row, exit);

    // One row: fold its elements, then the epilogue at the row's output element.
    b_.SetInsertPoint(row);
    llvm::PHINode* r = b_.CreatePHI(i64, 2, "r");
    r->addIncoming(row_begin, entry);
    llvm::Value* row_base = b_.CreateMul(r, b_.getInt64(layout_.row_length));
    // The kept dims' indices, once per row: index ops (a broadcast of a row statistic) then
    // read loop-invariant addresses, and the element loop stays affine (it vectorizes).
    const int64_t kept = static_cast<int64_t>(layout_.output_dims->size());
    std::vector<llvm::Value*> row_multi(kept);
    {
      llvm::Value* rest = r;
      for (int64_t d = kept - 1; d >= 0; --d) {
        row_multi[d] = d == 0 ? rest : b_.CreateURem(rest, b_.getInt64((*layout_.output_dims)[d]));
        if (d > 0) rest = b_.CreateUDiv(rest, b_.getInt64((*layout_.output_dims)[d]));
      }
    }
    std::vector<llvm::Value*> accs = inits;
    if (layout_.row_length > 0) {
      generator_.NewScope();
      llvm::BasicBlock* element = llvm::BasicBlock::Create(ctx, "element", fn);
      llvm::BasicBlock* before = b_.GetInsertBlock();
      b_.CreateBr(element);
      b_.SetInsertPoint(element);
      llvm::PHINode* j = b_.CreatePHI(i64, 2, "j");
      j->addIncoming(b_.getInt64(0), before);
      std::vector<llvm::PHINode*> phis;
      for (size_t k = 0; k < accs.size(); ++k) {
        phis.push_back(b_.CreatePHI(accs[k]->getType(), 2, "acc"));
        phis.back()->addIncoming(accs[k], before);
      }
      ElementIndex& in = generator_.NewIndex(layout_.input_dims);
      in.linear = b_.CreateAdd(row_base, j);
      const int64_t rank = static_cast<int64_t>(layout_.input_dims->size());
      in.multi = row_multi;
      in.multi.resize(rank);
      llvm::Value* rest = j;
      for (int64_t d = rank - 1; d >= kept; --d) {
        in.multi[d] = d == kept ? rest : b_.CreateURem(rest, b_.getInt64((*layout_.input_dims)[d]));
        if (d > kept) rest = b_.CreateUDiv(rest, b_.getInt64((*layout_.input_dims)[d]));
      }
      // Every value of the element first, then the stores (see loop_emitter.cc: a donated
      // input may share its buffer with an output at the same index).
      std::vector<llvm::Value*> folded;
      for (size_t k = 0; k < layout_.reduces.size(); ++k) {
        EMBER_ASSIGN_OR_RETURN(llvm::Value * x,
                               generator_.Generate(layout_.reduces[k]->operand(0), in));
        folded.push_back(
            Fold(layout_.ops[k], layout_.reduces[k]->result()->type().element_type(), phis[k], x));
      }
      std::vector<std::pair<size_t, llvm::Value*>> stores;
      for (size_t o = 0; o < kernel_.outputs.size(); ++o) {
        if (layout_.over_output[o]) continue;
        EMBER_ASSIGN_OR_RETURN(llvm::Value * v, generator_.Generate(kernel_.outputs[o], in));
        stores.emplace_back(o, v);
      }
      for (const auto& [o, v] : stores) Store(o, output_base[o], in.linear, v);
      llvm::Value* j_next = b_.CreateAdd(j, b_.getInt64(1));
      llvm::BasicBlock* latch = b_.GetInsertBlock();
      j->addIncoming(j_next, latch);
      for (size_t k = 0; k < phis.size(); ++k) phis[k]->addIncoming(folded[k], latch);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "row_done", fn);
      b_.CreateCondBr(b_.CreateICmpSLT(j_next, b_.getInt64(layout_.row_length)), element, done);
      b_.SetInsertPoint(done);
      accs = folded;
    }
    generator_.NewScope();
    for (size_t k = 0; k < layout_.reduces.size(); ++k) {
      generator_.Bind(layout_.reduces[k]->result(), accs[k]);
    }
    // Each output at the row's element, in its own dims (the epilogue may reshape [n] to [n, 1]).
    std::vector<llvm::Value*> values;
    for (size_t o = 0; o < kernel_.outputs.size(); ++o) {
      if (!layout_.over_output[o]) continue;
      const ir::Value* v = kernel_.outputs[o];
      ElementIndex& out = generator_.NewIndex(&v->type().dims());
      out.linear = r;
      if (v->type().dims() == *layout_.output_dims) out.multi = row_multi;
      EMBER_ASSIGN_OR_RETURN(llvm::Value * element, generator_.Generate(v, out));
      values.push_back(element);
    }
    size_t next_value = 0;
    for (size_t o = 0; o < kernel_.outputs.size(); ++o) {
      if (layout_.over_output[o]) Store(o, output_base[o], r, values[next_value++]);
    }
    llvm::Value* r_next = b_.CreateAdd(r, b_.getInt64(1));
    r->addIncoming(r_next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(r_next, row_end), row, exit);

    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
    return absl::OkStatus();
  }

 private:
  void Store(size_t output, llvm::Value* base, llvm::Value* linear, llvm::Value* value) {
    const ElementType t = kernel_.outputs[output]->type().element_type();
    b_.CreateStore(elemental_.ToStorage(t, value),
                   b_.CreateGEP(elemental_.StorageType(t), base, linear));
  }

  // acc op x. f32/f64 sums and products may be reassociated (so the loop vectorizes with
  // several partial accumulators); maxima and minima use LLVM's IEEE-754 maximum / minimum,
  // which the vectorizer folds by lanes and which are the evaluator's (NaN wins, -0 < +0).
  // bf16/f16 round after every step, as the evaluator does, and stay sequential.
  llvm::Value* Fold(Opcode op, ElementType type, llvm::Value* acc, llvm::Value* x) {
    const bool wide_float = type == ElementType::kF32 || type == ElementType::kF64;
    if (wide_float && (op == Opcode::kMaximum || op == Opcode::kMinimum)) {
      return b_.CreateBinaryIntrinsic(
          op == Opcode::kMaximum ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, acc, x);
    }
    llvm::Value* v = elemental_.EmitBinary(op, type, acc, x);
    if (wide_float) {
      if (auto* inst = llvm::dyn_cast<llvm::Instruction>(v)) inst->setHasAllowReassoc(true);
    }
    return v;
  }

  const passes::Kernel& kernel_;
  const ReduceKernelLayout& layout_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  ElementalEmitter elemental_;
  ElementGenerator generator_;
};

}  // namespace

absl::Status EmitReduceKernel(const passes::Kernel& kernel, const std::string& name,
                              llvm::Module& module) {
  absl::StatusOr<ReduceKernelLayout> layout = LayOutReduceKernel(kernel);
  if (!layout.ok()) {
    return absl::UnimplementedError(absl::StrCat(name, ": ", layout.status().message()));
  }
  ReduceEmitter emitter(kernel, *layout, module);
  return emitter.Emit(name);
}

}  // namespace ember::codegen
