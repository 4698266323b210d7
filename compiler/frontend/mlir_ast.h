// A generic, dialect-neutral MLIR operation tree: what the bytecode reader (and later the text
// parser) produce before any dialect-specific conversion. It keeps every op, attribute and type it
// was given (nothing is dropped), prints to a stable text form, and compares structurally.
#ifndef EMBER_COMPILER_FRONTEND_MLIR_AST_H_
#define EMBER_COMPILER_FRONTEND_MLIR_AST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember::frontend {

struct Type;
struct Attribute;
// Types and attributes are immutable values shared between every use (the bytecode tables
// reference one entry from many places), so shared ownership is the honest model.
using TypePtr = std::shared_ptr<const Type>;
using AttrPtr = std::shared_ptr<const Attribute>;

enum class Signedness : uint8_t { kSignless, kSigned, kUnsigned };

// Every float format MLIR's builtin dialect (and VHLO) can name.
enum class FloatKind : uint8_t {
  kBF16, kF16, kF32, kF64, kF80, kF128, kTF32,
  kF8E5M2, kF8E4M3, kF8E4M3FN, kF8E5M2FNUZ, kF8E4M3FNUZ, kF8E4M3B11FNUZ, kF8E3M4,
  kF4E2M1FN, kF6E2M3FN, kF6E3M2FN, kF8E8M0FNU,
};
// MLIR spelling ("bf16", "f8E4M3FN", ...).
const char* FloatKindName(FloatKind kind);
// Storage size in bits of the IEEE-like bit pattern (f80 = 80, tf32 = 19, f4E2M1FN = 4).
unsigned FloatKindBitWidth(FloatKind kind);

// A parameter of a dialect attribute/type (VHLO, sdy, ...): named, one of a few shapes.
struct DialectParam {
  enum class Kind : uint8_t { kInt, kUInt, kBool, kString, kBytes, kFloatBits, kType, kAttr, kList };
  std::string name;
  Kind kind = Kind::kInt;
  int64_t i = 0;            // kInt
  uint64_t u = 0;           // kUInt, kBool (0/1)
  std::string s;            // kString, kBytes (raw data), kFloatBits (see words)
  std::vector<uint64_t> words;  // kFloatBits / wide integers: little-endian 64-bit words
  TypePtr type;             // kType
  AttrPtr attr;             // kAttr (may be null for an absent optional attribute)
  std::vector<DialectParam> list;  // kList
};

enum class TypeKind : uint8_t {
  kInteger, kIndex, kFloat, kComplex, kRankedTensor, kUnrankedTensor, kVector, kMemRef,
  kUnrankedMemRef, kTuple, kFunction, kNone,
  kDialect,   // a dialect type decoded into (dialect, name, params)
  kOpaque,    // a type kept as its textual MLIR form (textual-fallback entries we do not parse)
};

// Dynamic dimension marker in shapes (MLIR's ShapedType::kDynamic).
inline constexpr int64_t kDynamicDim = INT64_MIN;

struct Type {
  TypeKind kind = TypeKind::kNone;
  unsigned width = 0;                       // kInteger
  Signedness signedness = Signedness::kSignless;
  FloatKind float_kind = FloatKind::kF32;   // kFloat
  std::vector<int64_t> shape;               // kRankedTensor, kVector, kMemRef
  std::vector<bool> scalable_dims;          // kVector
  TypePtr element;                          // kComplex, tensors, vector, memrefs
  std::vector<TypePtr> types;               // kTuple elements, kFunction inputs
  std::vector<TypePtr> results;             // kFunction results
  AttrPtr encoding;                         // kRankedTensor encoding, kMemRef layout
  AttrPtr memory_space;                     // kMemRef / kUnrankedMemRef
  std::string dialect;                      // kDialect, kOpaque
  std::string name;                         // kDialect mnemonic; kOpaque: full text
  std::vector<DialectParam> params;         // kDialect
};

struct NamedAttribute {
  std::string name;
  AttrPtr value;
  // True for inherent attributes (properties in bytecode >= 5, or attributes an op schema names).
  bool inherent = false;
};

enum class AttrKind : uint8_t {
  kInteger,        // type + value words (i1 IntegerAttr is MLIR's BoolAttr)
  kFloat,          // type + raw bit pattern words
  kString,         // str (+ optional type)
  kArray,          // elements
  kDictionary,     // entries (sorted by name)
  kDenseElements,  // type + data (wire layout, see DenseElementCount/IsSplat helpers)
  kDenseResource,  // type + str (resource key) + data (blob bytes, may be empty)
  kDenseArray,     // element_type + count + data
  kDenseString,    // type + strings (one when splat)
  kSparseElements, // type + elements[0] indices, elements[1] values
  kType,           // type
  kUnit,
  kSymbolRef,      // str = root, strings = nested references
  kDistinct,       // elements[0] = referenced attribute, count = distinct id
  kAffineMap,      // str = a readable rendering of the map
  kIntegerSet,     // str = a readable rendering
  kUnknownLoc, kFileLineColLoc, kNameLoc, kCallSiteLoc, kFusedLoc,
  kDialect,        // dialect attribute decoded into (dialect, name, params)
  kOpaque,         // textual-fallback attribute we keep verbatim (dialect + str)
};

struct Attribute {
  AttrKind kind = AttrKind::kUnit;
  TypePtr type;                      // typed attributes; kDenseArray: element type
  // kInteger value / kFloat bits, least significant first; values wider than 64 bits keep only
  // their active words (as written), so a huge declared width costs nothing by itself.
  std::vector<uint64_t> words;
  std::string str;                   // string value, symbol root, file name, loc name, resource key
  std::vector<std::string> strings;  // nested symbol refs, dense strings
  std::vector<AttrPtr> elements;     // array elements; loc children (callee, caller / fused)
  std::vector<NamedAttribute> entries;  // dictionary
  std::vector<uint8_t> data;         // dense data / resource blob
  uint64_t count = 0;                // dense array element count, distinct id
  // kFileLineColLoc: line, column, end_line, end_column; which ones are meaningful depends on
  // `loc_fields` (0 = file only, 2 = line:col, 4 = full range) so printing round-trips.
  uint64_t line = 0, column = 0, end_line = 0, end_column = 0;
  uint8_t loc_fields = 2;
  AttrPtr metadata;                  // kFusedLoc metadata
  std::string dialect;               // kDialect, kOpaque
  std::string name;                  // kDialect mnemonic
  std::vector<DialectParam> params;  // kDialect

  // Convenience for integer attributes: the low 64 bits sign-extended from the type's width.
  int64_t IntValue() const;
};

struct Operation;
struct Block;

// A use of an SSA value: an op result or a block argument, identified by its definition.
struct ValueRef {
  Operation* op = nullptr;  // set for op results
  Block* block = nullptr;   // set for block arguments
  uint32_t index = 0;
  bool operator==(const ValueRef& o) const {
    return op == o.op && block == o.block && index == o.index;
  }
};

struct BlockArgument {
  TypePtr type;
  AttrPtr loc;  // null = unknown location
};

struct Region;

struct Block {
  std::vector<BlockArgument> arguments;
  std::vector<std::unique_ptr<Operation>> operations;
  Region* parent = nullptr;
};

struct Region {
  std::vector<std::unique_ptr<Block>> blocks;
  Operation* parent = nullptr;
};

struct Operation {
  std::string name;                       // "dialect.op", e.g. "vhlo.add_v1"
  std::vector<ValueRef> operands;
  std::vector<TypePtr> result_types;
  std::vector<NamedAttribute> attributes;  // inherent + discardable, in reading order
  std::vector<Region> regions;
  std::vector<Block*> successors;          // blocks of the enclosing region
  AttrPtr loc;
  Block* parent = nullptr;
  bool registered = true;                  // the writer's "was registered" flag (bytecode >= 5)

  const Attribute* FindAttribute(const std::string& attr_name) const;
  std::string Dialect() const { return name.substr(0, name.find('.')); }
};

// Stable, readable text (MLIR generic-form flavoured). Values are numbered %0, %1, ... in
// pre-order over the whole tree; blocks ^bb0, ^bb1 ... per region.
std::string PrintType(const Type& type);
std::string PrintAttribute(const Attribute& attr);
std::string PrintOperation(const Operation& op, bool with_locations = false);

bool TypesEqual(const Type& a, const Type& b);
bool AttributesEqual(const Attribute& a, const Attribute& b);
bool TypesEqual(const TypePtr& a, const TypePtr& b);
bool AttributesEqual(const AttrPtr& a, const AttrPtr& b);

struct StructuralEqualityOptions {
  // Locations differ between a stripped artifact and its source; ignore them unless asked.
  bool compare_locations = false;
  // Bytecode < 5 cannot say which attributes are inherent; ignore the flag by default.
  bool compare_inherent_flags = false;
};
// Compares two trees up to value renaming. On mismatch fills `why` (if non-null) with a path.
bool StructurallyEqual(const Operation& a, const Operation& b, std::string* why);
bool StructurallyEqual(const Operation& a, const Operation& b,
                       const StructuralEqualityOptions& options, std::string* why);

}  // namespace ember::frontend

#endif  // EMBER_COMPILER_FRONTEND_MLIR_AST_H_
