"""``x[index] = value`` and result-saving ops on the plain path (issue 12, point 5).

The plain path writes a basic-indexed view in one frame (``plain_setitem``), runs
CopySlices' backward without the dispatcher, and computes ops that save their result
(tanh, exp, sigmoid ...) in generated plain kernels. Each scenario here runs on both
paths and must record the same tensors, nodes, sequence numbers and errors
(``assert_paths_agree`` of test_plain_path); the scenarios that raise are checked
against torch's errors too, and a few tests check which frames run.
"""

from __future__ import annotations

import gc
import os
import sys
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opgrad as og
from test_plain_path import assert_paths_agree, full_path, leaf
from torch_oracle import message

PROCESS_STARTS_PLAIN = os.environ.get("OPGRAD_PLAIN") != "0"
plain_only = pytest.mark.skipif(
    not PROCESS_STARTS_PLAIN, reason="OPGRAD_PLAIN=0: the plain path is off in this process"
)


def _write(base_shape, index, value_shape, value_grad=True, base_grad=True, dtype=og.float64):
    """A clone of a leaf (or a tensor without grad), ``c[index] = value``, then backward
    of a weighted sum, recorded before and after."""

    def scenario(rec):
        x = leaf(*base_shape, dtype=dtype) if base_grad else og.randn(base_shape, dtype=dtype)
        c = x.clone()
        value = og.randn(value_shape, dtype=dtype)
        if value_grad:
            value.requires_grad_()
        out = rec.attempt("setitem", lambda: c.__setitem__(index, value))
        rec("forward", x, c, value, out)
        if c.requires_grad:
            weights = og.randn(c.shape, dtype=c.dtype)
            rec.attempt("backward", lambda: (c * weights).sum().backward())
            rec("backward", x, c, value)

    return scenario


WRITES = {
    "int": ((4, 3), 1, (3,)),
    "negative int": ((4, 3), -2, (3,)),
    "int into a 1-d tensor (0-dim view)": ((5,), 3, ()),
    "slice": ((5, 3), slice(1, 3), (2, 3)),
    "step slice": ((6, 3), slice(None, None, 2), (3, 3)),
    "negative slice bounds": ((5, 3), slice(-3, -1), (2, 3)),
    "slice past the end": ((5, 3), slice(3, 100), (2, 3)),
    "int, int": ((4, 3), (2, 1), ()),
    "column": ((4, 3), (slice(None), 1), (4,)),
    "slice, step slice": ((4, 6), (slice(1, 3), slice(0, None, 2)), (2, 3)),
    "int of a 3-d tensor": ((2, 3, 4), (1, slice(None), 2), (3,)),
    "float32": ((4, 3), 2, (3,), True, True, og.float32),
    "value without grad": ((4, 3), 1, (3,), False),
    "base without grad": ((4, 3), 1, (3,), True, False),
    "neither requires grad": ((4, 3), 1, (3,), False, False),
    # what the plain path leaves to the full path
    "x[:] = value": ((4, 3), slice(None), (4, 3)),
    "empty slice": ((4, 3), slice(2, 2), (0, 3)),
    "empty slice that starts past the base's memory": ((4, 3), (slice(4, None), 2), (0,)),
    "broadcast value": ((4, 3), slice(1, 3), (3,)),
    "0-dim value into a row": ((4, 3), 1, ()),
    "value with leading ones": ((4, 3), 1, (1, 3)),
    "out of range": ((4, 3), 4, (3,)),
    "negative out of range": ((4, 3), -5, (3,)),
    "too many indices": ((4,), (1, 0), ()),
    "step zero": ((4, 3), slice(None, None, 0), (4, 3)),
    "negative step": ((4, 3), slice(None, None, -1), (4, 3)),
    "wrong shape": ((4, 3), 1, (4,)),
    "None in the index": ((4, 3), (None, 1), (1, 3)),
    "Ellipsis in the index": ((4, 3), (Ellipsis, 1), (4,)),
    "numpy int index": ((4, 3), np.int64(1), (3,)),
    "bool index": ((4, 3), True, (1, 4, 3)),
}


@pytest.mark.parametrize("write", WRITES)
def test_setitem_agrees(write):
    assert_paths_agree(_write(*WRITES[write]))


def _scenario(body):
    def scenario(rec):
        body(rec)

    return scenario


def _dtype_mismatch(rec):
    x = leaf(4, 3)
    c = x.clone()
    value = leaf(3, dtype=og.float32)
    rec.attempt("setitem", lambda: c.__setitem__(1, value))
    rec("forward", x, c, value)
    (c * 2).sum().backward()
    rec("backward", x, c, value)


def _leaf_view(rec):
    x = leaf(4, 3)
    rec.attempt("setitem on a leaf", lambda: x.__setitem__(1, og.randn(3, dtype=og.float64)))
    rec("after", x)


def _no_grad_view(rec):
    x = leaf(4, 3)
    c = x.clone()
    with og.no_grad():
        v = c[1:]
    rec.attempt("setitem on a no_grad view", lambda: v.__setitem__(0, leaf(3)))
    rec("after", x, c, v)


def _multi_output_view(rec):
    c = leaf(4, 3).clone()
    rows = c.unbind(0)
    rec.attempt("setitem on an unbind output", lambda: rows[1].__setitem__(0, leaf(())))
    rec("after", c, rows)


def _overlap(rec):
    x = leaf(5, 3)
    c = x.clone()
    rec.attempt("overlapping rows", lambda: c.__setitem__(slice(1, 4), c[0:3]))
    rec("after", x, c)


def _row_from_another_row(rec):
    x = leaf(4, 3)
    c = x.clone()
    c[1] = c[0]
    c[3] = c[1] * 2
    rec("forward", x, c)
    c.sum().backward()
    rec("backward", x, c)


def _view_of_a_clone(rec):
    x = leaf(5, 3)
    c = x.clone()
    v = c[1:]
    v[0] = leaf(3)
    v[2] = leaf(3)  # v is stale now: its grad_fn is regenerated on the plain path too
    rec("forward", x, c, v)
    (v.sum() + c.sum()).backward()
    rec("backward", x, c, v)


def _stale_value(rec):
    x = leaf(4, 3)
    c = x.clone()
    row = c[0]
    c[2] = leaf(3)  # row's base changed: its grad_fn is regenerated when read
    c[3] = row
    rec("forward", x, c, row)
    c.sum().backward()
    rec("backward", x, c, row)


def _no_grad_write(rec):
    x = leaf(4, 3)
    c = x.clone()
    with og.no_grad():
        c[1] = leaf(3)
    rec("forward", x, c)
    c.sum().backward()
    rec("backward", x, c)


def _read_only(rec):
    base = og.randn(3)
    c = base.expand(4, 3)
    rec.attempt("into an expanded tensor", lambda: c.__setitem__(1, og.randn(3)))
    rec("after", base, c)


def _twice_and_retained(rec):
    x = leaf(6, 2)
    c = x.clone()
    for i in range(1, 6):
        c[i] = og.sigmoid(c[i - 1] * 0.5)
    loss = c.sum()
    loss.backward(retain_graph=True)
    rec("first", x, c)
    loss.backward()
    rec("second", x, c)
    rec.attempt("third", lambda: loss.backward())


def _version_of_the_base_grad(rec):
    # CloneBackward0 passes CopySlices' result on, and x's AccumulateGrad takes it as
    # x.grad: at version 2, after the result's two copies
    x = leaf(4, 3)
    c = x.clone()
    c[1] = leaf(3)
    c.sum().backward()
    rec("backward", x, c, x.grad._version)


def _written_view_then_in_place(rec):
    x = leaf(4, 3)
    c = x.clone()
    c[1] = leaf(3)
    c[1:3].mul_(2)  # a CopySlices of an in-place op other than copy_
    c[2].zero_()
    rec("forward", x, c)
    c.sum().backward()
    rec("backward", x, c)


def _create_graph(rec):
    x = leaf(4, 3)
    c = x.clone()
    row = c[1] * 1
    c[2] = (row * row).exp()
    (g,) = og.autograd.grad(c.sum(), x, create_graph=True)
    rec("first", x, c, g)
    g.sum().backward()
    rec("second", x, c, g)


SCENARIOS = {
    "dtype mismatch": _dtype_mismatch,
    "view of a leaf": _leaf_view,
    "view made under no_grad": _no_grad_view,
    "output of unbind": _multi_output_view,
    "overlapping source": _overlap,
    "row from another row": _row_from_another_row,
    "view of a clone, twice": _view_of_a_clone,
    "stale view as the value": _stale_value,
    "under no_grad": _no_grad_write,
    "into an expanded tensor": _read_only,
    "retain_graph, then twice": _twice_and_retained,
    "version of a stolen base gradient": _version_of_the_base_grad,
    "in-place ops on written views": _written_view_then_in_place,
    "create_graph through CopySlices": _create_graph,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_setitem_scenario_agrees(scenario):
    assert_paths_agree(_scenario(SCENARIOS[scenario]))


# ---------------------------------------------------------------------------
# Errors as torch raises them, with the plain path on


def _error(lib, case):
    x = lib.randn(4, 3, dtype=lib.float64, requires_grad=True)
    c = x.clone()
    try:
        if case == "out of range":
            c[4] = lib.ones(3, dtype=lib.float64)
        elif case == "view of a leaf":
            x[1] = lib.ones(3, dtype=lib.float64)
        elif case == "wrong shape":
            c[1] = lib.ones(4, dtype=lib.float64)
        elif case == "overlap":
            c[1:4] = c[0:3]
        elif case == "multi-output view":
            c.unbind(0)[1][0] = lib.ones((), dtype=lib.float64)
    except Exception as exc:  # noqa: BLE001 - the type and text are compared
        return type(exc).__name__, message(exc)
    return None


@pytest.mark.parametrize(
    "case", ["out of range", "view of a leaf", "wrong shape", "overlap", "multi-output view"]
)
def test_setitem_errors_match_torch(torch, case):
    got = _error(og, case)
    assert got is not None and got == _error(torch, case)


# ---------------------------------------------------------------------------
# Against torch: the row loop's values, gradient, versions and node names


def _rows(lib, data, dtype):
    x = lib.tensor(data, dtype=dtype, requires_grad=True)
    a = x.clone()
    for i in range(1, len(data)):
        a[i] = (a[i - 1] * 0.5).tanh()
    v = a[2:]
    v[-1] = a[0].exp()
    names = [a.grad_fn.name().split("::")[-1], v.grad_fn.name()]
    a.sum().backward()
    return a.detach().numpy().copy(), x.grad.numpy().copy(), a._version, names


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_row_loop_matches_torch(torch, dtype):
    data = np.random.default_rng(5).standard_normal((7, 3))
    got = _rows(og, data, getattr(og, dtype))
    expected = _rows(torch, data, getattr(torch, dtype))
    rtol = 1e-6 if dtype == "float32" else 1e-14  # numpy's tanh and torch's differ by an ulp
    np.testing.assert_allclose(got[0], expected[0], rtol=rtol)
    np.testing.assert_allclose(got[1], expected[1], rtol=rtol)
    assert got[2:] == expected[2:]


# ---------------------------------------------------------------------------
# Result-saving ops on the plain path


RESULT_SAVING = {
    "tanh": lambda x: x.tanh(),
    "exp": lambda x: x.exp(),
    "sigmoid": lambda x: x.sigmoid(),
    "sqrt": lambda x: (x * x + 1).sqrt(),
    "reciprocal": lambda x: (x * x + 1).reciprocal(),
    "relu": lambda x: x.relu(),
    "pow(Tensor, Tensor)": lambda x: (x * x + 1).pow(x),
    "2 ** x": lambda x: 2**x,
    "2.5 ** x": lambda x: 2.5**x,
}


def _saves_result(expression, dtype):
    def scenario(rec):
        x = leaf(2, 3, dtype=dtype)
        out = expression(x)
        rec("forward", x, out)  # records _saved_result: an alias without history
        (out * out).sum().backward(retain_graph=True)
        rec("backward", x, out)
        out.add_(1)
        rec.attempt("backward after the result changed", lambda: out.sum().backward())
        rec("after", x, out)

    return scenario


@pytest.mark.parametrize("dtype", [og.float64, og.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("op", RESULT_SAVING)
def test_result_saving_op_agrees(op, dtype):
    assert_paths_agree(_saves_result(RESULT_SAVING[op], dtype))


@pytest.mark.parametrize("path", ["plain", "full"])
def test_a_saved_result_does_not_keep_its_output_alive(path):
    """The node holds an alias of its output, not the output (no reference cycle)."""
    x = leaf(3)

    def build():
        out = x.tanh()
        return weakref.ref(out), out.grad_fn

    gc.disable()
    try:
        if path == "full":
            with full_path():
                ref, node = build()
        else:
            ref, node = build()
        assert ref() is None
        assert node._saved_result.tolist() == x.tanh().tolist()
    finally:
        gc.enable()


# ---------------------------------------------------------------------------
# Which frames run on the plain path

_DISPATCHER_LAYERS = ("autograd_kernels.py", "inplace_or_view_kernels.py", "cpu_kernels.py")


def _layers_entered(fn) -> list:
    entered = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.endswith(_DISPATCHER_LAYERS):
            entered.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return entered


@plain_only
def test_setitem_of_a_row_enters_no_dispatcher_layer():
    x = leaf(4, 3)
    c = x.clone()
    value = leaf(3)
    assert _layers_entered(lambda: c.__setitem__(1, value)) == []
    assert c.grad_fn.name() == "opgrad::autograd::CopySlices"


@plain_only
def test_setitem_backward_enters_no_dispatcher_layer():
    x = leaf(4, 3)
    c = x.clone()
    c[1] = (c[0] * 0.5).tanh()
    loss = c.sum()
    assert _layers_entered(loss.backward) == []
    assert x.grad is not None


@plain_only
@pytest.mark.parametrize("op", ["tanh", "exp", "sigmoid", "relu"])
def test_a_result_saving_op_enters_no_dispatcher_layer(op):
    x = leaf(3)
    assert _layers_entered(lambda: getattr(x, op)()) == []


def test_setitem_takes_the_full_path_when_the_plain_path_is_off():
    x = leaf(4, 3)
    c = x.clone()
    with full_path():
        assert "copy_" in _layers_entered(lambda: c.__setitem__(1, leaf(3)))


# ---------------------------------------------------------------------------
# Property: any int/slice index into a clone or a strided view of one agrees

_BASES = {
    "clone": lambda c: c,
    "transposed view": lambda c: c.transpose(0, -1) if c.dim() >= 2 else c[::2],
    "sliced view": lambda c: c[1:],
}


@st.composite
def _writes(draw):
    shape = tuple(draw(st.lists(st.integers(2, 4), min_size=1, max_size=3)))
    bound = st.one_of(st.none(), st.integers(-6, 6))
    item = st.one_of(
        st.integers(-4, 3),
        st.builds(slice, bound, bound, st.sampled_from([None, 1, 2, 3])),
    )
    items = tuple(draw(st.lists(item, min_size=1, max_size=len(shape))))
    return shape, draw(st.sampled_from(sorted(_BASES))), items


@settings(
    max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(_writes())
def test_any_basic_index_write_agrees(write):
    shape, base, items = write

    def scenario(rec):
        x = leaf(*shape)
        target = _BASES[base](x.clone())
        try:
            view_shape = np.empty(tuple(target.shape))[items].shape
        except IndexError:
            view_shape = ()
        value = og.randn(view_shape, dtype=og.float64).requires_grad_()
        rec.attempt("setitem", lambda: target.__setitem__(items, value))
        rec("forward", x, target, value)
        rec.attempt("backward", lambda: (target * target).sum().backward())
        rec("backward", x, target, value)

    assert_paths_agree(scenario)
