#include "ffi/call_frame.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ember::ffi {
namespace {

XLA_FFI_DataType DataType(ir::ElementType type) {
  return static_cast<XLA_FFI_DataType>(ir::ElementTypeToPrimitiveType(type));
}

absl::Status AttributeError(const ir::Instruction& op, const std::string& path,
                            const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat(op.Describe(), ": FFI attribute '", path, "' ", what));
}

// The attribute dictionary of a typed-FFI custom call: `backend_config` (api_version 4) or
// `mhlo.backend_config` (JAX's api_version 1 lowering with a dictionary). A non-empty string
// config belongs to an untyped custom call, which has no FFI attributes.
absl::StatusOr<const ir::Attribute*> AttributeDictionary(const ir::Instruction& op) {
  for (const char* name : {"backend_config", "mhlo.backend_config"}) {
    const ir::Attribute* a = op.attribute(name);
    if (a == nullptr) continue;
    if (a->kind == ir::Attribute::Kind::kDict) return a;
    if (a->kind == ir::Attribute::Kind::kString && !a->s.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(op.Describe(), ": ", name,
                       " is an opaque string; XLA FFI handlers take a dictionary of attributes "
                       "(api_version 4, as jax.ffi lowers them)"));
    }
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CallFrame>> CallFrame::Build(const ir::Instruction& op,
                                                            std::vector<eval::EvalValue>& operands,
                                                            XLA_FFI_ExecutionContext* ctx) {
  std::unique_ptr<CallFrame> f(new CallFrame());
  for (size_t i = 0; i < operands.size(); ++i) {
    EMBER_RETURN_IF_ERROR(f->AddBuffer(op, operands[i], /*is_result=*/false, i));
  }
  f->results_.reserve(op.num_results());
  for (size_t r = 0; r < op.num_results(); ++r) {
    const ir::ValueType& type = op.result(r)->type();
    if (type.is_token()) {
      f->results_.push_back(eval::EvalValue::Token());
    } else if (type.is_tensor() && type.is_static()) {
      EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(type.element_type(), type.dims()));
      EMBER_ASSIGN_OR_RETURN(ir::Literal literal, ir::Literal::Create(shape));
      f->results_.push_back(eval::EvalValue::Array(std::move(literal)));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(op.Describe(), ": result ", r, " of type ",
                                                     type.ToString(),
                                                     " cannot be an FFI result buffer"));
    }
    EMBER_RETURN_IF_ERROR(f->AddBuffer(op, f->results_.back(), /*is_result=*/true, r));
  }
  EMBER_RETURN_IF_ERROR(f->Finish(op, ctx));
  return f;
}

absl::StatusOr<std::unique_ptr<CallFrame>> CallFrame::BuildOnBuffers(
    const ir::Instruction& op, const std::vector<void*>& args, const std::vector<void*>& rets,
    XLA_FFI_ExecutionContext* ctx) {
  if (args.size() != op.operands().size() || rets.size() != op.num_results()) {
    return absl::InternalError(absl::StrCat(op.Describe(), ": ", args.size(), " arguments and ",
                                            rets.size(), " results for an FFI call frame"));
  }
  std::unique_ptr<CallFrame> f(new CallFrame());
  for (size_t i = 0; i < args.size(); ++i) {
    EMBER_RETURN_IF_ERROR(
        f->AddTypedBuffer(op, op.operand(i)->type(), args[i], /*is_result=*/false, i));
  }
  for (size_t r = 0; r < rets.size(); ++r) {
    EMBER_RETURN_IF_ERROR(
        f->AddTypedBuffer(op, op.result(r)->type(), rets[r], /*is_result=*/true, r));
  }
  EMBER_RETURN_IF_ERROR(f->Finish(op, ctx));
  return f;
}

absl::Status CallFrame::Finish(const ir::Instruction& op, XLA_FFI_ExecutionContext* ctx) {
  EMBER_ASSIGN_OR_RETURN(const ir::Attribute* dict, AttributeDictionary(op));
  EMBER_ASSIGN_OR_RETURN(
      XLA_FFI_Attrs * attrs,
      EncodeDictionary(
          op, dict != nullptr ? dict->dict : std::vector<std::pair<std::string, ir::Attribute>>{},
          ""));
  frame_.struct_size = EMBER_XLA_FFI_CALL_FRAME_STRUCT_SIZE;
  frame_.extension_start = nullptr;
  frame_.ctx = ctx;
  frame_.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame_.args = {sizeof(XLA_FFI_Args), nullptr, static_cast<int64_t>(args_.size()),
                 arg_types_.data(), args_.data()};
  frame_.rets = {sizeof(XLA_FFI_Rets), nullptr, static_cast<int64_t>(rets_.size()),
                 ret_types_.data(), rets_.data()};
  frame_.attrs = *attrs;
  frame_.future = nullptr;
  return absl::OkStatus();
}

absl::Status CallFrame::AddTypedBuffer(const ir::Instruction& op, const ir::ValueType& type,
                                       void* data, bool is_result, size_t index) {
  XLA_FFI_Buffer buffer{};
  buffer.struct_size = sizeof(XLA_FFI_Buffer);
  if (type.is_token()) {
    buffer.dtype = XLA_FFI_DataType_TOKEN;
    buffer.rank = 0;
  } else if (type.is_tensor() && type.is_static()) {
    buffer.dtype = DataType(type.element_type());
    buffer.data = data;
    dims_.emplace_back(type.dims().begin(), type.dims().end());
    buffer.rank = static_cast<int64_t>(type.dims().size());
    buffer.dims = dims_.back().data();
  } else {
    return absl::InvalidArgumentError(absl::StrCat(op.Describe(), ": ",
                                                   is_result ? "result " : "operand ", index,
                                                   " of type ", type.ToString(),
                                                   " cannot be an FFI buffer"));
  }
  AddFrameBuffer(buffer, is_result);
  return absl::OkStatus();
}

void CallFrame::AddFrameBuffer(const XLA_FFI_Buffer& buffer, bool is_result) {
  buffers_.push_back(buffer);
  if (is_result) {
    ret_types_.push_back(XLA_FFI_RetType_BUFFER);
    rets_.push_back(&buffers_.back());
  } else {
    arg_types_.push_back(XLA_FFI_ArgType_BUFFER);
    args_.push_back(&buffers_.back());
  }
}

absl::Status CallFrame::AddBuffer(const ir::Instruction& op, eval::EvalValue& value, bool is_result,
                                  size_t index) {
  XLA_FFI_Buffer buffer{};
  buffer.struct_size = sizeof(XLA_FFI_Buffer);
  if (value.kind == eval::EvalValue::Kind::kToken) {
    buffer.dtype = XLA_FFI_DataType_TOKEN;
    buffer.rank = 0;
  } else if (value.kind == eval::EvalValue::Kind::kArray) {
    const ir::Shape& shape = value.array.shape();
    buffer.dtype = DataType(shape.element_type());
    buffer.data = value.array.mutable_bytes().data();
    dims_.emplace_back(shape.dims().begin(), shape.dims().end());
    buffer.rank = static_cast<int64_t>(shape.dims().size());
    buffer.dims = dims_.back().data();
  } else {
    return absl::InvalidArgumentError(absl::StrCat(op.Describe(), ": ",
                                                   is_result ? "result " : "operand ", index,
                                                   " is not an array or a token"));
  }
  AddFrameBuffer(buffer, is_result);
  return absl::OkStatus();
}

absl::StatusOr<XLA_FFI_Attrs*> CallFrame::EncodeDictionary(
    const ir::Instruction& op, const std::vector<std::pair<std::string, ir::Attribute>>& attrs,
    const std::string& path) {
  std::vector<const std::pair<std::string, ir::Attribute>*> sorted;
  for (const auto& entry : attrs) sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  attr_types_.emplace_back();
  attr_names_.emplace_back();
  attr_values_.emplace_back();
  std::vector<XLA_FFI_AttrType>& types = attr_types_.back();
  std::vector<XLA_FFI_ByteSpan*>& names = attr_names_.back();
  std::vector<void*>& values = attr_values_.back();
  for (const auto* entry : sorted) {
    const std::string name = path.empty() ? entry->first : absl::StrCat(path, ".", entry->first);
    EMBER_ASSIGN_OR_RETURN(auto encoded, EncodeAttribute(op, entry->second, name));
    strings_.push_back(entry->first);
    spans_.push_back({strings_.back().data(), strings_.back().size()});
    types.push_back(encoded.first);
    names.push_back(&spans_.back());
    values.push_back(encoded.second);
  }
  attr_tables_.push_back({sizeof(XLA_FFI_Attrs), nullptr, static_cast<int64_t>(types.size()),
                          types.data(), names.data(), values.data()});
  return &attr_tables_.back();
}

absl::StatusOr<std::pair<XLA_FFI_AttrType, void*>> CallFrame::EncodeAttribute(
    const ir::Instruction& op, const ir::Attribute& a, const std::string& path) {
  using Kind = ir::Attribute::Kind;
  // A scalar or array of `type` whose values are `bytes` (little-endian, packed).
  auto scalar = [&](ir::ElementType type, std::vector<uint8_t> bytes) {
    bytes_.push_back(std::move(bytes));
    scalars_.push_back({DataType(type), bytes_.back().data()});
    return std::pair<XLA_FFI_AttrType, void*>(XLA_FFI_AttrType_SCALAR, &scalars_.back());
  };
  auto array = [&](ir::ElementType type, size_t size, std::vector<uint8_t> bytes) {
    bytes_.push_back(std::move(bytes));
    arrays_.push_back({DataType(type), size, bytes_.back().data()});
    return std::pair<XLA_FFI_AttrType, void*>(XLA_FFI_AttrType_ARRAY, &arrays_.back());
  };
  auto raw = [](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    return std::vector<uint8_t>(b, b + n);
  };
  switch (a.kind) {
    case Kind::kBool:
      return scalar(ir::ElementType::kPred, {static_cast<uint8_t>(a.b ? 1 : 0)});
    case Kind::kInt: {
      const ir::ElementType type =
          a.scalar_type == ir::ElementType::kInvalid ? ir::ElementType::kS64 : a.scalar_type;
      const int width = ir::StorageBytes(type);
      if (!ir::IsInteger(type) || width > 8) {
        return AttributeError(op, path, "is an integer of a non-integer type");
      }
      return scalar(type, raw(&a.i, static_cast<size_t>(width)));  // little-endian truncation
    }
    case Kind::kFloat: {
      const ir::ElementType type =
          a.scalar_type == ir::ElementType::kInvalid ? ir::ElementType::kF64 : a.scalar_type;
      if (type == ir::ElementType::kF32) {
        const float v = static_cast<float>(a.f);
        return scalar(type, raw(&v, 4));
      }
      if (type == ir::ElementType::kF64) return scalar(type, raw(&a.f, 8));
      return AttributeError(op, path, "is a float of a type FFI scalars do not take (f32, f64)");
    }
    case Kind::kString: {
      strings_.push_back(a.s);
      spans_.push_back({strings_.back().data(), strings_.back().size()});
      return std::pair<XLA_FFI_AttrType, void*>(XLA_FFI_AttrType_STRING, &spans_.back());
    }
    case Kind::kInts: {
      const ir::ElementType type =
          a.scalar_type == ir::ElementType::kInvalid ? ir::ElementType::kS64 : a.scalar_type;
      const int width = ir::StorageBytes(type);
      if (!ir::IsInteger(type) || width > 8) {
        return AttributeError(op, path, "is an integer array of a non-integer type");
      }
      std::vector<uint8_t> packed;
      for (int64_t v : a.ints) {
        const std::vector<uint8_t> b = raw(&v, static_cast<size_t>(width));
        packed.insert(packed.end(), b.begin(), b.end());
      }
      return array(type, a.ints.size(), std::move(packed));
    }
    case Kind::kFloats:
      return array(ir::ElementType::kF64, a.floats.size(),
                   raw(a.floats.data(), a.floats.size() * 8));
    case Kind::kBools: {
      std::vector<uint8_t> b;
      for (bool v : a.bools) b.push_back(v ? 1 : 0);
      const size_t n = b.size();
      return array(ir::ElementType::kPred, n, std::move(b));
    }
    case Kind::kLiteral: {
      if (a.literal == nullptr) return AttributeError(op, path, "is an empty literal");
      const ir::Shape& shape = a.literal->shape();
      const auto bytes = a.literal->bytes();
      std::vector<uint8_t> copy(bytes.begin(), bytes.end());
      if (shape.rank() == 0) return scalar(shape.element_type(), std::move(copy));
      if (shape.rank() == 1) {
        return array(shape.element_type(), static_cast<size_t>(shape.element_count()),
                     std::move(copy));
      }
      return AttributeError(op, path,
                            absl::StrCat("is a rank-", shape.rank(),
                                         " tensor; FFI attributes are scalars or 1-D arrays"));
    }
    case Kind::kDict: {
      EMBER_ASSIGN_OR_RETURN(XLA_FFI_Attrs * nested, EncodeDictionary(op, a.dict, path));
      return std::pair<XLA_FFI_AttrType, void*>(XLA_FFI_AttrType_DICTIONARY, nested);
    }
    case Kind::kList:
      if (a.list.empty()) return array(ir::ElementType::kS64, 0, {});
      return AttributeError(op, path, "is a list of non-numbers, which FFI attributes cannot be");
    case Kind::kType:
      return AttributeError(op, path, "is a type, which FFI attributes cannot be");
    case Kind::kMesh:
    case Kind::kSharding:
      return AttributeError(op, path, "is a mesh or sharding, which FFI attributes cannot be");
  }
  return AttributeError(op, path, "has an unknown kind");
}

}  // namespace ember::ffi
