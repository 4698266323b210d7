#include "compiler/codegen/sort_emitter.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/element_generator.h"
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/sort_support.h"
#include "llvm/IR/IRBuilder.h"

namespace ember::codegen {

absl::Status EmitSortComparator(const passes::Kernel& kernel, const std::string& name,
                                llvm::Module& module) {
  if (std::string why = SortKernelRefusal(kernel); !why.empty()) {
    return absl::UnimplementedError(absl::StrCat("sort comparator ", name, ": ", why));
  }
  const ir::Instruction& sort = *kernel.root();
  llvm::IRBuilder<> b(module.getContext());
  ElementalEmitter elemental(b);
  elemental.set_exact_f16(true);  // a few loads per call: f16 in total order
  llvm::Function* fn = DeclareKernelFunction(module, name);
  b.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", fn));
  llvm::Type* ptr = b.getPtrTy();
  std::vector<llvm::Value*> args;
  for (size_t k = 0; k < sort.operands().size(); ++k) {
    const ir::ElementType t = sort.operand(k)->type().element_type();
    llvm::Type* storage = elemental.StorageType(t);
    llvm::Value* base = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, fn->getArg(0), k));
    for (llvm::Value* index : {fn->getArg(2), fn->getArg(3)}) {
      args.push_back(
          elemental.FromStorage(t, b.CreateLoad(storage, b.CreateGEP(storage, base, index))));
    }
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<llvm::Value*> less,
                         elemental.EmitRegion(*sort.regions()[0], args));
  llvm::Value* out = b.CreateLoad(ptr, fn->getArg(1));
  b.CreateStore(b.CreateZExt(less[0], b.getInt8Ty()), out);
  b.CreateRetVoid();
  return absl::OkStatus();
}

}  // namespace ember::codegen
