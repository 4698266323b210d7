#include "compiler/passes/spmd_builder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ember::passes {
namespace {

ir::ValueType S64(std::vector<int64_t> dims) {
  return ir::ValueType::Tensor(ir::Shape::Make(ir::ElementType::kS64, dims).value());
}

bool SameAxes(const std::vector<ir::MeshAxisRef>& a, const std::vector<ir::MeshAxisRef>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].name != b[k].name || a[k].pre_size != b[k].pre_size || a[k].size != b[k].size) {
      return false;
    }
  }
  return true;
}

}  // namespace

const ir::Attribute* StatedSharding(const ir::AttributeMap& attrs) {
  if (const ir::Attribute* a = attrs.Find("sdy.sharding")) return a;
  return attrs.Find("mhlo.sharding");
}

bool IsManualComputation(const ir::Instruction& inst) {
  if (inst.opcode() != ir::Opcode::kCustomCall) return false;
  const ir::Attribute* target = inst.attribute("call_target_name");
  return target != nullptr && target->kind == ir::Attribute::Kind::kString &&
         target->s == "sdy.manual_computation";
}

const ir::Instruction* FindManualComputation(const ir::Computation& c) {
  for (const auto& inst : c.instructions()) {
    if (IsManualComputation(*inst)) return inst.get();
    for (const ir::Computation* r : inst->regions()) {
      if (const ir::Instruction* m = FindManualComputation(*r)) return m;
    }
    if (inst->callee() != nullptr) {
      if (const ir::Instruction* m = FindManualComputation(*inst->callee())) return m;
    }
  }
  return nullptr;
}

absl::StatusOr<std::vector<const ir::TensorSharding*>> ShardingList(const ir::Instruction& inst,
                                                                    const char* name,
                                                                    size_t count) {
  const ir::Attribute* list = inst.attribute(name);
  std::vector<const ir::TensorSharding*> out;
  if (list == nullptr || list->kind != ir::Attribute::Kind::kList) {
    return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": no ", name));
  }
  for (const ir::Attribute& a : list->list) {
    if (a.kind != ir::Attribute::Kind::kSharding || a.sharding == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(inst.Describe(), ": ", name, " holds ", a.ToString()));
    }
    out.push_back(a.sharding.get());
  }
  if (out.size() != count) {
    return absl::InvalidArgumentError(
        absl::StrCat(inst.Describe(), ": ", out.size(), " ", name, " for ", count, " values"));
  }
  return out;
}

absl::StatusOr<Split> ManualSplit(const ir::Module& module, const ir::Instruction& inst,
                                  const ir::TensorSharding& sharding, const ir::ValueType& type,
                                  int64_t num_devices) {
  std::vector<std::string> manual_axes;
  if (const ir::Attribute* axes = inst.attribute("manual_axes");
      axes != nullptr && axes->kind == ir::Attribute::Kind::kList) {
    for (const ir::Attribute& a : axes->list) {
      if (a.kind == ir::Attribute::Kind::kString) manual_axes.push_back(a.s);
    }
  }
  EMBER_ASSIGN_OR_RETURN(ir::Mesh mesh, ir::MeshOfSharding(module, sharding));
  if (mesh.size() != num_devices) {
    return absl::UnimplementedError(absl::StrCat(inst.Describe(), ": a mesh of ", mesh.size(),
                                                 " devices; the program runs on ", num_devices));
  }
  for (size_t a = 0; a < mesh.axes.size(); ++a) {
    if (mesh.sizes[a] > 1 &&
        std::find(manual_axes.begin(), manual_axes.end(), mesh.axes[a]) == manual_axes.end()) {
      return absl::UnimplementedError(
          absl::StrCat(inst.Describe(), ": mesh axis \"", mesh.axes[a],
                       "\" is not manual; partially manual computations are not supported yet"));
    }
  }
  absl::Status dims = ir::ShardDims(type.dims(), sharding, mesh).status();
  if (!dims.ok()) {
    return absl::Status(dims.code(), absl::StrCat(inst.Describe(), ": ", dims.message()));
  }
  return Split{sharding, std::move(mesh)};
}

ir::TensorSharding ShardingOf(const ir::TensorSharding& mesh_of, const DimSplits& dims) {
  ir::TensorSharding s;
  s.mesh_name = mesh_of.mesh_name;
  s.inline_mesh = mesh_of.inline_mesh;
  for (const auto& axes : dims) {
    ir::DimensionSharding d;
    d.axes = axes;
    s.dims.push_back(std::move(d));
  }
  return s;
}

absl::StatusOr<std::optional<Split>> ReadSplit(const ir::Module& module, const ir::Attribute* attr,
                                               const ir::ValueType& type, int64_t num_devices,
                                               const std::string& what, bool allow_unreduced) {
  if (attr == nullptr || (attr->kind == ir::Attribute::Kind::kString && attr->s.empty())) {
    return std::nullopt;  // no sharding given (an empty mhlo.sharding says nothing)
  }
  auto fail = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(what, " (", type.ToString(), "): ", s.message()));
  };
  if (attr->kind != ir::Attribute::Kind::kSharding || attr->sharding == nullptr) {
    return fail(absl::UnimplementedError(
        absl::StrCat("the sharding ", attr->ToString(), " is not one tensor sharding")));
  }
  const ir::TensorSharding& sharding = *attr->sharding;
  switch (sharding.kind) {
    case ir::TensorSharding::Kind::kReplicated:
      return std::nullopt;
    case ir::TensorSharding::Kind::kMaximal:
    case ir::TensorSharding::Kind::kManual:
      return fail(absl::UnimplementedError(
          absl::StrCat("the sharding ", sharding.ToString(), " is not supported yet")));
    case ir::TensorSharding::Kind::kSplit:
      break;
  }
  absl::StatusOr<ir::Mesh> mesh = ir::MeshOfSharding(module, sharding);
  if (!mesh.ok()) return fail(mesh.status());
  if (!sharding.unreduced_axes.empty() && !allow_unreduced) {
    return fail(absl::UnimplementedError(absl::StrCat(
        "the sharding ", sharding.ToString(), " has unreduced axes, which are not supported yet")));
  }
  if (!type.is_tensor()) return fail(absl::UnimplementedError("only arrays can be sharded"));
  if (sharding.unreduced_axes.empty() && ir::IsFullyReplicated(sharding, &*mesh)) {
    // Still check the rank: a sharding of the wrong rank is a malformed program.
    if (sharding.dims.size() != type.dims().size()) {
      return fail(
          absl::InvalidArgumentError(absl::StrCat("a sharding of rank ", sharding.dims.size(),
                                                  " for an array of rank ", type.dims().size())));
    }
    return std::nullopt;
  }
  if (mesh->size() != num_devices) {
    return fail(
        absl::UnimplementedError(absl::StrCat("it is sharded over a mesh of ", mesh->size(),
                                              " devices; the program runs on ", num_devices)));
  }
  absl::Status dims = ir::ShardDims(type.dims(), sharding, *mesh).status();
  if (!dims.ok()) return fail(dims);
  return Split{sharding, *std::move(mesh)};
}

absl::StatusOr<int64_t> SpmdBuilder::Count(const ir::Mesh& mesh,
                                           const std::vector<ir::MeshAxisRef>& axes) {
  int64_t n = 1;
  for (const ir::MeshAxisRef& a : axes) {
    const auto it = std::find(mesh.axes.begin(), mesh.axes.end(), a.name);
    if (it == mesh.axes.end()) {
      return absl::InvalidArgumentError(absl::StrCat("axis \"", a.name, "\" is not in the mesh"));
    }
    n *= a.whole() ? mesh.sizes[it - mesh.axes.begin()] : a.size;
  }
  return n;
}

absl::StatusOr<ir::ValueType> SpmdBuilder::LocalType(const ir::ValueType& global,
                                                     const ir::Mesh& mesh, const DimSplits& dims) {
  if (!global.is_tensor()) return global;
  std::vector<int64_t> local = global.dims();
  for (size_t d = 0; d < local.size() && d < dims.size(); ++d) {
    EMBER_ASSIGN_OR_RETURN(int64_t n, Count(mesh, dims[d]));
    if (local[d] % n != 0) {
      return absl::InternalError(absl::StrCat("dimension ", d, " of ", global.ToString(),
                                              " does not split evenly into ", n));
    }
    local[d] /= n;
  }
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(global.element_type(), local));
  return ir::ValueType::Tensor(shape);
}

absl::StatusOr<ir::ValueType> SpmdBuilder::ShardType(const ir::ValueType& global,
                                                     const Split& split) {
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                         ir::ShardDims(global.dims(), split.sharding, split.mesh));
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(global.element_type(), dims));
  return ir::ValueType::Tensor(shape);
}

absl::StatusOr<ir::Literal> SpmdBuilder::Groups(const ir::Mesh& mesh,
                                                const std::vector<ir::MeshAxisRef>& axes,
                                                int64_t* size) {
  EMBER_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups, ir::MeshAxesGroups(mesh, axes));
  *size = groups.empty() ? 1 : static_cast<int64_t>(groups[0].size());
  std::vector<int64_t> ids;
  for (const auto& g : groups) ids.insert(ids.end(), g.begin(), g.end());
  return ir::Literal::FromValues<int64_t>({static_cast<int64_t>(groups.size()), *size}, ids);
}

absl::StatusOr<ir::Value*> SpmdBuilder::AllGather(ir::Value* v, const ir::Mesh& mesh, int64_t dim,
                                                  const std::vector<ir::MeshAxisRef>& axes,
                                                  const ir::Location& loc) {
  if (axes.empty()) return v;
  int64_t n = 1;
  EMBER_ASSIGN_OR_RETURN(ir::Literal rows, Groups(mesh, axes, &n));
  if (n == 1) return v;
  std::vector<int64_t> dims = v->type().dims();
  dims[dim] *= n;
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(v->type().element_type(), dims));
  ir::AttributeMap attrs;
  attrs.Set("all_gather_dim", ir::Attribute::Int(dim));
  attrs.Set("replica_groups", ir::Attribute::OfLiteral(std::move(rows)));
  attrs.Set("channel_id", ir::Attribute::Int(counters_.next_channel++));
  attrs.Set("use_global_device_ids", ir::Attribute::Bool(true));
  ++counters_.collectives;
  return c_
      .AddInstruction(ir::Opcode::kAllGather, {v}, {ir::ValueType::Tensor(shape)}, std::move(attrs),
                      {}, loc)
      ->result();
}

absl::StatusOr<ir::Value*> SpmdBuilder::Shift(ir::Value* v, const ir::Mesh& mesh,
                                              const std::vector<ir::MeshAxisRef>& axes, int step,
                                              const ir::Location& loc) {
  EMBER_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups, ir::MeshAxesGroups(mesh, axes));
  std::vector<int64_t> pairs;
  for (const std::vector<int64_t>& g : groups) {  // each in block order
    const int64_t n = static_cast<int64_t>(g.size());
    for (int64_t i = 0; i < n; ++i) {
      if (i + step < 0 || i + step >= n) continue;
      pairs.push_back(g[i]);
      pairs.push_back(g[i + step]);
    }
  }
  EMBER_ASSIGN_OR_RETURN(ir::Literal table, ir::Literal::FromValues<int64_t>(
                                                {static_cast<int64_t>(pairs.size() / 2), 2}, pairs));
  ir::AttributeMap attrs;
  attrs.Set("source_target_pairs", ir::Attribute::OfLiteral(std::move(table)));
  attrs.Set("channel_id", ir::Attribute::Int(counters_.next_channel++));
  ++counters_.collectives;
  return c_
      .AddInstruction(ir::Opcode::kCollectivePermute, {v}, {v->type()}, std::move(attrs), {}, loc)
      ->result();
}

absl::StatusOr<ir::Value*> SpmdBuilder::AllReduce(ir::Value* v, const ir::Mesh& mesh,
                                                  const std::vector<ir::MeshAxisRef>& axes,
                                                  ir::Computation* region,
                                                  const ir::Location& loc) {
  int64_t n = 1;
  EMBER_ASSIGN_OR_RETURN(ir::Literal rows, Groups(mesh, axes, &n));
  ir::AttributeMap attrs;
  attrs.Set("replica_groups", ir::Attribute::OfLiteral(std::move(rows)));
  attrs.Set("channel_id", ir::Attribute::Int(counters_.next_channel++));
  attrs.Set("use_global_device_ids", ir::Attribute::Bool(true));
  ++counters_.collectives;
  return c_
      .AddInstruction(ir::Opcode::kAllReduce, {v}, {v->type()}, std::move(attrs), {region}, loc)
      ->result();
}

absl::StatusOr<ir::Value*> SpmdBuilder::ReduceScatter(ir::Value* v, const ir::Mesh& mesh,
                                                      int64_t dim,
                                                      const std::vector<ir::MeshAxisRef>& axes,
                                                      ir::Computation* region,
                                                      const ir::Location& loc) {
  int64_t n = 1;
  // The groups list their devices in block order along `axes` (as AllGather reads them), so the
  // rank-r device of a group receives block r.
  EMBER_ASSIGN_OR_RETURN(ir::Literal rows, Groups(mesh, axes, &n));
  std::vector<int64_t> dims = v->type().dims();
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size()) || dims[dim] % n != 0) {
    return absl::InternalError(absl::StrCat("dimension ", dim, " of ", v->type().ToString(),
                                            " does not scatter over ", n, " devices"));
  }
  dims[dim] /= n;
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(v->type().element_type(), dims));
  ir::AttributeMap attrs;
  attrs.Set("scatter_dimension", ir::Attribute::Int(dim));
  attrs.Set("replica_groups", ir::Attribute::OfLiteral(std::move(rows)));
  attrs.Set("channel_id", ir::Attribute::Int(counters_.next_channel++));
  attrs.Set("use_global_device_ids", ir::Attribute::Bool(true));
  ++counters_.collectives;
  return c_
      .AddInstruction(ir::Opcode::kReduceScatter, {v}, {ir::ValueType::Tensor(shape)},
                      std::move(attrs), {region}, loc)
      ->result();
}

absl::StatusOr<ir::Value*> SpmdBuilder::Cut(ir::Value* v, const ir::Mesh& mesh,
                                            const DimSplits& from, const DimSplits& to,
                                            const ir::Location& loc) {
  const std::vector<int64_t> in = v->type().dims();
  std::vector<int64_t> out = in;
  std::vector<int64_t> parts(in.size(), 1);  // per dimension: the blocks it is cut into
  bool any = false;
  for (size_t d = 0; d < in.size(); ++d) {
    const size_t kept = d < from.size() ? from[d].size() : 0;
    if (d >= to.size() || to[d].size() <= kept) continue;
    const std::vector<ir::MeshAxisRef> extra(to[d].begin() + kept, to[d].end());
    EMBER_ASSIGN_OR_RETURN(int64_t n, Count(mesh, extra));
    if (n == 1) continue;
    if (in[d] % n != 0) {
      return absl::InternalError(absl::StrCat("dimension ", d, " of ", v->type().ToString(),
                                              " does not split evenly into ", n));
    }
    out[d] = in[d] / n;
    parts[d] = n;
    any = true;
  }
  if (!any) return v;
  std::vector<ir::Value*> operands = {v};
  for (size_t d = 0; d < in.size(); ++d) {
    // The device's block along `d` under `to`, within its block under `from` (`from` is a
    // prefix of `to`, major first).
    ir::Value* start = nullptr;
    if (parts[d] == 1) {
      EMBER_ASSIGN_OR_RETURN(start, Scalar(0, loc));
    } else {
      EMBER_ASSIGN_OR_RETURN(start, MinorBlockOffset(mesh, to[d], parts[d], out[d], loc));
    }
    operands.push_back(start);
  }
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(v->type().element_type(), out));
  ir::AttributeMap attrs;
  attrs.Set("slice_sizes", ir::Attribute::Ints(out));
  return c_
      .AddInstruction(ir::Opcode::kDynamicSlice, std::move(operands),
                      {ir::ValueType::Tensor(shape)}, std::move(attrs), {}, loc)
      ->result();
}

absl::StatusOr<std::vector<int64_t>> SpmdBuilder::BlockIndices(
    const ir::Mesh& mesh, const std::vector<ir::MeshAxisRef>& axes) const {
  ir::TensorSharding one;
  one.dims.resize(1);
  one.dims[0].axes = axes;
  std::vector<int64_t> indices(num_devices_);
  for (int64_t p = 0; p < num_devices_; ++p) {
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> index, ir::ShardIndex(one, mesh, p));
    indices[p] = index[0];
  }
  return indices;
}

absl::StatusOr<ir::Value*> SpmdBuilder::MinorBlockOffset(const ir::Mesh& mesh,
                                                         const std::vector<ir::MeshAxisRef>& axes,
                                                         int64_t minor, int64_t block,
                                                         const ir::Location& loc) {
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, BlockIndices(mesh, axes));
  for (int64_t& o : offsets) o = (o % minor) * block;
  if (std::all_of(offsets.begin(), offsets.end(), [&](int64_t o) { return o == offsets[0]; })) {
    return Scalar(offsets.empty() ? 0 : offsets[0], loc);
  }
  return Lookup(offsets, loc);
}

absl::StatusOr<ir::Value*> SpmdBuilder::Slice(ir::Value* v, int64_t dim, int64_t begin,
                                              int64_t end, const ir::Location& loc) {
  const std::vector<int64_t>& dims = v->type().dims();
  std::vector<int64_t> start(dims.size(), 0), limit = dims, out = dims;
  start[dim] = begin;
  limit[dim] = end;
  out[dim] = end - begin;
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(v->type().element_type(), out));
  ir::AttributeMap attrs;
  attrs.Set("start_indices", ir::Attribute::Ints(start));
  attrs.Set("limit_indices", ir::Attribute::Ints(limit));
  attrs.Set("strides", ir::Attribute::Ints(std::vector<int64_t>(dims.size(), 1)));
  return c_
      .AddInstruction(ir::Opcode::kSlice, {v}, {ir::ValueType::Tensor(shape)}, std::move(attrs), {},
                      loc)
      ->result();
}

absl::StatusOr<ir::Value*> SpmdBuilder::Concatenate(std::vector<ir::Value*> pieces, int64_t dim,
                                                    const ir::Location& loc) {
  std::vector<int64_t> out = pieces.front()->type().dims();
  out[dim] = 0;
  for (const ir::Value* p : pieces) out[dim] += p->type().dims()[dim];
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape,
                         ir::Shape::Make(pieces.front()->type().element_type(), out));
  ir::AttributeMap attrs;
  attrs.Set("dimension", ir::Attribute::Int(dim));
  return c_
      .AddInstruction(ir::Opcode::kConcatenate, std::move(pieces), {ir::ValueType::Tensor(shape)},
                      std::move(attrs), {}, loc)
      ->result();
}

absl::StatusOr<ir::Value*> SpmdBuilder::Zeros(const ir::ValueType& type, const ir::Location& loc) {
  const ir::ValueType scalar = ir::ValueType::Tensor(ir::Shape::Scalar(type.element_type()));
  EMBER_ASSIGN_OR_RETURN(ir::Literal zero, ir::Literal::Create(scalar.shape()));
  EMBER_ASSIGN_OR_RETURN(ir::Value * v, Constant(std::move(zero), loc));
  ir::AttributeMap attrs;
  attrs.Set("broadcast_dimensions", ir::Attribute::Ints({}));
  return c_.AddInstruction(ir::Opcode::kBroadcastInDim, {v}, {type}, std::move(attrs), {}, loc)
      ->result();
}

absl::StatusOr<ir::Value*> SpmdBuilder::AllToAll(ir::Value* v, const ir::Mesh& mesh, int64_t split,
                                                 int64_t concat,
                                                 const std::vector<ir::MeshAxisRef>& axes,
                                                 const ir::Location& loc) {
  int64_t n = 1;
  EMBER_ASSIGN_OR_RETURN(ir::Literal rows, Groups(mesh, axes, &n));
  if (n == 1) return v;
  std::vector<int64_t> dims = v->type().dims();
  if (dims[split] % n != 0) {
    return absl::InternalError(absl::StrCat("dimension ", split, " of ", v->type().ToString(),
                                            " does not split evenly into ", n));
  }
  dims[split] /= n;
  dims[concat] *= n;
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(v->type().element_type(), dims));
  ir::AttributeMap attrs;
  attrs.Set("split_dimension", ir::Attribute::Int(split));
  attrs.Set("concat_dimension", ir::Attribute::Int(concat));
  attrs.Set("split_count", ir::Attribute::Int(n));
  attrs.Set("replica_groups", ir::Attribute::OfLiteral(std::move(rows)));
  attrs.Set("channel_id", ir::Attribute::Int(counters_.next_channel++));
  ++counters_.collectives;
  return c_
      .AddInstruction(ir::Opcode::kAllToAll, {v}, {ir::ValueType::Tensor(shape)}, std::move(attrs),
                      {}, loc)
      ->result();
}

absl::StatusOr<ir::Value*> SpmdBuilder::Reshard(ir::Value* v, const ir::Mesh& mesh,
                                                const DimSplits& from_in, const DimSplits& to,
                                                const ir::Location& loc) {
  if (!v->type().is_tensor()) return v;
  const size_t rank = v->type().dims().size();
  DimSplits from = from_in;
  from.resize(rank);
  // Axes that only change dimension move by all-to-all: the minor axis of dimension a's split,
  // which `to` does not keep there, when `to` extends dimension b's split by exactly it.
  for (size_t a = 0; a < rank; ++a) {
    while (!from[a].empty()) {
      const std::vector<ir::MeshAxisRef>& want_a =
          a < to.size() ? to[a] : std::vector<ir::MeshAxisRef>{};
      const ir::MeshAxisRef x = from[a].back();
      const std::vector<ir::MeshAxisRef> rest(from[a].begin(), from[a].end() - 1);
      if (SameAxes(from[a], want_a) || !(rest.size() <= want_a.size()) ||
          !SameAxes(rest,
                    std::vector<ir::MeshAxisRef>(want_a.begin(), want_a.begin() + rest.size()))) {
        break;
      }
      size_t b = rank;
      for (size_t d = 0; d < rank && b == rank; ++d) {
        if (d == a || d >= to.size() || to[d].size() != from[d].size() + 1) continue;
        const std::vector<ir::MeshAxisRef> head(to[d].begin(), to[d].end() - 1);
        if (SameAxes(head, from[d]) && SameAxes({to[d].back()}, {x})) b = d;
      }
      if (b == rank) break;
      EMBER_ASSIGN_OR_RETURN(int64_t n, Count(mesh, {x}));
      if (v->type().dims()[b] % n != 0) break;
      EMBER_ASSIGN_OR_RETURN(
          v, AllToAll(v, mesh, static_cast<int64_t>(b), static_cast<int64_t>(a), {x}, loc));
      from[a].pop_back();
      from[b].push_back(x);
    }
  }
  DimSplits kept(rank);
  for (size_t d = 0; d < rank; ++d) {
    const std::vector<ir::MeshAxisRef> have =
        d < from.size() ? from[d] : std::vector<ir::MeshAxisRef>{};
    const std::vector<ir::MeshAxisRef> want =
        d < to.size() ? to[d] : std::vector<ir::MeshAxisRef>{};
    if (SameAxes(have, want)) {
      kept[d] = have;
      continue;
    }
    size_t common = 0;
    while (common < have.size() && common < want.size() &&
           SameAxes({have[common]}, {want[common]})) {
      ++common;
    }
    kept[d].assign(have.begin(), have.begin() + common);
    const std::vector<ir::MeshAxisRef> gathered(have.begin() + common, have.end());
    EMBER_ASSIGN_OR_RETURN(v, AllGather(v, mesh, static_cast<int64_t>(d), gathered, loc));
  }
  return Cut(v, mesh, kept, to, loc);
}

absl::StatusOr<ir::Value*> SpmdBuilder::Gather(ir::Value* shard, const Split& split,
                                               const ir::Location& loc) {
  ir::Value* v = shard;
  for (size_t d = 0; d < split.sharding.dims.size(); ++d) {
    EMBER_ASSIGN_OR_RETURN(
        v, AllGather(v, split.mesh, static_cast<int64_t>(d), split.sharding.dims[d].axes, loc));
  }
  return v;
}

absl::StatusOr<ir::Value*> SpmdBuilder::Cut(ir::Value* global, const Split& split,
                                            const ir::Location& loc) {
  DimSplits to;
  for (const ir::DimensionSharding& d : split.sharding.dims) to.push_back(d.axes);
  return Cut(global, split.mesh, DimSplits(to.size()), to, loc);
}

absl::StatusOr<ir::Value*> SpmdBuilder::Constant(ir::Literal literal, const ir::Location& loc) {
  ir::ValueType type = ir::ValueType::Tensor(literal.shape());
  ir::AttributeMap attrs;
  attrs.Set("value", ir::Attribute::OfLiteral(std::move(literal)));
  return c_.AddInstruction(ir::Opcode::kConstant, {}, {std::move(type)}, std::move(attrs), {}, loc)
      ->result();
}

absl::StatusOr<ir::Value*> SpmdBuilder::Scalar(int64_t v, const ir::Location& loc) {
  EMBER_ASSIGN_OR_RETURN(ir::Literal literal, ir::Literal::FromValues<int64_t>({}, {v}));
  return Constant(std::move(literal), loc);
}

absl::StatusOr<ir::Value*> SpmdBuilder::Lookup(const std::vector<int64_t>& table,
                                               const ir::Location& loc) {
  if (partition_ == nullptr) {
    ir::Value* id =
        c_.AddInstruction(ir::Opcode::kPartitionId, {},
                          {ir::ValueType::Tensor(ir::Shape::Scalar(ir::ElementType::kU32))}, {}, {},
                          loc)
            ->result();
    partition_ = c_.AddInstruction(ir::Opcode::kConvert, {id}, {S64({})}, {}, {}, loc)->result();
  }
  EMBER_ASSIGN_OR_RETURN(ir::Literal literal,
                         ir::Literal::FromValues<int64_t>({num_devices_}, table));
  EMBER_ASSIGN_OR_RETURN(ir::Value * values, Constant(std::move(literal), loc));
  ir::AttributeMap attrs;
  attrs.Set("slice_sizes", ir::Attribute::Ints({1}));
  ir::Value* one = c_.AddInstruction(ir::Opcode::kDynamicSlice, {values, partition_}, {S64({1})},
                                     std::move(attrs), {}, loc)
                       ->result();
  return c_.AddInstruction(ir::Opcode::kReshape, {one}, {S64({})}, {}, {}, loc)->result();
}

}  // namespace ember::passes
