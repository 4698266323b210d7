#include "compiler/driver/program_signature.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/export/stablehlo_text.h"
#include "compiler/ir/sharding.h"

namespace ember::compiler {
namespace {

std::string ShardingString(const ir::Module& module, const ir::AttributeMap* attrs,
                           const ir::ValueType& type) {
  const ir::Attribute* a = nullptr;
  if (attrs != nullptr) {
    a = attrs->Find("sdy.sharding");
    if (a == nullptr) a = attrs->Find("mhlo.sharding");
  }
  if (a == nullptr || a->kind != ir::Attribute::Kind::kSharding || a->sharding == nullptr ||
      !type.is_tensor()) {
    return "{replicated}";
  }
  const ir::TensorSharding& sharding = *a->sharding;
  if (sharding.kind != ir::TensorSharding::Kind::kSplit) {
    return ir::GspmdString(sharding, nullptr, static_cast<int64_t>(type.dims().size()));
  }
  absl::StatusOr<ir::Mesh> mesh = ir::MeshOfSharding(module, sharding);
  return ir::GspmdString(sharding, mesh.ok() ? &*mesh : nullptr,
                         static_cast<int64_t>(type.dims().size()));
}

std::string ZeroConstant(const ir::ValueType& type) {
  const ir::ElementType e = type.element_type();
  std::string value = "0";
  if (e == ir::ElementType::kPred) {
    value = "false";
  } else if (ir::IsComplex(e)) {
    value = "(0.000000e+00,0.000000e+00)";
  } else if (ir::IsFloat(e)) {
    value = "0.000000e+00";
  }
  return absl::StrCat("dense<", value, "> : ", type.ToString());
}

}  // namespace

absl::StatusOr<ProgramSignature> ReadProgramSignature(const ir::Module& module,
                                                      const ir::Computation& entry) {
  ProgramSignature sig;
  for (size_t i = 0; i < entry.parameters().size(); ++i) {
    const ir::ValueType& type = entry.parameter(i)->type();
    sig.parameter_types.push_back(type);
    sig.parameter_shardings.push_back(ShardingString(
        module, i < entry.arg_attributes().size() ? &entry.arg_attributes()[i] : nullptr, type));
  }
  sig.result_types = entry.result_types();
  for (size_t r = 0; r < sig.result_types.size(); ++r) {
    sig.result_shardings.push_back(ShardingString(
        module, r < entry.result_attributes().size() ? &entry.result_attributes()[r] : nullptr,
        sig.result_types[r]));
  }
  return sig;
}

void UpdateResultShardings(const ir::Module& module, const ir::Computation& entry,
                           ProgramSignature& signature) {
  for (size_t r = 0; r < signature.result_types.size() && r < signature.result_shardings.size();
       ++r) {
    signature.result_shardings[r] = ShardingString(
        module, r < entry.result_attributes().size() ? &entry.result_attributes()[r] : nullptr,
        signature.result_types[r]);
  }
}

std::string SignatureModuleText(const ProgramSignature& signature, const std::string& name,
                                int64_t num_replicas, int64_t num_partitions) {
  const StablehloModuleHeader header{name, num_replicas, num_partitions,
                                     signature.parameter_shardings, signature.result_shardings};
  std::string text =
      StablehloModuleOpening(header, signature.parameter_types, signature.result_types);
  std::vector<std::string> names, types;
  for (size_t i = 0; i < signature.result_types.size(); ++i) {
    absl::StrAppend(&text, "    %r", i, " = stablehlo.constant ",
                    ZeroConstant(signature.result_types[i]), "\n");
    names.push_back(absl::StrCat("%r", i));
    types.push_back(signature.result_types[i].ToString());
  }
  absl::StrAppend(&text, "    return ", absl::StrJoin(names, ", "), names.empty() ? "" : " : ",
                  absl::StrJoin(types, ", "), "\n  }\n}\n");
  return text;
}

}  // namespace ember::compiler
