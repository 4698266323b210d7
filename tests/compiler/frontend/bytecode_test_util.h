// Helpers for the bytecode reader tests: read files, and build small MLIR bytecode files by hand
// (a prefix-varint writer plus section framing) so each container version can be exercised.
#ifndef EMBER_TESTS_COMPILER_FRONTEND_BYTECODE_TEST_UTIL_H_
#define EMBER_TESTS_COMPILER_FRONTEND_BYTECODE_TEST_UTIL_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace ember::frontend::testing {

inline std::vector<uint8_t> ReadFileBytes(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)),
                              std::istreambuf_iterator<char>());
}

inline void PutVarInt(std::vector<uint8_t>& out, uint64_t v) {
  for (int n = 1; n <= 8; ++n) {
    if (v < (uint64_t{1} << (7 * n))) {
      const uint64_t enc = (v << n) | (uint64_t{1} << (n - 1));
      for (int i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(enc >> (8 * i)));
      return;
    }
  }
  out.push_back(0);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

inline void PutSignedVarInt(std::vector<uint8_t>& out, int64_t v) {
  PutVarInt(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

inline void PutSection(std::vector<uint8_t>& out, int id, const std::vector<uint8_t>& data) {
  out.push_back(static_cast<uint8_t>(id));
  PutVarInt(out, data.size());
  out.insert(out.end(), data.begin(), data.end());
}

inline std::vector<uint8_t> StringSection(const std::vector<std::string>& strings) {
  std::vector<uint8_t> out;
  PutVarInt(out, strings.size());
  for (size_t i = strings.size(); i-- > 0;) PutVarInt(out, strings[i].size() + 1);
  for (const std::string& s : strings) {
    out.insert(out.end(), s.begin(), s.end());
    out.push_back(0);
  }
  return out;
}

// A module holding one block with an i32 argument and two ops:
//   %1 = test.op(%arg, %2) {k = -1 : i32}; %2 = test.unreg(%1) {k = -1 : i32}
// (%2 is a forward reference). In versions >= 5 test.unreg is unregistered and carries its
// attributes as a properties attribute.
inline std::vector<uint8_t> BuildTestModule(uint64_t version) {
  std::vector<uint8_t> file = {'M', 'L', 0xEF, 'R'};
  PutVarInt(file, version);
  for (char c : std::string("EmberTest")) file.push_back(static_cast<uint8_t>(c));
  file.push_back(0);
  const std::vector<std::string> strings = {"builtin", "test", "module", "op", "k", "unreg"};

  std::vector<uint8_t> dialect;
  PutVarInt(dialect, 2);
  PutVarInt(dialect, version >= 1 ? 0 << 1 : 0);
  PutVarInt(dialect, version >= 1 ? 1 << 1 : 1);
  if (version >= 4) PutVarInt(dialect, 3);
  auto op_name = [&](uint64_t str, bool registered) {
    PutVarInt(dialect, version >= 5 ? (str << 1) | (registered ? 1 : 0) : str);
  };
  PutVarInt(dialect, 0);
  PutVarInt(dialect, 1);
  op_name(2, true);
  PutVarInt(dialect, 1);
  PutVarInt(dialect, 2);
  op_name(3, true);
  op_name(5, false);

  std::vector<std::vector<uint8_t>> attrs(4), types(1);
  PutVarInt(attrs[0], 15);  // UnknownLoc
  PutVarInt(attrs[1], 2);   // StringAttr "k"
  PutVarInt(attrs[1], 4);
  PutVarInt(attrs[2], 8);   // IntegerAttr -1 : i32 (zero-extended bits, zigzag)
  PutVarInt(attrs[2], 0);
  PutSignedVarInt(attrs[2], 0xFFFFFFFFll);
  PutVarInt(attrs[3], 1);   // DictionaryAttr {k = attr2}
  PutVarInt(attrs[3], 1);
  PutVarInt(attrs[3], 1);
  PutVarInt(attrs[3], 2);
  PutVarInt(types[0], 0);   // i32
  PutVarInt(types[0], 32 << 2);
  std::vector<uint8_t> offsets, attr_type;
  PutVarInt(offsets, attrs.size());
  PutVarInt(offsets, types.size());
  for (auto* table : {&attrs, &types}) {
    PutVarInt(offsets, 0);  // builtin
    PutVarInt(offsets, table->size());
    for (const auto& e : *table) {
      PutVarInt(offsets, (e.size() << 1) | 1);
      attr_type.insert(attr_type.end(), e.begin(), e.end());
    }
  }

  std::vector<uint8_t> region;
  PutVarInt(region, 1);           // one block
  PutVarInt(region, 3);           // three values
  PutVarInt(region, (2 << 1) | 1);  // two ops, has args
  PutVarInt(region, 1);
  if (version >= 4) {
    PutVarInt(region, 0 << 1);    // type 0, no location
  } else {
    PutVarInt(region, 0);
    PutVarInt(region, 0);
  }
  if (version >= 3) region.push_back(0);  // no use-list orders
  PutVarInt(region, 1);           // test.op
  region.push_back(0x07);         // attrs, results, operands
  PutVarInt(region, 0);
  PutVarInt(region, 3);
  PutVarInt(region, 1);
  PutVarInt(region, 0);
  PutVarInt(region, 2);
  PutVarInt(region, 0);
  PutVarInt(region, 2);           // forward reference
  PutVarInt(region, 2);           // test.unreg
  region.push_back(version >= 5 ? 0x46 : 0x07);
  PutVarInt(region, 0);
  PutVarInt(region, 3);           // attribute dictionary or properties attribute
  PutVarInt(region, 1);
  PutVarInt(region, 0);
  PutVarInt(region, 1);
  PutVarInt(region, 1);

  std::vector<uint8_t> ir;
  PutVarInt(ir, 1 << 1);          // one top-level op
  PutVarInt(ir, 0);               // builtin.module
  ir.push_back(0x10);             // regions
  PutVarInt(ir, 0);
  PutVarInt(ir, (1 << 1) | 1);    // one isolated region
  if (version >= 2) {
    PutSection(ir, 4, region);
  } else {
    ir.insert(ir.end(), region.begin(), region.end());
  }

  PutSection(file, 1, dialect);
  PutSection(file, 3, offsets);
  PutSection(file, 2, attr_type);
  PutSection(file, 4, ir);
  PutSection(file, 0, StringSection(strings));
  if (version >= 5) PutSection(file, 8, {0x01});  // zero property records
  return file;
}


// A version-6 module exercising the less common paths: a textual-fallback type (f8E4M3FN), a
// dense_resource attribute backed by an aligned blob in the resource sections, sdy attributes,
// and use-list orders on a multi-result op:
//   %0:2 = test.op() {m = #sdy.mesh<["x"=4]>, r = dense_resource<blob0> : tensor<2xf8E4M3FN>}
inline std::vector<uint8_t> BuildFeatureModule() {
  std::vector<uint8_t> file = {'M', 'L', 0xEF, 'R'};
  PutVarInt(file, 6);
  for (char c : std::string("EmberTest")) file.push_back(static_cast<uint8_t>(c));
  file.push_back(0);
  const std::vector<std::string> strings = {"builtin", "sdy", "test", "module", "op",
                                            "x",       "r",   "m",    "blob0"};
  std::vector<uint8_t> dialect;
  PutVarInt(dialect, 3);
  for (uint64_t i = 0; i < 3; ++i) PutVarInt(dialect, i << 1);
  PutVarInt(dialect, 2);
  PutVarInt(dialect, 0);
  PutVarInt(dialect, 1);
  PutVarInt(dialect, (3 << 1) | 1);
  PutVarInt(dialect, 2);
  PutVarInt(dialect, 1);
  PutVarInt(dialect, (4 << 1) | 1);

  struct Entry {
    uint64_t dialect;
    bool custom;
    std::vector<uint8_t> bytes;
  };
  std::vector<Entry> attrs(7), types(2);
  PutVarInt(attrs[0].bytes, 15);  // UnknownLoc
  PutVarInt(attrs[1].bytes, 16);  // dense_resource<blob0> : type 1
  PutVarInt(attrs[1].bytes, 1);
  PutVarInt(attrs[1].bytes, 0);
  attrs[2].dialect = 1;            // sdy.mesh_axis "x" = 4
  PutVarInt(attrs[2].bytes, 1);
  PutVarInt(attrs[2].bytes, 5);
  PutSignedVarInt(attrs[2].bytes, 4);
  attrs[3].dialect = 1;            // sdy.mesh [attr2], no device ids
  PutVarInt(attrs[3].bytes, 2);
  PutVarInt(attrs[3].bytes, 1);
  PutVarInt(attrs[3].bytes, 2);
  PutVarInt(attrs[3].bytes, 0);
  PutVarInt(attrs[4].bytes, 2);   // "r"
  PutVarInt(attrs[4].bytes, 6);
  PutVarInt(attrs[5].bytes, 2);   // "m"
  PutVarInt(attrs[5].bytes, 7);
  PutVarInt(attrs[6].bytes, 1);   // {m = attr3, r = attr1}
  PutVarInt(attrs[6].bytes, 2);
  for (uint64_t v : {5, 3, 4, 1}) PutVarInt(attrs[6].bytes, v);
  for (Entry& e : attrs) e.custom = true;
  types[0].custom = false;         // textual fallback
  for (char c : std::string("f8E4M3FN")) types[0].bytes.push_back(static_cast<uint8_t>(c));
  types[0].bytes.push_back(0);
  types[1].custom = true;          // tensor<2 x type0>
  PutVarInt(types[1].bytes, 13);
  PutVarInt(types[1].bytes, 1);
  PutSignedVarInt(types[1].bytes, 2);
  PutVarInt(types[1].bytes, 0);
  std::vector<uint8_t> offsets, attr_type;
  PutVarInt(offsets, attrs.size());
  PutVarInt(offsets, types.size());
  for (auto* table : {&attrs, &types}) {
    // One group per run of equal dialects.
    for (size_t i = 0; i < table->size();) {
      size_t j = i;
      while (j < table->size() && (*table)[j].dialect == (*table)[i].dialect) ++j;
      PutVarInt(offsets, (*table)[i].dialect);
      PutVarInt(offsets, j - i);
      for (size_t k = i; k < j; ++k) {
        const Entry& e = (*table)[k];
        PutVarInt(offsets, (e.bytes.size() << 1) | (e.custom ? 1 : 0));
        attr_type.insert(attr_type.end(), e.bytes.begin(), e.bytes.end());
      }
      i = j;
    }
  }
  std::vector<uint8_t> region;
  PutVarInt(region, 1);
  PutVarInt(region, 2);
  PutVarInt(region, 1 << 1);      // one op, no args
  PutVarInt(region, 1);           // test.op
  region.push_back(0x23);         // attrs, results, use-list orders
  PutVarInt(region, 0);
  PutVarInt(region, 6);
  PutVarInt(region, 2);
  PutVarInt(region, 1);
  PutVarInt(region, 1);
  PutVarInt(region, 1);           // one use-list entry
  PutVarInt(region, 1);           // for result 1
  PutVarInt(region, 2 << 1);      // two indices, not pairs
  PutVarInt(region, 1);
  PutVarInt(region, 0);
  std::vector<uint8_t> ir;
  PutVarInt(ir, 1 << 1);
  PutVarInt(ir, 0);
  ir.push_back(0x10);
  PutVarInt(ir, 0);
  PutVarInt(ir, (1 << 1) | 1);
  PutSection(ir, 4, region);

  std::vector<uint8_t> resource_offsets;
  PutVarInt(resource_offsets, 0);  // no external groups
  PutVarInt(resource_offsets, 0);  // builtin
  PutVarInt(resource_offsets, 1);
  PutVarInt(resource_offsets, 8);  // "blob0"
  PutVarInt(resource_offsets, 10);
  resource_offsets.push_back(0);   // blob

  PutSection(file, 1, dialect);
  PutSection(file, 3, offsets);
  PutSection(file, 2, attr_type);
  PutSection(file, 4, ir);
  PutSection(file, 6, resource_offsets);
  // Resource section aligned to 8; its blob (alignment 8, 2 bytes) is padded to 8 again.
  file.push_back(0x80 | 5);
  PutVarInt(file, 10);
  PutVarInt(file, 8);
  while (file.size() % 8 != 0) file.push_back(0xCB);
  PutVarInt(file, 8);
  PutVarInt(file, 2);
  while (file.size() % 8 != 0) file.push_back(0xCB);
  file.push_back(0x38);
  file.push_back(0x40);
  PutSection(file, 0, StringSection(strings));
  PutSection(file, 8, {0x01});
  return file;
}

// A version-6 module whose location is a chain of `depth` NameLocs (like the long call-site
// chains of JAX tracebacks): exercises deferred (worklist) resolution and the nesting limit.
inline std::vector<uint8_t> BuildLocChainModule(int depth) {
  std::vector<uint8_t> file = {'M', 'L', 0xEF, 'R'};
  PutVarInt(file, 6);
  file.push_back(0);
  std::vector<uint8_t> dialect;
  PutVarInt(dialect, 1);
  PutVarInt(dialect, 0);
  PutVarInt(dialect, 1);
  PutVarInt(dialect, 0);
  PutVarInt(dialect, 1);
  PutVarInt(dialect, (1 << 1) | 1);
  std::vector<std::vector<uint8_t>> attrs(2 + depth);
  PutVarInt(attrs[0], 15);
  PutVarInt(attrs[1], 2);
  PutVarInt(attrs[1], 2);
  for (int i = 0; i < depth; ++i) {
    PutVarInt(attrs[2 + i], 14);
    PutVarInt(attrs[2 + i], 1);
    PutVarInt(attrs[2 + i], i == 0 ? 0 : 1 + i);
  }
  std::vector<uint8_t> offsets, attr_type;
  PutVarInt(offsets, attrs.size());
  PutVarInt(offsets, 0);
  PutVarInt(offsets, 0);
  PutVarInt(offsets, attrs.size());
  for (const auto& e : attrs) {
    PutVarInt(offsets, (e.size() << 1) | 1);
    attr_type.insert(attr_type.end(), e.begin(), e.end());
  }
  std::vector<uint8_t> ir;
  PutVarInt(ir, 1 << 1);
  PutVarInt(ir, 0);
  ir.push_back(0x00);
  PutVarInt(ir, attrs.size() - 1);
  PutSection(file, 1, dialect);
  PutSection(file, 3, offsets);
  PutSection(file, 2, attr_type);
  PutSection(file, 4, ir);
  PutSection(file, 0, StringSection({"builtin", "module", "n"}));
  PutSection(file, 8, {0x01});
  return file;
}

}  // namespace ember::frontend::testing

#endif  // EMBER_TESTS_COMPILER_FRONTEND_BYTECODE_TEST_UTIL_H_
