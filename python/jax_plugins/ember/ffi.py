"""XLA FFI handlers and type ids for Ember, through the plugin's PJRT FFI extension.

`jax.ffi.register_ffi_target(name, capsule, platform="ember")` and
`jax.ffi.register_ffi_type_id(name, capsule, platform="ember")` reach xla_client's per-platform
handlers; `install(c_api)` registers Ember's, which pass the registration to the plugin (the PJRT
FFI extension, found on the PJRT_Api's extension chain) with ctypes. Registrations made before
the plugin loaded are replayed by xla_client when the handler is installed.
"""
import ctypes

PLATFORM = "ember"
_EXTENSION_TYPE_FFI = 5


class _ExtensionBase(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
                ("next", ctypes.c_void_p)]


class _FfiExtension(ctypes.Structure):
    _fields_ = [("base", _ExtensionBase), ("type_id_register", ctypes.c_void_p),
                ("user_data_add", ctypes.c_void_p), ("register_handler", ctypes.c_void_p)]


class _RegisterHandlerArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("target_name", ctypes.c_char_p),
                ("target_name_size", ctypes.c_size_t), ("api_version", ctypes.c_int),
                ("handler", ctypes.c_void_p), ("platform_name", ctypes.c_char_p),
                ("platform_name_size", ctypes.c_size_t), ("traits", ctypes.c_int)]


class _TypeIdRegisterArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("type_name", ctypes.c_char_p), ("type_name_size", ctypes.c_size_t),
                ("type_id", ctypes.c_int64)]


class _ErrorMessageArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("error", ctypes.c_void_p), ("message", ctypes.c_void_p),
                ("message_size", ctypes.c_size_t)]


class _ErrorDestroyArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("error", ctypes.c_void_p)]


_ENTRY = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
_VOID_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# Offsets in PJRT_Api (pjrt_c_api.h): extension_start, PJRT_Error_Destroy, PJRT_Error_Message.
_API_EXTENSION_START, _API_ERROR_DESTROY, _API_ERROR_MESSAGE = 8, 40, 48

_api = None        # address of Ember's PJRT_Api
_extension = None  # its _FfiExtension


def capsule_pointer(capsule):
    """The pointer a PyCapsule holds (whatever its name)."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get_pointer(capsule, get_name(capsule))


def _read_pointer(address):
    return ctypes.c_void_p.from_address(address).value


def _check(error):
    """Raises the PJRT_Error `error` (an address, or None for success) as a RuntimeError."""
    if not error:
        return
    message = _ErrorMessageArgs(ctypes.sizeof(_ErrorMessageArgs), None, error, None, 0)
    _VOID_ENTRY(_read_pointer(_api + _API_ERROR_MESSAGE))(ctypes.addressof(message))
    text = ctypes.string_at(message.message, message.message_size).decode(errors="replace")
    destroy = _ErrorDestroyArgs(ctypes.sizeof(_ErrorDestroyArgs), None, error)
    _VOID_ENTRY(_read_pointer(_api + _API_ERROR_DESTROY))(ctypes.addressof(destroy))
    raise RuntimeError(text)


def install(c_api):
    """Finds the FFI extension of the plugin behind `c_api` (the capsule register_plugin returns)
    and routes jax.ffi registrations for platform "ember" to it."""
    global _api, _extension
    _api = capsule_pointer(c_api)
    node = _read_pointer(_api + _API_EXTENSION_START)
    while node:
        base = _ExtensionBase.from_address(node)
        if base.type == _EXTENSION_TYPE_FFI:
            _extension = _FfiExtension.from_address(node)
            break
        node = base.next
    if _extension is None:
        raise RuntimeError("the Ember plugin has no PJRT FFI extension")
    from jax._src.lib import xla_client  # pylint: disable=import-outside-toplevel
    xla_client.register_custom_call_handler(PLATFORM, _register_target)
    xla_client.register_custom_type_handler(PLATFORM, _register_type)


def register_handler(name, handler_address, api_version=1, traits=0):
    """Registers the XLA FFI handler at `handler_address` for custom-call target `name`."""
    if _extension is None:
        raise RuntimeError("Ember's FFI extension is not installed (the plugin is not loaded)")
    target = name.encode() if isinstance(name, str) else bytes(name)
    platform = PLATFORM.encode()
    args = _RegisterHandlerArgs(ctypes.sizeof(_RegisterHandlerArgs), target, len(target),
                                api_version, handler_address, platform, len(platform), traits)
    _check(_ENTRY(_extension.register_handler)(ctypes.addressof(args)))


def _register_target(name, fn, platform, api_version, traits):
    del platform
    if isinstance(fn, dict):
        unsupported = sorted(set(fn) - {"execute", "prepare", "initialize"})
        if unsupported:
            raise NotImplementedError(
                f"FFI target {name!r}: Ember runs the execute stage only (got {unsupported})")
        fn = fn["execute"]
    register_handler(name, capsule_pointer(fn), api_version, int(traits))


def _register_type(type_name, type_id):
    name = type_name.encode() if isinstance(type_name, str) else bytes(type_name)
    id_address = capsule_pointer(type_id)  # an XLA_FFI_TypeId: one int64
    args = _TypeIdRegisterArgs(ctypes.sizeof(_TypeIdRegisterArgs), None, name, len(name),
                               ctypes.c_int64.from_address(id_address).value)
    _check(_ENTRY(_extension.type_id_register)(ctypes.addressof(args)))
    ctypes.c_int64.from_address(id_address).value = args.type_id
