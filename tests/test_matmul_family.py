"""The matmul family of issue 15 (addmv, addr, addbmm, vdot, outer/ger, inner, kron,
tensordot, chain_matmul, linalg.multi_dot, matrix_power, cross, linalg.cross) against
torch: values, the aten calls a dispatch mode sees, the grad_fn chain and saved fields,
gradients, second derivatives, tangents, in-place and out= variants, dtypes and refusals.
torch's own samples run in test_opinfo.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent
from torch_oracle import (
    aten_log,
    assert_same,
    assert_same_error,
    grad_fn_chain,
    result_scenario,
)

# name: (input specs, fn(F, lib, *inputs))
GRAPHS = {
    "addmv": ([(3,), (3, 4), (4,)], lambda F, lib, s, m, v: lib.addmv(s, m, v)),
    "addmv_scalars": (
        [((), True), (3, 4), (4,)],
        lambda F, lib, s, m, v: lib.addmv(s, m, v, beta=0.5, alpha=-2),
    ),
    "addmv_method_beta0": ([(3,), (3, 4), (4,)], lambda F, lib, s, m, v: s.addmv(m, v, beta=0)),
    "addmv_only_vec": (
        [((3,), False), ((3, 4), False), (4,)],
        lambda F, lib, s, m, v: lib.addmv(s, m, v, alpha=3),
    ),
    "addr": ([(3, 1), (3,), (4,)], lambda F, lib, s, a, b: lib.addr(s, a, b, beta=2, alpha=-1)),
    "addr_method": ([(3, 4), (3,), (4,)], lambda F, lib, s, a, b: s.addr(a, b)),
    "addbmm": (
        [(3, 5), (2, 3, 4), (2, 4, 5)],
        lambda F, lib, s, a, b: lib.addbmm(s, a, b, beta=0.5, alpha=3),
    ),
    "addbmm_broadcast": ([(5,), (2, 3, 4), (2, 4, 5)], lambda F, lib, s, a, b: s.addbmm(a, b)),
    "vdot": ([(3,), (3,)], lambda F, lib, a, b: lib.vdot(a, b)),
    "outer": ([(3,), (4,)], lambda F, lib, a, b: lib.outer(a, b)),
    "ger": ([(3,), (4,)], lambda F, lib, a, b: a.ger(b)),
    "inner": ([(2, 3), (4, 3)], lambda F, lib, a, b: lib.inner(a, b)),
    "inner_number": ([(2, 3), ((), True)], lambda F, lib, a, b: a.inner(b)),
    "inner_vectors": ([(3,), (3,)], lambda F, lib, a, b: lib.inner(a, b)),
    "kron": ([(2, 3), (4, 5)], lambda F, lib, a, b: lib.kron(a, b)),
    "kron_ranks": ([(3,), (2, 2)], lambda F, lib, a, b: a.kron(b)),
    "tensordot_count": ([(2, 3, 4), (3, 4, 5)], lambda F, lib, a, b: lib.tensordot(a, b, 2)),
    "tensordot_lists": (
        [(2, 3, 4), (4, 3, 5)],
        lambda F, lib, a, b: lib.tensordot(a, b, dims=([1, 2], [1, 0])),
    ),
    "tensordot_zero": ([(2, 3), (4, 5)], lambda F, lib, a, b: lib.tensordot(a, b, dims=0)),
    "tensordot_summed_dim": (
        [(2, 1, 4), (3, 4, 5)],
        lambda F, lib, a, b: lib.tensordot(a, b, dims=([1, 2], [0, 1])),
    ),
    "tensordot_full_dot": (
        [(3, 4), (3, 4)],
        lambda F, lib, a, b: lib.tensordot(a, b, dims=([0, 1], [0, 1])),
    ),
    "tensordot_full_mul_sum": (
        [(3, 4), (4, 3)],
        lambda F, lib, a, b: lib.tensordot(a, b, dims=([0, 1], [1, 0])),
    ),
    "chain_matmul_two": ([(2, 3), (3, 4)], lambda F, lib, a, b: lib.chain_matmul(a, b)),
    "chain_matmul_one": ([(2, 3)], lambda F, lib, a: lib.chain_matmul(a)),
    "chain_matmul_four": (
        [(2, 3), (3, 40), (40, 5), (5, 6)],
        lambda F, lib, a, b, c, d: lib.chain_matmul(a, b, c, d),
    ),
    "multi_dot_vectors": (
        [(3,), (3, 4), (4,)],
        lambda F, lib, a, b, c: lib.linalg.multi_dot([a, b, c]),
    ),
    "multi_dot_dot": ([(3,), (3,)], lambda F, lib, a, b: lib.linalg.multi_dot([a, b])),
    "multi_dot_three_right": (
        [(2, 3), (3, 4), (4,)],
        lambda F, lib, a, b, c: lib.linalg.multi_dot((a, b, c)),
    ),
    "multi_dot_three_left": (
        [(3,), (3, 4), (4, 5)],
        lambda F, lib, a, b, c: lib.linalg.multi_dot([a, b, c]),
    ),
    "multi_dot_five": (
        [(5, 2), (2, 7), (7, 3), (3, 9), (9, 1)],
        lambda F, lib, *t: lib.linalg.multi_dot(t),
    ),
    "matrix_power_0": ([(3, 3)], lambda F, lib, a: lib.matrix_power(a, 0)),
    "matrix_power_0_batch": ([(2, 3, 3)], lambda F, lib, a: lib.matrix_power(a, 0)),
    "matrix_power_1": ([(3, 3)], lambda F, lib, a: a.matrix_power(1)),
    "matrix_power_2": ([(3, 3)], lambda F, lib, a: lib.matrix_power(a, 2)),
    "matrix_power_3": ([(3, 3)], lambda F, lib, a: lib.linalg.matrix_power(a, 3)),
    "matrix_power_5_batch": ([(2, 3, 3)], lambda F, lib, a: lib.matrix_power(a, 5)),
    "matrix_power_6": ([(3, 3)], lambda F, lib, a: lib.linalg.matrix_power(a, 6)),
    "cross_dim": ([(3, 4), (3, 4)], lambda F, lib, a, b: a.cross(b, dim=0)),
    "cross_negative_dim": ([(2, 3), (2, 3)], lambda F, lib, a, b: lib.cross(a, b, -1)),
    "linalg_cross": ([(4, 3), (1, 3)], lambda F, lib, a, b: lib.linalg.cross(a, b)),
    "linalg_cross_dim": ([(3, 2), (3, 2)], lambda F, lib, a, b: lib.linalg.cross(a, b, dim=0)),
}

# cdist: p 2 by a matrix product (compute_mode, or more than 25 rows) is _euclidean_dist under
# a view, with a batch expanded (and cloned where the expansion broadcasts); every other p or
# mode is _cdist_forward, whose backward torch leaves without a derivative and forward mode
CDIST = {
    "cdist_p2_small": ([(3, 4), (5, 4)], lambda F, lib, a, b: lib.cdist(a, b)),
    "cdist_p1": ([(3, 4), (5, 4)], lambda F, lib, a, b: lib.cdist(a, b, p=1.0)),
    "cdist_p3": ([(3, 4), (5, 4)], lambda F, lib, a, b: lib.cdist(a, b, p=3.0)),
    "cdist_p_half": ([(3, 4), (5, 4)], lambda F, lib, a, b: lib.cdist(a, b, p=0.5)),
    "cdist_p_inf": ([(3, 4), (5, 4)], lambda F, lib, a, b: lib.cdist(a, b, p=float("inf"))),
    "cdist_p0": ([(3, 4), (5, 4)], lambda F, lib, a, b: lib.cdist(a, b, p=0.0)),
    "cdist_batch": ([(2, 3, 4), (2, 5, 4)], lambda F, lib, a, b: lib.cdist(a, b, p=1.5)),
    "cdist_broadcast": ([(2, 1, 3, 4), (3, 5, 4)], lambda F, lib, a, b: lib.cdist(a, b)),
    "cdist_no_mm_large": (
        [(30, 4), (26, 4)],
        lambda F, lib, a, b: lib.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"),
    ),
    "cdist_empty": ([(0, 4), (5, 4)], lambda F, lib, a, b: lib.cdist(a, b)),
}
EUCLID = {
    "euclid_large": ([(30, 4), (5, 4)], lambda F, lib, a, b: lib.cdist(a, b)),
    "euclid_mode": (
        [(3, 4), (5, 4)],
        lambda F, lib, a, b: lib.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
    ),
    "euclid_batch": (
        [(2, 3, 4), (5, 4)],
        lambda F, lib, a, b: lib.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
    ),
    "euclid_broadcast": (
        [(2, 1, 3, 4), (3, 5, 4)],
        lambda F, lib, a, b: lib.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
    ),
}
# einsum without opt_einsum, as torch contracts: left to right by sumproduct pairs (bmm)
GRAPHS.update(
    {
        "einsum_matmul": ([(2, 3), (3, 4)], lambda F, lib, a, b: lib.einsum("ij,jk->ik", a, b)),
        "einsum_list": ([(2, 3), (3, 4)], lambda F, lib, a, b: lib.einsum("ij,jk", [a, b])),
        "einsum_batch": (
            [(5, 2, 3), (5, 3, 4)],
            lambda F, lib, a, b: lib.einsum("bij,bjk->bik", a, b),
        ),
        "einsum_trace": ([(3, 3)], lambda F, lib, a: lib.einsum("ii", a)),
        "einsum_diagonal": ([(3, 3)], lambda F, lib, a: lib.einsum("ii->i", a)),
        "einsum_outer": ([(3,), (4,)], lambda F, lib, a, b: lib.einsum("i,j->ij", a, b)),
        "einsum_outer_swapped": ([(3,), (4,)], lambda F, lib, a, b: lib.einsum("i,j->ji", a, b)),
        "einsum_dot": ([(3,), (3,)], lambda F, lib, a, b: lib.einsum("i,i", a, b)),
        "einsum_sum": ([(3, 4)], lambda F, lib, a: lib.einsum("ij->", a)),
        "einsum_transpose": ([(3, 4)], lambda F, lib, a: lib.einsum("ij->ji", a)),
        "einsum_ellipsis": (
            [(2, 3, 4), (4, 5)],
            lambda F, lib, a, b: lib.einsum("...ij,jk->...ik", a, b),
        ),
        "einsum_ellipsis_spaces": (
            [(2, 3, 4), (4,)],
            lambda F, lib, a, b: lib.einsum("...ik, ...k -> ...i", a, b),
        ),
        "einsum_ellipsis_broadcast": (
            [(2, 1, 3), (4, 3)],
            lambda F, lib, a, b: lib.einsum("...j,...j->...", a, b),
        ),
        "einsum_three": (
            [(2, 3), (3, 4), (4, 5)],
            lambda F, lib, a, b, c: lib.einsum("ij,jk,kl->il", a, b, c),
        ),
        "einsum_repeated": ([(3, 3, 4), (4,)], lambda F, lib, a, b: lib.einsum("iij,j->i", a, b)),
        "einsum_bilinear": (
            [(2, 3), (5, 3, 4), (2, 4)],
            lambda F, lib, a, b, c: lib.einsum("bn,anm,bm->ba", a, b, c),
        ),
        "einsum_sublist": (
            [(2, 3), (3, 4)],
            lambda F, lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
        ),
        "einsum_sublist_ellipsis": (
            [(2, 3, 4), (4,)],
            lambda F, lib, a, b: lib.einsum(a, [..., 1], b, [1]),
        ),
        "einsum_broadcast_sum": (
            [(3, 1), (3, 4)],
            lambda F, lib, a, b: lib.einsum("ij,ij->i", a, b),
        ),
    }
)

#: graphs without a forward-mode formula in torch (the euclidean distance)
BACKWARD_GRAPHS = {**GRAPHS, **EUCLID}


@pytest.mark.parametrize("name", sorted(BACKWARD_GRAPHS))
def test_graph_matches_torch(torch, name):
    specs, fn = BACKWARD_GRAPHS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_graph(torch, fn, specs, (name,))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_forward_mode_matches_torch(torch, name):
    specs, fn = GRAPHS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_tangent(torch, fn, specs, (name,))


def _logged(lib, name, table=None):
    specs, fn = (table or GRAPHS)[name]
    rng = np.random.default_rng(0)
    shapes = [s[0] if s and isinstance(s[-1], bool) else s for s in specs]
    inputs = [lib.tensor(rng.standard_normal(s)).requires_grad_() for s in shapes]
    box = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log = aten_log(lib, lambda: box.append(fn(lib.nn.functional, lib, *inputs)))
    return log, grad_fn_chain(box[0].grad_fn)


@pytest.mark.parametrize("name", sorted(BACKWARD_GRAPHS))
def test_aten_calls_and_grad_fn_chain_match_torch(torch, name):
    assert _logged(og, name, BACKWARD_GRAPHS) == _logged(torch, name, BACKWARD_GRAPHS)


@pytest.mark.parametrize("name", sorted(CDIST))
def test_cdist_graph_matches_torch(torch, name):
    specs, fn = CDIST[name]
    assert_same_graph(torch, fn, specs, (name,), second=False)
    assert _logged(og, name, CDIST) == _logged(torch, name, CDIST)


@pytest.mark.parametrize("name", ["cdist_p1", "cdist_p3", "cdist_p2_small"])
def test_cdist_second_derivative_and_forward_mode_are_refused_as_torch(torch, name):
    specs, fn = CDIST[name]

    def second(lib):
        a = lib.tensor(np.ones((3, 4)), requires_grad=True)
        y = fn(None, lib, a, lib.zeros(5, 4, dtype=lib.float64))
        (g,) = lib.autograd.grad(y.sum(), a, create_graph=True)
        return type(g.grad_fn).__name__, lib.autograd.grad(g.sum(), a)

    def forward(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            a = fw.make_dual(lib.ones(3, 4, dtype=lib.float64), lib.ones(3, 4, dtype=lib.float64))
            return fn(None, lib, a, lib.zeros(5, 4, dtype=lib.float64))

    assert_same_error(torch, second, NotImplementedError, "the derivative for '_cdist_backward'")
    assert_same_error(torch, forward, NotImplementedError, "forward AD with _cdist_forward")


def test_euclidean_dist_forward_mode_is_refused_as_torch(torch):
    def forward(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            a = fw.make_dual(lib.ones(30, 4, dtype=lib.float64), lib.ones(30, 4, dtype=lib.float64))
            return lib.cdist(a, lib.zeros(5, 4, dtype=lib.float64))

    assert_same_error(torch, forward, NotImplementedError, "forward AD with _euclidean_dist")


def test_tensordot_noncontiguous_side_clones_as_torch(torch):
    # a permuted side that cannot be viewed as a matrix is cloned (_unsafe_view)
    assert _logged(og, "tensordot_lists") == _logged(torch, "tensordot_lists")
    assert "aten.clone.default" in _logged(og, "tensordot_lists")[0]


@pytest.mark.parametrize(
    "op, beta, alpha",
    [("addmv", 1.5, 2.5), ("addmv", True, 3), ("addbmm", 1.5, -1.5), ("addbmm", 2, 3)],
)
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_integral_products_truncate_beta_and_alpha(torch, op, beta, alpha, dtype):
    shapes = {"addmv": ((3,), (3, 4), (4,)), "addbmm": ((3, 5), (2, 3, 4), (2, 4, 5))}[op]
    data = [np.random.default_rng(1).integers(0, 4, size=s) for s in shapes]

    def fn(lib, tensor):
        args = [tensor(d).to(getattr(lib, dtype)) for d in data]
        return getattr(lib, op)(*args, beta=beta, alpha=alpha)

    assert_same(torch, result_scenario(fn))


@pytest.mark.parametrize(
    "dtypes_, beta, alpha",
    [
        (("int64", "int64", "int64"), 2, 3),
        (("int64", "int64", "int64"), 1.5, 1),
        (("int64", "int64", "int64"), 1, 0.5),
        (("bool", "bool", "bool"), False, True),
        (("bool", "bool", "bool"), 2, 1),
        (("bool", "bool", "bool"), 1.5, 1),
        (("int64", "float32", "float32"), 1.5, 2),
        (("float32", "int64", "int64"), 1.5, 2),
        (("float32", "float64", "float32"), 0.5, 2),
        (("float16", "float16", "float16"), 0.5, 3),
        (("uint8", "uint8", "uint8"), 3, 7),
    ],
)
def test_addr_promotes_and_refuses_float_scalars_for_integral_results(torch, dtypes_, beta, alpha):
    rng = np.random.default_rng(2)
    data = [rng.integers(0, 3, size=s) for s in ((3, 4), (3,), (4,))]

    def fn(lib, tensor):
        args = [tensor(d).to(getattr(lib, t)) for d, t in zip(data, dtypes_)]
        return lib.addr(*args, beta=beta, alpha=alpha)

    assert_same(torch, result_scenario(fn))


@pytest.mark.parametrize("op", ["addmv", "addr", "addbmm"])
def test_beta_zero_ignores_nan_and_inf_in_self(torch, op):
    shapes = {
        "addmv": ((3,), (3, 4), (4,)),
        "addr": ((3, 4), (3,), (4,)),
        "addbmm": ((3, 5), (2, 3, 4), (2, 4, 5)),
    }[op]

    def fn(lib, tensor):
        s = lib.full(shapes[0], float("nan"))
        s[0] = float("inf")
        return getattr(lib, op)(s, lib.ones(*shapes[1]), lib.ones(*shapes[2]), beta=0)

    assert_same(torch, result_scenario(fn))


CASES = {
    "addmv_empty": lambda lib: lib.addmv(lib.ones(3), lib.ones(3, 0), lib.ones(0), beta=2),
    "addmv_half": lambda lib: lib.addmv(
        lib.ones(3, dtype=lib.float16),
        lib.full((3, 4), 0.1, dtype=lib.float16),
        lib.ones(4, dtype=lib.float16),
    ),
    "addmv_number_self": lambda lib: lib.addmv(lib.tensor(2.0), lib.ones(3, 4), lib.ones(4)),
    "addbmm_no_batches": lambda lib: lib.addbmm(
        lib.ones(3, 5), lib.ones(0, 3, 4), lib.ones(0, 4, 5), beta=2
    ),
    "addbmm_no_batches_beta0": lambda lib: lib.addbmm(
        lib.ones(3, 5), lib.ones(0, 3, 4), lib.ones(0, 4, 5), beta=0
    ),
    "vdot_int": lambda lib: lib.vdot(lib.arange(3), lib.arange(3)),
    "vdot_half": lambda lib: lib.vdot(
        lib.ones(3, dtype=lib.float16), lib.ones(3, dtype=lib.float16)
    ),
    "outer_promotes": lambda lib: lib.outer(lib.arange(3), lib.ones(2)),
    "inner_number_promotes": lambda lib: lib.inner(
        lib.ones(2, 3), lib.tensor(2.0, dtype=lib.float64)
    ),
    "kron_int": lambda lib: lib.kron(lib.arange(4).reshape(2, 2), lib.arange(3)),
    "kron_bool": lambda lib: lib.kron(lib.ones(2, 3, dtype=lib.bool), lib.ones(2, dtype=lib.bool)),
    "kron_empty": lambda lib: lib.kron(lib.ones(0, 3), lib.ones(2, 2)),
    "tensordot_int": lambda lib: lib.tensordot(
        lib.arange(6).reshape(2, 3), lib.arange(6).reshape(3, 2), 1
    ),
    "tensordot_tensor_dims": lambda lib: lib.tensordot(
        lib.ones(2, 3), lib.ones(3, 2), dims=lib.tensor([[1], [0]])
    ),
    "tensordot_tensor_count": lambda lib: lib.tensordot(
        lib.ones(2, 3), lib.ones(3, 2), dims=lib.tensor(1)
    ),
    "multi_dot_long": lambda lib: lib.linalg.multi_dot(
        [lib.arange(6).reshape(2, 3), lib.arange(12).reshape(3, 4), lib.arange(4)]
    ),
    "matrix_power_long": lambda lib: lib.matrix_power(lib.arange(9).reshape(3, 3), 4),
    "matrix_power_bool_0": lambda lib: lib.matrix_power(lib.ones(3, 3, dtype=lib.bool), 0),
    "matrix_power_empty_batch": lambda lib: lib.matrix_power(lib.ones(0, 2, 2), 3),
    "cross_long": lambda lib: lib.linalg.cross(
        lib.arange(6).reshape(2, 3), lib.ones(2, 3, dtype=lib.long)
    ),
    "cross_broadcast": lambda lib: lib.linalg.cross(lib.ones(1, 3), lib.arange(6.0).reshape(2, 3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_dtypes_match_torch(torch, name):
    fn = CASES[name]
    assert_same(torch, result_scenario(lambda lib, tensor: fn(lib)))


def _o(lib, *shape, dtype="float32"):
    return lib.ones(*shape, dtype=getattr(lib, dtype))


ERRORS = {
    "addmv_mat_1d": (
        lambda lib: lib.addmv(_o(lib, 3), _o(lib, 3), _o(lib, 4)),
        RuntimeError,
        "vector + matrix @ vector expected, got 1, 1, 1",
    ),
    "addmv_self_2d": (
        lambda lib: lib.addmv(_o(lib, 3, 1), _o(lib, 3, 4), _o(lib, 4)),
        RuntimeError,
        "got 2, 2, 1",
    ),
    "addmv_vec_size": (
        lambda lib: lib.addmv(_o(lib, 3), _o(lib, 3, 4), _o(lib, 5)),
        RuntimeError,
        "size mismatch, got input (3), mat (3x4), vec (5)",
    ),
    "addmv_self_size": (
        lambda lib: lib.addmv(_o(lib, 4), _o(lib, 3, 4), _o(lib, 4)),
        RuntimeError,
        "size mismatch, got input (4)",
    ),
    "addmv_mat_dtype": (
        lambda lib: lib.addmv(_o(lib, 3), _o(lib, 3, 4, dtype="float64"), _o(lib, 4)),
        RuntimeError,
        "but got Float, Double, and Float",
    ),
    "addmv_self_dtype": (
        lambda lib: lib.addmv(_o(lib, 3, dtype="float64"), _o(lib, 3, 4), _o(lib, 4)),
        RuntimeError,
        "but got Double, Float, and Float",
    ),
    "addmv_vec_dtype": (
        lambda lib: lib.addmv(_o(lib, 3), _o(lib, 3, 4), _o(lib, 4, dtype="float64")),
        RuntimeError,
        "but got Float, Float, and Double",
    ),
    "addmv_bool": (
        lambda lib: lib.addmv(
            _o(lib, 3, dtype="bool"), _o(lib, 3, 4, dtype="bool"), _o(lib, 4, dtype="bool")
        ),
        NotImplementedError,
        "addmv_impl_cpu",
    ),
    "addr_vec1_2d": (
        lambda lib: lib.addr(_o(lib, 3, 4), _o(lib, 3, 1), _o(lib, 4)),
        RuntimeError,
        "addr: Expected 1-D argument vec1, but got 2-D",
    ),
    "addr_vec2_2d": (
        lambda lib: lib.addr(_o(lib, 3, 4), _o(lib, 3), _o(lib, 4, 1)),
        RuntimeError,
        "addr: Expected 1-D argument vec2, but got 2-D",
    ),
    "addr_self_shape": (
        lambda lib: lib.addr(_o(lib, 4, 4), _o(lib, 3), _o(lib, 4)),
        RuntimeError,
        "The expanded size of the tensor (3) must match",
    ),
    "addr_int_beta": (
        lambda lib: lib.addr(
            _o(lib, 3, 4, dtype="int64"),
            _o(lib, 3, dtype="int64"),
            _o(lib, 4, dtype="int64"),
            beta=1.5,
        ),
        RuntimeError,
        "argument beta must not be a floating point number",
    ),
    "addr_int_alpha": (
        lambda lib: lib.addr(
            _o(lib, 3, 4, dtype="int64"),
            _o(lib, 3, dtype="int64"),
            _o(lib, 4, dtype="int64"),
            alpha=0.5,
        ),
        RuntimeError,
        "argument alpha must not be a floating point number",
    ),
    "addbmm_batch1_2d": (
        lambda lib: lib.addbmm(_o(lib, 3, 5), _o(lib, 3, 4), _o(lib, 2, 4, 5)),
        RuntimeError,
        "The expanded size of the tensor (4) must match the existing size (3)",
    ),
    "addbmm_batch2_2d": (
        lambda lib: lib.addbmm(_o(lib, 3, 5), _o(lib, 2, 3, 4), _o(lib, 4, 5)),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    "addbmm_batch1_4d": (
        lambda lib: lib.addbmm(_o(lib, 3, 5), _o(lib, 2, 3, 4, 1), _o(lib, 2, 4, 5)),
        RuntimeError,
        "batch1 must be a 3D tensor",
    ),
    "addbmm_batches": (
        lambda lib: lib.addbmm(_o(lib, 3, 5), _o(lib, 2, 3, 4), _o(lib, 3, 4, 5)),
        RuntimeError,
        "batch1 and batch2 must have same number of batches, got 2 and 3",
    ),
    "addbmm_sizes": (
        lambda lib: lib.addbmm(_o(lib, 3, 5), _o(lib, 2, 3, 4), _o(lib, 2, 3, 5)),
        RuntimeError,
        "Incompatible matrix sizes for bmm (3x4 and 3x5)",
    ),
    "addbmm_self_dtype": (
        lambda lib: lib.addbmm(_o(lib, 3, 5, dtype="float64"), _o(lib, 2, 3, 4), _o(lib, 2, 4, 5)),
        RuntimeError,
        "self and mat2 must have the same dtype, but got Double and Float",
    ),
    "addbmm_batch1_dtype": (
        lambda lib: lib.addbmm(_o(lib, 3, 5), _o(lib, 2, 3, 4, dtype="float64"), _o(lib, 2, 4, 5)),
        RuntimeError,
        "mat1 and mat2 must have the same dtype, but got Double and Float",
    ),
    "addbmm_bool": (
        lambda lib: lib.addbmm(
            _o(lib, 3, 5, dtype="bool"),
            _o(lib, 2, 3, 4, dtype="bool"),
            _o(lib, 2, 4, 5, dtype="bool"),
        ),
        NotImplementedError,
        "addmm_impl_cpu_",
    ),
    "outer_2d": (
        lambda lib: lib.outer(_o(lib, 3, 1), _o(lib, 4)),
        RuntimeError,
        "outer: Expected 1-D argument self, but got 2-D",
    ),
    "ger_2d": (
        lambda lib: lib.ger(_o(lib, 3), _o(lib, 4, 1)),
        RuntimeError,
        "outer: Expected 1-D argument vec2, but got 2-D",
    ),
    "vdot_2d": (
        lambda lib: lib.vdot(_o(lib, 3, 1), _o(lib, 3)),
        RuntimeError,
        "1D tensors expected, but got 2D and 1D tensors",
    ),
    "vdot_size": (
        lambda lib: lib.vdot(_o(lib, 3), _o(lib, 4)),
        RuntimeError,
        "inconsistent tensor size",
    ),
    "vdot_dtype": (
        lambda lib: lib.vdot(_o(lib, 3), _o(lib, 3, dtype="float64")),
        RuntimeError,
        "dot : expected both vectors to have same dtype, but found Float and Double",
    ),
    "vdot_bool": (
        lambda lib: lib.vdot(_o(lib, 3, dtype="bool"), _o(lib, 3, dtype="bool")),
        NotImplementedError,
        '"dot" not implemented',
    ),
    "inner_last_dim": (
        lambda lib: lib.inner(_o(lib, 2, 3), _o(lib, 2, 4)),
        RuntimeError,
        "inner() the last dimension must match on both input tensors but got shapes [2, 3] and [2, 4]",
    ),
    "inner_dtype": (
        lambda lib: lib.inner(_o(lib, 2, 3), _o(lib, 2, 3, dtype="float64")),
        RuntimeError,
        "both inputs should have same dtype",
    ),
    "tensordot_negative": (
        lambda lib: lib.tensordot(_o(lib, 2, 3), _o(lib, 3, 2), -1),
        RuntimeError,
        "tensordot expects dims >= 0, but got dims=-1",
    ),
    "tensordot_too_many": (
        lambda lib: lib.tensordot(_o(lib, 2, 3), _o(lib, 3, 2), 3),
        RuntimeError,
        "tensordot expects dims < ndim_a or ndim_b, but got dims=3",
    ),
    "tensordot_bad_dims": (
        lambda lib: lib.tensordot(_o(lib, 2, 3), _o(lib, 3, 2), 1.5),
        RuntimeError,
        "tensordot expects dims to be int or",
    ),
    "tensordot_lengths": (
        lambda lib: lib.tensordot(_o(lib, 2, 3), _o(lib, 3, 2), ([0, 1], [0])),
        RuntimeError,
        "both dimension lists should have same length",
    ),
    "tensordot_sizes": (
        lambda lib: lib.tensordot(_o(lib, 3, 4, 5), _o(lib, 4, 3, 2), ([1, 0], [2, 1])),
        RuntimeError,
        "contracted dimensions need to match, but first has size 4 in dim 1 and second has size 2 in dim 2",
    ),
    "tensordot_repeated": (
        lambda lib: lib.tensordot(_o(lib, 3, 3), _o(lib, 3, 3), ([0, 0], [0, 1])),
        RuntimeError,
        "dim 0 appears multiple times in the list of dims",
    ),
    "chain_matmul_none": (
        lambda lib: lib.chain_matmul(),
        RuntimeError,
        "chain_matmul(): Expected one or more matrices",
    ),
    "chain_matmul_1d": (
        lambda lib: lib.chain_matmul(_o(lib, 2, 3), _o(lib, 3)),
        RuntimeError,
        "Tensor dimension is 1, expected 2 instead.",
    ),
    "multi_dot_one": (
        lambda lib: lib.linalg.multi_dot([_o(lib, 3)]),
        RuntimeError,
        "multi_dot(): expected at least 2 tensors but got 1",
    ),
    "multi_dot_first_3d": (
        lambda lib: lib.linalg.multi_dot([_o(lib, 2, 3, 3), _o(lib, 3)]),
        RuntimeError,
        "the first tensor must be 1D or 2D but got 3D",
    ),
    "multi_dot_last_3d": (
        lambda lib: lib.linalg.multi_dot([_o(lib, 3), _o(lib, 2, 3, 3)]),
        RuntimeError,
        "the last tensor must be 1D or 2D but got 3D",
    ),
    "multi_dot_middle_3d": (
        lambda lib: lib.linalg.multi_dot([_o(lib, 3), _o(lib, 3, 3, 3), _o(lib, 3)]),
        RuntimeError,
        "tensor 1 must be 2D but got 3D",
    ),
    "multi_dot_dtype": (
        lambda lib: lib.linalg.multi_dot([_o(lib, 3), _o(lib, 3, 3, dtype="float64")]),
        RuntimeError,
        "all tensors must have be the same dtype but tensor 0 is float and tensor 1 double",
    ),
    "multi_dot_shapes": (
        lambda lib: lib.linalg.multi_dot([_o(lib, 3), _o(lib, 4, 3)]),
        RuntimeError,
        "tensors 0 and 1 with shapes [3] and [4, 3] cannot be multiplied",
    ),
    "matrix_power_1d": (
        lambda lib: lib.matrix_power(_o(lib, 3), 2),
        RuntimeError,
        "linalg.matrix_power: The input tensor A must have at least 2 dimensions.",
    ),
    "matrix_power_not_square": (
        lambda lib: lib.linalg.matrix_power(_o(lib, 3, 4), 2),
        RuntimeError,
        "A must be batches of square matrices, but they are 3 by 4 matrices",
    ),
    "matrix_power_bool": (
        lambda lib: lib.matrix_power(_o(lib, 3, 3, dtype="bool"), 2),
        NotImplementedError,
        "addmm_impl_cpu_",
    ),
    "cross_no_size_3": (
        lambda lib: lib.cross(_o(lib, 4, 2), _o(lib, 4, 2)),
        RuntimeError,
        "no dimension of size 3 in input",
    ),
    "cross_dim_length": (
        lambda lib: lib.cross(_o(lib, 2, 3), _o(lib, 2, 3), dim=0),
        RuntimeError,
        "linalg.cross: inputs dimension 0 must have length 3. Got 2 and 2",
    ),
    "cross_dim_range": (
        lambda lib: lib.cross(_o(lib, 2, 3), _o(lib, 2, 3), dim=5),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 5)",
    ),
    "linalg_cross_length": (
        lambda lib: lib.linalg.cross(_o(lib, 3, 2), _o(lib, 3, 2)),
        RuntimeError,
        "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2",
    ),
    "linalg_cross_ndim": (
        lambda lib: lib.linalg.cross(_o(lib, 3), _o(lib, 2, 3)),
        RuntimeError,
        "linalg.cross: inputs must have the same number of dimensions.",
    ),
    "linalg_cross_broadcast": (
        lambda lib: lib.linalg.cross(_o(lib, 2, 3), _o(lib, 3, 3)),
        RuntimeError,
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
    ),
    "linalg_cross_dtype": (
        lambda lib: lib.linalg.cross(_o(lib, 2, 3), _o(lib, 2, 3, dtype="float64")),
        RuntimeError,
        "expected scalar type Float but found Double",
    ),
    "linalg_cross_bool": (
        lambda lib: lib.linalg.cross(_o(lib, 2, 3, dtype="bool"), _o(lib, 2, 3, dtype="bool")),
        NotImplementedError,
        '"cross" not implemented',
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_refusals_match_torch(torch, name):
    fn, exc, phrase = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(torch, fn, exc, phrase)


CDIST_ERRORS = {
    "x1_1d": (
        lambda lib: lib.cdist(_o(lib, 3), _o(lib, 2, 3)),
        "cdist only supports at least 2D tensors, X1 got: 1D",
    ),
    "x2_1d": (
        lambda lib: lib.cdist(_o(lib, 2, 3), _o(lib, 3)),
        "cdist only supports at least 2D tensors, X2 got: 1D",
    ),
    "columns": (
        lambda lib: lib.cdist(_o(lib, 2, 3), _o(lib, 2, 4)),
        "X1 and X2 must have the same number of columns. X1: 3 X2: 4",
    ),
    "long": (
        lambda lib: lib.cdist(_o(lib, 2, 3, dtype="int64"), _o(lib, 2, 3)),
        "cdist only supports floating-point dtypes, X1 got: Long",
    ),
    "long_x2_euclid": (
        lambda lib: lib.cdist(_o(lib, 30, 3), _o(lib, 2, 3, dtype="int64")),
        "cdist only supports floating-point dtypes, X2 got: Long",
    ),
    "negative_p": (
        lambda lib: lib.cdist(_o(lib, 2, 3), _o(lib, 2, 3), p=-1.0),
        "cdist only supports non-negative p values",
    ),
    "batch": (
        lambda lib: lib.cdist(_o(lib, 2, 2, 3), _o(lib, 3, 2, 3)),
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
    ),
}


@pytest.mark.parametrize("name", sorted(CDIST_ERRORS))
def test_cdist_refusals_match_torch(torch, name):
    fn, phrase = CDIST_ERRORS[name]
    assert_same_error(torch, fn, RuntimeError, phrase)


def test_cdist_unknown_compute_mode_is_a_value_error(torch):
    assert_same_error(
        torch,
        lambda lib: lib.cdist(_o(lib, 2, 3), _o(lib, 2, 3), compute_mode="fast"),
        ValueError,
        "fast is not a valid value for compute_mode",
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("rows", [3, 30])
def test_cdist_values_match_torch(torch, dtype, p, rows):
    data = np.random.default_rng(4).standard_normal((2, rows, 5))
    data[0, 1] = data[1, 0]  # a zero distance

    def fn(lib, tensor):
        x = tensor(data).to(getattr(lib, dtype))
        return lib.cdist(x[0], x[1], p=p)

    got = result_scenario(fn)(og)
    expected = result_scenario(fn)(torch)
    assert got[0] == expected[0] and got[2:] == expected[2:]
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-5, atol=1e-5)


EINSUM_ERRORS = {
    "no_operand": (lambda lib: lib.einsum("i"), ValueError, "must specify the equation string"),
    "few_operands": (
        lambda lib: lib.einsum("i,j", _o(lib, 2)),
        RuntimeError,
        "fewer operands were provided than specified in the equation",
    ),
    "more_operands": (
        lambda lib: lib.einsum("i", _o(lib, 2), _o(lib, 2)),
        RuntimeError,
        "more operands were provided than specified in the equation",
    ),
    "bad_label": (
        lambda lib: lib.einsum("i1", _o(lib, 2, 2)),
        RuntimeError,
        "invalid subscript given at index 1 in the equation string",
    ),
    "bad_output_label": (
        lambda lib: lib.einsum("ij->i1", _o(lib, 2, 2)),
        RuntimeError,
        "invalid subscript given at index 5",
    ),
    "dims": (
        lambda lib: lib.einsum("ij", _o(lib, 2)),
        RuntimeError,
        "the number of subscripts in the equation (2) does not match the number of dimensions (1) for operand 0 and no ellipsis was given",
    ),
    "dims_ellipsis": (
        lambda lib: lib.einsum("ij...", _o(lib, 2)),
        RuntimeError,
        "is more than the number of dimensions (1) for operand 0",
    ),
    "two_ellipses": (
        lambda lib: lib.einsum("......", _o(lib, 2)),
        RuntimeError,
        "for which an ellipsis was already found",
    ),
    "broken_ellipsis": (
        lambda lib: lib.einsum("i..", _o(lib, 2)),
        RuntimeError,
        "that is not part of any ellipsis",
    ),
    "output_twice": (
        lambda lib: lib.einsum("ij->ii", _o(lib, 2, 2)),
        RuntimeError,
        "output subscript i appears more than once in the output",
    ),
    "output_unknown": (
        lambda lib: lib.einsum("ij->k", _o(lib, 2, 2)),
        RuntimeError,
        "output subscript k does not appear in the equation for any input operand",
    ),
    "output_two_ellipses": (
        lambda lib: lib.einsum("...->......", _o(lib, 2)),
        RuntimeError,
        "found '.' for output but an ellipsis (...) was already found",
    ),
    "sizes": (
        lambda lib: lib.einsum("ij,jk", _o(lib, 2, 3), _o(lib, 4, 2)),
        RuntimeError,
        "subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3",
    ),
    "repeated_sizes": (
        lambda lib: lib.einsum("ii", _o(lib, 2, 3)),
        RuntimeError,
        "subscript i is repeated for operand 0 but the sizes don't match, 3 != 2",
    ),
    "ellipsis_sizes": (
        lambda lib: lib.einsum("...,...", _o(lib, 2), _o(lib, 3)),
        RuntimeError,
        "covered by ellipsis in operand 1",
    ),
    "sublist_range": (
        lambda lib: lib.einsum(_o(lib, 2), [60]),
        ValueError,
        "subscript in subscript list is not within the valid range [0, 52)",
    ),
    "dtypes": (
        lambda lib: lib.einsum("ij,jk", _o(lib, 2, 3), _o(lib, 3, 2, dtype="float64")),
        RuntimeError,
        "expected scalar type Float but found Double",
    ),
}


@pytest.mark.parametrize("name", sorted(EINSUM_ERRORS))
def test_einsum_refusals_match_torch(torch, name):
    fn, exc, phrase = EINSUM_ERRORS[name]
    assert_same_error(torch, fn, exc, phrase)


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(0, 3), (3, 4)]),
        ("ij,jk->ik", [(2, 0), (0, 4)]),
        ("i,i->", [(0,), (0,)]),
        ("ij,jk", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_einsum_values_match_torch(torch, equation, shapes, dtype):
    data = [np.random.default_rng(5).integers(-3, 4, size=s) for s in shapes]

    def fn(lib, tensor):
        return lib.einsum(equation, *[tensor(d).to(getattr(lib, dtype)) for d in data])

    assert_same(torch, result_scenario(fn))


MORE_ERRORS = {
    "addmv_inplace_number_self": (
        lambda lib: lib.tensor(1.0).addmv_(_o(lib, 3, 4), _o(lib, 4)),
        RuntimeError,
        "Bad in-place call: input tensor size [] and output tensor size [3] should match",
    ),
    "addmv_inplace_one_self": (
        lambda lib: _o(lib, 1).addmv_(_o(lib, 3, 4), _o(lib, 4)),
        RuntimeError,
        "Bad in-place call: input tensor size [1]",
    ),
    "addr_inplace_int_self": (
        lambda lib: _o(lib, 3, 4, dtype="int64").addr_(_o(lib, 3), _o(lib, 4)),
        RuntimeError,
        "result type Float can't be cast to the desired output type Long",
    ),
    "outer_out_grad": (
        lambda lib: lib.outer(_o(lib, 2).requires_grad_(), _o(lib, 2), out=lib.empty(0)),
        RuntimeError,
        "mul(): functions with out=... arguments don't support automatic differentiation",
    ),
    "multi_dot_out_grad": (
        lambda lib: lib.linalg.multi_dot(
            [_o(lib, 2, 2).requires_grad_(), _o(lib, 2, 2)], out=lib.empty(0)
        ),
        RuntimeError,
        "mm(): functions with out=...",
    ),
    "matrix_power_out_grad": (
        lambda lib: lib.matrix_power(_o(lib, 2, 2).requires_grad_(), 3, out=lib.empty(0)),
        RuntimeError,
        "matmul(): functions with out=...",
    ),
    "vdot_out_grad": (
        lambda lib: lib.vdot(_o(lib, 3).requires_grad_(), _o(lib, 3), out=lib.empty(0)),
        RuntimeError,
        "vdot(): functions with out=...",
    ),
    "cross_out_grad": (
        lambda lib: lib.linalg.cross(_o(lib, 3).requires_grad_(), _o(lib, 3), out=lib.empty(0)),
        RuntimeError,
        "linalg_cross(): functions with out=...",
    ),
    "cdist_half": (
        lambda lib: lib.cdist(_o(lib, 2, 3, dtype="float16"), _o(lib, 2, 3, dtype="float16")),
        NotImplementedError,
        "\"cdist\" not implemented for 'Half'",
    ),
    "cdist_dtypes": (
        lambda lib: lib.cdist(_o(lib, 2, 3), _o(lib, 2, 3, dtype="float64")),
        RuntimeError,
        "expected scalar type Float but found Double",
    ),
}


@pytest.mark.parametrize("name", sorted(MORE_ERRORS))
def test_inplace_out_and_dtype_refusals_match_torch(torch, name):
    fn, exc, phrase = MORE_ERRORS[name]
    assert_same_error(torch, fn, exc, phrase)


def test_negative_matrix_power_is_not_yet_built():
    # torch inverts first (linalg_inv); opgrad has no linalg.inv yet
    with pytest.raises(NotImplementedError, match="negative powers"):
        og.matrix_power(og.eye(3), -2)


OUTS = {
    "addmv": lambda lib, o: lib.addmv(_o(lib, 3), _o(lib, 3, 4), _o(lib, 4), out=o),
    "addr": lambda lib, o: lib.addr(_o(lib, 3, 4), _o(lib, 3), _o(lib, 4), beta=2, out=o),
    "addbmm": lambda lib, o: lib.addbmm(_o(lib, 3, 5), _o(lib, 2, 3, 4), _o(lib, 2, 4, 5), out=o),
    "vdot": lambda lib, o: lib.vdot(_o(lib, 3), _o(lib, 3), out=o),
    "outer": lambda lib, o: lib.outer(_o(lib, 3), _o(lib, 4), out=o),
    "ger": lambda lib, o: lib.ger(_o(lib, 3), _o(lib, 4), out=o),
    "kron": lambda lib, o: lib.kron(_o(lib, 3), lib.arange(4.0), out=o),
    "inner": lambda lib, o: lib.inner(_o(lib, 2, 3), _o(lib, 3), out=o),
    "inner_number": lambda lib, o: lib.inner(_o(lib, 2, 3), lib.tensor(2.0), out=o),
    "tensordot": lambda lib, o: lib.tensordot(_o(lib, 3, 4), _o(lib, 4, 3), 1, out=o),
    "multi_dot": lambda lib, o: lib.linalg.multi_dot([_o(lib, 3, 4), _o(lib, 4, 3)], out=o),
    "multi_dot_vector": lambda lib, o: lib.linalg.multi_dot(
        [_o(lib, 4), _o(lib, 4, 3), _o(lib, 3)], out=o
    ),
    "chain_matmul": lambda lib, o: lib.chain_matmul(_o(lib, 3, 4), _o(lib, 4, 3), out=o),
    "matrix_power_0": lambda lib, o: lib.matrix_power(lib.arange(9.0).reshape(3, 3), 0, out=o),
    "matrix_power_3": lambda lib, o: lib.matrix_power(lib.arange(9.0).reshape(3, 3), 3, out=o),
    "linalg_matrix_power_5": lambda lib, o: lib.linalg.matrix_power(
        lib.arange(9.0).reshape(3, 3), 5, out=o
    ),
    "cross": lambda lib, o: lib.cross(lib.arange(6.0).reshape(2, 3), _o(lib, 2, 3), dim=1, out=o),
    "linalg_cross": lambda lib, o: lib.linalg.cross(lib.arange(3.0), _o(lib, 3), out=o),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
@pytest.mark.parametrize("name", sorted(OUTS))
def test_out_variants_match_torch(torch, name, dtype):
    def scenario(lib):
        out = lib.empty(0, dtype=getattr(lib, dtype))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = OUTS[name](lib, out)
        except Exception as exc:  # noqa: BLE001 - the type and text are compared
            return type(exc).__name__, str(exc).replace("torch", "LIB").replace("opgrad", "LIB")
        return result is out, out.tolist(), str(out.dtype).rsplit(".")[-1]

    assert_same(torch, scenario)


INPLACE = {
    "addmv_": lambda lib, s: s.addmv_(lib.ones(3, 4), lib.arange(4.0), beta=0.5, alpha=2),
    "addmv_function": lambda lib, s: lib.addmv_(s, lib.ones(3, 4), lib.arange(4.0)),
    "addr_": lambda lib, s: s[:, :2].addr_(lib.arange(3.0), lib.ones(2), alpha=3),
    "addbmm_": lambda lib, s: s[:, :2].addbmm_(lib.ones(2, 3, 4), lib.ones(2, 4, 2), beta=0),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_variants_match_torch(torch, name):
    def scenario(lib):
        s = lib.arange(12.0).reshape(3, 4) if name != "addmv_function" else lib.arange(3.0)
        if name == "addmv_":
            s = lib.arange(3.0)
        r = INPLACE[name](lib, s)
        return s.tolist(), r.tolist(), s._version

    assert_same(torch, scenario)


def test_inplace_variants_record_their_node(torch):
    def scenario(lib):
        s = lib.arange(3.0).requires_grad_()
        y = s.clone()
        y.addmv_(lib.ones(3, 4, requires_grad=True), lib.arange(4.0), beta=2)
        (g,) = lib.autograd.grad(y.sum(), s)
        return type(y.grad_fn).__name__, g.tolist()

    assert_same(torch, scenario)


def test_cross_without_dim_warns_as_torch(torch):
    import opgrad.matmul_decompositions as decomp

    decomp._cross_warned.clear()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        og.cross(og.ones(3, 3), og.ones(3, 3))
        og.cross(og.ones(3, 3), og.ones(3, 3))
    assert len(got) == 1  # once per process, as TORCH_WARN_ONCE
    assert "Using torch.cross without specifying the dim arg is deprecated." in str(got[0].message)
    assert got[0].filename == __file__
    with warnings.catch_warnings(record=True) as none:
        warnings.simplefilter("always")
        og.cross(og.ones(3, 3), og.ones(3, 3), dim=1)
    assert none == []


def test_chain_matmul_warns_once_as_torch():
    import opgrad.matmul_decompositions as decomp

    decomp._chain_matmul_warned.clear()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        og.chain_matmul(og.ones(2, 2), og.ones(2, 2))
        og.chain_matmul(og.ones(2, 2), og.ones(2, 2))
    assert len(got) == 1
    assert "torch.chain_matmul is deprecated" in str(got[0].message)


def test_node_saved_fields_match_torch(torch):
    from torch_oracle import assert_same_saved_fields

    def build(lib):
        s = lib.ones(3, 5, requires_grad=True)
        a = lib.ones(2, 3, 4, requires_grad=True)
        b = lib.ones(2, 4, 5, requires_grad=True)
        return (s, a, b), lib.addbmm(s, a, b, beta=0.5, alpha=2)

    got_in, got = build(og)
    exp_in, exp = build(torch)
    assert_same_saved_fields(torch, got.grad_fn, exp.grad_fn, got_in, exp_in, what="addbmm")
