"""PJRT_Client_Compile with program format "hlo" (a serialized xla.HloModuleProto, what TensorFlow
sends), driven through the plugin's C API with ctypes, compared with XLA:CPU running the same JAX
functions.

jaxlib 0.10.2 offers no Python path that sends "hlo": `Client.compile_and_load` rejects an
XlaComputation and `ifrt_programs.make_hlo_program` takes MLIR. So this test loads the plugin
library jax itself loaded (jax_plugins.ember.library_path(), i.e. $EMBER_PJRT_PLUGIN_PATH or the
installed copy; a second copy would register its protobuf descriptors twice) and calls
PJRT_Client_Create / Compile / BufferFromHostBuffer / LoadedExecutable_Execute /
Buffer_ToHostBuffer itself. Struct layouts are read from the offsetof/sizeof assertions of
pjrt_plugin/include/pjrt_c_api.h, so they cannot drift from the header the plugin is built with.
"""
import ctypes
import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jax_plugins.ember as ember_plugin

HEADER = pathlib.Path(__file__).resolve().parents[2] / "pjrt_plugin/include/pjrt_c_api.h"


def _layouts():
    text = HEADER.read_text()
    offsets, sizes = {}, {}
    for s, f, n in re.findall(r"offsetof\((\w+), (\w+)\) == (\d+)", text):
        offsets.setdefault(s, {})[f] = int(n)
    for s, n in re.findall(r"sizeof\((\w+)\) == (\d+)", text):
        sizes[s] = int(n)
    return offsets, sizes


OFFSETS, SIZES = _layouts()
BUFFER_TYPES = {np.dtype(np.bool_): 1, np.dtype(np.int32): 4, np.dtype(np.uint32): 8,
                np.dtype(np.float32): 11}
# The hand-encoded single-device xla.CompileOptionsProto of tests/capi/client_test.cc.
COMPILE_OPTIONS = bytes([0x1a, 0x11, 0x08, 0x00, 0x20, 0x01, 0x28, 0x01, 0x4a, 0x09, 0x08, 0x01,
                         0x10, 0x01, 0x1a, 0x03, 0x0a, 0x01, 0x00])


class Args:
    """A zeroed PJRT args struct with struct_size set; fields by name."""

    def __init__(self, struct):
        self.struct = struct
        self.buf = ctypes.create_string_buffer(SIZES[struct])
        self.set("struct_size", SIZES[struct])

    def set(self, field, value, ctype=ctypes.c_uint64):
        ctype.from_buffer(self.buf, OFFSETS[self.struct][field]).value = value

    def get(self, field, ctype=ctypes.c_uint64):
        return ctype.from_buffer(self.buf, OFFSETS[self.struct][field]).value

    def ptr(self):
        return ctypes.addressof(self.buf)


class Plugin:
    def __init__(self):
        self.lib = ctypes.CDLL(ember_plugin.library_path())
        self.lib.GetPjrtApi.restype = ctypes.c_void_p
        self.api = self.lib.GetPjrtApi()
        self.client = self.call("PJRT_Client_Create", Args("PJRT_Client_Create_Args"),
                                out="client")
        devices = Args("PJRT_Client_AddressableDevices_Args")
        devices.set("client", self.client)
        self.call("PJRT_Client_AddressableDevices", devices)
        self.device = ctypes.c_void_p.from_address(devices.get("addressable_devices")).value

    def fn(self, name):
        address = ctypes.c_void_p.from_address(self.api + OFFSETS["PJRT_Api"][name]).value
        return ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(address)

    def call(self, name, args, out=None):
        error = self.fn(name)(args.ptr())
        if error:
            message = Args("PJRT_Error_Message_Args")
            message.set("error", error)
            self.fn("PJRT_Error_Message")(message.ptr())
            text = ctypes.string_at(message.get("message"), message.get("message_size")).decode()
            destroy = Args("PJRT_Error_Destroy_Args")
            destroy.set("error", error)
            self.fn("PJRT_Error_Destroy")(destroy.ptr())
            raise RuntimeError(f"{name}: {text}")
        return args.get(out) if out else None

    def await_event(self, event):
        if not event:
            return
        wait = Args("PJRT_Event_Await_Args")
        wait.set("event", event)
        try:
            self.call("PJRT_Event_Await", wait)
        finally:
            destroy = Args("PJRT_Event_Destroy_Args")
            destroy.set("event", event)
            self.call("PJRT_Event_Destroy", destroy)

    def destroy(self, name, field, handle):
        args = Args(name + "_Args")
        args.set(field, handle)
        self.call(name, args)

    def compile(self, code, fmt="hlo"):
        code_buf = ctypes.create_string_buffer(code, len(code))
        fmt_buf = ctypes.create_string_buffer(fmt.encode(), len(fmt))
        options = ctypes.create_string_buffer(COMPILE_OPTIONS, len(COMPILE_OPTIONS))
        program = Args("PJRT_Program")
        program.set("code", ctypes.addressof(code_buf))
        program.set("code_size", len(code))
        program.set("format", ctypes.addressof(fmt_buf))
        program.set("format_size", len(fmt))
        args = Args("PJRT_Client_Compile_Args")
        args.set("client", self.client)
        args.set("program", program.ptr())
        args.set("compile_options", ctypes.addressof(options))
        args.set("compile_options_size", len(COMPILE_OPTIONS))
        return self.call("PJRT_Client_Compile", args, out="executable")

    def to_device(self, array):
        array = np.ascontiguousarray(array) if array.ndim else np.asarray(array)
        dims = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
        args = Args("PJRT_Client_BufferFromHostBuffer_Args")
        args.set("client", self.client)
        args.set("data", array.ctypes.data)
        args.set("type", BUFFER_TYPES[array.dtype], ctypes.c_int32)
        args.set("dims", ctypes.addressof(dims))
        args.set("num_dims", array.ndim)
        args.set("host_buffer_semantics", 0, ctypes.c_int32)  # kImmutableOnlyDuringCall
        args.set("device", self.device)
        buffer = self.call("PJRT_Client_BufferFromHostBuffer", args, out="buffer")
        self.await_event(args.get("done_with_host_buffer"))
        return buffer

    def to_host(self, buffer, like):
        out = np.empty(like.shape, like.dtype)
        args = Args("PJRT_Buffer_ToHostBuffer_Args")
        args.set("src", buffer)
        args.set("dst", out.ctypes.data)
        args.set("dst_size", out.nbytes)
        self.call("PJRT_Buffer_ToHostBuffer", args)
        self.await_event(args.get("event"))
        return out

    def run(self, executable, inputs, expected):
        """Executes on one device; outputs are copied back shaped like `expected`."""
        arg_buffers = [self.to_device(np.asarray(x)) for x in inputs]
        arg_list = (ctypes.c_void_p * max(len(arg_buffers), 1))(*arg_buffers)
        arg_lists = (ctypes.c_void_p * 1)(ctypes.addressof(arg_list))
        out_list = (ctypes.c_void_p * len(expected))()
        out_lists = (ctypes.c_void_p * 1)(ctypes.addressof(out_list))
        options = Args("PJRT_ExecuteOptions")
        args = Args("PJRT_LoadedExecutable_Execute_Args")
        args.set("executable", executable)
        args.set("options", options.ptr())
        args.set("argument_lists", ctypes.addressof(arg_lists))
        args.set("num_devices", 1)
        args.set("num_args", len(arg_buffers))
        args.set("output_lists", ctypes.addressof(out_lists))
        try:
            self.call("PJRT_LoadedExecutable_Execute", args)
            return [self.to_host(out_list[i], e) for i, e in enumerate(expected)]
        finally:
            for b in arg_buffers + [out_list[i] for i in range(len(expected)) if out_list[i]]:
                self.destroy("PJRT_Buffer_Destroy", "buffer", b)

    def close(self):
        self.destroy("PJRT_Client_Destroy", "client", self.client)


@pytest.fixture(scope="module")
def plugin():
    p = Plugin()
    yield p
    p.close()


def _mlp(w1, b1, w2, x, y):
    def loss(w1, b1, w2):
        h = jnp.tanh(x @ w1 + b1)
        return jnp.mean((h @ w2 - y) ** 2)
    l, grads = jax.value_and_grad(loss, argnums=(0, 1, 2))(w1, b1, w2)
    return (l,) + grads


RNG = np.random.default_rng(7)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# (name, function, inputs, rtol): tanh/exp chains differ by a few ulp between XLA:CPU's
# approximations and Ember, hence 1e-4 there.
CASES = [
    ("elementwise", lambda x, y: (x * y + 1, jnp.maximum(x, y), jnp.where(x > 0, x, -y)),
     (_f32(3, 4), _f32(3, 4)), 1e-6),
    ("reduce_dot", lambda x, w: (jnp.sum(x @ w, axis=0), jnp.max(x, axis=1)),
     (_f32(4, 5), _f32(5, 3)), 1e-5),
    ("while_loop", lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 0.5 + i, x),
     (_f32(4), np.int32(5)), 1e-6),
    ("sort", lambda x: (jnp.sort(x, axis=1), jnp.argsort(x, axis=1)), (_f32(3, 6),), 0),
    ("cond_switch", lambda x, p, k: (lax.cond(p, lambda v: v * 2, lambda v: v - 1, x),
                                     lax.switch(k, [lambda v: v + 1, lambda v: -v], x)),
     (_f32(4), np.bool_(True), np.int32(1)), 1e-6),
    ("scan", lambda h, xs: lax.scan(lambda c, x: (jnp.tanh(c + x), jnp.sum(c)), h, xs),
     (_f32(3), _f32(5, 3)), 1e-4),
    ("gather_scatter", lambda x, i: (x[i], x.at[i].add(1.0)),
     (_f32(5, 2), np.array([3, 0, 3], np.int32)), 1e-6),
    ("conv", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                                   dimension_numbers=("NHWC", "HWIO", "NHWC")),
     (_f32(1, 5, 5, 2), _f32(3, 3, 2, 3)), 1e-5),
    ("mlp_grad", _mlp, (_f32(6, 8) * 0.3, _f32(8) * 0.1, _f32(8, 2) * 0.3, _f32(5, 6),
                        _f32(5, 2)), 1e-4),
]


@pytest.mark.parametrize("name,fn,inputs,rtol", CASES, ids=[c[0] for c in CASES])
def test_hlo_program_matches_xla_cpu(plugin, name, fn, inputs, rtol):
    jitted = jax.jit(fn)
    hlo = jitted.lower(*inputs).compiler_ir("hlo").as_serialized_hlo_module_proto()
    cpu = jax.devices("cpu")[0]
    expected = [np.asarray(o) for o in jax.tree.leaves(jitted(*jax.device_put(inputs, cpu)))]
    executable = plugin.compile(hlo)
    try:
        got = plugin.run(executable, inputs, expected)
    finally:
        plugin.destroy("PJRT_LoadedExecutable_Destroy", "executable", executable)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if np.issubdtype(e.dtype, np.floating):
            np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol)
        else:
            np.testing.assert_array_equal(g, e)


def test_malformed_hlo_is_a_clean_error(plugin):
    with pytest.raises(RuntimeError, match="not a valid serialized xla.HloModuleProto"):
        plugin.compile(b"\x0a\xff\xff\xff\xff\x0f not a module")
