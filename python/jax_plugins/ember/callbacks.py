"""Python host callbacks on Ember: jax.pure_callback, jax.experimental.io_callback,
jax.debug.callback and jax.debug.print.

JAX lowers these only for cpu/cuda/rocm/tpu ("`EmitPythonCallback` not supported on ember
backend"), and its callback FFI handlers read the callables from user data that jaxlib attaches
only for those platforms. For Ember:
- lowering: a custom call to the FFI target "ember_python_callback" carrying a callback id
  (jax._src.callback.emit_python_callback is wrapped to do this when lowering for "ember"; the
  debug primitives get JAX's own rules registered for "ember");
- running: that target's handler is a Python function (a ctypes trampoline registered through
  Ember's FFI extension) that reads the call frame, calls the callable on numpy copies of the
  operands and writes its results into the result buffers. Tokens (ordered effects) pass through.
The callables live in a table keyed by id; the lowering also hands each to JAX as a host
callback, so the compiled executable keeps it alive and the table only holds a weak reference.
"""
import ctypes
import dataclasses
import itertools
import threading
import weakref

import ml_dtypes
import numpy as np

from jax_plugins.ember import ffi as ember_ffi

TARGET = "ember_python_callback"

# ---- The XLA FFI call frame (ffi/xla_ffi_api.h) --------------------------------------------------


class _Buffer(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("dtype", ctypes.c_int), ("data", ctypes.c_void_p), ("rank", ctypes.c_int64),
                ("dims", ctypes.POINTER(ctypes.c_int64))]


class _List(ctypes.Structure):  # XLA_FFI_Args and XLA_FFI_Rets
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("size", ctypes.c_int64), ("types", ctypes.c_void_p),
                ("items", ctypes.POINTER(ctypes.c_void_p))]


class _ByteSpan(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class _Attrs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("size", ctypes.c_int64), ("types", ctypes.POINTER(ctypes.c_int)),
                ("names", ctypes.POINTER(ctypes.POINTER(_ByteSpan))),
                ("attrs", ctypes.POINTER(ctypes.c_void_p))]


class _Scalar(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("value", ctypes.c_void_p)]


class _CallFrame(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("api", ctypes.c_void_p), ("ctx", ctypes.c_void_p), ("stage", ctypes.c_int),
                ("args", _List), ("rets", _List), ("attrs", _Attrs), ("future", ctypes.c_void_p)]


class _ErrorCreateArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("message", ctypes.c_char_p), ("errc", ctypes.c_int)]


_TOKEN = 17
_ATTR_SCALAR = 3
_UNKNOWN = 2
_API_ERROR_CREATE = 48  # offset of XLA_FFI_Error_Create in XLA_FFI_Api
_DTYPES = {
    1: np.bool_, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.uint8,
    7: np.uint16, 8: np.uint32, 9: np.uint64, 10: np.float16, 11: np.float32, 12: np.float64,
    15: np.complex64, 16: ml_dtypes.bfloat16, 18: np.complex128, 19: ml_dtypes.float8_e5m2,
    20: ml_dtypes.float8_e4m3fn, 21: ml_dtypes.int4, 22: ml_dtypes.uint4,
    23: ml_dtypes.float8_e4m3b11fnuz, 24: ml_dtypes.float8_e5m2fnuz,
    25: ml_dtypes.float8_e4m3fnuz, 26: ml_dtypes.int2, 27: ml_dtypes.uint2,
    28: ml_dtypes.float8_e4m3, 29: ml_dtypes.float8_e3m4, 32: ml_dtypes.float4_e2m1fn,
    33: ml_dtypes.float8_e8m0fnu,
}


def _view(buffer):
    """A numpy view of an FFI buffer (Ember stores every element type unpacked, one element per
    storage unit, as ml_dtypes does)."""
    dtype = np.dtype(_DTYPES[buffer.dtype])
    shape = tuple(buffer.dims[i] for i in range(buffer.rank))
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return np.zeros(shape, dtype)
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(buffer.data)
    return np.frombuffer(raw, dtype=dtype).reshape(shape)


def _callback_id(frame):
    for i in range(frame.attrs.size):
        name = frame.attrs.names[i].contents
        if ctypes.string_at(name.ptr, name.len) == b"callback_id":
            if frame.attrs.types[i] != _ATTR_SCALAR:
                break
            scalar = _Scalar.from_address(frame.attrs.attrs[i])
            return ctypes.c_uint64.from_address(scalar.value).value
    raise RuntimeError(f"{TARGET}: the call has no callback_id attribute")


def _error(frame, message):
    create = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(
        ctypes.c_void_p.from_address(frame.api + _API_ERROR_CREATE).value)
    args = _ErrorCreateArgs(ctypes.sizeof(_ErrorCreateArgs), None,
                            message.encode(errors="replace"), _UNKNOWN)
    return create(ctypes.addressof(args))


def _handle(frame_address):
    """The FFI handler of TARGET. Never lets an exception out: it becomes an FFI error."""
    frame = _CallFrame.from_address(frame_address)
    try:
        callback = _CALLBACKS.get(_callback_id(frame))
        args = []
        for i in range(frame.args.size):
            buffer = _Buffer.from_address(frame.args.items[i])
            args.append(None if buffer.dtype == _TOKEN else np.array(_view(buffer)))
        outs = callback(*args)
        rets = [_Buffer.from_address(frame.rets.items[i]) for i in range(frame.rets.size)]
        if len(outs) != len(rets):
            raise RuntimeError(f"the callback returned {len(outs)} values, expected {len(rets)}")
        for buffer, value in zip(rets, outs):
            if buffer.dtype == _TOKEN:
                continue
            target = _view(buffer)
            value = np.asarray(value)
            if value.shape != target.shape or value.dtype != target.dtype:
                raise RuntimeError(f"the callback returned {value.dtype}{list(value.shape)} for a "
                                   f"{target.dtype}{list(target.shape)} result")
            if target.size:
                target[...] = value
        return None
    except BaseException as e:  # pylint: disable=broad-except
        return _error(frame, f"{type(e).__name__}: {e}")


_TRAMPOLINE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(_handle)


class _CallbackTable:
    """Callables by id. Weak: the executable that calls one holds it (as a JAX host callback)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._table = {}

    def add(self, fn):
        with self._lock:
            key = next(self._ids)
            self._table[key] = weakref.ref(fn, lambda _, key=key: self._drop(key))
        return key

    def _drop(self, key):
        with self._lock:
            self._table.pop(key, None)

    def get(self, key):
        with self._lock:
            ref = self._table.get(key)
        fn = ref() if ref is not None else None
        if fn is None:
            raise RuntimeError(f"host callback {key} no longer exists (its program was freed)")
        return fn


_CALLBACKS = _CallbackTable()


def _emit_for_ember(ctx, callback, token, operands, operand_avals, result_avals, *,
                    has_side_effect, returns_token=True, partitioned=False, sharding=None):
    """emit_python_callback for platform "ember" (same contract as JAX's)."""
    del operand_avals, returns_token
    from jax import ffi  # pylint: disable=import-outside-toplevel
    from jax._src import config  # pylint: disable=import-outside-toplevel
    from jax._src import core  # pylint: disable=import-outside-toplevel
    from jax._src import sharding_impls  # pylint: disable=import-outside-toplevel
    from jax._src.interpreters import mlir  # pylint: disable=import-outside-toplevel
    if partitioned and result_avals:
        raise ValueError("Partitioned callback not supported with return values.")

    def checked(*args):
        outs = callback(*args)
        if len(outs) != len(result_avals):
            raise RuntimeError("Mismatched number of outputs from callback. "
                               f"Expected: {len(result_avals)}, Actual: {len(outs)}")
        outs = tuple(np.asarray(o) for o in outs)
        for i, (out, aval) in enumerate(zip(outs, result_avals)):
            if out.shape != aval.shape:
                raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                                   f"Expected: {aval.shape}, Actual: {out.shape}")
            if out.dtype != aval.dtype:
                raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                                   f"Expected: {aval.dtype}, Actual: {out.dtype}")
        return outs

    wrapped = checked
    if token:
        def wrapped(token_in, *args):  # pylint: disable=function-redefined
            return (token_in, *checked(*args))
        operands = [token, *operands]
        if (config.use_shardy_partitioner.value and ctx.avals_out and
                isinstance(sharding, sharding_impls.SdyArrayList)):
            # The token result needs a sharding of its own (as in JAX's emit).
            first = sharding.shardings[0]
            sharding = sharding_impls.SdyArrayList((
                sharding_impls.SdyArray(mesh_shape=(), dim_shardings=(),
                                        logical_device_ids=first.logical_device_ids),
                *sharding.shardings))
        ctx = dataclasses.replace(ctx, avals_in=[core.abstract_token, *ctx.avals_in],
                                  avals_out=[core.abstract_token, *ctx.avals_out])
    ctx.module_context.add_host_callback(wrapped)  # the executable keeps it alive
    key = _CALLBACKS.add(wrapped)
    result = ffi.build_ffi_lowering_function(TARGET, has_side_effect=has_side_effect)(
        ctx, *operands, callback_id=np.uint64(key))
    if sharding is not None:
        mlir.set_sharding(ctx.module_context, result, sharding)
    results = list(result.results)
    if token:
        token, *results = results
    return results, token, None


def register():
    """Registers the handler with Ember and the lowerings with JAX (after register_plugin)."""
    from jax._src import callback as jax_callback  # pylint: disable=import-outside-toplevel
    from jax._src import debugging  # pylint: disable=import-outside-toplevel
    from jax._src.interpreters import mlir  # pylint: disable=import-outside-toplevel

    ember_ffi.register_handler(TARGET, ctypes.cast(_TRAMPOLINE, ctypes.c_void_p).value)
    jax_emit = jax_callback.emit_python_callback
    if not getattr(jax_emit, "_ember_dispatch", False):
        def emit_python_callback(ctx, *args, **kwargs):
            if tuple(ctx.module_context.platforms) == (ember_ffi.PLATFORM,):
                return _emit_for_ember(ctx, *args, **kwargs)
            return jax_emit(ctx, *args, **kwargs)
        emit_python_callback._ember_dispatch = True  # pylint: disable=protected-access
        jax_callback.emit_python_callback = emit_python_callback
    mlir.register_lowering(debugging.debug_callback_p, debugging.debug_callback_lowering,
                           platform=ember_ffi.PLATFORM)
    mlir.register_lowering(debugging.debug_print_p, debugging.debug_print_lowering_rule,
                           platform=ember_ffi.PLATFORM)
    mlir.register_lowering(debugging.inspect_sharding_p,
                           _inspect_sharding_lowering(debugging._inspect_sharding_lowering_rule),  # pylint: disable=protected-access
                           platform=ember_ffi.PLATFORM)


def _inspect_sharding_lowering(jax_rule):
    """jax.debug.inspect_array_sharding on Ember: JAX's rule where it calls back at lowering (one
    device); over several devices XLA's SPMD partitioner would call back from the custom call
    "InspectSharding", which Ember's partitioner does not do, so the lowering says so instead of
    leaving a custom call that fails when the program runs (and poisons the effects tokens)."""
    from jax._src import sharding_impls  # pylint: disable=import-outside-toplevel

    def rule(ctx, value, *, callback):
        axis_context = ctx.module_context.axis_context
        devices = None
        if isinstance(axis_context, sharding_impls.ShardingContext):
            devices = axis_context.device_assignment
        elif isinstance(axis_context, sharding_impls.SPMDAxisContext):
            devices = axis_context.mesh._flat_devices_tuple  # pylint: disable=protected-access
        if devices is not None and len(devices) > 1:
            raise NotImplementedError(
                "jax.debug.inspect_array_sharding inside a computation over "
                f"{len(devices)} devices is not supported on Ember (its SPMD partitioner does "
                "not call back with the sharding); call it outside jit on the array instead")
        return jax_rule(ctx, value, callback=callback)

    return rule
