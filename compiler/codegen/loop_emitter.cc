#include "compiler/codegen/loop_emitter.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/element_generator.h"
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/elemental_support.h"
#include "compiler/codegen/loop_support.h"
#include "compiler/codegen/row_segments.h"
#include "llvm/IR/IRBuilder.h"

namespace ember::codegen {
namespace {

using ir::Opcode;

class LoopEmitter {
 public:
  LoopEmitter(const passes::Kernel& kernel, llvm::Module& module)
      : kernel_(kernel), module_(module), b_(module.getContext()), elemental_(b_),
        generator_(kernel, b_, elemental_) {}

  absl::Status Emit(const std::string& name) {
    llvm::LLVMContext& ctx = module_.getContext();
    llvm::Type* ptr = b_.getPtrTy();
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Function* fn = DeclareKernelFunction(module_, name);
    llvm::Value* inputs = fn->getArg(0);
    llvm::Value* outputs = fn->getArg(1);
    llvm::Value* begin = fn->getArg(2);
    llvm::Value* end = fn->getArg(3);

    llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
    llvm::BasicBlock* outer = llvm::BasicBlock::Create(ctx, "row", fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn);

    // Entry: the buffers' addresses, and scalar inputs loaded once.
    b_.SetInsertPoint(entry);
    generator_.LoadInputs(inputs);
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

    // The element loop, once per row segment (row_segments.h): within one, every concatenate
    // and pad along the row reads one source, known to the generator from the segment's range.
    const std::vector<int64_t> starts =
        flat || dims.empty() ? std::vector<int64_t>{0} : RowSegmentStarts(kernel_);
    std::vector<llvm::BranchInst*> back_edges;
    for (size_t s = 0; s < starts.size(); ++s) {
      const int64_t lo = starts[s];
      const int64_t hi = s + 1 < starts.size() ? starts[s + 1] : row;
      llvm::BasicBlock* inner = llvm::BasicBlock::Create(ctx, "element", fn);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "segment_end", fn);
      llvm::Value* seg_begin = j0;
      llvm::Value* seg_end = j_end;
      if (starts.size() > 1) {
        seg_begin = b_.CreateSelect(b_.CreateICmpSLT(j0, b_.getInt64(lo)), b_.getInt64(lo), j0);
        seg_end = b_.CreateSelect(b_.CreateICmpSGT(j_end, b_.getInt64(hi)), b_.getInt64(hi),
                                  j_end);
      }
      llvm::BasicBlock* head = b_.GetInsertBlock();
      b_.CreateCondBr(b_.CreateICmpSLT(seg_begin, seg_end), inner, done);

      b_.SetInsertPoint(inner);
      generator_.NewScope();
      llvm::PHINode* j = b_.CreatePHI(i64, 2, "j");
      j->addIncoming(seg_begin, head);
      ElementIndex& root = generator_.NewIndex(&dims);
      root.linear = b_.CreateAdd(row_base, j);
      if (!outer_multi.empty()) {
        root.multi = outer_multi;
        root.multi.back() = j;
        if (starts.size() > 1) {
          root.ranges.resize(dims.size());
          root.ranges.back() = IndexRange{lo, hi};
        }
      }
      // Every output element is computed before any is stored: a donated parameter may share
      // its buffer with an output (buffer assignment allows that only where both use the same
      // index), and no load of it may come after that store.
      std::vector<llvm::Value*> elements;
      for (const ir::Value* v : kernel_.outputs) {
        EMBER_ASSIGN_OR_RETURN(llvm::Value * element, generator_.Generate(v, root));
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
      back_edges.push_back(b_.CreateCondBr(b_.CreateICmpSLT(j_next, seg_end), inner, done));
      b_.SetInsertPoint(done);
    }
    // Every block but `entry` is inside the element loops.
    std::vector<llvm::BasicBlock*> blocks;
    for (llvm::BasicBlock& block : *fn) {
      if (&block != entry) blocks.push_back(&block);
    }
    MarkLoopsParallel(blocks, back_edges, /*interleave=*/true);

    llvm::Value* next = b_.CreateAdd(row_base, j_end);
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, end), outer, exit);

    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
    return absl::OkStatus();
  }

 private:
  // No op needs per-dim indices: only elementwise ops, reshapes and broadcasts of scalars.
  bool Flat() const {
    for (const ir::Instruction* inst : kernel_.instructions) {
      if (inst->opcode() == Opcode::kReshape) continue;
      if (inst->opcode() == Opcode::kBroadcastInDim && inst->operand(0)->type().dims().empty()) {
        continue;
      }
      if (!ElementalOpSupported(*inst)) return false;
    }
    return true;
  }

  const passes::Kernel& kernel_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  ElementalEmitter elemental_;
  ElementGenerator generator_;
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
