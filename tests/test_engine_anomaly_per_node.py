"""Anomaly mode is read at every node, as PyTorch's engine reads it: switched on by a hook
in the middle of a plain ``loss.backward()``, it checks the nodes that run after."""

from __future__ import annotations

import warnings

import pytest

from torch_oracle import assert_same, outcome

pytestmark = pytest.mark.usefixtures("fresh_global_modes")


def anomaly_switched_on_by_a_hook(lib):
    with warnings.catch_warnings():
        # numpy's invalid-value warning, and the forward traceback anomaly mode warns with
        warnings.simplefilter("ignore")
        x = lib.tensor([-1.0], requires_grad=True)
        y = x.sqrt() * 2  # SqrtBackward0 runs after y's hook and returns nan
        y.register_hook(lambda g: lib.autograd.set_detect_anomaly(True) and None)
        return outcome(lambda: y.sum().backward())


def test_anomaly_mode_switched_on_during_backward_checks_later_nodes(torch):
    assert_same(torch, anomaly_switched_on_by_a_hook)
