"""Which Python values an op takes for its arguments, and PyTorch's error when it does not.

Only PyTorch's arithmetic ops (add, sub, mul, div and their in-place forms) take a
Python number for a Tensor argument; every other op refuses it, with a TypeError from
the Python API and a RuntimeError from ``ops.aten``. A 0-dim tensor stands for a number
(Scalar) only while it does not require grad, and that choice is never cached by the
argument classes alone (a 3-element tensor of the same class must still be refused).
"""

import pytest

from torch_oracle import assert_same, outcome, result_scenario

CASES = {
    # numbers for tensors: refused outside the arithmetic ops
    "maximum(x, 2)": lambda lib, T: lib.maximum(T([1.0]), 2),
    "maximum(2, x)": lambda lib, T: lib.maximum(2, T([1.0])),
    "x.maximum(2)": lambda lib, T: T([1.0]).maximum(2),
    "x.maximum(None)": lambda lib, T: T([1.0]).maximum(None),
    "mm(x, 2)": lambda lib, T: lib.mm(T([[1.0]]), 2),
    "x.mm(2)": lambda lib, T: T([[1.0]]).mm(2),
    "mm(x, 'a')": lambda lib, T: lib.mm(T([[1.0]]), "a"),
    "bmm(x, 2)": lambda lib, T: lib.bmm(T([[[1.0]]]), 2),
    "matmul(x, 2)": lambda lib, T: lib.matmul(T([[1.0]]), 2),
    "dot(x, 2)": lambda lib, T: lib.dot(T([1.0]), 2),
    "dot(x, None)": lambda lib, T: lib.dot(T([1.0]), None),
    "x.dot([1.0])": lambda lib, T: T([1.0]).dot([1.0]),
    "exp(2)": lambda lib, T: lib.exp(2),
    "neg(2)": lambda lib, T: lib.neg(2),
    "relu(True)": lambda lib, T: lib.relu(True),
    "sum(2)": lambda lib, T: lib.sum(2),
    "mean(2.0)": lambda lib, T: lib.mean(2.0),
    "t(2)": lambda lib, T: lib.t(2),
    "x.expand_as(2)": lambda lib, T: T([1.0]).expand_as(2),
    "x @ 2": lambda lib, T: T([[1.0]]) @ 2,
    "2 @ x": lambda lib, T: 2 @ T([[1.0]]),
    "cat([x, 2])": lambda lib, T: lib.cat([T([1.0]), 2]),
    "stack([x, 2.0])": lambda lib, T: lib.stack([T([1.0]), 2.0]),
    "ops.aten.mm.default(x, 2)": lambda lib, T: lib.ops.aten.mm.default(T([[1.0]]), 2),
    "ops.aten.maximum.default(2, x)": lambda lib, T: lib.ops.aten.maximum.default(2, T([1.0])),
    "ops.aten.t(2)": lambda lib, T: lib.ops.aten.t(2),
    "x.add_('a')": lambda lib, T: T([1.0]).add_("a"),
    "mul(x, 'a')": lambda lib, T: lib.mul(T([1.0]), "a"),
    "ops.aten.mul.Tensor(x, 'a')": lambda lib, T: lib.ops.aten.mul.Tensor(T([1.0]), "a"),
    # ... and taken by them
    "mul(2, x)": lambda lib, T: lib.mul(2, T([1.0])),
    "add(2, x)": lambda lib, T: lib.add(2, T([1.0])),
    "div(2, x)": lambda lib, T: lib.div(2, T([1.0])),
    "sub(2, x)": lambda lib, T: lib.sub(2, T([1.0])),
    "x.add(2)": lambda lib, T: T([1]).add(2),
    "x.mul_(2)": lambda lib, T: T([1]).mul_(2),
    "ops.aten.add.Tensor(x, 2)": lambda lib, T: lib.ops.aten.add.Tensor(T([1.0]), 2),
    # numbers through Scalar overloads
    "where(c, 2, 3)": lambda lib, T: lib.where(T([True]), 2, 3),
    "where(c, 2.0, x)": lambda lib, T: lib.where(T([True]), 2.0, T([1])),
    "eq(x, 2)": lambda lib, T: lib.eq(T([1.0]), 2),
    "pow(2, x)": lambda lib, T: lib.pow(2, T([1.0])),
    "rsub(x, 2)": lambda lib, T: lib.rsub(T([1.0]), 2),
    "rsub(2, x)": lambda lib, T: lib.rsub(2, T([1.0])),
    # a 0-dim tensor for a Scalar
    "clamp(x, 0-d, 2)": lambda lib, T: lib.clamp(T([1.0, 2.0]), T(1.5), 2),
    "add(x, 0-d requiring grad)": lambda lib, T: lib.add(T([1.0]), T(2.0, requires_grad=True)),
    # the one signature's own complaints
    "exp(x, 2)": lambda lib, T: lib.exp(T([1.0]), 2),
    "exp()": lambda lib, T: lib.exp(),
    "exp(x, foo=1)": lambda lib, T: lib.exp(T([1.0]), foo=1),
    "transpose(x, 0, 'a')": lambda lib, T: lib.transpose(T([1.0]), 0, "a"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_arguments_as_torch_takes_them(torch, name):
    assert_same(torch, result_scenario(CASES[name]))


def test_a_tensor_standing_for_a_scalar_is_not_remembered_by_its_class(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0])
        first = outcome(lambda: lib.clamp(x, lib.tensor(1.5), 2).tolist())
        again = outcome(lambda: lib.clamp(x, lib.tensor([1.5, 1.0, 1.0]), 2))
        return first, again[0]

    got = scenario(__import__("opgrad"))
    assert got[0] == ("ok", [1.5, 2.0])
    assert got[1] == "TypeError"
    assert got[1] == scenario(torch)[1]


def test_an_op_packet_no_overload_takes_raises_torchs_runtime_error(torch):
    """``ops.aten.<op>(...)`` tries every overload's schema; when none takes the call, a
    RuntimeError lists why each one did not (torch also has overloads opgrad lacks, so
    only the first reason is compared)."""

    def first_reason(lib):
        kind, text = outcome(lambda: lib.ops.aten.mm(lib.ones(2, 2)))
        return kind, text.splitlines()[:2]

    got, expected = first_reason(__import__("opgrad")), first_reason(torch)
    assert got == expected
    assert got[1][0] == "Overloaded LIB operator invoked from Python failed to match any schema:"


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.ones(2, 3).unsqueeze(True),
        lambda lib: lib.ones(2, 3).repeat_interleave(True, dim=0),
        lambda lib: lib.ones(2, 3).transpose(False, 1),
    ],
    ids=["unsqueeze", "repeat_interleave", "transpose"],
)
def test_a_bool_is_not_an_int_argument(torch, call):
    """PyTorch's parser refuses True where an int goes (``operator.index(True)`` is 1)."""
    import opgrad

    expected = outcome(lambda: call(torch))
    got = outcome(lambda: call(opgrad))
    assert expected[0] == got[0] == "TypeError"
    assert "bool" in expected[1] and "bool" in got[1]
