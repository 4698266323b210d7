#include "compiler/passes/pass.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/verifier.h"

namespace ember::passes {

absl::StatusOr<bool> PassPipeline::Run(ir::Module& module) {
  bool any = false;
  for (size_t i = 0; i < passes_.size(); ++i) {
    Pass& pass = *passes_[i];
    absl::StatusOr<bool> changed = pass.Run(module);
    if (!changed.ok()) {
      return absl::Status(changed.status().code(),
                          absl::StrCat("pass ", pass.name(), ": ", changed.status().message()));
    }
    if (*changed && verify_) {
      absl::Status verified = ir::Verify(module);
      if (!verified.ok()) {
        return absl::InternalError(absl::StrCat("the module does not verify after pass ",
                                                pass.name(), ": ", verified.message()));
      }
    }
    any = any || *changed;
    if (after_pass_) EMBER_RETURN_IF_ERROR(after_pass_(static_cast<int>(i), pass.name(), *changed, module));
  }
  return any;
}

PassPipeline CreateRequiredLoweringPipeline() {
  PassPipeline pipeline;
  pipeline.Add(CreateResolveMeshAxesPass());
  pipeline.Add(CreateLegalizeQuantizedPass());
  pipeline.Add(CreateLegalizeCollectivesPass());
  return pipeline;
}

PassPipeline CreateDefaultPipeline() {
  PassPipeline pipeline;
  pipeline.Add(CreateInlinePass());
  pipeline.Add(CreateAlgebraicSimplifierPass());
  pipeline.Add(CreateConstantFoldingPass());
  pipeline.Add(CreateCsePass());
  pipeline.Add(CreateAlgebraicSimplifierPass());
  pipeline.Add(CreateDcePass());
  pipeline.Add(CreateExplicitCapturesPass());
  pipeline.Add(CreateConvolutionBatchGroupsPass());
  return pipeline;
}

}  // namespace ember::passes
