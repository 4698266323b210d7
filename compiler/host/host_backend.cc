#include "compiler/host/host_backend.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/codegen/loop_support.h"
#include "compiler/codegen/reduce_support.h"
#include "compiler/codegen/scan_support.h"
#include "compiler/codegen/sort_support.h"
#include "compiler/host/decomposition_thunk.h"
#include "compiler/host/dynamic_update_slice_thunk.h"
#include "compiler/host/host_thunks.h"
#include "compiler/host/collective_thunk.h"
#include "compiler/host/conditional_thunk.h"
#include "compiler/host/ffi_call_thunk.h"
#include "compiler/host/fft_thunk.h"
#include "compiler/host/launch_id_thunk.h"
#include "compiler/host/linalg_thunk.h"
#include "compiler/host/op_attributes.h"
#include "compiler/host/cumulative_scan_thunk.h"
#include "compiler/host/sort_thunk.h"
#include "compiler/host/top_k_thunk.h"
#include "compiler/host/while_thunk.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/cost_analysis.h"
#include "compiler/passes/fusion_plan.h"
#include "compiler/passes/row_groups.h"
#include "compiler/passes/schedule.h"
#include "ffi/registry.h"

namespace ember::host {
namespace {

using backend::BufferLayout;
using backend::BufferSlice;
using backend::Executable;
using backend::ExecutableReports;
using passes::BufferSlot;

constexpr char kPlatform[] = "host";
// Row groups (passes::RowGroup): at least this many rows, run in tiles of about this many bytes
// (a tile's values stay in the core's cache between the group's kernels).
constexpr int64_t kMinGroupRows = 16;
constexpr int64_t kGroupTileBytes = 128 * 1024;
// Kernels over fewer elements, run once a launch (outside loops), are compiled quickly
// (codegen::KernelTier::kQuick): their run time is negligible either way, and the optimizing
// pipeline would cost milliseconds each.
constexpr int64_t kQuickElements = 1024;
// A launch this small (a few kernels over at most kInlineBytes per value, no loops, calls,
// collectives or host transfers) costs less to run than to hand to the stream's thread.
constexpr int64_t kInlineBytes = 64 * 1024;
constexpr size_t kInlineInstructions = 64;

BufferLayout SignatureLayout(const ir::Computation& entry) {
  BufferLayout layout;
  for (const auto& p : entry.parameters()) layout.parameter_types.push_back(p->type());
  layout.result_types = entry.result_types();
  if (const ir::Instruction* ret = entry.return_instruction(); ret != nullptr) {
    for (const ir::Value* v : ret->operands()) {
      layout.result_sources.push_back(
          v->producer() != nullptr ? v->producer()->Describe()
                                   : absl::StrCat("parameter ", v->index(), " of @", entry.name()));
    }
  }
  return layout;
}

// "f32[6400,6400] of stablehlo.dot_general at model.py:4:7 (163840000 bytes)": the largest
// value of the arena, named in out-of-memory errors.
std::string LargestTemporary(const passes::BufferAssignment& buffers) {
  const ir::Value* largest = nullptr;
  int64_t size = 0;
  for (const auto& [value, slot] : buffers.slots) {
    if (slot.kind == BufferSlot::Kind::kArena && slot.size > size) {
      largest = value;
      size = slot.size;
    }
  }
  if (largest == nullptr) return "";
  return absl::StrCat(largest->type().ToString(), " of ",
                      largest->producer() != nullptr ? largest->producer()->Describe() : "a parameter",
                      " (", size, " bytes)");
}

// Does some region of the entry read a value of the entry itself? The op table runs regions
// without the entry's frame, so such programs run wholly through the evaluator.
bool RegionsCaptureEntryValues(const ir::Computation& entry) {
  std::vector<const ir::Computation*> stack;
  for (const auto& inst : entry.instructions()) {
    for (const ir::Computation* r : inst->regions()) stack.push_back(r);
    if (inst->callee() != nullptr && inst->opcode() != ir::Opcode::kCall &&
        inst->opcode() != ir::Opcode::kComposite) {
      stack.push_back(inst->callee());
    }
  }
  std::vector<const ir::Computation*> seen;
  while (!stack.empty()) {
    const ir::Computation* c = stack.back();
    stack.pop_back();
    if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
    seen.push_back(c);
    for (const auto& inst : c->instructions()) {
      for (const ir::Value* v : inst->operands()) {
        if (v->owner() == &entry) return true;
      }
      for (const ir::Computation* r : inst->regions()) stack.push_back(r);
    }
  }
  return false;
}

const ir::Literal* ConstantLiteral(const ir::Instruction& inst) {
  const ir::Attribute* a = inst.attribute("value");
  if (a == nullptr || a->kind != ir::Attribute::Kind::kLiteral || a->literal == nullptr) return nullptr;
  return a->literal.get();
}

// The evaluator copies every argument in before it writes a result: any donated parameter of
// the result's size may share the result's memory.
std::vector<int> EvaluatorAliases(const ir::Computation& entry,
                                  absl::Span<const passes::IoAlias> donations) {
  const ir::Instruction* ret = entry.return_instruction();
  const size_t results = ret != nullptr ? ret->operands().size() : 0;
  std::vector<int> aliases(results, -1);
  std::vector<bool> taken(entry.parameters().size(), false);
  for (const passes::IoAlias& a : donations) {
    if (a.result < 0 || static_cast<size_t>(a.result) >= results || a.parameter < 0 ||
        static_cast<size_t>(a.parameter) >= taken.size() || aliases[a.result] >= 0 ||
        taken[a.parameter]) {
      continue;
    }
    const ir::ValueType& p = entry.parameter(a.parameter)->type();
    const ir::ValueType& r = ret->operand(a.result)->type();
    if (!p.is_tensor() || !r.is_tensor() || p.shape().ByteSize() != r.shape().ByteSize()) continue;
    aliases[a.result] = a.parameter;
    taken[a.parameter] = true;
  }
  return aliases;
}

bool IsCheapLaunch(const ir::Computation& entry) {
  if (entry.instructions().size() > kInlineInstructions) return false;
  auto small = [](const ir::Value* v) {
    return !v->type().is_tensor() || v->type().shape().ByteSize() <= kInlineBytes;
  };
  for (const auto& p : entry.parameters()) {
    if (!small(p.get())) return false;
  }
  for (const auto& inst : entry.instructions()) {
    switch (inst->opcode()) {
      // Bounded work over their operands: their regions are per-element bodies.
      case ir::Opcode::kReduce:
      case ir::Opcode::kSort:
      case ir::Opcode::kMap:
      case ir::Opcode::kReduceWindow:
      case ir::Opcode::kScatter:
      case ir::Opcode::kSelectAndScatter:
        break;
      // Host transfers, callbacks and cross-device work may block or take long.
      case ir::Opcode::kCustomCall:
      case ir::Opcode::kInfeed:
      case ir::Opcode::kOutfeed:
      case ir::Opcode::kSend:
      case ir::Opcode::kRecv:
      case ir::Opcode::kAllGather:
      case ir::Opcode::kAllToAll:
      case ir::Opcode::kCollectiveBroadcast:
      case ir::Opcode::kCollectivePermute:
      case ir::Opcode::kCollectiveReduce:
        return false;
      default:
        // Loops, conditionals, calls, and collectives with reduction bodies.
        if (!inst->regions().empty()) return false;
    }
    for (size_t r = 0; r < inst->num_results(); ++r) {
      if (!small(inst->result(r))) return false;
    }
  }
  return true;
}

// The order of `comparator` when it is one compare of the first operand's two elements, LT or
// GT, over integers or in total order over floats: a strict weak order, so a partial selection
// gives the stable sort's first positions, on native keys.
std::optional<SortKeyOrder> SimpleSortOrder(const ir::Computation& comparator) {
  if (comparator.parameters().size() < 2 || comparator.instructions().size() != 2) {
    return std::nullopt;
  }
  const ir::Instruction& compare = *comparator.instructions()[0];
  const ir::Instruction& ret = *comparator.instructions()[1];
  if (compare.opcode() != ir::Opcode::kCompare || ret.opcode() != ir::Opcode::kReturn ||
      ret.operands().size() != 1 || ret.operand(0) != compare.result() ||
      compare.operands().size() != 2) {
    return std::nullopt;
  }
  const ir::Value* a = comparator.parameter(0);
  const ir::Value* b = comparator.parameter(1);
  const bool swapped = compare.operand(0) == b && compare.operand(1) == a;
  if (!swapped && !(compare.operand(0) == a && compare.operand(1) == b)) return std::nullopt;
  const ir::Attribute* direction = compare.attribute("comparison_direction");
  if (direction == nullptr || direction->kind != ir::Attribute::Kind::kString ||
      (direction->s != "LT" && direction->s != "GT")) {
    return std::nullopt;
  }
  const ir::ElementType type = a->type().element_type();
  const ir::Attribute* order = compare.attribute("compare_type");
  const bool total_order = ir::IsFloat(type) && !ir::IsComplex(type) && order != nullptr &&
                           order->kind == ir::Attribute::Kind::kString &&
                           order->s == "TOTALORDER";
  const bool integer_order =
      ir::IsInteger(type) &&
      (order == nullptr ||
       (order->kind == ir::Attribute::Kind::kString &&
        order->s == (ir::IsSignedInteger(type) ? "SIGNED" : "UNSIGNED")));
  if (!integer_order && !total_order) return std::nullopt;
  // less(x, y) = x > y (GT), or y > x with the operands swapped.
  return SortKeyOrder{type, (direction->s == "GT") != swapped};
}

// How many leading positions of each line along `dimension` the rest of `entry` reads of the
// results of `sort`: the largest k when every use is a slice of the first k (lax.top_k's
// lowering), else the whole dimension.
int64_t SortPrefixRead(const ir::Instruction& sort, const ir::Computation& entry,
                       int64_t dimension) {
  const int64_t length = sort.operand(0)->type().dims()[dimension];
  int64_t prefix = 0;
  for (const auto& inst : entry.instructions()) {
    bool uses = false;
    for (const ir::Value* v : inst->operands()) {
      for (size_t r = 0; r < sort.num_results(); ++r) uses = uses || v == sort.result(r);
    }
    if (!uses) continue;
    if (inst->opcode() != ir::Opcode::kSlice) return length;
    const ir::Attribute* start = inst->attribute("start_indices");
    const ir::Attribute* limit = inst->attribute("limit_indices");
    const ir::Attribute* strides = inst->attribute("strides");
    const size_t d = static_cast<size_t>(dimension);
    if (start == nullptr || limit == nullptr || start->kind != ir::Attribute::Kind::kInts ||
        limit->kind != ir::Attribute::Kind::kInts || start->ints.size() <= d ||
        limit->ints.size() <= d || start->ints[d] != 0 ||
        (strides != nullptr && (strides->kind != ir::Attribute::Kind::kInts ||
                                strides->ints.size() <= d || strides->ints[d] != 1))) {
      return length;
    }
    prefix = std::max(prefix, limit->ints[d]);
  }
  return std::min(prefix, length);
}

// A launch's name on traces: the program's (jit_step), as XLA names its launches.
std::string LaunchName(const ir::Computation& entry) {
  if (entry.module() != nullptr && !entry.module()->name().empty()) return entry.module()->name();
  return entry.name();
}

// The whole entry through the reference evaluator, on copies of the arguments.
std::unique_ptr<Executable> EvaluatorExecutable(const ir::Computation& entry,
                                                absl::Span<const passes::IoAlias> donations,
                                                std::string backend_name, const std::string& why) {
  BufferLayout layout = SignatureLayout(entry);
  layout.result_aliases = EvaluatorAliases(entry, donations);
  std::vector<ValueRef> params, results;
  for (size_t i = 0; i < layout.parameter_types.size(); ++i) {
    ValueRef ref;
    ref.kind = ValueRef::Kind::kSlice;
    ref.value = entry.parameter(i);
    const ir::ValueType& type = layout.parameter_types[i];
    ref.slice = BufferSlice{layout.parameter_allocation(i), 0,
                            type.is_tensor() ? type.shape().ByteSize() : 0};
    params.push_back(ref);
  }
  const ir::Instruction* ret = entry.return_instruction();
  for (size_t r = 0; r < layout.result_types.size(); ++r) {
    ValueRef ref;
    ref.kind = ValueRef::Kind::kSlice;
    ref.value = ret != nullptr ? ret->operand(r) : nullptr;
    const ir::ValueType& type = layout.result_types[r];
    ref.slice = BufferSlice{layout.result_allocation(r), 0,
                            type.is_tensor() ? type.shape().ByteSize() : 0};
    results.push_back(ref);
  }
  std::vector<std::unique_ptr<HostThunk>> thunks;
  thunks.push_back(std::make_unique<EvaluatorProgramThunk>(absl::StrCat("evaluator.", entry.name()),
                                                           entry, std::move(params),
                                                           std::move(results)));
  ExecutableReports reports;
  reports.cost_report = absl::StrCat("the reference evaluator runs the whole entry @", entry.name(),
                                     ": ", why, "\n");
  reports.cost = passes::AnalyzeCost(entry);
  return std::make_unique<Executable>(std::move(backend_name), kPlatform,
                                      std::make_unique<HostThunkSequence>(LaunchName(entry), std::move(thunks), 0),
                                      std::move(layout), std::move(reports),
                                      /*dispatch_inline=*/false);
}

// Why the compiled path cannot take the entry (empty: it can).
std::string CompiledPathRefusal(const ir::Computation& entry) {
  if (entry.return_instruction() == nullptr) return "it has no return";
  if (RegionsCaptureEntryValues(entry)) {
    return "a region reads values of the entry directly (implicit capture)";
  }
  for (const auto& p : entry.parameters()) {
    if (!p->type().is_tensor()) return absl::StrCat("a parameter is a ", p->type().ToString());
  }
  for (const ir::Value* v : entry.return_instruction()->operands()) {
    if (!v->type().is_tensor()) return absl::StrCat("a result is a ", v->type().ToString());
  }
  return "";
}

// Builds the compiled host executable of `entry`, or says why the evaluator must run it.
class HostCompilation {
 public:
  // `options`: the code generator's persistent cache and the dump directory ("" none).
  // `loop_region`: the entry is a loop's condition or body (or in one), whose kernels run once
  // per iteration (every kernel is worth optimizing there).
  HostCompilation(const ir::Computation& entry, absl::Span<const passes::IoAlias> donations,
                  const CompilerOptions& options, bool loop_region = false)
      : entry_(entry),
        donations_(donations),
        layout_(SignatureLayout(entry)),
        options_(options),
        loop_region_(loop_region),
        compiler_(options.kernel_cache_dir, options.dump_to) {}

  // Null with `refusal_` set when the compiled path cannot run the entry.
  absl::StatusOr<std::unique_ptr<Executable>> Build() {
    // Loop and reduction kernels are fused from what the code generator emits. A kernel it does
    // not take (refusing a whole fusion) goes through the evaluator's op table, visibly.
    const bool codegen = codegen::HostCodegenBuilt();
    auto loop_fusible = [codegen](const ir::Instruction& inst) {
      return codegen && codegen::LoopFusibleByCodegen(inst);
    };
    auto reduce_fusible = [codegen](const ir::Instruction& inst) {
      return codegen && codegen::ReduceFusibleByCodegen(inst);
    };
    plan_ = passes::PlanFusion(entry_, loop_fusible, reduce_fusible, fast::DotSupported);
    schedule_ = passes::ScheduleForMemory(entry_, plan_, donations_);
    // The kernels are emitted next (on the scheduled order): row groups take only kernels that
    // run a range of rows on their own, and buffer assignment keeps a group's values live
    // across the whole group.
    const std::vector<bool> by_rows = EmitKernels();
    passes::PlanRowGroups(plan_, by_rows, kMinGroupRows);
    if (absl::Status compiled = compiler_.Compile(); !compiled.ok()) {
      refusal_ = absl::StrCat("the code generator failed: ", compiled.message());
      return nullptr;
    }
    for (int id : llvm_ids_) llvm_kernels_used_ += id >= 0 ? 1 : 0;
    buffers_ = passes::AssignBuffers(entry_, plan_, donations_);
    layout_.temp_bytes = buffers_.arena_bytes;
    layout_.largest_temp = LargestTemporary(buffers_);
    layout_.result_aliases = buffers_.result_aliases;
    // Where every value lives.
    for (const auto& p : entry_.parameters()) EMBER_RETURN_IF_ERROR(Place(p.get()));
    for (const auto& inst : entry_.instructions()) {
      if (inst->opcode() != ir::Opcode::kConstant) continue;
      const ir::Literal* literal = ConstantLiteral(*inst);
      if (literal == nullptr || !(literal->shape() == inst->result()->type().shape())) {
        refusal_ = absl::StrCat(inst->Describe(), " has no literal of its type");
        return nullptr;
      }
      ValueRef ref;
      ref.kind = ValueRef::Kind::kConstant;
      ref.constant = literal->bytes().data();
      ref.value = inst->result();
      refs_[inst->result()] = ref;
    }
    for (const passes::Kernel& kernel : plan_.kernels) {
      for (const ir::Value* v : kernel.inputs) EMBER_RETURN_IF_ERROR(Place(v));
      for (const ir::Value* v : kernel.outputs) EMBER_RETURN_IF_ERROR(Place(v));
    }
    for (const ir::Value* v : entry_.return_instruction()->operands()) {
      if (!refs_.contains(v)) {
        refusal_ = "a result is computed by no kernel";
        return nullptr;
      }
    }
    // Every kernel input must live somewhere (a plan that reads an unmaterialized value would be
    // a planner bug).
    for (const passes::Kernel& kernel : plan_.kernels) {
      for (const ir::Value* v : kernel.inputs) {
        if (refs_.at(v).kind == ValueRef::Kind::kOther && v->type().is_tensor()) {
          refusal_ = absl::StrCat("a kernel reads ", v->type().ToString(), " that no buffer holds");
          return nullptr;
        }
      }
    }
    // The thunks, in kernel order.
    std::vector<std::unique_ptr<HostThunk>> thunks;
    int fast_kernels = 0;
    std::string evaluator_kernels;  // for the cost report: no silent slow path
    size_t next_group = 0;
    for (size_t index = 0; index < plan_.kernels.size(); ++index) {
      const passes::Kernel& kernel = plan_.kernels[index];
      if (next_group < plan_.row_groups.size() &&
          plan_.row_groups[next_group].first == static_cast<int>(index)) {
        const passes::RowGroup& group = plan_.row_groups[next_group++];
        std::vector<RowGroupThunk::Member> members;
        for (int g = group.first; g <= group.last; ++g) {
          RowGroupThunk::Member m;
          m.compiled = compiler_.Get(llvm_ids_[g]);  // (every member is compiled: EmitKernels)
          m.units_per_row = llvm_units_[g] / group.rows;
          m.elements = llvm_units_[g] * llvm_unit_elements_[g];
          m.inputs = Refs(plan_.kernels[g].inputs);
          m.outputs = Refs(plan_.kernels[g].outputs);
          members.push_back(std::move(m));
          ++fast_kernels;
        }
        const int64_t tile =
            std::max<int64_t>(1, kGroupTileBytes / std::max<int64_t>(1, group.row_bytes));
        thunks.push_back(std::make_unique<RowGroupThunk>(
            absl::StrCat("row_group.", group.first, "-", group.last), std::move(members),
            group.rows, tile));
        index = static_cast<size_t>(group.last);
        continue;
      }
      const std::string name = absl::StrCat(KernelName(kernel), ".", index);
      if (llvm_ids_[index] >= 0 && kernel.root()->opcode() == ir::Opcode::kSort) {
        thunks.push_back(SortWithComparator(*kernel.root(), name, compiler_.Get(llvm_ids_[index])));
        ++fast_kernels;
        continue;
      }
      if (llvm_ids_[index] >= 0 && kernel.kind == passes::KernelKind::kSingle &&
          kernel.root()->opcode() == ir::Opcode::kReduceWindow) {
        // The scan's compiled combiner; a body that changes the init value leaves the window
        // to the evaluator (the cost report says so).
        if (std::unique_ptr<HostThunk> scan =
                CumulativeScan(*kernel.root(), name, compiler_.Get(llvm_ids_[index]));
            scan != nullptr) {
          thunks.push_back(std::move(scan));
          ++fast_kernels;
          continue;
        }
        llvm_ids_[index] = -1;  // the combiner is not used: the evaluator's op table runs it
        --llvm_kernels_used_;
      }
      if (llvm_ids_[index] >= 0 && llvm_parts_[index] > 1) {
        thunks.push_back(std::make_unique<SplitReductionThunk>(
            absl::StrCat("llvm_", name), compiler_.Get(llvm_ids_[index]),
            llvm_units_[index] / llvm_parts_[index], llvm_parts_[index], llvm_unit_elements_[index],
            ReduceCount(kernel), Refs(kernel.inputs), Refs(kernel.outputs)));
        ++fast_kernels;
        continue;
      }
      if (llvm_ids_[index] >= 0) {
        thunks.push_back(std::make_unique<CompiledKernelThunk>(
            absl::StrCat("llvm_", name), compiler_.Get(llvm_ids_[index]), llvm_units_[index],
            llvm_unit_elements_[index], Refs(kernel.inputs), Refs(kernel.outputs)));
        ++fast_kernels;
        continue;
      }
      // (One input: x @ x, both operands the same value.)
      if (kernel.kind == passes::KernelKind::kDot && !kernel.inputs.empty() &&
          kernel.inputs.size() <= 2 && kernel.root()->operand(0) == kernel.inputs[0] &&
          kernel.root()->operand(1) == kernel.inputs.back()) {
        absl::StatusOr<std::unique_ptr<fast::DotKernel>> dot = fast::DotKernel::Create(*kernel.root());
        if (dot.ok()) {
          thunks.push_back(std::make_unique<DotThunk>(name, *std::move(dot), refs_.at(kernel.inputs[0]),
                                                      refs_.at(kernel.inputs.back()),
                                                      refs_.at(kernel.outputs[0])));
          ++fast_kernels;
          continue;
        }
      }
      if (kernel.kind == passes::KernelKind::kSingle && kernel.instructions.size() == 1 &&
          kernel.root()->opcode() == ir::Opcode::kConvolution && kernel.inputs.size() == 2 &&
          kernel.root()->operand(0) == kernel.inputs[0] &&
          kernel.root()->operand(1) == kernel.inputs[1]) {
        // What the fast convolution does not cover runs through the evaluator's op table.
        absl::StatusOr<std::unique_ptr<fast::ConvKernel>> conv =
            fast::ConvKernel::Create(*kernel.root());
        if (conv.ok()) {
          thunks.push_back(std::make_unique<ConvThunk>(
              name, *std::move(conv), refs_.at(kernel.inputs[0]), refs_.at(kernel.inputs[1]),
              refs_.at(kernel.outputs[0])));
          ++fast_kernels;
          continue;
        }
      }
      if (kernel.kind == passes::KernelKind::kSingle && kernel.instructions.size() == 1 &&
          kernel.root()->opcode() == ir::Opcode::kDynamicUpdateSlice &&
          refs_.contains(kernel.root()->result())) {
        std::vector<ValueRef> operands;
        for (const ir::Value* v : kernel.root()->operands()) operands.push_back(refs_.at(v));
        std::unique_ptr<DynamicUpdateSliceThunk> update = DynamicUpdateSliceThunk::Create(
            name, *kernel.root(), std::move(operands), refs_.at(kernel.root()->result()));
        if (update != nullptr) {
          thunks.push_back(std::move(update));
          ++fast_kernels;
          continue;
        }
      }
      if (kernel.kind == passes::KernelKind::kSingle && kernel.instructions.size() == 1 &&
          kernel.root()->opcode() == ir::Opcode::kReduceWindow) {
        if (std::unique_ptr<HostThunk> scan = CumulativeScan(*kernel.root(), name);
            scan != nullptr) {
          thunks.push_back(std::move(scan));
          ++fast_kernels;
          continue;
        }
      }
      if (kernel.kind == passes::KernelKind::kSingle && kernel.instructions.size() == 1 &&
          OutputsAreResults(kernel)) {
        if (std::unique_ptr<HostThunk> linalg = Linalg(*kernel.root(), name); linalg != nullptr) {
          thunks.push_back(std::move(linalg));
          ++fast_kernels;
          continue;
        }
        if (std::unique_ptr<HostThunk> fft = Fft(*kernel.root(), name); fft != nullptr) {
          thunks.push_back(std::move(fft));
          ++fast_kernels;
          continue;
        }
      }
      if (kernel.kind == passes::KernelKind::kSingle && kernel.instructions.size() == 1 &&
          kernel.root()->opcode() == ir::Opcode::kCustomCall) {
        if (std::unique_ptr<HostThunk> top_k = TopK(*kernel.root(), name); top_k != nullptr) {
          thunks.push_back(std::move(top_k));
          ++fast_kernels;
          continue;
        }
        if (std::unique_ptr<HostThunk> call = FfiCall(*kernel.root(), name); call != nullptr) {
          thunks.push_back(std::move(call));
          ++fast_kernels;
          continue;
        }
      }
      if (kernel.kind == passes::KernelKind::kSingle && kernel.instructions.size() == 1 &&
          kernel.root()->opcode() == ir::Opcode::kWhile) {
        EMBER_ASSIGN_OR_RETURN(std::unique_ptr<HostThunk> loop, CompileWhile(*kernel.root(), name));
        if (loop != nullptr) {
          thunks.push_back(std::move(loop));
          ++fast_kernels;
          continue;
        }
      }
      if (kernel.kind == passes::KernelKind::kSingle && kernel.instructions.size() == 1 &&
          (kernel.root()->opcode() == ir::Opcode::kIf ||
           kernel.root()->opcode() == ir::Opcode::kCase)) {
        EMBER_ASSIGN_OR_RETURN(std::unique_ptr<HostThunk> conditional,
                               CompileConditional(*kernel.root(), name));
        if (conditional != nullptr) {
          thunks.push_back(std::move(conditional));
          ++fast_kernels;
          continue;
        }
      }
      std::unordered_map<const ir::Value*, ValueRef> inputs;
      for (const ir::Value* v : kernel.inputs) inputs.emplace(v, refs_.at(v));
      if (kernel.kind == passes::KernelKind::kSingle && kernel.instructions.size() == 1 &&
          OutputsAreResults(kernel)) {
        if (std::unique_ptr<LaunchIdThunk> id =
                kernel.outputs.size() != 1
                    ? nullptr
                    : LaunchIdThunk::Create(
                          absl::StrCat(std::string(ir::OpcodeName(kernel.root()->opcode())), ".",
                                       index),
                          *kernel.root(), refs_.at(kernel.outputs[0]));
            id != nullptr) {
          thunks.push_back(std::move(id));
          ++fast_kernels;
          continue;
        }
        std::string why;
        if (std::unique_ptr<HostThunk> collective = Collective(kernel, index, inputs, &why);
            collective != nullptr) {
          thunks.push_back(std::move(collective));
          ++fast_kernels;
          continue;
        } else if (!why.empty()) {
          absl::StrAppend(&nested_reports_, name, " (", kernel.root()->Describe(),
                          "): the evaluator runs it, with copies of its data: ", why, "\n");
        }
      }
      absl::StrAppend(&evaluator_kernels, "  evaluator ", name, ": ", kernel.root()->Describe(),
                      "\n");
      thunks.push_back(std::make_unique<EvaluatorOpsThunk>(
          absl::StrCat("evaluator.", index, " (", kernel.root()->Describe(), ")"),
          kernel.instructions, std::move(inputs), Refs(kernel.outputs)));
    }
    // Results not written in place (a value returned twice, parameters, constants): copies.
    const auto& returned = entry_.return_instruction()->operands();
    for (size_t r = 0; r < returned.size(); ++r) {
      const ir::Value* v = returned[r];
      auto slot = buffers_.slots.find(v);
      if (slot != buffers_.slots.end() && slot->second.kind == BufferSlot::Kind::kOutput &&
          slot->second.index == static_cast<int>(r)) {
        continue;
      }
      const int64_t bytes = v->type().shape().ByteSize();
      ValueRef to;
      to.kind = ValueRef::Kind::kSlice;
      to.value = v;
      to.slice = BufferSlice{layout_.result_allocation(r), 0, bytes};
      thunks.push_back(
          std::make_unique<CopyThunk>(absl::StrCat("copy.result.", r), refs_.at(v), to, bytes));
    }
    ExecutableReports reports;
    reports.fusion_plan_dot = plan_.ToDot(entry_.name());
    reports.cost_report = plan_.CostReport();
    absl::StrAppend(&reports.cost_report, "fast kernels: ", fast_kernels, " of ",
                    plan_.kernels.size(), " (the rest run through the evaluator's op table)\n",
                    evaluator_kernels);
    absl::StrAppend(&reports.cost_report, "llvm kernels: ", llvm_kernels_used_, " of ",
                    plan_.kernels.size(), " compiled by the LLVM code generator (",
                    compiler_.unique_kernels(), " functions, ",
                    absl::StrFormat("%.1f", compiler_.compile_ms()),
                    " ms: ", compiler_.phase_report(), ")", llvm_note_,
                    quick_kernels_ > 0 ? absl::StrCat("; ", quick_kernels_, " kernels under ",
                                                      kQuickElements, " elements compiled quickly")
                                       : "",
                    compiler_.tiered_kernels() > 0
                        ? absl::StrCat("; ", compiler_.tiered_kernels(),
                                       " functions tiered: their quick code runs until their "
                                       "optimized code, compiled in the background, replaces "
                                       "it (launches over ",
                                       codegen::kTieredWaitElements, " elements wait for it)")
                        : "",
                    compiler_.background_kernels() > 0
                        ? absl::StrCat("; ", compiler_.background_kernels(),
                                       " functions of launches over ",
                                       codegen::kTieredWaitElements,
                                       " elements compiled in the background: their first "
                                       "launch waits for them")
                        : "",
                    compiler_.reused_kernels() > 0
                        ? absl::StrCat("; ", compiler_.reused_kernels(),
                                       " functions another executable had compiled")
                        : "",
                    "\n");
    for (size_t k = 0; k < plan_.kernels.size(); ++k) {
      if (llvm_ids_[k] < 0) continue;
      absl::StrAppend(&reports.cost_report, "  llvm_", KernelName(plan_.kernels[k]), ".", k, "\n");
    }
    absl::StrAppend(&reports.cost_report, llvm_refusals_, nested_reports_);
    reports.buffer_report = absl::StrCat(schedule_.ToString(), "\n", buffers_.ToString(entry_));
    reports.kernel_count = static_cast<int64_t>(plan_.kernels.size());
    reports.cost = passes::AnalyzeCost(entry_, &plan_);
    return std::make_unique<Executable>(
        "host", kPlatform,
        std::make_unique<HostThunkSequence>(LaunchName(entry_), std::move(thunks), num_other_),
        std::move(layout_), std::move(reports), IsCheapLaunch(entry_));
  }

  const std::string& refusal() const { return refusal_; }

 private:
  // Emits every loop and reduction kernel, and the single scatters, sorts and reduces the code
  // generator takes, into the compiler's modules (compiled together by Build). Reductions over
  // few long lines are split (codegen::ReducePartsPerRow). Returns, per kernel, whether it runs
  // a range of its rows on its own (compiled loop kernels and row reductions: row groups).
  std::vector<bool> EmitKernels() {
    const size_t n = plan_.kernels.size();
    llvm_ids_.assign(n, -1);
    llvm_units_.assign(n, 0);
    llvm_unit_elements_.assign(n, 1);
    llvm_parts_.assign(n, 1);
    std::vector<bool> by_rows(n, false);
    if (!codegen::HostCodegenBuilt()) {
      llvm_note_ = "; this build has no LLVM";
      return by_rows;
    }
    // No silent slow path: a kernel the code generator does not take says why (the evaluator's
    // op table runs it).
    auto not_compiled = [this](const passes::Kernel& kernel, size_t k, absl::string_view why) {
      absl::StrAppend(&llvm_refusals_, "  not compiled ", KernelName(kernel), ".", k, ": ", why,
                      "\n");
    };
    for (size_t k = 0; k < n; ++k) {
      const passes::Kernel& kernel = plan_.kernels[k];
      // A windowed op the code generator leaves to the evaluator says why (cumulative windows
      // the host's scan takes run natively instead, see Build).
      bool combiner = false;  // a cumulative window whose body the scan calls compiled
      if (std::string why = codegen::WindowOpRefusal(*kernel.root()); !why.empty()) {
        if (std::string scan = CumulativeScanThunk::Refusal(*kernel.root()); !scan.empty()) {
          std::string compiled = kernel.kind == passes::KernelKind::kSingle
                                     ? CumulativeScanThunk::CombinerRefusal(*kernel.root())
                                     : "fused with other ops";
          if (compiled.empty()) compiled = codegen::ScanCombinerRefusal(kernel);
          combiner = compiled.empty();
          if (!combiner) {
            absl::StrAppend(&nested_reports_, KernelName(kernel), ".", k, " (",
                            kernel.root()->Describe(), "): the evaluator runs it: ", why,
                            "; the host scan: ", scan, "; with a compiled body: ", compiled, "\n");
          }
        }
      }
      bool rows = false;
      if (kernel.kind == passes::KernelKind::kLoop) {
        llvm_units_[k] = kernel.root()->result()->type().shape().element_count();
        rows = true;
      } else if (kernel.kind == passes::KernelKind::kReduce) {
        absl::StatusOr<codegen::ReduceKernelLayout> layout = codegen::LayOutReduceKernel(kernel);
        if (!layout.ok()) {
          // Folded dims apart (a mean over [2, 4]) and the like: the region reduce emitter, in
          // the evaluator's order.
          if (std::string why = codegen::RegionReduceKernelRefusal(kernel); !why.empty()) {
            not_compiled(kernel, k, absl::StrCat(layout.status().message(), "; ", why));
            continue;
          }
          SetRegionReduceUnits(k, codegen::RegionReduceOf(kernel));
        } else if (const int64_t parts = codegen::ReducePartsPerRow(*layout); parts > 1) {
          llvm_parts_[k] = parts;
          llvm_units_[k] = layout->rows * parts;
          llvm_unit_elements_[k] = (layout->row_length + parts - 1) / parts;
        } else {
          llvm_units_[k] = layout->rows;
          llvm_unit_elements_[k] = std::max<int64_t>(1, layout->row_length);
          rows = layout->inner == 1;
        }
      } else if (kernel.kind == passes::KernelKind::kSingle &&
                 kernel.root()->opcode() == ir::Opcode::kScatter) {
        llvm_units_[k] = 1;  // one call, one thread: updates apply in order
      } else if (kernel.kind == passes::KernelKind::kSingle &&
                 kernel.root()->opcode() == ir::Opcode::kSort) {
        // (Run by a SortThunk, see Build.)
        if (std::string why = codegen::SortKernelRefusal(kernel); !why.empty()) {
          not_compiled(kernel, k, why);
          continue;
        }
      } else if (combiner) {
        // (Run by a CumulativeScanThunk, see Build.)
      } else if (kernel.kind == passes::KernelKind::kSingle &&
                 kernel.root()->opcode() == ir::Opcode::kReduce) {
        // A reduce the reduction kernels do not fold (argmax): output elements in parallel.
        if (std::string why = codegen::RegionReduceKernelRefusal(kernel); !why.empty()) {
          not_compiled(kernel, k, why);
          continue;
        }
        SetRegionReduceUnits(k, *kernel.root());
      } else {
        continue;
      }
      // Outside loops: small kernels quick, the others tiered (CompilerOptions::tiered_compile;
      // not sort comparators and scan combiners, whose thunks take their code once). A kernel
      // whose launches all wait for the optimized code (over kTieredWaitElements, as its thunk
      // counts them) gets no quick code.
      codegen::KernelTier tier = codegen::KernelTier::kOptimized;
      if (!loop_region_ && KernelElements(kernel) < kQuickElements) {
        tier = codegen::KernelTier::kQuick;
      } else if (!loop_region_ && options_.tiered_compile && !combiner &&
                 kernel.root()->opcode() != ir::Opcode::kSort) {
        tier = llvm_units_[k] * llvm_unit_elements_[k] >= codegen::kTieredWaitElements
                   ? codegen::KernelTier::kBackground
                   : codegen::KernelTier::kTiered;
      }
      absl::StatusOr<int> id = compiler_.AddKernel(kernel, tier);
      if (id.ok()) {
        llvm_ids_[k] = *id;
        by_rows[k] = rows;
        quick_kernels_ += tier == codegen::KernelTier::kQuick ? 1 : 0;
      } else {
        llvm_parts_[k] = 1;
        not_compiled(kernel, k, id.status().message());
      }
    }
    return by_rows;
  }

  // The reduces of a reduction kernel (each has its partial slots in a split reduction).
  static int ReduceCount(const passes::Kernel& kernel) {
    int n = 0;
    for (const ir::Instruction* inst : kernel.instructions) {
      n += inst->opcode() == ir::Opcode::kReduce ? 1 : 0;
    }
    return n;
  }

  // A while loop whose condition and body the compiled path takes, as a WhileThunk; null (the
  // reason in the cost report) when it does not, and the evaluator's op table runs the loop.
  absl::StatusOr<std::unique_ptr<HostThunk>> CompileWhile(const ir::Instruction& loop,
                                                          const std::string& name) {
    auto refuse = [&](const std::string& why) -> std::unique_ptr<HostThunk> {
      absl::StrAppend(&nested_reports_, name, ": the evaluator runs the loop: ", why, "\n");
      return nullptr;
    };
    if (loop.regions().size() != 2 || loop.operands().size() != loop.num_results()) {
      return refuse("not a loop of carried values");
    }
    std::vector<ValueRef> operands, results;
    for (size_t i = 0; i < loop.num_results(); ++i) {
      const ir::Value* in = loop.operand(i);
      const ir::Value* out = loop.result(i);
      if (!in->type().is_tensor() || !(in->type() == out->type())) {
        return refuse(absl::StrCat("carried value ", i, " is a ", out->type().ToString()));
      }
      const ValueRef& from = refs_.at(in);
      if (from.kind == ValueRef::Kind::kOther) return refuse("an operand has no buffer");
      operands.push_back(from);
      auto to = refs_.find(out);
      ValueRef unread;
      unread.value = out;
      results.push_back(to != refs_.end() ? to->second : unread);
    }
    std::unique_ptr<Executable> parts[2];
    // The body may write each carried value over its previous one (buffer assignment decides
    // where that is safe); a value it returns as it got it needs no writing at all.
    const ir::Computation& body_region = *loop.regions()[1];
    std::vector<passes::IoAlias> in_place;
    std::vector<bool> pass_through(results.size(), false);
    if (body_region.return_instruction() != nullptr &&
        body_region.parameters().size() == results.size() &&
        body_region.return_instruction()->operands().size() == results.size()) {
      for (size_t i = 0; i < results.size(); ++i) {
        in_place.push_back({static_cast<int>(i), static_cast<int>(i)});
        pass_through[i] = body_region.return_instruction()->operand(i) == body_region.parameter(i);
      }
    }
    for (int r = 0; r < 2; ++r) {
      const ir::Computation& region = *loop.regions()[r];
      if (std::string why = CompiledPathRefusal(region); !why.empty()) return refuse(why);
      HostCompilation nested(region,
                             r == 1 ? absl::Span<const passes::IoAlias>(in_place)
                                    : absl::Span<const passes::IoAlias>(),
                             options_, /*loop_region=*/true);
      EMBER_ASSIGN_OR_RETURN(parts[r], nested.Build());
      if (parts[r] == nullptr) return refuse(nested.refusal());
      absl::StrAppend(&nested_reports_, name, r == 0 ? " condition" : " body", ":\n",
                      parts[r]->reports().cost_report);
    }
    const BufferLayout& cond = parts[0]->layout();
    const BufferLayout& body = parts[1]->layout();
    if (cond.result_types.size() != 1 || !cond.result_types[0].is_tensor() ||
        cond.result_types[0].element_type() != ir::ElementType::kPred ||
        !cond.result_types[0].dims().empty() || cond.parameter_types.size() != results.size() ||
        body.parameter_types.size() != results.size() ||
        body.result_types.size() != results.size()) {
      return refuse("its regions' signatures do not match the carried values");
    }
    std::vector<bool> over_previous(results.size(), false);
    for (size_t i = 0; i < results.size(); ++i) {
      over_previous[i] = pass_through[i] || (i < body.result_aliases.size() &&
                                             body.result_aliases[i] == static_cast<int>(i));
    }
    return std::make_unique<WhileThunk>(absl::StrCat("while.", name), std::move(parts[0]),
                                        std::move(parts[1]), std::move(operands),
                                        std::move(results), std::move(over_previous));
  }

  // An if or case whose branches the compiled path takes, as a ConditionalThunk; null (the
  // reason in the cost report) when it does not, and the evaluator's op table runs the op.
  absl::StatusOr<std::unique_ptr<HostThunk>> CompileConditional(const ir::Instruction& op,
                                                                const std::string& name) {
    auto refuse = [&](const std::string& why) -> std::unique_ptr<HostThunk> {
      absl::StrAppend(&nested_reports_, name, ": the evaluator runs the ", std::string(ir::OpcodeName(op.opcode())), ": ", why,
                      "\n");
      return nullptr;
    };
    const bool is_if = op.opcode() == ir::Opcode::kIf;
    if (op.operands().empty() || op.regions().empty() || (is_if && op.regions().size() != 2)) {
      return refuse("malformed branches");
    }
    const ir::ValueType& selector_type = op.operand(0)->type();
    if (!selector_type.is_tensor() || !selector_type.dims().empty() ||
        selector_type.element_type() !=
            (is_if ? ir::ElementType::kPred : ir::ElementType::kS32)) {
      return refuse(absl::StrCat("its selector is a ", selector_type.ToString()));
    }
    const ValueRef& selector = refs_.at(op.operand(0));
    if (selector.kind == ValueRef::Kind::kOther) return refuse("its selector has no buffer");
    std::vector<ValueRef> operands, results;
    for (size_t i = 1; i < op.operands().size(); ++i) {
      const ValueRef& from = refs_.at(op.operand(i));
      if (!op.operand(i)->type().is_tensor() || from.kind == ValueRef::Kind::kOther) {
        return refuse(absl::StrCat("operand ", i, " is a ", op.operand(i)->type().ToString()));
      }
      operands.push_back(from);
    }
    for (size_t r = 0; r < op.num_results(); ++r) {
      const ir::Value* out = op.result(r);
      if (!out->type().is_tensor()) {
        return refuse(absl::StrCat("result ", r, " is a ", out->type().ToString()));
      }
      auto to = refs_.find(out);
      ValueRef unread;
      unread.value = out;
      results.push_back(to != refs_.end() ? to->second : unread);
    }
    std::vector<std::unique_ptr<Executable>> branches;
    for (size_t b = 0; b < op.regions().size(); ++b) {
      const ir::Computation& region = *op.regions()[b];
      if (std::string why = CompiledPathRefusal(region); !why.empty()) {
        return refuse(absl::StrCat("branch ", b, ": ", why));
      }
      HostCompilation nested(region, {}, options_, loop_region_);
      EMBER_ASSIGN_OR_RETURN(std::unique_ptr<Executable> branch, nested.Build());
      if (branch == nullptr) return refuse(absl::StrCat("branch ", b, ": ", nested.refusal()));
      const BufferLayout& layout = branch->layout();
      if (layout.parameter_types.size() != operands.size() ||
          layout.result_types.size() != results.size()) {
        return refuse(absl::StrCat("branch ", b, "'s signature does not match the op"));
      }
      absl::StrAppend(&nested_reports_, name, " branch ", b, ":\n",
                      branch->reports().cost_report);
      branches.push_back(std::move(branch));
    }
    return std::make_unique<ConditionalThunk>(absl::StrCat(std::string(ir::OpcodeName(op.opcode())), ".", name),
                                              selector, std::move(branches),
                                              std::move(operands), std::move(results), is_if);
  }

  // A sort ordered by the merge sort with its compiled comparator; results nothing reads are
  // not gathered.
  std::unique_ptr<HostThunk> SortWithComparator(const ir::Instruction& sort, const std::string& name,
                                                codegen::HostLoopKernel comparator) {
    std::vector<ValueRef> operands, results;
    for (const ir::Value* v : sort.operands()) operands.push_back(refs_.at(v));
    for (size_t r = 0; r < sort.num_results(); ++r) {
      auto to = refs_.find(sort.result(r));
      ValueRef unread;
      unread.kind = ValueRef::Kind::kOther;
      unread.value = sort.result(r);
      results.push_back(to != refs_.end() ? to->second : unread);
    }
    const std::vector<int64_t>& dims = sort.operand(0)->type().dims();
    const int64_t rank = static_cast<int64_t>(dims.size());
    const ir::Attribute* d = sort.attribute("dimension");
    int64_t dimension = d != nullptr && d->kind == ir::Attribute::Kind::kInt ? d->i : -1;
    if (dimension < 0) dimension += rank;
    int64_t prefix = -1;
    const std::optional<SortKeyOrder> order = SimpleSortOrder(*sort.regions()[0]);
    if (order.has_value()) {
      prefix = SortPrefixRead(sort, entry_, dimension);
      if (prefix * 4 <= dims[dimension]) {
        absl::StrAppend(&nested_reports_, name, " (", sort.Describe(),
                        "): a partial sort, the first ", prefix, " of each ", dims[dimension],
                        " selected\n");
      }
    }
    return std::make_unique<SortThunk>(absl::StrCat("llvm_sort.", name, " (", sort.Describe(), ")"),
                                       std::move(comparator),
                                       std::move(operands), std::move(results), dims,
                                       dimension, prefix, order);
  }

  // A cumulative reduce_window scanned natively in the evaluator's order (CumulativeScanThunk);
  // null when that does not take it (the evaluator's op table runs it, and the cost report
  // says why the code generator did not).
  std::unique_ptr<HostThunk> CumulativeScan(const ir::Instruction& op, const std::string& name,
                                            codegen::HostLoopKernel combiner = {}) {
    auto result = refs_.find(op.result());
    if (result == refs_.end() || result->second.kind == ValueRef::Kind::kOther ||
        refs_.at(op.operand(0)).kind == ValueRef::Kind::kOther) {
      return nullptr;
    }
    const bool compiled = combiner.fn != nullptr;
    std::unique_ptr<HostThunk> scan = CumulativeScanThunk::Create(
        absl::StrCat("scan.", name, " (", op.Describe(), ")"), op, refs_.at(op.operand(0)),
        result->second, std::move(combiner));
    if (scan != nullptr) {
      absl::StrAppend(&nested_reports_, name, " (", op.Describe(),
                      "): a cumulative window, scanned natively in XLA's order",
                      compiled ? ", its body compiled" : "", "\n");
    } else if (compiled) {
      absl::StrAppend(&nested_reports_, name, " (", op.Describe(),
                      "): the evaluator runs it: its init value is not idempotent (the evaluator "
                      "folds window by window)\n");
    }
    return scan;
  }

  // Whether a one-op kernel's outputs are its op's results, in order.
  static bool OutputsAreResults(const passes::Kernel& kernel) {
    if (kernel.outputs.size() != kernel.root()->num_results()) return false;
    for (size_t i = 0; i < kernel.outputs.size(); ++i) {
      if (kernel.outputs[i] != kernel.root()->result(i)) return false;
    }
    return true;
  }

  // A collective run on the launch's buffers (CollectiveThunk); null for other ops (`why`
  // empty) and for collectives it does not take (`why` says why).
  std::unique_ptr<HostThunk> Collective(const passes::Kernel& kernel, size_t index,
                                        const std::unordered_map<const ir::Value*, ValueRef>& inputs,
                                        std::string* why) {
    const ir::Instruction& op = *kernel.root();
    if (!CollectiveThunk::Runs(op.opcode())) return nullptr;
    std::vector<ValueRef> operands;
    for (const ir::Value* v : op.operands()) operands.push_back(refs_.at(v));
    // Where the launch has no communicators (one device), the evaluator's op table runs it.
    auto fallback = std::make_unique<EvaluatorOpsThunk>(
        absl::StrCat("evaluator.", index, " (", op.Describe(), ")"), kernel.instructions, inputs,
        Refs(kernel.outputs));
    return CollectiveThunk::Create(absl::StrCat("collective.", index, " (", op.Describe(), ")"),
                                   op, std::move(operands), Refs(kernel.outputs),
                                   std::move(fallback), why);
  }

  // The refs of `op`'s results, in order (kOther for a result nothing reads).
  std::vector<ValueRef> ResultRefs(const ir::Instruction& op) const {
    std::vector<ValueRef> results;
    for (size_t r = 0; r < op.num_results(); ++r) {
      ValueRef to;
      to.kind = ValueRef::Kind::kOther;  // a result nothing reads
      to.value = op.result(r);
      if (auto it = refs_.find(op.result(r)); it != refs_.end()) to = it->second;
      results.push_back(to);
    }
    return results;
  }

  // A linear-algebra op as a library call on the launch's buffers: cholesky, triangular_solve,
  // ember_lu, ember_eigh, ember_svd or the Householder QR pair (LinalgThunk), ember_eig,
  // ember_schur, ember_hessenberg or ember_tridiagonal (DecompositionThunk); null for other ops,
  // and for one they do not take, with the reason in the cost report (the evaluator's op table
  // runs it).
  std::unique_ptr<HostThunk> Linalg(const ir::Instruction& op, const std::string& name) {
    const bool decomposition = DecompositionThunk::IsDecomposition(op);
    if (!decomposition && !LinalgThunk::IsLinalgOp(op)) return nullptr;
    std::string why =
        decomposition ? DecompositionThunk::Refusal(op) : LinalgThunk::Refusal(op);
    std::vector<ValueRef> operands;
    for (const ir::Value* v : op.operands()) {
      operands.push_back(refs_.at(v));
      if (why.empty() && operands.back().kind == ValueRef::Kind::kOther) {
        why = "an operand has no buffer";
      }
    }
    if (!why.empty()) {
      absl::StrAppend(&nested_reports_, name, " (", op.Describe(), "): the evaluator runs it: ",
                      why, "\n");
      return nullptr;
    }
    std::vector<ValueRef> results = ResultRefs(op);
    std::string thunk_name = absl::StrCat("linalg.", name, " (", op.Describe(), ")");
    if (decomposition) {
      return DecompositionThunk::Create(std::move(thunk_name), op, std::move(operands),
                                        std::move(results));
    }
    return LinalgThunk::Create(std::move(thunk_name), op, std::move(operands), std::move(results));
  }

  // An fft as a library call (FftThunk); null for other ops, and for an fft it does not take,
  // with the reason in the cost report (the evaluator's op table runs it).
  std::unique_ptr<HostThunk> Fft(const ir::Instruction& op, const std::string& name) {
    if (op.opcode() != ir::Opcode::kFft) return nullptr;
    std::string why = FftThunk::Refusal(op);  // (one operand, one result when empty)
    auto result = why.empty() ? refs_.find(op.result()) : refs_.end();
    if (why.empty() && (refs_.at(op.operand(0)).kind == ValueRef::Kind::kOther ||
                        result == refs_.end() || result->second.kind == ValueRef::Kind::kOther)) {
      why = "its operand or result has no buffer";
    }
    if (!why.empty()) {
      absl::StrAppend(&nested_reports_, name, " (", op.Describe(), "): the evaluator runs it: ",
                      why, "\n");
      return nullptr;
    }
    return FftThunk::Create(absl::StrCat("fft.", name, " (", op.Describe(), ")"), op,
                            refs_.at(op.operand(0)), result->second);
  }

  // A chlo.top_k selected natively (TopKThunk); null for other custom calls, and for a top_k
  // it does not take, with the reason in the cost report (the evaluator's op table runs it).
  std::unique_ptr<HostThunk> TopK(const ir::Instruction& op, const std::string& name) {
    if (CustomCallTarget(op) != "chlo.top_k") return nullptr;
    std::string why = TopKThunk::Refusal(op);
    if (why.empty() && refs_.at(op.operand(0)).kind == ValueRef::Kind::kOther) {
      why = "its operand has no buffer";
    }
    if (!why.empty()) {
      absl::StrAppend(&nested_reports_, name, " (", op.Describe(), "): the evaluator runs it: ",
                      why, "\n");
      return nullptr;
    }
    ValueRef results[2];
    for (size_t r = 0; r < 2; ++r) {
      auto to = refs_.find(op.result(r));
      results[r].kind = ValueRef::Kind::kOther;  // a result nothing reads
      results[r].value = op.result(r);
      if (to != refs_.end()) results[r] = to->second;
    }
    return TopKThunk::Create(absl::StrCat("top_k.", name, " (", op.Describe(), ")"), op,
                             refs_.at(op.operand(0)), results[0], results[1]);
  }

  // A custom call to a registered FFI handler on the launch's buffers (FfiCallThunk); null for
  // other custom calls, and for one it does not take, with the reason in the cost report (the
  // evaluator's op table runs it).
  std::unique_ptr<HostThunk> FfiCall(const ir::Instruction& op, const std::string& name) {
    if (CustomCallTarget(op).empty()) return nullptr;
    // (Also the reason for custom calls no other thunk took: no handler is registered.)
    std::string why = FfiCallThunk::Refusal(op);
    std::vector<ValueRef> operands;
    for (const ir::Value* v : op.operands()) {
      ValueRef ref;
      ref.value = v;
      if (auto it = refs_.find(v); it != refs_.end()) ref = it->second;
      if (why.empty() && !v->type().is_token() && ref.kind == ValueRef::Kind::kOther) {
        why = "an operand has no buffer";
      }
      operands.push_back(ref);
    }
    if (!why.empty()) {
      absl::StrAppend(&nested_reports_, name, " (", op.Describe(), "): the evaluator runs it: ",
                      why, "\n");
      return nullptr;
    }
    std::vector<ValueRef> results = ResultRefs(op);
    return FfiCallThunk::Create(absl::StrCat("ffi.", name, " (", op.Describe(), ")"), op,
                                std::move(operands), std::move(results));
  }

  // A kernel of the region reduce emitter (folding with `reduce`) runs its output elements in
  // parallel, each folding its row.
  void SetRegionReduceUnits(size_t k, const ir::Instruction& reduce) {
    const int64_t outputs = reduce.result(0)->type().shape().element_count();
    llvm_units_[k] = outputs;
    llvm_unit_elements_[k] = std::max<int64_t>(
        1, reduce.operand(0)->type().shape().element_count() / std::max<int64_t>(1, outputs));
  }

  // The elements a kernel reads or writes at most (its largest value).
  static int64_t KernelElements(const passes::Kernel& kernel) {
    int64_t most = 0;
    for (const ir::Instruction* inst : kernel.instructions) {
      for (size_t r = 0; r < inst->num_results(); ++r) {
        if (inst->result(r)->type().is_tensor()) {
          most = std::max(most, inst->result(r)->type().shape().element_count());
        }
      }
      for (const ir::Value* v : inst->operands()) {
        if (v->type().is_tensor()) most = std::max(most, v->type().shape().element_count());
      }
    }
    return most;
  }

  static const char* KernelName(const passes::Kernel& kernel) {
    switch (kernel.kind) {
      case passes::KernelKind::kLoop: return "loop";
      case passes::KernelKind::kReduce: return "reduce";
      case passes::KernelKind::kDot: return "dot";
      default: return "op";
    }
  }

  absl::Status Place(const ir::Value* v) {
    if (refs_.contains(v)) return absl::OkStatus();
    ValueRef ref;
    ref.value = v;
    auto s = buffers_.slots.find(v);
    const BufferSlot slot = s != buffers_.slots.end() ? s->second : BufferSlot{};
    switch (slot.kind) {
      case BufferSlot::Kind::kParameter:
        ref.kind = ValueRef::Kind::kSlice;
        ref.slice = BufferSlice{layout_.parameter_allocation(slot.index), 0, slot.size};
        break;
      case BufferSlot::Kind::kArena:
        ref.kind = ValueRef::Kind::kSlice;
        ref.slice = BufferSlice{layout_.temp_allocation(), slot.offset, slot.size};
        break;
      case BufferSlot::Kind::kOutput:
        ref.kind = ValueRef::Kind::kSlice;
        ref.slice = BufferSlice{layout_.result_allocation(slot.index), 0, slot.size};
        break;
      case BufferSlot::Kind::kConstant:
      case BufferSlot::Kind::kOther:
        ref.kind = ValueRef::Kind::kOther;
        ref.other = num_other_++;
        break;
      case BufferSlot::Kind::kTile: {
        const passes::RowGroup& group = plan_.row_groups.at(slot.index);
        ref.kind = ValueRef::Kind::kTile;
        ref.row_bytes = slot.size / group.rows;
        break;
      }
    }
    refs_[v] = ref;
    return absl::OkStatus();
  }

  std::vector<ValueRef> Refs(const std::vector<const ir::Value*>& values) const {
    std::vector<ValueRef> out;
    out.reserve(values.size());
    for (const ir::Value* v : values) out.push_back(refs_.at(v));
    return out;
  }

  const ir::Computation& entry_;
  absl::Span<const passes::IoAlias> donations_;
  BufferLayout layout_;
  passes::FusionPlan plan_;
  passes::ScheduleReport schedule_;
  passes::BufferAssignment buffers_;
  std::unordered_map<const ir::Value*, ValueRef> refs_;
  int num_other_ = 0;
  std::string refusal_;
  const CompilerOptions& options_;
  bool loop_region_;
  int quick_kernels_ = 0;
  codegen::HostKernelCompiler compiler_;
  std::vector<int> llvm_ids_;  // per kernel: its id in compiler_, or -1
  std::vector<int64_t> llvm_units_;          // per compiled kernel: elements, or reduction rows
  std::vector<int64_t> llvm_unit_elements_;  // per compiled kernel: input elements per unit
  std::vector<int64_t> llvm_parts_;  // per compiled kernel: parts per row of a split reduction
  int llvm_kernels_used_ = 0;
  std::string llvm_note_;
  std::string llvm_refusals_;   // kernels the code generator did not take, and why (the
                                // evaluator's op table runs them)
  std::string nested_reports_;  // the compiled loops' condition and body reports
};

class HostBackend final : public backend::Backend {
 public:
  std::string_view name() const override { return "host"; }
  std::string_view platform() const override { return kPlatform; }
  bool wants_optimized_module() const override { return true; }

  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      const ir::Computation& entry, absl::Span<const passes::IoAlias> donations,
      const CompilerOptions& options) const override {
    std::string refusal = CompiledPathRefusal(entry);
    if (refusal.empty()) {
      HostCompilation compilation(entry, donations, options);
      EMBER_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, compilation.Build());
      if (executable != nullptr) return executable;
      refusal = compilation.refusal();
    }
    return EvaluatorExecutable(entry, donations, "host", refusal);
  }
};

class EvaluatorBackend final : public backend::Backend {
 public:
  std::string_view name() const override { return "evaluator"; }
  std::string_view platform() const override { return kPlatform; }
  bool wants_optimized_module() const override { return false; }

  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      const ir::Computation& entry, absl::Span<const passes::IoAlias> donations,
      const CompilerOptions&) const override {
    return EvaluatorExecutable(entry, donations, "evaluator", "the evaluator backend was chosen");
  }
};

}  // namespace

std::unique_ptr<backend::Backend> CreateHostBackend() { return std::make_unique<HostBackend>(); }
std::unique_ptr<backend::Backend> CreateEvaluatorBackend() {
  return std::make_unique<EvaluatorBackend>();
}

absl::Status RegisterHostBackends(backend::BackendRegistry& registry) {
  EMBER_RETURN_IF_ERROR(registry.Register(CreateHostBackend()));
  return registry.Register(CreateEvaluatorBackend());
}

}  // namespace ember::host
