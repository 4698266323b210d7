// Op attributes in Ember's IR, named as in the StableHLO specification. Structured attributes
// (dot/conv/gather/scatter dimension numbers) are flattened into one attribute per spec field
// (e.g. `lhs_contracting_dimensions`); enums (comparison_direction, precision, ...) are strings
// spelled as in the spec ("GT", "DEFAULT"); dense constants are literals; device meshes and
// shardings are their typed structs (mesh.h, sharding.h).
#ifndef EMBER_COMPILER_IR_ATTRIBUTE_H_
#define EMBER_COMPILER_IR_ATTRIBUTE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/literal.h"
#include "compiler/ir/value_type.h"

namespace ember::ir {

struct Mesh;
struct TensorSharding;

struct Attribute {
  enum class Kind {
    kBool, kInt, kFloat, kString, kInts, kBools, kFloats, kLiteral, kType, kList, kDict,
    kMesh, kSharding,
  };
  Kind kind = Kind::kBool;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<bool> bools;
  std::vector<double> floats;
  std::shared_ptr<const Literal> literal;  // shared: constants are large and never mutated
  std::vector<ValueType> types;            // kType: one entry
  std::vector<Attribute> list;
  std::vector<std::pair<std::string, Attribute>> dict;
  std::shared_ptr<const Mesh> mesh;               // kMesh
  std::shared_ptr<const TensorSharding> sharding;  // kSharding
  // kInt / kFloat (and the elements of kInts / kFloats) read from a typed MLIR attribute: its
  // element type (i32, ui64, f32, ...), which custom-call handlers that receive attributes (XLA
  // FFI) check; kInvalid when the source gave none (then i64 / f64). Not part of equality: the
  // value is what the op means.
  ElementType scalar_type = ElementType::kInvalid;

  // Defined where Attribute is complete (attribute.cc): `list` and `dict` hold Attributes, and
  // std::pair may not be instantiated with an incomplete type (clang with libstdc++ rejects it).
  Attribute();
  ~Attribute();
  Attribute(const Attribute&);
  Attribute(Attribute&&) noexcept;
  Attribute& operator=(const Attribute&);
  Attribute& operator=(Attribute&&) noexcept;

  static Attribute Bool(bool v);
  static Attribute Int(int64_t v);
  static Attribute Float(double v);
  static Attribute String(std::string v);
  static Attribute Ints(std::vector<int64_t> v);
  static Attribute Bools(std::vector<bool> v);
  static Attribute Floats(std::vector<double> v);
  static Attribute OfLiteral(Literal v);
  static Attribute OfType(ValueType v);
  static Attribute List(std::vector<Attribute> v);
  static Attribute Dict(std::vector<std::pair<std::string, Attribute>> v);
  static Attribute OfMesh(Mesh v);
  static Attribute OfSharding(TensorSharding v);

  std::string ToString() const;
  bool operator==(const Attribute& other) const;
};

// An ordered name -> attribute list (small: linear lookup).
class AttributeMap {
 public:
  const Attribute* Find(std::string_view name) const;
  void Set(std::string name, Attribute value);
  bool Erase(std::string_view name);
  const std::vector<std::pair<std::string, Attribute>>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<std::pair<std::string, Attribute>> entries_;
};

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_ATTRIBUTE_H_
