"""Formula helpers that compute straight with numpy when nobody observes the aten calls.

sum_to, the mm backward helpers, mean_backward and pow_backward skip the dispatcher when no graph is recorded, no
forward-AD level is open and no mode or subclass is in play. These tests pin that the
shortcut gives exactly what the dispatched aten calls give (values bit for bit, dtype,
shape, strides, view-ness), and that any observer turns it off.
"""

import numpy as np
import pytest

import opgrad as og
from torch_oracle import outcome
from opgrad.autograd import functions_manual
from opgrad.utils._python_dispatch import TorchDispatchMode


def _dispatched(monkeypatch):
    monkeypatch.setattr(functions_manual, "_unobserved", lambda *tensors: False)


def _describe(t):
    return (
        t._data.tobytes(),
        t.dtype,
        tuple(t.shape),
        t.stride(),
        t._is_view(),
        None if t._base is None else tuple(t._base.shape),
        t.requires_grad,
    )


def _both_ways(monkeypatch, compute):
    with og.no_grad():
        direct = _describe(compute())
        with monkeypatch.context() as patch:
            _dispatched(patch)
            dispatched = _describe(compute())
    return direct, dispatched


SUM_TO_CASES = [
    ((3, 4), (4,)),
    ((3, 4), (1, 4)),
    ((3, 4), (3, 1)),
    ((2, 3, 4), (3, 1)),
    ((2, 3, 4), (1, 1, 4)),
    ((2, 1, 4), (4,)),
    ((5,), (1,)),
    ((3, 4), (3, 4)),
]


@pytest.mark.parametrize("dtype", [og.float32, og.float64])
@pytest.mark.parametrize("sizes, shape", SUM_TO_CASES)
def test_sum_to_direct_equals_dispatched(monkeypatch, sizes, shape, dtype):
    grad = og.randn(*sizes, dtype=dtype)
    direct, dispatched = _both_ways(monkeypatch, lambda: functions_manual.sum_to(grad, shape))
    assert direct == dispatched


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", [og.float32, og.float64])
def test_mm_backward_direct_equals_dispatched(monkeypatch, layout, dtype):
    grad = og.randn(5, 4, dtype=dtype)
    mat1 = og.randn(5, 3, dtype=dtype)
    mat2 = og.randn(3, 4, dtype=dtype)
    if layout == "transposed":
        grad = og.randn(4, 5, dtype=dtype).t()
        mat1 = og.randn(3, 5, dtype=dtype).t()
    for compute in (
        lambda: functions_manual.mm_mat1_backward(grad, mat2, (5, 3), (3, 1), 1),
        lambda: functions_manual.mm_mat2_backward(grad, mat1, (3, 4), (4, 1), 1),
        # a column-major input keeps the dispatched formula (its result is a t() view)
        lambda: functions_manual.mm_mat2_backward(grad, mat1, (3, 4), (1, 3), 1),
        lambda: functions_manual.mm_mat1_backward(grad, mat2, (5, 3), (1, 5), 2.0),
    ):
        direct, dispatched = _both_ways(monkeypatch, compute)
        assert direct == dispatched


MEAN_CASES = [
    ((3, 4), None, False, ()),
    ((3, 4), None, True, (1, 1)),
    ((2, 3, 4), (0, 2), True, (1, 3, 1)),
    ((2, 3, 4), (1,), False, (2, 4)),  # unsqueeze first: the dispatched formula
    ((), None, False, ()),
]


@pytest.mark.parametrize("dtype", [og.float32, og.float64])
@pytest.mark.parametrize("sizes, dims, keepdim, grad_shape", MEAN_CASES)
def test_mean_backward_direct_equals_dispatched(
    monkeypatch, sizes, dims, keepdim, grad_shape, dtype
):
    grad = og.randn(grad_shape, dtype=dtype)
    numel = int(np.prod(sizes))
    direct, dispatched = _both_ways(
        monkeypatch,
        lambda: functions_manual.mean_backward(grad, sizes, dims, numel, keepdim),
    )
    assert direct == dispatched


@pytest.mark.parametrize("dtype", [og.float32, og.float64])
@pytest.mark.parametrize("exponent", [2, 3, 0.5, -1.5, 1, 2.0])
@pytest.mark.parametrize("shape", [(2, 3), ()])
def test_pow_backward_direct_equals_dispatched(monkeypatch, shape, exponent, dtype):
    grad = og.randn(shape, dtype=dtype)
    base = og.rand(shape, dtype=dtype) + 0.5
    direct, dispatched = _both_ways(
        monkeypatch, lambda: functions_manual.pow_backward(grad, base, exponent)
    )
    assert direct == dispatched


def _mse_backward_log(lib, mode_class):
    class Log(mode_class):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.calls.append(str(func))
            return func(*args, **(kwargs or {}))

    x = lib.ones(3, 4, requires_grad=True)
    loss = ((x * 2) ** 2).mean()
    with Log() as log:
        loss.backward()
    return log.calls


def test_observers_see_mean_and_pow_backward_calls(torch):
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    calls = _mse_backward_log(og, TorchDispatchMode)
    assert calls == _mse_backward_log(torch, TorchMode)
    assert "aten.pow.Tensor_Scalar" in calls and "aten.div.Scalar" in calls


def _linear_step(lib):
    x = lib.ones(3, 4)
    b = lib.ones(4, requires_grad=True)
    w = lib.ones(4, 2, requires_grad=True)
    seen = []
    b.register_hook(lambda g: seen.append(("b", g._is_view(), tuple(g._base.shape), g.stride())))
    w.register_hook(lambda g: seen.append(("w", g._is_view(), g.stride())))
    ((x + b) @ w).sum().backward()
    return seen, b.grad._is_view(), w.grad.tolist(), b.grad.tolist()


def test_linear_layer_gradients_look_as_in_torch(torch):
    assert _linear_step(og) == _linear_step(torch)


def _backward_log(lib, mode_class):
    class Log(mode_class):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.calls.append(str(func))
            return func(*args, **(kwargs or {}))

    x = lib.ones(3, 4)
    b = lib.ones(4, requires_grad=True)
    w = lib.ones(4, 2, requires_grad=True)
    loss = ((x + b) @ w).sum()
    with Log() as log:
        loss.backward()
    return log.calls


def test_observers_see_the_aten_calls(torch):
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    calls = _backward_log(og, TorchDispatchMode)
    assert calls == _backward_log(torch, TorchMode)
    assert "aten.sum.dim_IntList" in calls and "aten.mm.default" in calls


def _second_order(lib):
    x = lib.tensor(
        [[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.0], [3.0, 1.0, -2.0, 1.0]], dtype=lib.float64
    )
    b = lib.tensor([0.1, 0.2, -0.3, 0.4], dtype=lib.float64, requires_grad=True)
    w = lib.tensor(
        [[1.0, -1.0], [0.5, 2.0], [-1.5, 1.0], [2.0, 0.5]], dtype=lib.float64, requires_grad=True
    )
    gb, gw = lib.autograd.grad(((x + b) @ w).pow(2).sum(), (b, w), create_graph=True)
    names = (gb.grad_fn.name(), gw.grad_fn.name())
    (gb.sum() + gw.sum()).backward()
    return names, [t.detach().numpy() for t in (gb, gw, b.grad, w.grad)]


def test_create_graph_keeps_the_history(torch):
    names, values = _second_order(og)
    torch_names, torch_values = _second_order(torch)
    assert names == torch_names
    for got, expected in zip(values, torch_values):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def _with_user_kernel(lib, op_name, make_kernel, scenario):
    calls = []
    library = lib.library.Library("aten", "IMPL")
    library.impl(op_name, make_kernel(lib, calls), "CPU")
    try:
        return scenario(lib), calls
    finally:
        library._destroy()


def _seven_mm(lib, calls):
    def kernel(a, b):
        calls.append("mm")
        return lib.full((a.shape[0], b.shape[1]), 7.0)

    return kernel


def _sum_plus_100(lib, calls):
    def kernel(a, dim, keepdim=False, dtype=None):
        calls.append(("sum.dim_IntList", tuple(dim), keepdim))
        summed = a.detach().numpy().sum(axis=tuple(dim), keepdims=keepdim) + 100
        return lib.from_numpy(summed)

    return kernel


def _linear_grads(lib):
    x = lib.ones(3, 4)
    b = lib.ones(4, requires_grad=True)
    w = lib.ones(4, 2, requires_grad=True)
    ((x + b) @ w).sum().backward()
    return w.grad.tolist(), b.grad.tolist()


def _broadcast_grad(lib):
    b = lib.ones(4, requires_grad=True)
    (lib.ones(3, 4) + b).backward(lib.ones(3, 4))
    return b.grad.tolist()


@pytest.mark.parametrize(
    "op_name, make_kernel, scenario",
    [("mm", _seven_mm, _linear_grads), ("sum.dim_IntList", _sum_plus_100, _broadcast_grad)],
)
def test_user_kernels_on_aten_ops_run_in_backward(torch, op_name, make_kernel, scenario):
    got = _with_user_kernel(og, op_name, make_kernel, scenario)
    assert got == _with_user_kernel(torch, op_name, make_kernel, scenario)
    assert got[1]  # the user's kernel ran
    assert _with_user_kernel(og, op_name, make_kernel, lambda lib: None)  # and is undone
    from opgrad import dispatcher

    assert dispatcher.user_aten_kernels == 0


@pytest.mark.parametrize(
    "unpack",
    [lambda t: t.double(), lambda t: t.long(), lambda t: t.reshape(-1), lambda t: t.unsqueeze(0)],
    ids=["double", "long", "flat", "3d"],
)
def test_unpacked_operands_mm_refuses_still_raise(torch, unpack):
    def scenario(lib):
        a = lib.ones(5, 3, requires_grad=True)
        b = lib.ones(3, 4, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            y = a.mm(b)
        y.sum().backward()

    got, expected = outcome(lambda: scenario(og)), outcome(lambda: scenario(torch))
    assert got[0] == expected[0] == "RuntimeError"


def _inference_backward(lib):
    b = lib.ones(4, requires_grad=True)
    seen = []
    b.register_hook(lambda g: seen.append((g._is_view(), g._base is None, g.is_inference())))
    y = (lib.ones(3, 4) + b).sum()
    with lib.inference_mode():
        y.backward()
    return seen, b.grad._is_view(), b.grad.tolist()


def test_backward_in_inference_mode_gives_no_views(torch):
    assert _inference_backward(og) == _inference_backward(torch)
