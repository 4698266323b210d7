#include "compiler/host/host_thunks.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/reduce_support.h"
#include "profiler/trace.h"

namespace ember::host {

HostRunContext::HostRunContext(const backend::BufferAllocations& buffers,
                               std::shared_ptr<const backend::CollectiveParams> collectives,
                               int num_other_values, int32_t device_ordinal, int64_t run_id,
                               std::shared_ptr<const ffi::ExecutionContext> ffi_context)
    : buffers_(buffers),
      collectives_(std::move(collectives)),
      device_ordinal_(device_ordinal),
      run_id_(run_id != 0 ? run_id : ffi::FfiCalls::NewRunId()),
      ffi_context_(std::move(ffi_context)),
      other_(num_other_values),
      ffi_calls_(device_ordinal_, run_id_, ffi_context_) {}

uint8_t* HostRunContext::Address(const ValueRef& ref) const {
  switch (ref.kind) {
    case ValueRef::Kind::kSlice:
      return static_cast<uint8_t*>(buffers_.Slice(ref.slice).opaque);
    case ValueRef::Kind::kConstant:
      return const_cast<uint8_t*>(ref.constant);
    case ValueRef::Kind::kOther:
    case ValueRef::Kind::kTile:
      return nullptr;
  }
  return nullptr;
}

absl::StatusOr<eval::EvalValue> HostRunContext::Read(const ValueRef& ref) const {
  if (ref.kind == ValueRef::Kind::kOther) return other_[ref.other].TryClone();
  const ir::Shape& shape = ref.value->type().shape();
  const uint8_t* data = Address(ref);
  if (data == nullptr && shape.ByteSize() > 0) {
    return absl::InternalError("host executable: a value has no buffer");
  }
  EMBER_ASSIGN_OR_RETURN(
      ir::Literal literal,
      ir::Literal::FromBytes(shape, absl::Span<const uint8_t>(data, shape.ByteSize())));
  return eval::EvalValue::Array(std::move(literal));
}

eval::Evaluator& HostRunContext::evaluator() {
  if (parent_ != nullptr) return parent_->evaluator();
  if (!evaluator_.has_value()) {
    eval::EvalOptions options;
    if (collectives_ != nullptr && collectives_->scope != nullptr) {
      hooks_ = std::make_unique<CommunicatorHooks>(collectives_);
      options = hooks_->Options();
    } else if (collectives_ != nullptr) {
      options.replica_id = collectives_->replica_id;
      options.partition_id = collectives_->partition_id;
      options.num_replicas = collectives_->num_replicas;
      options.num_partitions = collectives_->num_partitions;
    }
    options.external_calls = &ffi_calls_;
    evaluator_.emplace(options);
  }
  return *evaluator_;
}

namespace {

// Runs `thunk`; an exception becomes its error, named after the thunk.
absl::Status RunCatchingExceptions(const HostThunk& thunk, HostRunContext& context) {
  // Nothing may escape the stream's worker thread: library code (std containers the evaluator's
  // ops size from the data) reports running out of memory by throwing.
  try {
    return thunk.Run(context);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(thunk.name(), ": out of host memory (an allocation failed while it ran)"));
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat(thunk.name(), ": unexpected C++ exception: ", e.what()));
  } catch (...) {
    return absl::InternalError(absl::StrCat(thunk.name(), ": unexpected C++ exception"));
  }
}

}  // namespace

absl::Status HostThunk::ExecuteOnStream(const backend::ExecuteParams& params) const {
  if (params.stream == nullptr || params.buffers == nullptr || params.status == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("host thunk ", name(), ": a stream, buffers and a launch status are needed"));
  }
  return params.stream->EnqueueHostCallback([this, params]() -> absl::Status {
    if (!params.status->ok()) return absl::OkStatus();  // an earlier part of the launch failed
    HostRunContext context(*params.buffers, params.collectives, num_other_values(),
                           params.device_ordinal, params.run_id, params.ffi_context);
    // The launch on the trace (jax.profiler.trace), on its device's plane; the thunks it runs
    // record their kernels on the same plane.
    profiler::ScopedPlane plane(absl::StrCat("/custom:Ember device ", params.device_ordinal));
    profiler::ScopedEvent launch("Launches", [&] { return name(); });
    // The values the evaluator creates count against the device's memory.
    ScopedMemoryAccount account(params.host_memory);
    params.status->Fail(RunCatchingExceptions(*this, context));
    // A failed launch fails its outputs, not the device's stream.
    return absl::OkStatus();
  });
}

absl::Status HostThunkSequence::Run(HostRunContext& context) const {
  for (const auto& thunk : thunks_) {
    profiler::ScopedEvent trace("Kernels", [&] { return thunk->name(); });
    EMBER_RETURN_IF_ERROR(RunCatchingExceptions(*thunk, context));
  }
  return absl::OkStatus();
}

namespace {

// Parts per pool thread of the generated kernels' launches (ThreadPool::ParallelFor): a call
// costs nothing to start, so small parts taken as threads come free balance the load.
constexpr int kPartsPerThread = 4;

void Pointers(HostRunContext& context, const std::vector<ValueRef>& refs,
              std::vector<const void*>& out) {
  out.clear();
  for (const ValueRef& r : refs) out.push_back(context.Address(r));
}

void Pointers(HostRunContext& context, const std::vector<ValueRef>& refs, std::vector<void*>& out) {
  out.clear();
  for (const ValueRef& r : refs) out.push_back(context.Address(r));
}

// The error of a launch whose kernel has no code (its background compile failed).
absl::Status NoCode(const std::string& thunk, const codegen::HostLoopKernel& kernel) {
  const absl::Status why = kernel.Unavailable();
  return absl::Status(why.code(), absl::StrCat(thunk, ": ", why.message()));
}

}  // namespace

absl::Status CompiledKernelThunk::Run(HostRunContext& context) const {
  std::vector<const void*> in;
  std::vector<void*> out;
  Pointers(context, inputs_, in);
  Pointers(context, outputs_, out);
  // Parts of at least 64 Ki elements (a part's work outweighs waking a worker); a loop
  // kernel's parts start at multiples of 4096 elements (whole vectors).
  const int64_t block = unit_elements_ <= 1 ? 4096 : 1;
  const int64_t blocks_per_part =
      std::max<int64_t>(1, 65536 / (block * std::max<int64_t>(1, unit_elements_)));
  const int64_t blocks = (units_ + block - 1) / block;
  // One tier for the whole launch.
  const codegen::HostLoopFn fn = kernel_.code(units_ * std::max<int64_t>(1, unit_elements_));
  if (fn == nullptr) return NoCode(name(), kernel_);
  if (blocks <= blocks_per_part) {
    fn(in.data(), out.data(), 0, units_);
    return absl::OkStatus();
  }
  context.pool().ParallelFor(
      blocks, blocks_per_part,
      [&](int64_t begin, int64_t end) {
        fn(in.data(), out.data(), begin * block, std::min(units_, end * block));
      },
      kPartsPerThread);
  return absl::OkStatus();
}

absl::Status SplitReductionThunk::Run(HostRunContext& context) const {
  std::vector<const void*> in;
  std::vector<void*> out;
  Pointers(context, inputs_, in);
  Pointers(context, outputs_, out);
  // The partial slots: a few per row (at most rows * kSplitMaxParts), on the run's heap.
  const int64_t units = rows_ * parts_;
  std::vector<std::unique_ptr<uint8_t[]>> partials;
  for (int k = 0; k < reduces_; ++k) {
    partials.push_back(std::make_unique<uint8_t[]>(units * codegen::kSplitSlotBytes));
    out.push_back(partials.back().get());
  }
  const int64_t per_part = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, part_elements_));
  // One tier for the whole launch.
  const codegen::HostLoopFn fn = kernel_.code(units * std::max<int64_t>(1, part_elements_));
  if (fn == nullptr) return NoCode(name(), kernel_);
  context.pool().ParallelFor(
      units, per_part,
      [&](int64_t begin, int64_t end) { fn(in.data(), out.data(), begin, end); },
      kPartsPerThread);
  fn(in.data(), out.data(), units, units + rows_);
  return absl::OkStatus();
}

absl::Status RowGroupThunk::Run(HostRunContext& context) const {
  std::vector<std::vector<const void*>> in(members_.size());
  std::vector<std::vector<void*>> out(members_.size());
  for (size_t m = 0; m < members_.size(); ++m) {
    Pointers(context, members_[m].inputs, in[m]);
    Pointers(context, members_[m].outputs, out[m]);
  }
  // Values the group makes and uses up: a scratch of `tile` rows each, per worker. Kernels index
  // every buffer by row, so a tile's scratch is passed as if the value began `b` rows before it.
  std::vector<const ir::Value*> scratch_values;
  std::vector<int64_t> scratch_offset;  // in a worker's scratch
  int64_t scratch_bytes = 0;
  auto slot_of = [&](const ValueRef& r) -> int {
    if (r.kind != ValueRef::Kind::kTile) return -1;
    for (size_t k = 0; k < scratch_values.size(); ++k) {
      if (scratch_values[k] == r.value) return static_cast<int>(k);
    }
    scratch_values.push_back(r.value);
    scratch_offset.push_back(scratch_bytes);
    scratch_bytes += (tile_rows_ * r.row_bytes + 63) / 64 * 64;
    return static_cast<int>(scratch_values.size()) - 1;
  };
  std::vector<std::vector<std::pair<int, int64_t>>> in_tiles(members_.size()),
      out_tiles(members_.size());  // per member and operand: scratch slot (-1: none), row bytes
  for (size_t m = 0; m < members_.size(); ++m) {
    for (const ValueRef& r : members_[m].inputs) in_tiles[m].emplace_back(slot_of(r), r.row_bytes);
    for (const ValueRef& r : members_[m].outputs) {
      out_tiles[m].emplace_back(slot_of(r), r.row_bytes);
    }
  }
  const int64_t tile = tile_rows_;
  std::vector<codegen::HostLoopFn> fns;  // one tier per member for the whole launch
  for (const Member& member : members_) {
    fns.push_back(member.compiled.code(member.elements));
    if (fns.back() == nullptr) return NoCode(name(), member.compiled);
  }
  context.pool().ParallelFor(rows_, tile, [&](int64_t begin, int64_t end) {
    std::vector<std::vector<const void*>> my_in = in;
    std::vector<std::vector<void*>> my_out = out;
    std::unique_ptr<uint8_t[]> scratch(scratch_bytes > 0 ? new uint8_t[scratch_bytes + 64] : nullptr);
    const uintptr_t base = (reinterpret_cast<uintptr_t>(scratch.get()) + 63) / 64 * 64;
    for (int64_t b = begin; b < end; b += tile) {
      const int64_t e = std::min(end, b + tile);
      // Row b of a scratch value is the scratch's first row (the address arithmetic goes through
      // integers: the pointer is only dereferenced at rows b..e).
      auto at = [&](const std::pair<int, int64_t>& t) {
        return reinterpret_cast<void*>(base + scratch_offset[t.first] - b * t.second);
      };
      for (size_t m = 0; m < members_.size(); ++m) {
        for (size_t i = 0; i < in_tiles[m].size(); ++i) {
          if (in_tiles[m][i].first >= 0) my_in[m][i] = at(in_tiles[m][i]);
        }
        for (size_t i = 0; i < out_tiles[m].size(); ++i) {
          if (out_tiles[m][i].first >= 0) my_out[m][i] = at(out_tiles[m][i]);
        }
      }
      for (size_t m = 0; m < members_.size(); ++m) {
        const Member& member = members_[m];
        fns[m](my_in[m].data(), my_out[m].data(), b * member.units_per_row,
               e * member.units_per_row);
      }
    }
  }, kPartsPerThread);
  return absl::OkStatus();
}

absl::Status DotThunk::Run(HostRunContext& context) const {
  kernel_->Run(context.Address(lhs_), context.Address(rhs_), context.Address(out_), context.pool());
  return absl::OkStatus();
}

absl::Status ConvThunk::Run(HostRunContext& context) const {
  kernel_->Run(context.Address(lhs_), context.Address(rhs_), context.Address(out_), context.pool());
  return absl::OkStatus();
}

absl::Status EvaluatorOpsThunk::Run(HostRunContext& context) const {
  eval::Evaluator& evaluator = context.evaluator();
  const eval::OpTable& table = eval::OpTable::Get();
  std::unordered_map<const ir::Value*, eval::EvalValue> local;
  for (const ir::Instruction* inst : instructions_) {
    std::vector<eval::EvalValue> operands;
    operands.reserve(inst->operands().size());
    for (const ir::Value* v : inst->operands()) {
      if (auto l = local.find(v); l != local.end()) {
        absl::StatusOr<eval::EvalValue> copy = l->second.TryClone();
        if (!copy.ok()) return eval::NameTheOp(*inst, copy.status());
        operands.push_back(*std::move(copy));
        continue;
      }
      auto in = inputs_.find(v);
      if (in == inputs_.end()) {
        return absl::InternalError(
            absl::StrCat("host executable: no buffer for an operand of ", inst->Describe()));
      }
      absl::StatusOr<eval::EvalValue> value = context.Read(in->second);
      if (!value.ok()) return eval::NameTheOp(*inst, value.status());
      operands.push_back(*std::move(value));
    }
    eval::OpEvaluator fn = table.Find(inst->opcode());
    if (fn == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat(inst->Describe(), ": the host backend does not implement this op"));
    }
    absl::StatusOr<std::vector<eval::EvalValue>> out = fn(*inst, operands, evaluator);
    if (!out.ok()) return eval::NameTheOp(*inst, out.status());
    if (out->size() != inst->num_results()) {
      return absl::InternalError(absl::StrCat(inst->Describe(), " produced ", out->size(),
                                              " values, expected ", inst->num_results()));
    }
    for (size_t i = 0; i < out->size(); ++i) local[inst->result(i)] = std::move((*out)[i]);
  }
  for (const ValueRef& result : results_) {
    const ir::Value* v = result.value;
    eval::EvalValue& value = local[v];
    if (result.kind == ValueRef::Kind::kOther) {
      context.other(result.other) = std::move(value);
      continue;
    }
    if (value.kind != eval::EvalValue::Kind::kArray ||
        !value.array.shape().EqualsIgnoringLayout(v->type().shape())) {
      return absl::InternalError(absl::StrCat(name(), " produced a value of another type than ",
                                              v->type().ToString()));
    }
    if (!(value.array.shape() == v->type().shape())) {
      EMBER_ASSIGN_OR_RETURN(value.array, value.array.Relayout(v->type().shape().layout()));
    }
    if (!value.array.bytes().empty()) {
      std::memcpy(context.Address(result), value.array.bytes().data(), value.array.bytes().size());
    }
  }
  return absl::OkStatus();
}

absl::Status CopyThunk::Run(HostRunContext& context) const {
  if (bytes_ == 0) return absl::OkStatus();
  uint8_t* from = context.Address(from_);
  uint8_t* to = context.Address(to_);
  if (from == nullptr || to == nullptr) {
    return absl::InternalError(absl::StrCat("host executable: ", name(), " has no buffer"));
  }
  // A loop's pass-through value handed its own memory: nothing to copy.
  if (to != from) std::memmove(to, from, static_cast<size_t>(bytes_));
  return absl::OkStatus();
}

absl::Status EvaluatorProgramThunk::Run(HostRunContext& context) const {
  std::vector<eval::EvalValue> args;
  args.reserve(parameters_.size());
  for (const ValueRef& p : parameters_) {
    if (p.value->type().is_token()) {  // orders the launch; carries no data
      args.push_back(eval::EvalValue::Token());
      continue;
    }
    EMBER_ASSIGN_OR_RETURN(eval::EvalValue value, context.Read(p));
    args.push_back(std::move(value));
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<eval::EvalValue> values,
                         context.evaluator().Run(entry_, std::move(args)));
  if (values.size() != results_.size()) {
    return absl::InternalError(absl::StrCat("the program returned ", values.size(),
                                            " values, expected ", results_.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].kind == eval::EvalValue::Kind::kToken && results_[i].slice.size == 0) continue;
    if (values[i].kind != eval::EvalValue::Kind::kArray) {
      return absl::InternalError(absl::StrCat("result ", i, " is not an array"));
    }
    const auto bytes = values[i].array.bytes();
    const int64_t want = results_[i].slice.size;
    if (static_cast<int64_t>(bytes.size()) != want) {
      return absl::InternalError(
          absl::StrCat("result ", i, " has ", bytes.size(), " bytes, expected ", want));
    }
    if (!bytes.empty()) std::memcpy(context.Address(results_[i]), bytes.data(), bytes.size());
  }
  return absl::OkStatus();
}

}  // namespace ember::host
