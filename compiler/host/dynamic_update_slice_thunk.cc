#include "compiler/host/dynamic_update_slice_thunk.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace ember::host {
namespace {

bool DenseArray(const ir::Value* v) {
  if (!v->type().is_tensor()) return false;
  absl::StatusOr<ir::Shape> plain = ir::Shape::Make(v->type().element_type(), v->type().dims());
  return plain.ok() && *plain == v->type().shape() && ir::StorageBytes(v->type().element_type()) > 0;
}

int64_t ReadIndex(const uint8_t* data, ir::ElementType type) {
  const int bytes = ir::StorageBytes(type);
  uint64_t bits = 0;
  std::memcpy(&bits, data, bytes);  // little-endian host
  if (ir::IsSignedInteger(type) && bytes < 8) {
    const int shift = 64 - 8 * bytes;
    return static_cast<int64_t>(bits << shift) >> shift;
  }
  return static_cast<int64_t>(bits);
}

}  // namespace

std::unique_ptr<DynamicUpdateSliceThunk> DynamicUpdateSliceThunk::Create(
    std::string name, const ir::Instruction& inst, std::vector<ValueRef> operands,
    ValueRef result) {
  if (inst.opcode() != ir::Opcode::kDynamicUpdateSlice || inst.num_results() != 1 ||
      inst.operands().size() < 2 || operands.size() != inst.operands().size()) {
    return nullptr;
  }
  const ir::Value* operand = inst.operand(0);
  const ir::Value* update = inst.operand(1);
  const size_t rank = operand->type().dims().size();
  if (!DenseArray(operand) || !DenseArray(update) || !DenseArray(inst.result()) ||
      update->type().element_type() != operand->type().element_type() ||
      !(inst.result()->type() == operand->type()) || update->type().dims().size() != rank ||
      inst.operands().size() != 2 + rank) {
    return nullptr;
  }
  for (size_t d = 0; d < rank; ++d) {
    const ir::Value* start = inst.operand(2 + d);
    if (!start->type().is_tensor() || !start->type().dims().empty() ||
        !ir::IsInteger(start->type().element_type()) ||
        update->type().dims()[d] > operand->type().dims()[d]) {
      return nullptr;
    }
  }
  for (const ValueRef& ref : operands) {
    if (ref.kind == ValueRef::Kind::kOther) return nullptr;
  }
  if (result.kind != ValueRef::Kind::kSlice) return nullptr;
  std::unique_ptr<DynamicUpdateSliceThunk> thunk(
      new DynamicUpdateSliceThunk(std::move(name), std::move(operands), result));
  thunk->dims_ = operand->type().dims();
  thunk->update_dims_ = update->type().dims();
  thunk->element_bytes_ = ir::StorageBytes(operand->type().element_type());
  return thunk;
}

absl::Status DynamicUpdateSliceThunk::Run(HostRunContext& context) const {
  const uint8_t* operand = context.Address(operands_[0]);
  const uint8_t* update = context.Address(operands_[1]);
  uint8_t* out = context.Address(result_);
  const int64_t bytes = result_.value->type().shape().ByteSize();
  if (bytes == 0) return absl::OkStatus();
  if (operand == nullptr || out == nullptr) {
    return absl::InternalError(absl::StrCat("host executable: ", name(), " has no buffer"));
  }
  if (out != operand) std::memmove(out, operand, static_cast<size_t>(bytes));
  const size_t rank = dims_.size();
  int64_t update_elements = 1;
  for (int64_t d : update_dims_) update_elements *= d;
  if (update_elements == 0) return absl::OkStatus();
  std::vector<int64_t> start(rank);
  for (size_t d = 0; d < rank; ++d) {
    const ValueRef& ref = operands_[2 + d];
    const int64_t v = ReadIndex(context.Address(ref), ref.value->type().element_type());
    start[d] = std::clamp<int64_t>(v, 0, dims_[d] - update_dims_[d]);
  }
  // Row-major strides of the result; the update's innermost dim is one contiguous run.
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * dims_[d];
  const int64_t run = rank == 0 ? 1 : update_dims_[rank - 1];
  const int64_t runs = update_elements / run;
  std::vector<int64_t> index(rank, 0);  // over the update's dims, innermost fixed at 0
  for (int64_t k = 0; k < runs; ++k) {
    int64_t at = 0;
    for (size_t d = 0; d < rank; ++d) at += (start[d] + index[d]) * stride[d];
    std::memmove(out + at * element_bytes_, update + k * run * element_bytes_,
                 static_cast<size_t>(run * element_bytes_));
    for (size_t d = rank > 0 ? rank - 1 : 0; d-- > 0;) {  // next index over the outer dims
      if (++index[d] < update_dims_[d]) break;
      index[d] = 0;
    }
  }
  return absl::OkStatus();
}

}  // namespace ember::host
