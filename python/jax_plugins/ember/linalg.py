"""Lowerings of JAX's linear-algebra primitives for platform "ember".

JAX lowers eigh, svd, eig, schur, hessenberg and tridiagonal only for cpu/cuda/rocm/tpu (to
LAPACK, cuSOLVER or TPU kernels); a plugin platform gets "MLIR translation rule for primitive
'eigh' not found". These rules lower them to custom calls Ember implements (ember_eigh, ...:
compiler/evaluator/eval_linalg_custom_calls.cc), row-major, batched over leading dimensions,
with the attributes in the typed-FFI backend_config dictionary. Options that XLA:CPU rejects
are rejected the same way, so programs behave as they do on XLA:CPU.

lu has a generic lowering (a Python LU of gathers and loops); it is replaced too, by ember_lu
(LAPACK getrf's result, as XLA:CPU gives it): one call instead of a loop of small ops, and no
gather whose sharding JAX cannot type under a mesh (solve, det, slogdet, inv are built on it).
"""
from jax import ffi
from jax._src.interpreters import mlir
from jax._src.lax import linalg as lax_linalg

PLATFORM = "ember"


def _eigh(ctx, operand, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    del sort_eigenvalues  # always sorted ascending, as on XLA:CPU
    n = ctx.avals_in[0].shape[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("subset_by_index not supported on Ember (nor on XLA:CPU)")
    if algorithm not in (None, lax_linalg.EighImplementation.QR):
        raise NotImplementedError(f"eigh algorithm {algorithm} is not supported on Ember")
    return ffi.ffi_lowering("ember_eigh")(ctx, operand, lower=bool(lower))


def _svd(ctx, operand, *, full_matrices, compute_uv, subset_by_index, algorithm=None):
    m, n = ctx.avals_in[0].shape[-2:]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, min(m, n))):
        raise NotImplementedError("subset_by_index not supported on Ember (nor on XLA:CPU)")
    if algorithm not in (None, lax_linalg.SvdAlgorithm.DEFAULT, lax_linalg.SvdAlgorithm.QR,
                         lax_linalg.SvdAlgorithm.DIVIDE_AND_CONQUER):
        raise NotImplementedError(f"SVD algorithm {algorithm} is not supported on Ember")
    return ffi.ffi_lowering("ember_svd")(ctx, operand, full_matrices=bool(full_matrices),
                                         compute_uv=bool(compute_uv))


def _eig(ctx, operand, *, compute_left_eigenvectors, compute_right_eigenvectors,
         enable_eigvec_derivs=False, implementation=None, **_):
    del enable_eigvec_derivs
    if implementation not in (None, lax_linalg.EigImplementation.LAPACK):
        raise ValueError("Only the lapack implementation is supported on Ember.")
    return ffi.ffi_lowering("ember_eig")(ctx, operand,
                                         compute_left=bool(compute_left_eigenvectors),
                                         compute_right=bool(compute_right_eigenvectors))


def _schur(ctx, operand, *, compute_schur_vectors, sort_eig_vals, select_callable):
    del select_callable
    if sort_eig_vals:
        raise NotImplementedError(
            "The sort feature of LAPACK's gees routine is not implemented.")
    return ffi.ffi_lowering("ember_schur")(ctx, operand,
                                           compute_schur_vectors=bool(compute_schur_vectors))


def _hessenberg(ctx, operand):
    return ffi.ffi_lowering("ember_hessenberg")(ctx, operand)


def _tridiagonal(ctx, operand, *, lower):
    return ffi.ffi_lowering("ember_tridiagonal")(ctx, operand, lower=bool(lower))


def _lu(ctx, operand):
    # (lu, pivots, permutation), as XLA:CPU's getrf lowering returns them (0-based pivots).
    return ffi.ffi_lowering("ember_lu")(ctx, operand)


RULES = {
    "eigh_p": _eigh,
    "svd_p": _svd,
    "eig_p": _eig,
    "schur_p": _schur,
    "hessenberg_p": _hessenberg,
    "tridiagonal_p": _tridiagonal,
    "lu_p": _lu,
}


def register():
    """Registers the rules for every primitive this JAX has (call after register_plugin)."""
    registered = []
    for name, rule in RULES.items():
        primitive = getattr(lax_linalg, name, None)
        if primitive is None:
            continue
        mlir.register_lowering(primitive, rule, platform=PLATFORM)
        registered.append(name)
    return registered

