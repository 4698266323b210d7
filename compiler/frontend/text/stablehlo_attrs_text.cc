// StableHLO and CHLO dialect attributes (`#stablehlo<comparison_direction GT>`,
// `#stablehlo.gather<...>`, `#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>`, ...), parsed
// into kDialect attributes whose parameters carry the ODS parameter names in ODS order, with
// omitted fields filled with their defaults (so every spelling of a value gives one tree).
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/text/stablehlo_text.h"
#include "compiler/frontend/text/text_parser_internal.h"

namespace ember::frontend::text {
namespace {

struct EnumInfo {
  const char* mnemonic;
  std::vector<const char*> values;
  bool bracketed;  // `<VALUE>` rather than ` VALUE`
};

const std::vector<EnumInfo>& Enums() {
  static const auto* enums = new std::vector<EnumInfo>{
      {"comparison_direction", {"EQ", "NE", "GE", "GT", "LE", "LT"}, false},
      {"comparison_type", {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}, false},
      {"precision", {"DEFAULT", "HIGH", "HIGHEST"}, false},
      {"fft_type", {"FFT", "IFFT", "RFFT", "IRFFT"}, false},
      {"transpose", {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}, false},
      {"rng_distribution", {"UNIFORM", "NORMAL"}, false},
      {"rng_algorithm", {"DEFAULT", "THREE_FRY", "PHILOX"}, false},
      {"result_accuracy_mode", {"DEFAULT", "HIGHEST", "TOLERANCE"}, true},
  };
  return *enums;
}

}  // namespace

absl::StatusOr<AttrPtr> ParseEnumValue(Parser& p, std::string_view dialect,
                                       std::string_view mnemonic) {
  for (const EnumInfo& e : Enums()) {
    if (mnemonic != e.mnemonic) continue;
    const size_t at = p.tok().offset;
    EMBER_ASSIGN_OR_RETURN(std::string value, p.ParseKeyword(absl::StrCat(e.mnemonic, " value")));
    for (const char* v : e.values) {
      if (value == v) return MakeEnumAttr(std::string(dialect), std::string(mnemonic), value);
    }
    return p.ErrorAt(at, absl::StrCat("invalid ", e.mnemonic, " value '", value, "'"));
  }
  return p.Error(absl::StrCat("unknown enum '", std::string(mnemonic), "'"));
}

absl::StatusOr<std::vector<DialectParam>> ParseStructFields(Parser& p,
                                                            const std::vector<StructField>& fields,
                                                            bool open_consumed) {
  std::vector<DialectParam> values(fields.size());
  std::vector<bool> seen(fields.size(), false);
  for (size_t i = 0; i < fields.size(); ++i) {
    const StructField& f = fields[i];
    switch (f.kind) {
      case FieldKind::kDims: values[i] = IntListParam(f.name, {}); break;
      case FieldKind::kInt: values[i] = IntParam(f.name, 0); break;
      case FieldKind::kBool: values[i] = BoolParam(f.name, false); break;
      case FieldKind::kType: values[i] = TypeParam(f.name, nullptr); break;
      case FieldKind::kString: values[i] = StringParam(f.name, ""); break;
      case FieldKind::kFloat: values[i] = FloatBitsParam(f.name, 0); break;
      case FieldKind::kAttr:
      case FieldKind::kSubAxis: values[i] = AttrParam(f.name, nullptr); break;
    }
  }
  if (!open_consumed) {
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLess, "to start the attribute parameters"));
  }
  while (!p.ConsumeIf(TokKind::kGreater)) {
    const size_t at = p.tok().offset;
    EMBER_ASSIGN_OR_RETURN(std::string key, p.ParseKeyword("parameter name"));
    size_t index = fields.size();
    for (size_t i = 0; i < fields.size(); ++i) {
      if (key == fields[i].name) index = i;
    }
    if (index == fields.size()) return p.ErrorAt(at, "unknown parameter '" + key + "'");
    if (seen[index]) return p.ErrorAt(at, "duplicated '" + key + "' entry");
    seen[index] = true;
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kEqual, "after parameter name"));
    DialectParam& v = values[index];
    switch (fields[index].kind) {
      case FieldKind::kDims: {
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims, p.ParseIntList(/*allow_dynamic=*/true));
        v = IntListParam(v.name, dims);
        break;
      }
      case FieldKind::kInt: {
        EMBER_ASSIGN_OR_RETURN(v.i, p.ParseInt64());
        break;
      }
      case FieldKind::kBool: {
        EMBER_ASSIGN_OR_RETURN(bool b, p.ParseBoolKeyword());
        v.u = b;
        break;
      }
      case FieldKind::kType: {
        EMBER_ASSIGN_OR_RETURN(v.type, p.ParseType());
        break;
      }
      case FieldKind::kString: {
        EMBER_ASSIGN_OR_RETURN(v.s, p.ParseStringLiteral());
        break;
      }
      case FieldKind::kFloat: {
        const bool negative = p.ConsumeIf(TokKind::kMinus);
        if (!p.Is(TokKind::kFloat) && !p.Is(TokKind::kInteger)) return p.ExpectedError("number");
        double d = std::strtod(std::string(p.tok().text).c_str(), nullptr);
        p.Advance();
        v.words = {EncodeFloat(negative ? -d : d, FloatKind::kF64)};
        break;
      }
      case FieldKind::kAttr: {
        EMBER_ASSIGN_OR_RETURN(v.attr, p.ParseAttribute());
        break;
      }
      case FieldKind::kSubAxis: {
        // `(pre_size)size`
        EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLParen, "in sub-axis info"));
        EMBER_ASSIGN_OR_RETURN(int64_t pre, p.ParseInt64());
        EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRParen, "in sub-axis info"));
        EMBER_ASSIGN_OR_RETURN(int64_t size, p.ParseInt64());
        v.attr = MakeDialectAttr("stablehlo", "sub_axis_info",
                                 {IntParam("pre_size", pre), IntParam("size", size)});
        break;
      }
    }
    if (!p.ConsumeIf(TokKind::kComma)) {
      EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kGreater, "or ',' in attribute parameters"));
      break;
    }
  }
  return values;
}

absl::StatusOr<AttrPtr> ParseConvDimensionNumbers(Parser& p, std::string_view dialect) {
  // One `[b, 0, 1, f]` list: non-spatial letters and spatial dimension numbers by position.
  struct Parsed {
    std::vector<int64_t> spatial;
    int64_t first = -1, second = -1;
  };
  auto parse_list = [&](char first, char second) -> absl::StatusOr<Parsed> {
    Parsed out;
    std::vector<int64_t> spatial_at;  // spatial dim number -> position
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kLSquare, "to start convolution dimensions"));
    int64_t index = 0;
    while (true) {
      const size_t at = p.tok().offset;
      if (p.Is(TokKind::kInteger)) {
        EMBER_ASSIGN_OR_RETURN(int64_t d, p.ParseInt64());
        if (d < 0 || d > 4096) return p.ErrorAt(at, "invalid spatial dimension");
        if (spatial_at.size() <= static_cast<size_t>(d)) spatial_at.resize(d + 1, -1);
        if (spatial_at[d] >= 0) return p.ErrorAt(at, "duplicate spatial dimension");
        spatial_at[d] = index;
      } else {
        EMBER_ASSIGN_OR_RETURN(std::string k, p.ParseKeyword("dimension letter or number"));
        if (k.size() == 1 && k[0] == first && out.first < 0) {
          out.first = index;
        } else if (k.size() == 1 && k[0] == second && out.second < 0) {
          out.second = index;
        } else {
          return p.ErrorAt(at, "unexpected dimension '" + k + "'");
        }
      }
      ++index;
      if (!p.ConsumeIf(TokKind::kComma)) break;
    }
    EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kRSquare, "to close convolution dimensions"));
    if (out.first < 0 || out.second < 0) {
      return p.Error(absl::StrCat("expected dimensions ", std::string(1, first), " and ",
                                  std::string(1, second)));
    }
    for (int64_t pos : spatial_at) {
      if (pos < 0) return p.Error("missing spatial dimension");
      out.spatial.push_back(pos);
    }
    return out;
  };
  EMBER_ASSIGN_OR_RETURN(Parsed input, parse_list('b', 'f'));
  EMBER_RETURN_IF_ERROR(p.ExpectKeyword("x", "between convolution dimension lists"));
  EMBER_ASSIGN_OR_RETURN(Parsed kernel, parse_list('i', 'o'));
  EMBER_RETURN_IF_ERROR(p.Expect(TokKind::kArrow, "in convolution dimensions"));
  EMBER_ASSIGN_OR_RETURN(Parsed output, parse_list('b', 'f'));
  return MakeDialectAttr(
      std::string(dialect), "conv",
      {IntParam("input_batch_dimension", input.first),
       IntParam("input_feature_dimension", input.second),
       IntListParam("input_spatial_dimensions", input.spatial),
       IntParam("kernel_input_feature_dimension", kernel.first),
       IntParam("kernel_output_feature_dimension", kernel.second),
       IntListParam("kernel_spatial_dimensions", kernel.spatial),
       IntParam("output_batch_dimension", output.first),
       IntParam("output_feature_dimension", output.second),
       IntListParam("output_spatial_dimensions", output.spatial)});
}

const std::vector<StructField>& DotDimensionFields() {
  static const auto* f = new std::vector<StructField>{
      {"lhs_batching_dimensions", FieldKind::kDims},
      {"rhs_batching_dimensions", FieldKind::kDims},
      {"lhs_contracting_dimensions", FieldKind::kDims},
      {"rhs_contracting_dimensions", FieldKind::kDims}};
  return *f;
}

const std::vector<StructField>& DotAlgorithmFields() {
  static const auto* f = new std::vector<StructField>{
      {"lhs_precision_type", FieldKind::kType},
      {"rhs_precision_type", FieldKind::kType},
      {"accumulation_type", FieldKind::kType},
      {"lhs_component_count", FieldKind::kInt},
      {"rhs_component_count", FieldKind::kInt},
      {"num_primitive_operations", FieldKind::kInt},
      {"allow_imprecise_accumulation", FieldKind::kBool}};
  return *f;
}

absl::StatusOr<AttrPtr> Parser::ParseStablehloAttr(std::string_view dialect,
                                                   std::string_view mnemonic, size_t start) {
  const std::string d(dialect);
  const std::string m(mnemonic);
  for (const EnumInfo& e : Enums()) {
    if (m != e.mnemonic) continue;
    // Accept both `#stablehlo<precision HIGH>` and `#stablehlo.precision<HIGH>`.
    const bool bracketed = ConsumeIf(TokKind::kLess);
    EMBER_ASSIGN_OR_RETURN(AttrPtr a, ParseEnumValue(*this, dialect, mnemonic));
    if (bracketed) EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close the enum attribute"));
    return a;
  }
  auto make = [&](std::vector<DialectParam> params) {
    return MakeDialectAttr(d, m, std::move(params));
  };
  if (m == "gather" || m == "scatter" || m == "dot" || m == "ragged_dot") {
    std::vector<StructField> fields;
    if (m == "gather") {
      fields = {{"offset_dims", FieldKind::kDims},
                {"collapsed_slice_dims", FieldKind::kDims},
                {"operand_batching_dims", FieldKind::kDims},
                {"start_indices_batching_dims", FieldKind::kDims},
                {"start_index_map", FieldKind::kDims},
                {"index_vector_dim", FieldKind::kInt}};
    } else if (m == "scatter") {
      fields = {{"update_window_dims", FieldKind::kDims},
                {"inserted_window_dims", FieldKind::kDims},
                {"input_batching_dims", FieldKind::kDims},
                {"scatter_indices_batching_dims", FieldKind::kDims},
                {"scatter_dims_to_operand_dims", FieldKind::kDims},
                {"index_vector_dim", FieldKind::kInt}};
    } else {
      fields = DotDimensionFields();
      if (m == "ragged_dot") {
        fields.push_back({"lhs_ragged_dimensions", FieldKind::kDims});
        fields.push_back({"rhs_group_dimensions", FieldKind::kDims});
      }
    }
    EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params, ParseStructFields(*this, fields));
    return make(std::move(params));
  }
  if (m == "conv") {
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, "after #stablehlo.conv"));
    if (ConsumeKeyword("raw")) {
      // `raw` spells the struct fields out.
      static const auto* fields = new std::vector<StructField>{
          {"input_batch_dimension", FieldKind::kInt},
          {"input_feature_dimension", FieldKind::kInt},
          {"input_spatial_dimensions", FieldKind::kDims},
          {"kernel_input_feature_dimension", FieldKind::kInt},
          {"kernel_output_feature_dimension", FieldKind::kInt},
          {"kernel_spatial_dimensions", FieldKind::kDims},
          {"output_batch_dimension", FieldKind::kInt},
          {"output_feature_dimension", FieldKind::kInt},
          {"output_spatial_dimensions", FieldKind::kDims}};
      EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params,
                             ParseStructFields(*this, *fields, /*open_consumed=*/true));
      return make(std::move(params));
    }
    EMBER_ASSIGN_OR_RETURN(AttrPtr a, ParseConvDimensionNumbers(*this, dialect));
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close #stablehlo.conv"));
    return a;
  }
  if (m == "channel_handle") {
    EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params,
                           ParseStructFields(*this, {{"handle", FieldKind::kInt},
                                                     {"type", FieldKind::kInt}}));
    return make(std::move(params));
  }
  if (m == "output_operand_alias") {
    EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params,
                           ParseStructFields(*this, {{"output_tuple_indices", FieldKind::kDims},
                                                     {"operand_index", FieldKind::kInt},
                                                     {"operand_tuple_indices", FieldKind::kDims}}));
    return make(std::move(params));
  }
  if (m == "type_extensions") {
    EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params,
                           ParseStructFields(*this, {{"bounds", FieldKind::kDims}}));
    return make(std::move(params));
  }
  if (m == "bounds") {
    // `#stablehlo.bounds<4, ?>` is the short spelling of type_extensions.
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, "after #stablehlo.bounds"));
    std::vector<int64_t> bounds;
    if (!Is(TokKind::kGreater)) {
      while (true) {
        if (ConsumeIf(TokKind::kQuestion)) {
          bounds.push_back(kDynamicDim);
        } else {
          EMBER_ASSIGN_OR_RETURN(int64_t b, ParseInt64());
          bounds.push_back(b);
        }
        if (!ConsumeIf(TokKind::kComma)) break;
      }
    }
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close #stablehlo.bounds"));
    return MakeDialectAttr(d, "type_extensions", {IntListParam("bounds", bounds)});
  }
  if (m == "result_accuracy") {
    EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params,
                           ParseStructFields(*this, {{"atol", FieldKind::kFloat},
                                                     {"rtol", FieldKind::kFloat},
                                                     {"ulps", FieldKind::kInt},
                                                     {"mode", FieldKind::kAttr}}));
    return make(std::move(params));
  }
  if (m == "dot_algorithm") {
    EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params,
                           ParseStructFields(*this, DotAlgorithmFields()));
    return make(std::move(params));
  }
  if (m == "axis_ref") {
    EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params,
                           ParseStructFields(*this, {{"name", FieldKind::kString},
                                                     {"sub_axis_info", FieldKind::kSubAxis}}));
    return make(std::move(params));
  }
  if (m == "mesh_axis") {
    EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params,
                           ParseStructFields(*this, {{"name", FieldKind::kString},
                                                     {"size", FieldKind::kInt}}));
    return make(std::move(params));
  }
  if (m == "mesh") {
    EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params,
                           ParseStructFields(*this, {{"axes", FieldKind::kAttr},
                                                     {"device_ids", FieldKind::kAttr}}));
    return make(std::move(params));
  }
  if (m == "replica_group_mesh_axes") {
    EMBER_ASSIGN_OR_RETURN(std::vector<DialectParam> params,
                           ParseStructFields(*this, {{"mesh", FieldKind::kAttr},
                                                     {"axes", FieldKind::kAttr}}));
    return make(std::move(params));
  }
  if (m == "sub_axis_info") {
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, "after #stablehlo.sub_axis_info"));
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kLParen, "in sub-axis info"));
    EMBER_ASSIGN_OR_RETURN(int64_t pre, ParseInt64());
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kRParen, "in sub-axis info"));
    EMBER_ASSIGN_OR_RETURN(int64_t size, ParseInt64());
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close sub-axis info"));
    return make({IntParam("pre_size", pre), IntParam("size", size)});
  }
  return ErrorAt(start, absl::StrCat("unknown ", d, " attribute '", m, "'"));
}

}  // namespace ember::frontend::text
