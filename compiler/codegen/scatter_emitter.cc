#include "compiler/codegen/scatter_emitter.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/element_generator.h"
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/scatter_support.h"
#include "llvm/IR/IRBuilder.h"

namespace ember::codegen {
namespace {

class ScatterEmitter {
 public:
  ScatterEmitter(const passes::Kernel& kernel, const ScatterDims& dims, llvm::Module& module)
      : kernel_(kernel), dims_(dims), module_(module), b_(module.getContext()),
        elemental_(b_), generator_(kernel, b_, elemental_) {}

  absl::Status Emit(const std::string& name) {
    llvm::LLVMContext& ctx = module_.getContext();
    const ir::Instruction& scatter = *kernel_.root();
    const ir::Value* input = scatter.operand(0);
    const ir::Value* indices = scatter.operand(1);
    const ir::Value* updates = scatter.operand(2);
    const ir::ElementType t = input->type().element_type();
    const std::vector<int64_t>& input_dims = input->type().dims();
    const std::vector<int64_t>& update_dims = updates->type().dims();
    llvm::Type* storage = elemental_.StorageType(t);
    const int64_t bytes = input->type().shape().ByteSize();
    int64_t update_count = 1;
    for (int64_t d : update_dims) update_count *= d;

    llvm::Function* fn = DeclareKernelFunction(module_, name);
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
    llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx, "update", fn);
    llvm::BasicBlock* store = llvm::BasicBlock::Create(ctx, "combine", fn);
    llvm::BasicBlock* latch = llvm::BasicBlock::Create(ctx, "next", fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn);

    // Entry: the result starts as the input (a move: the two may share memory), once.
    b_.SetInsertPoint(entry);
    generator_.LoadInputs(fn->getArg(0));
    llvm::Value* out = b_.CreateLoad(b_.getPtrTy(), fn->getArg(1));
    EMBER_ASSIGN_OR_RETURN(llvm::Value * in, generator_.InputAddress(input));
    b_.CreateMemMove(out, llvm::MaybeAlign(1), in, llvm::MaybeAlign(1), b_.getInt64(bytes));
    llvm::Value* run = b_.CreateAnd(b_.CreateICmpSLT(fn->getArg(2), fn->getArg(3)),
                                    b_.getInt1(update_count > 0));
    b_.CreateCondBr(run, head, exit);

    // One update element per iteration, in row-major order.
    b_.SetInsertPoint(head);
    llvm::PHINode* u = b_.CreatePHI(b_.getInt64Ty(), 2, "u");
    u->addIncoming(b_.getInt64(0), entry);
    generator_.NewScope();
    ElementIndex& at = generator_.NewIndex(&update_dims);
    at.linear = u;
    const std::vector<llvm::Value*>& um = generator_.Multi(at);
    std::vector<llvm::Value*> scatter_index;
    for (int64_t d : dims_.update_scatter_dims) scatter_index.push_back(um[d]);
    std::vector<llvm::Value*> ri(input_dims.size(), b_.getInt64(0));
    for (size_t k = 0; k < dims_.scatter_dims_to_operand_dims.size(); ++k) {
      EMBER_ASSIGN_OR_RETURN(
          llvm::Value * start,
          generator_.IndexComponent(indices, dims_.index_vector_dim, scatter_index, k));
      const int64_t d = dims_.scatter_dims_to_operand_dims[k];
      ri[d] = b_.CreateAdd(ri[d], start);
    }
    for (size_t i = 0; i < dims_.input_batching_dims.size(); ++i) {
      const int64_t d = dims_.indices_batching_dims[i];
      llvm::Value* position = scatter_index[d - (d < dims_.index_vector_dim ? 0 : 1)];
      const int64_t id = dims_.input_batching_dims[i];
      ri[id] = b_.CreateAdd(ri[id], position);
    }
    // The window is applied only where it fits inside the input at its start (the evaluator's
    // and XLA's rule): the start lies in [0, dim - extent] along every dim, the extent being the
    // window's (1 along inserted and batching dims).
    std::vector<int64_t> extent(input_dims.size(), 1);
    for (size_t i = 0; i < dims_.update_window_dims.size(); ++i) {
      extent[dims_.window_input_dims[i]] = update_dims[dims_.update_window_dims[i]];
    }
    llvm::Value* inside = b_.getTrue();
    for (size_t d = 0; d < input_dims.size(); ++d) {
      const int64_t last_start = input_dims[d] - extent[d];
      if (last_start < 0) {
        inside = b_.getFalse();
        break;
      }
      // Unsigned: a negative start reads as huge, so one compare checks both ends.
      inside = b_.CreateAnd(inside, b_.CreateICmpULE(ri[d], b_.getInt64(last_start)));
    }
    for (size_t i = 0; i < dims_.update_window_dims.size(); ++i) {
      const int64_t id = dims_.window_input_dims[i];
      ri[id] = b_.CreateAdd(ri[id], um[dims_.update_window_dims[i]]);
    }
    EMBER_ASSIGN_OR_RETURN(llvm::Value * update, generator_.Generate(updates, at));
    llvm::Value* destination = generator_.Linearize(ri, input_dims);
    b_.CreateCondBr(inside, store, latch);

    b_.SetInsertPoint(store);
    llvm::Value* address = b_.CreateGEP(storage, out, destination);
    llvm::Value* value = update;
    if (!dims_.replace) {
      llvm::Value* current = elemental_.FromStorage(t, b_.CreateLoad(storage, address));
      value = dims_.current_first ? elemental_.EmitBinary(dims_.opcode, t, current, update)
                                  : elemental_.EmitBinary(dims_.opcode, t, update, current);
      if (value == nullptr) {
        return absl::InternalError(absl::StrCat(scatter.Describe(), ": no code for its update"));
      }
    }
    b_.CreateStore(elemental_.ToStorage(t, value), address);
    b_.CreateBr(latch);

    b_.SetInsertPoint(latch);
    llvm::Value* u_next = b_.CreateAdd(u, b_.getInt64(1));
    u->addIncoming(u_next, latch);
    b_.CreateCondBr(b_.CreateICmpSLT(u_next, b_.getInt64(update_count)), head, exit);

    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
    return absl::OkStatus();
  }

 private:
  const passes::Kernel& kernel_;
  const ScatterDims& dims_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  ElementalEmitter elemental_;
  ElementGenerator generator_;
};

}  // namespace

absl::Status EmitScatterKernel(const passes::Kernel& kernel, const std::string& name,
                               llvm::Module& module) {
  if (std::string why = ScatterKernelRefusal(kernel); !why.empty()) {
    return absl::UnimplementedError(absl::StrCat("scatter kernel ", name, ": ", why));
  }
  std::optional<ScatterDims> dims = ReadScatterDims(*kernel.root());
  ScatterEmitter emitter(kernel, *dims, module);
  return emitter.Emit(name);
}

}  // namespace ember::codegen
