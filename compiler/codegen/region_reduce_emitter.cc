#include "compiler/codegen/region_reduce_emitter.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/element_generator.h"
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/reduce_support.h"
#include "compiler/passes/rewrite.h"
#include "llvm/IR/IRBuilder.h"

namespace ember::codegen {
namespace {

class RegionReduceEmitter {
 public:
  RegionReduceEmitter(const passes::Kernel& kernel, llvm::Module& module)
      : kernel_(kernel), reduce_(RegionReduceOf(kernel)), module_(module), b_(module.getContext()),
        elemental_(b_), generator_(kernel, b_, elemental_) {}

  absl::Status Emit(const std::string& name) {
    llvm::LLVMContext& ctx = module_.getContext();
    llvm::Type* ptr = b_.getPtrTy();
    llvm::Type* i64 = b_.getInt64Ty();
    const size_t n = reduce_.num_results();
    const std::vector<int64_t>& in_dims = reduce_.operand(0)->type().dims();
    const std::vector<int64_t>& out_dims = reduce_.result(0)->type().dims();
    const std::vector<int64_t>& dims = *passes::IntsAttribute(reduce_, "dimensions");
    std::vector<bool> folded(in_dims.size(), false);
    for (int64_t d : dims) folded[d] = true;
    std::vector<int64_t> kept_dims, folded_dims, folded_sizes;  // in dim order
    int64_t row_length = 1;
    for (size_t d = 0; d < in_dims.size(); ++d) {
      if (folded[d]) {
        folded_dims.push_back(static_cast<int64_t>(d));
        folded_sizes.push_back(in_dims[d]);
        row_length *= in_dims[d];
      } else {
        kept_dims.push_back(static_cast<int64_t>(d));
      }
    }

    llvm::Function* fn = DeclareKernelFunction(module_, name);
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
    llvm::BasicBlock* out_block = llvm::BasicBlock::Create(ctx, "output", fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
    b_.SetInsertPoint(entry);
    generator_.LoadInputs(fn->getArg(0));
    std::vector<llvm::Value*> output_base;
    for (size_t k = 0; k < kernel_.outputs.size(); ++k) {
      output_base.push_back(b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, fn->getArg(1), k)));
    }
    std::vector<llvm::Value*> inits;
    for (size_t i = 0; i < n; ++i) {
      ElementIndex& at = generator_.NewIndex(&reduce_.operand(n + i)->type().dims());
      at.linear = b_.getInt64(0);
      EMBER_ASSIGN_OR_RETURN(llvm::Value * init, generator_.Generate(reduce_.operand(n + i), at));
      inits.push_back(init);
    }
    b_.CreateCondBr(b_.CreateICmpSLT(fn->getArg(2), fn->getArg(3)), out_block, exit);

    // Output element o: its kept dims' indices, then the fold over the folded dims.
    b_.SetInsertPoint(out_block);
    llvm::PHINode* o = b_.CreatePHI(i64, 2, "o");
    o->addIncoming(fn->getArg(2), entry);
    generator_.NewScope();
    ElementIndex& out_index = generator_.NewIndex(&out_dims);
    out_index.linear = o;
    const std::vector<llvm::Value*> out_multi = generator_.Multi(out_index);
    std::vector<llvm::Value*> accs = inits;
    if (row_length > 0) {
      llvm::BasicBlock* before = b_.GetInsertBlock();
      llvm::BasicBlock* element = llvm::BasicBlock::Create(ctx, "element", fn);
      b_.CreateBr(element);
      b_.SetInsertPoint(element);
      llvm::PHINode* j = b_.CreatePHI(i64, 2, "j");
      j->addIncoming(b_.getInt64(0), before);
      std::vector<llvm::PHINode*> phis;
      for (llvm::Value* init : inits) {
        llvm::PHINode* phi = b_.CreatePHI(init->getType(), 2, "acc");
        phi->addIncoming(init, before);
        phis.push_back(phi);
      }
      generator_.NewScope();
      ElementIndex& row = generator_.NewIndex(&folded_sizes);
      row.linear = j;
      const std::vector<llvm::Value*> row_multi = generator_.Multi(row);
      ElementIndex& in = generator_.NewIndex(&in_dims);
      in.multi.resize(in_dims.size());
      for (size_t k = 0; k < kept_dims.size(); ++k) in.multi[kept_dims[k]] = out_multi[k];
      for (size_t k = 0; k < folded_dims.size(); ++k) in.multi[folded_dims[k]] = row_multi[k];
      in.linear = generator_.Linearize(in.multi, in_dims);
      std::vector<llvm::Value*> args(phis.begin(), phis.end());
      for (size_t i = 0; i < n; ++i) {
        EMBER_ASSIGN_OR_RETURN(llvm::Value * x, generator_.Generate(reduce_.operand(i), in));
        args.push_back(x);
      }
      EMBER_ASSIGN_OR_RETURN(std::vector<llvm::Value*> next,
                             elemental_.EmitRegion(*reduce_.regions()[0], args));
      llvm::Value* j_next = b_.CreateAdd(j, b_.getInt64(1));
      llvm::BasicBlock* latch = b_.GetInsertBlock();
      j->addIncoming(j_next, latch);
      for (size_t i = 0; i < n; ++i) phis[i]->addIncoming(next[i], latch);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "folded", fn);
      b_.CreateCondBr(b_.CreateICmpSLT(j_next, b_.getInt64(row_length)), element, done);
      b_.SetInsertPoint(done);
      accs = next;
    }
    // The outputs at o: the reduce's results (bound to the accumulators) or the epilogue's
    // values, generated in their own dims (it keeps the linear index).
    generator_.NewScope();
    for (size_t i = 0; i < n; ++i) generator_.Bind(reduce_.result(i), accs[i]);
    std::vector<llvm::Value*> elements;
    for (const ir::Value* v : kernel_.outputs) {
      ElementIndex& at = generator_.NewIndex(&v->type().dims());
      at.linear = o;
      EMBER_ASSIGN_OR_RETURN(llvm::Value * element, generator_.Generate(v, at));
      elements.push_back(element);
    }
    for (size_t k = 0; k < kernel_.outputs.size(); ++k) {
      const ir::ElementType t = kernel_.outputs[k]->type().element_type();
      b_.CreateStore(elemental_.ToStorage(t, elements[k]),
                     b_.CreateGEP(elemental_.StorageType(t), output_base[k], o));
    }
    llvm::Value* o_next = b_.CreateAdd(o, b_.getInt64(1));
    o->addIncoming(o_next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(o_next, fn->getArg(3)), out_block, exit);
    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
    return absl::OkStatus();
  }

 private:
  const passes::Kernel& kernel_;
  const ir::Instruction& reduce_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  ElementalEmitter elemental_;
  ElementGenerator generator_;
};

}  // namespace

absl::Status EmitRegionReduceKernel(const passes::Kernel& kernel, const std::string& name,
                                    llvm::Module& module) {
  if (std::string why = RegionReduceKernelRefusal(kernel); !why.empty()) {
    return absl::UnimplementedError(absl::StrCat("region reduce kernel ", name, ": ", why));
  }
  RegionReduceEmitter emitter(kernel, module);
  return emitter.Emit(name);
}

}  // namespace ember::codegen
