// The attribute table of every StableHLO op Ember imports: spec names, value kinds, and the
// defaults VHLO materializes (so text that omits an attribute and an artifact that spells the
// default out import alike). Also the flattening of the text form's structured attributes
// (#stablehlo.dot / conv / gather / scatter, channel_handle, dot_algorithm, result_accuracy).
//
// Default policy: attributes with a concrete default (strides of 1, zero padding, false flags,
// precision DEFAULT) are always present in the IR; attributes whose default means "unspecified"
// (compare_type NOTYPE, result_accuracy DEFAULT, no dot algorithm, empty custom_call lists) are
// present only when they say something.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/import/import_internal.h"
#include "compiler/ir/mesh.h"

namespace ember::frontend::importer {
namespace {

using IrAttr = ir::Attribute;
using ir::Opcode;

enum class Intent {
  kInt, kInts, kPairs, kBool, kBools, kFloat, kString, kStrings, kLiteral, kGroups, kDict,
  kAny, kApiVersion, kLayouts, kTilings, kAliases,
};
enum class Policy {
  kRequired,          // error when absent
  kDefault,           // the default when absent
  kDefaultWhenEmpty,  // the default when absent or empty (precision_config = [])
  kOmitDefault,       // dropped when absent or equal to the default
  kOmitEmpty,         // dropped when absent or empty ("", [], {})
  kOptional,          // kept when present
};

struct DefaultCtx {
  const std::vector<ir::ValueType>& operands;
  const ir::AttributeMap& attrs;  // the attributes given
};
using DefaultFn = IrAttr (*)(const DefaultCtx&);

struct AttrSpec {
  const char* name;
  Intent intent;
  Policy policy;
  DefaultFn def = nullptr;
};

int64_t Spatial(const DefaultCtx& c) {
  const IrAttr* a = c.attrs.Find("input_spatial_dimensions");
  return a == nullptr ? 0 : static_cast<int64_t>(a->ints.size());
}
int64_t Rank0(const DefaultCtx& c) {
  return c.operands.empty() || !c.operands[0].is_tensor()
             ? 0
             : static_cast<int64_t>(c.operands[0].dims().size());
}
IrAttr False(const DefaultCtx&) { return IrAttr::Bool(false); }
IrAttr Zero(const DefaultCtx&) { return IrAttr::Int(0); }
IrAttr One(const DefaultCtx&) { return IrAttr::Int(1); }
IrAttr MinusOne(const DefaultCtx&) { return IrAttr::Int(-1); }
IrAttr NoInts(const DefaultCtx&) { return IrAttr::Ints({}); }
IrAttr EmptyString(const DefaultCtx&) { return IrAttr::String(""); }
IrAttr EmptyDict(const DefaultCtx&) { return IrAttr::Dict({}); }
IrAttr NoType(const DefaultCtx&) { return IrAttr::String("NOTYPE"); }
IrAttr Precision(const DefaultCtx&) {
  return IrAttr::List({IrAttr::String("DEFAULT"), IrAttr::String("DEFAULT")});
}
IrAttr ConvOnes(const DefaultCtx& c) { return IrAttr::Ints(std::vector<int64_t>(Spatial(c), 1)); }
IrAttr ConvPads(const DefaultCtx& c) {
  return IrAttr::Ints(std::vector<int64_t>(2 * Spatial(c), 0));
}
IrAttr ConvNoReversal(const DefaultCtx& c) {
  return IrAttr::Bools(std::vector<bool>(Spatial(c), false));
}
IrAttr RankOnes(const DefaultCtx& c) { return IrAttr::Ints(std::vector<int64_t>(Rank0(c), 1)); }
IrAttr RankPads(const DefaultCtx& c) {
  return IrAttr::Ints(std::vector<int64_t>(2 * Rank0(c), 0));
}
IrAttr DefaultAccuracy(const DefaultCtx&) {
  return IrAttr::Dict({{"atol", IrAttr::Float(0)},
                          {"rtol", IrAttr::Float(0)},
                          {"ulps", IrAttr::Int(0)},
                          {"mode", IrAttr::String("DEFAULT")}});
}

const std::vector<AttrSpec> kNoAttrs = {};
const std::vector<AttrSpec> kAccuracy = {
    {"result_accuracy", Intent::kAny, Policy::kOmitDefault, DefaultAccuracy}};
const AttrSpec kReplicaGroups = {"replica_groups", Intent::kGroups, Policy::kRequired};
const AttrSpec kChannelId = {"channel_id", Intent::kInt, Policy::kDefault, Zero};
const AttrSpec kGlobalIds = {"use_global_device_ids", Intent::kBool, Policy::kDefault, False};
const AttrSpec kPrecision = {"precision_config", Intent::kStrings, Policy::kDefaultWhenEmpty,
                             Precision};

std::vector<AttrSpec> ConvSpecs(bool with_padding) {
  std::vector<AttrSpec> s = {
      {"window_strides", Intent::kInts, Policy::kDefault, ConvOnes},
      {"padding", Intent::kPairs, Policy::kDefault, ConvPads},
      {"lhs_dilation", Intent::kInts, Policy::kDefault, ConvOnes},
      {"rhs_dilation", Intent::kInts, Policy::kDefault, ConvOnes},
      {"window_reversal", Intent::kBools, Policy::kDefault, ConvNoReversal},
      {"input_batch_dimension", Intent::kInt, Policy::kRequired},
      {"input_feature_dimension", Intent::kInt, Policy::kRequired},
      {"input_spatial_dimensions", Intent::kInts, Policy::kRequired},
      {"kernel_input_feature_dimension", Intent::kInt, Policy::kRequired},
      {"kernel_output_feature_dimension", Intent::kInt, Policy::kRequired},
      {"kernel_spatial_dimensions", Intent::kInts, Policy::kRequired},
      {"output_batch_dimension", Intent::kInt, Policy::kRequired},
      {"output_feature_dimension", Intent::kInt, Policy::kRequired},
      {"output_spatial_dimensions", Intent::kInts, Policy::kRequired},
      {"feature_group_count", Intent::kInt, Policy::kDefault, One},
      {"batch_group_count", Intent::kInt, Policy::kDefault, One},
      kPrecision,
  };
  if (!with_padding) s.erase(s.begin() + 1);
  return s;
}

std::vector<AttrSpec> GatherSpecs(bool with_slice_sizes) {
  std::vector<AttrSpec> s = {
      {"offset_dims", Intent::kInts, Policy::kRequired},
      {"collapsed_slice_dims", Intent::kInts, Policy::kDefault, NoInts},
      {"operand_batching_dims", Intent::kInts, Policy::kDefault, NoInts},
      {"start_indices_batching_dims", Intent::kInts, Policy::kDefault, NoInts},
      {"start_index_map", Intent::kInts, Policy::kRequired},
      {"index_vector_dim", Intent::kInt, Policy::kRequired},
      {"slice_sizes", Intent::kInts, Policy::kRequired},
      {"indices_are_sorted", Intent::kBool, Policy::kDefault, False},
  };
  if (!with_slice_sizes) s.erase(s.begin() + 6);
  return s;
}

const absl::flat_hash_map<Opcode, std::vector<AttrSpec>>& Specs() {
  static const auto* specs = [] {
    auto* m = new absl::flat_hash_map<Opcode, std::vector<AttrSpec>>();
    for (Opcode op : {Opcode::kCbrt, Opcode::kCosine, Opcode::kExponential,
                      Opcode::kExponentialMinusOne, Opcode::kLog, Opcode::kLogPlusOne,
                      Opcode::kLogistic, Opcode::kRsqrt, Opcode::kSine, Opcode::kSqrt, Opcode::kTan,
                      Opcode::kTanh}) {
      (*m)[op] = kAccuracy;
    }
    (*m)[Opcode::kAllGather] = {{"all_gather_dim", Intent::kInt, Policy::kRequired},
                                kReplicaGroups, kChannelId, kGlobalIds};
    (*m)[Opcode::kAllReduce] = {kReplicaGroups, kChannelId, kGlobalIds};
    (*m)[Opcode::kReduceScatter] = {{"scatter_dimension", Intent::kInt, Policy::kRequired},
                                    kReplicaGroups, kChannelId, kGlobalIds};
    (*m)[Opcode::kAllToAll] = {{"split_dimension", Intent::kInt, Policy::kRequired},
                               {"concat_dimension", Intent::kInt, Policy::kRequired},
                               {"split_count", Intent::kInt, Policy::kRequired},
                               kReplicaGroups, kChannelId};
    (*m)[Opcode::kCollectiveBroadcast] = {
        kReplicaGroups, kChannelId,
        {"has_dynamic_root", Intent::kBool, Policy::kOmitDefault, False}};
    (*m)[Opcode::kCollectiveReduce] = {
        kReplicaGroups, kChannelId, kGlobalIds,
        {"has_dynamic_root", Intent::kBool, Policy::kOmitDefault, False}};
    (*m)[Opcode::kCollectivePermute] = {
        {"source_target_pairs", Intent::kGroups, Policy::kRequired}, kChannelId};
    for (Opcode op : {Opcode::kBatchNormGrad, Opcode::kBatchNormInference,
                      Opcode::kBatchNormTraining}) {
      (*m)[op] = {{"epsilon", Intent::kFloat, Policy::kRequired},
                  {"feature_index", Intent::kInt, Policy::kRequired}};
    }
    (*m)[Opcode::kBroadcast] = {{"broadcast_sizes", Intent::kInts, Policy::kRequired}};
    (*m)[Opcode::kBroadcastInDim] = {{"broadcast_dimensions", Intent::kInts, Policy::kRequired}};
    (*m)[Opcode::kCholesky] = {{"lower", Intent::kBool, Policy::kDefault, False}};
    (*m)[Opcode::kCompare] = {{"comparison_direction", Intent::kString, Policy::kRequired},
                              {"compare_type", Intent::kString, Policy::kOmitDefault, NoType}};
    (*m)[Opcode::kComposite] = {{"name", Intent::kString, Policy::kRequired},
                                {"composite_attributes", Intent::kDict, Policy::kDefault,
                                 EmptyDict},
                                {"version", Intent::kInt, Policy::kDefault, Zero}};
    (*m)[Opcode::kConcatenate] = {{"dimension", Intent::kInt, Policy::kRequired}};
    (*m)[Opcode::kConstant] = {{"value", Intent::kLiteral, Policy::kRequired}};
    (*m)[Opcode::kConvolution] = ConvSpecs(true);
    (*m)[Opcode::kDynamicConv] = ConvSpecs(false);
    (*m)[Opcode::kCustomCall] = {
        {"call_target_name", Intent::kString, Policy::kRequired},
        {"has_side_effect", Intent::kBool, Policy::kDefault, False},
        {"backend_config", Intent::kAny, Policy::kOmitEmpty},
        {"api_version", Intent::kApiVersion, Policy::kDefault, One},
        {"called_computations", Intent::kStrings, Policy::kOmitEmpty},
        {"operand_layouts", Intent::kLayouts, Policy::kOmitEmpty},
        {"result_layouts", Intent::kLayouts, Policy::kOmitEmpty},
        {"output_operand_aliases", Intent::kAliases, Policy::kOmitEmpty},
        {"result_tilings", Intent::kTilings, Policy::kOmitEmpty},
        // JAX's @shape_assertion custom calls carry their message as an extra attribute.
        {"error_message", Intent::kString, Policy::kOmitEmpty}};
    (*m)[Opcode::kDot] = {kPrecision};
    (*m)[Opcode::kDotGeneral] = {
        {"lhs_batching_dimensions", Intent::kInts, Policy::kDefault, NoInts},
        {"rhs_batching_dimensions", Intent::kInts, Policy::kDefault, NoInts},
        {"lhs_contracting_dimensions", Intent::kInts, Policy::kDefault, NoInts},
        {"rhs_contracting_dimensions", Intent::kInts, Policy::kDefault, NoInts},
        kPrecision,
        {"algorithm", Intent::kAny, Policy::kOptional}};
    (*m)[Opcode::kDynamicBroadcastInDim] = {
        {"broadcast_dimensions", Intent::kInts, Policy::kRequired},
        {"known_expanding_dimensions", Intent::kInts, Policy::kOmitEmpty},
        {"known_nonexpanding_dimensions", Intent::kInts, Policy::kOmitEmpty}};
    (*m)[Opcode::kGather] = GatherSpecs(true);
    (*m)[Opcode::kDynamicGather] = GatherSpecs(false);
    (*m)[Opcode::kDynamicIota] = {{"iota_dimension", Intent::kInt, Policy::kRequired}};
    (*m)[Opcode::kIota] = {{"iota_dimension", Intent::kInt, Policy::kRequired}};
    (*m)[Opcode::kDynamicSlice] = {{"slice_sizes", Intent::kInts, Policy::kRequired}};
    (*m)[Opcode::kEinsum] = {{"einsum_config", Intent::kString, Policy::kRequired}};
    (*m)[Opcode::kUnaryEinsum] = {{"einsum_config", Intent::kString, Policy::kRequired}};
    (*m)[Opcode::kFft] = {{"fft_type", Intent::kString, Policy::kRequired},
                          {"fft_length", Intent::kInts, Policy::kRequired}};
    (*m)[Opcode::kGetDimensionSize] = {{"dimension", Intent::kInt, Policy::kRequired}};
    (*m)[Opcode::kSetDimensionSize] = {{"dimension", Intent::kInt, Policy::kRequired}};
    (*m)[Opcode::kGetTupleElement] = {{"index", Intent::kInt, Policy::kRequired}};
    (*m)[Opcode::kInfeed] = {{"infeed_config", Intent::kString, Policy::kDefault, EmptyString},
                             {"layout", Intent::kAny, Policy::kOmitEmpty}};
    (*m)[Opcode::kOutfeed] = {{"outfeed_config", Intent::kString, Policy::kDefault, EmptyString}};
    (*m)[Opcode::kMap] = {{"dimensions", Intent::kInts, Policy::kRequired}};
    (*m)[Opcode::kPad] = {{"edge_padding_low", Intent::kInts, Policy::kRequired},
                          {"edge_padding_high", Intent::kInts, Policy::kRequired},
                          {"interior_padding", Intent::kInts, Policy::kRequired}};
    for (Opcode op : {Opcode::kSend, Opcode::kRecv}) {
      (*m)[op] = {kChannelId,
                  {"channel_type", Intent::kInt, Policy::kDefault, Zero},
                  {"is_host_transfer", Intent::kBool, Policy::kDefault, False},
                  {"source_target_pairs", Intent::kGroups, Policy::kOmitEmpty}};
    }
    (*m)[Opcode::kReduce] = {{"dimensions", Intent::kInts, Policy::kRequired}};
    (*m)[Opcode::kReducePrecision] = {{"exponent_bits", Intent::kInt, Policy::kRequired},
                                      {"mantissa_bits", Intent::kInt, Policy::kRequired}};
    (*m)[Opcode::kReduceWindow] = {
        {"window_dimensions", Intent::kInts, Policy::kRequired},
        {"window_strides", Intent::kInts, Policy::kDefault, RankOnes},
        {"base_dilations", Intent::kInts, Policy::kDefault, RankOnes},
        {"window_dilations", Intent::kInts, Policy::kDefault, RankOnes},
        {"padding", Intent::kPairs, Policy::kDefault, RankPads}};
    (*m)[Opcode::kReverse] = {{"dimensions", Intent::kInts, Policy::kRequired}};
    (*m)[Opcode::kRng] = {{"rng_distribution", Intent::kString, Policy::kRequired}};
    (*m)[Opcode::kRngBitGenerator] = {{"rng_algorithm", Intent::kString, Policy::kRequired}};
    (*m)[Opcode::kScatter] = {
        {"update_window_dims", Intent::kInts, Policy::kRequired},
        {"inserted_window_dims", Intent::kInts, Policy::kDefault, NoInts},
        {"input_batching_dims", Intent::kInts, Policy::kDefault, NoInts},
        {"scatter_indices_batching_dims", Intent::kInts, Policy::kDefault, NoInts},
        {"scatter_dims_to_operand_dims", Intent::kInts, Policy::kRequired},
        {"index_vector_dim", Intent::kInt, Policy::kRequired},
        {"indices_are_sorted", Intent::kBool, Policy::kDefault, False},
        {"unique_indices", Intent::kBool, Policy::kDefault, False}};
    (*m)[Opcode::kSelectAndScatter] = {
        {"window_dimensions", Intent::kInts, Policy::kDefault, RankOnes},
        {"window_strides", Intent::kInts, Policy::kDefault, RankOnes},
        {"padding", Intent::kPairs, Policy::kDefault, RankPads}};
    (*m)[Opcode::kSlice] = {{"start_indices", Intent::kInts, Policy::kRequired},
                            {"limit_indices", Intent::kInts, Policy::kRequired},
                            {"strides", Intent::kInts, Policy::kRequired}};
    (*m)[Opcode::kSort] = {{"dimension", Intent::kInt, Policy::kDefault, MinusOne},
                           {"is_stable", Intent::kBool, Policy::kDefault, False}};
    (*m)[Opcode::kTorchIndexSelect] = {{"dim", Intent::kInt, Policy::kRequired},
                                       {"batch_dims", Intent::kInt, Policy::kRequired}};
    (*m)[Opcode::kTranspose] = {{"permutation", Intent::kInts, Policy::kRequired}};
    (*m)[Opcode::kTriangularSolve] = {{"left_side", Intent::kBool, Policy::kRequired},
                                      {"lower", Intent::kBool, Policy::kRequired},
                                      {"unit_diagonal", Intent::kBool, Policy::kRequired},
                                      {"transpose_a", Intent::kString, Policy::kRequired}};
    return m;
  }();
  return *specs;
}

bool IsEmpty(const IrAttr& a) {
  switch (a.kind) {
    case IrAttr::Kind::kString: return a.s.empty();
    case IrAttr::Kind::kInts: return a.ints.empty();
    case IrAttr::Kind::kBools: return a.bools.empty();
    case IrAttr::Kind::kList: return a.list.empty();
    case IrAttr::Kind::kDict: return a.dict.empty();
    case IrAttr::Kind::kLiteral: return a.literal && a.literal->shape().element_count() == 0;
    default: return false;
  }
}

const DialectParam* Param(const Attribute& attr, const char* name) {
  for (const DialectParam& p : attr.params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// A dialect attribute's parameter read as a string or an integer, whether the text parser
// stored it as a plain value or, as VHLO does, as a nested attribute.
absl::StatusOr<std::string> StringParam(const Attribute& attr, const char* name) {
  const DialectParam* p = Param(attr, name);
  if (p != nullptr && p->kind == DialectParam::Kind::kString) return p->s;
  if (p != nullptr && p->kind == DialectParam::Kind::kAttr && p->attr) return ReadString(*p->attr);
  return absl::InvalidArgumentError(
      absl::StrCat(PrintAttribute(attr), " needs a string '", name, "'"));
}
absl::StatusOr<int64_t> IntParam(const Attribute& attr, const char* name) {
  const DialectParam* p = Param(attr, name);
  if (p != nullptr && p->kind == DialectParam::Kind::kInt) return p->i;
  if (p != nullptr && p->kind == DialectParam::Kind::kAttr && p->attr) return ReadInt(*p->attr);
  return absl::InvalidArgumentError(
      absl::StrCat(PrintAttribute(attr), " needs an integer '", name, "'"));
}
bool IsDialectAttr(const Attribute& attr, const char* stablehlo_name, const char* vhlo_name) {
  return attr.kind == AttrKind::kDialect &&
         ((attr.dialect == "stablehlo" && attr.name == stablehlo_name) || IsVhlo(attr, vhlo_name));
}

// #stablehlo.replica_group_mesh_axes / #vhlo.replica_group_mesh_axes_v1 -> the IR's mesh-axes
// dictionary (compiler/ir/mesh.h). The mesh is a symbol (@mesh; VHLO spells it as a string) or
// an inline #stablehlo.mesh; each axis a name, with its sub-axis info when it has one.
absl::StatusOr<IrAttr> MeshAxesGroupsAttribute(const Attribute& attr, const ImportContext& ctx) {
  const DialectParam* mesh = Param(attr, "mesh");
  const DialectParam* axes = Param(attr, "axes");
  if (mesh == nullptr || !mesh->attr || axes == nullptr || !axes->attr) {
    return absl::InvalidArgumentError(
        absl::StrCat(PrintAttribute(attr), " needs a mesh and a list of axes"));
  }
  IrAttr mesh_ir;
  if (IsDialectAttr(*mesh->attr, "mesh", "mesh_v1")) {
    ir::Mesh m;
    const DialectParam* mesh_axes = Param(*mesh->attr, "axes");
    if (mesh_axes == nullptr || !mesh_axes->attr) {
      return absl::InvalidArgumentError(
          absl::StrCat(PrintAttribute(*mesh->attr), " needs a list of axes"));
    }
    EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> list, ReadArray(*mesh_axes->attr));
    for (const AttrPtr& a : list) {
      if (!a || !IsDialectAttr(*a, "mesh_axis", "mesh_axis_v1")) {
        return absl::InvalidArgumentError("a mesh's axes must be #stablehlo.mesh_axis");
      }
      EMBER_ASSIGN_OR_RETURN(std::string name, StringParam(*a, "name"));
      EMBER_ASSIGN_OR_RETURN(int64_t size, IntParam(*a, "size"));
      m.axes.push_back(std::move(name));
      m.sizes.push_back(size);
    }
    if (const DialectParam* ids = Param(*mesh->attr, "device_ids"); ids != nullptr && ids->attr) {
      EMBER_ASSIGN_OR_RETURN(m.device_ids, ReadInts(*ids->attr, ctx));
    }
    mesh_ir = ir::MeshAttribute(m);
  } else {
    EMBER_ASSIGN_OR_RETURN(std::string symbol, ReadString(*mesh->attr));
    mesh_ir = IrAttr::String(std::move(symbol));
  }
  std::vector<ir::MeshAxisRef> refs;
  EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> list, ReadArray(*axes->attr));
  for (const AttrPtr& a : list) {
    if (!a || !IsDialectAttr(*a, "axis_ref", "axis_ref_v1")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the axes of mesh-axes replica groups must be #stablehlo.axis_ref, got ",
          a ? PrintAttribute(*a) : std::string("null")));
    }
    ir::MeshAxisRef ref;
    EMBER_ASSIGN_OR_RETURN(ref.name, StringParam(*a, "name"));
    if (const DialectParam* sub = Param(*a, "sub_axis_info"); sub != nullptr && sub->attr) {
      EMBER_ASSIGN_OR_RETURN(ref.pre_size, IntParam(*sub->attr, "pre_size"));
      EMBER_ASSIGN_OR_RETURN(ref.size, IntParam(*sub->attr, "size"));
      if (ref.size < 1) {
        return absl::InvalidArgumentError(absl::StrCat("sub-axis size ", ref.size, " of \"",
                                                       ref.name, "\" must be positive"));
      }
    }
    refs.push_back(std::move(ref));
  }
  return IrAttr::Dict({{"mesh", std::move(mesh_ir)}, {"axes", ir::MeshAxisRefsAttribute(refs)}});
}

// A layout or a tile of custom_call: a 1-D tensor of `index` (dense<[1, 0]> : tensor<2xindex>,
// #vhlo.tensor_v1 of !vhlo.index_v1), whose elements are stored as 64-bit integers; Ember has
// no index element type, so these are read here. Other integer spellings go through ReadInts.
absl::StatusOr<std::vector<int64_t>> ReadIndexVector(const Attribute& attr,
                                                     const ImportContext& ctx) {
  const Type* type = nullptr;
  const uint8_t* data = nullptr;
  size_t size = 0;
  if (attr.kind == AttrKind::kDenseElements && attr.type) {
    type = attr.type.get();
    data = attr.data.data();
    size = attr.data.size();
  } else if (IsVhlo(attr, "tensor_v1")) {
    const DialectParam* t = Param(attr, "type");
    const DialectParam* d = Param(attr, "data");
    if (t != nullptr && d != nullptr && t->type) {
      type = t->type.get();
      data = reinterpret_cast<const uint8_t*>(d->s.data());
      size = d->s.size();
    }
  }
  if (type == nullptr) return ReadInts(attr, ctx);
  std::vector<int64_t> dims;
  const Type* element = nullptr;
  if (type->kind == TypeKind::kRankedTensor) {
    dims = type->shape;
    element = type->element.get();
  } else if (type->kind == TypeKind::kDialect && type->dialect == "vhlo" &&
             type->name == "tensor_v1") {
    for (const DialectParam& p : type->params) {
      if (p.name == "shape") {
        for (const DialectParam& d : p.list) dims.push_back(d.i);
      } else if (p.name == "element") {
        element = p.type.get();
      }
    }
  }
  const bool is_index =
      element != nullptr &&
      (element->kind == TypeKind::kIndex ||
       (element->kind == TypeKind::kDialect && element->dialect == "vhlo" &&
        element->name == "index_v1"));
  if (!is_index) return ReadInts(attr, ctx);
  if (dims.size() != 1 || dims[0] < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a 1-D static index tensor, got ", PrintAttribute(attr)));
  }
  const size_t n = static_cast<size_t>(dims[0]);
  // Dense data is n 64-bit elements, or one (a splat).
  if (size != 8 * n && !(size == 8 && n > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("index dense data of ", size, " bytes for ",
                                                   n, " elements in ", PrintAttribute(attr)));
  }
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(&out[i], data + (size == 8 ? 0 : 8 * i), 8);
  }
  return out;
}

absl::StatusOr<IrAttr> ConvertAlias(const Attribute& attr) {
  if (attr.kind != AttrKind::kDialect ||
      (attr.name != "output_operand_alias" && attr.name != "output_operand_alias_v1")) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected an output_operand_alias, got ", PrintAttribute(attr)));
  }
  std::vector<std::pair<std::string, IrAttr>> dict;
  for (const char* name : {"output_tuple_indices", "operand_index", "operand_tuple_indices"}) {
    const DialectParam* p = Param(attr, name);
    if (p == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("output_operand_alias without ", name));
    }
    if (p->kind == DialectParam::Kind::kList) {
      std::vector<int64_t> v;
      for (const DialectParam& e : p->list) v.push_back(e.i);
      dict.emplace_back(name, IrAttr::Ints(std::move(v)));
    } else {
      dict.emplace_back(name, IrAttr::Int(p->i));
    }
  }
  return IrAttr::Dict(std::move(dict));
}

absl::StatusOr<IrAttr> ConvertByIntent(Intent intent, const AttrPtr& attr,
                                          const ImportContext& ctx) {
  if (!attr) return absl::InvalidArgumentError("null attribute");
  switch (intent) {
    case Intent::kInt: {
      EMBER_ASSIGN_OR_RETURN(int64_t v, ReadInt(*attr));
      return IrAttr::Int(v);
    }
    case Intent::kInts:
    case Intent::kPairs: {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadInts(*attr, ctx));
      return IrAttr::Ints(std::move(v));
    }
    case Intent::kBool: {
      EMBER_ASSIGN_OR_RETURN(bool v, ReadBool(*attr));
      return IrAttr::Bool(v);
    }
    case Intent::kBools: {
      EMBER_ASSIGN_OR_RETURN(std::vector<bool> v, ReadBools(*attr, ctx));
      return IrAttr::Bools(std::move(v));
    }
    case Intent::kFloat: {
      EMBER_ASSIGN_OR_RETURN(double v, ReadFloat(*attr));
      return IrAttr::Float(v);
    }
    case Intent::kString: {
      EMBER_ASSIGN_OR_RETURN(std::string v, ReadString(*attr));
      return IrAttr::String(std::move(v));
    }
    case Intent::kStrings: {
      EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> elements, ReadArray(*attr));
      std::vector<IrAttr> list;
      for (const AttrPtr& e : elements) {
        if (!e) return absl::InvalidArgumentError("null list element");
        EMBER_ASSIGN_OR_RETURN(std::string v, ReadString(*e));
        list.push_back(IrAttr::String(std::move(v)));
      }
      return IrAttr::List(std::move(list));
    }
    case Intent::kLiteral:
    case Intent::kGroups: {
      if (intent == Intent::kGroups &&
          IsDialectAttr(*attr, "replica_group_mesh_axes", "replica_group_mesh_axes_v1")) {
        return MeshAxesGroupsAttribute(*attr, ctx);
      }
      EMBER_ASSIGN_OR_RETURN(ir::Literal v, ReadLiteral(*attr, ctx));
      // VHLO spells "no pairs" as tensor<0xi64>.
      if (intent == Intent::kGroups && v.shape().rank() != 2 && v.shape().element_count() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("expected a 2-D tensor, got ", v.shape().ToString()));
      }
      return IrAttr::OfLiteral(std::move(v));
    }
    case Intent::kDict: {
      EMBER_ASSIGN_OR_RETURN(ir::AttributeMap map, ConvertDictionary(*attr, ctx));
      return IrAttr::Dict(map.entries());
    }
    case Intent::kAny: return ConvertGeneric(*attr, ctx);
    case Intent::kApiVersion: {
      if (attr->kind == AttrKind::kInteger) return IrAttr::Int(attr->IntValue());
      EMBER_ASSIGN_OR_RETURN(std::string name, ReadString(*attr));
      static const char* kNames[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                     "API_VERSION_STATUS_RETURNING",
                                     "API_VERSION_STATUS_RETURNING_UNIFIED",
                                     "API_VERSION_TYPED_FFI"};
      for (int i = 0; i < 5; ++i) {
        if (name == kNames[i]) return IrAttr::Int(i);
      }
      return absl::InvalidArgumentError(absl::StrCat("unknown api_version ", name));
    }
    case Intent::kLayouts: {
      EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> elements, ReadArray(*attr));
      std::vector<IrAttr> list;
      for (const AttrPtr& e : elements) {
        if (!e) return absl::InvalidArgumentError("null list element");
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadIndexVector(*e, ctx));
        list.push_back(IrAttr::Ints(std::move(v)));
      }
      return IrAttr::List(std::move(list));
    }
    case Intent::kTilings: {
      // One tiling per result, each a list of tiles (1-D index tensors), outermost first.
      EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> tilings, ReadArray(*attr));
      std::vector<IrAttr> list;
      for (const AttrPtr& tiling : tilings) {
        if (!tiling) return absl::InvalidArgumentError("null list element");
        EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> tiles, ReadArray(*tiling));
        std::vector<IrAttr> tile_list;
        for (const AttrPtr& tile : tiles) {
          if (!tile) return absl::InvalidArgumentError("null list element");
          EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadIndexVector(*tile, ctx));
          tile_list.push_back(IrAttr::Ints(std::move(v)));
        }
        list.push_back(IrAttr::List(std::move(tile_list)));
      }
      return IrAttr::List(std::move(list));
    }
    case Intent::kAliases: {
      EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> elements, ReadArray(*attr));
      std::vector<IrAttr> list;
      for (const AttrPtr& e : elements) {
        if (!e) return absl::InvalidArgumentError("null list element");
        EMBER_ASSIGN_OR_RETURN(IrAttr a, ConvertAlias(*e));
        list.push_back(std::move(a));
      }
      return IrAttr::List(std::move(list));
    }
  }
  return absl::InternalError("unhandled attribute intent");
}

// A parameter of a #stablehlo.dot/conv/gather/scatter attribute as an IR attribute.
absl::StatusOr<IrAttr> ParamToAttribute(const DialectParam& p, const ImportContext& ctx) {
  switch (p.kind) {
    case DialectParam::Kind::kInt: return IrAttr::Int(p.i);
    case DialectParam::Kind::kUInt: return IrAttr::Int(static_cast<int64_t>(p.u));
    case DialectParam::Kind::kBool: return IrAttr::Bool(p.u != 0);
    case DialectParam::Kind::kString: return IrAttr::String(p.s);
    case DialectParam::Kind::kList: {
      std::vector<int64_t> v;
      for (const DialectParam& e : p.list) {
        if (e.kind != DialectParam::Kind::kInt) {
          return absl::InvalidArgumentError(absl::StrCat("parameter ", p.name,
                                                         " is not a list of integers"));
        }
        v.push_back(e.i);
      }
      return IrAttr::Ints(std::move(v));
    }
    case DialectParam::Kind::kAttr:
      if (!p.attr) return absl::InvalidArgumentError(absl::StrCat("parameter ", p.name, " is null"));
      return ConvertGeneric(*p.attr, ctx);
    default:
      return absl::InvalidArgumentError(absl::StrCat("unsupported parameter ", p.name));
  }
}

absl::Status FlattenParams(const Attribute& attr, const char* mnemonic, OpView* view,
                           const ImportContext& ctx) {
  if (attr.kind != AttrKind::kDialect || attr.name != mnemonic) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected #stablehlo.", mnemonic, ", got ", PrintAttribute(attr)));
  }
  for (const DialectParam& p : attr.params) {
    EMBER_ASSIGN_OR_RETURN(IrAttr a, ParamToAttribute(p, ctx));
    view->preset.Set(p.name, std::move(a));
  }
  return absl::OkStatus();
}

}  // namespace

ir::Attribute DotAlgorithmAttribute(const DotAlgorithm& a) {
  return IrAttr::Dict(
      {{"lhs_precision_type", IrAttr::String(a.lhs_precision_type)},
       {"rhs_precision_type", IrAttr::String(a.rhs_precision_type)},
       {"accumulation_type", IrAttr::String(a.accumulation_type)},
       {"lhs_component_count", IrAttr::Int(a.lhs_component_count)},
       {"rhs_component_count", IrAttr::Int(a.rhs_component_count)},
       {"num_primitive_operations", IrAttr::Int(a.num_primitive_operations)},
       {"allow_imprecise_accumulation", IrAttr::Bool(a.allow_imprecise_accumulation)}});
}

absl::StatusOr<ir::Attribute> ResultAccuracyAttribute(const Attribute& attr) {
  const DialectParam* atol = Param(attr, "atol");
  const DialectParam* rtol = Param(attr, "rtol");
  const DialectParam* ulps = Param(attr, "ulps");
  const DialectParam* mode = Param(attr, "mode");
  if (attr.kind != AttrKind::kDialect || atol == nullptr || rtol == nullptr || ulps == nullptr ||
      mode == nullptr || !mode->attr) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a result_accuracy, got ", PrintAttribute(attr)));
  }
  auto f64 = [](const DialectParam& p) {
    return std::bit_cast<double>(p.words.empty() ? uint64_t{0} : p.words[0]);
  };
  EMBER_ASSIGN_OR_RETURN(std::string mode_name, ReadString(*mode->attr));
  return IrAttr::Dict({{"atol", IrAttr::Float(f64(*atol))},
                          {"rtol", IrAttr::Float(f64(*rtol))},
                          {"ulps", IrAttr::Int(ulps->i)},
                          {"mode", IrAttr::String(mode_name)}});
}

absl::StatusOr<ir::AttributeMap> SplitAttributes(const Operation& op, OpView* view,
                                                 const ImportContext& ctx) {
  std::vector<std::pair<std::string, AttrPtr>> discardable;
  for (const NamedAttribute& a : op.attributes) {
    if (a.name.find('.') != std::string::npos) {
      discardable.emplace_back(a.name, a.value);
    } else {
      view->attrs.emplace_back(a.name, a.value);
    }
  }
  std::sort(discardable.begin(), discardable.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  ir::AttributeMap out;
  for (const auto& [name, value] : discardable) {
    if (!value) continue;
    absl::StatusOr<IrAttr> converted = ConvertGeneric(*value, ctx);
    if (!converted.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), ": attribute '", name,
                                                     "': ", converted.status().message()));
    }
    out.Set(name, *std::move(converted));
  }
  return out;
}

absl::Status NormalizeStablehloOp(const Operation& op, OpView* view, const ImportContext& ctx) {
  view->name = op.name;
  std::vector<std::pair<std::string, AttrPtr>> rest;
  for (auto& [name, value] : view->attrs) {
    absl::Status status = absl::OkStatus();
    if (!value) {
      status = absl::InvalidArgumentError("null attribute");
    } else if (name == "dot_dimension_numbers") {
      status = FlattenParams(*value, "dot", view, ctx);
    } else if (name == "dimension_numbers" &&
               (op.name == "stablehlo.convolution" || op.name == "stablehlo.dynamic_conv")) {
      status = FlattenParams(*value, "conv", view, ctx);
    } else if (name == "dimension_numbers" &&
               (op.name == "stablehlo.gather" || op.name == "stablehlo.dynamic_gather")) {
      status = FlattenParams(*value, "gather", view, ctx);
    } else if (name == "scatter_dimension_numbers") {
      status = FlattenParams(*value, "scatter", view, ctx);
    } else if (name == "channel_handle") {
      const DialectParam* handle = Param(*value, "handle");
      const DialectParam* type = Param(*value, "type");
      if (value->kind != AttrKind::kDialect || handle == nullptr || type == nullptr) {
        status = absl::InvalidArgumentError(
            absl::StrCat("expected a channel_handle, got ", PrintAttribute(*value)));
      } else {
        view->preset.Set("channel_id", IrAttr::Int(handle->i));
        if (op.name == "stablehlo.send" || op.name == "stablehlo.recv") {
          view->preset.Set("channel_type", IrAttr::Int(type->i));
        }
      }
    } else if (name == "algorithm" && op.name == "stablehlo.dot_general") {
      DotAlgorithm a;
      bool ok = value->kind == AttrKind::kDialect && value->name == "dot_algorithm";
      for (const DialectParam& p : value->params) {
        if (p.kind == DialectParam::Kind::kType) {
          if (!p.type) { ok = false; continue; }
          absl::StatusOr<std::string> t = ElementSpelling(*p.type);
          if (!t.ok()) { status = t.status(); continue; }
          if (p.name == "lhs_precision_type") a.lhs_precision_type = *t;
          if (p.name == "rhs_precision_type") a.rhs_precision_type = *t;
          if (p.name == "accumulation_type") a.accumulation_type = *t;
        } else if (p.name == "lhs_component_count") {
          a.lhs_component_count = p.i;
        } else if (p.name == "rhs_component_count") {
          a.rhs_component_count = p.i;
        } else if (p.name == "num_primitive_operations") {
          a.num_primitive_operations = p.i;
        } else if (p.name == "allow_imprecise_accumulation") {
          a.allow_imprecise_accumulation = p.u != 0;
        }
      }
      if (!ok) {
        status = absl::InvalidArgumentError(
            absl::StrCat("expected a dot_algorithm, got ", PrintAttribute(*value)));
      }
      view->preset.Set("algorithm", DotAlgorithmAttribute(a));
    } else if (name == "result_accuracy") {
      absl::StatusOr<IrAttr> a = ResultAccuracyAttribute(*value);
      if (a.ok()) {
        view->preset.Set("result_accuracy", *std::move(a));
      } else {
        status = a.status();
      }
    } else {
      rest.emplace_back(name, value);
      continue;
    }
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), ": attribute '", name,
                                                     "': ", status.message()));
    }
  }
  view->attrs = std::move(rest);
  return absl::OkStatus();
}

absl::StatusOr<ir::AttributeMap> ConvertOpAttributes(ir::Opcode opcode, const OpView& view,
                                                     const std::vector<ir::ValueType>& operands,
                                                     const std::vector<ir::ValueType>&,
                                                     const std::string& where,
                                                     const ImportContext& ctx) {
  const auto& specs = Specs();
  auto it = specs.find(opcode);
  const std::vector<AttrSpec>& spec = it == specs.end() ? kNoAttrs : it->second;
  auto find_spec = [&](const std::string& name) -> const AttrSpec* {
    for (const AttrSpec& s : spec) {
      if (name == s.name) return &s;
    }
    return nullptr;
  };
  // Pass 1: the attributes given.
  ir::AttributeMap given;
  for (const auto& [name, value] : view.preset.entries()) {
    if (find_spec(name) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": unknown attribute '", name, "'"));
    }
    given.Set(name, value);
  }
  for (const auto& [name, value] : view.attrs) {
    const AttrSpec* s = find_spec(name);
    if (s == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": unknown attribute '", name, "'",
          value ? absl::StrCat(" = ", PrintAttribute(*value)) : std::string()));
    }
    if (given.Find(name) != nullptr) continue;  // a mapping already produced it
    absl::StatusOr<IrAttr> converted = ConvertByIntent(s->intent, value, ctx);
    if (!converted.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": attribute '", name, "': ",
                                                     converted.status().message()));
    }
    given.Set(name, *std::move(converted));
  }
  // Pass 2: defaults and policies, in table order.
  const DefaultCtx dctx{operands, given};
  ir::AttributeMap out;
  for (const AttrSpec& s : spec) {
    const IrAttr* a = given.Find(s.name);
    switch (s.policy) {
      case Policy::kRequired:
        if (a == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": missing required attribute '", s.name, "'"));
        }
        out.Set(s.name, *a);
        break;
      case Policy::kDefault:
        out.Set(s.name, a != nullptr ? *a : s.def(dctx));
        break;
      case Policy::kDefaultWhenEmpty:
        out.Set(s.name, a != nullptr && !IsEmpty(*a) ? *a : s.def(dctx));
        break;
      case Policy::kOmitDefault:
        if (a != nullptr && !(*a == s.def(dctx))) out.Set(s.name, *a);
        break;
      case Policy::kOmitEmpty:
        if (a != nullptr && !IsEmpty(*a)) out.Set(s.name, *a);
        break;
      case Policy::kOptional:
        if (a != nullptr) out.Set(s.name, *a);
        break;
    }
  }
  return out;
}

}  // namespace ember::frontend::importer
