// The IR section of MLIR bytecode: blocks, operations, regions (inline or in nested sections
// when isolated from above), value scopes with forward references, properties records decoded
// by op schema, and use-list orders (read and dropped: the tree keeps no use-lists).
#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/bytecode_internal.h"

namespace ember::frontend::bytecode {
namespace {

// Real programs nest a handful of regions; the bound keeps hostile input off the stack.
constexpr int kMaxRegionDepth = 256;

// Op encoding mask bits (mlir/include/mlir/Bytecode/Encoding.h).
constexpr uint8_t kHasAttrs = 0x01;
constexpr uint8_t kHasResults = 0x02;
constexpr uint8_t kHasOperands = 0x04;
constexpr uint8_t kHasSuccessors = 0x08;
constexpr uint8_t kHasInlineRegions = 0x10;
constexpr uint8_t kHasUseListOrders = 0x20;
constexpr uint8_t kHasProperties = 0x40;

// Property layouts written by LLVM releases before `no_inline` joined func.func / func.call.
const std::vector<PropertySpec>* LegacyPropertySchema(absl::string_view op_name) {
  static const std::vector<PropertySpec> kFunc = {{"arg_attrs", true},
                                                  {"function_type", false},
                                                  {"res_attrs", true},
                                                  {"sym_name", false},
                                                  {"sym_visibility", true}};
  static const std::vector<PropertySpec> kCall = {{"callee", false}};
  if (op_name == "func.func") return &kFunc;
  if (op_name == "func.call") return &kCall;
  return nullptr;
}

bool IsLocation(const Attribute& a) {
  switch (a.kind) {
    case AttrKind::kUnknownLoc: case AttrKind::kFileLineColLoc: case AttrKind::kNameLoc:
    case AttrKind::kCallSiteLoc: case AttrKind::kFusedLoc: case AttrKind::kOpaque:
      return true;
    default:
      return false;
  }
}

class IrReader {
 public:
  explicit IrReader(State& s) : s_(s) {}

  absl::StatusOr<std::unique_ptr<Operation>> ReadTop(ByteReader r) {
    EMBER_ASSIGN_OR_RETURN(uint64_t header, r.ReadVarInt());
    if (header & 1) return r.Error("the top-level block must not have arguments");
    const uint64_t num_ops = header >> 1;
    if (num_ops != 1) {
      return r.Error(absl::StrCat("expected exactly one top-level operation, found ", num_ops));
    }
    scopes_.emplace_back();
    Block top;
    RegionCtx ctx{0, 0, {&top}};
    EMBER_RETURN_IF_ERROR(ReadOperation(r, top, ctx, 0));
    EMBER_RETURN_IF_ERROR(CloseScope(r));
    if (!r.empty()) return r.Error("unexpected trailing bytes after the top-level operation");
    std::unique_ptr<Operation> op = std::move(top.operations.front());
    op->parent = nullptr;
    return op;
  }

 private:
  struct Pending {
    Operation* op;
    size_t operand;
    uint64_t slot;
  };
  struct Scope {
    std::vector<ValueRef> values;
    std::vector<uint8_t> defined;
    std::vector<Pending> pending;
  };
  struct RegionCtx {
    uint64_t next_slot;
    uint64_t end_slot;
    std::vector<Block*> blocks;
  };

  absl::Status Define(const ByteReader& r, RegionCtx& ctx, ValueRef v) {
    if (ctx.next_slot >= ctx.end_slot) {
      return r.Error("more values defined than the region declared");
    }
    Scope& sc = scopes_.back();
    sc.values[ctx.next_slot] = v;
    sc.defined[ctx.next_slot] = 1;
    ++ctx.next_slot;
    return absl::OkStatus();
  }

  // Resolves forward references to slots >= base, then releases those slots.
  absl::Status ReleaseSlots(const ByteReader& r, uint64_t base) {
    Scope& sc = scopes_.back();
    auto keep = sc.pending.begin();
    for (auto it = sc.pending.begin(); it != sc.pending.end(); ++it) {
      if (it->slot < base) {
        *keep++ = *it;
        continue;
      }
      if (!sc.defined[it->slot]) {
        return r.Error(absl::StrCat("operand ", it->operand, " of ", it->op->name,
                                    " refers to value ", it->slot, ", which is never defined"));
      }
      it->op->operands[it->operand] = sc.values[it->slot];
    }
    sc.pending.erase(keep, sc.pending.end());
    sc.values.resize(base);
    sc.defined.resize(base);
    return absl::OkStatus();
  }

  absl::Status CloseScope(const ByteReader& r) {
    EMBER_RETURN_IF_ERROR(ReleaseSlots(r, 0));
    scopes_.pop_back();
    return absl::OkStatus();
  }

  absl::Status SkipUseLists(ByteReader& r, uint64_t num_values) {
    uint64_t entries = 1;
    if (num_values > 1) {
      EMBER_ASSIGN_OR_RETURN(entries, r.ReadCount(2));
    }
    for (uint64_t i = 0; i < entries; ++i) {
      if (num_values > 1) {
        EMBER_ASSIGN_OR_RETURN(uint64_t index, r.ReadVarInt());
        if (index >= num_values) return r.Error("use-list value index out of range");
      }
      EMBER_ASSIGN_OR_RETURN(uint64_t encoding, r.ReadVarInt());
      const uint64_t num_indices = encoding >> 1;
      if (num_indices > r.remaining()) return r.Error("use-list longer than the section");
      for (uint64_t k = 0; k < num_indices; ++k) {
        EMBER_RETURN_IF_ERROR(r.ReadVarInt().status());
      }
    }
    return absl::OkStatus();
  }

  absl::Status MergeDictionary(const ByteReader& r, const AttrPtr& dict, Operation& op,
                               bool inherent) {
    if (!dict || dict->kind != AttrKind::kDictionary) {
      return r.Error("attributes of " + op.name + " are not a dictionary");
    }
    const std::vector<PropertySpec>* schema = FindPropertySchema(op.name);
    for (const NamedAttribute& e : dict->entries) {
      bool is_inherent = inherent;
      // Before bytecode 5 inherent attributes travel in the dictionary; the schema names them.
      if (!is_inherent && schema != nullptr && s_.version < kNativePropertiesEncoding) {
        is_inherent = std::any_of(schema->begin(), schema->end(),
                                  [&](const PropertySpec& p) { return e.name == p.name; });
      }
      op.attributes.push_back({e.name, e.value, is_inherent});
    }
    return absl::OkStatus();
  }

  absl::Status DecodeProperties(const ByteReader& at, uint64_t record, Operation& op) {
    if (record >= s_.property_records.size()) {
      return at.Error(absl::StrCat("properties record ", record, " out of range (",
                                   s_.property_records.size(), ")"));
    }
    const std::vector<PropertySpec>* schema = FindPropertySchema(op.name);
    if (schema == nullptr) {
      return at.Error("no properties schema for op '" + op.name + "'");
    }
    const ByteReader::Section& rec = s_.property_records[record];
    absl::Status first = absl::OkStatus();
    for (const std::vector<PropertySpec>* candidate : {schema, LegacyPropertySchema(op.name)}) {
      if (candidate == nullptr) continue;
      ByteReader r(s_.file, rec.begin, rec.end, "Properties section (record)");
      std::vector<NamedAttribute> attrs;
      absl::Status st = absl::OkStatus();
      for (const PropertySpec& spec : *candidate) {
        absl::StatusOr<uint64_t> v = r.ReadVarInt();
        if (!v.ok()) {
          st = v.status();
          break;
        }
        uint64_t index = *v;
        if (spec.optional) {
          if ((index & 1) == 0) continue;
          index >>= 1;
        }
        absl::StatusOr<AttrPtr> a = s_.GetAttribute(index);
        if (!a.ok()) {
          st = a.status();
          break;
        }
        attrs.push_back({spec.name, *std::move(a), true});
      }
      if (st.ok() && !r.empty()) {
        st = r.Error(absl::StrCat(r.remaining(), " unexpected trailing bytes in the properties of ",
                                  op.name));
      }
      if (st.ok()) {
        for (NamedAttribute& a : attrs) op.attributes.push_back(std::move(a));
        return absl::OkStatus();
      }
      if (first.ok()) first = st;
    }
    return first;
  }

  absl::Status ReadRegion(ByteReader& r, Region& region, int depth) {
    EMBER_ASSIGN_OR_RETURN(uint64_t num_blocks, r.ReadCount(1));
    if (num_blocks == 0) return absl::OkStatus();
    EMBER_ASSIGN_OR_RETURN(uint64_t num_values, r.ReadCount(1));
    Scope& sc = scopes_.back();
    const uint64_t base = sc.values.size();
    sc.values.resize(base + num_values);
    sc.defined.resize(base + num_values, 0);
    RegionCtx ctx{base, base + num_values, {}};
    for (uint64_t i = 0; i < num_blocks; ++i) {
      region.blocks.push_back(std::make_unique<Block>());
      region.blocks.back()->parent = &region;
      ctx.blocks.push_back(region.blocks.back().get());
    }
    for (Block* b : ctx.blocks) EMBER_RETURN_IF_ERROR(ReadBlock(r, *b, ctx, depth));
    return ReleaseSlots(r, base);
  }

  absl::Status ReadBlock(ByteReader& r, Block& block, RegionCtx& ctx, int depth) {
    EMBER_ASSIGN_OR_RETURN(uint64_t header, r.ReadVarInt());
    const uint64_t num_ops = header >> 1;
    if (num_ops > r.remaining()) return r.Error("block op count exceeds the section");
    if (header & 1) {
      EMBER_ASSIGN_OR_RETURN(uint64_t num_args, r.ReadCount(1));
      for (uint64_t i = 0; i < num_args; ++i) {
        BlockArgument arg;
        uint64_t type_index = 0;
        bool has_loc = true;
        if (s_.version >= kElideUnknownBlockArgLocation) {
          EMBER_ASSIGN_OR_RETURN(uint64_t v, r.ReadVarInt());
          type_index = v >> 1;
          has_loc = (v & 1) != 0;
        } else {
          EMBER_ASSIGN_OR_RETURN(type_index, r.ReadVarInt());
        }
        EMBER_ASSIGN_OR_RETURN(arg.type, s_.GetType(type_index));
        if (has_loc) {
          EMBER_ASSIGN_OR_RETURN(uint64_t loc_index, r.ReadVarInt());
          EMBER_ASSIGN_OR_RETURN(arg.loc, s_.GetAttribute(loc_index));
          if (!IsLocation(*arg.loc)) return r.Error("block argument location is not a location");
        }
        block.arguments.push_back(std::move(arg));
        EMBER_RETURN_IF_ERROR(Define(r, ctx, ValueRef{nullptr, &block, static_cast<uint32_t>(i)}));
      }
      if (s_.version >= kUseListOrdering) {
        EMBER_ASSIGN_OR_RETURN(uint8_t has_use_lists, r.ReadByte());
        if (has_use_lists != 0) EMBER_RETURN_IF_ERROR(SkipUseLists(r, num_args));
      }
    }
    for (uint64_t i = 0; i < num_ops; ++i) {
      EMBER_RETURN_IF_ERROR(ReadOperation(r, block, ctx, depth));
    }
    return absl::OkStatus();
  }

  absl::Status ReadOperation(ByteReader& r, Block& block, RegionCtx& ctx, int depth) {
    const size_t op_offset = r.pos();
    EMBER_ASSIGN_OR_RETURN(uint64_t name_index, r.ReadVarInt());
    if (name_index >= s_.op_names.size()) {
      return r.ErrorAt(op_offset, absl::StrCat("op name index ", name_index, " out of range (",
                                               s_.op_names.size(), ")"));
    }
    auto op_ptr = std::make_unique<Operation>();
    Operation& op = *op_ptr;
    op.name = s_.op_names[name_index].full_name;
    op.registered = s_.op_names[name_index].registered;
    op.parent = &block;
    block.operations.push_back(std::move(op_ptr));

    EMBER_ASSIGN_OR_RETURN(uint8_t mask, r.ReadByte());
    if (mask & 0x80) return r.Error(absl::StrCat("unknown op encoding bits in mask ", mask));
    if ((mask & kHasProperties) && s_.version < kNativePropertiesEncoding) {
      return r.Error("properties in bytecode older than version 5");
    }
    if ((mask & kHasUseListOrders) && s_.version < kUseListOrdering) {
      return r.Error("use-list orders in bytecode older than version 3");
    }
    EMBER_ASSIGN_OR_RETURN(uint64_t loc_index, r.ReadVarInt());
    EMBER_ASSIGN_OR_RETURN(op.loc, s_.GetAttribute(loc_index));
    if (!IsLocation(*op.loc)) return r.Error("location of " + op.name + " is not a location");

    if (mask & kHasAttrs) {
      EMBER_ASSIGN_OR_RETURN(uint64_t dict_index, r.ReadVarInt());
      EMBER_ASSIGN_OR_RETURN(AttrPtr dict, s_.GetAttribute(dict_index));
      EMBER_RETURN_IF_ERROR(MergeDictionary(r, dict, op, false));
    }
    if (mask & kHasProperties) {
      const ByteReader at = r;
      EMBER_ASSIGN_OR_RETURN(uint64_t index, r.ReadVarInt());
      if (op.registered) {
        EMBER_RETURN_IF_ERROR(DecodeProperties(at, index, op));
      } else {
        // Unregistered ops store their properties as one attribute.
        EMBER_ASSIGN_OR_RETURN(AttrPtr props, s_.GetAttribute(index));
        if (props->kind == AttrKind::kDictionary) {
          EMBER_RETURN_IF_ERROR(MergeDictionary(r, props, op, true));
        } else {
          op.attributes.push_back({"properties", props, true});
        }
      }
    }
    std::stable_sort(op.attributes.begin(), op.attributes.end(),
                     [](const NamedAttribute& a, const NamedAttribute& b) { return a.name < b.name; });
    for (size_t i = 1; i < op.attributes.size(); ++i) {
      if (op.attributes[i].name == op.attributes[i - 1].name) {
        return r.Error("attribute '" + op.attributes[i].name + "' appears twice on " + op.name);
      }
    }

    if (mask & kHasResults) {
      EMBER_ASSIGN_OR_RETURN(uint64_t n, r.ReadCount(1));
      for (uint64_t i = 0; i < n; ++i) {
        EMBER_ASSIGN_OR_RETURN(uint64_t type_index, r.ReadVarInt());
        EMBER_ASSIGN_OR_RETURN(TypePtr t, s_.GetType(type_index));
        op.result_types.push_back(std::move(t));
      }
    }
    if (mask & kHasOperands) {
      EMBER_ASSIGN_OR_RETURN(uint64_t n, r.ReadCount(1));
      op.operands.resize(n);
      Scope& sc = scopes_.back();
      for (uint64_t i = 0; i < n; ++i) {
        EMBER_ASSIGN_OR_RETURN(uint64_t slot, r.ReadVarInt());
        if (slot >= sc.values.size()) {
          return r.Error(absl::StrCat("operand ", i, " of ", op.name, " uses value ", slot,
                                      " but only ", sc.values.size(), " are in scope"));
        }
        if (sc.defined[slot]) {
          op.operands[i] = sc.values[slot];
        } else {
          sc.pending.push_back({&op, i, slot});  // forward reference
        }
      }
    }
    if (mask & kHasSuccessors) {
      EMBER_ASSIGN_OR_RETURN(uint64_t n, r.ReadCount(1));
      for (uint64_t i = 0; i < n; ++i) {
        EMBER_ASSIGN_OR_RETURN(uint64_t b, r.ReadVarInt());
        if (b >= ctx.blocks.size()) return r.Error("successor block index out of range");
        op.successors.push_back(ctx.blocks[b]);
      }
    }
    for (uint32_t i = 0; i < op.result_types.size(); ++i) {
      EMBER_RETURN_IF_ERROR(Define(r, ctx, ValueRef{&op, nullptr, i}));
    }
    if (mask & kHasUseListOrders) {
      EMBER_RETURN_IF_ERROR(SkipUseLists(r, op.result_types.size()));
    }
    if (mask & kHasInlineRegions) {
      if (depth >= kMaxRegionDepth) return r.Error("regions nest too deeply");
      EMBER_ASSIGN_OR_RETURN(uint64_t v, r.ReadVarInt());
      const uint64_t num_regions = v >> 1;
      const bool isolated = (v & 1) != 0;
      if (num_regions > r.remaining()) return r.Error("region count exceeds the section");
      op.regions.resize(num_regions);
      for (Region& region : op.regions) region.parent = &op;
      if (!isolated) {
        for (Region& region : op.regions) EMBER_RETURN_IF_ERROR(ReadRegion(r, region, depth + 1));
      } else {
        scopes_.emplace_back();
        if (s_.version >= kLazyLoading) {
          // Isolated regions live in a nested IR section (lazy-loadable upstream).
          EMBER_ASSIGN_OR_RETURN(ByteReader::Section sec, r.ReadSection());
          if (sec.id != static_cast<int>(SectionId::kIR)) {
            return r.Error(absl::StrCat("expected a nested IR section for the regions of ",
                                        op.name, ", found section id ", sec.id));
          }
          ByteReader sub(s_.file, sec.begin, sec.end, "IR section (isolated region)");
          for (Region& region : op.regions) {
            EMBER_RETURN_IF_ERROR(ReadRegion(sub, region, depth + 1));
          }
          if (!sub.empty()) return sub.Error("unexpected trailing bytes in a region section");
          EMBER_RETURN_IF_ERROR(CloseScope(sub));
        } else {
          for (Region& region : op.regions) {
            EMBER_RETURN_IF_ERROR(ReadRegion(r, region, depth + 1));
          }
          EMBER_RETURN_IF_ERROR(CloseScope(r));
        }
      }
    }
    return absl::OkStatus();
  }

  State& s_;
  std::vector<Scope> scopes_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Operation>> ReadIrSection(State& state, ByteReader::Section ir) {
  IrReader reader(state);
  return reader.ReadTop(ByteReader(state.file, ir.begin, ir.end, "IR section"));
}

}  // namespace ember::frontend::bytecode
