"""matmul decomposes exactly as PyTorch 2.13 does: same aten ops, same last node, same grads."""

import numpy as np
import pytest

import opgrad as og
from torch_oracle import logging_mode_class

SHAPES = [
    ((3,), (3,)),
    ((3, 4), (4,)),
    ((4,), (4, 3)),
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((3,), (2, 3, 4)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 6)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (1, 1, 4, 5)),
    ((1, 3, 4), (2, 4, 5)),
    ((1, 3, 4), (4, 5)),
    ((2, 3, 4), (1, 4, 5)),
    ((1, 2, 3, 4), (1, 4, 5)),
    ((5,), (1, 5, 2)),
    ((2, 3, 4), (2, 1, 4, 5)),
    ((1, 3, 4), (1, 4, 5)),
    ((2, 3, 4), (4, 2)),
    ((1, 3), (4, 3, 5)),  # the transposed result is contiguous: no copy
    ((3, 1), (4, 1, 5)),
]
GRADS = [(True, True), (True, False), (False, True)]


def _run(lib, a, b, grads):
    ta = lib.tensor(a, requires_grad=grads[0])
    tb = lib.tensor(b, requires_grad=grads[1])
    with logging_mode_class(lib)() as mode:
        out = ta @ tb
    out.sum().backward()
    got = [t.grad.numpy() for t in (ta, tb) if t.requires_grad]
    return mode.log, type(out.grad_fn).__name__, out.detach().numpy(), got


@pytest.mark.parametrize("grads", GRADS, ids=lambda g: "rg" + "".join("1" if x else "0" for x in g))
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}@{s[1]}".replace(" ", ""))
def test_matmul_follows_pytorch(torch, shapes, grads):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    ops, node, value, got = _run(og, a, b, grads)
    t_ops, t_node, t_value, expected = _run(torch, a, b, grads)
    assert ops == t_ops
    assert node == t_node
    np.testing.assert_allclose(value, t_value, rtol=1e-12)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_matmul_of_0d_is_an_error():
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
        og.tensor(1.0) @ og.ones(2)


def test_matmul_shape_mismatch_is_an_error():
    with pytest.raises(
        RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"
    ):
        og.ones(2, 3) @ og.ones(4, 5)
