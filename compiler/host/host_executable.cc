#include "compiler/host/host_executable.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/host/fast_conv.h"
#include "compiler/host/fast_kernels.h"
#include "compiler/host/thread_pool.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/row_groups.h"
#include "compiler/passes/fusion_plan.h"
#include "compiler/passes/schedule.h"
#include "profiler/trace.h"

namespace ember::host {
namespace {

using passes::BufferSlot;

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

// The evaluator backend copies every argument in before it writes a result: any donated
// parameter of the result's size may share the result's memory.
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

}  // namespace

// Row groups (passes::RowGroup): at least this many rows, run in tiles of about this many bytes
// (a tile's values stay in the core's cache between the group's kernels).
constexpr int64_t kMinGroupRows = 16;
constexpr int64_t kGroupTileBytes = 128 * 1024;

struct HostExecutable::Compiled {
  passes::FusionPlan plan;
  passes::ScheduleReport schedule;
  passes::BufferAssignment buffers;
  struct Value {
    const ir::Value* value = nullptr;
    BufferSlot slot;
    const ir::Literal* constant = nullptr;
  };
  std::vector<Value> values;
  std::unordered_map<const ir::Value*, int> id;
  struct KernelExec {
    const passes::Kernel* kernel = nullptr;
    std::unique_ptr<fast::FusedKernel> fused;
    std::unique_ptr<fast::DotKernel> dot;
    std::unique_ptr<fast::ConvKernel> conv;
    std::vector<int> inputs;   // value ids of kernel->inputs
    std::vector<int> results;  // value ids of the kernel's outputs
  };
  std::vector<KernelExec> kernels;
  std::vector<int> results;  // value ids of the entry's results

  // Arenas of finished runs, reused by later ones.
  mutable std::mutex mu;
  mutable std::vector<std::unique_ptr<std::vector<uint64_t>>> arenas;

  int Id(const ir::Value* v) {
    auto [it, inserted] = id.emplace(v, static_cast<int>(values.size()));
    if (inserted) {
      Value info;
      info.value = v;
      auto s = buffers.slots.find(v);
      if (s != buffers.slots.end()) info.slot = s->second;
      values.push_back(info);
    }
    return it->second;
  }
};

HostExecutable::HostExecutable(const ir::Computation& entry) : entry_(entry) {}
HostExecutable::~HostExecutable() = default;

absl::StatusOr<std::unique_ptr<HostExecutable>> HostExecutable::Compile(
    const ir::Computation& entry, HostBackend backend,
    absl::Span<const passes::IoAlias> donations) {
  std::unique_ptr<HostExecutable> exe(new HostExecutable(entry));
  exe->result_aliases_ = EvaluatorAliases(entry, donations);
  if (backend == HostBackend::kEvaluator) return exe;
  const ir::Instruction* ret = entry.return_instruction();
  if (ret == nullptr || RegionsCaptureEntryValues(entry)) return exe;
  for (const auto& p : entry.parameters()) {
    if (!p->type().is_tensor()) return exe;
  }
  for (const ir::Value* v : ret->operands()) {
    if (!v->type().is_tensor()) return exe;
  }
  auto c = std::make_unique<Compiled>();
  c->plan = passes::PlanFusion(entry, fast::LoopFusible, fast::ReduceFusible, fast::DotSupported);
  c->schedule = passes::ScheduleForMemory(entry, c->plan, donations);
  // The fused kernels next (on the scheduled order): row groups take only kernels that run a
  // range of rows on their own, and buffer assignment keeps a group's values live across the
  // whole group.
  std::vector<std::unique_ptr<fast::FusedKernel>> fused(c->plan.kernels.size());
  std::vector<bool> by_rows(c->plan.kernels.size(), false);
  for (size_t k = 0; k < c->plan.kernels.size(); ++k) {
    const passes::Kernel& kernel = c->plan.kernels[k];
    if (kernel.kind != passes::KernelKind::kLoop && kernel.kind != passes::KernelKind::kReduce) {
      continue;
    }
    absl::StatusOr<std::unique_ptr<fast::FusedKernel>> made = fast::FusedKernel::Create(kernel);
    if (!made.ok()) continue;
    fused[k] = *std::move(made);
    by_rows[k] = fused[k]->RunsByRows();
  }
  passes::PlanRowGroups(c->plan, by_rows, kMinGroupRows);
  c->buffers = passes::AssignBuffers(entry, c->plan, donations);
  for (const auto& p : entry.parameters()) c->Id(p.get());
  for (const auto& inst : entry.instructions()) {
    if (inst->opcode() != ir::Opcode::kConstant) continue;
    const ir::Literal* literal = ConstantLiteral(*inst);
    if (literal == nullptr || !(literal->shape() == inst->result()->type().shape())) {
      return exe;  // let the evaluator report it
    }
    c->values[c->Id(inst->result())].constant = literal;
  }
  for (size_t index = 0; index < c->plan.kernels.size(); ++index) {
    const passes::Kernel& kernel = c->plan.kernels[index];
    Compiled::KernelExec k;
    k.kernel = &kernel;
    for (const ir::Value* v : kernel.inputs) k.inputs.push_back(c->Id(v));
    for (const ir::Value* v : kernel.outputs) k.results.push_back(c->Id(v));
    if (fused[index] != nullptr) {
      k.fused = std::move(fused[index]);
    } else if (kernel.kind == passes::KernelKind::kDot && !kernel.inputs.empty() &&
               kernel.inputs.size() <= 2 && kernel.root()->operand(0) == kernel.inputs[0] &&
               kernel.root()->operand(1) == kernel.inputs.back()) {
      // (One input: x @ x, both operands the same value.)
      absl::StatusOr<std::unique_ptr<fast::DotKernel>> dot = fast::DotKernel::Create(*kernel.root());
      if (dot.ok()) k.dot = *std::move(dot);
    } else if (kernel.kind == passes::KernelKind::kSingle && kernel.instructions.size() == 1 &&
               kernel.root()->opcode() == ir::Opcode::kConvolution && kernel.inputs.size() == 2 &&
               kernel.root()->operand(0) == kernel.inputs[0] &&
               kernel.root()->operand(1) == kernel.inputs[1]) {
      // What the fast convolution does not cover runs through the evaluator's op table.
      absl::StatusOr<std::unique_ptr<fast::ConvKernel>> conv =
          fast::ConvKernel::Create(*kernel.root());
      if (conv.ok()) k.conv = *std::move(conv);
    }
    c->kernels.push_back(std::move(k));
  }
  // Every kernel input must live somewhere (a plan that reads an unmaterialized value would be a
  // planner bug): otherwise run the entry through the evaluator.
  for (const Compiled::KernelExec& k : c->kernels) {
    for (int id : k.inputs) {
      if (c->values[id].slot.kind == BufferSlot::Kind::kOther &&
          c->values[id].value->type().is_tensor()) {
        return exe;
      }
    }
  }
  for (const ir::Value* v : ret->operands()) {
    auto it = c->id.find(v);
    if (it == c->id.end()) return exe;  // not computed by any kernel: should not happen
    c->results.push_back(it->second);
  }
  exe->result_aliases_ = c->buffers.result_aliases;
  exe->compiled_ = std::move(c);
  return exe;
}

HostBackend HostExecutable::backend() const {
  return compiled_ != nullptr ? HostBackend::kCompiled : HostBackend::kEvaluator;
}

std::string HostExecutable::FusionPlanDot() const {
  return compiled_ != nullptr ? compiled_->plan.ToDot(entry_.name()) : std::string();
}
std::string HostExecutable::CostReport() const {
  if (compiled_ == nullptr) return std::string();
  std::string out = compiled_->plan.CostReport();
  int fast = 0;
  for (const auto& k : compiled_->kernels) {
    fast += (k.fused != nullptr || k.dot != nullptr || k.conv != nullptr);
  }
  absl::StrAppend(&out, "fast kernels: ", fast, " of ", compiled_->kernels.size(),
                  " (the rest run through the evaluator's op table)\n");
  return out;
}
std::string HostExecutable::BufferAssignmentReport() const {
  if (compiled_ == nullptr) return std::string();
  return absl::StrCat(compiled_->schedule.ToString(), "\n", compiled_->buffers.ToString(entry_));
}
int64_t HostExecutable::arena_bytes() const {
  return compiled_ != nullptr ? compiled_->buffers.arena_bytes : 0;
}
const passes::FusionPlan* HostExecutable::fusion_plan() const {
  return compiled_ != nullptr ? &compiled_->plan : nullptr;
}
int64_t HostExecutable::kernel_count() const {
  return compiled_ != nullptr ? static_cast<int64_t>(compiled_->plan.kernels.size()) : 0;
}

absl::StatusOr<std::vector<eval::EvalValue>> HostExecutable::RunEvaluator(
    std::vector<eval::EvalValue> arguments, const eval::EvalOptions& options) const {
  profiler::ScopedEvent trace("Kernels", [&] { return absl::StrCat("evaluator: @", entry_.name()); });
  // The evaluator keeps per-run state (frames, plans), so each launch gets its own.
  eval::Evaluator evaluator(options);
  return evaluator.Run(entry_, std::move(arguments));
}

absl::StatusOr<std::vector<eval::EvalValue>> HostExecutable::Run(std::vector<eval::EvalValue> arguments,
                                                           const eval::EvalOptions& options) const {
  if (compiled_ == nullptr) return RunEvaluator(std::move(arguments), options);
  // Arguments the plan does not expect (count, type, layout): the evaluator reports them.
  if (arguments.size() != entry_.parameters().size()) {
    return RunEvaluator(std::move(arguments), options);
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].kind != eval::EvalValue::Kind::kArray ||
        !(arguments[i].array.shape() == entry_.parameter(i)->type().shape())) {
      return RunEvaluator(std::move(arguments), options);
    }
  }
  std::vector<const uint8_t*> params;
  params.reserve(arguments.size());
  for (const eval::EvalValue& a : arguments) params.push_back(a.array.bytes().data());
  const auto& returned = entry_.return_instruction()->operands();
  std::vector<ir::Literal> outputs(returned.size());
  std::vector<uint8_t*> out(returned.size());
  for (size_t i = 0; i < returned.size(); ++i) {
    EMBER_ASSIGN_OR_RETURN(outputs[i], ir::Literal::Create(returned[i]->type().shape()));
    out[i] = outputs[i].mutable_bytes().data();
  }
  EMBER_RETURN_IF_ERROR(RunCompiled(params, out, options));
  std::vector<eval::EvalValue> results;
  results.reserve(outputs.size());
  for (ir::Literal& literal : outputs) results.push_back(eval::EvalValue::Array(std::move(literal)));
  return results;
}

absl::Status HostExecutable::RunInPlace(absl::Span<const void* const> arguments,
                                        absl::Span<void* const> results,
                                        absl::Span<const uint64_t> result_bytes,
                                        const eval::EvalOptions& options) const {
  const auto& parameters = entry_.parameters();
  if (arguments.size() != parameters.size()) {
    return absl::InvalidArgumentError(absl::StrCat(entry_.name(), " takes ", parameters.size(),
                                                   " arguments, got ", arguments.size()));
  }
  if (results.size() != result_bytes.size()) {
    return absl::InternalError("RunInPlace: one byte size per result expected");
  }
  const ir::Instruction* ret = entry_.return_instruction();
  bool in_place = compiled_ != nullptr && ret != nullptr && results.size() == ret->operands().size();
  for (size_t i = 0; in_place && i < results.size(); ++i) {
    in_place = ret->operand(i)->type().is_tensor() &&
               static_cast<uint64_t>(ret->operand(i)->type().shape().ByteSize()) == result_bytes[i];
  }
  if (in_place) {
    std::vector<const uint8_t*> params(arguments.size());
    for (size_t i = 0; i < arguments.size(); ++i) {
      params[i] = static_cast<const uint8_t*>(arguments[i]);
    }
    std::vector<uint8_t*> out(results.size());
    for (size_t i = 0; i < results.size(); ++i) out[i] = static_cast<uint8_t*>(results[i]);
    return RunCompiled(params, out, options);
  }
  // The evaluator (or a result the plan cannot write in place): copy in, run, copy out.
  std::vector<eval::EvalValue> args;
  args.reserve(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (parameters[i]->type().is_token()) {
      args.push_back(eval::EvalValue::Token());
      continue;
    }
    const ir::Shape& shape = parameters[i]->type().shape();
    EMBER_ASSIGN_OR_RETURN(
        ir::Literal literal,
        ir::Literal::FromBytes(shape, absl::Span<const uint8_t>(
                                          static_cast<const uint8_t*>(arguments[i]),
                                          static_cast<size_t>(shape.ByteSize()))));
    args.push_back(eval::EvalValue::Array(std::move(literal)));
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<eval::EvalValue> values, Run(std::move(args), options));
  if (values.size() != results.size()) {
    return absl::InternalError(absl::StrCat("the program returned ", values.size(),
                                            " values, expected ", results.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].kind == eval::EvalValue::Kind::kToken && result_bytes[i] == 0) continue;
    if (values[i].kind != eval::EvalValue::Kind::kArray) {
      return absl::InternalError(absl::StrCat("result ", i, " is not an array"));
    }
    const auto bytes = values[i].array.bytes();
    if (bytes.size() != result_bytes[i]) {
      return absl::InternalError(absl::StrCat("result ", i, " has ", bytes.size(),
                                              " bytes, expected ", result_bytes[i]));
    }
    if (!bytes.empty()) std::memcpy(results[i], bytes.data(), bytes.size());
  }
  return absl::OkStatus();
}

absl::Status HostExecutable::RunCompiled(absl::Span<const uint8_t* const> params,
                                         absl::Span<uint8_t* const> result_ptrs,
                                         const eval::EvalOptions& options) const {
  const Compiled& c = *compiled_;
  // The arena: reuse one from an earlier run when there is one.
  std::unique_ptr<std::vector<uint64_t>> arena;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.arenas.empty()) {
      arena = std::move(c.arenas.back());
      c.arenas.pop_back();
    }
  }
  const size_t arena_words = static_cast<size_t>(c.buffers.arena_bytes / 8 + 8);
  if (arena == nullptr) arena = std::make_unique<std::vector<uint64_t>>();
  if (arena->size() < arena_words) arena->resize(arena_words);
  uint8_t* arena_base = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(arena->data()) + 63) / 64 * 64);
  struct ReturnArena {
    const Compiled& c;
    std::unique_ptr<std::vector<uint64_t>>& arena;
    ~ReturnArena() {
      std::lock_guard<std::mutex> lock(c.mu);
      c.arenas.push_back(std::move(arena));
    }
  } return_arena{c, arena};

  const size_t n = c.values.size();
  std::vector<uint8_t*> ptr(n, nullptr);
  std::vector<eval::EvalValue> other(n);
  for (size_t i = 0; i < n; ++i) {
    const Compiled::Value& v = c.values[i];
    switch (v.slot.kind) {
      case BufferSlot::Kind::kParameter:
        ptr[i] = const_cast<uint8_t*>(params[v.slot.index]);
        break;
      case BufferSlot::Kind::kConstant:
        ptr[i] = const_cast<uint8_t*>(v.constant->bytes().data());
        break;
      case BufferSlot::Kind::kArena:
        ptr[i] = arena_base + v.slot.offset;
        break;
      case BufferSlot::Kind::kOutput:
        ptr[i] = result_ptrs[v.slot.index];
        break;
      case BufferSlot::Kind::kOther:
        break;
    }
  }

  std::optional<eval::Evaluator> evaluator;
  ThreadPool& pool = ThreadPool::Default();
  std::vector<const void*> inputs;
  const eval::OpTable& table = eval::OpTable::Get();
  // Reads a value for the op table: a copy of its buffer, or the non-array value.
  auto operand_value = [&](int id) -> absl::StatusOr<eval::EvalValue> {
    const ir::Value* v = c.values[id].value;
    if (!v->type().is_tensor()) return other[id].TryClone();
    EMBER_ASSIGN_OR_RETURN(
        ir::Literal lit,
        ir::Literal::FromBytes(v->type().shape(),
                               absl::Span<const uint8_t>(ptr[id], v->type().shape().ByteSize())));
    return eval::EvalValue::Array(std::move(lit));
  };
  size_t next_group = 0;
  std::vector<std::vector<const void*>> group_inputs;
  std::vector<std::vector<void*>> group_outputs;
  std::vector<void*> outputs;
  for (size_t index = 0; index < c.kernels.size(); ++index) {
    const Compiled::KernelExec& k = c.kernels[index];
    // One trace event per kernel (a row group is one), named as in the cost report.
    const bool grouped = next_group < c.plan.row_groups.size() &&
                         c.plan.row_groups[next_group].first == static_cast<int>(index);
    profiler::ScopedEvent trace("Kernels", [&] {
      const passes::Kernel& kernel = *k.kernel;
      const char* how = k.fused != nullptr || k.dot != nullptr || k.conv != nullptr ? "" : ", evaluator";
      if (grouped) {
        const passes::RowGroup& g = c.plan.row_groups[next_group];
        return absl::StrCat("row group ", g.first, "-", g.last, " (", g.rows, " rows)");
      }
      return absl::StrCat(index, " ", std::string(passes::KernelKindName(kernel.kind)), " ",
                          std::string(ir::OpcodeName(kernel.root()->opcode())), " (",
                          kernel.instructions.size(), " ops", how, ")");
    });
    if (grouped) {
      // A row group: every kernel of the group on a tile of rows, tiles across the pool.
      const passes::RowGroup& group = c.plan.row_groups[next_group++];
      group_inputs.assign(group.last - group.first + 1, {});
      group_outputs.assign(group.last - group.first + 1, {});
      for (int g = group.first; g <= group.last; ++g) {
        for (int id : c.kernels[g].inputs) group_inputs[g - group.first].push_back(ptr[id]);
        for (int id : c.kernels[g].results) group_outputs[g - group.first].push_back(ptr[id]);
      }
      const int64_t tile = std::max<int64_t>(1, kGroupTileBytes / std::max<int64_t>(1, group.row_bytes));
      pool.ParallelFor(group.rows, tile, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; b += tile) {
          const int64_t e = std::min(end, b + tile);
          for (int g = group.first; g <= group.last; ++g) {
            c.kernels[g].fused->RunRows(group_inputs[g - group.first],
                                        group_outputs[g - group.first], group.rows, b, e);
          }
        }
      });
      index = static_cast<size_t>(group.last);
      continue;
    }
    if (k.fused != nullptr) {
      inputs.clear();
      for (int id : k.inputs) inputs.push_back(ptr[id]);
      outputs.clear();
      for (int id : k.results) outputs.push_back(ptr[id]);
      k.fused->Run(inputs, outputs, pool);
      continue;
    }
    if (k.dot != nullptr) {
      k.dot->Run(ptr[k.inputs[0]], ptr[k.inputs.back()], ptr[k.results[0]], pool);
      continue;
    }
    if (k.conv != nullptr) {
      k.conv->Run(ptr[k.inputs[0]], ptr[k.inputs[1]], ptr[k.results[0]], pool);
      continue;
    }
    // Through the evaluator's op table, instruction by instruction.
    if (!evaluator.has_value()) evaluator.emplace(options);
    std::unordered_map<const ir::Value*, eval::EvalValue> local;
    for (const ir::Instruction* inst : k.kernel->instructions) {
      std::vector<eval::EvalValue> operands;
      operands.reserve(inst->operands().size());
      for (const ir::Value* v : inst->operands()) {
        auto l = local.find(v);
        if (l != local.end()) {
          EMBER_ASSIGN_OR_RETURN(eval::EvalValue copy, l->second.TryClone());
          operands.push_back(std::move(copy));
          continue;
        }
        auto id = c.id.find(v);
        if (id == c.id.end()) {
          return absl::InternalError(absl::StrCat("host executable: no buffer for an operand of ",
                                                  inst->Describe()));
        }
        EMBER_ASSIGN_OR_RETURN(eval::EvalValue value, operand_value(id->second));
        operands.push_back(std::move(value));
      }
      eval::OpEvaluator fn = table.Find(inst->opcode());
      if (fn == nullptr) {
        return absl::UnimplementedError(
            absl::StrCat(inst->Describe(), ": the host backend does not implement this op"));
      }
      absl::StatusOr<std::vector<eval::EvalValue>> out = fn(*inst, operands, *evaluator);
      if (!out.ok()) return out.status();
      if (out->size() != inst->num_results()) {
        return absl::InternalError(absl::StrCat(inst->Describe(), " produced ", out->size(),
                                                " values, expected ", inst->num_results()));
      }
      for (size_t i = 0; i < out->size(); ++i) local[inst->result(i)] = std::move((*out)[i]);
    }
    for (int id : k.results) {
      const ir::Value* v = c.values[id].value;
      eval::EvalValue& value = local[v];
      if (!v->type().is_tensor()) {
        other[id] = std::move(value);
        continue;
      }
      if (value.kind != eval::EvalValue::Kind::kArray ||
          !value.array.shape().EqualsIgnoringLayout(v->type().shape())) {
        return absl::InternalError(absl::StrCat(k.kernel->root()->Describe(),
                                                " produced a value of another type than ",
                                                v->type().ToString()));
      }
      if (!(value.array.shape() == v->type().shape())) {
        EMBER_ASSIGN_OR_RETURN(value.array, value.array.Relayout(v->type().shape().layout()));
      }
      if (!value.array.bytes().empty()) {
        std::memcpy(ptr[id], value.array.bytes().data(), value.array.bytes().size());
      }
    }
  }

  // Results not written in place (a value returned twice, parameters, constants): copies.
  for (size_t i = 0; i < c.results.size(); ++i) {
    const Compiled::Value& v = c.values[c.results[i]];
    if (v.slot.kind == BufferSlot::Kind::kOutput && v.slot.index == static_cast<int>(i)) continue;
    if (!v.value->type().is_tensor()) {
      return absl::InternalError(absl::StrCat("host executable: result ", i, " is not an array"));
    }
    const size_t bytes = static_cast<size_t>(v.value->type().shape().ByteSize());
    if (bytes == 0) continue;
    if (ptr[c.results[i]] == nullptr) {
      return absl::InternalError(absl::StrCat("host executable: result ", i, " has no buffer"));
    }
    std::memcpy(result_ptrs[i], ptr[c.results[i]], bytes);
  }
  return absl::OkStatus();
}

}  // namespace ember::host
