// chlo.top_k run natively: each row (the last dimension; rows in parallel) keeps its k largest
// elements by a partial selection (a bounded heap, or nth_element + sort when k is a large share
// of the row) under the evaluator's order (eval_custom_call.cc TopK): NaN counts as +inf, -0 equals
// +0, integers compare as the doubles the evaluator makes of them, ties go to the lower index.
// Values are the selected elements' bits, indices their positions in the row.
#ifndef EMBER_COMPILER_HOST_TOP_K_THUNK_H_
#define EMBER_COMPILER_HOST_TOP_K_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/host/host_thunks.h"

namespace ember::host {

class TopKThunk final : public HostThunk {
 public:
  // Whether `instruction` is a chlo.top_k this thunk runs: "" if so, else why not (the
  // evaluator's op table runs it then).
  static std::string Refusal(const ir::Instruction& instruction);
  // `operand`: the array; `values`/`indices`: the two results (a result nothing reads has no
  // buffer: kind kOther). Requires Refusal(instruction) to be empty.
  static std::unique_ptr<TopKThunk> Create(std::string name, const ir::Instruction& instruction,
                                           ValueRef operand, ValueRef values, ValueRef indices);
  absl::Status Run(HostRunContext& context) const override;

  // How one row is selected; one per supported element type (top_k_thunk.cc).
  using RowSelector = void (*)(const uint8_t* row, int64_t n, int64_t k, void* scratch,
                               uint8_t* values, uint8_t* indices, int index_bytes);

 private:
  TopKThunk(std::string name, ValueRef operand, ValueRef values, ValueRef indices)
      : HostThunk(Kind::kKernel, std::move(name)),
        operand_(operand),
        values_(values),
        indices_(indices) {}

  ValueRef operand_, values_, indices_;
  RowSelector select_ = nullptr;
  int element_bytes_ = 0;
  int index_bytes_ = 0;
  int64_t scratch_bytes_per_row_ = 0;  // the selection's working array
  int64_t n_ = 0;                      // elements per row
  int64_t k_ = 0;
  int64_t rows_ = 0;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_TOP_K_THUNK_H_
