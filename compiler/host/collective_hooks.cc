#include "compiler/host/collective_hooks.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/evaluator/eval_family_support.h"
#include "compiler/ir/element_type.h"
#include "compiler/passes/collective_reduction.h"

namespace ember::host {
namespace {

namespace fs = eval::family_support;
using ConstBytes = absl::Span<const uint8_t>;
using MutableBytes = absl::Span<uint8_t>;

// Data a collective only moves goes as bytes.
constexpr collectives::DataType kBytes = collectives::DataType::kU8;

// Host memory as the device memory of a host device (what it is on the host platform).
se::DeviceMemory Memory(ConstBytes bytes) {
  return se::DeviceMemory{const_cast<uint8_t*>(bytes.data()), bytes.size()};
}
se::DeviceMemory Memory(MutableBytes bytes) { return se::DeviceMemory{bytes.data(), bytes.size()}; }
se::DeviceMemory Memory(std::vector<uint8_t>& bytes) {
  return se::DeviceMemory{bytes.data(), bytes.size()};
}

enum class Mode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedIds };

absl::StatusOr<Mode> GroupMode(const ir::Instruction& inst) {
  const bool channel = fs::ChannelId(inst) > 0;
  switch (inst.opcode()) {
    case ir::Opcode::kAllReduce:
    case ir::Opcode::kAllGather:
    case ir::Opcode::kReduceScatter:
    case ir::Opcode::kCollectiveReduce: {
      EMBER_ASSIGN_OR_RETURN(bool global_ids, fs::BoolAttr(inst, "use_global_device_ids", false));
      if (!channel) return Mode::kCrossReplica;
      return global_ids ? Mode::kFlattenedIds : Mode::kCrossReplicaAndPartition;
    }
    case ir::Opcode::kAllToAll:
    case ir::Opcode::kCollectiveBroadcast:
    case ir::Opcode::kCollectivePermute:
      return channel ? Mode::kCrossPartition : Mode::kCrossReplica;
    default:
      return fs::OpError(inst, "is not a collective op");
  }
}

// Rows of replica_groups without the -1 padding of ragged groups.
absl::StatusOr<std::vector<std::vector<int64_t>>> ReplicaGroups(const ir::Instruction& inst) {
  EMBER_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> rows,
                         fs::IntRowsAttr(inst, "replica_groups", 0));
  std::vector<std::vector<int64_t>> groups;
  for (auto& row : rows) {
    std::erase_if(row, [](int64_t v) { return v < 0; });
    if (!row.empty()) groups.push_back(std::move(row));
  }
  return groups;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

absl::Status CheckIds(const ir::Instruction& inst, const std::vector<int64_t>& ids, int64_t limit,
                      const char* what) {
  for (int64_t id : ids) {
    if (id < 0 || id >= limit) {
      return fs::OpError(inst, absl::StrCat(what, " ", id, " in replica_groups is out of range (",
                                            limit, " ", what, "s)"));
    }
  }
  return absl::OkStatus();
}

// ---- Byte layout helpers: blocks along one dimension of a row-major array ----------------------

struct Blocking {
  int64_t outer = 1;  // product of dims before `dim`
  int64_t chunk = 0;  // bytes of one block's slab per outer index
  int64_t block = 0;  // bytes of one block
};

Blocking MakeBlocking(absl::Span<const int64_t> dims, int64_t dim, int64_t n, int64_t esize) {
  Blocking b;
  int64_t inner = esize;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
    if (i < dim) b.outer *= dims[i];
    if (i > dim) inner *= dims[i];
  }
  b.chunk = dims[dim] / n * inner;
  b.block = b.outer * b.chunk;
  return b;
}

// Row-major array with dims -> n contiguous row-major blocks along `dim` (block k first).
std::vector<uint8_t> SplitBlocks(ConstBytes in, absl::Span<const int64_t> dims, int64_t dim,
                                 int64_t n, int64_t esize) {
  const Blocking b = MakeBlocking(dims, dim, n, esize);
  std::vector<uint8_t> out(in.size());
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t o = 0; o < b.outer; ++o) {
      if (b.chunk == 0) continue;
      std::memcpy(out.data() + k * b.block + o * b.chunk, in.data() + (o * n + k) * b.chunk,
                  b.chunk);
    }
  }
  return out;
}

// The inverse: n contiguous blocks (each with `dim` of size m) -> row-major array with `dim`
// of size n * m. `full_dims` are the joined array's dims.
void JoinBlocks(ConstBytes in, absl::Span<const int64_t> full_dims, int64_t dim, int64_t n,
                int64_t esize, MutableBytes out) {
  const Blocking b = MakeBlocking(full_dims, dim, n, esize);
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t o = 0; o < b.outer; ++o) {
      if (b.chunk == 0) continue;
      std::memcpy(out.data() + (o * n + k) * b.chunk, in.data() + k * b.block + o * b.chunk,
                  b.chunk);
    }
  }
}

absl::StatusOr<const ir::Literal*> ArrayOf(const ir::Instruction& inst,
                                           const std::vector<eval::EvalValue>& operands, size_t i) {
  if (i >= operands.size() || operands[i].kind != eval::EvalValue::Kind::kArray) {
    return fs::OpError(inst, absl::StrCat("operand ", i, " is not an array"));
  }
  return &operands[i].array;
}

// The root rank for data operand i: 0, or the has_dynamic_root operand's value (one per data
// operand, or one for all).
absl::StatusOr<int> RootRank(const ir::Instruction& op, const std::vector<int64_t>& roots, size_t i,
                             int64_t n) {
  if (roots.empty()) return 0;
  const int64_t value = roots[roots.size() == 1 ? 0 : std::min(i, roots.size() - 1)];
  if (value < 0 || value >= n) {
    return fs::OpError(op, absl::StrCat("dynamic root ", value, " outside a group of ", n));
  }
  return static_cast<int>(value);
}

absl::StatusOr<int64_t> DimAttr(const ir::Instruction& inst, const char* name, int64_t rank) {
  EMBER_ASSIGN_OR_RETURN(int64_t dim, fs::IntAttr(inst, name));
  if (dim < 0 || dim >= rank) {
    return fs::OpError(inst, absl::StrCat(name, " ", dim, " out of range for rank ", rank));
  }
  return dim;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<int64_t>>> CollectiveProcessGroups(const ir::Instruction& op,
                                                                          int64_t num_replicas,
                                                                          int64_t num_partitions) {
  EMBER_ASSIGN_OR_RETURN(Mode mode, GroupMode(op));
  std::vector<std::vector<int64_t>> groups;
  if (op.opcode() == ir::Opcode::kCollectivePermute) {
    // Pairs name replica ids (cross_replica) or partition ids (cross_partition) within
    // the group of all replicas of one partition / all partitions of one replica.
    if (mode == Mode::kCrossReplica) {
      for (int64_t p = 0; p < num_partitions; ++p) {
        std::vector<int64_t> g;
        for (int64_t r = 0; r < num_replicas; ++r) g.push_back(r * num_partitions + p);
        groups.push_back(std::move(g));
      }
    } else {
      for (int64_t r = 0; r < num_replicas; ++r) {
        std::vector<int64_t> g;
        for (int64_t p = 0; p < num_partitions; ++p) g.push_back(r * num_partitions + p);
        groups.push_back(std::move(g));
      }
    }
    return groups;
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> rows, ReplicaGroups(op));
  switch (mode) {
    case Mode::kCrossReplica:
      if (rows.empty()) rows.push_back(Iota(num_replicas));
      for (const auto& row : rows) {
        EMBER_RETURN_IF_ERROR(CheckIds(op, row, num_replicas, "replica"));
        for (int64_t p = 0; p < num_partitions; ++p) {
          std::vector<int64_t> g;
          for (int64_t r : row) g.push_back(r * num_partitions + p);
          groups.push_back(std::move(g));
        }
      }
      break;
    case Mode::kCrossPartition:
      if (rows.empty()) rows.push_back(Iota(num_partitions));
      for (const auto& row : rows) {
        EMBER_RETURN_IF_ERROR(CheckIds(op, row, num_partitions, "partition"));
        for (int64_t r = 0; r < num_replicas; ++r) {
          std::vector<int64_t> g;
          for (int64_t p : row) g.push_back(r * num_partitions + p);
          groups.push_back(std::move(g));
        }
      }
      break;
    case Mode::kCrossReplicaAndPartition:
      if (rows.empty()) rows.push_back(Iota(num_replicas));
      // One group per replica group holding every partition of those replicas, partition-major
      // (the order the StableHLO interpreter uses since openxla/stablehlo#1933).
      for (const auto& row : rows) {
        EMBER_RETURN_IF_ERROR(CheckIds(op, row, num_replicas, "replica"));
        std::vector<int64_t> g;
        for (int64_t p = 0; p < num_partitions; ++p) {
          for (int64_t r : row) g.push_back(r * num_partitions + p);
        }
        groups.push_back(std::move(g));
      }
      break;
    case Mode::kFlattenedIds:
      if (rows.empty()) {
        return fs::OpError(op, "use_global_device_ids needs explicit replica_groups");
      }
      for (const auto& row : rows) {
        EMBER_RETURN_IF_ERROR(CheckIds(op, row, num_replicas * num_partitions, "device"));
        groups.push_back(row);
      }
      break;
  }
  return groups;
}

CommunicatorHooks::CommunicatorHooks(std::shared_ptr<const backend::CollectiveParams> launch)
    : launch_(std::move(launch)) {}

eval::EvalOptions CommunicatorHooks::Options() {
  eval::EvalOptions options;
  options.replica_id = launch_->replica_id;
  options.partition_id = launch_->partition_id;
  options.num_replicas = launch_->num_replicas;
  options.num_partitions = launch_->num_partitions;
  options.collectives = this;
  return options;
}

absl::StatusOr<std::vector<eval::EvalValue>> CommunicatorHooks::Run(
    const ir::Instruction& op, std::vector<eval::EvalValue> operands) {
  std::vector<ConstBytes> inputs;
  for (size_t i = 0; i < operands.size(); ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* in, ArrayOf(op, operands, i));
    if (!in->shape().EqualsIgnoringLayout(op.operand(i)->type().shape())) {
      return fs::OpError(op, absl::StrCat("operand ", i, " is ", in->shape().ToString()));
    }
    inputs.push_back(in->bytes());
  }
  std::vector<ir::Literal> literals;
  std::vector<MutableBytes> outputs;
  for (size_t i = 0; i < op.num_results(); ++i) {
    EMBER_ASSIGN_OR_RETURN(ir::Shape shape, fs::ResultShape(op, i));
    EMBER_ASSIGN_OR_RETURN(ir::Literal literal, ir::Literal::Create(shape));
    literals.push_back(std::move(literal));
  }
  for (ir::Literal& literal : literals) outputs.push_back(literal.mutable_bytes());
  EMBER_RETURN_IF_ERROR(RunCollective(op, *launch_, inputs, outputs));
  std::vector<eval::EvalValue> results;
  for (ir::Literal& literal : literals)
    results.push_back(eval::EvalValue::Array(std::move(literal)));
  return results;
}

absl::Status RunCollective(const ir::Instruction& op, const backend::CollectiveParams& launch,
                           absl::Span<const absl::Span<const uint8_t>> inputs,
                           absl::Span<const absl::Span<uint8_t>> outputs) {
  const int64_t num_r = launch.num_replicas;
  const int64_t num_p = launch.num_partitions;
  const int64_t self = launch.replica_id * num_p + launch.partition_id;
  if (inputs.size() != op.operands().size() || outputs.size() != op.num_results()) {
    return fs::OpError(op, "was given buffers for another number of operands or results");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!op.result(i)->type().is_tensor() ||
        static_cast<int64_t>(outputs[i].size()) != op.result(i)->type().shape().ByteSize()) {
      return fs::OpError(op, absl::StrCat("result ", i, " was given a buffer of another size"));
    }
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups,
                         CollectiveProcessGroups(op, num_r, num_p));
  const std::vector<int64_t>* group = nullptr;
  for (const auto& g : groups) {
    if (std::find(g.begin(), g.end(), self) != g.end()) {
      if (group != nullptr) {
        return fs::OpError(op, absl::StrCat("device (replica ", launch.replica_id, ", partition ",
                                            launch.partition_id, ") is in two process groups"));
      }
      group = &g;
    }
  }
  if (group == nullptr && op.opcode() == ir::Opcode::kCollectiveBroadcast) {
    // Outside every group: the spec's results are zeros.
    for (const MutableBytes& out : outputs) std::fill(out.begin(), out.end(), uint8_t{0});
    return absl::OkStatus();
  }
  if (group == nullptr) {
    return fs::OpError(op, absl::StrCat("device (replica ", launch.replica_id, ", partition ",
                                        launch.partition_id, ") is in no process group"));
  }
  const int rank = static_cast<int>(std::find(group->begin(), group->end(), self) - group->begin());
  const int64_t n = static_cast<int64_t>(group->size());
  collectives::CliqueKey key;
  for (int64_t index : *group) {
    if (index >= static_cast<int64_t>(launch.device_ids.size())) {
      return fs::OpError(op, absl::StrCat("device index ", index, " is outside the launch"));
    }
    key.devices.push_back(launch.device_ids[index]);
  }
  auto fail = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(op.Describe(), ": ", std::string(s.message())));
  };
  absl::StatusOr<std::shared_ptr<collectives::Communicator>> comm_or =
      launch.scope->GetCommunicator(key, collectives::RankId(rank));
  if (!comm_or.ok()) return fail(comm_or.status());
  collectives::Communicator& comm = **comm_or;

  // collective_broadcast / collective_reduce with has_dynamic_root take the root ranks (one per
  // data operand, or one for all) as their last operand.
  EMBER_ASSIGN_OR_RETURN(bool dynamic_root, op.opcode() == ir::Opcode::kCollectiveBroadcast ||
                                                    op.opcode() == ir::Opcode::kCollectiveReduce
                                                ? fs::BoolAttr(op, "has_dynamic_root", false)
                                                : absl::StatusOr<bool>(false));
  std::vector<int64_t> roots;
  if (dynamic_root) {
    if (inputs.size() < 2) return fs::OpError(op, "has_dynamic_root needs a root operand");
    const ir::Shape& root_shape = op.operands().back()->type().shape();
    const ConstBytes root = inputs.back();
    if (static_cast<int64_t>(root.size()) != root_shape.ByteSize()) {
      return fs::OpError(op, "the root operand was given a buffer of another size");
    }
    for (int64_t e = 0; e < root_shape.element_count(); ++e) {
      if (root_shape.element_type() == ir::ElementType::kS32) {
        int32_t v;
        std::memcpy(&v, root.data() + e * sizeof(v), sizeof(v));
        roots.push_back(v);
      } else if (root_shape.element_type() == ir::ElementType::kS64) {
        int64_t v;
        std::memcpy(&v, root.data() + e * sizeof(v), sizeof(v));
        roots.push_back(v);
      } else {
        return fs::OpError(op, "the dynamic root must be si32 or si64");
      }
    }
  }
  const size_t count =
      op.opcode() == ir::Opcode::kCollectivePermute ? 1 : inputs.size() - (dynamic_root ? 1 : 0);
  if (op.num_results() != count) {
    return fs::OpError(
        op, absl::StrCat("has ", inputs.size(), " operands and ", op.num_results(), " results"));
  }
  for (size_t i = 0; i < count; ++i) {
    const ir::Shape& shape = op.operand(i)->type().shape();
    if (static_cast<int64_t>(inputs[i].size()) != shape.ByteSize()) {
      return fs::OpError(op, absl::StrCat("operand ", i, " was given a buffer of another size"));
    }
    const ConstBytes in_bytes = inputs[i];
    const int64_t esize = ir::StorageBytes(shape.element_type());
    const ir::Shape& out_shape = op.result(i)->type().shape();
    const MutableBytes recv = outputs[i];
    // Moves go as bytes; reductions as the transport type and kind of the op's region.
    auto reduction =
        [&]() -> absl::StatusOr<std::pair<collectives::DataType, collectives::ReductionKind>> {
      const std::optional<collectives::DataType> type =
          passes::ReductionDataType(shape.element_type());
      const std::optional<collectives::ReductionKind> kind =
          op.regions().empty()
              ? std::nullopt
              : passes::RegionReductionKind(*op.regions()[0], shape.element_type());
      if (!type.has_value() || !kind.has_value()) {
        return fs::OpError(op,
                           "its reduction region is not one a collective transport runs "
                           "(legalize-collectives should have rewritten it)");
      }
      return std::make_pair(*type, *kind);
    };
    switch (op.opcode()) {
      case ir::Opcode::kAllReduce: {
        EMBER_ASSIGN_OR_RETURN(auto how, reduction());
        if (absl::Status s = comm.AllReduce(Memory(in_bytes), Memory(recv), how.first,
                                            shape.element_count(), how.second, nullptr)
                                 ->Await();
            !s.ok()) {
          return fail(s);
        }
        break;
      }
      case ir::Opcode::kAllGather: {
        EMBER_ASSIGN_OR_RETURN(int64_t dim, DimAttr(op, "all_gather_dim", shape.rank()));
        if (out_shape.dim(dim) != shape.dim(dim) * n) {
          return fs::OpError(
              op, absl::StrCat("result dimension ", dim, " is not ", n, " x ", shape.dim(dim)));
        }
        // Blocks along the leading non-trivial dimension are the result's own bytes.
        const bool direct = MakeBlocking(out_shape.dims(), dim, n, esize).outer == 1;
        std::vector<uint8_t> gathered(direct ? 0 : recv.size());
        if (absl::Status s =
                comm.AllGather(Memory(in_bytes), direct ? Memory(recv) : Memory(gathered), kBytes,
                               in_bytes.size(), nullptr)
                    ->Await();
            !s.ok()) {
          return fail(s);
        }
        if (!direct) JoinBlocks(gathered, out_shape.dims(), dim, n, esize, recv);
        break;
      }
      case ir::Opcode::kReduceScatter: {
        EMBER_ASSIGN_OR_RETURN(int64_t dim, DimAttr(op, "scatter_dimension", shape.rank()));
        if (shape.dim(dim) % n != 0 || out_shape.dim(dim) != shape.dim(dim) / n) {
          return fs::OpError(
              op, absl::StrCat("dimension ", dim, " of size ", shape.dim(dim),
                               " does not scatter over ", n, " devices into ", out_shape.dim(dim)));
        }
        EMBER_ASSIGN_OR_RETURN(auto how, reduction());
        const bool direct = MakeBlocking(shape.dims(), dim, n, esize).outer == 1;
        std::vector<uint8_t> send =
            direct ? std::vector<uint8_t>() : SplitBlocks(in_bytes, shape.dims(), dim, n, esize);
        if (absl::Status s =
                comm.ReduceScatter(direct ? Memory(in_bytes) : Memory(send), Memory(recv),
                                   how.first, out_shape.element_count(), how.second, nullptr)
                    ->Await();
            !s.ok()) {
          return fail(s);
        }
        break;
      }
      case ir::Opcode::kAllToAll: {
        EMBER_ASSIGN_OR_RETURN(int64_t split_dim, DimAttr(op, "split_dimension", shape.rank()));
        EMBER_ASSIGN_OR_RETURN(int64_t concat_dim, DimAttr(op, "concat_dimension", shape.rank()));
        EMBER_ASSIGN_OR_RETURN(int64_t split_count, fs::IntAttr(op, "split_count", n));
        if (split_count != n || shape.dim(split_dim) % n != 0) {
          return fs::OpError(op,
                             absl::StrCat("split_count ", split_count, " over a group of ", n,
                                          " with split dimension of size ", shape.dim(split_dim)));
        }
        std::vector<uint8_t> send = SplitBlocks(in_bytes, shape.dims(), split_dim, n, esize);
        std::vector<uint8_t> received(send.size());
        if (absl::Status s =
                comm.AllToAll(Memory(send), Memory(received), kBytes, send.size() / n, nullptr)
                    ->Await();
            !s.ok()) {
          return fail(s);
        }
        std::vector<int64_t> joined = shape.dims();
        joined[split_dim] /= n;
        joined[concat_dim] *= n;
        if (joined != out_shape.dims()) {
          return fs::OpError(op, "result shape does not match split/concat dimensions");
        }
        JoinBlocks(received, joined, concat_dim, n, esize, recv);
        break;
      }
      case ir::Opcode::kCollectivePermute: {
        EMBER_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> pairs,
                               fs::IntRowsAttr(op, "source_target_pairs", 2));
        std::optional<collectives::RankId> source;
        std::vector<collectives::RankId> targets;
        for (const auto& pair : pairs) {
          if (pair.size() != 2) return fs::OpError(op, "source_target_pairs rows must be pairs");
          if (pair[0] < 0 || pair[0] >= n || pair[1] < 0 || pair[1] >= n) continue;
          if (pair[1] == rank) source = collectives::RankId(static_cast<int>(pair[0]));
          if (pair[0] == rank) targets.push_back(collectives::RankId(static_cast<int>(pair[1])));
        }
        if (absl::Status s = comm.CollectivePermute(Memory(in_bytes), Memory(recv), kBytes,
                                                    in_bytes.size(), source, targets, nullptr)
                                 ->Await();
            !s.ok()) {
          return fail(s);
        }
        break;
      }
      case ir::Opcode::kCollectiveReduce: {
        // The root is the group's first process unless given; the others' results are zeros.
        EMBER_ASSIGN_OR_RETURN(int root, RootRank(op, roots, i, n));
        EMBER_ASSIGN_OR_RETURN(auto how, reduction());
        if (absl::Status s =
                comm.Reduce(Memory(in_bytes), Memory(recv), how.first, shape.element_count(),
                            how.second, collectives::RankId(root), nullptr)
                    ->Await();
            !s.ok()) {
          return fail(s);
        }
        break;
      }
      case ir::Opcode::kCollectiveBroadcast: {
        EMBER_ASSIGN_OR_RETURN(int root, RootRank(op, roots, i, n));
        if (absl::Status s = comm.Broadcast(Memory(in_bytes), Memory(recv), kBytes, in_bytes.size(),
                                            collectives::RankId(root), nullptr)
                                 ->Await();
            !s.ok()) {
          return fail(s);
        }
        break;
      }
      default:
        return fs::OpError(op, "is not a collective op");
    }
  }
  return absl::OkStatus();
}

}  // namespace ember::host
