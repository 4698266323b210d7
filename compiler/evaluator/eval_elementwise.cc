// The elementwise family's registration and its shared checks; the ops live in eval_unary.cc,
// eval_binary.cc, eval_convert.cc and eval_compare.cc.
#include "compiler/evaluator/eval_elementwise.h"

#include <algorithm>

#include "absl/strings/str_join.h"

namespace ember::eval {

absl::Status CheckDims(const ir::Instruction& instruction, const ir::Literal& array,
                       absl::Span<const int64_t> dims, const char* what) {
  const std::vector<int64_t>& have = array.shape().dims();
  if (!std::equal(have.begin(), have.end(), dims.begin(), dims.end())) {
    return OpError(instruction, what, " is ", DescribeArray(array), " but shape [",
                   absl::StrJoin(dims, ","), "] is expected");
  }
  return absl::OkStatus();
}

absl::Status UnsupportedType(const ir::Instruction& instruction, ir::ElementType type,
                             const char* expects) {
  return OpError(instruction, "element type ", TypeName(type), " is not supported (expects ",
                 expects, ")");
}

void RegisterElementwiseOps(OpTable& table) {
  RegisterUnaryOps(table);
  RegisterBinaryOps(table);
  RegisterConvertOps(table);
  RegisterCompareOps(table);
}

}  // namespace ember::eval
