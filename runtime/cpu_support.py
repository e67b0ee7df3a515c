"""Typing and wrapping around the numpy expressions of CPU kernels."""

from __future__ import annotations

import warnings

import numpy as np

from . import dtypes
from ._tls import state as _tls
from .dispatch_keys import INFERENCE_TENSOR_KEYS
from .numpy_kernels import cast
from .numpy_kernels import copy as copy_values
from .tensor import Tensor, wrap_scalar

_BOOL = np.dtype(np.bool_)

_HALF = np.dtype(np.float16)


def float_array(t: Tensor) -> np.ndarray:
    """The array of a one-input float op: integral inputs lifted to the default float."""
    data = t._data
    return data if data.dtype.kind == "f" else cast(data, dtypes.get_default_dtype().np)


def promote2(a: Tensor, b: Tensor, to_float: bool, float16_scalar_other: bool = False):
    """Both arrays cast to PyTorch's result type of ``a`` and ``b``; with
    ``float16_scalar_other``, a one-element ``b`` stays in its own type when the result is
    float16 (the kernel reads it at float32 precision)."""
    x, y = a._data, b._data
    if x.dtype is y.dtype and (not to_float or x.dtype.kind == "f"):
        return x, y
    dt = dtypes.float_result_type(a, b) if to_float else dtypes.result_type(a, b)
    if float16_scalar_other and dt is _HALF and y.size == 1:
        return cast(x, dt), y
    return cast(x, dt), cast(y, dt)


def promote(tensors: tuple, scalars: tuple, to_float: bool) -> tuple:
    """Arrays of ``tensors`` cast to the result type of the tensors and Python scalars."""
    first = tensors[0]._data
    if first.dtype.kind == "f":
        # Floating tensors of one dtype: no Python scalar can change the result type.
        if len(tensors) == 1:
            return (first,)
        arrays = [t._data for t in tensors]
        dtype = first.dtype
        for data in arrays:
            if data.dtype is not dtype:
                break
        else:
            return arrays
    operands = list(tensors)
    operands.extend(wrap_scalar(s) for s in scalars if s is not None)
    dt = dtypes.float_result_type(*operands) if to_float else dtypes.result_type(*operands)
    return tuple([cast(t._data, dt) for t in tensors])


def promote_optional(tensors: tuple, to_float: bool) -> tuple:
    """``promote`` for ops with optional Tensor inputs (clamp.Tensor): absent ones stay None
    and take no part in the result type."""
    present = [t for t in tensors if t is not None]
    dt = dtypes.float_result_type(*present) if to_float else dtypes.result_type(*present)
    return tuple([cast(t._data, dt) if t is not None else None for t in tensors])


def check_cast(result: np.dtype, target: np.dtype) -> None:
    """PyTorch's refusal to write a result into a tensor of a dtype it cannot be cast to
    (its canCast: no floating result into an integral or bool tensor, nothing but bool
    into a bool one; an integral result may go into any integral tensor, and wraps);
    in-place ops check it before computing."""
    if result != target and (
        (result.kind == "f" and target.kind != "f") or (target.kind == "b" and result.kind != "b")
    ):
        raise RuntimeError(
            f"result type {dtypes.scalar_type_name(result)} can't be cast to the desired output type "
            f"{dtypes.scalar_type_name(target)}"
        )


def check_out_dtype(result: np.dtype, out: np.dtype) -> None:
    """PyTorch's refusal of an out= tensor whose dtype is not the result type, for ops
    that compute in out's dtype only (neg, clamp with numbers)."""
    if result != out:
        raise RuntimeError(
            f"Found dtype {dtypes.scalar_type_name(out)} but expected "
            f"{dtypes.scalar_type_name(result)}"
        )


def check_out_scalar_type(result: np.dtype, out: np.dtype) -> None:
    """``check_out_dtype`` in the words of the ops that compare out's scalar type with their
    input's (cummax, logcumsumexp)."""
    if result != out:
        raise RuntimeError(
            f"expected scalar_type {dtypes.scalar_type_name(result)} but found "
            f"{dtypes.scalar_type_name(out)}"
        )


def check_bool_out(out: np.dtype, name: str) -> None:
    """PyTorch's refusal of a non-bool out= tensor for a predicate (isposinf, signbit)."""
    if out != _BOOL:
        raise RuntimeError(f"{name} does not support non-boolean outputs.")


def check_matmul_out_dtype(result: np.dtype, out: np.dtype) -> None:
    """``check_out_dtype`` for the matrix products, in their words (C++ type names)."""
    if result != out:
        raise RuntimeError(
            f"Expected out tensor to have dtype {dtypes.cpp_type_name(result)}, but got "
            f"{dtypes.cpp_type_name(out)} instead"
        )


def _check_inference(out: Tensor) -> None:
    if out._keys == INFERENCE_TENSOR_KEYS and not _tls.inference_mode:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can make "
            "a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details."
        )


def copy_into(out: Tensor, result) -> Tensor:
    """Write an in-place op's result into ``out``'s memory."""
    _check_inference(out)
    target = out._data
    result = np.asarray(result)
    check_cast(result.dtype, target.dtype)
    if result.shape != target.shape:
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    if not target.flags.writeable:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    np.copyto(target, cast(result, target.dtype), casting="unsafe")
    return out


def set_data(out: Tensor, result) -> Tensor:
    """In-place metadata ops (``squeeze_``): ``out`` now shows ``result``'s view."""
    _check_inference(out)
    out._data = result
    return out


def write_outs(outs: tuple, results: tuple, check=None) -> tuple:
    """Write the several results of an out= op (``max.dim_max``) into ``outs``. Every out's
    dtype is checked before any is written: ``check(result dtype, out dtype)`` for an op
    that wants each out in its result's very dtype, else PyTorch's canCast."""
    results = [np.asarray(r) for r in results]
    for out, result in zip(outs, results):
        _check_inference(out)
        if result.dtype != out._data.dtype:
            (check or check_cast)(result.dtype, out._data.dtype)
    return tuple([write_out(out, result) for out, result in zip(outs, results)])


def refuse_grad_outs(name: str, outs: list) -> None:
    """unbind_copy's out= variant refuses outs that require grad in its kernel, under the
    dispatch modes (which see the call) and before anything else."""
    if _tls.grad_enabled and any(out._rg for out in outs):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )


def _check_list_length(outs: list, results: list, name: str) -> None:
    if len(outs) != len(results):
        raise RuntimeError(
            f"{name} expected an out= argument of size {len(results)}, got size {len(outs)}"
        )


def write_list_outs(outs: list, results: list, name: str) -> None:
    """The out= variant of a copy with a list of results (``unbind_copy.int_out``): one out
    per result, each of its result's very dtype, then resized and written in order. The
    results are views of the input, so an out that overlaps it reads what the earlier
    writes left there, as PyTorch's kernel does. Every out is checked before any is
    written, where PyTorch writes those before the first bad one."""
    _check_list_length(outs, results, name)
    for out, result in zip(outs, results):
        _check_inference(out)
        check_matmul_out_dtype(result.dtype, out._data.dtype)
    for out, result in zip(outs, results):
        write_out(out, result)


def copy_list_outs(outs: list, results: list, name: str) -> None:
    """As write_list_outs, each out written as ``out.copy_(result)`` does (split_copy's
    out=): any dtype, the result broadcast to the out's shape, which never changes."""
    _check_list_length(outs, results, name)
    for out, result in zip(outs, results):
        _check_inference(out)
        copy_values(out._data, result)  # raises copy_'s error for a shape it cannot take
    for out, result in zip(outs, results):
        copy_into(out, copy_values(out._data, result))


def warn_if_resized(out: Tensor, shape: tuple, stacklevel: int = 2) -> None:
    """PyTorch's warning when an out= tensor with elements is resized to ``shape``."""
    if out._data.size:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out._data.shape)}, which does not match the required output shape "
            f"{list(shape)}. This behavior is deprecated, and in a future PyTorch "
            "release outputs will not be resized unless they have zero elements. You can "
            "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
            "with t.resize_(0).",
            UserWarning,
            stacklevel=stacklevel + 1,
        )


def write_out(out: Tensor, result) -> Tensor:
    """Write an out= op's result into ``out``, resizing it as PyTorch does."""
    _check_inference(out)
    result = np.asarray(result)
    shape = out._data.shape
    if shape != result.shape:
        warn_if_resized(out, result.shape, stacklevel=3)
        check_cast(result.dtype, out._data.dtype)  # before anything changes
        out._data = np.empty(result.shape, dtype=out._data.dtype)
    return copy_into(out, result)
