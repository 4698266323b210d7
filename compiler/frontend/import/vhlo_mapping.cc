// The VHLO -> StableHLO mapping: every vhlo.*_vN op of StableHLO 0.9.0 ... 1.20.0 with the
// attributes it carries (VHLO has no optional attributes: each listed one must be present,
// nothing else may be), and how those attributes map back to the StableHLO set:
//  - op names drop the version suffix (vhlo.add_v1 -> stablehlo.add); func_v1 / call_v1 /
//    return_v1 are func.func, func.call and the region terminator;
//  - dimension numbers are already flattened in VHLO with the spec's names;
//  - dot_general_v2's seven algorithm attributes become one `algorithm` dictionary, or nothing
//    when all are #vhlo.type_v1<!vhlo.none_v1> (VHLO's "absent");
//  - result_accuracy_v1 becomes {atol, rtol, ulps, mode}; the default is dropped like an
//    absent one (stablehlo_op_specs.cc);
//  - defaults VHLO materializes (channel_id = 0, strides of 1, compare_type NOTYPE, ...) are
//    handled by the per-op table, which materializes or drops them the same way for text input.
// Superseded versions (all_gather_v1, gather_v1, ...) carry a subset of the newest attributes;
// the per-op table fills the missing ones with the defaults the VHLO upgrade would add.
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "compiler/frontend/import/import_internal.h"

namespace ember::frontend::importer {
namespace {

struct VhloOp {
  const char* name;   // without the "vhlo." prefix
  const char* attrs;  // its attributes, comma-separated, sorted as in the bytecode record
};

// From VhloOps.td at StableHLO 1.20.0 (see shared/reference/mlir_bytecode.md section 3.6).
const VhloOp kVhloOps[] = {
    {"abs_v1", ""},
    {"add_v1", ""},
    {"after_all_v1", ""},
    {"all_gather_v1", "all_gather_dim,channel_id,replica_groups,use_global_device_ids"},
    {"all_gather_v2", "all_gather_dim,channel_id,replica_groups,use_global_device_ids"},
    {"all_reduce_v1", "channel_id,replica_groups,use_global_device_ids"},
    {"all_reduce_v2", "channel_id,replica_groups,use_global_device_ids"},
    {"all_to_all_v1", "channel_id,concat_dimension,replica_groups,split_count,split_dimension"},
    {"all_to_all_v2", "channel_id,concat_dimension,replica_groups,split_count,split_dimension"},
    {"and_v1", ""},
    {"async_start_v1", ""},
    {"async_done_v1", ""},
    {"atan2_v1", ""},
    {"batch_norm_grad_v1", "epsilon,feature_index"},
    {"batch_norm_inference_v1", "epsilon,feature_index"},
    {"batch_norm_training_v1", "epsilon,feature_index"},
    {"bitcast_convert_v1", ""},
    {"broadcast_in_dim_v1", "broadcast_dimensions"},
    {"broadcast_v1", "broadcast_sizes"},
    {"call_v1", "callee"},
    {"case_v1", ""},
    {"cbrt_v1", ""},
    {"cbrt_v2", "result_accuracy"},
    {"ceil_v1", ""},
    {"cholesky_v1", "lower"},
    {"clamp_v1", ""},
    {"count_leading_zeros_v1", ""},
    {"collective_broadcast_v1", "channel_id,replica_groups"},
    {"collective_broadcast_v2", "channel_id,has_dynamic_root,replica_groups"},
    {"collective_reduce_v1", "channel_id,has_dynamic_root,replica_groups,use_global_device_ids"},
    {"collective_permute_v1", "channel_id,source_target_pairs"},
    {"compare_v1", "compare_type,comparison_direction"},
    {"complex_v1", ""},
    {"composite_v1", "composite_attributes,decomposition,name,version"},
    {"composite_v2", "composite_attributes,decomposition,name,version"},
    {"concatenate_v1", "dimension"},
    {"constant_v1", "value"},
    {"convert_v1", ""},
    {"convolution_v1", "batch_group_count,feature_group_count,input_batch_dimension,input_feature_dimension,input_spatial_dimensions,kernel_input_feature_dimension,kernel_output_feature_dimension,kernel_spatial_dimensions,lhs_dilation,output_batch_dimension,output_feature_dimension,output_spatial_dimensions,padding,precision_config,rhs_dilation,window_reversal,window_strides"},
    {"cosine_v1", ""},
    {"cosine_v2", "result_accuracy"},
    {"create_token_v1", ""},
    {"cross-replica-sum_v1", "replica_groups"},
    {"custom_call_v1", "api_version,backend_config,call_target_name,called_computations,has_side_effect,operand_layouts,output_operand_aliases,result_layouts"},
    {"custom_call_v2", "api_version,backend_config,call_target_name,called_computations,has_side_effect,operand_layouts,output_operand_aliases,result_layouts,result_tilings"},
    {"divide_v1", ""},
    {"dot_general_v1", "lhs_batching_dimensions,lhs_contracting_dimensions,precision_config,rhs_batching_dimensions,rhs_contracting_dimensions"},
    {"dot_general_v2", "accumulation_type,allow_imprecise_accumulation,lhs_batching_dimensions,lhs_component_count,lhs_contracting_dimensions,lhs_precision_type,num_primitive_operations,precision_config,rhs_batching_dimensions,rhs_component_count,rhs_contracting_dimensions,rhs_precision_type"},
    {"dot_v1", "precision_config"},
    {"dynamic_broadcast_in_dim_v1", "broadcast_dimensions,known_expanding_dimensions,known_nonexpanding_dimensions"},
    {"dynamic_conv_v1", "batch_group_count,feature_group_count,input_batch_dimension,input_feature_dimension,input_spatial_dimensions,kernel_input_feature_dimension,kernel_output_feature_dimension,kernel_spatial_dimensions,lhs_dilation,output_batch_dimension,output_feature_dimension,output_spatial_dimensions,padding,precision_config,rhs_dilation,window_reversal,window_strides"},
    {"dynamic_conv_v2", "batch_group_count,feature_group_count,input_batch_dimension,input_feature_dimension,input_spatial_dimensions,kernel_input_feature_dimension,kernel_output_feature_dimension,kernel_spatial_dimensions,lhs_dilation,output_batch_dimension,output_feature_dimension,output_spatial_dimensions,precision_config,rhs_dilation,window_reversal,window_strides"},
    {"dynamic_gather_v1", "collapsed_slice_dims,index_vector_dim,indices_are_sorted,offset_dims,start_index_map"},
    {"dynamic_gather_v2", "collapsed_slice_dims,index_vector_dim,indices_are_sorted,offset_dims,operand_batching_dims,start_index_map,start_indices_batching_dims"},
    {"dynamic_iota_v1", "iota_dimension"},
    {"dynamic_pad_v1", ""},
    {"dynamic_reshape_v1", ""},
    {"dynamic_slice_v1", "slice_sizes"},
    {"dynamic_update_slice_v1", ""},
    {"einsum_v1", "einsum_config"},
    {"exponential_minus_one_v1", ""},
    {"exponential_minus_one_v2", "result_accuracy"},
    {"exponential_v1", ""},
    {"exponential_v2", "result_accuracy"},
    {"fft_v1", "fft_length,fft_type"},
    {"floor_v1", ""},
    {"func_v1", "arg_attrs,function_type,res_attrs,sym_name,sym_visibility"},
    {"gather_v1", "collapsed_slice_dims,index_vector_dim,indices_are_sorted,offset_dims,slice_sizes,start_index_map"},
    {"gather_v2", "collapsed_slice_dims,index_vector_dim,indices_are_sorted,offset_dims,operand_batching_dims,slice_sizes,start_index_map,start_indices_batching_dims"},
    {"get_dimension_size_v1", "dimension"},
    {"get_tuple_element_v1", "index"},
    {"if_v1", ""},
    {"imag_v1", ""},
    {"infeed_v1", "infeed_config,layout"},
    {"iota_v1", "iota_dimension"},
    {"is_finite_v1", ""},
    {"log_plus_one_v1", ""},
    {"log_plus_one_v2", "result_accuracy"},
    {"logistic_v1", ""},
    {"logistic_v2", "result_accuracy"},
    {"log_v1", ""},
    {"log_v2", "result_accuracy"},
    {"map_v1", "dimensions"},
    {"maximum_v1", ""},
    {"minimum_v1", ""},
    {"multiply_v1", ""},
    {"negate_v1", ""},
    {"not_v1", ""},
    {"optimization_barrier_v1", ""},
    {"or_v1", ""},
    {"outfeed_v1", "outfeed_config"},
    {"pad_v1", "edge_padding_high,edge_padding_low,interior_padding"},
    {"partition_id_v1", ""},
    {"popcnt_v1", ""},
    {"power_v1", ""},
    {"real_dynamic_slice_v1", ""},
    {"real_v1", ""},
    {"recv_v1", "channel_id,channel_type,is_host_transfer"},
    {"recv_v2", "channel_id,channel_type,is_host_transfer,source_target_pairs"},
    {"reduce_v1", "dimensions"},
    {"reduce_precision_v1", "exponent_bits,mantissa_bits"},
    {"reduce_scatter_v1", "channel_id,replica_groups,scatter_dimension,use_global_device_ids"},
    {"reduce_window_v1", "base_dilations,padding,window_dilations,window_dimensions,window_strides"},
    {"remainder_v1", ""},
    {"replica_id_v1", ""},
    {"reshape_v1", ""},
    {"return_v1", ""},
    {"reverse_v1", "dimensions"},
    {"rng_bit_generator_v1", "rng_algorithm"},
    {"rng_v1", "rng_distribution"},
    {"round_nearest_even_v1", ""},
    {"round_nearest_afz_v1", ""},
    {"rsqrt_v1", ""},
    {"rsqrt_v2", "result_accuracy"},
    {"scatter_v1", "index_vector_dim,indices_are_sorted,inserted_window_dims,scatter_dims_to_operand_dims,unique_indices,update_window_dims"},
    {"scatter_v2", "index_vector_dim,indices_are_sorted,input_batching_dims,inserted_window_dims,scatter_dims_to_operand_dims,scatter_indices_batching_dims,unique_indices,update_window_dims"},
    {"select_and_scatter_v1", "padding,window_dimensions,window_strides"},
    {"select_v1", ""},
    {"send_v1", "channel_id,channel_type,is_host_transfer"},
    {"send_v2", "channel_id,channel_type,is_host_transfer,source_target_pairs"},
    {"set_dimension_size_v1", "dimension"},
    {"shift_left_v1", ""},
    {"shift_right_arithmetic_v1", ""},
    {"shift_right_logical_v1", ""},
    {"sign_v1", ""},
    {"sine_v1", ""},
    {"sine_v2", "result_accuracy"},
    {"slice_v1", "limit_indices,start_indices,strides"},
    {"sort_v1", "dimension,is_stable"},
    {"sqrt_v1", ""},
    {"sqrt_v2", "result_accuracy"},
    {"subtract_v1", ""},
    {"tan_v1", ""},
    {"tan_v2", "result_accuracy"},
    {"tanh_v1", ""},
    {"tanh_v2", "result_accuracy"},
    {"torch_index_select_v1", "batch_dims,dim"},
    {"transpose_v1", "permutation"},
    {"triangular_solve_v1", "left_side,lower,transpose_a,unit_diagonal"},
    {"tuple_v1", ""},
    {"unary_einsum_v1", "einsum_config"},
    {"uniform_dequantize_v1", ""},
    {"uniform_quantize_v1", ""},
    {"while_v1", ""},
    {"xor_v1", ""},
};

struct VhloInfo {
  std::string stablehlo_name;
  std::vector<std::string> attrs;
};

const absl::flat_hash_map<std::string, VhloInfo>& VhloTable() {
  static const auto* table = [] {
    auto* m = new absl::flat_hash_map<std::string, VhloInfo>();
    for (const VhloOp& op : kVhloOps) {
      std::string name = op.name;
      std::string base = name.substr(0, name.rfind("_v"));
      VhloInfo info;
      if (base == "func") {
        info.stablehlo_name = "func.func";
      } else if (base == "call") {
        info.stablehlo_name = "func.call";
      } else {
        info.stablehlo_name = absl::StrCat("stablehlo.", base);
      }
      for (absl::string_view a : absl::StrSplit(op.attrs, ',', absl::SkipEmpty())) {
        info.attrs.emplace_back(a);
      }
      (*m)[absl::StrCat("vhlo.", name)] = std::move(info);
    }
    return m;
  }();
  return *table;
}

bool IsNoneType(const AttrPtr& attr) {
  if (!attr || !IsVhlo(*attr, "type_v1") || attr->params.empty()) return false;
  const TypePtr& t = attr->params[0].type;
  return t && t->kind == TypeKind::kDialect && t->dialect == "vhlo" && t->name == "none_v1";
}

absl::StatusOr<std::string> TypeV1Spelling(const AttrPtr& attr) {
  if (!attr || !IsVhlo(*attr, "type_v1") || attr->params.empty() || !attr->params[0].type) {
    return absl::InvalidArgumentError("expected a #vhlo.type_v1");
  }
  return ElementSpelling(*attr->params[0].type);
}

absl::Status MapDotAlgorithm(std::vector<std::pair<std::string, AttrPtr>>* attrs, OpView* view) {
  static const char* kNames[] = {"lhs_precision_type", "rhs_precision_type", "accumulation_type",
                                 "lhs_component_count", "rhs_component_count",
                                 "num_primitive_operations", "allow_imprecise_accumulation"};
  absl::flat_hash_map<std::string, AttrPtr> found;
  std::vector<std::pair<std::string, AttrPtr>> rest;
  for (auto& [name, value] : *attrs) {
    bool is_algorithm = false;
    for (const char* n : kNames) is_algorithm |= name == n;
    if (is_algorithm) {
      found[name] = value;
    } else {
      rest.emplace_back(name, value);
    }
  }
  *attrs = std::move(rest);
  bool all_none = true;
  for (const auto& [name, value] : found) all_none &= IsNoneType(value);
  if (all_none) return absl::OkStatus();
  DotAlgorithm a;
  EMBER_ASSIGN_OR_RETURN(a.lhs_precision_type, TypeV1Spelling(found["lhs_precision_type"]));
  EMBER_ASSIGN_OR_RETURN(a.rhs_precision_type, TypeV1Spelling(found["rhs_precision_type"]));
  EMBER_ASSIGN_OR_RETURN(a.accumulation_type, TypeV1Spelling(found["accumulation_type"]));
  for (const char* n : {"lhs_component_count", "rhs_component_count", "num_primitive_operations",
                        "allow_imprecise_accumulation"}) {
    if (!found[n]) return absl::InvalidArgumentError(absl::StrCat("missing ", n));
  }
  EMBER_ASSIGN_OR_RETURN(a.lhs_component_count, ReadInt(*found["lhs_component_count"]));
  EMBER_ASSIGN_OR_RETURN(a.rhs_component_count, ReadInt(*found["rhs_component_count"]));
  EMBER_ASSIGN_OR_RETURN(a.num_primitive_operations, ReadInt(*found["num_primitive_operations"]));
  EMBER_ASSIGN_OR_RETURN(a.allow_imprecise_accumulation,
                         ReadBool(*found["allow_imprecise_accumulation"]));
  view->preset.Set("algorithm", DotAlgorithmAttribute(a));
  return absl::OkStatus();
}

}  // namespace

bool IsKnownVhloOp(const std::string& name) { return VhloTable().contains(name); }

absl::Status NormalizeVhloOp(const Operation& op, OpView* view, const ImportContext& ctx) {
  auto it = VhloTable().find(op.name);
  if (it == VhloTable().end()) {
    return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), ": unknown VHLO op"));
  }
  const VhloInfo& info = it->second;
  // VHLO has no optional attributes: exactly the listed ones.
  for (const auto& [name, value] : view->attrs) {
    bool listed = false;
    for (const std::string& a : info.attrs) listed |= a == name;
    if (!listed) {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeOp(op), ": unknown attribute '", name, "'"));
    }
  }
  for (const std::string& a : info.attrs) {
    bool present = false;
    for (const auto& [name, value] : view->attrs) present |= a == name && value != nullptr;
    if (!present) {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeOp(op), ": missing attribute '", a, "'"));
    }
  }
  view->name = info.stablehlo_name;
  if (op.name == "vhlo.dynamic_conv_v1") {
    // v1 had both a static `padding` attribute and the d_padding operand; v2 (and StableHLO)
    // keep only the operand. Like upstream's upgrade, only an all-zero static padding (which
    // adds nothing to d_padding) converts.
    std::vector<std::pair<std::string, AttrPtr>> rest;
    for (auto& [name, value] : view->attrs) {
      if (name != "padding") {
        rest.emplace_back(name, value);
        continue;
      }
      absl::StatusOr<std::vector<int64_t>> padding = ReadInts(*value, ctx);
      bool zero = padding.ok();
      if (zero) {
        for (int64_t p : *padding) zero = zero && p == 0;
      }
      if (!zero) {
        return absl::UnimplementedError(absl::StrCat(
            DescribeOp(op), ": vhlo.dynamic_conv_v1 with a nonzero static padding attribute "
                            "(besides its d_padding operand) is not supported"));
      }
    }
    view->attrs = std::move(rest);
  }
  if (op.name == "vhlo.return_v1") view->name = "stablehlo.return";
  if (op.name == "vhlo.create_token_v1") view->name = "stablehlo.create_token";
  if (op.name == "vhlo.dot_general_v2") {
    absl::Status s = MapDotAlgorithm(&view->attrs, view);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeOp(op), ": dot algorithm: ", s.message()));
    }
  }
  std::vector<std::pair<std::string, AttrPtr>> rest;
  for (auto& [name, value] : view->attrs) {
    if (name == "result_accuracy") {
      absl::StatusOr<ir::Attribute> a = ResultAccuracyAttribute(*value);
      if (!a.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), ": attribute '", name,
                                                       "': ", a.status().message()));
      }
      view->preset.Set(name, *std::move(a));
    } else {
      rest.emplace_back(name, value);
    }
  }
  view->attrs = std::move(rest);
  return absl::OkStatus();
}

}  // namespace ember::frontend::importer
