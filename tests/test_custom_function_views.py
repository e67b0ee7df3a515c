"""Views made by custom Functions (returned as-is or through view ops) and in-place writes on
them, against torch (issue 16 point 4), with the reference tests
test_autograd_inplace_views_creation_meta, test_inplace_not_requires_grad and
test_autograd_inplace_view_of_view: every combination of how the view was made (a plain view,
one of several views, a custom Function's view), the grad mode at its creation and at the
in-place view op, and whether the base requires grad."""

from __future__ import annotations

import itertools

import pytest

import opgrad as og
from torch_oracle import message


def _outcome(fn):
    try:
        result = fn()
        return "ok", result
    except RuntimeError as err:
        return "error", message(err).split(".")[0]


def _view_function(lib):
    class ViewOf(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, grad):
            return grad

    return ViewOf


INPLACE_VIEW_OPS = {
    "as_strided_": lambda v: v.as_strided_((1, 0), (2, 2)),
    "transpose_": lambda v: v.transpose_(0, 0),
    "t_": lambda v: v.t_(),
    "squeeze_": lambda v: v.squeeze_(0),
    "unsqueeze_": lambda v: v.unsqueeze_(0),
    "swapdims_": lambda v: v.swapdims_(0, 0),
    "swapaxes_": lambda v: v.swapaxes_(0, 0),
}


def _creation_meta(lib, op, kind, grad_view, grad_iview, requires_grad):
    ViewOf = _view_function(lib)
    base = lib.rand(2, 3, requires_grad=requires_grad).clone()
    with lib.set_grad_enabled(grad_view):
        if kind == "multi_view":
            inp = base.unbind()[0]
        elif kind == "custom":
            inp = ViewOf.apply(base)
        else:
            inp = base.view_as(base)
    with lib.set_grad_enabled(grad_iview):
        first = _outcome(lambda: INPLACE_VIEW_OPS[op](inp) and None)
    if first[0] == "error":
        return first
    return first, _outcome(lambda: inp.add_(1) and None)


@pytest.mark.parametrize("op", sorted(INPLACE_VIEW_OPS))
def test_inplace_view_ops_on_views_by_how_they_were_made(torch, op):
    for kind, grad_view, grad_iview, requires_grad in itertools.product(
        ("normal", "multi_view", "custom"), (True, False), (True, False), (True, False)
    ):
        case = (op, kind, grad_view, grad_iview, requires_grad)
        got = _creation_meta(og, *case)
        expected = _creation_meta(torch, *case)
        assert got == expected, case


@pytest.mark.parametrize("write", ["iadd", "copy_"])
def test_writing_a_grad_requiring_value_into_a_custom_functions_view(torch, write):
    def run(lib):
        view = _view_function(lib).apply(lib.rand(1, 2))
        b = lib.rand(1, requires_grad=True)
        if write == "iadd":

            def go():
                nonlocal view
                view += b

        else:

            def go():
                view.copy_(b)

        return _outcome(go)

    assert run(og) == run(torch)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_inplace_on_a_view_of_a_view_made_without_grad(torch, mode):
    def run(lib):
        x = lib.zeros(2)
        with getattr(lib, mode)():
            y = x.view(2)
        y.requires_grad_(True)
        z = y.view(2)

        def go():
            nonlocal z
            z /= 2

        try:
            go()
        except RuntimeError as err:
            return message(err)
        return "ok"

    assert run(og) == run(torch)


SCENARIOS = {
    "returned as-is": lambda lib, F, b: (lambda y: (type(y.grad_fn).__name__, y._is_view()))(
        F["Id"].apply(b)
    ),
    "view": lambda lib, F, b: (lambda y: (type(y.grad_fn).__name__, y._base is b))(
        F["ViewOf"].apply(b)
    ),
    "in-place on its view": lambda lib, F, b: F["ViewOf"].apply(b).mul_(2),
    "in-place on its slice": lambda lib, F, b: F["Slice"].apply(b).mul_(2),
    "in-place on the input returned as-is": lambda lib, F, b: F["Id"].apply(b).mul_(2),
    "in-place on its view made in no_grad": lambda lib, F, b: (lambda y: y.add_(1))(
        _in_no_grad(lib, lambda: F["ViewOf"].apply(b))
    ),
    "grad_fn after the base changed": lambda lib, F, b: (
        lambda y: (b.mul_(2), type(y.grad_fn).__name__)[1]
    )(F["ViewOf"].apply(b)),
}


def _in_no_grad(lib, make):
    with lib.no_grad():
        return make()


def _functions(lib):
    class Id(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class Slice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[0:2]

        @staticmethod
        def backward(ctx, g):
            full = g.new_zeros(3)
            full[0:2] = g
            return full

    return {"Id": Id, "ViewOf": _view_function(lib), "Slice": Slice}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_custom_function_outputs_that_are_views(torch, name):
    def run(lib):
        b = lib.ones(3, requires_grad=True) * 2
        outcome = _outcome(lambda: SCENARIOS[name](lib, _functions(lib), b))
        return outcome if outcome[0] == "error" or not hasattr(outcome[1], "shape") else "ok"

    assert run(og) == run(torch)


def test_as_strided_in_place(torch):
    def run(lib):
        a = lib.arange(4.0, requires_grad=True)
        b = a.clone()
        same = b.as_strided_((2, 2), (1, 1), 1) is b
        node = b.grad_fn
        saved = (node._saved_size, node._saved_stride, node._saved_storage_offset)
        b.sum().backward()
        refused = _outcome(lambda: lib.ones(3, requires_grad=True).as_strided_((2,), (1,)))
        return (
            same,
            type(node).__name__,
            saved,
            tuple(b.shape),
            b.stride(),
            b.storage_offset(),
            b.tolist(),
            a.grad.tolist(),
            refused,
        )

    assert run(og) == run(torch)
