"""One scenario run by opgrad and by torch, compared the way test_nn_normalization.py and
test_nn_dropout.py need it: forward values, the grad_fn and its saved fields, gradients,
second derivatives and the forward-mode tangent."""

from __future__ import annotations

import numpy as np

import opgrad as og
from torch_oracle import assert_same_saved_fields, assert_same_tensor, rng_for


def make_inputs(lib, specs, key, dtype="float64"):
    """Tensors for ``specs`` (a shape, or (shape, requires_grad), or None), the same values
    in both libraries."""
    rng = rng_for(*key)
    made = []
    for spec in specs:
        if spec is None:
            made.append(None)
            continue
        shape, rg = spec if isinstance(spec, tuple) and isinstance(spec[-1], bool) else (spec, True)
        data = rng.standard_normal(shape).astype(dtype)
        made.append(lib.tensor(data, requires_grad=rg))
    return made


def differentiable(tensors):
    return [t for t in tensors if t is not None and t.requires_grad]


def run_graph(lib, fn, specs, key):
    inputs = make_inputs(lib, specs, key)
    out = fn(lib.nn.functional, lib, *inputs)
    return inputs, out


def assert_same_graph(torch, fn, specs, key, *, rtol=1e-9, atol=1e-11, second=True):
    """Forward, grad_fn name and saved fields, first and second derivatives."""
    got_in, got = run_graph(og, fn, specs, key)
    exp_in, exp = run_graph(torch, fn, specs, key)
    assert_same_tensor(got, exp, rtol=rtol, atol=atol, what="forward")
    assert type(got.grad_fn).__name__ == type(exp.grad_fn).__name__
    assert_same_saved_fields(
        torch, got.grad_fn, exp.grad_fn, got_in, exp_in, what=type(exp.grad_fn).__name__
    )
    rng = rng_for("grad_output", *key)
    gout = rng.standard_normal(tuple(exp.shape))
    got_diff, exp_diff = differentiable(got_in), differentiable(exp_in)
    got_grads = og.autograd.grad(
        got, got_diff, og.tensor(gout), create_graph=True, allow_unused=True
    )
    exp_grads = torch.autograd.grad(
        exp, exp_diff, torch.tensor(gout), create_graph=True, allow_unused=True
    )
    for g, e in zip(got_grads, exp_grads):
        if e is None:
            assert g is None
        else:
            assert_same_tensor(g, e, rtol=rtol, atol=atol, what="gradient")
    if not second:
        return
    # second derivatives: d/d(inputs) of <grads, v>
    got_terms, exp_terms = [], []
    for i, (g, e) in enumerate(zip(got_grads, exp_grads)):
        if e is None or e.grad_fn is None:
            continue
        v = rng_for("second", i, *key).standard_normal(tuple(e.shape))
        got_terms.append((g * og.tensor(v)).sum())
        exp_terms.append((e * torch.tensor(v)).sum())
    if not exp_terms:
        return
    got_total, exp_total = sum(got_terms), sum(exp_terms)
    got_gg = og.autograd.grad(got_total, got_diff, allow_unused=True)
    exp_gg = torch.autograd.grad(exp_total, exp_diff, allow_unused=True)
    for g, e in zip(got_gg, exp_gg):
        if e is None:
            assert g is None or not np.any(g.detach().numpy())
        else:
            assert_same_tensor(g, e, rtol=rtol * 100, atol=atol * 100, what="second derivative")


def forward_tangent(lib, fn, specs, key):
    import_fw = lib.autograd.forward_ad
    inputs = make_inputs(lib, specs, key)
    rng = rng_for("tangent", *key)
    with import_fw.dual_level():
        duals = []
        for t in inputs:
            if t is None or not t.requires_grad:
                duals.append(t.detach() if t is not None else None)
                continue
            tangent = lib.tensor(rng.standard_normal(tuple(t.shape)))
            duals.append(import_fw.make_dual(t.detach(), tangent))
        out = fn(lib.nn.functional, lib, *duals)
        return import_fw.unpack_dual(out).tangent


def assert_same_tangent(torch, fn, specs, key, *, rtol=1e-9, atol=1e-11):
    got = forward_tangent(og, fn, specs, key)
    exp = forward_tangent(torch, fn, specs, key)
    assert_same_tensor(got, exp, rtol=rtol, atol=atol, what="tangent")
