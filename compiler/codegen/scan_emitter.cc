#include "compiler/codegen/scan_emitter.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/element_generator.h"
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/scan_support.h"
#include "llvm/IR/IRBuilder.h"

namespace ember::codegen {

absl::Status EmitScanCombiner(const passes::Kernel& kernel, const std::string& name,
                              llvm::Module& module) {
  if (std::string why = ScanCombinerRefusal(kernel); !why.empty()) {
    return absl::UnimplementedError(absl::StrCat("scan combiner ", name, ": ", why));
  }
  const ir::Instruction& window = *kernel.root();
  const ir::ElementType t = window.operand(0)->type().element_type();
  llvm::IRBuilder<> b(module.getContext());
  ElementalEmitter elemental(b);
  elemental.set_exact_f16(true);  // one value per call: f16 exactly as the evaluator
  llvm::Function* fn = DeclareKernelFunction(module, name);
  b.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", fn));
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* storage = elemental.StorageType(t);
  std::vector<llvm::Value*> args;
  for (unsigned k = 0; k < 2; ++k) {
    llvm::Value* base = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, fn->getArg(0), k));
    llvm::Value* index = fn->getArg(2 + k);
    args.push_back(
        elemental.FromStorage(t, b.CreateLoad(storage, b.CreateGEP(storage, base, index))));
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<llvm::Value*> combined,
                         elemental.EmitRegion(*window.regions()[0], args));
  llvm::Value* out = b.CreateLoad(ptr, fn->getArg(1));
  b.CreateStore(elemental.ToStorage(t, combined[0]), out);
  b.CreateRetVoid();
  return absl::OkStatus();
}

}  // namespace ember::codegen
