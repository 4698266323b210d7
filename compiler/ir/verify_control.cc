// Verifier checks of region-carrying and distributed ops: reduce, reduce_window,
// select_and_scatter, sort, while, if, case, the collectives, rng_bit_generator, batch_norm_*,
// custom_call.
#include <string>
#include <vector>

#include "compiler/ir/mesh.h"
#include "compiler/ir/verifier_internal.h"

namespace ember::ir::verifier {
namespace {

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    if (absl::Status s_ = (expr); !s_.ok()) return s_; \
  } while (0)

ValueType Scalar(ElementType t) { return TensorOf(t, {}); }

// reduce and reduce_window: N inputs of one shape, N scalar inits, a body (2N scalars -> N).
absl::Status InputsAndInits(const OpChecker& c, size_t* n, std::vector<ValueType>* scalars) {
  if (c.num_operands() == 0 || c.num_operands() % 2 != 0) {
    return c.Error("expects inputs and as many init values, got ", c.num_operands(), " operands");
  }
  RETURN_IF_ERROR(c.AllTensors());
  *n = c.num_operands() / 2;
  RETURN_IF_ERROR(c.ResultCount(*n));
  RETURN_IF_ERROR(c.RegionCount(1));
  for (size_t i = 0; i < *n; ++i) {
    if (c.operand(i).dims() != c.operand(0).dims()) {
      return c.Error("input ", i, " shape ", Dims(c.operand(i).dims()), " differs from input 0's ",
                     Dims(c.operand(0).dims()));
    }
    const ValueType& init = c.operand(*n + i);
    if (!init.dims().empty()) return c.Error("init value ", i, " must be a 0-d tensor");
    // The body may promote the element type (is_promotable): same kind, no narrower.
    ValueType scalar = init;
    const Computation* body = c.inst().regions()[0];
    if (body->parameters().size() == 2 * *n) {
      const ValueType& p = body->parameter(i)->type();
      const ElementType e = p.is_tensor() ? p.element_type() : init.element_type();
      const ElementType in = init.element_type();
      if (p.is_tensor() && p.dims().empty() && BitWidth(e) >= BitWidth(in) &&
          IsFloat(e) == IsFloat(in) && IsComplex(e) == IsComplex(in) &&
          IsInteger(e) == IsInteger(in)) {
        scalar = p;
      }
    }
    scalars->push_back(scalar);
  }
  std::vector<ValueType> params = *scalars;
  params.insert(params.end(), scalars->begin(), scalars->end());
  return c.RegionSignature(0, params, *scalars, "the body");
}

absl::Status Reduce(const OpChecker& c) {
  size_t n = 0;
  std::vector<ValueType> scalars;
  RETURN_IF_ERROR(InputsAndInits(c, &n, &scalars));
  absl::StatusOr<std::vector<int64_t>> dims = c.Ints("dimensions");
  if (!dims.ok()) return dims.status();
  const std::vector<int64_t>& in = c.operand(0).dims();
  RETURN_IF_ERROR(c.DimsInRange("dimensions", *dims, static_cast<int64_t>(in.size())));
  RETURN_IF_ERROR(c.DimsUnique("dimensions", *dims));
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    bool reduced = false;
    for (int64_t d : *dims) reduced |= d == static_cast<int64_t>(i);
    if (!reduced) out.push_back(in[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(c.ResultIs(i, TensorOf(scalars[i].element_type(), out)));
  }
  return absl::OkStatus();
}

absl::Status ReduceWindow(const OpChecker& c) {
  size_t n = 0;
  std::vector<ValueType> scalars;
  RETURN_IF_ERROR(InputsAndInits(c, &n, &scalars));
  const std::vector<int64_t>& in = c.operand(0).dims();
  const size_t r = in.size();
  absl::StatusOr<std::vector<int64_t>> window = c.Ints("window_dimensions");
  if (!window.ok()) return window.status();
  const std::vector<int64_t> strides = c.IntsOr("window_strides", std::vector<int64_t>(r, 1));
  const std::vector<int64_t> base = c.IntsOr("base_dilations", std::vector<int64_t>(r, 1));
  const std::vector<int64_t> wdil = c.IntsOr("window_dilations", std::vector<int64_t>(r, 1));
  const std::vector<int64_t> pad = c.IntsOr("padding", std::vector<int64_t>(2 * r, 0));
  RETURN_IF_ERROR(c.SizeIs("window_dimensions", *window, r, "the input rank"));
  RETURN_IF_ERROR(c.SizeIs("window_strides", strides, r, "the input rank"));
  RETURN_IF_ERROR(c.SizeIs("base_dilations", base, r, "the input rank"));
  RETURN_IF_ERROR(c.SizeIs("window_dilations", wdil, r, "the input rank"));
  RETURN_IF_ERROR(c.SizeIs("padding", pad, 2 * r, "a (low, high) pair per dimension"));
  std::vector<int64_t> out;
  for (size_t i = 0; i < r; ++i) {
    if ((*window)[i] <= 0) return c.Error("window_dimensions[", i, "] must be positive");
    if (strides[i] <= 0) return c.Error("window_strides[", i, "] must be positive");
    if (base[i] <= 0) return c.Error("base_dilations[", i, "] must be positive");
    if (wdil[i] <= 0) return c.Error("window_dilations[", i, "] must be positive");
    absl::StatusOr<int64_t> count = c.WindowCount(i, in[i], base[i], pad[2 * i], pad[2 * i + 1],
                                                  (*window)[i], wdil[i], strides[i]);
    if (!count.ok()) return count.status();
    out.push_back(*count);
  }
  for (size_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(c.ResultIs(i, TensorOf(scalars[i].element_type(), out)));
  }
  return absl::OkStatus();
}

// select_and_scatter C1-C8: the source holds one value per window of the operand; operand,
// source and init value share an element type.
absl::Status SelectAndScatterWindows(const OpChecker& c) {
  const ValueType& operand = c.operand(0);
  const ValueType& source = c.operand(1);
  const ElementType e = operand.element_type();
  if (source.element_type() != e) {
    return c.Error("source element type ", std::string(ElementTypeName(source.element_type())),
                   " differs from the operand's ", std::string(ElementTypeName(e)));
  }
  if (!c.operand(2).dims().empty() || c.operand(2).element_type() != e) {
    return c.Error("init_value element type ",
                   std::string(ElementTypeName(c.operand(2).element_type())),
                   " differs from the operand's ", std::string(ElementTypeName(e)),
                   c.operand(2).dims().empty() ? "" : " (or it is not a 0-d tensor)");
  }
  const std::vector<int64_t>& in = operand.dims();
  const size_t r = in.size();
  const std::vector<int64_t> window = c.IntsOr("window_dimensions", std::vector<int64_t>(r, 1));
  const std::vector<int64_t> strides = c.IntsOr("window_strides", std::vector<int64_t>(r, 1));
  const std::vector<int64_t> pad = c.IntsOr("padding", std::vector<int64_t>(2 * r, 0));
  RETURN_IF_ERROR(c.SizeIs("window_dimensions", window, r, "the operand's rank"));
  RETURN_IF_ERROR(c.SizeIs("window_strides", strides, r, "the operand's rank"));
  RETURN_IF_ERROR(c.SizeIs("padding", pad, 2 * r, "a (low, high) pair per dimension"));
  std::vector<int64_t> windows;
  for (size_t i = 0; i < r; ++i) {
    if (window[i] <= 0) return c.Error("window_dimensions[", i, "] must be positive");
    if (strides[i] <= 0) return c.Error("window_strides[", i, "] must be positive");
    absl::StatusOr<int64_t> count =
        c.WindowCount(i, in[i], 1, pad[2 * i], pad[2 * i + 1], window[i], 1, strides[i]);
    if (!count.ok()) return count.status();
    windows.push_back(*count);
  }
  if (source.dims() != windows) {
    return c.Error("source shape ", Dims(source.dims()), " does not match the operand's windows ",
                   Dims(windows));
  }
  return absl::OkStatus();
}

// rng_bit_generator C1 (the state comes back with its type) and an integer or float output.
// The state's type and size (C2: a 1-D ui64 of 2 or 3 words) are left to
// compiler/driver/implementation_limits.cc: upstream's verifier and test files allow any state.
absl::Status RngBitGenerator(const OpChecker& c) {
  RETURN_IF_ERROR(c.AllTensors());
  RETURN_IF_ERROR(c.ResultIs(0, c.operand(0)));
  const ElementType out = c.result(1).element_type();
  if (!IsInteger(out) && !IsFloat(out)) {
    return c.Error("output must be an integer or float tensor, got ", c.result(1).ToString());
  }
  return absl::OkStatus();
}

// rng C1-C3: bounds a and b are 0-d tensors of the result's element type (float for NORMAL);
// the shape operand lists the result's dimensions.
absl::Status Rng(const OpChecker& c) {
  // HLO's rng has no shape operand (its result type is the shape).
  if (c.num_operands() != 2) RETURN_IF_ERROR(c.OperandCount(3));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  const ElementType e = c.result().element_type();
  if (!IsInteger(e) && !IsFloat(e) && e != ElementType::kPred) {
    return c.Error("result ", c.result().ToString(), " must hold integers, booleans or floats");
  }
  for (size_t i = 0; i < 2; ++i) {
    const char* name = i == 0 ? "a" : "b";
    if (!c.operand(i).dims().empty()) {
      return c.Error(name, " must be a 0-d tensor, got ", c.operand(i).ToString());
    }
    if (c.operand(i).element_type() != e) {
      return c.Error(name, " element type ",
                     std::string(ElementTypeName(c.operand(i).element_type())),
                     " differs from the result's ", std::string(ElementTypeName(e)));
    }
  }
  const Attribute* dist = c.inst().attribute("rng_distribution");
  if (dist != nullptr && dist->kind == Attribute::Kind::kString) {
    if (dist->s != "UNIFORM" && dist->s != "NORMAL") {
      return c.Error("rng_distribution ", dist->s, " is not one of UNIFORM, NORMAL");
    }
    if (dist->s == "NORMAL" && !IsFloat(e)) {
      return c.Error("NORMAL needs a float result, got ", c.result().ToString());
    }
  }
  if (c.num_operands() == 2) return absl::OkStatus();
  const ValueType& shape = c.operand(2);
  if (!IsInteger(shape.element_type()) || shape.dims().size() != 1) {
    return c.Error("shape must be a 1-D integer tensor, got ", shape.ToString());
  }
  if (shape.dims()[0] != static_cast<int64_t>(c.result().dims().size())) {
    return c.Error("shape has ", shape.dims()[0], " elements but the result ",
                   c.result().ToString(), " has rank ", c.result().dims().size());
  }
  return absl::OkStatus();
}

absl::Status Sort(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCountAtLeast(1));
  RETURN_IF_ERROR(c.ResultCount(c.num_operands()));
  RETURN_IF_ERROR(c.RegionCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  const int64_t rank = static_cast<int64_t>(c.operand(0).dims().size());
  const int64_t dim = c.IntOr("dimension", -1);
  if (dim < -rank || dim >= rank) {
    return c.Error("dimension = ", dim, " is out of range for rank ", rank);
  }
  std::vector<ValueType> params;
  for (size_t i = 0; i < c.num_operands(); ++i) {
    if (c.operand(i).dims() != c.operand(0).dims()) return c.Error("inputs have different shapes");
    RETURN_IF_ERROR(c.ResultIs(i, c.operand(i)));
    params.push_back(Scalar(c.operand(i).element_type()));
    params.push_back(Scalar(c.operand(i).element_type()));
  }
  return c.RegionSignature(0, params, {Scalar(ElementType::kPred)}, "the comparator");
}

absl::Status While(const OpChecker& c) {
  RETURN_IF_ERROR(c.RegionCount(2));
  RETURN_IF_ERROR(c.ResultCount(c.num_operands()));
  std::vector<ValueType> types;
  for (size_t i = 0; i < c.num_operands(); ++i) {
    types.push_back(c.operand(i));
    RETURN_IF_ERROR(c.ResultIs(i, c.operand(i)));
  }
  RETURN_IF_ERROR(c.RegionSignature(0, types, {Scalar(ElementType::kPred)}, "cond"));
  return c.RegionSignature(1, types, types, "body");
}

// Every branch of an if/case takes the operands after the selector (none in StableHLO, whose
// branches capture what they read; the values captured, once made explicit) and returns the
// op's results.
absl::Status Branches(const OpChecker& c, size_t first_region) {
  std::vector<ValueType> params, results;
  for (size_t i = 1; i < c.inst().operands().size(); ++i) params.push_back(c.operand(i));
  for (size_t i = 0; i < c.num_results(); ++i) results.push_back(c.result(i));
  for (size_t r = first_region; r < c.inst().regions().size(); ++r) {
    RETURN_IF_ERROR(c.RegionSignature(r, params, results, absl::StrCat("branch ", r).c_str()));
  }
  return absl::OkStatus();
}

absl::Status ReplicaGroups(const OpChecker& c, const char* name, int64_t* group_size) {
  const Attribute* g = c.inst().attribute(name);
  if (g != nullptr && std::string_view(name) == "replica_groups" && IsMeshAxesReplicaGroups(*g)) {
    // Mesh axes: well formed, and over an inline mesh also resolvable. A symbol is resolved
    // against the module's meshes by the resolve-mesh-axes pass (upstream only requires that
    // the symbol exists, whatever it names).
    absl::StatusOr<MeshAxesReplicaGroups> axes = ReadMeshAxesReplicaGroups(*g);
    if (!axes.ok()) return c.Error(axes.status().message());
    if (axes->mesh_symbol.empty()) {
      absl::Status s = CheckMeshAxes(axes->mesh, axes->axes);
      if (!s.ok()) return c.Error("replica_groups: ", s.message());
    }
    if (group_size != nullptr) *group_size = 0;  // not needed by the rules below
    return absl::OkStatus();
  }
  if (g == nullptr || g->kind != Attribute::Kind::kLiteral || !g->literal ||
      g->literal->shape().rank() != 2) {
    return c.Error("missing 2-D ", name);
  }
  if (group_size != nullptr) *group_size = g->literal->shape().dim(1);
  return absl::OkStatus();
}

absl::Status Collective(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCountAtLeast(1));
  // collective_broadcast / collective_reduce with has_dynamic_root take the root index as a
  // last operand.
  const size_t n = (c.opcode() == Opcode::kCollectiveBroadcast ||
                    c.opcode() == Opcode::kCollectiveReduce) &&
                           c.BoolOr("has_dynamic_root", false)
                       ? c.num_operands() - 1
                       : c.num_operands();
  RETURN_IF_ERROR(c.ResultCount(n));
  RETURN_IF_ERROR(c.AllTensors());
  // With a channel and without global device ids, groups span partitions too
  // (cross_replica_and_partition): the group size is then a multiple of the listed one.
  const bool exact_group =
      c.IntOr("channel_id", 0) <= 0 || c.BoolOr("use_global_device_ids", false);
  int64_t group = 0;
  if (c.opcode() == Opcode::kCollectivePermute) {
    RETURN_IF_ERROR(ReplicaGroups(c, "source_target_pairs", &group));
    if (group != 2) return c.Error("source_target_pairs must have shape [N, 2]");
  } else {
    RETURN_IF_ERROR(ReplicaGroups(c, "replica_groups", &group));
  }
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> out = c.operand(i).dims();
    const int64_t rank = static_cast<int64_t>(out.size());
    if (c.opcode() == Opcode::kAllGather || c.opcode() == Opcode::kReduceScatter) {
      const char* attr = c.opcode() == Opcode::kAllGather ? "all_gather_dim" : "scatter_dimension";
      absl::StatusOr<int64_t> dim = c.Int(attr);
      if (!dim.ok()) return dim.status();
      RETURN_IF_ERROR(c.DimInRange(attr, 0, *dim, rank));
      // As upstream's verifier: the group size is not static (an empty list means all
      // processes; with a channel, groups also span partitions), so the gathered (scattered)
      // size need only be a multiple (a divisor) of the operand's; other dimensions match.
      const ValueType& res = c.result(i);
      if (!res.is_tensor() || res.dims().size() != out.size()) {
        return c.Error("result ", i, " ", res.ToString(), " must have the operand's rank ", rank);
      }
      for (int64_t k = 0; k < rank; ++k) {
        const int64_t in = out[k], got = res.dims()[k];
        const bool ok = k != *dim ? in == got
                        : c.opcode() == Opcode::kAllGather
                            ? (in == 0 ? got == 0 : got % in == 0)
                            : (got == 0 ? in == 0 : in % got == 0);
        if (!ok) {
          return c.Error("result ", i, " dimension ", k, " has size ", got,
                         k != *dim ? absl::StrCat(", expected ", in)
                         : c.opcode() == Opcode::kAllGather
                             ? absl::StrCat(", expected a multiple of ", in)
                             : absl::StrCat(", expected a divisor of ", in));
        }
      }
      if (c.opcode() == Opcode::kAllGather && res.element_type() != c.operand(i).element_type()) {
        return c.Error("result ", i, " element type differs from the operand's");
      }
      (void)group;
      (void)exact_group;
    } else if (c.opcode() == Opcode::kAllToAll) {
      absl::StatusOr<int64_t> split = c.Int("split_dimension");
      if (!split.ok()) return split.status();
      absl::StatusOr<int64_t> concat = c.Int("concat_dimension");
      if (!concat.ok()) return concat.status();
      absl::StatusOr<int64_t> count = c.Int("split_count");
      if (!count.ok()) return count.status();
      RETURN_IF_ERROR(c.DimInRange("split_dimension", 0, *split, rank));
      RETURN_IF_ERROR(c.DimInRange("concat_dimension", 0, *concat, rank));
      if (*count <= 0 || out[*split] % *count != 0) {
        return c.Error("split_count = ", *count, " does not divide dimension ", *split,
                       " of size ", out[*split]);
      }
      out[*split] /= *count;
      out[*concat] *= *count;
      RETURN_IF_ERROR(c.ResultIs(i, TensorOf(c.operand(i).element_type(), out)));
    } else if (c.opcode() == Opcode::kAllReduce || c.opcode() == Opcode::kCollectiveReduce) {
      RETURN_IF_ERROR(c.ResultDims(i, c.operand(i).dims()));
    } else {
      RETURN_IF_ERROR(c.ResultIs(i, c.operand(i)));
    }
  }
  if (c.opcode() == Opcode::kAllReduce || c.opcode() == Opcode::kReduceScatter ||
      c.opcode() == Opcode::kCollectiveReduce) {
    RETURN_IF_ERROR(c.RegionCount(1));
    // The computation may promote the element type (is_promotable): same kind, no narrower.
    const Computation* body = c.inst().regions()[0];
    const ElementType in = c.operand(0).element_type();
    const ElementType e = body->parameters().empty() ? in : body->parameter(0)->type().element_type();
    const bool promotable = BitWidth(e) >= BitWidth(in) && IsFloat(e) == IsFloat(in) &&
                            IsComplex(e) == IsComplex(in) && IsInteger(e) == IsInteger(in);
    if (!promotable) {
      return c.Error("the reduction computation's element type ", std::string(ElementTypeName(e)),
                     " is not a promotion of the operand's ", std::string(ElementTypeName(in)));
    }
    RETURN_IF_ERROR(c.RegionSignature(0, {Scalar(e), Scalar(e)}, {Scalar(e)},
                                      "the reduction computation"));
    for (size_t i = 0; i < c.num_results(); ++i) {
      if (c.result(i).element_type() != e) {
        return c.Error("result ", i, " element type must be the computation's ",
                       std::string(ElementTypeName(e)));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status BatchNorm(const OpChecker& c) {
  // inference: (operand, scale, offset, mean, variance) -> output; training: (operand, scale,
  // offset) -> (output, mean, variance); grad: (operand, scale, mean, variance, grad_output) ->
  // (grad_operand, grad_scale, grad_offset).
  const bool inference = c.opcode() == Opcode::kBatchNormInference;
  const bool grad = c.opcode() == Opcode::kBatchNormGrad;
  RETURN_IF_ERROR(c.OperandCount(inference || grad ? 5 : 3));
  RETURN_IF_ERROR(c.ResultCount(inference ? 1 : 3));
  RETURN_IF_ERROR(c.AllTensors());
  if (!IsFloat(c.operand(0).element_type())) {
    return c.Error("operand ", c.operand(0).ToString(), " must have a float element type");
  }
  absl::StatusOr<int64_t> feature = c.Int("feature_index");
  if (!feature.ok()) return feature.status();
  const std::vector<int64_t>& in = c.operand(0).dims();
  RETURN_IF_ERROR(c.DimInRange("feature_index", 0, *feature, static_cast<int64_t>(in.size())));
  const ValueType vec = TensorOf(c.operand(0).element_type(), {in[*feature]});
  for (size_t i = 1; i < c.num_operands(); ++i) {
    const ValueType& want = grad && i == 4 ? c.operand(0) : vec;  // grad_output: the operand's
    if (c.operand(i) != want) {
      return c.Error("operand ", i, " must be ", want.ToString(), ", got ", c.operand(i).ToString());
    }
  }
  RETURN_IF_ERROR(c.ResultIs(0, c.operand(0)));
  for (size_t i = 1; i < c.num_results(); ++i) RETURN_IF_ERROR(c.ResultIs(i, vec));
  return absl::OkStatus();
}


// async_start (spec C1-C4, and upstream's rule that the body returns one value): a body of one
// collective or slice op and a return, taking the operands' types; the result is a future of
// what the body returns.
absl::Status AsyncStart(const OpChecker& c) {
  RETURN_IF_ERROR(c.RegionCount(1));
  RETURN_IF_ERROR(c.ResultCount(1));
  for (size_t i = 0; i < c.num_operands(); ++i) RETURN_IF_ERROR(c.TensorOperand(i));
  const Computation& body = *c.inst().regions()[0];
  const auto& insts = body.instructions();
  if (insts.size() != 2) {
    return c.Error("the body must hold exactly one operation and a return, but holds ",
                   insts.size(), " operations");
  }
  switch (insts[0]->opcode()) {
    case Opcode::kAllGather:
    case Opcode::kAllReduce:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectiveReduce:
    case Opcode::kReduceScatter:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
      break;
    default:
      return c.Error("the body's operation must be a collective or a slice, not stablehlo.",
                     std::string(OpcodeName(insts[0]->opcode())));
  }
  if (body.parameters().size() != c.num_operands()) {
    return c.Error("passes ", c.num_operands(), " operands to a body that takes ",
                   body.parameters().size());
  }
  for (size_t i = 0; i < c.num_operands(); ++i) {
    if (body.parameter(i)->type() != c.operand(i)) {
      return c.Error("operand ", i, " has type ", c.operand(i).ToString(),
                     " but the body takes ", body.parameter(i)->type().ToString());
    }
  }
  const std::vector<ValueType> returned = ResultTypesOf(body);
  if (returned.size() != 1) {
    return c.Error("the body must return exactly one value, but returns ", returned.size());
  }
  return c.ResultIs(0, ValueType::Future(returned));
}

// async_done (spec C1): future<T> -> T.
absl::Status AsyncDone(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(1));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.RegionCount(0));
  const ValueType& future = c.operand(0);
  if (!future.is_future()) {
    return c.Error("operand must be a !stablehlo.future, got ", future.ToString());
  }
  if (future.elements().size() != 1) {
    return c.Error("the future must hold exactly one value, but holds ", future.elements().size());
  }
  return c.ResultIs(0, future.elements()[0]);
}

// custom_call: any operands and results, except the special targets of buffers (spec: "(XLA
// GPU Support) Special custom_call targets"): CreateBuffer () -> buffer, Pin tensor -> buffer,
// Unpin buffer -> tensor, of one shape.
absl::Status CustomCall(const OpChecker& c) {
  absl::StatusOr<std::string> target = c.String("call_target_name");
  if (!target.ok()) return target.status();
  const bool create = *target == "CreateBuffer", pin = *target == "Pin", unpin = *target == "Unpin";
  if (!create && !pin && !unpin) return absl::OkStatus();
  RETURN_IF_ERROR(c.OperandCount(create ? 0 : 1));
  RETURN_IF_ERROR(c.ResultCount(1));
  const ValueType& result = c.result(0);
  if (unpin) {
    if (!c.operand(0).is_buffer() || !result.is_tensor()) {
      return c.Error("Unpin takes a buffer and returns a tensor, not ", c.operand(0).ToString(),
                     " -> ", result.ToString());
    }
  } else if (!result.is_buffer() || (pin && !c.operand(0).is_tensor())) {
    return c.Error(*target, " returns a buffer", pin ? " from a tensor" : "", ", not ",
                   pin ? c.operand(0).ToString() + " -> " : std::string(), result.ToString());
  }
  if (!create && !c.operand(0).shape().EqualsIgnoringLayout(result.shape())) {
    return c.Error(*target, " keeps the shape: ", c.operand(0).ToString(), " -> ",
                   result.ToString());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyControl(const OpChecker& c) {
  switch (c.opcode()) {
    case Opcode::kReduce: return Reduce(c);
    case Opcode::kReduceWindow: return ReduceWindow(c);
    case Opcode::kSort: return Sort(c);
    case Opcode::kWhile: return While(c);
    case Opcode::kAsyncStart: return AsyncStart(c);
    case Opcode::kAsyncDone: return AsyncDone(c);
    case Opcode::kIf: {
      RETURN_IF_ERROR(c.OperandCountAtLeast(1));
      RETURN_IF_ERROR(c.RegionCount(2));
      if (c.operand(0) != Scalar(ElementType::kPred)) {
        return c.Error("pred must be tensor<i1>, got ", c.operand(0).ToString());
      }
      return Branches(c, 0);
    }
    case Opcode::kCase: {
      RETURN_IF_ERROR(c.OperandCountAtLeast(1));
      if (c.inst().regions().empty()) return c.Error("needs at least one branch");
      if (c.operand(0) != Scalar(ElementType::kS32)) {
        return c.Error("index must be tensor<i32>, got ", c.operand(0).ToString());
      }
      return Branches(c, 0);
    }
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectiveReduce: return Collective(c);
    case Opcode::kSelectAndScatter: {
      RETURN_IF_ERROR(c.OperandCount(3));
      RETURN_IF_ERROR(c.RegionCount(2));
      RETURN_IF_ERROR(c.AllTensors());
      RETURN_IF_ERROR(SelectAndScatterWindows(c));
      const ValueType s = Scalar(c.operand(0).element_type());
      RETURN_IF_ERROR(c.RegionSignature(0, {s, s}, {Scalar(ElementType::kPred)}, "select"));
      ValueType init = c.operand(2);
      const Computation* scatter = c.inst().regions()[1];
      if (!scatter->parameters().empty() && scatter->parameter(0)->type().is_tensor()) {
        // The scatter computation may promote the element type (is_promotable).
        const ElementType p = scatter->parameter(0)->type().element_type();
        const ElementType e = init.element_type();
        if (BitWidth(p) >= BitWidth(e) && IsFloat(p) == IsFloat(e) &&
            IsComplex(p) == IsComplex(e) && IsInteger(p) == IsInteger(e)) {
          init = Scalar(p);
        }
      }
      RETURN_IF_ERROR(c.RegionSignature(1, {init, init}, {init}, "scatter"));
      return c.ResultIs(0, TensorOf(init.element_type(), c.operand(0).dims()));
    }
    case Opcode::kRng: return Rng(c);
    case Opcode::kRngBitGenerator: {
      RETURN_IF_ERROR(c.OperandCount(1));
      RETURN_IF_ERROR(c.ResultCount(2));
      absl::StatusOr<std::string> alg = c.String("rng_algorithm");
      if (!alg.ok()) return alg.status();
      if (*alg != "DEFAULT" && *alg != "THREE_FRY" && *alg != "PHILOX") {
        return c.Error("rng_algorithm ", *alg, " is not one of DEFAULT, THREE_FRY, PHILOX");
      }
      return RngBitGenerator(c);
    }
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormGrad: return BatchNorm(c);
    case Opcode::kCustomCall: return CustomCall(c);
    default: return absl::OkStatus();
  }
}

}  // namespace ember::ir::verifier
