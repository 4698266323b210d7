// StableHLO dialect encodings (not VHLO's): the types its bytecode interface writes, codes from
// openxla/stablehlo StablehloBytecode.cpp. JAX sends VHLO, but types inside ops VHLO does not
// convert (an sdy.manual_computation's body) keep their StableHLO encoding.
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/bytecode_internal.h"

namespace ember::frontend::bytecode {

// The token (type code 0, no fields): StableHLO's only bytecode type.
absl::StatusOr<TypePtr> DecodeStablehloType(EntryReader& r) {
  EMBER_ASSIGN_OR_RETURN(uint64_t code, r.VarInt());
  if (code != 0) return r.Error(absl::StrCat("unknown StableHLO type code ", code));
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kDialect;
  t->dialect = "stablehlo";
  t->name = "token";
  return TypePtr(t);
}

}  // namespace ember::frontend::bytecode
