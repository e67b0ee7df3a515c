"""opgrad.library: ops and kernels defined from Python go through the same dispatcher."""

import numpy as np
import pytest

import opgrad as og
from opgrad.library import NO_AUTOGRAD_KERNEL, Library, custom_op, infer_schema
from torch_oracle import assert_same, logging_mode_class


@pytest.fixture
def lib():
    library = Library("oglibtest", "DEF")
    yield library
    library._destroy()


def test_define_and_impl_make_an_op_under_ops(lib):
    lib.define("double(Tensor x) -> Tensor")
    lib.impl("double", lambda x: x * 2, "CPU")
    op = og.ops.oglibtest.double.default
    assert str(op) == "oglibtest.double.default"
    assert str(op._schema) == "oglibtest::double(Tensor x) -> Tensor"
    assert og.ops.oglibtest.double(og.ones(2)).tolist() == [2.0, 2.0]


def test_an_op_without_a_cpu_kernel_says_so(lib):
    lib.define("nothing(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match="Could not run 'oglibtest::nothing'"):
        og.ops.oglibtest.nothing(og.ones(1))


def test_backward_without_an_autograd_kernel_raises_with_torch_text(lib):
    lib.define("double(Tensor x) -> Tensor")
    lib.impl("double", lambda x: x * 2, "CPU")
    x = og.ones(2, requires_grad=True)
    y = og.ops.oglibtest.double(x)
    assert y.requires_grad
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value) == NO_AUTOGRAD_KERNEL.format(op="oglibtest::double")
    assert "an autograd kernel was not registered to the Autograd key(s)" in str(info.value)


def test_an_autograd_kernel_registered_from_python_is_used(lib):
    lib.define("double(Tensor x) -> Tensor")
    lib.impl("double", lambda x: x * 2, "CPU")
    # a CompositeImplicitAutograd kernel: autograd flows through the ops it calls
    lib.impl("double", lambda x: x + x, "CompositeImplicitAutograd")
    x = og.ones(2, requires_grad=True)
    og.ops.oglibtest.double(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_a_namespace_can_be_defined_once(lib):
    with pytest.raises(
        RuntimeError,
        match="Only a single TORCH_LIBRARY can be used to register the namespace oglibtest",
    ):
        Library("oglibtest", "DEF")
    Library("oglibtest", "FRAGMENT").define("more(Tensor x) -> Tensor")


def test_impl_overrides_an_aten_kernel_until_the_library_goes():
    impl = Library("aten", "IMPL")
    impl.impl("neg", lambda x: og.ops.aten.mul.Tensor(x, 10), "CPU")
    try:
        assert (-og.ones(1)).tolist() == [10.0]
    finally:
        impl._destroy()
    assert (-og.ones(1)).tolist() == [-1.0]


def test_a_mode_sees_a_library_op(lib):
    lib.define("double(Tensor x) -> Tensor")
    lib.impl("double", lambda x: x * 2, "CPU")
    x = og.ones(2)
    with logging_mode_class(og)() as mode:
        og.ops.oglibtest.double(x)
    assert mode.log == ["oglibtest.double.default"]


def test_infer_schema_reads_the_type_hints():
    def f(x: og.Tensor, n: int, scale: float = 1.0, *, flag: bool = False) -> og.Tensor: ...

    assert infer_schema(f) == "(Tensor x, SymInt n, float scale=1.0, *, bool flag=False) -> Tensor"

    def g(x: og.Tensor, y: og.Tensor) -> None: ...

    assert infer_schema(g, mutates_args=["y"]) == "(Tensor x, Tensor(a0!) y) -> ()"


def _make_mysin(name):
    @custom_op(f"oglibtest_ops::{name}", mutates_args=())
    def mysin(x: og.Tensor) -> og.Tensor:
        return og.sin(x)

    return mysin


def test_custom_op_with_register_autograd_matches_torch(torch):
    mysin = _make_mysin("sin_a")

    def setup(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()

    mysin.register_autograd(backward, setup_context=setup)
    x = og.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = mysin(x)
    assert type(y.grad_fn).__name__ == "GeneratedBackwardFor_oglibtest_ops_sin_a_defaultBackward"
    y.sum().backward()
    tx = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    torch.sin(tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_custom_op_without_register_autograd_refuses_backward():
    op = _make_mysin("sin_b")
    x = og.ones(2, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"Trying to backward through oglibtest_ops.sin_b.default but no autograd formula was registered. Please use register_autograd to add one.",
    ):
        op(x).sum().backward()


def test_registered_backward_gradients_are_validated():
    op = _make_mysin("sin_c")
    op.register_autograd(lambda ctx, g: (g, g))
    with pytest.raises(RuntimeError, match="expected the backward function to return 1 gradients"):
        op(og.ones(2, requires_grad=True)).sum().backward()
    op2 = _make_mysin("sin_d")
    op2.register_autograd(lambda ctx, g: g[:1])
    with pytest.raises(RuntimeError, match=r"has shape \[1\] but the input has shape \[2\]"):
        op2(og.ones(2, requires_grad=True)).sum().backward()


def test_custom_op_mutating_an_argument_bumps_its_version_like_torch(torch):
    @custom_op("oglibtest_ops::inc", mutates_args=["x"])
    def inc(x: og.Tensor) -> None:
        x.add_(1)

    @torch.library.custom_op("oglibtest_torch::inc", mutates_args=["x"])
    def tinc(x: torch.Tensor) -> None:
        x.add_(1)

    t, tt = og.zeros(2), torch.zeros(2)
    inc(t)
    tinc(tt)
    assert t.tolist() == tt.tolist() and t._version == tt._version
    assert (
        str(og.ops.oglibtest_ops.inc.default._schema) == "oglibtest_ops::inc(Tensor(a0!) x) -> ()"
    )


def test_define_with_a_malformed_schema_raises_runtime_error_as_torch(torch):
    def scenario(lib):
        library = lib.library.Library(f"malformed_{lib.__name__}", "FRAGMENT")
        try:
            library.define("f(Tensor x -> Tensor")
        except Exception as error:  # noqa: BLE001 - the type is what is compared
            return type(error).__name__
        return "accepted"

    assert_same(torch, scenario)
