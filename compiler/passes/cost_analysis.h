// What a program costs to run, counted the way XLA's HloCostAnalysis counts it, so the numbers
// frameworks read (`compiled.cost_analysis()`: "flops", "transcendentals", "bytes accessed";
// MFU logging divides by them) mean the same on Ember as on XLA. Backend-neutral: it reads the
// IR and, when a backend has one, the fusion plan (bytes are moved per kernel, not per op).
#ifndef EMBER_COMPILER_PASSES_COST_ANALYSIS_H_
#define EMBER_COMPILER_PASSES_COST_ANALYSIS_H_

#include <string>

#include "compiler/ir/module.h"
#include "compiler/passes/fusion_plan.h"

namespace ember::passes {

struct ProgramCost {
  // Arithmetic operations: one per element of each elementwise op (compare, select and convert
  // included), 2 per multiply-add of dot and convolution (convolution counts only window taps
  // that land on the input, not on padding or dilation holes), a reduction's body once per
  // combine (input elements - output elements), the bodies of while loops once (the trip count is
  // unknown), the costliest branch of if/case.
  double flops = 0;
  // Elementwise exp, expm1, log, log1p, logistic, power, sqrt, rsqrt, cbrt, tanh, tan, sin, cos,
  // atan2 (and CHLO special functions): one per element, not counted in flops.
  double transcendentals = 0;
  // Bytes read and written: per kernel of `plan` (each input and output once), else per
  // instruction (operands and results).
  double bytes_accessed = 0;

  std::string ToString() const;
};

// `plan`, when given, is the fusion plan of `entry`.
ProgramCost AnalyzeCost(const ir::Computation& entry, const FusionPlan* plan = nullptr);

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_COST_ANALYSIS_H_
