// Helpers shared by the evaluator's op-family files; see eval_family_support.h.
#include "compiler/evaluator/eval_family_support.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_join.h"

namespace ember::eval::family_support {

namespace {

absl::Status MissingAttr(const ir::Instruction& inst, std::string_view name) {
  return OpError(inst, absl::StrCat("missing attribute '", std::string(name), "'"));
}

absl::Status WrongKind(const ir::Instruction& inst, std::string_view name, const ir::Attribute& a,
                       std::string_view want) {
  return OpError(inst, absl::StrCat("attribute '", std::string(name), "' is ", a.ToString(),
                                    ", expected ", std::string(want)));
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> IntsAttr(const ir::Instruction& inst, std::string_view name,
                                              std::optional<std::vector<int64_t>> fallback) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr) {
    if (fallback.has_value()) return *fallback;
    return MissingAttr(inst, name);
  }
  switch (a->kind) {
    case ir::Attribute::Kind::kInts:
      return a->ints;
    case ir::Attribute::Kind::kInt:
      return std::vector<int64_t>{a->i};
    case ir::Attribute::Kind::kLiteral:
      if (a->literal != nullptr) {
        absl::StatusOr<std::vector<int64_t>> values = IntegerValues(*a->literal);
        if (values.ok()) return values;
      }
      break;
    case ir::Attribute::Kind::kBools: {
      std::vector<int64_t> out;
      for (bool b : a->bools) out.push_back(b ? 1 : 0);
      return out;
    }
    default:
      break;
  }
  return WrongKind(inst, name, *a, "a list of integers");
}

absl::StatusOr<int64_t> IntAttr(const ir::Instruction& inst, std::string_view name,
                                std::optional<int64_t> fallback) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr) {
    if (fallback.has_value()) return *fallback;
    return MissingAttr(inst, name);
  }
  if (a->kind == ir::Attribute::Kind::kInt) return a->i;
  if (a->kind == ir::Attribute::Kind::kBool) return a->b ? 1 : 0;
  if (a->kind == ir::Attribute::Kind::kLiteral && a->literal != nullptr &&
      a->literal->shape().element_count() == 1) {
    absl::StatusOr<std::vector<int64_t>> values = IntegerValues(*a->literal);
    if (values.ok()) return (*values)[0];
  }
  return WrongKind(inst, name, *a, "an integer");
}

absl::StatusOr<bool> BoolAttr(const ir::Instruction& inst, std::string_view name,
                              std::optional<bool> fallback) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr) {
    if (fallback.has_value()) return *fallback;
    return MissingAttr(inst, name);
  }
  if (a->kind == ir::Attribute::Kind::kBool) return a->b;
  if (a->kind == ir::Attribute::Kind::kInt) return a->i != 0;
  return WrongKind(inst, name, *a, "a boolean");
}

absl::StatusOr<std::vector<bool>> BoolsAttr(const ir::Instruction& inst, std::string_view name,
                                            std::optional<std::vector<bool>> fallback) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr) {
    if (fallback.has_value()) return *fallback;
    return MissingAttr(inst, name);
  }
  if (a->kind == ir::Attribute::Kind::kBools) return a->bools;
  if (a->kind == ir::Attribute::Kind::kInts || a->kind == ir::Attribute::Kind::kLiteral) {
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> ints, IntsAttr(inst, name));
    std::vector<bool> out;
    for (int64_t v : ints) out.push_back(v != 0);
    return out;
  }
  return WrongKind(inst, name, *a, "a list of booleans");
}

const ir::Attribute* BackendConfigEntry(const ir::Instruction& inst, std::string_view key) {
  const ir::Attribute* config = inst.attribute("backend_config");
  if (config == nullptr || config->kind != ir::Attribute::Kind::kDict) {
    config = inst.attribute("mhlo.backend_config");
  }
  if (config == nullptr || config->kind != ir::Attribute::Kind::kDict) return nullptr;
  for (const auto& [name, value] : config->dict) {
    if (name == key) return &value;
  }
  return nullptr;
}

absl::StatusOr<bool> BackendConfigFlag(const ir::Instruction& inst, std::string_view key,
                                       bool fallback) {
  const ir::Attribute* a = BackendConfigEntry(inst, key);
  if (a == nullptr) return fallback;
  if (a->kind == ir::Attribute::Kind::kBool) return a->b;
  if (a->kind == ir::Attribute::Kind::kInt) return a->i != 0;
  if (a->kind == ir::Attribute::Kind::kLiteral && a->literal != nullptr &&
      a->literal->shape().element_count() == 1) {
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> v, IntegerValues(*a->literal));
    return v[0] != 0;
  }
  return OpError(inst, absl::StrCat("backend_config entry '", std::string(key), "' is ",
                                    a->ToString(), ", not a boolean"));
}

absl::StatusOr<std::string> StringAttr(const ir::Instruction& inst, std::string_view name,
                                       std::optional<std::string> fallback) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr) {
    if (fallback.has_value()) return *fallback;
    return MissingAttr(inst, name);
  }
  if (a->kind == ir::Attribute::Kind::kString) return a->s;
  return WrongKind(inst, name, *a, "a string");
}

absl::StatusOr<double> FloatAttr(const ir::Instruction& inst, std::string_view name,
                                 std::optional<double> fallback) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr) {
    if (fallback.has_value()) return *fallback;
    return MissingAttr(inst, name);
  }
  if (a->kind == ir::Attribute::Kind::kFloat) return a->f;
  if (a->kind == ir::Attribute::Kind::kInt) return static_cast<double>(a->i);
  return WrongKind(inst, name, *a, "a float");
}

absl::StatusOr<std::vector<std::vector<int64_t>>> IntRowsAttr(const ir::Instruction& inst,
                                                              std::string_view name,
                                                              int64_t row_size) {
  std::vector<std::vector<int64_t>> rows;
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr) return rows;
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> flat, IntsAttr(inst, name));
  int64_t width = row_size;
  if (a->kind == ir::Attribute::Kind::kLiteral && a->literal != nullptr) {
    const ir::Shape& shape = a->literal->shape();
    if (shape.rank() == 2) width = shape.dim(1);
  }
  if (flat.empty()) return rows;
  if (width <= 0) width = static_cast<int64_t>(flat.size());
  if (static_cast<int64_t>(flat.size()) % width != 0) {
    return OpError(inst, absl::StrCat("attribute '", std::string(name), "' has ", flat.size(),
                                      " values, not a multiple of the row size ", width));
  }
  for (size_t i = 0; i < flat.size(); i += static_cast<size_t>(width)) {
    rows.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(i),
                      flat.begin() + static_cast<std::ptrdiff_t>(i + width));
  }
  return rows;
}

absl::StatusOr<ir::Shape> ResultShape(const ir::Instruction& inst, size_t i) {
  if (i >= inst.num_results()) {
    return OpError(inst,
                   absl::StrCat("result ", i, " is missing (", inst.num_results(), " results)"));
  }
  const ir::ValueType& type = inst.result(i)->type();
  if (!type.is_tensor()) {
    return OpError(inst, absl::StrCat("result ", i, " is ", type.ToString(), ", not a tensor"));
  }
  return ir::Shape::Make(type.element_type(), type.dims());
}

int64_t Product(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

bool NextIndex(std::vector<int64_t>& index, absl::Span<const int64_t> dims) {
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

int64_t Linearize(absl::Span<const int64_t> index, absl::Span<const int64_t> strides) {
  int64_t linear = 0;
  for (size_t i = 0; i < index.size(); ++i) linear += index[i] * strides[i];
  return linear;
}

absl::Status CheckDims(const ir::Instruction& inst, std::string_view what,
                       absl::Span<const int64_t> dims, int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(rank > 0 ? rank : 0), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return OpError(
          inst, absl::StrCat(std::string(what), " dimension ", d, " out of range for rank ", rank));
    }
    if (seen[d]) {
      return OpError(inst, absl::StrCat(std::string(what), " dimension ", d, " repeats in [",
                                        absl::StrJoin(dims, ", "), "]"));
    }
    seen[d] = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> IntegerValues(const ir::Literal& literal) {
  const ir::ElementType type = literal.element_type();
  if (!ir::IsInteger(type) && type != ir::ElementType::kPred) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected integers, got ", literal.shape().ToString()));
  }
  return ir::VisitElementType(type, [&](auto tag) -> absl::StatusOr<std::vector<int64_t>> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_void_v<T>) {
      return absl::InternalError("no integer type");
    } else {
      EMBER_ASSIGN_OR_RETURN(absl::Span<const T> data, literal.data<T>());
      std::vector<int64_t> out;
      out.reserve(data.size());
      for (const T& v : data) {
        if constexpr (IsSubByteIntT<T>::value) {
          out.push_back(v.value());
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          // u64 values past int64 saturate: still out of range wherever indices are used.
          out.push_back(v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v));
        } else if constexpr (std::is_integral_v<T>) {
          out.push_back(static_cast<int64_t>(v));
        } else {
          out.push_back(0);
        }
      }
      return out;
    }
  });
}

absl::StatusOr<std::vector<EvalValue>> RunRegion(Evaluator& evaluator,
                                                 const ir::Computation& region,
                                                 std::vector<ir::Literal> arguments) {
  std::vector<EvalValue> args;
  args.reserve(arguments.size());
  for (ir::Literal& a : arguments) args.push_back(EvalValue::Array(std::move(a)));
  return evaluator.Run(region, std::move(args));
}

// The channel of a collective: `channel_handle` (a dict with `handle`, an int or ints) or
// `channel_id`; 0 when it has none.
int64_t ChannelId(const ir::Instruction& inst) {
  const ir::Attribute* a = inst.attribute("channel_handle");
  if (a == nullptr) a = inst.attribute("channel_id");
  if (a == nullptr) return 0;
  if (a->kind == ir::Attribute::Kind::kInt) return a->i;
  if (a->kind == ir::Attribute::Kind::kDict) {
    for (const auto& [name, value] : a->dict) {
      if (name == "handle" && value.kind == ir::Attribute::Kind::kInt) return value.i;
    }
  }
  if (a->kind == ir::Attribute::Kind::kInts && !a->ints.empty()) return a->ints[0];
  return 0;
}

}  // namespace ember::eval::family_support
