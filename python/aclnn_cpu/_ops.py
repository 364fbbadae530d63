"""One generic call of any operator of the table (optable/), for every kind of array.

The extension module lists the operators (their CANN parameters in call order and the
attributes they take) and runs one call through CANN's two phases over the caller's memory.
This module maps arrays to CANN dtypes, allocates the outputs the caller did not pass (in the
caller's array type, shaped by the table's ``declare``), chooses the thread count and turns a
refusal into an exception carrying the library's sentence.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from . import _C

# CANN's aclDataType values (acl/acl_base.h).
ACL_FLOAT, ACL_FLOAT16, ACL_INT8, ACL_INT32, ACL_UINT8 = 0, 1, 2, 3, 4
ACL_INT16, ACL_UINT16, ACL_UINT32, ACL_INT64, ACL_UINT64 = 6, 7, 8, 9, 10
ACL_DOUBLE, ACL_BOOL, ACL_COMPLEX64, ACL_COMPLEX128, ACL_BF16 = 11, 12, 16, 17, 27
ACL_DT_UNDEFINED = -1

# By the dtype's name, which NumPy, ml_dtypes, PyTorch ("torch.float32") and array-API
# libraries all spell the same way.
_ACL_BY_NAME = {
    "float32": ACL_FLOAT, "float16": ACL_FLOAT16, "bfloat16": ACL_BF16, "float64": ACL_DOUBLE,
    "int8": ACL_INT8, "uint8": ACL_UINT8, "int16": ACL_INT16, "uint16": ACL_UINT16,
    "int32": ACL_INT32, "uint32": ACL_UINT32, "int64": ACL_INT64, "uint64": ACL_UINT64,
    "bool": ACL_BOOL, "complex64": ACL_COMPLEX64, "complex128": ACL_COMPLEX128,
}
_NAME_BY_ACL = {v: k for k, v in _ACL_BY_NAME.items()}


class AclnnError(Exception):
    """A call the library refused or that failed: ``status`` is CANN's status code and
    ``message`` the library's sentence (what ``aclGetRecentErrMsg()`` returns in C)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class AclnnValueError(AclnnError, ValueError):
    """A refused shape, attribute or value (161001, 161002, 561002, a bad target: 100000)."""


class AclnnTypeError(AclnnError, TypeError):
    """A refused dtype, or an object that is not a CPU array."""


class AclnnRuntimeError(AclnnError, RuntimeError):
    """Any other failure (361001, 561xxx other than shape and attribute errors)."""


_VALUE_STATUSES = {100000, 161001, 161002, 561001, 561002}


def raise_for(status: int, message: str) -> None:
    """Raises the exception class for a refusal (status != 0)."""
    if " dtype " in message or "-byte elements" in message or "not a CPU array" in message \
            or "not a writable CPU array" in message:
        raise AclnnTypeError(status, message)
    if status in _VALUE_STATUSES:
        raise AclnnValueError(status, message)
    raise AclnnRuntimeError(status, message)


# Threads for calls that do not come from PyTorch (0: the library's default).
_num_threads = 0


def set_num_threads(n: int) -> None:
    """Threads each operator call uses when it is not called from PyTorch (0 restores the
    default: ACLNN_CPU_NUM_THREADS, else OMP_NUM_THREADS, else all cores). Calls through
    PyTorch tensors use ``torch.get_num_threads()``."""
    global _num_threads
    if int(n) < 0:
        raise ValueError(f"aclnn_cpu.set_num_threads: {n} is negative.")
    _num_threads = int(n)


def get_num_threads() -> int:
    """Threads a call from NumPy uses."""
    return _num_threads if _num_threads > 0 else _C.default_num_threads()


class _Kind:
    """How to look at and allocate arrays of one array library."""

    torch = None  # the torch module once a torch tensor has been seen

    @staticmethod
    def is_torch(x: Any) -> bool:
        return type(x).__module__.startswith("torch")


def _torch():
    if _Kind.torch is None:
        import torch  # only when the caller already uses it

        _Kind.torch = torch
    return _Kind.torch


# By dtype object (NumPy's, PyTorch's, ...), filled on first sight: asking NumPy for a dtype's
# name costs microseconds, a dict lookup does not.
_ACL_BY_DTYPE: dict = {}


def acl_dtype(x: Any) -> int:
    """CANN's dtype of array x (ACL_DT_UNDEFINED if it has none)."""
    dtype = getattr(x, "dtype", None)
    try:
        return _ACL_BY_DTYPE[dtype]
    except KeyError:
        pass
    except TypeError:  # not hashable
        return ACL_DT_UNDEFINED
    name = str(dtype)
    acl = _ACL_BY_NAME.get(name[6:] if name.startswith("torch.") else name, ACL_DT_UNDEFINED)
    _ACL_BY_DTYPE[dtype] = acl
    return acl


_TORCH_DTYPE: dict = {}  # aclDataType -> torch.dtype, filled on first use


# Outputs of at least this many bytes come from the output cache (python/src/block_cache.cc).
_CACHED_BYTES = 1 << 20
_CACHEABLE = {_ACL_BY_NAME[n]: s for n, s in
              (("float32", 4), ("float64", 8), ("float16", 2), ("bfloat16", 2))}


def empty_like_kind(ref: Any, shape: Sequence[int], acl: int) -> Any:
    """An uninitialized array of the same library as `ref`. A large floating torch tensor comes
    from the output cache (its block, once freed, serves the next output of its size with its
    pages backed; ACLNN_CPU_CACHE_BYTES=0 turns it off, docs/python.md)."""
    if _Kind.is_torch(ref):
        size = _CACHEABLE.get(acl)
        if size is not None:
            for d in shape:
                size *= d
            if size >= _CACHED_BYTES and _C.cache_enabled():
                return _C.cached_empty(list(shape), acl)
        dtype = _TORCH_DTYPE.get(acl)
        if dtype is None:
            dtype = _TORCH_DTYPE[acl] = getattr(_torch(), _NAME_BY_ACL[acl])
        return _Kind.torch.empty(shape, dtype=dtype)
    name = _NAME_BY_ACL[acl]
    if name == "bfloat16":
        import ml_dtypes

        return np.empty(tuple(shape), dtype=ml_dtypes.bfloat16)
    if not isinstance(ref, np.ndarray) and hasattr(ref, "__array_namespace__"):
        xp = ref.__array_namespace__()
        return xp.empty(tuple(shape), dtype=getattr(xp, name))
    return np.empty(tuple(shape), dtype=name)


class Op:
    """One operator of the table."""

    def __init__(self, index: int, desc: Mapping[str, Any]):
        self.index = index
        self.name: str = desc["name"]
        self.api: str = desc["api"]
        self.params = [(n, is_out, opt) for n, is_out, opt in desc["params"]]
        self.attrs = list(desc["attrs"])
        self.inputs = [n for n, is_out, _ in self.params if not is_out]
        self.outputs = [n for n, is_out, _ in self.params if is_out]
        self.names = {n for n, _, _ in self.params}

    def __repr__(self) -> str:
        return f"<aclnn_cpu operator {self.api}: {', '.join(n for n, _, _ in self.params)}>"

    def __call__(self, tensors: Mapping[str, Any], *, dim: int = -1,
                 reduction: str | None = None, ignore_index: int = -100,
                 label_smoothing: float = 0.0, zloss: float = 0.0, return_zloss: bool = False,
                 out_dtype: int = ACL_DT_UNDEFINED) -> dict[str, Any]:
        """Runs the operator on `tensors` (by CANN parameter name; inputs required unless
        optional, outputs allocated when absent) and returns every output by name."""
        # The problem's shape and dtype: those of the input with the most dimensions (the
        # logits or log-probabilities), as the table's declare() takes them. (A hot path: the
        # call overhead of a small problem is these lines.)
        main, rank, given = None, -1, 0
        for name in self.inputs:
            a = tensors.get(name)
            if a is not None:
                given += 1
                r = getattr(a, "ndim", -1)
                if r > rank:
                    main, rank = a, r
        if len(tensors) > given + len(self.outputs):
            unknown = set(tensors) - self.names
            if unknown:
                raise TypeError(f"{self.api}: no parameter named {', '.join(sorted(unknown))}.")
        from_torch = main is not None and _Kind.is_torch(main)
        torch = _torch() if from_torch else None
        decls = None
        arrays, dtypes, result = [], [], {}
        for i, (name, is_out, _) in enumerate(self.params):
            a = tensors.get(name)
            if a is None:
                if not is_out or main is None:
                    arrays.append(None)
                    dtypes.append(ACL_DT_UNDEFINED)
                    continue
                if decls is None:
                    target = tensors.get("target")
                    decls = _C.declare(
                        self.index, list(main.shape), acl_dtype(main), out_dtype,
                        acl_dtype(target) if target is not None else ACL_INT64,
                        reduction or "mean", tensors.get("weightOptional") is not None, zloss,
                        dim)
                _, acl, shape = decls[i]
                a = empty_like_kind(main, shape, acl)
            if is_out:
                result[name] = a
            acl = acl_dtype(a)
            if from_torch and isinstance(a, torch.Tensor):
                if a.is_cpu and a.layout is torch.strided:
                    # A raw view: a torch tensor's DLPack export costs about 15 us.
                    a = (a.data_ptr(), a.shape, a.stride())
                elif a.requires_grad:
                    a = a.detach()  # DLPack refuses tensors that require grad
            elif acl == ACL_BF16 and isinstance(a, np.ndarray):
                a = a.view(np.uint16)  # NumPy's DLPack and buffers have no bfloat16
            arrays.append(a)
            dtypes.append(acl)
        threads = torch.get_num_threads() if from_torch else _num_threads
        status, message = _C.run(self.index, arrays, dtypes, dim, reduction, ignore_index,
                                 label_smoothing, zloss, return_zloss, threads)
        if status != 0:
            raise_for(status, message)
        return result


OPS: dict[str, Op] = {d["name"]: Op(i, d) for i, d in enumerate(_C.ops())}
