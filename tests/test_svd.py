"""The singular value decomposition (linalg.svd, linalg.svdvals, the old svd, _linalg_svd)
and the spectral matrix norms over it ('nuc', 2, -2 in linalg.matrix_norm and torch.norm)
against torch: values, the aten calls a dispatch mode sees, nodes, saved fields, gradients,
layouts, empty matrices and errors. Singular vectors are compared up to sign (torch's MKL
and numpy's OpenBLAS may return either). Their OpInfo samples run in test_opinfo.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opgrad as og
from torch_oracle import assert_same_error, logging_mode_class, message

MATRIX = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.5], [7.0, 8.0, 10.0], [1.0, 0.0, 1.0]]


def _A(lib, grad=True, transpose=False, batch=False):
    A = lib.tensor(MATRIX, dtype=lib.float64)
    if transpose:
        A = A.t().contiguous()
    if batch:
        A = lib.stack([A, A * 2 - 1])
    return A.requires_grad_() if grad else A


def _described(value):
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [_described(v) for v in value]
    node = type(value.grad_fn).__name__ if value.grad_fn is not None else None
    data = np.round(np.abs(value.detach().numpy()), 10).tolist()  # singular vectors: no sign
    strides = value.stride() if value.numel() else None  # an empty tensor's mean nothing
    return data, str(value.dtype).split(".")[-1], tuple(value.shape), strides, node


def _seen(lib, call):
    """What ``call(lib)`` gives or raises, described after the aten calls a dispatch mode
    sees while it runs."""
    with logging_mode_class(lib)() as mode:
        try:
            outcome = ("ok", call(lib))
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            outcome = (type(exc).__name__, message(exc))
    if outcome[0] == "ok":
        outcome = ("ok", _described(outcome[1]))
    return outcome, mode.log


CALLS = {
    "svd_reduced": lambda L: L.linalg.svd(_A(L), full_matrices=False),
    "svd_full_tall": lambda L: L.linalg.svd(_A(L)),
    "svd_wide_batch": lambda L: L.linalg.svd(_A(L, transpose=True, batch=True), False),
    "svdvals": lambda L: L.linalg.svdvals(_A(L)),
    "svdvals_no_grad": lambda L: L.linalg.svdvals(_A(L, grad=False)),
    "old_svd": lambda L: L.svd(_A(L)),
    "old_svd_method_full": lambda L: _A(L, transpose=True).svd(some=False),
    "old_svd_values_only": lambda L: L.svd(_A(L), compute_uv=False),
    "aten_values_only": lambda L: L.ops.aten._linalg_svd(_A(L, grad=False), compute_uv=False),
    "empty_tall": lambda L: L.linalg.svd(L.zeros(0, 3, dtype=L.float64)),
    "empty_wide_reduced": lambda L: L.linalg.svd(L.zeros(3, 0, dtype=L.float64), False),
    "empty_batch": lambda L: L.linalg.svdvals(L.zeros(2, 0, 0)),
    "nuc": lambda L: L.linalg.matrix_norm(_A(L), "nuc"),
    "nuc_keepdim_dims": lambda L: L.linalg.matrix_norm(
        _A(L, batch=True), "nuc", dim=(0, 2), keepdim=True
    ),
    "two": lambda L: L.linalg.matrix_norm(_A(L, batch=True), 2),
    "minus_two_keepdim": lambda L: L.linalg.matrix_norm(_A(L), -2, keepdim=True),
    "two_dtype": lambda L: L.linalg.matrix_norm(_A(L).float(), 2, dtype=L.float64),
    "norm_nuc": lambda L: L.norm(_A(L), "nuc"),
    "norm_nuc_method": lambda L: _A(L, batch=True).norm("nuc", dim=(1, 2)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_values_nodes_and_aten_calls_match_torch(torch, name):
    assert _seen(og, CALLS[name]) == _seen(torch, CALLS[name])


def test_float32_matrices_give_float32_singular_values_close_to_torchs(torch):
    """float32 runs LAPACK's single-precision routines, whose last bits differ by build."""
    got, expected = (lib.linalg.svdvals(_A(lib).float()) for lib in (og, torch))
    assert str(got.dtype) == "opgrad.float32" and str(expected.dtype) == "torch.float32"
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-5)


def test_the_factors_rebuild_the_matrix_and_are_orthonormal():
    for full in (False, True):
        A = _A(og, grad=False, batch=True)
        U, S, Vh = og.linalg.svd(A, full_matrices=full)
        k = S.shape[-1]
        rebuilt = (U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :]
        np.testing.assert_allclose(rebuilt.numpy(), A.numpy(), atol=1e-12)
        eye = np.broadcast_to(np.eye(U.shape[-1]), U.mT.shape[:-1] + (U.shape[-1],))
        np.testing.assert_allclose((U.mT @ U).numpy(), eye, atol=1e-12)
        assert list(S.numpy()[0]) == sorted(S.numpy()[0], reverse=True)


GRADIENTS = {
    "svdvals": lambda L, A: L.linalg.svdvals(A).pow(2).sum(),
    "sign_free_product": lambda L, A: (L.linalg.svd(A, False)[0] @ L.linalg.svd(A, False)[2])
    .pow(3)
    .sum(),
    "abs_of_vectors": lambda L, A: sum(t.abs().sum() for t in L.linalg.svd(A, False)),
    "nuc": lambda L, A: L.linalg.matrix_norm(A, "nuc").sum(),
    "two": lambda L, A: L.linalg.matrix_norm(A, 2).sum(),
    "minus_two": lambda L, A: L.linalg.matrix_norm(A, -2).sum(),
}


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("name", list(GRADIENTS))
def test_gradients_and_second_derivatives_match_torch(torch, name, transpose, batch):
    results = []
    for lib in (og, torch):
        A = _A(lib, transpose=transpose, batch=batch)
        (g,) = lib.autograd.grad(GRADIENTS[name](lib, A), A, create_graph=True)
        (gg,) = lib.autograd.grad(g.pow(2).sum(), A)
        results.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-7, atol=1e-10)


def test_the_node_saves_torchs_fields(torch):
    fields = []
    for lib in (og, torch):
        U, S, Vh = lib.linalg.svd(_A(lib))
        node = U.grad_fn
        names = sorted(n for n in dir(node) if n.startswith("_saved_"))
        values = [node._saved_full_matrices, node._saved_S_sym_argsize_minus_1]
        fields.append((type(node).__name__, names, values, node._saved_S.tolist()))
    assert fields[0][:3] == fields[1][:3]
    np.testing.assert_allclose(fields[0][3], fields[1][3], rtol=1e-12)


def test_forward_mode_tangents_of_singular_values_match_torch(torch):
    import opgrad.autograd.forward_ad as og_fwad
    import torch.autograd.forward_ad as fwad

    tangents = []
    for lib, ad in ((og, og_fwad), (torch, fwad)):
        with ad.dual_level():
            A = ad.make_dual(_A(lib, grad=False), _A(lib, grad=False, transpose=False) * 0.5)
            S = lib.linalg.svdvals(A)
            tangents.append(ad.unpack_dual(S).tangent.numpy())
    np.testing.assert_allclose(tangents[0], tangents[1], rtol=1e-10)


ERRORS = {
    "vector": (lambda L: L.linalg.svd(L.ones(3)), RuntimeError, "at least 2 dimensions"),
    "integers": (
        lambda L: L.linalg.svdvals(L.ones(2, 2, dtype=L.int64)),
        RuntimeError,
        "Expected a floating point or complex tensor as input. Got Long",
    ),
    "half": (
        lambda L: L.linalg.svd(L.ones(2, 2, dtype=L.float16)),
        NotImplementedError,
        "not implemented for 'Half'",
    ),
    "driver": (
        lambda L: L.linalg.svd(L.ones(2, 2), driver="gesvd"),
        RuntimeError,
        "keyword argument `driver=` is only supported on CUDA",
    ),
    "old_svd_vector": (lambda L: L.svd(L.ones(3)), RuntimeError, "has 1 dimensions instead"),
    "nuc_of_a_vector": (
        lambda L: L.linalg.matrix_norm(L.ones(3), "nuc"),
        RuntimeError,
        "must have at least 2 dimensions",
    ),
    "mH_of_a_vector": (lambda L: L.ones(3).mH, RuntimeError, "tensor.mH is only supported"),
    "H_of_a_batch": (lambda L: L.ones(2, 2, 2).H, RuntimeError, "consider using tensor.mH"),
    "adjoint_of_a_vector": (
        lambda L: L.ones(3).adjoint(),
        RuntimeError,
        "tensor.adjoint() is only supported",
    ),
}


@pytest.mark.parametrize("case", list(ERRORS.values()), ids=list(ERRORS))
def test_errors_match_torch(torch, case):
    call, exc_type, phrase = case
    assert_same_error(torch, call, exc_type, phrase)


def test_non_finite_input_fails_with_torchs_linalg_error(torch):
    for lib in (og, torch):
        A = lib.tensor([[math.nan, 1.0], [1.0, 1.0]])
        with pytest.raises(lib.linalg.LinAlgError, match="contained non-finite values"):
            lib.linalg.svd(A)
    assert og.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__
    assert issubclass(og.linalg.LinAlgError, RuntimeError)
