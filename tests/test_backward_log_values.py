"""Backward formulas issue PyTorch's aten calls in PyTorch's order, with its values.

test_backward_logs.py compares shapes and strides; two calls on same-shaped tensors
(mul's two gradients) can swap without changing that log. Here each tensor argument is
shown by the sum of its values, and sequences by their own type: PyTorch evaluates a
node's formulas in the sorted order of their derivatives.yaml keys ("other" before
"self"), and hands int[] arguments to a mode as lists.
"""

import pytest

from torch_oracle import dispatch_module


def _show(value):
    if hasattr(value, "shape"):
        return round(float(value.sum()), 4)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_show(v) for v in value])
    return value


def _backward_log(lib, fn):
    calls = []

    class Recorder(dispatch_module(lib).TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            shown = [_show(a) for a in args]
            if str(func) == "aten.copy_.default":
                shown[0] = "new_empty_strided's memory"  # uninitialised: no value to compare
            calls.append((str(func), shown))
            return func(*args, **(kwargs or {}))

    x = lib.tensor([1.5, 2.0, -0.5], dtype=lib.float64, requires_grad=True)
    y = lib.tensor([3.0, -4.0, 0.25], dtype=lib.float64, requires_grad=True)
    out = fn(lib, x, y)
    with Recorder():
        out.backward(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
    return calls


CASES = {
    "mul": lambda L, x, y: x * y,
    "div": lambda L, x, y: x / y,
    "sub": lambda L, x, y: x - y,
    "add with alpha": lambda L, x, y: L.add(x, y, alpha=2),
    "rsub": lambda L, x, y: L.rsub(x, y),
    "maximum": lambda L, x, y: L.maximum(x, y),
    "where": lambda L, x, y: L.where(x > 0, x, y),
    "pow": lambda L, x, y: L.pow(x.abs(), y),
    "clamp with tensors": lambda L, x, y: L.clamp(x, y),
    "mul chain": lambda L, x, y: x * y * x,
    "sigmoid times tanh": lambda L, x, y: x.sigmoid() * y.tanh(),
    "relu of a product": lambda L, x, y: (x * y).relu(),
    "outer product": lambda L, x, y: (x.unsqueeze(1) @ y.unsqueeze(0)).sum(1),
    "mv": lambda L, x, y: L.mv(x.unsqueeze(1).expand(3, 3), y),
    "cat and slice": lambda L, x, y: L.cat([x, y])[:3],
    "mean over a stack": lambda L, x, y: L.stack([x, y]).mean(0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_backward_calls_and_values_match_torch(torch, name):
    import opgrad as og

    assert _backward_log(og, CASES[name]) == _backward_log(torch, CASES[name])
