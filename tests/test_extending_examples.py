"""The examples users copy (tools/examples) run, and agree with PyTorch where it has the same API."""

import importlib.util
from pathlib import Path

import numpy as np

import opgrad as og
from opgrad.utils._pytree import tree_map

EXAMPLES = Path(__file__).resolve().parent.parent / "tools" / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_logging_mode_example_logs_forward_and_backward_ops():
    ops = load("logging_mode").training_step_ops()
    assert ops[:4] == [
        "aten.mm.default",
        "aten.add.Tensor",
        "aten.sub.Tensor",
        "aten.pow.Tensor_Scalar",
    ]
    assert "aten.ones_like.default" in ops  # backward's seed
    assert ops.count("aten.detach.default") == 2  # the two leaves' gradients stored


def test_custom_op_example_matches_torch_softplus(torch):
    y, grad = load("custom_op").demo()
    x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    expected = torch.nn.functional.softplus(x, beta=2.0)
    expected.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(grad.numpy(), x.grad.numpy(), rtol=1e-6)


def test_shape_recorder_example_sees_forward_and_backward():
    records, grad = load("shape_recorder").demo()
    names = [name for name, _ in records]
    assert names[:2] == ["aten.mm.default", "aten.sum.default"]
    assert "aten.ones_like.default" in names and names.count("aten.mm.default") == 2
    assert type(grad).__name__ == "ShapeRecorder"
    np.testing.assert_allclose(grad.elem.numpy(), [[0.5, -1.0], [0.5, -1.0]])


def _log_tensor_class(lib, log):
    class LogTensor(lib.Tensor):
        @staticmethod
        def __new__(cls, elem):
            return lib.Tensor._make_wrapper_subclass(
                cls, elem.shape, dtype=elem.dtype, requires_grad=elem.requires_grad
            )

        def __init__(self, elem):
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(t):
                return t.elem if isinstance(t, LogTensor) else t

            def wrap(t):
                return (
                    LogTensor(t)
                    if isinstance(t, lib.Tensor) and not isinstance(t, LogTensor)
                    else t
                )

            log.append(str(func))
            return tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {})))

    return LogTensor


def test_wrapper_subclass_sees_the_same_ops_as_torch(torch):
    logs = []
    for lib in (og, torch):
        log = []
        LogTensor = _log_tensor_class(lib, log)
        x = LogTensor(lib.tensor([1.0, 2.0], requires_grad=True))
        y = (x * x).sum()
        assert type(y).__name__ == "LogTensor" and type(y.grad_fn).__name__ == "SumBackward0"
        y.backward()
        assert type(x.grad).__name__ == "LogTensor"
        np.testing.assert_allclose(x.grad.elem.numpy(), [2.0, 4.0])
        logs.append(log)
    # mul, sum forward; ones_like, expand, mul, mul, add backward; AccumulateGrad's detach.
    assert logs[0] == logs[1]
