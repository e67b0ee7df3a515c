"""The dispatcher: overload objects, key order, thread-local keys, redispatch, kernels."""

import threading

import pytest

import opgrad as og
from opgrad import dispatch_keys as K
from opgrad import _tls
from opgrad.dispatcher import (
    AutoDispatchBelowAutograd,
    ExcludeDispatchKeyGuard,
    IncludeDispatchKeyGuard,
    compute_keyset,
    define,
    local_keys,
)
from opgrad.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack
from torch_oracle import logging_mode_class

aten = og.ops.aten


Recorder = logging_mode_class(og)


def test_overload_objects_look_like_torch_ops():
    op = aten.mul.Tensor
    assert str(op) == "aten.mul.Tensor"
    assert op.name() == "aten::mul.Tensor"
    assert op.__name__ == "mul.Tensor"
    assert op._overloadname == "Tensor"
    assert op.overloadpacket is aten.mul
    assert op.namespace == "aten"
    assert str(op._schema) == "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor"
    assert str(aten.relu.default) == "aten.relu.default"
    assert "Tensor" in aten.mul.overloads() and "Scalar" in aten.mul.overloads()


def test_packet_picks_the_overload_from_arguments():
    x = og.tensor([1.0, 2.0])
    assert aten.sum(x).item() == 3.0
    assert aten.sum(og.ones(2, 3), [1]).tolist() == [3.0, 3.0]
    assert aten.gt(x, 1.5).tolist() == [False, True]


def test_overload_objects_run_the_op_with_autograd():
    x = og.tensor([1.0, 2.0], requires_grad=True)
    y = aten.mul.Tensor(x, x)
    assert type(y.grad_fn).__name__ == "MulBackward0"


def test_unknown_overload_is_an_attribute_error():
    with pytest.raises(AttributeError):
        aten.mul.NoSuchOverload


def test_plain_tensors_carry_autograd_inplace_or_view_and_cpu_keys():
    x = og.ones(2)
    assert x._keys == K.AUTOGRAD | K.AD_INPLACE_OR_VIEW | K.CPU
    assert og.ones(2, requires_grad=True)._keys == x._keys
    assert K.key_names(x._keys) == ["Autograd", "ADInplaceOrView", "CPU"]


def test_keys_are_ordered_like_pytorch():
    assert K.AUTOGRAD > K.AD_INPLACE_OR_VIEW > K.PYTHON > K.CPU


def test_exclude_guard_skips_autograd_in_this_block_only():
    x = og.tensor([1.0], requires_grad=True)
    with ExcludeDispatchKeyGuard(K.AUTOGRAD):
        assert (x * 2).grad_fn is None
        assert local_keys()[1] & K.AUTOGRAD
    assert (x * 2).grad_fn is not None


def test_auto_dispatch_below_autograd_still_bumps_nothing_but_runs():
    x = og.tensor([2.0], requires_grad=True)
    with AutoDispatchBelowAutograd():
        y = og.exp(x)
    assert y.grad_fn is None and not y.requires_grad


def test_include_guard_adds_the_python_key_only_with_a_mode():
    # An included Python key with no mode pushed falls back to the backend.
    with IncludeDispatchKeyGuard(K.PYTHON):
        assert (og.ones(2) + 1).tolist() == [2.0, 2.0]


def test_redispatch_runs_the_kernel_for_the_given_keys():
    x = og.tensor([1.0], requires_grad=True)
    out = aten.mul.Tensor.redispatch(K.CPU, x, x)
    assert out.grad_fn is None and out.tolist() == [1.0]
    recorded = aten.mul.Tensor.redispatch(compute_keyset(x, x), x, x)
    assert type(recorded.grad_fn).__name__ == "MulBackward0"


def test_kernel_lookup_is_cached_per_key_set():
    op = aten.neg.default
    op.kernels.clear()
    _tls.set_process_flag("test: the full path", True)  # the plain path skips the lookup
    try:
        og.neg(og.ones(1))
    finally:
        _tls.set_process_flag("test: the full path", False)
    keyset = compute_keyset(og.ones(1))
    assert keyset in op.kernels
    assert op.kernel_for(keyset) is op.kernels[keyset]


def test_ops_without_an_inplace_or_view_kernel_fall_through_that_key():
    op = aten.mul.Tensor
    assert not op.has_kernel_for_dispatch_key("ADInplaceOrView")
    assert aten.view.default.has_kernel_for_dispatch_key("ADInplaceOrView")
    below_autograd = K.AD_INPLACE_OR_VIEW | K.CPU
    assert op.kernel_for(below_autograd) is op._kernels[K.CPU]


def test_an_op_without_a_backend_kernel_raises_not_implemented():
    op = define("opgrad_test::nothing(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match="Could not run 'opgrad_test::nothing'"):
        op.redispatch(K.CPU, og.ones(1))


def test_registered_kernels_replace_the_cached_choice():
    op = define("opgrad_test::twice(Tensor x) -> Tensor")
    op.register_kernel(K.CPU, lambda keyset, x: x + x)
    assert op.redispatch(K.CPU, og.ones(1)).tolist() == [2.0]
    op.register_kernel(K.CPU, lambda keyset, x: x * 3)
    assert op.redispatch(K.CPU, og.ones(1)).tolist() == [3.0]


def test_mode_sees_ops_after_autograd_and_the_node_exists():
    x = og.tensor([1.0, 2.0], requires_grad=True)
    m = og.ones(2, 2)
    with Recorder() as mode:
        y = og.matmul(m, x)
    assert mode.log == ["aten.mv.default"]
    assert type(y.grad_fn).__name__ == "MvBackward0"


def test_mode_is_popped_while_its_handler_runs():
    seen = []

    class Inspect(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(list(_get_current_dispatch_mode_stack()))
            return func(*args, **(kwargs or {}))

    one = og.ones(1)
    with Inspect() as mode:
        one + 1
        assert _get_current_dispatch_mode_stack() == [mode]
    assert seen == [[]]
    assert _get_current_dispatch_mode_stack() == []


def test_modes_are_thread_local():
    other_thread_calls = []

    def work():
        with Recorder() as inner:
            og.ones(1) * 2
        other_thread_calls.extend(inner.log)

    with Recorder() as mode:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert mode.log == []
    assert other_thread_calls == ["aten.ones.default", "aten.mul.Tensor"]


def test_grad_mode_is_thread_local():
    results = []

    def work():
        results.append(og.is_grad_enabled())

    with og.no_grad():
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert results == [True]
