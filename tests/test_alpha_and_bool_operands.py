"""add/sub/rsub: PyTorch's checks of ``alpha`` against the result dtype, and its refusal
of bool operands in a subtraction (a Python bool counts as a bool tensor).

alpha takes no part in type promotion: it is checked against the promoted dtype and
cast to it (a bool result gets ``alpha * b`` as a logical and).
"""

import pytest

from torch_oracle import assert_same, result_scenario

ALPHA_CASES = {
    "int tensors, float alpha": lambda lib, T: lib.add(T([1, 2]), T([1, 2]), alpha=0.5),
    "int tensors, alpha 1.0": lambda lib, T: lib.add(T([1]), T([1]), alpha=1.0),
    "int tensors, int alpha": lambda lib, T: lib.sub(T([5]), T([1]), alpha=3),
    "float tensors, bool alpha": lambda lib, T: lib.add(T([1.0]), T([1.0]), alpha=True),
    "bool tensors, bool alpha": lambda lib, T: lib.add(T([True]), T([False]), alpha=True),
    "bool tensors, int alpha": lambda lib, T: lib.add(T([False]), T([True]), alpha=2),
    "bool tensors, alpha 0": lambda lib, T: lib.add(T([True]), T([True]), alpha=0),
    "bool tensor + int, bool alpha": lambda lib, T: lib.add(T([True]), 1, alpha=True),
    "int tensors, complex alpha": lambda lib, T: lib.add(T([1]), T([1]), alpha=1j),
    "float tensors, complex alpha": lambda lib, T: lib.add(T([1.0]), T([1.0]), alpha=1j),
    "rsub number, float alpha": lambda lib, T: lib.rsub(T([1]), 2, alpha=0.5),
    "sub number, float alpha": lambda lib, T: lib.sub(T([1]), 2, alpha=0.5),
    "in-place, float alpha": lambda lib, T: T([1]).add_(T([1]), alpha=0.5),
    "promoted to float": lambda lib, T: lib.add(T([1]), T([1.5]), alpha=2.5),
    "float32, float alpha": lambda lib, T: lib.add(
        T([1.0], dtype=lib.float32), T([3.0], dtype=lib.float32), alpha=0.1
    ),
    "int64 overflow": lambda lib, T: lib.add(T([1]), T([1]), alpha=2**63),
    "int32 overflow": lambda lib, T: lib.add(
        T([1], dtype=lib.int32), T([1], dtype=lib.int32), alpha=2**31
    ),
    "int64 lowest": lambda lib, T: lib.add(T([1]), T([1]), alpha=-(2**63)),
    "out=, float alpha": lambda lib, T: lib.add(T([1]), T([2]), alpha=0.5, out=lib.empty(1)),
}


@pytest.mark.parametrize("name", list(ALPHA_CASES))
def test_alpha_checked_against_the_result_dtype(torch, name):
    assert_same(torch, result_scenario(ALPHA_CASES[name]))


SUB_CASES = {
    "bool - int tensor": lambda lib, T: T([True]) - T([1]),
    "int - bool tensor": lambda lib, T: T([1]) - T([True]),
    "bool tensor - int": lambda lib, T: T([True]) - 1,
    "int - bool tensor (rsub)": lambda lib, T: 1 - T([True]),
    "bool - bool": lambda lib, T: T([True]) - T([True]),
    "rsub bool tensor": lambda lib, T: lib.rsub(T([True]), T([1])),
    "bool tensor - float": lambda lib, T: T([True]) - 1.5,
    "float tensor - True": lambda lib, T: T([1.0]) - True,
    "in-place bool": lambda lib, T: T([True]).sub_(T([1])),
    "sub_ with bool other": lambda lib, T: T([1.0]).sub_(T([False])),
    "rsub.Scalar on bool": lambda lib, T: lib.ops.aten.rsub.Scalar(T([True]), 1),
    "int - int": lambda lib, T: T([3]) - T([1]),
}


@pytest.mark.parametrize("name", list(SUB_CASES))
def test_subtraction_refuses_bool_operands(torch, name):
    assert_same(torch, result_scenario(SUB_CASES[name]))


def test_refused_in_place_subtraction_leaves_the_tensor_unchanged():
    import opgrad as og

    t = og.tensor([1.0, 2.0])
    version = t._version
    with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
        t.sub_(og.tensor([True, False]))
    with pytest.raises(RuntimeError, match="argument alpha must not be a complex"):
        t.add_(og.tensor([1.0, 1.0]), alpha=1j)
    assert t.tolist() == [1.0, 2.0] and t._version == version
