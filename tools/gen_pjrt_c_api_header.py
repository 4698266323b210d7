#!/usr/bin/env python3
"""Generates Ember's ABI-compatible PJRT C header from the layout facts in the reference sheet.

The sheet (../shared/reference/pjrt_c_api.md) tabulates every struct of the PJRT C API at one minor
version with field offsets and types (Appendix A), the PJRT_Api function table (section 4.2) and
the enums (section 6). This script turns those facts into C declarations and emits a
static_assert for every offset and size, so the compiler proves the layout matches the sheet.

Usage: gen_pjrt_c_api_header.py REFERENCE.md OUTPUT_DIR/pjrt_c_api.h
(also writes OUTPUT_DIR/pjrt_api_entries.inc)
"""
import re
import sys

MAJOR, MINOR, API_SIZE = 0, 114, 1144

# Handles the framework never looks inside (pointers only).
OPAQUE = [
    "PJRT_Client", "PJRT_Device", "PJRT_DeviceDescription", "PJRT_TopologyDescription",
    "PJRT_Executable", "PJRT_LoadedExecutable", "PJRT_Buffer", "PJRT_Event",
    "PJRT_CopyToDeviceStream", "PJRT_AsyncHostToDeviceTransferManager", "PJRT_ExecuteContext",
    "PJRT_AsyncTrackingEvent", "PJRT_SerializedTopology", "PJRT_SerializedExecutable",
    "PJRT_SerializedCompileOptions", "PJRT_DeviceAssignmentSerialized", "PJRT_Device_Attributes",
    "PJRT_MultiSlice_Config", "PJRT_FulfillAliasBufferCallback",
]

# Enumerator prefixes: upstream spells most values <Enum>_<Value>.
ENUM_PREFIX = {
    "PJRT_Error_Code": "PJRT_Error_Code_",
    "PJRT_NamedValue_Type": "PJRT_NamedValue_",
    "PJRT_Buffer_Type": "PJRT_Buffer_Type_",
    "PJRT_HostBufferSemantics": "PJRT_HostBufferSemantics_",
    "PJRT_Buffer_MemoryLayout_Type": "PJRT_Buffer_MemoryLayout_Type_",
    "PJRT_ProcessState": "PJRT_ProcessState_",
    "PJRT_Extension_Type": "PJRT_Extension_Type_",
}

# Section 5.2, written out: callback typedefs used inside args structs.
CALLBACKS = """\
typedef void (*PJRT_Error_PayloadVisitor)(const char* key, size_t key_size, const char* value,
                                          size_t value_size, void* user_arg);
typedef PJRT_Error* (*PJRT_CallbackError)(PJRT_Error_Code code, const char* message,
                                          size_t message_size);
typedef void (*PJRT_Event_OnReadyCallback)(PJRT_Error* error, void* user_arg);
typedef void (*PJRT_KeyValueGetCallback_ValueDeleter)(char* value);
typedef PJRT_Error* (*PJRT_KeyValueGetCallback)(struct PJRT_KeyValueGetCallback_Args* args);
typedef void (*PJRT_KeyValueTryGetCallback_ValueDeleter)(char* value);
typedef PJRT_Error* (*PJRT_KeyValueTryGetCallback)(struct PJRT_KeyValueTryGetCallback_Args* args);
typedef PJRT_Error* (*PJRT_KeyValuePutCallback)(struct PJRT_KeyValuePutCallback_Args* args);
typedef PJRT_Error* (*PJRT_SendCallback)(struct PJRT_Chunk* chunk,
                                         PJRT_CallbackError* callback_error, int64_t total_size_in_bytes,
                                         bool done, void* user_arg);
typedef void (*PJRT_RecvCallback)(PJRT_CopyToDeviceStream* stream, void* user_arg);
typedef void (*PJRT_HloOutputCallback)(int64_t replica_id, int64_t partition_id, const void* data,
                                       const int64_t* dims, size_t num_dims, PJRT_Buffer_Type type,
                                       int64_t operand_index, void* user_arg);
"""


def parse_enums(text):
    enums = []
    sec = text.split("## 6. Enums")[1].split("\n## ")[0]
    for line in sec.splitlines():
        m = re.match(r"\| `(PJRT_\w+)` \| (.*) \|$", line)
        if not m:
            continue
        name, body = m.group(1), m.group(2)
        body = re.sub(r"\(same numbering.*", "", body)
        values = re.findall(r"(\w+) (\d+)(?: \([^)]*\))?(?:,|$| )", body)
        enums.append((name, [(v, int(n)) for v, n in values]))
    return enums


def parse_api(text):
    sec = text.split("### 4.2")[1].split("### 4.3")[0]
    return [(m.group(1), int(m.group(2))) for m in
            re.finditer(r"^\| \d+ \| `(PJRT_\w+)` \| (\d+) \|", sec, re.M)]


def parse_structs(text):
    app = text.split("## Appendix A")[1]
    structs = []
    for block in app.split("\n#### `")[1:]:
        name = block.split("`", 1)[0]
        m = re.search(r"sizeof (\d+); (?:`\w+_STRUCT_SIZE` = (\d+)|no `_STRUCT_SIZE`)", block)
        sizeof = int(m.group(1))
        struct_size = int(m.group(2)) if m.group(2) else None
        fields = []
        for row in re.finditer(r"^\| (\d+) \| (↳ )?(`(\w+)`|\(anonymous union[^|]*\)) \| (`([^`]*)`|union) \|"
                               r" ?(\d*) ?\|[^|]*\| ?([^|]*?) ?\|", block, re.M):
            off, member, fname, ftype = int(row.group(1)), bool(row.group(2)), row.group(4), row.group(6)
            size = int(row.group(7)) if row.group(7) else None
            since = row.group(8).strip()
            if fname is None:
                fields.append({"union": True, "offset": off, "members": [], "since": None})
            elif member:
                fields[-1]["members"].append((fname, ftype))
            else:
                fields.append({"union": False, "offset": off, "name": fname, "type": ftype,
                               "size": size, "since": since})
        structs.append((name, sizeof, struct_size, fields))
    return structs


def declare(ctype, name):
    """C declaration of `name` with type text `ctype` (handles function-pointer types)."""
    if "(*)" in ctype:
        return ctype.replace("(*)", f"(*{name})", 1)
    if ctype.endswith("*"):
        return f"{ctype}{name}" if ctype.endswith("*") and ctype[-2] == "*" else f"{ctype} {name}"
    return f"{ctype} {name}"


def main():
    ref, out = sys.argv[1], sys.argv[2]
    text = open(ref, encoding="utf-8").read()
    enums, api, structs = parse_enums(text), parse_api(text), parse_structs(text)
    assert len(api) == 138, len(api)
    o = []
    w = o.append
    w("/* Ember's PJRT C API header: ABI-compatible with OpenXLA's pjrt_c_api.h at version "
      f"{MAJOR}.{MINOR}.")
    w(" * Generated by tools/gen_pjrt_c_api_header.py from the layout facts in")
    w(" * shared/reference/pjrt_c_api.md; every offset and size below is checked by a static_assert.")
    w(" * Do not edit by hand: change the generator. */")
    w("#ifndef EMBER_PJRT_PLUGIN_INCLUDE_PJRT_C_API_H_")
    w("#define EMBER_PJRT_PLUGIN_INCLUDE_PJRT_C_API_H_")
    w("")
    w("#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>")
    w("")
    w(f"#define PJRT_API_MAJOR {MAJOR}\n#define PJRT_API_MINOR {MINOR}")
    w("")
    w("#ifdef __cplusplus\nextern \"C\" {\n#endif")
    w("")
    for name in OPAQUE:
        w(f"typedef struct {name} {name};")
    for name, *_ in structs:
        w(f"typedef struct {name} {name};")
    w("")
    for name, values in enums:
        prefix = ENUM_PREFIX[name]
        w(f"typedef enum {{")
        for v, n in values:
            w(f"  {prefix}{v} = {n},")
        w(f"}} {name};")
        w("")
    w(CALLBACKS)
    for name, sizeof, struct_size, fields in structs:
        w(f"struct {name} {{")
        for f in fields:
            if f["union"]:
                w("  union {")
                for mname, mtype in f["members"]:
                    w(f"    {declare(mtype, mname)};")
                w("  };")
            else:
                w(f"  {declare(f['type'], f['name'])};")
        w("};")
        if struct_size is not None:
            w(f"#define {name}_STRUCT_SIZE ((size_t){struct_size})")
        w("")
    # Function types: each entry takes its args struct; the two error accessors return nothing.
    for fn, _ in api:
        ret = "void" if fn in ("PJRT_Error_Destroy", "PJRT_Error_Message") else "PJRT_Error*"
        w(f"typedef {ret} {fn}({fn}_Args* args);")
    w("")
    w("typedef struct PJRT_Api {")
    w("  size_t struct_size;\n  PJRT_Extension_Base* extension_start;\n  PJRT_Api_Version pjrt_api_version;")
    for fn, _ in api:
        w(f"  {fn}* {fn};")
    w("} PJRT_Api;")
    w(f"#define PJRT_Api_STRUCT_SIZE ((size_t){API_SIZE})")
    w("")
    w("#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif")
    w("")
    # Layout proofs.
    w("#ifdef __cplusplus\n#define EMBER_PJRT_STATIC_ASSERT static_assert\n#else")
    w("#define EMBER_PJRT_STATIC_ASSERT _Static_assert\n#endif")
    for name, sizeof, struct_size, fields in structs:
        w(f"EMBER_PJRT_STATIC_ASSERT(sizeof({name}) == {sizeof}, \"{name} size\");")
        last_end = 0
        for f in fields:
            if f["union"]:
                for mname, _ in f["members"]:
                    w(f"EMBER_PJRT_STATIC_ASSERT(offsetof({name}, {mname}) == {f['offset']}, "
                      f"\"{name}.{mname}\");")
                continue
            w(f"EMBER_PJRT_STATIC_ASSERT(offsetof({name}, {f['name']}) == {f['offset']}, "
              f"\"{name}.{f['name']}\");")
            last_end = f["offset"] + f["size"]
        if not fields[-1]["union"] and struct_size is not None:
            assert last_end == struct_size, (name, last_end, struct_size)
    for fn, off in api:
        w(f"EMBER_PJRT_STATIC_ASSERT(offsetof(PJRT_Api, {fn}) == {off}, \"PJRT_Api.{fn}\");")
    w(f"EMBER_PJRT_STATIC_ASSERT(sizeof(PJRT_Api) == {API_SIZE}, \"PJRT_Api size\");")
    w("#undef EMBER_PJRT_STATIC_ASSERT")
    w("")
    w("/* Ember addition, not upstream: the size of each args struct in the oldest layout the")
    w(" * framework may send (the fields present when the struct first appeared, or at 0.29).")
    w(" * Entry points accept any caller struct_size at least this large and read newer fields")
    w(" * only when the caller's struct_size covers them. */")
    for name, sizeof, struct_size, fields in structs:
        if struct_size is None or not name.endswith("_Args"):
            continue
        def key(v):
            return (0, 29) if v in ("≤0.29", "") else tuple(int(x) for x in v.split("."))
        versions = [key(f["since"]) for f in fields if not f["union"]]
        first = min(versions)
        end = 0
        for f in fields:
            if f["union"]:
                continue
            if key(f["since"]) == first:
                end = max(end, f["offset"] + f["size"])
        w(f"#define EMBER_MIN_SIZE_{name} ((size_t){end})")
    w("")
    w("#endif  /* EMBER_PJRT_PLUGIN_INCLUDE_PJRT_C_API_H_ */")
    open(out, "w", encoding="utf-8").write("\n".join(o) + "\n")
    # An X-macro list of every PJRT_Api entry, in table order, for Ember's table builder.
    inc = out.replace("pjrt_c_api.h", "pjrt_api_entries.inc")
    lines = ["/* Every PJRT_Api function entry in table order, as X(name). Generated by",
             " * tools/gen_pjrt_c_api_header.py; do not edit. */"]
    lines += [f"X({fn})" for fn, _ in api]
    open(inc, "w", encoding="utf-8").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
