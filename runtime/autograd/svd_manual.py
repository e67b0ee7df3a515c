"""Backward and forward-mode formulas of the singular value decomposition (_linalg_svd),
built from opgrad ops so they differentiate again. The formulas are PyTorch's (real
matrices: A is assumed to have distinct singular values and, when rectangular, full rank);
the ops are called in PyTorch's order, so a dispatch mode sees torch's calls.

With skew(X) = X - X^T and E[j, k] = S[k]^2 - S[j]^2 (1 on the diagonal), the gradient of
A = U diag(S) Vh is, for m == n,

    gA = U [(skew(U^T gU) / E) S + S (skew(Vh gVh^T) / E) + diag(gS)] Vh

plus (I - U U^T) gU S^-1 Vh when m > n, or U S^-1 gVh (I - Vh^T Vh) when m < n.
"""

from __future__ import annotations

from ..generated import ops as aten

__all__ = ["linalg_svd_backward", "linalg_svd_jvp", "svd_backward"]


def _mT(x):
    return aten.transpose_int(x, -2, -1)


def _E(S):
    """S[k]^2 - S[j]^2 off the diagonal, 1 on it (any nonzero: it only divides zeros)."""
    S2 = aten.mul_Tensor(S, S)
    E = aten.sub_Tensor(aten.unsqueeze(S2, -2), aten.unsqueeze(S2, -1))
    aten.fill__Scalar(aten.diagonal(E, 0, -2, -1), 1)
    return E


def svd_backward(gU, gS, gVh, U, S, Vh):
    """The gradient of A from those of its reduced SVD's U, S and Vh (None: no gradient)."""
    if gS is None and gU is None and gVh is None:
        return None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:  # svdvals: U diag(gS) Vh
        if m >= n:
            return aten.matmul(U, aten.mul_Tensor(aten.unsqueeze(gS, -1), Vh))
        return aten.matmul(aten.mul_Tensor(U, aten.unsqueeze(gS, -2)), Vh)

    def skew(x):
        return aten.sub_Tensor(x, _mT(x))

    UhgU = skew(aten.matmul(_mT(U), gU)) if gU is not None else None
    VhgV = skew(aten.matmul(Vh, _mT(gVh))) if gVh is not None else None
    E = _E(S)
    if gU is not None and gVh is not None:
        inner = aten.div_Tensor(
            aten.add_Tensor(
                aten.mul_Tensor(UhgU, aten.unsqueeze(S, -2)),
                aten.mul_Tensor(aten.unsqueeze(S, -1), VhgV),
            ),
            E,
        )
    elif gU is not None:
        inner = aten.mul_Tensor(aten.div_Tensor(UhgU, E), aten.unsqueeze(S, -2))
    else:
        inner = aten.mul_Tensor(aten.unsqueeze(S, -1), aten.div_Tensor(VhgV, E))
    if gS is not None:
        inner = aten.add_Tensor(inner, aten.diag_embed(gS))

    if m > n and gU is not None:
        gA = aten.matmul(U, inner)
        gUSinv = aten.div_Tensor(gU, aten.unsqueeze(S, -2))
        gA = aten.sub_Tensor(
            aten.add_Tensor(gA, gUSinv), aten.matmul(U, aten.matmul(_mT(U), gUSinv))
        )
        return aten.matmul(gA, Vh)
    if m < n and gVh is not None:
        gA = aten.matmul(inner, Vh)
        SinvgVh = aten.div_Tensor(gVh, aten.unsqueeze(S, -1))
        gA = aten.sub_Tensor(
            aten.add_Tensor(gA, SinvgVh), aten.matmul(aten.matmul(SinvgVh, _mT(Vh)), Vh)
        )
        return aten.matmul(U, gA)
    if m >= n:
        return aten.matmul(U, aten.matmul(inner, Vh))
    return aten.matmul(aten.matmul(U, inner), Vh)


def linalg_svd_backward(gU, gS, gVh, U, S, Vh, full_matrices: bool, k: int):
    """_linalg_svd's formula: with full_matrices, only the first k columns of U and rows of
    Vh (those of the reduced SVD) take part."""
    if full_matrices:
        gU = aten.narrow(gU, -1, 0, k) if gU is not None else None
        gVh = aten.narrow(gVh, -2, 0, k) if gVh is not None else None
        U, Vh = aten.narrow(U, -1, 0, k), aten.narrow(Vh, -2, 0, k)
    return svd_backward(gU, gS, gVh, U, S, Vh)


def linalg_svd_jvp(A_t, U, S, Vh, full_matrices: bool, which: int):
    """The tangent of U (which=0), S (1) or Vh (2) for A's tangent ``A_t``."""
    m, n = A_t.shape[-2], A_t.shape[-1]
    k = S.shape[-1]
    if full_matrices:
        U, Vh = aten.narrow(U, -1, 0, k), aten.narrow(Vh, -2, 0, k)
    V = _mT(Vh)
    # U^T (dA V) costs less when m < n, (U^T dA) V otherwise
    if m < n:
        dP = aten.matmul(_mT(U), aten.matmul(A_t, V))
    else:
        dP = aten.matmul(aten.matmul(_mT(U), A_t), V)
    dS = aten.diagonal(dP, 0, -2, -1)
    if which == 1:
        return dS
    dP = aten.sub_Tensor(dP, aten.diag_embed(dS))
    E = _E(S)

    def sym(x):
        return aten.add_Tensor(x, _mT(x))

    if which == 0:
        dU = aten.matmul(U, aten.div_Tensor(sym(aten.mul_Tensor(dP, aten.unsqueeze(S, -2))), E))
        if m > n:
            dAVSinv = aten.matmul(A_t, aten.div_Tensor(V, aten.unsqueeze(S, -2)))
            dU = aten.sub_Tensor(
                aten.add_Tensor(dU, dAVSinv), aten.matmul(U, aten.matmul(_mT(U), dAVSinv))
            )
            if full_matrices:
                shape = list(dU.shape)
                shape[-1] = m - n
                dU = aten.cat([dU, aten.new_zeros(dU, shape)], -1)
        return dU
    dVh = aten.matmul(
        aten.div_Tensor(sym(aten.mul_Tensor(dP, aten.unsqueeze(aten.neg(S), -1))), E), Vh
    )
    if m < n:
        UHdASinv = aten.matmul(aten.div_Tensor(_mT(U), aten.unsqueeze(S, -1)), A_t)
        dVh = aten.sub_Tensor(
            aten.add_Tensor(dVh, UHdASinv), aten.matmul(aten.matmul(UHdASinv, V), Vh)
        )
        if full_matrices:
            shape = list(dVh.shape)
            shape[-2] = n - m
            dVh = aten.cat([dVh, aten.new_zeros(dVh, shape)], -2)
    return dVh
