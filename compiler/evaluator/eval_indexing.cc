// Reference evaluation of the indexing ops: gather and scatter (with batching dimensions),
// dynamic_gather (gather with slice sizes from an operand) and torch_index_select.
//
// Choices where the spec leaves room:
// - gather clamps each start index so the whole slice lies inside the operand (the spec's rule).
// - scatter visits update elements in row-major order of `updates` (the schedule) and skips each
//   element whose result index falls outside the inputs, per element as the spec says (XLA
//   drops a whole out-of-bounds window instead; the two differ only for partly-outside windows).
//   indices_are_sorted / unique_indices are hints and change nothing here.
// - torch_index_select clamps out-of-range indices into [0, dim) like the gather it lowers to.
// Elements are moved by bytes, so every element type works.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "compiler/evaluator/eval_elementwise.h"
#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::eval {
namespace {

namespace fs = family_support;

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Reads start_indices rows: for a batch index (start_indices' index without index_vector_dim),
// the position of component k.
struct IndexReader {
  std::vector<int64_t> values;  // start_indices as int64, row-major
  std::vector<int64_t> strides;
  int64_t rank = 0;
  int64_t index_vector_dim = 0;

  int64_t Component(absl::Span<const int64_t> batch_index, int64_t k) const {
    int64_t linear = 0;
    size_t b = 0;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t coordinate = d == index_vector_dim ? k : batch_index[b++];
      linear += coordinate * strides[d];
    }
    return values[linear];
  }
};

absl::StatusOr<IndexReader> MakeReader(const ir::Instruction& inst, const ir::Literal& indices,
                                       int64_t index_vector_dim, size_t components) {
  IndexReader r;
  EMBER_ASSIGN_OR_RETURN(r.values, fs::IntegerValues(indices));
  r.rank = indices.shape().rank();
  r.strides = fs::RowMajorStrides(indices.shape().dims());
  r.index_vector_dim = index_vector_dim;
  if (index_vector_dim < 0 || index_vector_dim > r.rank) {
    return fs::OpError(inst, absl::StrCat("index_vector_dim ", index_vector_dim,
                                          " out of range for indices of rank ", r.rank));
  }
  const int64_t have = index_vector_dim < r.rank ? indices.shape().dim(index_vector_dim) : 1;
  if (have != static_cast<int64_t>(components)) {
    return fs::OpError(inst, absl::StrCat("index vectors have ", have,
                                          " components, the index "
                                          "map has ",
                                          components));
  }
  return r;
}

// Batch dims of start_indices (all but index_vector_dim), in order.
std::vector<int64_t> BatchSizes(const ir::Literal& indices, int64_t index_vector_dim) {
  std::vector<int64_t> sizes;
  for (int64_t d = 0; d < indices.shape().rank(); ++d) {
    if (d != index_vector_dim) sizes.push_back(indices.shape().dim(d));
  }
  return sizes;
}

absl::StatusOr<std::vector<EvalValue>> GatherCore(const ir::Instruction& inst,
                                                  const ir::Literal& operand,
                                                  const ir::Literal& indices,
                                                  const std::vector<int64_t>& slice_sizes) {
  const std::vector<int64_t> none;
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> offset_dims, fs::IntsAttr(inst, "offset_dims", none));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> collapsed,
                         fs::IntsAttr(inst, "collapsed_slice_dims", none));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> operand_batching,
                         fs::IntsAttr(inst, "operand_batching_dims", none));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> indices_batching,
                         fs::IntsAttr(inst, "start_indices_batching_dims", none));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> start_index_map,
                         fs::IntsAttr(inst, "start_index_map"));
  EMBER_ASSIGN_OR_RETURN(int64_t ivd, fs::IntAttr(inst, "index_vector_dim"));
  const ir::Shape& os = operand.shape();
  const int64_t rank = os.rank();
  if (static_cast<int64_t>(slice_sizes.size()) != rank) {
    return fs::OpError(inst, absl::StrCat("slice_sizes has ", slice_sizes.size(),
                                          " entries for an operand of rank ", rank));
  }
  std::vector<int64_t> not_offset = collapsed;
  not_offset.insert(not_offset.end(), operand_batching.begin(), operand_batching.end());
  EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "collapsed/batching", not_offset, rank));
  EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "start_index_map", start_index_map, rank));
  if (operand_batching.size() != indices_batching.size()) {
    return fs::OpError(inst,
                       "operand_batching_dims and start_indices_batching_dims differ in size");
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > os.dim(d)) {
      return fs::OpError(inst, absl::StrCat("slice size ", slice_sizes[d], " out of range for dim ",
                                            d, " of ", os.ToString()));
    }
  }
  std::vector<int64_t> offset_operand_dims;  // operand axis of each offset dim
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(not_offset, d)) offset_operand_dims.push_back(d);
  }
  if (offset_operand_dims.size() != offset_dims.size()) {
    return fs::OpError(inst,
                       absl::StrCat("rank ", rank, " operand needs ", offset_operand_dims.size(),
                                    " offset dims, got ", offset_dims.size()));
  }
  EMBER_ASSIGN_OR_RETURN(IndexReader reader,
                         MakeReader(inst, indices, ivd, start_index_map.size()));
  const std::vector<int64_t> batch_sizes = BatchSizes(indices, ivd);
  // Expected result dims: batch sizes in the non-offset axes, slice sizes in the offset axes.
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, fs::ZeroResult(inst, 0));
  const std::vector<int64_t>& rdims = result.shape().dims();
  const int64_t result_rank = static_cast<int64_t>(rdims.size());
  if (result_rank != static_cast<int64_t>(batch_sizes.size() + offset_dims.size())) {
    return fs::OpError(inst, "result rank does not match batch and offset dims");
  }
  EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "offset", offset_dims, result_rank));
  std::vector<int64_t> batch_dims;
  for (int64_t d = 0; d < result_rank; ++d) {
    if (!Contains(offset_dims, d)) batch_dims.push_back(d);
  }
  std::vector<int64_t> expect(static_cast<size_t>(result_rank));
  for (size_t i = 0; i < batch_dims.size(); ++i) expect[batch_dims[i]] = batch_sizes[i];
  for (size_t i = 0; i < offset_dims.size(); ++i) {
    expect[offset_dims[i]] = slice_sizes[offset_operand_dims[i]];
  }
  if (expect != rdims || result.element_type() != operand.element_type()) {
    return fs::OpError(inst, absl::StrCat("result ", result.shape().ToString(),
                                          " does not match the expected dims [",
                                          absl::StrJoin(expect, ", "), "] of the operand type"));
  }
  for (size_t i = 0; i < indices_batching.size(); ++i) {
    const int64_t d = indices_batching[i];
    if (d < 0 || d >= indices.shape().rank() || d == ivd ||
        indices.shape().dim(d) != os.dim(operand_batching[i])) {
      return fs::OpError(inst,
                         absl::StrCat("start_indices_batching_dims entry ", d, " is invalid"));
    }
  }
  if (result.shape().element_count() == 0) {
    std::vector<EvalValue> out;
    out.push_back(EvalValue::Array(std::move(result)));
    return out;
  }
  const std::vector<int64_t> ostr = fs::RowMajorStrides(os.dims());
  std::vector<int64_t> ri(static_cast<size_t>(result_rank), 0), batch_index(batch_dims.size());
  int64_t linear = 0;
  do {
    for (size_t i = 0; i < batch_dims.size(); ++i) batch_index[i] = ri[batch_dims[i]];
    int64_t src = 0;
    for (size_t k = 0; k < start_index_map.size(); ++k) {
      const int64_t d = start_index_map[k];
      const int64_t start = reader.Component(batch_index, static_cast<int64_t>(k));
      src += std::clamp<int64_t>(start, 0, os.dim(d) - slice_sizes[d]) * ostr[d];
    }
    for (size_t i = 0; i < operand_batching.size(); ++i) {
      const int64_t d_start = indices_batching[i];
      src += batch_index[d_start - (d_start < ivd ? 0 : 1)] * ostr[operand_batching[i]];
    }
    for (size_t i = 0; i < offset_dims.size(); ++i) {
      src += ri[offset_dims[i]] * ostr[offset_operand_dims[i]];
    }
    fs::CopyElement(operand, src, result, linear++);
  } while (fs::NextIndex(ri, rdims));
  std::vector<EvalValue> out;
  out.push_back(EvalValue::Array(std::move(result)));
  return out;
}

absl::StatusOr<std::vector<EvalValue>> EvalGather(const ir::Instruction& inst,
                                                  std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 2));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* indices, fs::ArrayOperand(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> slice_sizes, fs::IntsAttr(inst, "slice_sizes"));
  return GatherCore(inst, *operand, *indices, slice_sizes);
}

absl::StatusOr<std::vector<EvalValue>> EvalDynamicGather(const ir::Instruction& inst,
                                                         std::vector<EvalValue>& operands,
                                                         Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 3));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* indices, fs::ArrayOperand(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* sizes, fs::ArrayOperand(inst, operands, 2));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> slice_sizes, fs::IntegerValues(*sizes));
  return GatherCore(inst, *operand, *indices, slice_sizes);
}

absl::StatusOr<std::vector<EvalValue>> EvalScatter(const ir::Instruction& inst,
                                                   std::vector<EvalValue>& operands,
                                                   Evaluator& evaluator) {
  if (operands.size() < 3 || operands.size() % 2 != 1) {
    return fs::OpError(inst, "expects inputs, scatter_indices and as many updates as inputs");
  }
  if (inst.regions().size() != 1) return fs::OpError(inst, "expects one update region");
  const size_t n = (operands.size() - 1) / 2;
  const std::vector<int64_t> none;
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> update_window_dims,
                         fs::IntsAttr(inst, "update_window_dims", none));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> inserted,
                         fs::IntsAttr(inst, "inserted_window_dims", none));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> input_batching,
                         fs::IntsAttr(inst, "input_batching_dims", none));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> indices_batching,
                         fs::IntsAttr(inst, "scatter_indices_batching_dims", none));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> to_operand,
                         fs::IntsAttr(inst, "scatter_dims_to_operand_dims"));
  EMBER_ASSIGN_OR_RETURN(int64_t ivd, fs::IntAttr(inst, "index_vector_dim"));

  std::vector<ir::Literal> results;
  std::vector<const ir::Literal*> updates;
  for (size_t i = 0; i < n; ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* in, fs::ArrayOperand(inst, operands, i));
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* up, fs::ArrayOperand(inst, operands, n + 1 + i));
    EMBER_ASSIGN_OR_RETURN(ir::Literal copy, in->Clone());
    results.push_back(std::move(copy));
    updates.push_back(up);
  }
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* indices, fs::ArrayOperand(inst, operands, n));
  const ir::Shape& is = results[0].shape();
  const int64_t rank = is.rank();
  const std::vector<int64_t>& udims = updates[0]->shape().dims();
  for (size_t i = 0; i < n; ++i) {
    if (results[i].shape().dims() != is.dims() || updates[i]->shape().dims() != udims) {
      return fs::OpError(inst, "inputs (and updates) must all have the same shape");
    }
  }
  std::vector<int64_t> not_window = inserted;
  not_window.insert(not_window.end(), input_batching.begin(), input_batching.end());
  EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "inserted/batching", not_window, rank));
  EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "scatter_dims_to_operand_dims", to_operand, rank));
  EMBER_RETURN_IF_ERROR(
      fs::CheckDims(inst, "update_window", update_window_dims, static_cast<int64_t>(udims.size())));
  if (input_batching.size() != indices_batching.size()) {
    return fs::OpError(inst,
                       "input_batching_dims and scatter_indices_batching_dims differ in size");
  }
  std::vector<int64_t> window_input_dims;  // input axis of each update window dim
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(not_window, d)) window_input_dims.push_back(d);
  }
  if (window_input_dims.size() != update_window_dims.size()) {
    return fs::OpError(inst, absl::StrCat("rank ", rank, " inputs need ", window_input_dims.size(),
                                          " update window dims, got ", update_window_dims.size()));
  }
  std::vector<int64_t> scatter_dims;  // update axes that are not window axes
  for (int64_t d = 0; d < static_cast<int64_t>(udims.size()); ++d) {
    if (!Contains(update_window_dims, d)) scatter_dims.push_back(d);
  }
  EMBER_ASSIGN_OR_RETURN(IndexReader reader, MakeReader(inst, *indices, ivd, to_operand.size()));
  if (BatchSizes(*indices, ivd).size() != scatter_dims.size()) {
    return fs::OpError(inst, "updates' scatter dims do not match the scatter indices");
  }
  for (size_t i = 0; i < scatter_dims.size(); ++i) {
    if (udims[scatter_dims[i]] != BatchSizes(*indices, ivd)[i]) {
      return fs::OpError(inst, "updates' scatter dims do not match the scatter indices' sizes");
    }
  }
  for (size_t i = 0; i < results.size(); ++i) {
    EMBER_ASSIGN_OR_RETURN(ir::Shape shape, fs::ResultShape(inst, i));
    if (shape.element_type() != results[i].element_type()) {
      return fs::OpError(inst, "result element types must match the inputs'");
    }
  }
  const ir::Computation& update = *inst.regions()[0];
  const std::vector<int64_t> istr = fs::RowMajorStrides(is.dims());
  // The update window's extent along each input dim (1 along inserted and batching dims). As
  // XLA does, a window that does not fit inside the input at its start is skipped whole: the
  // start must lie in [0, dim - extent] along every dim.
  std::vector<int64_t> extent(static_cast<size_t>(rank), 1);
  for (size_t i = 0; i < update_window_dims.size(); ++i) {
    extent[window_input_dims[i]] = udims[update_window_dims[i]];
  }
  // The update elements of windows inside the input, in schedule (row-major) order, and where
  // each one goes.
  std::vector<int64_t> destinations, sources;
  if (fs::Product(udims) > 0) {
    std::vector<int64_t> ui(udims.size(), 0), scatter_index(scatter_dims.size());
    int64_t linear = 0;
    do {
      for (size_t i = 0; i < scatter_dims.size(); ++i) scatter_index[i] = ui[scatter_dims[i]];
      std::vector<int64_t> ri(static_cast<size_t>(rank), 0);
      for (size_t k = 0; k < to_operand.size(); ++k) {
        ri[to_operand[k]] += reader.Component(scatter_index, static_cast<int64_t>(k));
      }
      for (size_t i = 0; i < input_batching.size(); ++i) {
        const int64_t d_start = indices_batching[i];
        ri[input_batching[i]] += scatter_index[d_start - (d_start < ivd ? 0 : 1)];
      }
      bool inside = true;
      for (int64_t d = 0; d < rank; ++d) {
        inside = inside && ri[d] >= 0 && ri[d] <= is.dim(d) - extent[d];
      }
      for (size_t i = 0; i < update_window_dims.size(); ++i) {
        ri[window_input_dims[i]] += ui[update_window_dims[i]];
      }
      if (inside) {
        destinations.push_back(fs::Linearize(ri, istr));
        sources.push_back(linear);
      }
      ++linear;
    } while (fs::NextIndex(ui, udims));
  }
  // Fast path: one input and an update region that is a single foldable binary op.
  if (n == 1 && updates[0]->element_type() == results[0].element_type()) {
    if (std::optional<SimpleBinaryRegion> simple =
            MatchSimpleBinaryRegion(update, results[0].element_type())) {
      EMBER_ASSIGN_OR_RETURN(
          ir::Shape gathered_shape,
          ir::Shape::Make(results[0].element_type(), {static_cast<int64_t>(sources.size())}));
      EMBER_ASSIGN_OR_RETURN(ir::Literal gathered, ir::Literal::Create(gathered_shape));
      for (size_t k = 0; k < sources.size(); ++k) {
        fs::CopyElement(*updates[0], sources[k], gathered, static_cast<int64_t>(k));
      }
      EMBER_ASSIGN_OR_RETURN(ir::Literal acc, results[0].Clone());
      if (FoldElements(*simple, gathered, destinations, acc)) {
        std::vector<EvalValue> out;
        out.push_back(EvalValue::Array(std::move(acc)));
        return out;
      }
    }
  }
  for (size_t k = 0; k < sources.size(); ++k) {
    const int64_t dst = destinations[k];
    std::vector<ir::Literal> args;
    for (size_t i = 0; i < n; ++i) {
      EMBER_ASSIGN_OR_RETURN(ir::Literal cur, fs::ScalarAt(results[i], dst));
      args.push_back(std::move(cur));
    }
    for (size_t i = 0; i < n; ++i) {
      EMBER_ASSIGN_OR_RETURN(ir::Literal up, fs::ScalarAt(*updates[i], sources[k]));
      args.push_back(std::move(up));
    }
    EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> out,
                           fs::RunRegion(evaluator, update, std::move(args)));
    if (out.size() != n) return fs::OpError(inst, "update computation returned wrong count");
    for (size_t i = 0; i < n; ++i) {
      if (out[i].kind != EvalValue::Kind::kArray ||
          out[i].array.element_type() != results[i].element_type()) {
        return fs::OpError(inst, "update computation returned a value of the wrong type");
      }
      fs::CopyElement(out[i].array, 0, results[i], dst);
    }
  }
  std::vector<EvalValue> out;
  for (ir::Literal& r : results) out.push_back(EvalValue::Array(std::move(r)));
  return out;
}

// mhlo.torch_index_select: result = operand.shape[:dim] + index.shape[batch_dims:] +
// operand.shape[dim+1:], reading operand[..., index[b..., j...], ...].
absl::StatusOr<std::vector<EvalValue>> EvalTorchIndexSelect(const ir::Instruction& inst,
                                                            std::vector<EvalValue>& operands,
                                                            Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 2));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* index, fs::ArrayOperand(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(int64_t dim, fs::IntAttr(inst, "dim"));
  EMBER_ASSIGN_OR_RETURN(int64_t batch_dims, fs::IntAttr(inst, "batch_dims", 0));
  const ir::Shape& os = operand->shape();
  const ir::Shape& xs = index->shape();
  if (dim < 0) dim += os.rank();
  if (dim < 0 || dim >= os.rank() || batch_dims < 0 || batch_dims > dim || batch_dims > xs.rank()) {
    return fs::OpError(inst, absl::StrCat("dim ", dim, " / batch_dims ", batch_dims,
                                          " invalid for ", os.ToString(), " and ", xs.ToString()));
  }
  std::vector<int64_t> expect(os.dims().begin(), os.dims().begin() + dim);
  expect.insert(expect.end(), xs.dims().begin() + batch_dims, xs.dims().end());
  expect.insert(expect.end(), os.dims().begin() + dim + 1, os.dims().end());
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, fs::ZeroResult(inst, 0));
  if (result.shape().dims() != expect || result.element_type() != operand->element_type()) {
    return fs::OpError(inst, absl::StrCat("result ", result.shape().ToString(), " expected dims [",
                                          absl::StrJoin(expect, ", "), "]"));
  }
  for (int64_t b = 0; b < batch_dims; ++b) {
    if (xs.dim(b) != os.dim(b)) return fs::OpError(inst, "batch dims of index and operand differ");
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> idx, fs::IntegerValues(*index));
  const std::vector<int64_t> ostr = fs::RowMajorStrides(os.dims());
  const std::vector<int64_t> xstr = fs::RowMajorStrides(xs.dims());
  const int64_t index_free = xs.rank() - batch_dims;
  if (result.shape().element_count() > 0 && os.dim(dim) == 0) {
    return fs::OpError(inst, "cannot select from an empty dimension");
  }
  if (result.shape().element_count() > 0) {
    std::vector<int64_t> ri(expect.size(), 0);
    int64_t linear = 0;
    do {
      int64_t xpos = 0;
      for (int64_t b = 0; b < batch_dims; ++b) xpos += ri[b] * xstr[b];
      for (int64_t j = 0; j < index_free; ++j) xpos += ri[dim + j] * xstr[batch_dims + j];
      const int64_t selected = std::clamp<int64_t>(idx[xpos], 0, os.dim(dim) - 1);
      int64_t src = selected * ostr[dim];
      for (int64_t d = 0; d < dim; ++d) src += ri[d] * ostr[d];
      for (int64_t d = dim + 1; d < os.rank(); ++d) src += ri[d - 1 + index_free] * ostr[d];
      fs::CopyElement(*operand, src, result, linear++);
    } while (fs::NextIndex(ri, expect));
  }
  std::vector<EvalValue> out;
  out.push_back(EvalValue::Array(std::move(result)));
  return out;
}

}  // namespace

void RegisterIndexingOps(OpTable& table) {
  table.Register(ir::Opcode::kGather, EvalGather);
  table.Register(ir::Opcode::kDynamicGather, EvalDynamicGather);
  table.Register(ir::Opcode::kScatter, EvalScatter);
  table.Register(ir::Opcode::kTorchIndexSelect, EvalTorchIndexSelect);
}

}  // namespace ember::eval
