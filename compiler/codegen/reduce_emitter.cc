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
    fn_ = DeclareKernelFunction(module_, name);
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn_);
    b_.SetInsertPoint(entry);
    generator_.LoadInputs(fn_->getArg(0));
    for (size_t k = 0; k < kernel_.outputs.size(); ++k) {
      output_base_.push_back(b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, fn_->getArg(1), k)));
    }
    // The init values: scalar kernel inputs, loaded in the entry block.
    for (const ir::Instruction* reduce : layout_.reduces) {
      ElementIndex& at = generator_.NewIndex(&reduce->operand(1)->type().dims());
      at.linear = b_.getInt64(0);
      EMBER_ASSIGN_OR_RETURN(llvm::Value * init, generator_.Generate(reduce->operand(1), at));
      inits_.push_back(init);
    }
    EMBER_RETURN_IF_ERROR(layout_.inner == 1 ? EmitRows() : EmitColumns());
    b_.CreateRetVoid();
    return absl::OkStatus();
  }

 private:
  // The indices of `linear` over dims [from, to) of `dims` (row-major within that range).
  std::vector<llvm::Value*> Decompose(llvm::Value* linear, const std::vector<int64_t>& dims,
                                      int64_t from, int64_t to) {
    std::vector<llvm::Value*> multi(to - from);
    llvm::Value* rest = linear;
    for (int64_t d = to - 1; d >= from; --d) {
      multi[d - from] = d == from ? rest : b_.CreateURem(rest, b_.getInt64(dims[d]));
      if (d > from) rest = b_.CreateUDiv(rest, b_.getInt64(dims[d]));
    }
    return multi;
  }

  // One input element into each reduce's accumulator (`accs`, the values so far): returns the
  // folded values, and stores the kernel outputs over the input space at `in`.
  absl::StatusOr<std::vector<llvm::Value*>> FoldElement(ElementIndex& in,
                                                        const std::vector<llvm::Value*>& accs) {
    // Every value of the element first, then the stores (see loop_emitter.cc: a donated input
    // may share its buffer with an output at the same index).
    std::vector<llvm::Value*> folded;
    for (size_t k = 0; k < layout_.reduces.size(); ++k) {
      EMBER_ASSIGN_OR_RETURN(llvm::Value * x,
                             generator_.Generate(layout_.reduces[k]->operand(0), in));
      folded.push_back(
          Fold(layout_.ops[k], layout_.reduces[k]->result()->type().element_type(), accs[k], x));
    }
    std::vector<std::pair<size_t, llvm::Value*>> stores;
    for (size_t o = 0; o < kernel_.outputs.size(); ++o) {
      if (layout_.over_output[o]) continue;
      EMBER_ASSIGN_OR_RETURN(llvm::Value * v, generator_.Generate(kernel_.outputs[o], in));
      stores.emplace_back(o, v);
    }
    for (const auto& [o, v] : stores) Store(o, in.linear, v);
    return folded;
  }

  // The kernel outputs over the output space at output element `o` (indices `multi` over the
  // reduce results' dims), the reduces' results being `accs`. Each output is generated in its
  // own dims (the epilogue may reshape [n] to [n, 1]).
  absl::Status StoreEpilogue(llvm::Value* o, const std::vector<llvm::Value*>& multi,
                             const std::vector<llvm::Value*>& accs) {
    generator_.NewScope();
    for (size_t k = 0; k < layout_.reduces.size(); ++k) {
      generator_.Bind(layout_.reduces[k]->result(), accs[k]);
    }
    std::vector<std::pair<size_t, llvm::Value*>> stores;
    for (size_t k = 0; k < kernel_.outputs.size(); ++k) {
      if (!layout_.over_output[k]) continue;
      const ir::Value* v = kernel_.outputs[k];
      ElementIndex& out = generator_.NewIndex(&v->type().dims());
      out.linear = o;
      if (v->type().dims() == *layout_.output_dims) out.multi = multi;
      EMBER_ASSIGN_OR_RETURN(llvm::Value * element, generator_.Generate(v, out));
      stores.emplace_back(k, element);
    }
    for (const auto& [k, v] : stores) Store(k, o, v);
    return absl::OkStatus();
  }

  // A loop [0, n) at the insert point: `body(index)` emits the body; the insert point ends
  // after the loop. `n` must be positive.
  template <typename Body>
  absl::Status Loop(llvm::Value* n, const char* name, Body body) {
    llvm::LLVMContext& ctx = module_.getContext();
    llvm::BasicBlock* before = b_.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx, name, fn_);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, absl::StrCat(name, "_done"), fn_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, name);
    i->addIncoming(b_.getInt64(0), before);
    EMBER_RETURN_IF_ERROR(body(static_cast<llvm::Value*>(i)));
    llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1));
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, n), head, done);
    b_.SetInsertPoint(done);
    return absl::OkStatus();
  }

  // inner == 1: output element r folds the row [r * row_length, (r + 1) * row_length), its
  // accumulators in registers (the vectorizer splits them into lanes).
  absl::Status EmitRows() {
    llvm::LLVMContext& ctx = module_.getContext();
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Value* row_begin = fn_->getArg(2);
    llvm::Value* row_end = fn_->getArg(3);
    llvm::BasicBlock* entry = b_.GetInsertBlock();
    llvm::BasicBlock* row = llvm::BasicBlock::Create(ctx, "row", fn_);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(row_begin, row_end), row, exit);
    b_.SetInsertPoint(row);
    llvm::PHINode* r = b_.CreatePHI(i64, 2, "r");
    r->addIncoming(row_begin, entry);
    llvm::Value* row_base = b_.CreateMul(r, b_.getInt64(layout_.row_length));
    // The kept dims' indices, once per row: index ops (a broadcast of a row statistic) then
    // read loop-invariant addresses, and the element loop stays affine (it vectorizes).
    const std::vector<int64_t>& in_dims = *layout_.input_dims;
    const int64_t kept = layout_.first_folded;
    const int64_t rank = static_cast<int64_t>(in_dims.size());
    std::vector<llvm::Value*> row_multi = Decompose(r, *layout_.output_dims, 0, kept);
    std::vector<llvm::Value*> accs = inits_;
    if (layout_.row_length > 0) {
      generator_.NewScope();
      llvm::BasicBlock* before = b_.GetInsertBlock();
      llvm::BasicBlock* element = llvm::BasicBlock::Create(ctx, "element", fn_);
      b_.CreateBr(element);
      b_.SetInsertPoint(element);
      llvm::PHINode* j = b_.CreatePHI(i64, 2, "j");
      j->addIncoming(b_.getInt64(0), before);
      std::vector<llvm::Value*> phis;
      for (llvm::Value* init : inits_) {
        llvm::PHINode* phi = b_.CreatePHI(init->getType(), 2, "acc");
        phi->addIncoming(init, before);
        phis.push_back(phi);
      }
      ElementIndex& in = generator_.NewIndex(layout_.input_dims);
      in.linear = b_.CreateAdd(row_base, j);
      in.multi = row_multi;
      for (llvm::Value* m : Decompose(j, in_dims, kept, rank)) in.multi.push_back(m);
      EMBER_ASSIGN_OR_RETURN(std::vector<llvm::Value*> folded, FoldElement(in, phis));
      llvm::Value* j_next = b_.CreateAdd(j, b_.getInt64(1));
      llvm::BasicBlock* latch = b_.GetInsertBlock();
      j->addIncoming(j_next, latch);
      for (size_t k = 0; k < phis.size(); ++k) {
        llvm::cast<llvm::PHINode>(phis[k])->addIncoming(folded[k], latch);
      }
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "row_done", fn_);
      llvm::BranchInst* back = b_.CreateCondBr(
          b_.CreateICmpSLT(j_next, b_.getInt64(layout_.row_length)), element, done);
      // The element loop's blocks: from `element` to the one `back` ends.
      std::vector<llvm::BasicBlock*> blocks;
      bool in_loop = false;
      for (llvm::BasicBlock& block : *fn_) {
        in_loop |= &block == element;
        if (in_loop) blocks.push_back(&block);
        if (&block == back->getParent()) break;
      }
      MarkLoopsParallel(blocks, {back});
      b_.SetInsertPoint(done);
      accs = folded;
    }
    EMBER_RETURN_IF_ERROR(StoreEpilogue(r, row_multi, accs));
    llvm::Value* r_next = b_.CreateAdd(r, b_.getInt64(1));
    r->addIncoming(r_next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(r_next, row_end), row, exit);
    b_.SetInsertPoint(exit);
    return absl::OkStatus();
  }

  // inner > 1: output element o = a * inner + b folds input elements (a * row_length + j) *
  // inner + b for j in order. Output elements go in segments of at most kTile consecutive b
  // (one a); a segment's accumulators live in arrays on the stack, and the loop over b inside
  // the loop over j vectorizes without reassociating anything: every fold is the evaluator's.
  absl::Status EmitColumns() {
    constexpr int64_t kTile = 512;
    llvm::LLVMContext& ctx = module_.getContext();
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Value* begin = fn_->getArg(2);
    llvm::Value* end = fn_->getArg(3);
    std::vector<llvm::Value*> arrays;
    std::vector<llvm::Type*> types;
    for (llvm::Value* init : inits_) {
      types.push_back(init->getType());
      arrays.push_back(b_.CreateAlloca(init->getType(), b_.getInt64(kTile), "accs"));
    }
    llvm::BasicBlock* entry = b_.GetInsertBlock();
    llvm::BasicBlock* segment = llvm::BasicBlock::Create(ctx, "segment", fn_);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(begin, end), segment, exit);
    b_.SetInsertPoint(segment);
    llvm::PHINode* o = b_.CreatePHI(i64, 2, "o");
    o->addIncoming(begin, entry);
    const int64_t inner = layout_.inner;
    llvm::Value* a = b_.CreateUDiv(o, b_.getInt64(inner));
    llvm::Value* b0 = b_.CreateSub(o, b_.CreateMul(a, b_.getInt64(inner)));
    auto min = [&](llvm::Value* x, llvm::Value* y) {
      return b_.CreateSelect(b_.CreateICmpSLT(x, y), x, y);
    };
    llvm::Value* stop = min(min(end, b_.CreateMul(b_.CreateAdd(a, b_.getInt64(1)),
                                                  b_.getInt64(inner))),
                            b_.CreateAdd(o, b_.getInt64(kTile)));
    llvm::Value* n = b_.CreateSub(stop, o);
    const std::vector<int64_t>& in_dims = *layout_.input_dims;
    const std::vector<int64_t>& out_dims = *layout_.output_dims;
    const int64_t first = layout_.first_folded;
    const int64_t folded_rank = static_cast<int64_t>(in_dims.size() - out_dims.size());
    const int64_t rank = static_cast<int64_t>(in_dims.size());
    std::vector<llvm::Value*> a_multi = Decompose(a, in_dims, 0, first);
    // The segment's accumulators at position i.
    auto load_accs = [&](llvm::Value* i) {
      std::vector<llvm::Value*> accs;
      for (size_t k = 0; k < arrays.size(); ++k) {
        accs.push_back(b_.CreateLoad(types[k], b_.CreateGEP(types[k], arrays[k], i)));
      }
      return accs;
    };
    EMBER_RETURN_IF_ERROR(Loop(n, "init", [&](llvm::Value* i) {
      for (size_t k = 0; k < arrays.size(); ++k) {
        b_.CreateStore(inits_[k], b_.CreateGEP(types[k], arrays[k], i));
      }
      return absl::OkStatus();
    }));
    if (layout_.row_length > 0) {
      llvm::Value* a_base = b_.CreateMul(a, b_.getInt64(layout_.row_length));
      EMBER_RETURN_IF_ERROR(Loop(b_.getInt64(layout_.row_length), "j", [&](llvm::Value* j) {
        std::vector<llvm::Value*> j_multi = Decompose(j, in_dims, first, first + folded_rank);
        llvm::Value* line = b_.CreateMul(b_.CreateAdd(a_base, j), b_.getInt64(inner));
        return Loop(n, "b", [&](llvm::Value* i) -> absl::Status {
          generator_.NewScope();
          llvm::Value* b = b_.CreateAdd(b0, i);
          ElementIndex& in = generator_.NewIndex(layout_.input_dims);
          in.linear = b_.CreateAdd(line, b);
          in.multi = a_multi;
          for (llvm::Value* m : j_multi) in.multi.push_back(m);
          for (llvm::Value* m : Decompose(b, in_dims, first + folded_rank, rank)) {
            in.multi.push_back(m);
          }
          EMBER_ASSIGN_OR_RETURN(std::vector<llvm::Value*> folded,
                                 FoldElement(in, load_accs(i)));
          for (size_t k = 0; k < arrays.size(); ++k) {
            b_.CreateStore(folded[k], b_.CreateGEP(types[k], arrays[k], i));
          }
          return absl::OkStatus();
        });
      }));
    }
    EMBER_RETURN_IF_ERROR(Loop(n, "epilogue", [&](llvm::Value* i) {
      const std::vector<llvm::Value*> accs = load_accs(i);
      llvm::Value* b = b_.CreateAdd(b0, i);
      std::vector<llvm::Value*> multi = a_multi;
      for (llvm::Value* m : Decompose(b, out_dims, first, static_cast<int64_t>(out_dims.size()))) {
        multi.push_back(m);
      }
      return StoreEpilogue(b_.CreateAdd(o, i), multi, accs);
    }));
    o->addIncoming(stop, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(stop, end), segment, exit);
    b_.SetInsertPoint(exit);
    return absl::OkStatus();
  }

 private:
  void Store(size_t output, llvm::Value* linear, llvm::Value* value) {
    const ElementType t = kernel_.outputs[output]->type().element_type();
    b_.CreateStore(elemental_.ToStorage(t, value),
                   b_.CreateGEP(elemental_.StorageType(t), output_base_[output], linear));
  }

  // acc op x. f32/f64 sums and products of row folds may be reassociated (so the loop
  // vectorizes with several partial accumulators); maxima and minima use LLVM's IEEE-754 maximum / minimum,
  // which the vectorizer folds by lanes and which are the evaluator's (NaN wins, -0 < +0).
  // bf16/f16 round after every step, as the evaluator does, and stay sequential.
  llvm::Value* Fold(Opcode op, ElementType type, llvm::Value* acc, llvm::Value* x) {
    const bool wide_float = type == ElementType::kF32 || type == ElementType::kF64;
    if (wide_float && (op == Opcode::kMaximum || op == Opcode::kMinimum)) {
      return b_.CreateBinaryIntrinsic(
          op == Opcode::kMaximum ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, acc, x);
    }
    llvm::Value* v = elemental_.EmitBinary(op, type, acc, x);
    if (wide_float && layout_.inner == 1) {  // column folds stay in input order
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
  llvm::Function* fn_ = nullptr;
  std::vector<llvm::Value*> output_base_;
  std::vector<llvm::Value*> inits_;
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
