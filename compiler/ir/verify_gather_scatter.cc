// Verifier checks of gather (result shape inferred from the dimension numbers and slice sizes)
// and scatter (dimension numbers, update shapes, update computation).
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/verifier_internal.h"

namespace ember::ir::verifier {
namespace {

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    if (absl::Status s_ = (expr); !s_.ok()) return s_; \
  } while (0)

absl::Status SortedUniqueInRange(const OpChecker& c, const char* name,
                                 const std::vector<int64_t>& dims, int64_t rank) {
  RETURN_IF_ERROR(c.DimsInRange(name, dims, rank));
  RETURN_IF_ERROR(c.DimsUnique(name, dims));
  return c.DimsSorted(name, dims);
}

absl::Status Disjoint(const OpChecker& c, const char* a_name, const std::vector<int64_t>& a,
                      const char* b_name, const std::vector<int64_t>& b) {
  const std::set<int64_t> sa(a.begin(), a.end());
  for (int64_t d : b) {
    if (sa.count(d)) return c.Error(a_name, " and ", b_name, " both contain dimension ", d);
  }
  return absl::OkStatus();
}

// The batch (scatter) dimensions of the indices: all but index_vector_dim.
std::vector<int64_t> IndexBatchDims(const std::vector<int64_t>& indices, int64_t ivd) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (static_cast<int64_t>(i) != ivd) out.push_back(indices[i]);
  }
  return out;
}

absl::Status IndexVector(const OpChecker& c, const std::vector<int64_t>& indices, int64_t ivd,
                         const char* map_name, const std::vector<int64_t>& map,
                         int64_t operand_rank) {
  const int64_t irank = static_cast<int64_t>(indices.size());
  if (ivd < 0 || ivd > irank) {
    return c.Error("index_vector_dim = ", ivd, " is out of range for indices of rank ", irank);
  }
  const int64_t vector_size = ivd == irank ? 1 : indices[ivd];
  if (static_cast<int64_t>(map.size()) != vector_size) {
    return c.Error(map_name, " has ", map.size(), " elements but the index vector has ",
                   vector_size);
  }
  RETURN_IF_ERROR(c.DimsInRange(map_name, map, operand_rank));
  return c.DimsUnique(map_name, map);
}

// Gather C13-C17, scatter C14-C18: the indices' batching dims are unique, in range, not the
// index vector, as many as the operand's, and of the same sizes.
absl::Status BatchingDims(const OpChecker& c, const char* operand_name,
                          const std::vector<int64_t>& operand_batch,
                          const std::vector<int64_t>& operand, const char* indices_name,
                          const std::vector<int64_t>& indices_batch,
                          const std::vector<int64_t>& indices, int64_t ivd) {
  if (indices_batch.size() != operand_batch.size()) {
    return c.Error(indices_name, " and ", operand_name, " have different sizes");
  }
  RETURN_IF_ERROR(
      c.DimsInRange(indices_name, indices_batch, static_cast<int64_t>(indices.size())));
  RETURN_IF_ERROR(c.DimsUnique(indices_name, indices_batch));
  for (int64_t d : indices_batch) {
    if (d == ivd) return c.Error(indices_name, " contains index_vector_dim ", d);
  }
  for (size_t i = 0; i < operand_batch.size(); ++i) {
    const int64_t a = operand[operand_batch[i]], b = indices[indices_batch[i]];
    if (a != b) {
      return c.Error("batching dimension sizes differ: ", operand_name, "[", i, "] = ",
                     operand_batch[i], " has size ", a, ", ", indices_name, "[", i, "] = ",
                     indices_batch[i], " has size ", b);
    }
  }
  return absl::OkStatus();
}

absl::Status Gather(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(2));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  const std::vector<int64_t>& operand = c.operand(0).dims();
  const std::vector<int64_t>& indices = c.operand(1).dims();
  const int64_t rank = static_cast<int64_t>(operand.size());
  if (!IsInteger(c.operand(1).element_type())) return c.Error("start_indices must be integers");
  absl::StatusOr<std::vector<int64_t>> offset = c.Ints("offset_dims");
  if (!offset.ok()) return offset.status();
  absl::StatusOr<std::vector<int64_t>> map = c.Ints("start_index_map");
  if (!map.ok()) return map.status();
  absl::StatusOr<std::vector<int64_t>> sizes = c.Ints("slice_sizes");
  if (!sizes.ok()) return sizes.status();
  absl::StatusOr<int64_t> ivd = c.Int("index_vector_dim");
  if (!ivd.ok()) return ivd.status();
  const std::vector<int64_t> collapsed = c.IntsOr("collapsed_slice_dims", {});
  const std::vector<int64_t> obatch = c.IntsOr("operand_batching_dims", {});
  const std::vector<int64_t> ibatch = c.IntsOr("start_indices_batching_dims", {});
  RETURN_IF_ERROR(SortedUniqueInRange(c, "collapsed_slice_dims", collapsed, rank));
  RETURN_IF_ERROR(SortedUniqueInRange(c, "operand_batching_dims", obatch, rank));
  RETURN_IF_ERROR(Disjoint(c, "collapsed_slice_dims", collapsed, "operand_batching_dims", obatch));
  RETURN_IF_ERROR(IndexVector(c, indices, *ivd, "start_index_map", *map, rank));
  RETURN_IF_ERROR(Disjoint(c, "start_index_map", *map, "operand_batching_dims", obatch));
  RETURN_IF_ERROR(BatchingDims(c, "operand_batching_dims", obatch, operand,
                               "start_indices_batching_dims", ibatch, indices, *ivd));
  RETURN_IF_ERROR(c.SizeIs("slice_sizes", *sizes, operand.size(), "the operand's rank"));
  for (size_t i = 0; i < operand.size(); ++i) {
    if ((*sizes)[i] < 0 || (*sizes)[i] > operand[i]) {
      return c.Error("slice_sizes[", i, "] = ", (*sizes)[i], " is out of range [0, ", operand[i], "]");
    }
  }
  for (int64_t d : collapsed) {
    if ((*sizes)[d] > 1) return c.Error("slice_sizes[", d, "] = ", (*sizes)[d], " of a collapsed dimension must be at most 1");
  }
  for (int64_t d : obatch) {
    if ((*sizes)[d] > 1) return c.Error("slice_sizes[", d, "] = ", (*sizes)[d], " of a batching dimension must be at most 1");
  }
  const std::vector<int64_t> batch = IndexBatchDims(indices, *ivd);
  std::vector<int64_t> offset_sizes;
  const std::set<int64_t> dropped_c(collapsed.begin(), collapsed.end());
  const std::set<int64_t> dropped_b(obatch.begin(), obatch.end());
  for (int64_t i = 0; i < rank; ++i) {
    if (!dropped_c.count(i) && !dropped_b.count(i)) offset_sizes.push_back((*sizes)[i]);
  }
  if (offset->size() != offset_sizes.size()) {
    return c.Error("offset_dims has ", offset->size(), " elements but ", offset_sizes.size(),
                   " slice dimensions remain");
  }
  const int64_t out_rank = static_cast<int64_t>(batch.size() + offset->size());
  RETURN_IF_ERROR(SortedUniqueInRange(c, "offset_dims", *offset, out_rank));
  std::vector<int64_t> out(out_rank);
  const std::set<int64_t> offset_set(offset->begin(), offset->end());
  size_t bi = 0, oi = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    out[i] = offset_set.count(i) ? offset_sizes[oi++] : batch[bi++];
  }
  return c.ResultIs(0, TensorOf(c.operand(0).element_type(), out));
}

absl::Status Scatter(const OpChecker& c) {
  if (c.num_operands() < 3 || c.num_operands() % 2 == 0) {
    return c.Error("expects N inputs, the indices and N updates, got ", c.num_operands(),
                   " operands");
  }
  RETURN_IF_ERROR(c.AllTensors());
  RETURN_IF_ERROR(c.RegionCount(1));
  const size_t n = (c.num_operands() - 1) / 2;
  RETURN_IF_ERROR(c.ResultCount(n));
  const std::vector<int64_t>& operand = c.operand(0).dims();
  const std::vector<int64_t>& indices = c.operand(n).dims();
  const int64_t rank = static_cast<int64_t>(operand.size());
  if (!IsInteger(c.operand(n).element_type())) return c.Error("scatter_indices must be integers");
  absl::StatusOr<std::vector<int64_t>> window = c.Ints("update_window_dims");
  if (!window.ok()) return window.status();
  absl::StatusOr<std::vector<int64_t>> map = c.Ints("scatter_dims_to_operand_dims");
  if (!map.ok()) return map.status();
  absl::StatusOr<int64_t> ivd = c.Int("index_vector_dim");
  if (!ivd.ok()) return ivd.status();
  const std::vector<int64_t> inserted = c.IntsOr("inserted_window_dims", {});
  const std::vector<int64_t> ibatch = c.IntsOr("input_batching_dims", {});
  const std::vector<int64_t> sbatch = c.IntsOr("scatter_indices_batching_dims", {});
  RETURN_IF_ERROR(SortedUniqueInRange(c, "inserted_window_dims", inserted, rank));
  RETURN_IF_ERROR(SortedUniqueInRange(c, "input_batching_dims", ibatch, rank));
  RETURN_IF_ERROR(Disjoint(c, "inserted_window_dims", inserted, "input_batching_dims", ibatch));
  RETURN_IF_ERROR(IndexVector(c, indices, *ivd, "scatter_dims_to_operand_dims", *map, rank));
  RETURN_IF_ERROR(
      Disjoint(c, "scatter_dims_to_operand_dims", *map, "input_batching_dims", ibatch));
  RETURN_IF_ERROR(BatchingDims(c, "input_batching_dims", ibatch, operand,
                               "scatter_indices_batching_dims", sbatch, indices, *ivd));
  const std::vector<int64_t> scatter_dims = IndexBatchDims(indices, *ivd);
  const std::vector<int64_t>& updates = c.operand(n + 1).dims();
  const int64_t urank = static_cast<int64_t>(updates.size());
  RETURN_IF_ERROR(SortedUniqueInRange(c, "update_window_dims", *window, urank));
  if (window->size() + inserted.size() + ibatch.size() != operand.size()) {
    return c.Error("update_window_dims (", window->size(), "), inserted_window_dims (",
                   inserted.size(), ") and input_batching_dims (", ibatch.size(),
                   ") must add up to the input rank ", rank);
  }
  if (static_cast<size_t>(urank) != scatter_dims.size() + window->size()) {
    return c.Error("updates rank ", urank, " must be ", scatter_dims.size() + window->size(),
                   " (scatter dimensions plus update_window_dims)");
  }
  // C4: the updates' scatter dims are the indices' batch dims; their window dims are at most
  // the input's dims that are neither inserted nor batching.
  {
    const std::set<int64_t> window_set(window->begin(), window->end());
    const std::set<int64_t> not_window(inserted.begin(), inserted.end());
    std::vector<int64_t> operand_window;
    for (int64_t d = 0; d < rank; ++d) {
      if (!not_window.count(d) && std::find(ibatch.begin(), ibatch.end(), d) == ibatch.end()) {
        operand_window.push_back(d);
      }
    }
    size_t si = 0, wi = 0;
    for (int64_t d = 0; d < urank; ++d) {
      if (window_set.count(d)) {
        const int64_t od = operand_window[wi++];
        if (updates[d] > operand[od]) {
          return c.Error("update window dimension ", d, " of size ", updates[d],
                         " exceeds the input's dimension ", od, " of size ", operand[od]);
        }
      } else if (updates[d] != scatter_dims[si++]) {
        return c.Error("update scatter dimension ", d, " of size ", updates[d],
                       " differs from the scatter indices' ", scatter_dims[si - 1]);
      }
    }
  }
  std::vector<ValueType> scalars;
  for (size_t i = 0; i < n; ++i) {
    if (c.operand(i).dims() != operand) return c.Error("inputs have different shapes");
    if (c.operand(n + 1 + i).dims() != updates) return c.Error("updates have different shapes");
    if (c.operand(n + 1 + i).element_type() != c.operand(i).element_type()) {
      return c.Error("updates element type ",
                     std::string(ElementTypeName(c.operand(n + 1 + i).element_type())),
                     " differs from input ", i, "'s ",
                     std::string(ElementTypeName(c.operand(i).element_type())));
    }
    // The update computation may promote the element type (is_promotable); results take it.
    ElementType e = c.operand(i).element_type();
    const Computation* body = c.inst().regions()[0];
    if (body->parameters().size() == 2 * n && body->parameter(i)->type().is_tensor()) {
      const ElementType p = body->parameter(i)->type().element_type();
      if (BitWidth(p) >= BitWidth(e) && IsFloat(p) == IsFloat(e) && IsComplex(p) == IsComplex(e) &&
          IsInteger(p) == IsInteger(e)) {
        e = p;
      }
    }
    RETURN_IF_ERROR(c.ResultIs(i, TensorOf(e, operand)));
    scalars.push_back(TensorOf(e, {}));
  }
  std::vector<ValueType> params = scalars;
  params.insert(params.end(), scalars.begin(), scalars.end());
  return c.RegionSignature(0, params, scalars, "the update computation");
}

// torch_index_select: operand dims before `dim`, the index's dims after its `batch_dims`
// leading ones (which match the operand's), then the operand's dims after `dim`.
absl::Status TorchIndexSelect(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(2));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  const std::vector<int64_t>& os = c.operand(0).dims();
  const std::vector<int64_t>& xs = c.operand(1).dims();
  if (!IsInteger(c.operand(1).element_type())) return c.Error("index must hold integers");
  absl::StatusOr<int64_t> dim_attr = c.Int("dim");
  if (!dim_attr.ok()) return dim_attr.status();
  const int64_t rank = static_cast<int64_t>(os.size());
  const int64_t dim = *dim_attr < 0 ? *dim_attr + rank : *dim_attr;
  if (dim < 0 || dim >= rank) {
    return c.Error("dim = ", *dim_attr, " is out of range for rank ", rank);
  }
  const int64_t batch_dims = c.IntOr("batch_dims", 0);
  if (batch_dims < 0 || batch_dims > dim || batch_dims > static_cast<int64_t>(xs.size())) {
    return c.Error("batch_dims = ", batch_dims, " must be in [0, min(dim, index rank)]");
  }
  for (int64_t b = 0; b < batch_dims; ++b) {
    if (xs[b] != os[b]) {
      return c.Error("index batch dimension ", b, " of size ", xs[b], " differs from the ",
                     "operand's ", os[b]);
    }
  }
  std::vector<int64_t> out(os.begin(), os.begin() + dim);
  out.insert(out.end(), xs.begin() + batch_dims, xs.end());
  out.insert(out.end(), os.begin() + dim + 1, os.end());
  return c.ResultIs(0, TensorOf(c.operand(0).element_type(), out));
}

}  // namespace

absl::Status VerifyGatherScatter(const OpChecker& c) {
  switch (c.opcode()) {
    case Opcode::kGather: return Gather(c);
    case Opcode::kScatter: return Scatter(c);
    case Opcode::kTorchIndexSelect: return TorchIndexSelect(c);
    default: return absl::OkStatus();
  }
}

}  // namespace ember::ir::verifier
