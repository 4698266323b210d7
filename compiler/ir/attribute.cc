#include "compiler/ir/attribute.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/sharding.h"

namespace ember::ir {

Attribute::Attribute() = default;
Attribute::~Attribute() = default;
Attribute::Attribute(const Attribute&) = default;
Attribute::Attribute(Attribute&&) noexcept = default;
Attribute& Attribute::operator=(const Attribute&) = default;
Attribute& Attribute::operator=(Attribute&&) noexcept = default;

Attribute Attribute::Bool(bool v) { Attribute a; a.kind = Kind::kBool; a.b = v; return a; }
Attribute Attribute::Int(int64_t v) { Attribute a; a.kind = Kind::kInt; a.i = v; return a; }
Attribute Attribute::Float(double v) { Attribute a; a.kind = Kind::kFloat; a.f = v; return a; }
Attribute Attribute::String(std::string v) {
  Attribute a; a.kind = Kind::kString; a.s = std::move(v); return a;
}
Attribute Attribute::Ints(std::vector<int64_t> v) {
  Attribute a; a.kind = Kind::kInts; a.ints = std::move(v); return a;
}
Attribute Attribute::Bools(std::vector<bool> v) {
  Attribute a; a.kind = Kind::kBools; a.bools = std::move(v); return a;
}
Attribute Attribute::Floats(std::vector<double> v) {
  Attribute a; a.kind = Kind::kFloats; a.floats = std::move(v); return a;
}
Attribute Attribute::OfLiteral(Literal v) {
  Attribute a; a.kind = Kind::kLiteral; a.literal = std::make_shared<const Literal>(std::move(v));
  return a;
}
Attribute Attribute::OfType(ValueType v) {
  Attribute a; a.kind = Kind::kType; a.types.push_back(std::move(v)); return a;
}
Attribute Attribute::List(std::vector<Attribute> v) {
  Attribute a; a.kind = Kind::kList; a.list = std::move(v); return a;
}
Attribute Attribute::Dict(std::vector<std::pair<std::string, Attribute>> v) {
  Attribute a; a.kind = Kind::kDict; a.dict = std::move(v); return a;
}
Attribute Attribute::OfMesh(Mesh v) {
  Attribute a; a.kind = Kind::kMesh; a.mesh = std::make_shared<const Mesh>(std::move(v)); return a;
}
Attribute Attribute::OfSharding(TensorSharding v) {
  Attribute a; a.kind = Kind::kSharding;
  a.sharding = std::make_shared<const TensorSharding>(std::move(v));
  return a;
}

std::string Attribute::ToString() const {
  switch (kind) {
    case Kind::kBool: return b ? "true" : "false";
    case Kind::kInt: return absl::StrCat(i);
    case Kind::kFloat: return absl::StrCat(f);
    case Kind::kString: return absl::StrCat("\"", s, "\"");
    case Kind::kInts: return absl::StrCat("[", absl::StrJoin(ints, ", "), "]");
    case Kind::kBools: {
      std::vector<std::string> parts;
      for (bool v : bools) parts.push_back(v ? "true" : "false");
      return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
    }
    case Kind::kFloats: return absl::StrCat("[", absl::StrJoin(floats, ", "), "]");
    case Kind::kLiteral: return literal ? literal->ToString() : "<null literal>";
    case Kind::kType: return types.empty() ? "<no type>" : types[0].ToString();
    case Kind::kList: {
      std::vector<std::string> parts;
      for (const Attribute& a : list) parts.push_back(a.ToString());
      return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
    }
    case Kind::kDict: {
      std::vector<std::string> parts;
      for (const auto& [name, a] : dict) parts.push_back(absl::StrCat(name, " = ", a.ToString()));
      return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    }
    case Kind::kMesh: return mesh ? absl::StrCat("#sdy.mesh", mesh->ToString()) : "<null mesh>";
    case Kind::kSharding: return sharding ? sharding->ToString() : "<null sharding>";
  }
  return "<unknown attribute>";
}

bool Attribute::operator==(const Attribute& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::kBool: return b == o.b;
    case Kind::kInt: return i == o.i;
    case Kind::kFloat: return f == o.f || (f != f && o.f != o.f);
    case Kind::kString: return s == o.s;
    case Kind::kInts: return ints == o.ints;
    case Kind::kBools: return bools == o.bools;
    case Kind::kFloats: return floats == o.floats;
    case Kind::kLiteral: return literal && o.literal ? *literal == *o.literal : literal == o.literal;
    case Kind::kType: return types == o.types;
    case Kind::kList: return list == o.list;
    case Kind::kDict: return dict == o.dict;
    case Kind::kMesh: return mesh && o.mesh ? *mesh == *o.mesh : mesh == o.mesh;
    case Kind::kSharding:
      return sharding && o.sharding ? *sharding == *o.sharding : sharding == o.sharding;
  }
  return false;
}

const Attribute* AttributeMap::Find(std::string_view name) const {
  for (const auto& [n, a] : entries_) {
    if (n == name) return &a;
  }
  return nullptr;
}

void AttributeMap::Set(std::string name, Attribute value) {
  for (auto& [n, a] : entries_) {
    if (n == name) {
      a = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(name), std::move(value));
}

bool AttributeMap::Erase(std::string_view name) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == name) {
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

}  // namespace ember::ir
