"""The bad-input battery: calls PyTorch refuses, run on opgrad and torch side by side.

Every row is one bad call on a fresh set of tensors (``make_env``). For each library
the call must raise; the test checks that

- both raise the same exception type, whose message contains torch's key phrase
  (torch's ``torch.`` read as ``opgrad.``),
- every tensor of the set keeps its values, ``.grad``, ``_version`` and ``grad_fn``
  (nothing half-updated), and
- a correct backward afterwards gives torch's gradients.

A row may ``prepare`` legitimate state first (a first backward, a view made under
no_grad); the snapshot is taken after it.
"""

from __future__ import annotations

import itertools
import typing
from types import SimpleNamespace

import numpy as np
import pytest

import opgrad as og

NAN, INF = float("nan"), float("inf")


class GradcheckError(RuntimeError):
    """Stands for torch.autograd.gradcheck.GradcheckError: rows compare exception names."""


class Row(typing.NamedTuple):
    id: str
    call: typing.Callable
    exc: type
    phrase: str
    prepare: typing.Optional[typing.Callable] = None
    torch_changes_state: bool = False  # torch itself leaves a change behind (not checked)


ROWS: list = []


def bad(id, call, exc, phrase, prepare=None, xfail=None, torch_changes_state=False):
    row = Row(id, call, exc, phrase, prepare, torch_changes_state)
    marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
    ROWS.append(pytest.param(row, id=id, marks=marks))


def make_env(L) -> SimpleNamespace:
    """The tensors a row works on: leaves that require grad, plain tensors of each dtype,
    a non-leaf, a 0-dim tensor."""
    e = SimpleNamespace()
    e.w = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    e.m = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=L.float64, requires_grad=True)
    e.x = L.tensor([0.5, -1.0, 2.0])
    e.x2 = L.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, 3.0]])
    e.i = L.tensor([1, 2, 3])
    e.i32 = L.tensor([1, 2, 3], dtype=L.int32)
    e.b = L.tensor([True, False, True])
    e.s = L.tensor(1.5)
    e.y = e.w * 2
    return e


def _values(t) -> tuple:
    a = np.array(t.detach().numpy(), copy=True)
    return (a.tobytes(), a.shape, str(a.dtype))


def snapshot(e) -> dict:
    state = {}
    for name, t in vars(e).items():
        if not hasattr(t, "grad_fn") or not hasattr(t, "detach"):
            continue
        try:
            version = t._version
        except RuntimeError:  # inference tensors keep no version
            version = None
        grad = t.grad
        state[name] = (_values(t), None if grad is None else _values(grad), version, t.grad_fn)
    return state


def assert_unchanged(before: dict, after: dict, lib) -> None:
    assert before.keys() == after.keys()
    for name, (values, grad, version, grad_fn) in before.items():
        now = after[name]
        where = f"{lib.__name__}: {name}"
        assert now[0] == values, f"{where}: values changed"
        assert now[1] == grad, f"{where}: .grad changed"
        assert now[2] == version, f"{where}: _version changed"
        assert now[3] is grad_fn, f"{where}: grad_fn changed"


def follow_up(lib, e) -> tuple:
    """A correct backward after the refused call: the gradients torch gives."""
    loss = (e.w * e.w).sum() + e.m.sin().sum() + (e.w * 3).sum()
    loss.backward()
    return e.w.grad.tolist(), e.m.grad.tolist()


def opgrad_text(phrase: str) -> str:
    return phrase.replace("torch.", "opgrad.")


_counter = itertools.count()


def unique(name: str) -> str:
    """A fresh custom-op name (each row registers its ops in both libraries)."""
    return f"bad_inputs_{next(_counter)}::{name}"


# ---- factories ----------------------------------------------------------------------------

bad(
    "zeros_negative_size",
    lambda L, e: L.zeros(-1),
    RuntimeError,
    "zeros: Dimension size must be non-negative.",
)
bad("empty_negative_size", lambda L, e: L.empty(-1), RuntimeError, "negative dimension -1")
bad("ones_negative_dim", lambda L, e: L.ones(2, -3), RuntimeError, "negative dimension -3")
bad(
    "zeros_huge_size",
    lambda L, e: L.zeros(10**12),
    RuntimeError,
    "DefaultCPUAllocator: can't allocate memory: you tried to allocate 4000000000000 bytes",
)
bad(
    "ones_huge_2d",
    lambda L, e: L.ones(10**6, 10**6, dtype=L.float64),
    RuntimeError,
    "you tried to allocate 8000000000000 bytes",
)
bad(
    "randn_huge_size",
    lambda L, e: L.randn(10**12),
    RuntimeError,
    "you tried to allocate 4000000000000 bytes",
)
bad(
    "eye_huge",
    lambda L, e: L.eye(10**7),
    RuntimeError,
    "you tried to allocate 400000000000000 bytes",
)
bad(
    "zeros_storage_overflow",
    lambda L, e: L.zeros(2**62, 4),
    RuntimeError,
    "Storage size calculation overflowed with sizes=[4611686018427387904, 4]",
)
bad("zeros_float_size", lambda L, e: L.zeros(2.5), TypeError, "must be tuple of ints, not float")
bad("zeros_str_in_size", lambda L, e: L.zeros((2, "a")), TypeError, "must be tuple of ints")
bad(
    "zeros_dtype_string",
    lambda L, e: L.zeros(2, dtype="float32"),
    TypeError,
    "zeros(): argument 'dtype' must be torch.dtype, not str",
)
bad(
    "ones_dtype_numpy_type",
    lambda L, e: L.ones(2, dtype=np.float32),
    TypeError,
    "ones(): argument 'dtype' must be torch.dtype, not type",
)
bad(
    "ones_dtype_numpy_dtype",
    lambda L, e: L.ones(2, dtype=np.dtype("float32")),
    TypeError,
    "must be torch.dtype, not numpy.dtypes.Float32DType",
)
bad(
    "empty_dtype_string",
    lambda L, e: L.empty(2, dtype="x"),
    TypeError,
    "empty(): argument 'dtype' must be torch.dtype, not str",
)
bad(
    "ones_device_cuda",
    lambda L, e: L.ones(2, device="cuda"),
    AssertionError,
    "Torch not compiled with CUDA enabled",
)
bad(
    "zeros_device_cuda_index",
    lambda L, e: L.zeros(2, device="cuda:1"),
    AssertionError,
    "Torch not compiled with CUDA enabled",
)
bad(
    "ones_device_object_cuda",
    lambda L, e: L.ones(2, device=L.device("cuda")),
    AssertionError,
    "Torch not compiled with CUDA enabled",
)
bad(
    "ones_device_xpu",
    lambda L, e: L.ones(2, device="xpu"),
    AssertionError,
    "Torch not compiled with XPU enabled",
)
bad(
    "ones_device_mps",
    lambda L, e: L.ones(2, device="mps"),
    NotImplementedError,
    "Could not run 'aten::empty.memory_format' with arguments from the 'MPS' backend",
)
bad(
    "ones_device_unknown",
    lambda L, e: L.ones(2, device="xyz"),
    RuntimeError,
    "device type at start of device string: xyz",
)
bad(
    "ones_device_bad_string",
    lambda L, e: L.ones(2, device="cuda:01"),
    RuntimeError,
    "Invalid device string: 'cuda:01'",
)
bad("ones_device_empty", lambda L, e: L.ones(2, device=""), RuntimeError, "must not be empty")
bad(
    "ones_device_index",
    lambda L, e: L.ones(2, device=0),
    RuntimeError,
    "Cannot access accelerator device when none is available.",
)
bad(
    "ones_device_negative_index",
    lambda L, e: L.ones(2, device=-1),
    RuntimeError,
    "Device index must not be negative",
)
bad(
    "ones_device_list",
    lambda L, e: L.ones(2, device=[1]),
    TypeError,
    "ones(): argument 'device' must be torch.device, not list",
)
bad(
    "zeros_dtype_error_before_device_error",
    lambda L, e: L.zeros(2, device="cuda", dtype="x"),
    TypeError,
    "argument 'dtype' must be torch.dtype, not str",
)
bad(
    "full_string_value",
    lambda L, e: L.full((2,), "x"),
    TypeError,
    "full(): argument 'fill_value' (position 2) must be Number, not str",
)
bad("full_size_not_tuple", lambda L, e: L.full(2, 1.0), TypeError, "must be tuple of ints, not int")
bad(
    "full_nan_into_int64",
    lambda L, e: L.full((2,), NAN, dtype=L.int64),
    RuntimeError,
    "value cannot be converted to type int64_t without overflow",
)
bad(
    "full_inferred_int64_overflow",
    lambda L, e: L.full((2,), 2**63),
    RuntimeError,
    "value cannot be converted to type int64_t without overflow",
)
bad("full_int_beyond_uint64", lambda L, e: L.full((2,), 2**64), OverflowError, "int too big")
bad(
    "full_int_below_int64",
    lambda L, e: L.full((2,), -(2**63) - 1),
    OverflowError,
    "can't convert negative int to unsigned",
)
bad(
    "full_float32_overflow",
    lambda L, e: L.full((2,), 1e40, dtype=L.float32),
    RuntimeError,
    "value cannot be converted to type float without overflow",
)
bad(
    "full_int32_overflow",
    lambda L, e: L.full((2,), 2**31, dtype=L.int32),
    RuntimeError,
    "value cannot be converted to type int without overflow",
)
bad(
    "full_device_cuda",
    lambda L, e: L.full((2,), 1.0, device="cuda"),
    AssertionError,
    "not compiled with CUDA",
)
bad("arange_nan", lambda L, e: L.arange(NAN), RuntimeError, "unsupported range: 0 -> nan")
bad("arange_inf", lambda L, e: L.arange(INF), RuntimeError, "unsupported range: 0 -> inf")
bad(
    "arange_from_negative_huge_to_inf",
    lambda L, e: L.arange(-1e300, INF),
    RuntimeError,
    "unsupported range: -1e+300 -> inf",
)
bad("arange_zero_step", lambda L, e: L.arange(0, 10, 0), RuntimeError, "step must be nonzero")
bad("arange_nan_step", lambda L, e: L.arange(0, 5, NAN), RuntimeError, "step must be nonzero")
bad(
    "arange_int64_step_truncating_to_zero",
    lambda L, e: L.arange(0, 5, 0.5, dtype=L.int64),
    ValueError,
    "step must be nonzero",
)
bad(
    "arange_wrong_direction",
    lambda L, e: L.arange(0, -5),
    RuntimeError,
    "upper bound and lower bound inconsistent with step sign",
)
bad(
    "arange_int64_wrong_direction_before_step_cast",
    lambda L, e: L.arange(0, -5, 0.5, dtype=L.int64),
    RuntimeError,
    "inconsistent with step sign",
)
bad(
    "arange_size_overflow",
    lambda L, e: L.arange(0, 1e20),
    RuntimeError,
    "invalid size, possible overflow?",
)
bad(
    "arange_int64_bound_overflow",
    lambda L, e: L.arange(0, 1e20, dtype=L.int64),
    RuntimeError,
    "value cannot be converted to type int64_t without overflow",
)
bad("arange_bool", lambda L, e: L.arange(3, dtype=L.bool), NotImplementedError, '"arange_cpu"')
bad(
    "arange_string_end",
    lambda L, e: L.arange("a"),
    TypeError,
    "arange(): argument 'end' (position 1) must be Number, not str",
)
bad(
    "arange_dtype_string",
    lambda L, e: L.arange(3, dtype="float32"),
    TypeError,
    "arange() received an invalid combination of arguments - got (int, dtype=str)",
)
bad("eye_negative", lambda L, e: L.eye(-1), RuntimeError, "n must be greater or equal to 0, got -1")
bad(
    "eye_dtype_numpy",
    lambda L, e: L.eye(2, dtype=np.float32),
    TypeError,
    "eye() received an invalid combination of arguments - got (int, dtype=type)",
)
bad(
    "randn_dtype_numpy",
    lambda L, e: L.randn(2, dtype=np.float32),
    TypeError,
    "randn() received an invalid combination of arguments",
)
bad(
    "rand_integer_dtype",
    lambda L, e: L.rand(2, dtype=L.int64),
    NotImplementedError,
    "\"check_uniform_bounds\" not implemented for 'Long'",
)
bad(
    "randn_integer_dtype",
    lambda L, e: L.randn(2, dtype=L.int32),
    NotImplementedError,
    "\"normal_kernel_cpu\" not implemented for 'Int'",
)
bad(
    "tensor_ragged",
    lambda L, e: L.tensor([[1, 2], [3]]),
    ValueError,
    "expected sequence of length 2 at dim 1 (got 1)",
)
bad("tensor_string_data", lambda L, e: L.tensor("a"), TypeError, "new(): invalid data type 'str'")
bad("tensor_list_of_strings", lambda L, e: L.tensor(["a"]), ValueError, "too many dimensions 'str'")
bad(
    "tensor_string_leaf",
    lambda L, e: L.tensor([1, "a"]),
    TypeError,
    "new(): invalid data type 'str'",
)
bad(
    "tensor_nan_into_int64",
    lambda L, e: L.tensor([1.0, NAN], dtype=L.int64),
    RuntimeError,
    "value cannot be converted to type int64 without overflow",
)
bad(
    "tensor_int32_overflow",
    lambda L, e: L.tensor([2**40], dtype=L.int32),
    RuntimeError,
    "value cannot be converted to type int32 without overflow",
)
bad(
    "tensor_int_beyond_int64",
    lambda L, e: L.tensor([2**63]),
    ValueError,
    "Overflow when unpacking long long",
)
bad(
    "tensor_dtype_string",
    lambda L, e: L.tensor([1.0], dtype="float32"),
    TypeError,
    "tensor(): argument 'dtype' must be torch.dtype, not str",
)
bad(
    "tensor_device_cuda",
    lambda L, e: L.tensor([1.0], device="cuda"),
    AssertionError,
    "Torch not compiled with CUDA enabled",
)
bad(
    "tensor_device_mps",
    lambda L, e: L.tensor([1.0], device="mps"),
    RuntimeError,
    "is not linked with support for mps devices",
)
bad(
    "tensor_int_requires_grad",
    lambda L, e: L.tensor([1, 2], requires_grad=True),
    RuntimeError,
    "Only Tensors of floating point and complex dtype can require gradients",
)
bad(
    "zeros_int_requires_grad",
    lambda L, e: L.zeros(2, dtype=L.int64, requires_grad=True),
    RuntimeError,
    "Only Tensors of floating point and complex dtype can require gradients",
)
bad(
    "as_tensor_dtype_string",
    lambda L, e: L.as_tensor([1.0], dtype="x"),
    TypeError,
    "as_tensor(): argument 'dtype' must be torch.dtype, not str",
)
bad(
    "from_numpy_list",
    lambda L, e: L.from_numpy([1, 2]),
    TypeError,
    "expected np.ndarray (got list)",
)
bad(
    "zeros_like_list",
    lambda L, e: L.zeros_like([1, 2]),
    TypeError,
    "zeros_like(): argument 'input' (position 1) must be Tensor, not list",
)
bad(
    "zeros_like_dtype_string",
    lambda L, e: L.zeros_like(e.x, dtype="float32"),
    TypeError,
    "zeros_like(): argument 'dtype' must be torch.dtype, not str",
)
bad(
    "ones_like_device_cuda",
    lambda L, e: L.ones_like(e.x, device="cuda"),
    AssertionError,
    "Torch not compiled with CUDA enabled",
)
bad(
    "empty_like_device_mps",
    lambda L, e: L.empty_like(e.x, device="mps"),
    NotImplementedError,
    "Could not run 'aten::empty_strided' with arguments from the 'MPS' backend",
)
bad(
    "full_like_string_value",
    lambda L, e: L.full_like(e.x, "a"),
    TypeError,
    "full_like(): argument 'fill_value' (position 2) must be Number, not str",
)
bad(
    "full_like_nan_into_int",
    lambda L, e: L.full_like(e.i, NAN),
    RuntimeError,
    "value cannot be converted to type int64_t without overflow",
)
bad(
    "rand_like_integer",
    lambda L, e: L.rand_like(e.i),
    NotImplementedError,
    "\"check_uniform_bounds\" not implemented for 'Long'",
)
bad(
    "rand_like_dtype_string",
    lambda L, e: L.rand_like(e.x, dtype="x"),
    TypeError,
    "rand_like() received an invalid combination of arguments",
)
bad(
    "new_full_nan_into_int",
    lambda L, e: e.i.new_full((2,), NAN),
    RuntimeError,
    "value cannot be converted to type int64_t without overflow",
)
bad(
    "new_zeros_dtype_string",
    lambda L, e: e.x.new_zeros(2, dtype="x"),
    TypeError,
    "new_zeros(): argument 'dtype' must be torch.dtype, not str",
)
bad(
    "new_ones_dtype_numpy",
    lambda L, e: e.x.new_ones(2, dtype=np.float64),
    TypeError,
    "new_ones(): argument 'dtype' must be torch.dtype, not type",
)
bad(
    "new_ones_device_cuda",
    lambda L, e: e.x.new_ones(2, device="cuda"),
    AssertionError,
    "Torch not compiled with CUDA enabled",
)
bad(
    "set_default_dtype_integer",
    lambda L, e: L.set_default_dtype(L.int64),
    TypeError,
    "only floating-point types are supported as the default type",
)

# ---- devices and conversions -------------------------------------------------------------

bad("to_dtype_name_string", lambda L, e: e.x.to("float64"), RuntimeError, "Invalid device string")
bad(
    "to_numpy_type",
    lambda L, e: e.x.to(np.float64),
    TypeError,
    "to() received an invalid combination of arguments - got (type)",
)
bad(
    "to_dtype_keyword_string",
    lambda L, e: e.x.to(dtype="float32"),
    TypeError,
    "to() received an invalid combination of arguments - got (dtype=str, )",
)
bad("to_cuda", lambda L, e: e.w.to("cuda"), AssertionError, "Torch not compiled with CUDA enabled")
bad(
    "to_cuda_device_keyword",
    lambda L, e: e.x.to(device="cuda:1"),
    AssertionError,
    "Torch not compiled with CUDA enabled",
)
bad("to_xpu", lambda L, e: e.x.to("xpu"), AssertionError, "Torch not compiled with XPU enabled")
bad("to_mps", lambda L, e: e.x.to("mps"), RuntimeError, "is not linked with support for mps")
bad(
    "to_unknown_device",
    lambda L, e: e.x.to("xyz"),
    RuntimeError,
    "device type at start of device string: xyz",
)
bad(
    "to_device_index",
    lambda L, e: e.x.to(5),
    RuntimeError,
    "Cannot access accelerator device when none is available.",
)
bad("to_list", lambda L, e: e.x.to([1]), TypeError, "invalid combination of arguments - got (list)")
bad(
    "to_dtype_then_device",
    lambda L, e: e.x.to(L.float64, "cpu"),
    TypeError,
    "invalid combination of arguments - got (torch.dtype, str)",
)
bad(
    "to_tensor_and_dtype",
    lambda L, e: e.x.to(e.m, L.int32),
    TypeError,
    "invalid combination of arguments - got (Tensor, torch.dtype)",
)
bad(
    "to_too_many_positional",
    lambda L, e: e.x.to("cpu", L.float64, False, True, 5),
    TypeError,
    "to() takes from 0 to 4 positional arguments but 5 were given",
)
bad(
    "to_unknown_keyword",
    lambda L, e: e.x.to(foo=1),
    TypeError,
    "invalid combination of arguments - got (foo=int, )",
)
bad("cuda_method", lambda L, e: e.w.cuda(), AssertionError, "Torch not compiled with CUDA enabled")
bad("cuda_method_cpu", lambda L, e: e.x.cuda("cpu"), RuntimeError, "Invalid device, must be cuda")
bad("cuda_method_index", lambda L, e: e.x.cuda(0), RuntimeError, "Cannot access accelerator")
bad(
    "cuda_current_device",
    lambda L, e: L.cuda.current_device(),
    AssertionError,
    "Torch not compiled with CUDA enabled",
)
bad(
    "cuda_synchronize",
    lambda L, e: L.cuda.synchronize(),
    AssertionError,
    "Torch not compiled with CUDA enabled",
)
bad("device_bad_index_text", lambda L, e: L.device("cpu:x"), RuntimeError, "Invalid device string")
bad("device_of_int", lambda L, e: L.device(5), RuntimeError, "Cannot access accelerator device")
bad(
    "type_as_number",
    lambda L, e: e.x.type_as(3),
    TypeError,
    "type_as(): argument 'other' (position 1) must be Tensor, not int",
)
bad(
    "view_as_number",
    lambda L, e: e.x.view_as(3),
    TypeError,
    "view_as(): argument 'other' (position 1) must be Tensor, not int",
)
bad(
    "reshape_as_number",
    lambda L, e: e.x.reshape_as(3),
    TypeError,
    "reshape_as(): argument 'other' (position 1) must be Tensor, not int",
)

# ---- numbers that do not fit -------------------------------------------------------------

bad(
    "fill_nan_into_int64",
    lambda L, e: e.i.fill_(NAN),
    RuntimeError,
    "value cannot be converted to type int64_t without overflow",
)
bad(
    "fill_inf_into_int32",
    lambda L, e: e.i32.fill_(INF),
    RuntimeError,
    "value cannot be converted to type int without overflow",
)
bad(
    "fill_int32_overflow",
    lambda L, e: e.i32.fill_(2**31),
    RuntimeError,
    "value cannot be converted to type int without overflow",
)
bad(
    "fill_float32_overflow",
    lambda L, e: e.x.fill_(1e40),
    RuntimeError,
    "value cannot be converted to type float without overflow",
)
bad(
    "fill_complex_into_float",
    lambda L, e: e.x.fill_(1 + 2j),
    RuntimeError,
    "value cannot be converted to type float without overflow",
)
bad(
    "fill_numpy_nan_into_int",
    lambda L, e: e.i.fill_(np.float64(NAN)),
    RuntimeError,
    "value cannot be converted to type int64_t without overflow",
)
bad("fill_beyond_uint64", lambda L, e: e.x.fill_(2**64), OverflowError, "int too big to convert")
bad(
    "masked_fill_int_overflow",
    lambda L, e: e.i.masked_fill(e.b, 2**63),
    RuntimeError,
    "value cannot be converted to type int64_t without overflow",
)
bad(
    "masked_fill_inplace_nan_into_int",
    lambda L, e: e.i.masked_fill_(e.b, NAN),
    RuntimeError,
    "value cannot be converted to type int64_t without overflow",
)
bad(
    "masked_fill_0dim_tensor_value_overflow",
    lambda L, e: e.x.masked_fill(e.b, L.tensor(1e40, dtype=L.float64)),
    RuntimeError,
    "value cannot be converted to type float without overflow",
)
bad(
    "setitem_nan_into_int",
    lambda L, e: e.i.__setitem__(0, NAN),
    RuntimeError,
    "value cannot be converted to type int64_t without overflow",
)
bad(
    "setitem_int32_overflow_through_mask",
    lambda L, e: e.i32.__setitem__(e.b, 2**40),
    RuntimeError,
    "value cannot be converted to type int without overflow",
)
bad(
    "setitem_float32_overflow_through_list",
    lambda L, e: e.x.__setitem__([0], 1e40),
    RuntimeError,
    "value cannot be converted to type float without overflow",
)
bad(
    "setitem_int_beyond_int64",
    lambda L, e: e.x.__setitem__(0, 2**63),
    ValueError,
    "Overflow when unpacking long long",
)
bad(
    "clamp_int32_bound_overflow",
    lambda L, e: e.i32.clamp(min=2**31),
    RuntimeError,
    "value cannot be converted to type int without overflow",
)
bad(
    "clamp_int64_bound_beyond_int64",
    lambda L, e: e.i.clamp(max=2**63),
    RuntimeError,
    "value cannot be converted to type int64_t without overflow",
)
bad(
    "clamp_float32_bound_overflow",
    lambda L, e: e.x.clamp(min=1e40),
    RuntimeError,
    "value cannot be converted to type float without overflow",
)
bad(
    "clamp_bound_beyond_uint64",
    lambda L, e: e.i.clamp(min=2**64),
    OverflowError,
    "int too big to convert",
)
bad(
    "clamp_inplace_float_bound_on_int",
    lambda L, e: e.i.clamp_(min=1.5),
    RuntimeError,
    "result type Float can't be cast to the desired output type",
)
bad(
    "add_alpha_int32_overflow",
    lambda L, e: e.i32.add(e.i32, alpha=2**40),
    RuntimeError,
    "value cannot be converted to type int without overflow",
)
bad(
    "add_alpha_float32_overflow",
    lambda L, e: e.x.add(e.x, alpha=1e40),
    RuntimeError,
    "value cannot be converted to type float without overflow",
)

# ---- op arguments ---------------------------------------------------------------------------

bad(
    "add_alpha_string",
    lambda L, e: e.x.add_(1, alpha="a"),
    TypeError,
    "add_(): argument 'alpha' must be Number, not str",
)
bad(
    "add_alpha_none",
    lambda L, e: e.x.add(1, alpha=None),
    TypeError,
    "add(): argument 'alpha' must be Number, not NoneType",
)
bad(
    "add_float_alpha_on_int",
    lambda L, e: e.i.add(e.i, alpha=1.5),
    RuntimeError,
    "For integral input tensors, argument alpha must not be a floating point number.",
)
bad(
    "add_bool_alpha_on_float",
    lambda L, e: e.x.add(e.x, alpha=True),
    RuntimeError,
    "Boolean alpha only supported for Boolean results.",
)
bad(
    "add_string_other",
    lambda L, e: e.x.add("a"),
    TypeError,
    "add(): argument 'other' (position 1) must be Tensor, not str",
)
bad(
    "mul_list_other",
    lambda L, e: L.mul(e.x, [1]),
    TypeError,
    "mul(): argument 'other' (position 2) must be Tensor, not list",
)
bad(
    "operator_plus_none",
    lambda L, e: e.x + None,
    TypeError,
    "unsupported operand type(s) for +: 'Tensor' and 'NoneType'",
)
bad(
    "add_shape_mismatch",
    lambda L, e: e.x + L.ones(2),
    RuntimeError,
    "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0",
)
bad(
    "add_inplace_broadcast_grows_self",
    lambda L, e: e.x.add_(e.x2),
    RuntimeError,
    "output with shape [3] doesn't match the broadcast shape [2, 3]",
)
bad(
    "mul_inplace_float_into_int",
    lambda L, e: e.i.mul_(1.5),
    RuntimeError,
    "result type Float can't be cast to the desired output type Long",
)
bad(
    "div_inplace_into_int",
    lambda L, e: e.i.div_(2),
    RuntimeError,
    "result type Float can't be cast to the desired output type Long",
)
bad(
    "pow_inplace_float_exponent_into_int",
    lambda L, e: e.i.pow_(1.5),
    RuntimeError,
    "result type Float can't be cast to the desired output type Long",
)
bad(
    "pow_inplace_tensor_exponent_into_int",
    lambda L, e: e.i.pow_(e.x),
    RuntimeError,
    "result type Float can't be cast to the desired output type Long",
)
bad(
    "pow_inplace_tensor_exponent_into_bool",
    lambda L, e: e.b.pow_(e.i),
    RuntimeError,
    "result type Long can't be cast to the desired output type Bool",
)
bad(
    "pow_bool_bool",
    lambda L, e: e.b.pow(e.b),
    NotImplementedError,
    "\"pow\" not implemented for 'Bool'",
)
bad(
    "pow_integer_negative_exponent",
    lambda L, e: e.i.pow(-1),
    RuntimeError,
    "Integers to negative integer powers are not allowed.",
)
bad(
    "exp_inplace_on_int",
    lambda L, e: e.i.exp_(),
    RuntimeError,
    "result type Float can't be cast to the desired output type Long",
)
bad(
    "sub_bools",
    lambda L, e: e.b - e.b,
    RuntimeError,
    "Subtraction, the `-` operator, with two bool",
)
bad(
    "sub_bool_and_float",
    lambda L, e: e.x - e.b,
    RuntimeError,
    "with a bool tensor is not supported",
)
bad("neg_bool", lambda L, e: -e.b, RuntimeError, "Negation, the `-` operator, on a bool tensor")
bad(
    "abs_bool",
    lambda L, e: e.b.abs(),
    NotImplementedError,
    "\"abs_cpu\" not implemented for 'Bool'",
)
bad("relu_bool", lambda L, e: e.b.relu(), RuntimeError, "Boolean inputs not supported for relu")
bad(
    "clamp_without_bounds",
    lambda L, e: e.x.clamp(),
    RuntimeError,
    "At least one of 'min' or 'max' must not be None",
)
bad(
    "clamp_bool",
    lambda L, e: e.b.clamp(min=True),
    NotImplementedError,
    "\"clamp_min_scalar_cpu\" not implemented for 'Bool'",
)
bad(
    "mean_of_int",
    lambda L, e: e.i.mean(),
    RuntimeError,
    "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long",
)
bad(
    "sum_dtype_string",
    lambda L, e: e.x.sum(dtype="x"),
    TypeError,
    "sum() received an invalid combination of arguments - got (dtype=str, )",
)
bad(
    "sum_function_dtype_numpy",
    lambda L, e: L.sum(e.x, dtype=np.float64),
    TypeError,
    "sum() received an invalid combination of arguments - got (Tensor, dtype=type)",
)
bad(
    "sum_dim_out_of_range",
    lambda L, e: e.x.sum(dim=5),
    IndexError,
    "Dimension out of range (expected to be in range of [-1, 0], but got 5)",
)
bad("sum_repeated_dim", lambda L, e: e.x2.sum(dim=(0, 0)), RuntimeError, "appears multiple times")
bad(
    "view_wrong_size",
    lambda L, e: e.x.view(4),
    RuntimeError,
    "shape '[4]' is invalid for input of size 3",
)
bad(
    "view_two_inferred",
    lambda L, e: e.x2.view(-1, -1),
    RuntimeError,
    "only one dimension can be inferred",
)
bad(
    "view_of_transposed",
    lambda L, e: e.x2.t().view(6),
    RuntimeError,
    "view size is not compatible with input tensor's size and stride",
)
bad(
    "reshape_wrong_size",
    lambda L, e: e.x.reshape(2, 2),
    RuntimeError,
    "is invalid for input of size 3",
)
bad(
    "permute_repeated_dim",
    lambda L, e: e.x2.permute(0, 0),
    RuntimeError,
    "duplicate dims are not allowed",
)
bad(
    "permute_wrong_count",
    lambda L, e: e.x2.permute(0),
    RuntimeError,
    "number of dimensions in the tensor input does not match",
)
bad(
    "transpose_dim_out_of_range",
    lambda L, e: e.x.transpose(0, 5),
    IndexError,
    "Dimension out of range",
)
bad(
    "unsqueeze_dim_out_of_range",
    lambda L, e: e.x.unsqueeze(5),
    IndexError,
    "Dimension out of range",
)
bad("squeeze_dim_out_of_range", lambda L, e: e.x.squeeze(3), IndexError, "Dimension out of range")
bad(
    "t_of_3d",
    lambda L, e: L.ones(2, 2, 2).t(),
    RuntimeError,
    "t() expects a tensor with <= 2 dimensions, but self is 3D",
)
bad(
    "expand_fewer_sizes",
    lambda L, e: e.x2.expand(3),
    RuntimeError,
    "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)",
)
bad(
    "expand_mismatch",
    lambda L, e: e.x.expand(2, 4),
    RuntimeError,
    "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1",
)
bad(
    "select_out_of_range",
    lambda L, e: e.x.select(0, 5),
    IndexError,
    "select(): index 5 out of range for tensor of size [3] at dimension 0",
)
bad(
    "select_of_0dim",
    lambda L, e: e.s.select(0, 0),
    IndexError,
    "select() cannot be applied to a 0-dim tensor.",
)
bad(
    "narrow_beyond_end",
    lambda L, e: e.x.narrow(0, 2, 5),
    RuntimeError,
    "start (2) + length (5) exceeds dimension size (3).",
)
bad(
    "unbind_of_0dim",
    lambda L, e: e.s.unbind(),
    IndexError,
    "Dimension specified as 0 but tensor has no dimensions",
)
bad(
    "split_negative_size",
    lambda L, e: e.x.split(-1),
    RuntimeError,
    "split expects split_size be non-negative, but got split_size=-1",
)
bad(
    "split_sizes_not_summing",
    lambda L, e: e.x.split([1, 1]),
    RuntimeError,
    "split_with_sizes expects split_sizes to sum exactly to 3",
)
bad(
    "unfold_size_too_big",
    lambda L, e: e.x.unfold(0, 5, 1),
    RuntimeError,
    "maximum size for tensor at dimension 0 is 3 but size is 5",
)
bad(
    "diagonal_same_dims",
    lambda L, e: e.x2.diagonal(0, 0, 0),
    RuntimeError,
    "diagonal dimensions cannot be identical 0, 0",
)
bad(
    "mm_shape_mismatch",
    lambda L, e: e.x2.mm(e.x2),
    RuntimeError,
    "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)",
)
bad("mm_of_vector", lambda L, e: e.x.mm(e.x2), RuntimeError, "self must be a matrix")
bad(
    "mm_dtype_mismatch",
    lambda L, e: e.m.mm(e.x2.t()),
    RuntimeError,
    "expected m1 and m2 to have the same dtype, but got: double != float",
)
bad(
    "dot_dtype_mismatch",
    lambda L, e: e.x.dot(e.i),
    RuntimeError,
    "dot : expected both vectors to have same dtype, but found Float and Long",
)
bad(
    "dot_of_matrix",
    lambda L, e: e.x2.dot(e.x),
    RuntimeError,
    "1D tensors expected, but got 2D and 1D tensors",
)
bad("matmul_mismatch", lambda L, e: e.x @ L.ones(2), RuntimeError, "inconsistent tensor size")
bad("bmm_of_2d", lambda L, e: e.x2.bmm(e.x2), RuntimeError, "batch1 must be a 3D tensor")
bad(
    "cat_of_nothing",
    lambda L, e: L.cat([]),
    ValueError,
    "torch.cat(): expected a non-empty list of Tensors",
)
bad(
    "cat_dim_mismatch",
    lambda L, e: L.cat([e.x, e.x2]),
    RuntimeError,
    "Tensors must have same number of dimensions: got 1 and 2",
)
bad(
    "cat_of_0dim",
    lambda L, e: L.cat([e.s, e.s]),
    RuntimeError,
    "zero-dimensional tensor (at position 0) cannot be concatenated",
)
bad(
    "stack_size_mismatch",
    lambda L, e: L.stack([e.x, L.ones(2)]),
    RuntimeError,
    "stack expects each tensor to be equal size",
)
bad(
    "cat_with_number",
    lambda L, e: L.cat([e.x, 1]),
    TypeError,
    "expected Tensor as element 1 in argument 0, but got int",
)
bad(
    "where_non_bool_condition",
    lambda L, e: L.where(e.i, e.x, e.x),
    RuntimeError,
    "where expected condition to be a boolean tensor, but got a tensor with dtype Long",
)
bad(
    "where_float_condition_with_numbers",
    lambda L, e: L.where(e.x, 1.0, 0.0),
    RuntimeError,
    "where expected condition to be a boolean tensor, but got a tensor with dtype Float",
)
bad(
    "where_shapes_mismatch",
    lambda L, e: L.where(e.b, e.x, L.ones(2)),
    RuntimeError,
    "must match the size of tensor",
)
bad(
    "masked_fill_non_bool_mask",
    lambda L, e: e.x.masked_fill(e.i, 1.0),
    RuntimeError,
    "masked_fill_ only supports boolean masks, but got mask with dtype long int",
)
bad(
    "masked_fill_float_mask",
    lambda L, e: e.x.masked_fill(e.x, 1.0),
    RuntimeError,
    "masked_fill_ only supports boolean masks, but got mask with dtype float",
)
bad(
    "masked_fill_inplace_mask_mismatch",
    lambda L, e: e.x.masked_fill_(L.tensor([True, False]), 1.0),
    RuntimeError,
    "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0",
)
bad(
    "masked_fill_value_tensor_not_0dim",
    lambda L, e: e.x.masked_fill(e.b, e.x),
    RuntimeError,
    "only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).",
)
bad(
    "fill_with_1d_tensor",
    lambda L, e: e.x.fill_(e.x),
    RuntimeError,
    "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.",
)
bad(
    "index_put_dtype_mismatch",
    lambda L, e: e.x.index_put_((L.tensor([0]),), L.tensor([1.0], dtype=L.float64)),
    RuntimeError,
    "Index put requires the source and destination dtypes match, got Float for the destination and Double for the source.",
)
bad(
    "index_put_values_mismatch",
    lambda L, e: e.x.index_put_((L.tensor([0, 1]),), L.ones(3)),
    RuntimeError,
    "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2]",
)
bad(
    "copy_from_overlapping_self",
    lambda L, e: e.x[1:].copy_(e.x[:-1]),
    RuntimeError,
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location.",
)
bad(
    "copy_shape_mismatch",
    lambda L, e: e.x.copy_(L.ones(2)),
    RuntimeError,
    "The size of tensor a (3) must match the size of tensor b (2)",
)
bad(
    "write_into_expanded",
    lambda L, e: e.x.expand(2, 3).add_(1),
    RuntimeError,
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location.",
)
bad(
    "out_with_requires_grad",
    lambda L, e: L.add(e.w, e.w, out=L.zeros(3)),
    RuntimeError,
    "add(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.",
)
bad(
    "item_of_many",
    lambda L, e: e.x.item(),
    RuntimeError,
    "a Tensor with 3 elements cannot be converted to Scalar",
)
bad(
    "bool_of_many",
    lambda L, e: bool(e.x),
    RuntimeError,
    "Boolean value of Tensor with more than one value is ambiguous",
)
bad("len_of_0dim", lambda L, e: len(e.s), TypeError, "len() of a 0-d tensor")
bad("iter_of_0dim", lambda L, e: iter(e.s), TypeError, "iteration over a 0-d tensor")
bad(
    "index_of_float",
    lambda L, e: [1, 2][e.s],
    TypeError,
    "only integer tensors of a single element can be converted to an index",
)
bad(
    "numpy_of_requires_grad",
    lambda L, e: e.w.numpy(),
    RuntimeError,
    "Can't call numpy() on Tensor that requires grad.",
)
bad("size_dim_out_of_range", lambda L, e: e.x.size(5), IndexError, "Dimension out of range")
bad(
    "requires_grad_on_int",
    lambda L, e: e.i.requires_grad_(),
    RuntimeError,
    "only Tensors of floating point dtype can require gradients",
)
bad(
    "requires_grad_false_on_non_leaf",
    lambda L, e: setattr(e.y, "requires_grad", False),
    RuntimeError,
    "you can only change requires_grad flags of leaf variables.",
)
bad(
    "grad_assign_wrong_shape",
    lambda L, e: setattr(e.w, "grad", L.ones(2)),
    RuntimeError,
    "attempting to assign a gradient of size '[2]' to a tensor of size '[3]'",
)
bad(
    "grad_assign_wrong_dtype",
    lambda L, e: setattr(e.w, "grad", L.ones(3, dtype=L.float64)),
    RuntimeError,
    "attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'",
)
bad(
    "grad_assign_number",
    lambda L, e: setattr(e.w, "grad", 3),
    TypeError,
    "assigned grad expected to be a Tensor or None but got grad of type int",
)
bad(
    "data_assign_int_to_requires_grad",
    lambda L, e: setattr(e.w, "data", e.i),
    RuntimeError,
    "data set to a tensor that requires gradients must be floating point or complex dtype",
)

# ---- in-place on leaves and views ------------------------------------------------------------

_LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
bad("leaf_add_", lambda L, e: e.w.add_(1), RuntimeError, _LEAF_INPLACE)
bad("leaf_mul_", lambda L, e: e.m.mul_(2), RuntimeError, _LEAF_INPLACE)
bad("leaf_zero_", lambda L, e: e.w.zero_(), RuntimeError, _LEAF_INPLACE)
bad("leaf_fill_", lambda L, e: e.w.fill_(1.0), RuntimeError, _LEAF_INPLACE)
bad("leaf_setitem", lambda L, e: e.w.__setitem__(0, 5.0), RuntimeError, _LEAF_INPLACE)
bad("leaf_copy_", lambda L, e: e.w.copy_(e.x), RuntimeError, _LEAF_INPLACE)
bad("leaf_operator_iadd", lambda L, e: e.w.__iadd__(1), RuntimeError, _LEAF_INPLACE)
bad(
    "leaf_view_mul_",
    lambda L, e: e.w[0:2].mul_(2),
    RuntimeError,
    "a view of a leaf Variable that requires grad is being used in an in-place operation.",
)
bad(
    "view_made_in_no_grad_modified",
    lambda L, e: e.v.mul_(2),
    RuntimeError,
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled.",
    prepare=lambda L, e: setattr(e, "v", _no_grad_view(L, e.y)),
)
bad(
    "multi_output_view_modified",
    lambda L, e: e.parts[0].mul_(2),
    RuntimeError,
    "is a view and is being modified inplace. This view is the output of a function that returns multiple views.",
    prepare=lambda L, e: setattr(e, "parts", e.y.unbind()),
)
bad(
    "detach_view_inplace",
    lambda L, e: e.y[0:2].detach_(),
    RuntimeError,
    "Can't detach views in-place. Use detach() instead.",
)
bad(
    "inference_tensor_inplace_outside",
    lambda L, e: e.inf.add_(1),
    RuntimeError,
    "Inplace update to inference tensor outside InferenceMode is not allowed.",
    prepare=lambda L, e: setattr(e, "inf", _inference_tensor(L)),
    torch_changes_state=True,  # torch writes the values before it refuses
)
bad(
    "inference_tensor_requires_grad",
    lambda L, e: e.inf.requires_grad_(),
    RuntimeError,
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
    prepare=lambda L, e: setattr(e, "inf", _inference_tensor(L)),
)


def _no_grad_view(L, t):
    with L.no_grad():
        return t[0:2]


def _inference_tensor(L):
    with L.inference_mode():
        return L.ones(3)


# ---- backward misuse ----------------------------------------------------------------------


def _loss(L, e):
    e.z = (e.w * e.w).sum()


def _backward_once(L, e):
    _loss(L, e)
    e.z.backward()


def _stale(L, e):
    e.a = e.w * 1
    e.c = e.a.sin()
    e.a.mul_(2)


bad(
    "backward_non_scalar",
    lambda L, e: e.y.backward(),
    RuntimeError,
    "grad can be implicitly created only for scalar outputs",
)
bad(
    "backward_without_grad",
    lambda L, e: e.x.sum().backward(),
    RuntimeError,
    "element 0 of tensors does not require grad and does not have a grad_fn",
)
bad(
    "backward_twice",
    lambda L, e: e.z.backward(),
    RuntimeError,
    "Trying to backward through the graph a second time",
    prepare=_backward_once,
)
bad(
    "backward_gradient_wrong_shape",
    lambda L, e: e.y.backward(L.ones(2)),
    RuntimeError,
    "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of torch.Size([3]).",
)
bad(
    "backward_gradient_string",
    lambda L, e: e.y.backward("a"),
    TypeError,
    "gradients can be either Tensors or None, but got str",
)
bad(
    "backward_inputs_number",
    lambda L, e: e.z.backward(inputs=[3.0]),
    RuntimeError,
    "all inputs have to be Tensors or GradientEdges, but got float",
    prepare=_loss,
)
bad(
    "backward_inputs_empty",
    lambda L, e: e.z.backward(inputs=[]),
    RuntimeError,
    "`inputs` argument to `backward()` cannot be empty.",
    prepare=_loss,
)
bad(
    "backward_stale_saved_tensor",
    lambda L, e: e.c.sum().backward(),
    RuntimeError,
    "one of the variables needed for gradient computation has been modified by an inplace operation",
    prepare=_stale,
)
bad(
    "autograd_backward_count_mismatch",
    lambda L, e: L.autograd.backward([e.z, e.w.sum()], [L.ones(())]),
    RuntimeError,
    "got 2 tensors and 1 gradients",
    prepare=_loss,
)
bad(
    "grad_of_input_without_grad",
    lambda L, e: L.autograd.grad(e.z, e.x),
    RuntimeError,
    "One of the differentiated Tensors does not require grad",
    prepare=_loss,
)
bad(
    "grad_of_unused_input",
    lambda L, e: L.autograd.grad(e.z, [e.w, e.m]),
    RuntimeError,
    "The differentiated Tensor at index 1 appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.",
    prepare=_loss,
)
bad(
    "grad_inputs_empty",
    lambda L, e: L.autograd.grad(e.z, []),
    RuntimeError,
    "`inputs` argument to `grad()` cannot be empty.",
    prepare=_loss,
)
bad(
    "grad_non_scalar_output",
    lambda L, e: L.autograd.grad(e.y, e.w),
    RuntimeError,
    "grad can be implicitly created only for scalar outputs",
)
bad(
    "grad_twice",
    lambda L, e: L.autograd.grad(e.z, e.w),
    RuntimeError,
    "Trying to backward through the graph a second time",
    prepare=lambda L, e: (_loss(L, e), L.autograd.grad(e.z, e.w)),
)
bad(
    "retain_grad_without_grad",
    lambda L, e: e.x.retain_grad(),
    RuntimeError,
    "can't retain_grad on Tensor that has requires_grad=False",
)
bad(
    "register_hook_without_grad",
    lambda L, e: e.x.register_hook(lambda g: g),
    RuntimeError,
    "cannot register a hook on a tensor that doesn't require gradient",
)


def _hooked(result):
    def prepare(L, e):
        e.h = e.w * 1
        e.h.register_hook(lambda g: result(L))
        e.z = e.h.sum()

    return prepare


bad(
    "hook_returns_wrong_shape",
    lambda L, e: e.z.backward(),
    RuntimeError,
    "hook '<lambda>' has changed the size of value",
    prepare=_hooked(lambda L: L.ones(2)),
)
bad(
    "hook_returns_wrong_dtype",
    lambda L, e: e.z.backward(),
    RuntimeError,
    "hook '<lambda>' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)",
    prepare=_hooked(lambda L: L.ones(3, dtype=L.float64)),
)


def _named_hook(result):
    def prepare(L, e):
        def hook(grad):
            return result(L)

        e.h = e.w * 1
        e.h.register_hook(hook)
        e.z = e.h.sum()

    return prepare


bad(
    "named_hook_returns_wrong_shape",
    lambda L, e: e.z.backward(),
    RuntimeError,
    "hook 'hook' has changed the size of value",
    prepare=_named_hook(lambda L: L.ones(2)),
)
bad(
    "named_hook_returns_number",
    lambda L, e: e.z.backward(),
    TypeError,
    "expected Variable, but hook returned 'int'",
    prepare=_named_hook(lambda L: 3),
)


def _node_hook(result):
    def prepare(L, e):
        e.h = e.w * 1
        e.h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: result(L))
        e.z = e.h.sum()

    return prepare


bad(
    "node_hook_fills_a_none_gradient",
    lambda L, e: e.z.backward(),
    RuntimeError,
    "can't replace a None gradient with a non-None value",
    prepare=_node_hook(lambda L: (L.ones(3), L.ones(3))),
)


def _function(L, backward_result, save=None):
    class Scale(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            if save is not None:
                ctx.save_for_backward(save)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return backward_result(L, grad)

    return Scale


bad(
    "function_backward_too_many_grads",
    lambda L, e: _function(L, lambda L, g: (g, g)).apply(e.w).sum().backward(),
    RuntimeError,
    "function ScaleBackward returned an incorrect number of gradients (expected 1, got 2)",
)
bad(
    "function_backward_wrong_shape",
    lambda L, e: _function(L, lambda L, g: L.ones(2)).apply(e.w).sum().backward(),
    RuntimeError,
    "Function ScaleBackward returned an invalid gradient at index 0 - got [2] but expected shape compatible with [3]",
)
bad(
    "function_save_number",
    lambda L, e: _function(L, lambda L, g: g, save=3).apply(e.w),
    TypeError,
    "save_for_backward can only save variables, but argument 0 is of type int",
)
bad(
    "forward_ad_make_dual_outside_level",
    lambda L, e: L.autograd.forward_ad.make_dual(e.x, e.x),
    RuntimeError,
    "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first.",
)
bad(
    "forward_ad_tangent_wrong_shape",
    lambda L, e: _dual_wrong_shape(L, e),
    RuntimeError,
    "Trying to set a forward gradient that has a different size than that of the original Tensor, this is not supported. Tensor is of size [3] while the given forward gradient is of size [2].",
)


def _dual_wrong_shape(L, e):
    with L.autograd.forward_ad.dual_level():
        L.autograd.forward_ad.make_dual(e.x, L.ones(2))


# ---- indexing -------------------------------------------------------------------------------

bad(
    "index_out_of_range",
    lambda L, e: e.x[3],
    IndexError,
    "index 3 is out of bounds for dimension 0 with size 3",
)
bad(
    "index_negative_out_of_range",
    lambda L, e: e.x[-4],
    IndexError,
    "index -4 is out of bounds for dimension 0 with size 3",
)
bad(
    "index_too_many",
    lambda L, e: e.x[0, 0],
    IndexError,
    "too many indices for tensor of dimension 1",
)
bad(
    "index_second_dim_out_of_range",
    lambda L, e: e.x2[0, 5],
    IndexError,
    "index 5 is out of bounds for dimension 1 with size 3",
)
bad("index_string", lambda L, e: e.x["a"], TypeError, "new(): invalid data type 'str'")
bad(
    "index_list_with_string",
    lambda L, e: e.x[[0, "a"]],
    IndexError,
    "too many indices for tensor of dimension 1",
)
bad(
    "index_tuple_with_string",
    lambda L, e: e.x2[0, "a"],
    TypeError,
    "new(): invalid data type 'str'",
)
bad(
    "index_float",
    lambda L, e: e.x[1.5],
    IndexError,
    "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got float)",
)
bad("index_dict", lambda L, e: e.x[{}], IndexError, "valid indices (got dict)")
bad(
    "index_float_tensor",
    lambda L, e: e.x[L.tensor([0.0])],
    IndexError,
    "tensors used as indices must be long, int, byte or bool tensors",
)
bad(
    "index_tensor_out_of_range",
    lambda L, e: e.x[L.tensor([3])],
    IndexError,
    "index 3 is out of bounds for dimension 0 with size 3",
)
bad(
    "index_list_out_of_range",
    lambda L, e: e.x[[5]],
    IndexError,
    "index 5 is out of bounds for dimension 0 with size 3",
)
bad(
    "index_mask_wrong_shape",
    lambda L, e: e.x[L.tensor([True, False])],
    IndexError,
    "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3] at index 0",
)
bad("index_zero_step", lambda L, e: e.x[::0], ValueError, "slice step cannot be zero")
bad("index_negative_step", lambda L, e: e.x[::-1], ValueError, "step must be greater than zero")
bad("index_0dim_with_int", lambda L, e: e.s[0], IndexError, "invalid index of a 0-dim tensor.")
bad(
    "index_0dim_with_slice",
    lambda L, e: e.s[:],
    IndexError,
    "slice() cannot be applied to a 0-dim tensor.",
)
bad(
    "setitem_string_index",
    lambda L, e: e.x.__setitem__("a", 1.0),
    TypeError,
    "new(): invalid data type 'str'",
)
bad(
    "setitem_string_value",
    lambda L, e: e.x.__setitem__(0, "a"),
    TypeError,
    "can't assign a str to a torch.FloatTensor",
)
bad(
    "setitem_list_value",
    lambda L, e: e.x.__setitem__(0, [1.0, 2.0]),
    TypeError,
    "can't assign a list to a torch.FloatTensor",
)
bad(
    "setitem_value_too_wide",
    lambda L, e: e.x2.__setitem__(0, L.ones(2, 3)),
    RuntimeError,
    "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)",
)
bad(
    "setitem_value_wrong_length",
    lambda L, e: e.x2.__setitem__(0, L.ones(2)),
    RuntimeError,
    "The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 0",
)
bad(
    "setitem_list_values_mismatch",
    lambda L, e: e.x.__setitem__([0, 1], L.ones(3)),
    RuntimeError,
    "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2]",
)
bad(
    "setitem_mask_wrong_shape",
    lambda L, e: e.x.__setitem__(L.tensor([True, False]), 1.0),
    IndexError,
    "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3] at index 0",
)
bad(
    "setitem_zero_step",
    lambda L, e: e.x.__setitem__(slice(None, None, 0), 1.0),
    ValueError,
    "slice step cannot be zero",
)
bad(
    "setitem_index_out_of_range",
    lambda L, e: e.x.__setitem__(3, 1.0),
    IndexError,
    "index 3 is out of bounds for dimension 0 with size 3",
)
bad(
    "setitem_value_dtype_for_index_put",
    lambda L, e: e.x.__setitem__([0], L.tensor([1.0], dtype=L.float64)),
    RuntimeError,
    "Index put requires the source and destination dtypes match",
)

# ---- custom ops and the dispatcher -----------------------------------------------------------


def _custom_op(L, body, returns=None):
    returns = returns or L.Tensor
    name = unique("op")

    def fn(x: L.Tensor) -> returns:  # type: ignore[valid-type]
        return body(x)

    fn.__annotations__ = {"x": L.Tensor, "return": returns}
    return L.library.custom_op(name, fn, mutates_args=())


_ALIAS = "The output of this custom operator (1) must not also be an input to this custom operator and (2) may not alias any inputs to this custom operator or other returns."
bad("custom_op_returns_input", lambda L, e: _custom_op(L, lambda x: x)(e.x), RuntimeError, _ALIAS)
bad(
    "custom_op_returns_input_that_requires_grad",
    lambda L, e: _custom_op(L, lambda x: x)(e.w),
    RuntimeError,
    _ALIAS,
)
bad(
    "custom_op_returns_view",
    lambda L, e: _custom_op(L, lambda x: x.view(-1))(e.x2),
    RuntimeError,
    _ALIAS,
)
bad(
    "custom_op_returns_one_tensor_twice",
    lambda L, e: _custom_op(
        L, lambda x: (lambda y: (y, y))(x.clone()), typing.Tuple[L.Tensor, L.Tensor]
    )(e.x),
    RuntimeError,
    _ALIAS,
)
bad(
    "aten_overload_string_argument",
    lambda L, e: L.ops.aten.add.Tensor(e.x, "a"),
    RuntimeError,
    "aten::add() Expected a value of type 'Tensor' for argument 'other' but instead found type 'str'.",
)
bad(
    "aten_overload_dtype_string",
    lambda L, e: L.ops.aten.zeros.default([2], dtype="x"),
    RuntimeError,
    "aten::zeros() Expected a value of type 'Optional[int]' for argument 'dtype' but instead found type 'str'.",
)
bad(
    "aten_overload_device_list",
    lambda L, e: L.ops.aten.zeros.default([2], device=[1]),
    RuntimeError,
    "aten::zeros() Expected a value of type 'Optional[Device]' for argument 'device' but instead found type 'list'.",
)
bad(
    "aten_overload_device_cuda",
    lambda L, e: L.ops.aten.zeros.default([2], device="cuda"),
    NotImplementedError,
    "Could not run 'aten::empty.memory_format' with arguments from the 'CUDA' backend",
)
bad(
    "aten_overload_where_non_bool",
    lambda L, e: L.ops.aten.where.self(e.i, e.x, e.x),
    RuntimeError,
    "where expected condition to be a boolean tensor",
)

bad(
    "library_unknown_kind",
    lambda L, e: L.library.Library("bad_inputs_kind", "XYZ"),
    ValueError,
    "Unsupported kind: XYZ",
)
bad(
    "library_define_bad_schema",
    lambda L, e: L.library.Library(unique("lib").split("::")[0], "FRAGMENT").define(
        "f(Tensor x -> Tensor"
    ),
    RuntimeError,
    "expected ) but found 'arrow' here",
    xfail="the type is torch's (RuntimeError), but opgrad's schema parser, shared with "
    "codegen, words the fault its own way ('expected name(args) -> returns')",
)
bad(
    "ops_unknown_overload",
    lambda L, e: L.ops.aten.add.NotAnOverload,
    AttributeError,
    "The underlying op of 'aten.add' has no overload name 'NotAnOverload'",
)
bad(
    "custom_op_without_annotations",
    lambda L, e: L.library.custom_op(unique("f"), lambda x: x, mutates_args=()),
    ValueError,
    "infer_schema(func): Parameter x must have a type annotation.",
)
bad(
    "generator_on_cuda",
    lambda L, e: L.Generator("cuda"),
    RuntimeError,
    "Cannot get CUDA generator without ATen_cuda library.",
)
bad(
    "manual_seed_string",
    lambda L, e: L.manual_seed("a"),
    ValueError,
    "invalid literal for int() with base 10: 'a'",
)
bad(
    "set_grad_enabled_string",
    lambda L, e: L.set_grad_enabled("a"),
    TypeError,
    "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not str",
)

# ---- more shapes, dims and views ------------------------------------------------------------

bad(
    "narrow_negative_length",
    lambda L, e: e.x.narrow(0, 0, -1),
    RuntimeError,
    "narrow(): length must be non-negative.",
)
bad(
    "narrow_start_out_of_range",
    lambda L, e: e.x.narrow(0, 5, 1),
    IndexError,
    "start out of range (expected to be in range of [-3, 3], but got 5)",
)
bad(
    "split_negative_sizes",
    lambda L, e: e.x.split([4, -1]),
    RuntimeError,
    "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[4, -1]",
)
bad(
    "split_string",
    lambda L, e: e.x.split("a"),
    TypeError,
    "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not str",
)
bad(
    "reshape_string",
    lambda L, e: e.x.reshape("a"),
    TypeError,
    "reshape(): argument 'shape' (position 1) must be tuple of ints, not str",
)
bad(
    "reshape_list_with_string",
    lambda L, e: e.x.reshape([3, "a"]),
    TypeError,
    "reshape(): argument 'shape' failed to unpack the object at pos 2 with error \"type must be tuple of ints,but got str\"",
)
bad(
    "permute_string",
    lambda L, e: e.x.permute("a"),
    TypeError,
    "permute(): argument 'dims' (position 1) must be tuple of ints, not str",
)
bad(
    "sum_dim_string",
    lambda L, e: e.x.sum("a"),
    TypeError,
    "sum() received an invalid combination of arguments - got (str)",
)
bad(
    "fill_none",
    lambda L, e: e.x.fill_(None),
    TypeError,
    "fill_() received an invalid combination of arguments - got (NoneType)",
)
bad(
    "where_bool_condition",
    lambda L, e: L.where(True, e.x, e.x),
    TypeError,
    "where() received an invalid combination of arguments - got (bool, Tensor, Tensor)",
)
bad(
    "flatten_dims_reversed",
    lambda L, e: e.x2.flatten(1, 0),
    RuntimeError,
    "flatten() has invalid args: start_dim cannot come after end_dim",
)
bad(
    "chunk_zero",
    lambda L, e: e.x.chunk(0),
    RuntimeError,
    "chunk expects `chunks` to be greater than 0, got: 0",
)
bad(
    "expand_negative_leading",
    lambda L, e: e.x.expand(-1, 3),
    RuntimeError,
    "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0",
)
bad(
    "view_negative_size",
    lambda L, e: L.ones(6).view(-2, 3),
    RuntimeError,
    "invalid shape dimension -2",
)
bad(
    "as_strided_out_of_bounds",
    lambda L, e: e.x.as_strided((4,), (1,)),
    RuntimeError,
    "setStorage: sizes [4], strides [1], storage offset 0, and itemsize 4 requiring a storage size of 16 are out of bounds for storage of size 12",
)
bad(
    "as_strided_negative_stride",
    lambda L, e: e.x.as_strided((2,), (-1,)),
    RuntimeError,
    "as_strided: Negative strides are not supported at the moment, got strides: [-1]",
)
bad(
    "stack_of_nothing",
    lambda L, e: L.stack([]),
    RuntimeError,
    "stack expects a non-empty TensorList",
)
bad(
    "cat_dim_out_of_range",
    lambda L, e: L.cat([e.x, e.x], dim=3),
    IndexError,
    "Dimension out of range (expected to be in range of [-1, 0], but got 3)",
)
bad(
    "cat_sizes_mismatch",
    lambda L, e: L.cat([e.x2, L.ones(2, 4)], dim=0),
    RuntimeError,
    "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1 in the list.",
)
bad("unbind_dim_out_of_range", lambda L, e: e.x.unbind(3), IndexError, "Dimension out of range")
bad("mean_dim_out_of_range", lambda L, e: e.x.mean(3), IndexError, "Dimension out of range")
bad(
    "mv_size_mismatch",
    lambda L, e: e.x2.mv(L.ones(2)),
    RuntimeError,
    "size mismatch, got input (2), mat (2x3), vec (2)",
)
bad(
    "bmm_size_mismatch",
    lambda L, e: L.ones(2, 2, 3).bmm(L.ones(2, 2, 3)),
    RuntimeError,
    "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 2].",
)
bad(
    "sigmoid_inplace_on_int",
    lambda L, e: e.i.sigmoid_(),
    RuntimeError,
    "result type Float can't be cast to the desired output type Long",
)
bad(
    "sqrt_inplace_on_int",
    lambda L, e: e.i.sqrt_(),
    RuntimeError,
    "result type Float can't be cast to the desired output type Long",
)
bad(
    "reciprocal_inplace_on_bool",
    lambda L, e: e.b.reciprocal_(),
    RuntimeError,
    "result type Float can't be cast to the desired output type Bool",
)
bad(
    "clamp_inplace_tensor_bound_grows_self",
    lambda L, e: e.x.clamp_(min=e.x2),
    RuntimeError,
    "output with shape [3] doesn't match the broadcast shape [2, 3]",
)
bad(
    "leaf_view_zero_",
    lambda L, e: e.w[0:1].zero_(),
    RuntimeError,
    "a view of a leaf Variable that requires grad is being used in an in-place operation.",
)
bad("leaf_squeeze_", lambda L, e: e.w.squeeze_(), RuntimeError, _LEAF_INPLACE)
bad("leaf_unsqueeze_", lambda L, e: e.w.unsqueeze_(0), RuntimeError, _LEAF_INPLACE)
bad("leaf_t_", lambda L, e: e.w.t_(), RuntimeError, _LEAF_INPLACE)

# ---- more autograd: functions, hooks, functional API ---------------------------------------


def _dirty_not_returned(L, e):
    class Dirty(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

    Dirty.apply(e.y.clone())


def _no_backward(L, e):
    class Forward(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    Forward.apply(e.w).sum().backward()


def _unpack_hook(result):
    def call(L, e):
        with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda packed: result(L)):
            out = e.w.sin()
        out.sum().backward()

    return call


def _anomaly_nan(L, e):
    with L.autograd.detect_anomaly():
        (e.w * 0).div(e.w * 0).sum().backward()


bad(
    "function_mark_dirty_not_returned",
    _dirty_not_returned,
    RuntimeError,
    "Some elements marked as dirty during the forward method were not returned as output.",
)
bad(
    "function_without_backward",
    _no_backward,
    NotImplementedError,
    "You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.",
)
bad(
    "saved_hook_unpacks_a_number",
    _unpack_hook(lambda L: 3),
    TypeError,
    "Output of saved tensor unpack_hook expected to be a Tensor but got result of type int",
)
bad(
    "anomaly_mode_finds_nan",
    _anomaly_nan,
    RuntimeError,
    "Function 'DivBackward0' returned nan values in its 1th output.",
)
bad(
    "vjp_vector_wrong_shape",
    lambda L, e: L.autograd.functional.vjp(lambda t: t * 2, e.x, L.ones(2)),
    RuntimeError,
    "v has invalid size: should be torch.Size([3]) but got torch.Size([2]).",
)
bad(
    "vjp_non_scalar_without_vector",
    lambda L, e: L.autograd.functional.vjp(lambda t: t * 2, e.x),
    RuntimeError,
    "The vector v can only be None if the user-provided function returns a single Tensor with a single element.",
)
bad(
    "jacobian_of_a_number",
    lambda L, e: L.autograd.functional.jacobian(lambda t: 3, e.x),
    TypeError,
    "The outputs of the user-provided function given to jacobian must be either a Tensor or a tuple of Tensors but the given outputs of the user-provided function has type <class 'int'>.",
)
bad(
    "hessian_of_non_scalar",
    lambda L, e: L.autograd.functional.hessian(lambda t: t * 2, e.x),
    RuntimeError,
    "The Tensor returned by the function given to hessian should contain a single element",
)
bad(
    "gradcheck_wrong_gradient",
    lambda L, e: L.autograd.gradcheck(
        lambda t: t.detach() * 2 + t * 0,
        (L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True),),
    ),
    GradcheckError,
    "Jacobian mismatch for output 0 with respect to input 0",
)
bad(
    "gradcheck_without_requires_grad",
    lambda L, e: L.autograd.gradcheck(lambda t: t * 2, (L.tensor([1.0, 2.0], dtype=L.float64),)),
    ValueError,
    "gradcheck expects at least one input tensor to require gradient, but none of them have requires_grad=True.",
)
bad(
    "make_dual_of_int",
    lambda L, e: _dual_of(L, e.i),
    ValueError,
    "Expected primal to be floating point or complex, but got: torch.int64",
)


def _dual_of(L, t):
    with L.autograd.forward_ad.dual_level():
        L.autograd.forward_ad.make_dual(t, t)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("row", ROWS)
def test_bad_call_is_refused_as_torch_refuses_it(torch, row):
    gradients = {}
    for lib in (torch, og):
        e = make_env(lib)
        if row.prepare is not None:
            row.prepare(lib, e)
        before = snapshot(e)
        with pytest.raises(Exception) as info:
            row.call(lib, e)
        error = info.value
        assert type(error).__name__ == row.exc.__name__, f"{lib.__name__}: {error!r}"
        phrase = row.phrase if lib is torch else opgrad_text(row.phrase)
        assert phrase in str(error), f"{lib.__name__}: {error}"
        if lib is og or not row.torch_changes_state:
            assert_unchanged(before, snapshot(e), lib)
        gradients[lib.__name__] = follow_up(lib, e)
    assert gradients["opgrad"] == gradients["torch"]


def test_the_battery_is_large_enough():
    assert len(ROWS) >= 150
