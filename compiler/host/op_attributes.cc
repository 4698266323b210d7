#include "compiler/host/op_attributes.h"

namespace ember::host {

std::string CustomCallTarget(const ir::Instruction& inst) {
  if (inst.opcode() != ir::Opcode::kCustomCall) return "";
  const ir::Attribute* target = inst.attribute("call_target_name");
  if (target == nullptr || target->kind != ir::Attribute::Kind::kString) return "";
  return target->s;
}

std::optional<bool> BackendConfigFlag(const ir::Instruction& inst, const char* key, bool fallback) {
  const ir::Attribute* config = inst.attribute("backend_config");
  if (config == nullptr || config->kind != ir::Attribute::Kind::kDict) {
    config = inst.attribute("mhlo.backend_config");
  }
  if (config == nullptr || config->kind != ir::Attribute::Kind::kDict) return fallback;
  for (const auto& [name, value] : config->dict) {
    if (name != key) continue;
    if (value.kind == ir::Attribute::Kind::kBool) return value.b;
    if (value.kind == ir::Attribute::Kind::kInt) return value.i != 0;
    return std::nullopt;
  }
  return fallback;
}

bool IsRowMajor(const ir::ValueType& t) {
  return t.is_tensor() && t.is_static() && t.shape().layout().IsRowMajor();
}

}  // namespace ember::host
