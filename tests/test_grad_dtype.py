"""Tensor.grad_dtype against torch (issue 16 point 4): the dtype a leaf's gradient must
have, its own by default, another when set, or None for any. Assigned gradients are
checked against it, and the engine casts incoming gradients to it (or keeps them as they
come for None), also for a leaf whose AccumulateGrad already exists. Follows the reference
test test_grad_dtype, without its bfloat16 cases (opgrad has no bfloat16 yet)."""

from __future__ import annotations

import warnings

from torch_oracle import message


def _scenario(lib):
    out = []

    def attempt(fn):
        try:
            fn()
        except RuntimeError as err:
            out.append(message(err))

    class ToDouble(lib.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp * 2

        @staticmethod
        def backward(ctx, grad):
            return grad.to(lib.float64)

    def grad_of(leaf):
        return str(leaf.grad.dtype).split(".")[-1], leaf.grad.tolist()

    leaf = lib.tensor([1.0, 2.0], requires_grad=True)
    out.append(leaf.grad_dtype == lib.float32)
    leaf.grad_dtype = lib.float16
    out.append(leaf.grad_dtype == lib.float16)
    leaf.grad_dtype = None
    out.append(leaf.grad_dtype)

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x.grad_dtype = lib.float16
    attempt(lambda: setattr(x, "grad", lib.tensor([1.0, 1.0])))
    x.grad_dtype = None
    x.grad = lib.tensor([1.0, 1.0], dtype=lib.float64)
    out.append(grad_of(x))

    for grad_dtype in ("unset", None, lib.float16):
        d = lib.tensor([1.0, 2.0], requires_grad=True)
        if grad_dtype != "unset":
            d.grad_dtype = grad_dtype
        ToDouble.apply(d).sum().backward()
        out.append(grad_of(d))

    g = lib.tensor([1.0, 2.0], requires_grad=True)
    g.grad = lib.tensor([1.0, 1.0])
    g.grad_dtype = lib.float32  # the gradient's own dtype: allowed
    attempt(lambda: setattr(g, "grad_dtype", lib.float16))
    g.grad_dtype = None
    g.grad = None
    g.grad_dtype = lib.float16
    out.append(g.grad_dtype == lib.float16)

    # set after the leaf's AccumulateGrad exists: it casts to the new dtype from then on
    h = lib.tensor([1.0, 2.0], requires_grad=True)
    twice = h * 2
    h.grad_dtype = lib.float64
    ToDouble.apply(h).sum().backward()
    twice.sum().backward()
    out.append(grad_of(h))

    # accumulating into an existing gradient keeps its dtype
    q = lib.tensor([1.0, 2.0], requires_grad=True)
    q.grad_dtype = None
    q.grad = lib.tensor([1.0, 2.0], dtype=lib.float64)
    (q * 2).sum().backward()
    out.append(grad_of(q))

    non_leaf = leaf * 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        attempt(lambda: non_leaf.grad_dtype)
    attempt(lambda: setattr(non_leaf, "grad_dtype", lib.float16))
    attempt(lambda: setattr(leaf, "grad_dtype", "float16"))
    return out


def test_grad_dtype_matches_torch(torch):
    import opgrad as og

    assert _scenario(og) == _scenario(torch)
