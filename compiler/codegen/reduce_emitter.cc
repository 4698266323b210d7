#include "compiler/codegen/reduce_emitter.h"

#include <functional>
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

// The lanes of FoldLine's sums and products.
constexpr int64_t kLanes = 32;

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
    parts_ = ReducePartsPerRow(layout_);
    EMBER_RETURN_IF_ERROR(parts_ > 1           ? EmitSplit()
                          : layout_.inner == 1 ? EmitRows()
                                               : EmitColumns());
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

  // A loop [0, n) at the insert point (RangeLoop).
  template <typename Body>
  absl::Status Loop(llvm::Value* n, const char* name, Body body) {
    return RangeLoop(b_.getInt64(0), n, name, body);
  }

  // Element j of a line (j in the line's own numbering), as an index of the input space.
  using LineIndex = std::function<ElementIndex&(llvm::Value* j)>;

  // Whether reduce k folds in lanes (FoldLine): f32 and f64 sums and products, the folds whose
  // order is the emitter's to choose.
  bool InLanes(size_t k) const {
    const ElementType t = layout_.reduces[k]->result()->type().element_type();
    return (t == ElementType::kF32 || t == ElementType::kF64) &&
           (layout_.ops[k] == Opcode::kAdd || layout_.ops[k] == Opcode::kMultiply);
  }

  // The identity of reduce k's fold, in its compute type: op(identity, x) is x for every x.
  llvm::Value* Identity(size_t k) {
    const ElementType t = layout_.reduces[k]->result()->type().element_type();
    llvm::Type* type = elemental_.ComputeType(t);
    const Opcode op = layout_.ops[k];
    if (type->isFloatingPointTy()) {
      switch (op) {
        case Opcode::kAdd:
          return llvm::ConstantFP::getNegativeZero(type);
        case Opcode::kMultiply:
          return llvm::ConstantFP::get(type, 1.0);
        case Opcode::kMaximum:
          return llvm::ConstantFP::getInfinity(type, /*Negative=*/true);
        default:
          return llvm::ConstantFP::getInfinity(type);  // minimum
      }
    }
    const unsigned bits = type->getIntegerBitWidth();
    const bool is_signed = ir::IsSignedInteger(t);
    switch (op) {
      case Opcode::kMultiply:
        return llvm::ConstantInt::get(type, 1);
      case Opcode::kAnd:
        return llvm::ConstantInt::get(type, llvm::APInt::getAllOnes(bits));
      case Opcode::kMaximum:
        return llvm::ConstantInt::get(
            type, is_signed ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getZero(bits));
      case Opcode::kMinimum:
        return llvm::ConstantInt::get(
            type, is_signed ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getAllOnes(bits));
      default:
        return llvm::ConstantInt::get(type, 0);  // add, or, xor
    }
  }

  // Folds elements [lo, hi) of one line into every reduce, after `starts` (a null start: the
  // fold's identity), and returns the folded values. Sums and products of f32/f64 (InLanes) fold
  // in kLanes lanes: lane l folds the elements lo + l, lo + l + kLanes, ... in order, and the
  // lanes are then folded in lane order after the start. That order is the emitter's, not the
  // vectorizer's: every tier (KernelTier) and every vector width computes the same bits. The
  // other folds are exact in any order and fold element by element.
  absl::StatusOr<std::vector<llvm::Value*>> FoldLine(llvm::Value* lo, llvm::Value* hi,
                                                     const LineIndex& at,
                                                     std::vector<llvm::Value*> starts) {
    bool lanes = false;
    for (size_t k = 0; k < layout_.reduces.size(); ++k) {
      if (starts[k] == nullptr) starts[k] = Identity(k);
      lanes |= InLanes(k);
    }
    if (!lanes) return FoldInOrder(lo, hi, at, starts);
    return FoldInLanes(lo, hi, at, starts);
  }

  // Elements [lo, hi) of a line, in order, into `accs`: a loop of its own (none when lo >= hi).
  // With `lanes`, each reduce in lanes stores its element at position (j - lo) of its lane
  // buffer instead of folding it.
  absl::StatusOr<std::vector<llvm::Value*>> FoldInOrder(
      llvm::Value* lo, llvm::Value* hi, const LineIndex& at, const std::vector<llvm::Value*>& accs,
      const std::vector<llvm::Value*>* lanes = nullptr) {
    llvm::LLVMContext& ctx = module_.getContext();
    llvm::BasicBlock* before = b_.GetInsertBlock();
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "element", fn_);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "elements_done", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), loop, done);
    b_.SetInsertPoint(loop);
    generator_.NewScope();
    llvm::PHINode* j = b_.CreatePHI(b_.getInt64Ty(), 2, "j");
    j->addIncoming(lo, before);
    std::vector<llvm::Value*> phis;
    for (llvm::Value* acc : accs) {
      llvm::PHINode* phi = b_.CreatePHI(acc->getType(), 2, "acc");
      phi->addIncoming(acc, before);
      phis.push_back(phi);
    }
    ElementIndex& in = at(j);
    std::vector<llvm::Value*> folded;
    if (lanes == nullptr) {
      EMBER_ASSIGN_OR_RETURN(folded, FoldElement(in, phis));
    } else {
      // (FoldElement's order: every value of the element first, then the stores.)
      std::vector<llvm::Value*> xs;
      for (size_t k = 0; k < layout_.reduces.size(); ++k) {
        EMBER_ASSIGN_OR_RETURN(llvm::Value * x,
                               generator_.Generate(layout_.reduces[k]->operand(0), in));
        xs.push_back(x);
      }
      std::vector<std::pair<size_t, llvm::Value*>> stores;
      for (size_t o = 0; o < kernel_.outputs.size(); ++o) {
        if (layout_.over_output[o]) continue;
        EMBER_ASSIGN_OR_RETURN(llvm::Value * v, generator_.Generate(kernel_.outputs[o], in));
        stores.emplace_back(o, v);
      }
      llvm::Value* position = b_.CreateSub(j, lo);
      for (size_t k = 0; k < xs.size(); ++k) {
        if ((*lanes)[k] != nullptr) {
          b_.CreateStore(xs[k], b_.CreateGEP(xs[k]->getType(), (*lanes)[k], position));
          folded.push_back(phis[k]);
        } else {
          folded.push_back(Fold(layout_.ops[k], layout_.reduces[k]->result()->type().element_type(),
                                phis[k], xs[k]));
        }
      }
      for (const auto& [o, v] : stores) Store(o, in.linear, v);
    }
    llvm::Value* j_next = b_.CreateAdd(j, b_.getInt64(1));
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    j->addIncoming(j_next, latch);
    for (size_t k = 0; k < phis.size(); ++k) {
      llvm::cast<llvm::PHINode>(phis[k])->addIncoming(folded[k], latch);
    }
    llvm::BranchInst* back = b_.CreateCondBr(b_.CreateICmpSLT(j_next, hi), loop, done);
    done->moveAfter(latch);  // after the loop's blocks
    std::vector<llvm::BasicBlock*> blocks;
    bool in_loop = false;
    for (llvm::BasicBlock& block : *fn_) {
      in_loop |= &block == loop;
      if (in_loop) blocks.push_back(&block);
      if (&block == latch) break;
    }
    MarkLoopsParallel(blocks, {back});
    b_.SetInsertPoint(done);
    std::vector<llvm::Value*> results;
    for (size_t k = 0; k < accs.size(); ++k) {
      llvm::PHINode* result = b_.CreatePHI(accs[k]->getType(), 2, "folded");
      result->addIncoming(accs[k], before);
      result->addIncoming(folded[k], latch);
      results.push_back(result);
    }
    return results;
  }

  // FoldLine's lanes: blocks of kLanes elements are stored to a lane buffer (a loop the
  // vectorizer takes) and folded into a vector of kLanes accumulators, the last block's missing
  // elements being the identity.
  absl::StatusOr<std::vector<llvm::Value*>> FoldInLanes(llvm::Value* lo, llvm::Value* hi,
                                                        const LineIndex& at,
                                                        const std::vector<llvm::Value*>& starts) {
    llvm::LLVMContext& ctx = module_.getContext();
    const size_t n = layout_.reduces.size();
    // The lane buffers, in the entry block.
    if (lane_buffers_.empty()) {
      llvm::IRBuilderBase::InsertPointGuard guard(b_);
      b_.SetInsertPoint(&fn_->getEntryBlock(), fn_->getEntryBlock().getFirstInsertionPt());
      for (size_t k = 0; k < n; ++k) {
        llvm::AllocaInst* buffer = nullptr;
        if (InLanes(k)) {
          buffer = b_.CreateAlloca(starts[k]->getType(), b_.getInt64(kLanes), "lanes");
          buffer->setAlignment(llvm::Align(64));
        }
        lane_buffers_.push_back(buffer);
      }
    }
    std::vector<llvm::Value*> vectors(n), accs(n);
    for (size_t k = 0; k < n; ++k) {
      if (InLanes(k)) {
        vectors[k] = b_.CreateVectorSplat(kLanes, Identity(k));
        accs[k] = vectors[k];
      } else {
        accs[k] = starts[k];
      }
    }
    // Blocks of kLanes elements from lo, the last one short (its missing lanes the identity):
    // one copy of the element code.
    llvm::Value* lanes = b_.getInt64(kLanes);
    llvm::BasicBlock* before = b_.GetInsertBlock();
    llvm::BasicBlock* block = llvm::BasicBlock::Create(ctx, "lane_block", fn_);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "lanes_done", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), block, done);
    b_.SetInsertPoint(block);
    llvm::PHINode* b = b_.CreatePHI(b_.getInt64Ty(), 2, "b");
    b->addIncoming(lo, before);
    std::vector<llvm::PHINode*> phis;
    for (size_t k = 0; k < n; ++k) {
      phis.push_back(b_.CreatePHI(accs[k]->getType(), 2, "lane_acc"));
      phis.back()->addIncoming(accs[k], before);
    }
    std::vector<llvm::Value*> in_block(phis.begin(), phis.end());
    llvm::Value* b_end = b_.CreateAdd(b, lanes);
    b_end = b_.CreateSelect(b_.CreateICmpSLT(b_end, hi), b_end, hi);
    EMBER_ASSIGN_OR_RETURN(std::vector<llvm::Value*> folded,
                           FoldLaneBlock(b, b_end, at, in_block));
    llvm::Value* b_next = b_.CreateAdd(b, lanes);
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    b->addIncoming(b_next, latch);
    for (size_t k = 0; k < n; ++k) phis[k]->addIncoming(folded[k], latch);
    b_.CreateCondBr(b_.CreateICmpSLT(b_next, hi), block, done);
    done->moveAfter(latch);
    b_.SetInsertPoint(done);
    std::vector<llvm::Value*> last;
    for (size_t k = 0; k < n; ++k) {
      llvm::PHINode* phi = b_.CreatePHI(accs[k]->getType(), 2, "lanes_acc");
      phi->addIncoming(accs[k], before);
      phi->addIncoming(folded[k], latch);
      last.push_back(phi);
    }
    // The lanes in lane order, then after the start.
    std::vector<llvm::Value*> results;
    for (size_t k = 0; k < n; ++k) {
      if (!InLanes(k)) {
        results.push_back(last[k]);
        continue;
      }
      // Halves folded pairwise (lane l with lane l + width / 2) down to one lane.
      const ElementType type = layout_.reduces[k]->result()->type().element_type();
      llvm::Value* v = last[k];
      for (int64_t width = kLanes; width > 1; width /= 2) {
        std::vector<int> low(width / 2), high(width / 2);
        for (int64_t l = 0; l < width / 2; ++l) {
          low[l] = static_cast<int>(l);
          high[l] = static_cast<int>(l + width / 2);
        }
        v = Fold(layout_.ops[k], type, b_.CreateShuffleVector(v, low),
                 b_.CreateShuffleVector(v, high));
      }
      results.push_back(
          Fold(layout_.ops[k], type, starts[k], b_.CreateExtractElement(v, uint64_t{0})));
    }
    return results;
  }

  // Elements [from, to) of a line (at most kLanes) into the lane accumulators `accs` (vectors
  // for the reduces in lanes, scalars for the others): the lane reduces' elements go to their
  // lane buffers (positions past to - from get the identity) and are folded there as one vector.
  absl::StatusOr<std::vector<llvm::Value*>> FoldLaneBlock(llvm::Value* from, llvm::Value* to,
                                                          const LineIndex& at,
                                                          const std::vector<llvm::Value*>& accs) {
    EMBER_ASSIGN_OR_RETURN(std::vector<llvm::Value*> folded,
                           FoldInOrder(from, to, at, accs, &lane_buffers_));
    const size_t n = layout_.reduces.size();
    // The identity past the last element (none in a whole block).
    llvm::Value* count = b_.CreateSub(to, from);
    bool any = false;
    for (size_t k = 0; k < n; ++k) any |= InLanes(k);
    if (any) {
      EMBER_RETURN_IF_ERROR(
          RangeLoop(count, b_.getInt64(kLanes), "lane_fill", [&](llvm::Value* l) -> absl::Status {
            for (size_t k = 0; k < n; ++k) {
              if (!InLanes(k)) continue;
              llvm::Value* identity = Identity(k);
              b_.CreateStore(identity, b_.CreateGEP(identity->getType(), lane_buffers_[k], l));
            }
            return absl::OkStatus();
          }));
    }
    for (size_t k = 0; k < n; ++k) {
      if (!InLanes(k)) continue;
      llvm::Type* vector = folded[k]->getType();
      llvm::Value* block = b_.CreateAlignedLoad(vector, lane_buffers_[k], llvm::Align(64));
      folded[k] = Fold(layout_.ops[k], layout_.reduces[k]->result()->type().element_type(),
                       folded[k], block);
    }
    return folded;
  }

  // inner == 1: output element r folds the row [r * row_length, (r + 1) * row_length)
  // (FoldLine).
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
      EMBER_ASSIGN_OR_RETURN(accs, FoldLine(
                                       b_.getInt64(0), b_.getInt64(layout_.row_length),
                                       [&](llvm::Value* j) -> ElementIndex& {
                                         ElementIndex& in = generator_.NewIndex(layout_.input_dims);
                                         in.linear = b_.CreateAdd(row_base, j);
                                         in.multi = row_multi;
                                         for (llvm::Value* m : Decompose(j, in_dims, kept, rank)) {
                                           in.multi.push_back(m);
                                         }
                                         return in;
                                       },
                                       inits_));
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

  // Split reductions (ReducePartsPerRow > 1; the contract is in reduce_emitter.h): units
  // [0, rows * P) fold parts of lines into the partial slots, units [rows * P, rows * P + rows)
  // fold each row's partials after its init value and store the epilogue.
  absl::Status EmitSplit() {
    llvm::LLVMContext& ctx = module_.getContext();
    llvm::Type* ptr = b_.getPtrTy();
    llvm::Type* i64 = b_.getInt64Ty();
    const int64_t parts = parts_;
    const int64_t length = layout_.row_length;
    const int64_t part = (length + parts - 1) / parts;
    const int64_t inner = layout_.inner;
    const int64_t units = layout_.rows * parts;
    const std::vector<int64_t>& in_dims = *layout_.input_dims;
    const std::vector<int64_t>& out_dims = *layout_.output_dims;
    const int64_t first = layout_.first_folded;
    const int64_t rank = static_cast<int64_t>(in_dims.size());
    const int64_t folded_rank = rank - static_cast<int64_t>(out_dims.size());
    llvm::Value* begin = fn_->getArg(2);
    llvm::Value* end = fn_->getArg(3);
    std::vector<llvm::Value*> slots;  // per reduce: its partial slots
    for (size_t k = 0; k < layout_.reduces.size(); ++k) {
      slots.push_back(b_.CreateLoad(
          ptr, b_.CreateConstGEP1_64(ptr, fn_->getArg(1), kernel_.outputs.size() + k)));
    }
    auto slot = [&](size_t k, llvm::Value* index) {
      return b_.CreateGEP(b_.getInt8Ty(), slots[k],
                          b_.CreateMul(index, b_.getInt64(kSplitSlotBytes)));
    };
    auto min = [&](llvm::Value* x, llvm::Value* y) {
      return b_.CreateSelect(b_.CreateICmpSLT(x, y), x, y);
    };
    auto max = [&](llvm::Value* x, llvm::Value* y) {
      return b_.CreateSelect(b_.CreateICmpSGT(x, y), x, y);
    };
    // The parts: unit u folds elements [p * part, min(length, (p + 1) * part)) of line r,
    // u = r * parts + p, from the folds' identities; line r = a * inner + b reads input
    // (a * length + j) * inner + b.
    EMBER_RETURN_IF_ERROR(
        RangeLoop(begin, min(end, b_.getInt64(units)), "part", [&](llvm::Value* u) -> absl::Status {
          llvm::Value* r = b_.CreateUDiv(u, b_.getInt64(parts));
          llvm::Value* p = b_.CreateSub(u, b_.CreateMul(r, b_.getInt64(parts)));
          llvm::Value* a = b_.CreateUDiv(r, b_.getInt64(inner));
          llvm::Value* b = b_.CreateSub(r, b_.CreateMul(a, b_.getInt64(inner)));
          llvm::Value* j_lo = b_.CreateMul(p, b_.getInt64(part));
          llvm::Value* j_hi = min(b_.getInt64(length), b_.CreateAdd(j_lo, b_.getInt64(part)));
          const std::vector<llvm::Value*> a_multi = Decompose(a, in_dims, 0, first);
          const std::vector<llvm::Value*> b_multi =
              Decompose(b, in_dims, first + folded_rank, rank);
          llvm::Value* a_base = b_.CreateMul(a, b_.getInt64(length));
          auto element = [&](llvm::Value* j) -> ElementIndex& {
            ElementIndex& in = generator_.NewIndex(layout_.input_dims);
            in.linear = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(a_base, j), b_.getInt64(inner)), b);
            in.multi = a_multi;
            for (llvm::Value* m : Decompose(j, in_dims, first, first + folded_rank)) {
              in.multi.push_back(m);
            }
            for (llvm::Value* m : b_multi) in.multi.push_back(m);
            return in;
          };
          EMBER_ASSIGN_OR_RETURN(
              std::vector<llvm::Value*> partials,
              FoldLine(j_lo, j_hi, element, std::vector<llvm::Value*>(layout_.reduces.size())));
          for (size_t k = 0; k < partials.size(); ++k) b_.CreateStore(partials[k], slot(k, u));
          return absl::OkStatus();
        }));
    // The rows: init, then the parts in order, then the epilogue.
    EMBER_RETURN_IF_ERROR(
        RangeLoop(max(begin, b_.getInt64(units)), end, "line", [&](llvm::Value* u) -> absl::Status {
          llvm::Value* r = b_.CreateSub(u, b_.getInt64(units));
          llvm::Value* r_base = b_.CreateMul(r, b_.getInt64(parts));
          std::vector<llvm::Value*> accs = inits_;
          llvm::BasicBlock* before = b_.GetInsertBlock();
          llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "combine", fn_);
          llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "combined", fn_);
          b_.CreateBr(loop);
          b_.SetInsertPoint(loop);
          llvm::PHINode* p = b_.CreatePHI(i64, 2, "p");
          p->addIncoming(b_.getInt64(0), before);
          std::vector<llvm::PHINode*> phis;
          std::vector<llvm::Value*> next;
          for (size_t k = 0; k < accs.size(); ++k) {
            phis.push_back(b_.CreatePHI(accs[k]->getType(), 2, "acc"));
            phis.back()->addIncoming(accs[k], before);
          }
          for (size_t k = 0; k < accs.size(); ++k) {
            llvm::PHINode* phi = phis[k];
            llvm::Value* x = b_.CreateLoad(accs[k]->getType(), slot(k, b_.CreateAdd(r_base, p)));
            next.push_back(
                Fold(layout_.ops[k], layout_.reduces[k]->result()->type().element_type(), phi, x));
          }
          llvm::Value* p_next = b_.CreateAdd(p, b_.getInt64(1));
          p->addIncoming(p_next, loop);
          for (size_t k = 0; k < phis.size(); ++k) phis[k]->addIncoming(next[k], loop);
          b_.CreateCondBr(b_.CreateICmpSLT(p_next, b_.getInt64(parts)), loop, done);
          b_.SetInsertPoint(done);
          return StoreEpilogue(r, Decompose(r, out_dims, 0, static_cast<int64_t>(out_dims.size())),
                               next);
        }));
    return absl::OkStatus();
  }

  // A loop [lo, hi) at the insert point (none when lo >= hi): `body(index)` emits the body; the
  // insert point ends after the loop.
  template <typename Body>
  absl::Status RangeLoop(llvm::Value* lo, llvm::Value* hi, const char* name, Body body) {
    llvm::LLVMContext& ctx = module_.getContext();
    llvm::BasicBlock* before = b_.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx, name, fn_);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, absl::StrCat(name, "_done"), fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), head, done);
    b_.SetInsertPoint(head);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, name);
    i->addIncoming(lo, before);
    EMBER_RETURN_IF_ERROR(body(static_cast<llvm::Value*>(i)));
    llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1));
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, hi), head, done);
    b_.SetInsertPoint(done);
    return absl::OkStatus();
  }

 private:
  void Store(size_t output, llvm::Value* linear, llvm::Value* value) {
    const ElementType t = kernel_.outputs[output]->type().element_type();
    b_.CreateStore(elemental_.ToStorage(t, value),
                   b_.CreateGEP(elemental_.StorageType(t), output_base_[output], linear));
  }

  // acc op x (scalars, or vectors of lanes). No fast-math flags: the order of every fold is the
  // emitter's (FoldLine). Maxima and minima use LLVM's IEEE-754 maximum / minimum, which the
  // vectorizer folds by lanes and which are the evaluator's (NaN wins, -0 < +0); bf16/f16 round
  // after every step, as the evaluator does.
  llvm::Value* Fold(Opcode op, ElementType type, llvm::Value* acc, llvm::Value* x) {
    const bool wide_float = type == ElementType::kF32 || type == ElementType::kF64;
    if (wide_float && (op == Opcode::kMaximum || op == Opcode::kMinimum)) {
      return b_.CreateBinaryIntrinsic(
          op == Opcode::kMaximum ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, acc, x);
    }
    return elemental_.EmitBinary(op, type, acc, x);
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
  int64_t parts_ = 1;
  std::vector<llvm::Value*> lane_buffers_;  // per reduce in lanes: its buffer (FoldInLanes)
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
