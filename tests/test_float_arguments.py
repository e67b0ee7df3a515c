"""A schema ``float`` argument is a double, whatever number the caller gives: ints, bools,
numpy numbers and one-element tensors convert (so saved fields read 2.0 for 2), anything
else is refused with PyTorch's error for the call site."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import outcome

VALUES = {
    "int": lambda lib: 2,
    "bool": lambda lib: True,
    "numpy float32": lambda lib: np.float32(0.5),
    "numpy int64": lambda lib: np.int64(3),
    "0-dim float tensor": lambda lib: lib.tensor(0.5),
    "0-dim int tensor": lambda lib: lib.tensor(2),
    "huge int": lambda lib: 2**70,
}
REFUSED = {"str": "1", "None": None}


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("op", ["smooth_l1_loss", "huber_loss"])
def test_aten_float_argument_converts_as_torch(torch, op, value):
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        y = getattr(lib.ops.aten, op)(x, lib.zeros(3), 1, VALUES[value](lib))
        saved = y.grad_fn._saved_beta if op == "smooth_l1_loss" else y.grad_fn._saved_delta
        return repr(saved), y.item()

    assert outcome(lambda: scenario(og)) == outcome(lambda: scenario(torch))


@pytest.mark.parametrize("value", REFUSED)
def test_aten_float_argument_refuses_a_non_number_as_torch(torch, value):
    def scenario(lib):
        return lib.ops.aten.smooth_l1_loss(lib.ones(3), lib.zeros(3), 1, REFUSED[value])

    got, expected = outcome(lambda: scenario(og)), outcome(lambda: scenario(torch))
    phrase = "Expected a value of type 'float' for argument 'beta' but instead found type"
    assert got[0] == expected[0] == "RuntimeError"
    assert phrase in got[1] and phrase in expected[1]


def test_functional_float_argument_is_saved_as_a_float(torch):
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        y = lib.nn.functional.smooth_l1_loss(x, lib.zeros(3), beta=2)
        return repr(y.grad_fn._saved_beta)

    assert scenario(og) == scenario(torch)
