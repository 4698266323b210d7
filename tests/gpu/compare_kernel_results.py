"""Compares two files of ember_kernel_results (tests/gpu/kernel_results.cc), one written on the
virtual GPU and one on a real GPU: bit for bit for the rows marked exact, within the row's
tolerance for the others (.approx math, atomics, the library's accumulation order), a row's kind
being "exact" or "TYPE:REL[:ABS]" (relative bound, and an absolute one where the ISA's is). Every
difference is a rule the virtual GPU has to learn, or a tolerance to justify.

usage: compare_kernel_results.py VIRTUAL.tsv REAL.tsv   (exit status 1 on any difference)
"""
import struct, sys

def load(path):
    rows = {}
    for line in open(path):
        name, kind, data = line.rstrip("\n").split("\t")
        rows[name] = (kind, bytes.fromhex(data))
    return rows

def half(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]

def bf16(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]

def decode(kind, data):
    if kind.startswith("f32"):
        return list(struct.unpack("<%df" % (len(data) // 4), data))
    if kind.startswith("f16"):
        return [half(b) for b in struct.unpack("<%dH" % (len(data) // 2), data)]
    if kind.startswith("bf16"):
        return [bf16(b) for b in struct.unpack("<%dH" % (len(data) // 2), data)]
    return None

virtual, real = load(sys.argv[1]), load(sys.argv[2])
failures = 0
for name in sorted(set(virtual) | set(real)):
    if name not in virtual or name not in real:
        print("MISSING %s (only on the %s GPU)" % (name, "virtual" if name in virtual else "real"))
        failures += 1
        continue
    (kind, v), (_, r) = virtual[name], real[name]
    if kind == "exact":
        if v != r:
            diffs = [i for i in range(len(v)) if v[i] != r[i]]
            print("DIFF  %s: %d of %d bytes differ, first at byte %d (virtual %02x, real %02x)"
                  % (name, len(diffs), len(v), diffs[0], v[diffs[0]], r[diffs[0]]))
            failures += 1
        else:
            print("same  %s" % name)
        continue
    # "TYPE:REL" or "TYPE:REL:ABS": an element passes within REL of the larger magnitude, or
    # within ABS (functions whose documented bound is absolute, such as sin.approx near a zero).
    parts = kind.split(":")
    relative, absolute = float(parts[1]), float(parts[2]) if len(parts) > 2 else 0.0
    dv, dr = decode(kind, v), decode(kind, r)
    def excess(a, b):
        return abs(a - b) / max(relative * max(abs(a), abs(b)), absolute, 1e-30)
    worst = max((excess(a, b), i) for i, (a, b) in enumerate(zip(dv, dr)))
    bound = "%g relative" % relative + (" or %g absolute" % absolute if absolute else "")
    if worst[0] > 1:
        i = worst[1]
        print("DIFF  %s: element %d virtual %r real %r (%.3g times the bound, %s)"
              % (name, i, dv[i], dr[i], worst[0], bound))
        failures += 1
    else:
        print("close %s (worst difference %.3g of the bound, %s)" % (name, worst[0], bound))
print("%d difference(s)" % failures)
sys.exit(1 if failures else 0)
