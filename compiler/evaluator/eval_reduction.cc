// reduce (variadic, with a body region) and sort (variadic, with a comparator region).
//
// reduce: operands are N inputs then N init values; `dimensions` lists the reduced dims. Like
// the reference interpreter, results start as the init values and every input element is folded
// in row-major order: body(acc_0..acc_{N-1}, elem_0..elem_{N-1}) -> acc. The spec leaves the
// order open; this one is deterministic, so results are reproducible bit for bit.
// sort: `dimension` (negative counts from the back; absent means the last dimension, as in
// XLA's builders) and `is_stable` (default false); the comparator gets
// (lhs_0, rhs_0, lhs_1, rhs_1, ...) and returns a pred. Sorting is always stable (a valid
// choice for is_stable = false too) and uses a bounds-safe merge sort, so a comparator that is
// not a strict weak order gives some permutation, never a crash.
// Bodies that are a single add/multiply/maximum/minimum/and/or/xor of their two parameters are
// folded directly (same element functions, same order, same bits, far faster).
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/evaluator/eval_elementwise.h"
#include "compiler/evaluator/eval_util.h"
#include "compiler/evaluator/merge_sort.h"
#include "compiler/evaluator/scalar_program.h"

namespace ember::eval {
namespace {

using Results = absl::StatusOr<std::vector<EvalValue>>;

absl::Status CheckOneRegion(const ir::Instruction& instruction) {
  if (instruction.regions().size() != 1) {
    return OpError(instruction, "expects 1 region but has ", instruction.regions().size());
  }
  return absl::OkStatus();
}

Results EvalReduce(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                   Evaluator& evaluator) {
  EMBER_RETURN_IF_ERROR(CheckOneRegion(instruction));
  if (operands.empty() || operands.size() % 2 != 0 ||
      instruction.num_results() != operands.size() / 2) {
    return OpError(instruction, "expects N inputs, N init values and N results, has ",
                   operands.size(), " operands and ", instruction.num_results(), " results");
  }
  const size_t n = operands.size() / 2;
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dimensions, IntsAttr(instruction, "dimensions"));
  std::vector<const ir::Literal*> inputs;
  for (size_t i = 0; i < n; ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* input, ArrayOperand(instruction, operands, i));
    if (i > 0 && input->shape().dims() != inputs[0]->shape().dims()) {
      return OpError(instruction, "input #", i, " ", DescribeArray(*input),
                     " differs in shape from input #0 ", DescribeArray(*inputs[0]));
    }
    inputs.push_back(input);
  }
  const std::vector<int64_t>& input_dims = inputs[0]->shape().dims();
  const int64_t rank = static_cast<int64_t>(input_dims.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t d : dimensions) {
    if (d < 0 || d >= rank || reduced[d]) {
      return OpError(instruction, "dimensions [", absl::StrJoin(dimensions, ","),
                     "] are not distinct dimensions of ", DescribeArray(*inputs[0]));
    }
    reduced[d] = true;
  }
  std::vector<int64_t> kept_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) kept_dims.push_back(input_dims[d]);
  }
  // Results start as their init values.
  std::vector<ir::Literal> results;
  for (size_t i = 0; i < n; ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* init, ArrayOperand(instruction, operands, n + i));
    EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction, i));
    if (init->shape().rank() != 0 || init->element_type() != result.element_type() ||
        result.shape().dims() != kept_dims) {
      return OpError(instruction, "init value #", i, " ", DescribeArray(*init), " and result ",
                     DescribeArray(result), " do not fit the reduction of ",
                     DescribeArray(*inputs[0]), " over [", absl::StrJoin(dimensions, ","), "]");
    }
    for (int64_t e = 0; e < result.shape().element_count(); ++e) CopyElements(*init, 0, result, e);
    results.push_back(std::move(result));
  }
  const std::vector<int64_t> result_strides = RowMajorStrides(kept_dims);
  std::vector<int64_t> strides(static_cast<size_t>(rank), 0);  // input dim -> result stride
  for (int64_t d = 0, k = 0; d < rank; ++d) {
    if (!reduced[d]) strides[d] = result_strides[k++];
  }
  const ir::Computation& body = *instruction.regions()[0];
  if (n == 1) {
    if (std::optional<SimpleBinaryRegion> simple =
            MatchSimpleBinaryRegion(body, results[0].element_type())) {
      std::vector<int64_t> targets;
      targets.reserve(static_cast<size_t>(inputs[0]->shape().element_count()));
      ForEachIndex(input_dims, [&](absl::Span<const int64_t> index, int64_t) {
        targets.push_back(Linearize(strides, index));
      });
      if (FoldElements(*simple, *inputs[0], targets, results[0])) {
        return ArrayResult(std::move(results[0]));
      }
    }
  }
  absl::Status status;
  ForEachIndex(input_dims, [&](absl::Span<const int64_t> index, int64_t linear) {
    if (!status.ok()) return;
    const int64_t target = Linearize(strides, index);
    std::vector<EvalValue> args;
    args.reserve(2 * n);
    for (size_t i = 0; i < 2 * n && status.ok(); ++i) {
      absl::StatusOr<ir::Literal> scalar =
          i < n ? ScalarFromElement(results[i], target) : ScalarFromElement(*inputs[i - n], linear);
      if (!scalar.ok()) {
        status = scalar.status();
        return;
      }
      args.push_back(EvalValue::Array(*std::move(scalar)));
    }
    absl::StatusOr<std::vector<EvalValue>> out = evaluator.Run(body, std::move(args));
    if (!out.ok()) {
      status = out.status();
      return;
    }
    if (out->size() != n) {
      status = OpError(instruction, "the body returns ", out->size(), " values, expected ", n);
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      const EvalValue& v = (*out)[i];
      if (v.kind != EvalValue::Kind::kArray || v.array.shape().element_count() != 1 ||
          v.array.element_type() != results[i].element_type()) {
        status = OpError(instruction, "the body's result #", i, " is ", v.Type().ToString(),
                         ", expected a ", TypeName(results[i].element_type()), " scalar");
        return;
      }
      CopyElements(v.array, 0, results[i], target);
    }
  });
  EMBER_RETURN_IF_ERROR(status);
  std::vector<EvalValue> values;
  for (ir::Literal& r : results) values.push_back(EvalValue::Array(std::move(r)));
  return values;
}

Results EvalSort(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                 Evaluator& evaluator) {
  EMBER_RETURN_IF_ERROR(CheckOneRegion(instruction));
  if (operands.empty() || instruction.num_results() != operands.size()) {
    return OpError(instruction, "expects as many results as inputs (", operands.size(), " vs ",
                   instruction.num_results(), ")");
  }
  std::vector<const ir::Literal*> inputs;
  for (size_t i = 0; i < operands.size(); ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* input, ArrayOperand(instruction, operands, i));
    if (i > 0 && input->shape().dims() != inputs[0]->shape().dims()) {
      return OpError(instruction, "input #", i, " ", DescribeArray(*input),
                     " differs in shape from input #0 ", DescribeArray(*inputs[0]));
    }
    inputs.push_back(input);
  }
  const std::vector<int64_t>& dims = inputs[0]->shape().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  EMBER_ASSIGN_OR_RETURN(int64_t dimension, IntAttrOr(instruction, "dimension", -1));
  if (dimension < 0) dimension += rank;
  if (rank == 0 || dimension < 0 || dimension >= rank) {
    return OpError(instruction, "dimension is out of range for ", DescribeArray(*inputs[0]));
  }
  EMBER_ASSIGN_OR_RETURN(bool is_stable, BoolAttrOr(instruction, "is_stable", false));
  (void)is_stable;  // always stable: see the file comment

  std::vector<ir::Literal> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction, i));
    if (result.shape().dims() != dims || result.element_type() != inputs[i]->element_type()) {
      return OpError(instruction, "result #", i, " ", DescribeArray(result),
                     " differs from input #", i, " ", DescribeArray(*inputs[i]));
    }
    results.push_back(std::move(result));
  }
  const ir::Computation& comparator = *instruction.regions()[0];
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  const int64_t length = dims[dimension];
  const int64_t step = strides[dimension];
  absl::Status status;
  // The start of each 1-D slice along `dimension`: positions whose index there is 0.
  std::vector<int64_t> outer_dims = dims;
  outer_dims[dimension] = 1;
  std::vector<int64_t> order(static_cast<size_t>(length)), scratch(static_cast<size_t>(length));
  // Comparators made of compare / select / logic ops (what JAX emits) run as a compiled scalar
  // program over the elements' bits; any other comparator runs through the evaluator.
  std::optional<ScalarProgram> program = ScalarProgram::Compile(comparator);
  if (program.has_value() &&
      program->num_parameters() != 2 * static_cast<int>(inputs.size())) {
    program.reset();
  }
  for (size_t i = 0; program.has_value() && i < inputs.size(); ++i) {
    if (program->parameter_type(2 * i) != inputs[i]->element_type() ||
        program->parameter_type(2 * i + 1) != inputs[i]->element_type()) {
      program.reset();
    }
  }
  std::vector<uint64_t> registers;
  std::vector<int> widths;  // bytes per element of each input (looked up once, not per compare)
  if (program.has_value()) {
    registers = program->NewRegisters();
    for (const ir::Literal* input : inputs) widths.push_back(ir::StorageBytes(input->element_type()));
  }
  ForEachIndex(outer_dims, [&](absl::Span<const int64_t> index, int64_t) {
    if (!status.ok()) return;
    const int64_t base = Linearize(strides, index);
    // Sorts the line's positions with `less`, then gathers every input along them.
    auto sort_line = [&](auto& less) {
      for (int64_t k = 0; k < length; ++k) order[k] = k;
      MergeSort(order, scratch, 0, order.size(), less);
      for (size_t i = 0; i < inputs.size(); ++i) {
        for (int64_t k = 0; k < length; ++k) {
          CopyElements(*inputs[i], base + order[k] * step, results[i], base + k * step);
        }
      }
    };
    if (program.has_value()) {
      auto compiled_less = [&](int64_t a, int64_t b) -> bool {
        for (size_t i = 0; i < inputs.size(); ++i) {
          const uint8_t* data = inputs[i]->bytes().data();
          const int w = widths[i];
          registers[2 * i] = ScalarProgram::Load(data + (base + a * step) * w, w);
          registers[2 * i + 1] = ScalarProgram::Load(data + (base + b * step) * w, w);
        }
        return program->Run(registers) != 0;
      };
      sort_line(compiled_less);
      return;
    }
    auto less = [&](int64_t a, int64_t b) -> bool {
      if (!status.ok()) return false;
      std::vector<EvalValue> args;
      for (const ir::Literal* input : inputs) {
        for (int64_t k : {a, b}) {
          absl::StatusOr<ir::Literal> scalar = ScalarFromElement(*input, base + k * step);
          if (!scalar.ok()) {
            status = scalar.status();
            return false;
          }
          args.push_back(EvalValue::Array(*std::move(scalar)));
        }
      }
      absl::StatusOr<std::vector<EvalValue>> out = evaluator.Run(comparator, std::move(args));
      if (!out.ok()) {
        status = out.status();
        return false;
      }
      if (out->size() != 1 || (*out)[0].kind != EvalValue::Kind::kArray ||
          (*out)[0].array.element_type() != ir::ElementType::kPred ||
          (*out)[0].array.shape().element_count() != 1) {
        status = OpError(instruction, "the comparator should return one tensor<i1>");
        return false;
      }
      return Elements<bool>((*out)[0].array)[0];
    };
    sort_line(less);
  });
  EMBER_RETURN_IF_ERROR(status);
  std::vector<EvalValue> values;
  for (ir::Literal& r : results) values.push_back(EvalValue::Array(std::move(r)));
  return values;
}

}  // namespace

void RegisterReductionOps(OpTable& table) {
  table.Register(ir::Opcode::kReduce, EvalReduce);
  table.Register(ir::Opcode::kSort, EvalSort);
}

}  // namespace ember::eval
