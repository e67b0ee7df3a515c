"""Python's protocols over tensors as torch answers them (issue 14 point 6): max() and
sorted() of a 1-D tensor, len, iteration (one UnbindBackward0 node), ``in``, and a
comparison in ``if`` raising torch's ambiguity error."""

from __future__ import annotations

import pytest

import opgrad as og
from torch_oracle import assert_same, assert_same_error, logging_mode_class


def _v(lib):
    return lib.tensor([3.0, 1.0, 2.0, 1.0], requires_grad=True)


def test_max_and_sorted_of_a_vector(torch):
    def scenario(lib):
        x = _v(lib)
        top = max(x)
        ordered = sorted(x)
        grad = lib.autograd.grad(top + ordered[0] * 10, x)[0]
        return (
            top.item(),
            [t.item() for t in ordered],
            type(top.grad_fn).__name__,
            grad.tolist(),
            x.max().item(),
        )

    assert_same(torch, scenario)


def test_iteration_unbinds_once_and_len_counts_rows(torch):
    def scenario(lib):
        m = lib.arange(6.0).reshape(3, 2)
        with logging_mode_class(lib)() as mode:
            rows = [r.tolist() for r in m]
        return len(m), rows, mode.log

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "element", [2.0, 5, True, "tensor", "tensor_absent"], ids=lambda e: str(e)
)
def test_in_asks_whether_any_element_equals(torch, element):
    def scenario(lib):
        x = _v(lib)
        probe = {"tensor": lib.tensor(1.0), "tensor_absent": lib.tensor([7.0])}.get(
            element, element
        )
        with logging_mode_class(lib)() as mode:
            found = probe in x
        return found, mode.log

    assert_same(torch, scenario)


def test_in_refuses_other_objects(torch):
    assert_same_error(torch, lambda lib: "a" in _v(lib), RuntimeError, "only supports Tensor")


def test_a_comparison_in_if_is_ambiguous(torch):
    def scenario(lib):
        x = _v(lib)
        if x == x:
            pass

    assert_same_error(torch, scenario, RuntimeError, "is ambiguous")


def test_iterating_a_0d_tensor_and_len_of_it_fail_as_torch(torch):
    assert_same_error(torch, lambda lib: iter(lib.tensor(1.0)), TypeError, "0-d tensor")
    assert_same_error(torch, lambda lib: len(lib.tensor(1.0)), TypeError, "0-d tensor")
