"""Backward formulas issue the same aten calls as PyTorch's.

A logging dispatch mode records each call's op, its positional arguments
(tensors as shape + strides, other values as type name + value) and its dtype
keyword during forward and backward; the logs of opgrad and torch must match.
Lists and tuples are both shown as sequences, and only the ``dtype`` keyword is
compared: opgrad has no layout / device / memory_format objects to pass.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest

import opgrad as og
from torch_oracle import dispatch_module, dtype_name


def _show(lib, value):
    if isinstance(value, lib.Tensor):
        return ("T", tuple(value.shape), tuple(value.stride()), dtype_name(value.dtype))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_show(lib, v) for v in value))
    if type(value).__name__ == "dtype":
        return ("dtype", dtype_name(value))
    return (type(value).__name__, value)


def call_log(lib, fn):
    """Every (op, args, dtype kwarg) a dispatch mode sees during ``fn``'s forward+backward."""
    calls = []

    class Recorder(dispatch_module(lib).TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            dtype = _show(lib, kwargs["dtype"]) if "dtype" in kwargs else None
            calls.append((str(func), tuple(_show(lib, a) for a in args), dtype))
            return func(*args, **kwargs)

    fn(lib, Recorder())  # the leaves are made outside the mode
    return calls


def leaf(lib, values):
    return lib.tensor(np.asarray(values, dtype=np.float32), requires_grad=True)


def rand(key, *shape):
    rng = np.random.default_rng(key)
    return rng.standard_normal(shape).round(1)


def _linear(lib, watch=nullcontext()):
    x, w = leaf(lib, rand(0, 3, 4)), leaf(lib, rand(1, 5, 4))
    with watch:
        (x @ w.t()).sum().backward()
    return [x, w]


def _mm(lib, watch=nullcontext()):
    a, b = leaf(lib, rand(0, 3, 4)), leaf(lib, rand(1, 4, 5))
    with watch:
        lib.mm(a, b).sum().backward()
    return [a, b]


def _mm_column_major_mat1(lib, watch=nullcontext()):
    a, b = leaf(lib, rand(0, 4, 3)), leaf(lib, rand(1, 4, 5))
    with watch:
        lib.mm(a.t(), b).sum().backward()
    return [a, b]


def _clamp(lo, hi):
    def run(lib, watch=nullcontext()):
        x = leaf(lib, [-2.0, -0.5, 0.0, 0.5, 2.0, 1.0])
        with watch:
            (x.clamp(lo, hi) * x).sum().backward()
        return [x]

    return run


def _clamp_tensor(lo_shape, hi_shape, requires_grad=(True, True, True)):
    """clamp.Tensor with bounds of the given shapes (None: no bound), broadcast to x's."""

    def run(lib, watch=nullcontext()):
        x = lib.tensor(rand(0, 2, 3).astype(np.float32), requires_grad=requires_grad[0])
        bounds = []
        for key, shape, value, rg in (
            (1, lo_shape, -0.3, requires_grad[1]),
            (2, hi_shape, 0.4, requires_grad[2]),
        ):
            if shape is None:
                bounds.append(None)
                continue
            data = (rand(key, *shape) * 0.2 + value).astype(np.float32)
            bounds.append(lib.tensor(data, requires_grad=rg))
        with watch:
            (lib.clamp(x, *bounds) * x).sum().backward()
        return [t for t in [x, *bounds] if t is not None and t.requires_grad]

    return run


def _add_broadcast_shared(lib, watch=nullcontext()):
    """The engine sums b's gradient down to b's shape before x's two gradients are added
    (PyTorch validates all of a node's outputs before routing any)."""
    x, b = leaf(lib, rand(0, 2, 3)), leaf(lib, rand(1, 3))
    with watch:
        ((x + b) * x).sum().backward()
    return [x, b]


def _maximum(lib, watch=nullcontext()):
    a = leaf(lib, [1.0, 2.0, 3.0, 0.0])
    b = leaf(lib, [3.0, 2.0, 1.0, 0.0])
    with watch:
        lib.maximum(a, b).sum().backward()
    return [a, b]


def _stack(dim):
    def run(lib, watch=nullcontext()):
        a, b = leaf(lib, rand(0, 2, 3)), leaf(lib, rand(1, 2, 3))
        with watch:
            (lib.stack([a, b], dim) ** 2).sum().backward()
        return [a, b]

    return run


def _mv(lib, watch=nullcontext()):
    m, v = leaf(lib, rand(0, 3, 4)), leaf(lib, rand(1, 4))
    with watch:
        m.mv(v).sum().backward()
    return [m, v]


def _sqrt(lib, watch=nullcontext()):
    x = leaf(lib, [0.5, 1.0, 4.0])
    with watch:
        x.sqrt().sum().backward()
    return [x]


def _pow_scalar(exponent):
    def run(lib, watch=nullcontext()):
        x = leaf(lib, [0.5, 1.0, 2.0])
        with watch:
            (x**exponent).sum().backward()
        return [x]

    return run


def _pow_tensor(lib, watch=nullcontext()):
    x, e = leaf(lib, [0.0, 1.0, 2.0]), leaf(lib, [0.0, 2.0, 0.5])
    with watch:
        x.pow(e).sum().backward()
    return [x, e]


def _pow_scalar_base(base):
    def run(lib, watch=nullcontext()):
        e = leaf(lib, [0.0, 1.0, 2.0])
        with watch:
            (base**e).sum().backward()
        return [e]

    return run


CASES = [
    ("linear_x_at_w_t", _linear),
    ("mm", _mm),
    ("mm_column_major_mat1", _mm_column_major_mat1),
    ("clamp_min", _clamp(0.0, None)),
    ("clamp_max", _clamp(None, 0.5)),
    ("clamp_both_float", _clamp(-1.0, 1.0)),
    ("clamp_both_int", _clamp(-1, 1)),
    ("clamp_tensor_both", _clamp_tensor((3,), ())),
    ("clamp_tensor_min_only", _clamp_tensor((3,), None)),
    ("clamp_tensor_max_only", _clamp_tensor(None, (2, 1))),
    ("clamp_tensor_same_shapes", _clamp_tensor((2, 3), (2, 3))),
    ("clamp_tensor_min_needs_no_grad", _clamp_tensor((3,), (), (True, False, True))),
    ("clamp_tensor_only_min_needs_grad", _clamp_tensor((3,), (), (False, True, False))),
    ("clamp_tensor_only_self_needs_grad", _clamp_tensor((1, 3), (2, 1), (True, False, False))),
    ("add_broadcast_shared_input", _add_broadcast_shared),
    ("maximum", _maximum),
    ("stack_dim0", _stack(0)),
    ("stack_dim_neg1", _stack(-1)),
    ("mv", _mv),
    ("sqrt", _sqrt),
    ("pow_int_2", _pow_scalar(2)),
    ("pow_float_2", _pow_scalar(2.0)),
    ("pow_half", _pow_scalar(0.5)),
    ("pow_tensor_tensor", _pow_tensor),
    ("pow_scalar_base", _pow_scalar_base(2)),
    ("pow_scalar_base_zero", _pow_scalar_base(0)),
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in CASES])
def test_backward_calls_match_torch(torch, fn):
    assert call_log(og, fn) == call_log(torch, fn)


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in CASES])
def test_gradients_match_torch(torch, fn):
    for got, expected in zip(fn(og), fn(torch)):
        np.testing.assert_allclose(got.grad.numpy(), expected.grad.numpy(), rtol=1e-6)


def test_linear_weight_grad_is_contiguous_and_stored_without_copy(torch):
    """x @ W.t(): W's gradient comes back column-ordered, so W.grad is contiguous."""
    for lib in (og, torch):
        _, w = _linear(lib)
        assert w.grad.stride() == (4, 1) and w.grad.is_contiguous()
    ops = [name for name, _, _ in call_log(og, _linear)]
    assert ops[-2:] == ["aten.t.default", "aten.detach.default"]
    assert "aten.clone.default" not in ops and "aten.copy_.default" not in ops
