"""The root gradients of a backward call, against PyTorch: all of them are validated
(reduced, cast to their input's dtype) before any is routed, and a converted one is
never stolen by a leaf.

PyTorch validates the root gradients once, up front, and its GraphRoot holds the results.
"""

from __future__ import annotations

import pytest

from torch_oracle import aten_log, assert_same

pytestmark = pytest.mark.usefixtures("fresh_global_modes")


def three_roots_on_one_input(lib):
    """Three root gradients for the same output, the last one of another dtype: its cast
    comes before the additions that sum the three."""
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    grads = [lib.ones(2), lib.ones(2), lib.ones(2, dtype=lib.float64)]
    log = aten_log(lib, lambda: lib.autograd.backward([y, y, y], grads))
    return log, x.grad.tolist()


def test_every_root_gradient_is_cast_before_any_is_added(torch):
    assert_same(torch, three_roots_on_one_input)


def converted_root_gradient_reaches_a_leaf(lib):
    """A root gradient cast for a leaf's input is a copy nobody holds but the engine, yet
    the leaf copies it, as PyTorch's GraphRoot keeps it."""
    x = lib.ones(2, requires_grad=True)
    log = aten_log(lib, lambda: x.backward(lib.ones(2, dtype=lib.float64)))
    return log, x.grad.tolist()


def test_a_converted_root_gradient_is_copied_into_the_leaf(torch):
    assert_same(torch, converted_root_gradient_reaches_a_leaf)
