"""Ops of the foundation on dtypes and shapes at their edges, against PyTorch: bool
inputs (refused with torch's error, or computed as torch does), integer powers with
negative exponents, reductions over the one dim of a 0-d tensor, Scalars that take no
part in type promotion, and the dtype errors of the matrix products.
"""

import pytest

from torch_oracle import assert_same, result_scenario

CASES = {
    # integer pow: only a Python-number exponent refuses negative powers
    "int ** negative int tensor": lambda lib, T: lib.pow(
        T([2, 1, -1, 0, -2, -1]), T([-1, -2, -3, -1, -2, -2])
    ),
    "int ** negative 0-d tensor": lambda lib, T: lib.pow(T([2, 1]), T(-1)),
    "int32 ** int64 negative": lambda lib, T: lib.pow(T([2], dtype=lib.int32), T([-1])),
    "number ** int tensor": lambda lib, T: 2 ** T([-1, 0, 1]),
    "-1 ** int tensor": lambda lib, T: (-1) ** T([-1, -2, -3]),
    "1 ** int tensor": lambda lib, T: 1 ** T([-1, -2]),
    "int tensor ** negative number": lambda lib, T: T([2]) ** -1,
    "int tensor ** negative float": lambda lib, T: T([2]) ** -1.0,
    # bool pow
    "bool ** bool tensor": lambda lib, T: lib.pow(T([True]), T([False])),
    "bool ** False": lambda lib, T: lib.pow(T([True, False]), False),
    "bool ** True": lambda lib, T: lib.pow(T([True, False]), True),
    "bool ** 2": lambda lib, T: lib.pow(T([True, False]), 2),
    "bool ** 1.5": lambda lib, T: lib.pow(T([True, False]), 1.5),
    "2 ** bool tensor": lambda lib, T: 2 ** T([True, False]),
    "True ** bool tensor": lambda lib, T: True ** T([True, False]),
    "bool ** int tensor": lambda lib, T: lib.pow(T([True]), T([2])),
    # bool unary ops
    "relu bool": lambda lib, T: lib.relu(T([True])),
    "relu_ bool": lambda lib, T: T([True]).relu_(),
    "abs bool": lambda lib, T: lib.abs(T([True])),
    "abs_ bool": lambda lib, T: T([True]).abs_(),
    "neg bool": lambda lib, T: -T([True]),
    "neg_ bool": lambda lib, T: T([True]).neg_(),
    "sign bool": lambda lib, T: lib.sign(T([True, False])),
    "sgn bool": lambda lib, T: lib.sgn(T([True, False])),
    "clamp bool, int min": lambda lib, T: lib.clamp(T([True]), min=0),
    "clamp bool, bool max": lambda lib, T: lib.clamp(T([True]), max=True),
    "clamp bool, bool min": lambda lib, T: lib.clamp(T([True]), min=False),
    "clamp bool, both": lambda lib, T: lib.clamp(T([True]), False, True),
    "threshold_backward bool": lambda lib, T: lib.ops.aten.threshold_backward(
        T([True]), T([True]), 0
    ),
    # threshold takes no part in type promotion
    "threshold_backward int, float threshold": lambda lib, T: lib.ops.aten.threshold_backward(
        T([1, 2]), T([0, 1]), 0.5
    ),
    "threshold_backward float32 grad, float64 input": lambda lib, T: (
        lib.ops.aten.threshold_backward(T([1.0, 2.0]), T([0.0, 1.0], dtype=lib.float64), 0.5)
    ),
    # reductions over a 0-d tensor's one dim
    "sum 0-d over dim 0": lambda lib, T: lib.sum(T(3.0), 0),
    "sum 0-d over dim -1, keepdim": lambda lib, T: lib.sum(T(3.0), -1, keepdim=True),
    "sum 0-d int over dim 0": lambda lib, T: lib.sum(T(3), 0),
    "mean 0-d over (0,)": lambda lib, T: lib.mean(T(3.0), (0,)),
    "sum 0-d over dim 1": lambda lib, T: lib.sum(T(3.0), 1),
    "sum 0-d over (0, -1)": lambda lib, T: lib.sum(T(3.0), (0, -1)),
    "sum over (1, -1)": lambda lib, T: lib.sum(lib.ones(2, 3), (1, -1)),
    # shapes
    "reshape to a negative size": lambda lib, T: T([[1.0, 2.0]]).reshape(-2, -1),
    "view as a negative size": lambda lib, T: T([[1.0, 2.0]]).view(1, -3),
    # matrix products
    "mv mat/vec dtypes": lambda lib, T: lib.mv(T([[True]]), T([1.0])),
    "mv float64 mat, float32 vec": lambda lib, T: lib.mv(T([[1.0]], dtype=lib.float64), T([1.0])),
    "dot dtypes": lambda lib, T: lib.dot(T([1.0]), T([1])),
    "bmm dtypes": lambda lib, T: lib.bmm(T([[[1]]]), T([[[1.0]]])),
    "mm bool": lambda lib, T: lib.mm(T([[True]]), T([[True]])),
    "bmm bool": lambda lib, T: lib.bmm(T([[[True]]]), T([[[True]]])),
    "mv bool": lambda lib, T: lib.mv(T([[True]]), T([True])),
    "dot bool": lambda lib, T: lib.dot(T([True]), T([True])),
    "mm int": lambda lib, T: lib.mm(T([[2]]), T([[3]])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_edge_dtypes_and_shapes(torch, name):
    assert_same(torch, result_scenario(CASES[name]))


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_reducing_a_0d_tensor_over_its_dim_differentiates(torch, reduction, keepdim):
    def scenario(lib):
        x = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        y = getattr(lib, reduction)(x * x, 0, keepdim=keepdim)
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.backward()
        return y.grad_fn.name(), y.item(), g.item(), x.grad.item()

    assert_same(torch, scenario)


def test_refused_in_place_ops_leave_the_tensor_unchanged():
    import opgrad as og

    t = og.tensor([True, False])
    for method in ("relu_", "abs_", "neg_"):
        with pytest.raises((RuntimeError, NotImplementedError)):
            getattr(t, method)()
        assert t.tolist() == [True, False] and t._version == 0
