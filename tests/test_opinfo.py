"""Every op opgrad has that PyTorch describes with an OpInfo, on all its float64 samples.

This is how an op is tested here (design §7). For each sample of
``op_db`` whose op opgrad has (opinfo_support.py finds them), both libraries
run the op on fresh copies of the sample's tensors (same values, strides and
storage offset), and torch is the oracle:

- test_opinfo_forward: the outputs' values, dtype, shape, significant strides
  and view-ness, requires_grad, the grad_fn class and its ``_saved_*`` fields;
- test_opinfo_gradient: the gradient of a weighted sum of the outputs with
  respect to every tensor the sample marks requires_grad;
- test_opinfo_second_derivative: the gradient of that gradient (create_graph),
  where the OpInfo supports gradgrad;
- test_opinfo_forward_ad: the outputs' forward-mode tangents, where the OpInfo
  supports forward AD;
- test_opinfo_forward_noncontiguous, test_opinfo_gradient_noncontiguous: the
  first two again on the same samples made noncontiguous (same values, every
  tensor strided through a larger storage: ``SampleInput.noncontiguous()``), as
  torch's TestCommon.test_noncontiguous_samples does.

A check that torch itself skips or expects to fail for the op (op_db's
decorators on the test of test_ops.py it mirrors, for CPU float64) is skipped
with torch's reason. Where opgrad differs from torch, the sample is listed in
XFAIL below with why; nothing else is left out.
"""

from __future__ import annotations

import contextlib
import functools
import operator
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
import pytest

import opgrad as og
from opinfo_support import (
    collect_cases,
    coverage,
    load_op_db,
    noncontiguous_cases,
    read_coverage,
    sample_args,
    tensors_in,
    torch_skip,
)
from torch_oracle import (
    as_numpy,
    assert_same_saved_fields,
    assert_same_tensor,
    node_type_name,
    rng_for,
    up_to_sign,
    within,
)

CASES = collect_cases(load_op_db())
NONCONTIGUOUS = noncontiguous_cases(CASES)

ALL = None


@dataclass(frozen=True)
class Differs:
    """Where opgrad differs from torch: ``checks`` (names, or ALL) fail on ``samples``
    (indices, or ALL) of the OpInfo ``op``, for ``reason``. Each is a strict xfail.
    A check's name covers its noncontiguous variant too ("forward" covers
    "forward_noncontiguous"), which may also be named alone."""

    op: str
    samples: Optional[Tuple[int, ...]]
    checks: Optional[Tuple[str, ...]]
    reason: str

    def covers(self, check: str, op: str, index: int) -> bool:
        return (
            self.op == op
            and (self.samples is ALL or index in self.samples)
            and (
                self.checks is ALL
                or check in self.checks
                or check.removesuffix("_noncontiguous") in self.checks
            )
        )


FORWARD = ("forward",)
XFAIL = [
    Differs(
        "linalg.matrix_power",
        (3, 4, 5, 9, 10, 11, 15, 16, 17),
        ALL,
        "negative powers: torch inverts the matrix first (linalg_inv), which opgrad does not "
        "have yet; opgrad refuses them with NotImplementedError",
    ),
    Differs(
        "repeat_interleave",
        (3, 4),
        ALL,
        "opgrad has no repeat_interleave.self_Tensor (a tensor of counts: it needs "
        "index_select, issue 14)",
    ),
    Differs(
        "as_strided.partial_views",
        (1,),
        ("gradient",),
        "as_strided_backward with a storage_offset before the input's own offset scatters to "
        "negative positions, which wrap around (functions_manual.py)",
    ),
    Differs(
        "_softmax_backward_data",
        ALL,
        FORWARD,
        "_saved_grad_output: torch saves grad_output whenever the node exists; opgrad's "
        "codegen saves it only when output (whose formula reads it) needs a gradient, and "
        "these samples make only grad_output require grad",
    ),
    Differs(
        "max_pool2d_with_indices_backward",
        ALL,
        FORWARD,
        "_saved_indices: torch saves the non-differentiable indices whenever the node exists; "
        "opgrad's codegen saves them only when grad_output (whose formula reads them) needs "
        "a gradient, so a sample where only self requires grad reads None",
    ),
    Differs(
        "linalg.svd",
        (40, 41, 42, 43, 184, 185, 186, 187),
        FORWARD,
        "full_matrices: the columns of U or rows of Vh past min(m, n) are any orthonormal "
        "basis of the rest of the space, which numpy's LAPACK picks differently from torch's",
    ),
    Differs(
        "svd",
        (44, 45, 46, 47, 188, 189, 190, 191),
        FORWARD,
        "some=False: the columns of U or V past min(m, n) are any orthonormal basis of the "
        "rest of the space, which numpy's LAPACK picks differently from torch's",
    ),
]


#: ops whose outputs or saved fields hold singular vectors, which LAPACK builds may return
#: negated: their forward checks compare values up to sign (the gradients, taken of
#: sign-free functions of the outputs as the OpInfos define them, are compared exactly)
SINGULAR_VECTORS = frozenset({"linalg.svd", "linalg.svdvals", "svd"})


#: OpInfos whose torch kernels are less accurate than scipy's, which opgrad computes them
#: with (checked against mpmath): their values are compared to these tolerances. torch's
#: float64 Bessel functions of the first and second kind are off by up to 2e-7 at |x| > 8,
#: its Airy function by up to 2e-5 relative.
LESS_ACCURATE_IN_TORCH = {
    "special.airy_ai": (1e-4, 1e-10),
    "special.bessel_j0": (1e-5, 1e-6),
    "special.bessel_j1": (1e-5, 1e-6),
    "special.bessel_y0": (1e-5, 1e-6),
    "special.bessel_y1": (1e-5, 1e-6),
}


def compared_values(case):
    if case.id in SINGULAR_VECTORS:
        return up_to_sign()
    if case.id in LESS_ACCURATE_IN_TORCH:
        return within(*LESS_ACCURATE_IN_TORCH[case.id])
    return contextlib.nullcontext()


def uninitialised_saved(case, index) -> Tuple[str, ...]:
    """Saved fields whose values torch leaves unwritten for this sample: rrelu's noise in
    eval mode is torch.empty_like memory (opgrad's empty_like gives zeros), so is part of
    ctc_loss's log_alpha. torch skips rrelu's forward check but not its noncontiguous one."""
    sample = case.samples[index]
    if case.id == "nn.functional.rrelu" and not sample.kwargs.get("training", False):
        return ("_saved_noise",)
    if case.id == "nn.functional.ctc_loss":
        # log_alpha past each sample's input and label lengths is torch.empty memory
        # (test_nn_losses_ctc.py compares the part torch writes)
        return ("_saved_result1",)
    return ()


def xfail_reason(check: str, op: str, index: int) -> Optional[str]:
    return next((d.reason for d in XFAIL if d.covers(check, op, index)), None)


def sample_requires_grad(sample) -> bool:
    import torch

    _, differentiable = sample_args(torch, sample)
    return bool(differentiable)


def params(check):
    """One param per sample the check applies to, with torch's skips and our xfails."""
    out = []
    kind = check.removesuffix("_noncontiguous")
    for case in CASES if kind == check else NONCONTIGUOUS:
        info = case.opinfo
        applies = {
            "forward": True,
            "gradient": info.supports_autograd,
            "second_derivative": info.supports_gradgrad,
            "forward_ad": info.supports_forward_ad,
        }[kind]
        if not applies:
            continue
        skip = torch_skip(info, check)
        for index, sample in enumerate(case.samples):
            if kind != "forward" and not sample_requires_grad(sample):
                continue
            test_id = f"{case.id}-sample{index}"
            marks = []
            if skip:
                marks.append(pytest.mark.skip(reason=skip))
            elif reason := xfail_reason(check, case.id, index):
                marks.append(pytest.mark.xfail(reason=reason, strict=True))
            out.append(pytest.param(case, index, id=test_id, marks=marks))
    return out


# ---------------------------------------------------------------------------
# Running a sample in one library


def run(lib, case, index, **kwargs):
    """``(tensors the sample marks requires_grad, output)`` for one fresh run."""
    args, differentiable = sample_args(lib, case.samples[index], **kwargs)
    return differentiable, case.call(lib, args)


def weighted_sum(lib, outputs, key):
    """sum_i <outputs[i], w_i> for fixed random float64 weights ``w_i``."""
    terms = [
        (t * lib.tensor(rng_for(*key, i).standard_normal(tuple(t.shape)))).sum()
        for i, t in enumerate(outputs)
    ]
    return functools.reduce(operator.add, terms)


def first_gradients(lib, case, index, *, create_graph=False):
    """The inputs, and d/dinputs of a weighted sum of the outputs that require grad
    (None when no output requires grad)."""
    inputs, out = run(lib, case, index)
    out = case.output_process(lib, case.samples[index])(out)
    outputs = [t for t in tensors_in(out, lib) if t.requires_grad]
    if not outputs:
        return inputs, None
    loss = weighted_sum(lib, outputs, ("w", case.id, index))
    return inputs, lib.autograd.grad(loss, inputs, create_graph=create_graph, allow_unused=True)


def second_gradients(lib, case, index):
    """d/dinputs of sum_i <grad_i, v_i>; a gradient with no graph contributes nothing and
    an input nothing depends on gets zeros."""
    inputs, grads = first_gradients(lib, case, index, create_graph=True)
    with_graph = [g for g in grads or () if g is not None and g.requires_grad]
    if not with_graph:
        return [np.zeros(tuple(t.shape)) for t in inputs]
    second = lib.autograd.grad(
        weighted_sum(lib, with_graph, ("v", case.id, index)), inputs, allow_unused=True
    )
    return [
        np.zeros(tuple(t.shape)) if g is None else as_numpy(g).astype(np.float64)
        for t, g in zip(inputs, second)
    ]


def tangents(lib, case, index):
    """The forward-mode tangents of the outputs, every requires_grad input dual."""
    fwAD = lib.autograd.forward_ad

    def dual(leaf, i):
        tangent = rng_for("tangent", case.id, index, i).standard_normal(tuple(leaf.shape))
        return fwAD.make_dual(leaf, lib.tensor(tangent, dtype=leaf.dtype))

    with fwAD.dual_level():
        _, out = run(lib, case, index, requires_grad=False, make_tensor=dual)
        return [fwAD.unpack_dual(t).tangent for t in tensors_in(out, lib)]


# ---------------------------------------------------------------------------
# Comparing


def significant_strides(t):
    """Strides of the dimensions longer than 1 (the others' strides mean nothing)."""
    return tuple(s if n > 1 else None for n, s in zip(t.shape, t.stride()))


def assert_same_output(torch, got, expected, got_inputs, expected_inputs, what, uninitialised=()):
    if isinstance(expected, (list, tuple)):
        assert type(got).__name__ == type(expected).__name__, f"{what}: {type(got).__name__}"
        assert len(got) == len(expected), f"{what}: {len(got)} outputs"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same_output(
                torch, g, e, got_inputs, expected_inputs, f"{what}[{i}]", uninitialised
            )
        return
    if not isinstance(expected, torch.Tensor):
        assert type(got) is type(expected) and got == expected, f"{what}: {got!r}"
        return
    assert isinstance(got, og.Tensor), f"{what}: {type(got).__name__} is not a Tensor"
    assert_same_tensor(got, expected, what=what)
    if expected.numel():
        assert significant_strides(got) == significant_strides(expected), f"{what}: strides"
    assert got._is_view() == expected._is_view(), f"{what}: view-ness"
    assert got.requires_grad == expected.requires_grad, f"{what}: requires_grad"
    assert node_type_name(got.grad_fn) == node_type_name(expected.grad_fn), f"{what}: grad_fn"
    if expected.grad_fn is not None:
        assert_same_saved_fields(
            torch,
            got.grad_fn,
            expected.grad_fn,
            got_inputs,
            expected_inputs,
            what=what,
            uninitialised=uninitialised,
        )
    if expected._is_view():
        assert got.storage_offset() == expected.storage_offset(), f"{what}: storage offset"


def assert_same_gradients(got, expected, what):
    assert (got is None) == (expected is None), f"{what}: outputs requiring grad differ"
    for i, (g, e) in enumerate(zip(got or (), expected or ())):
        assert (g is None) == (e is None), f"{what} {i}: None differs from torch"
        if e is not None:
            assert_same_tensor(g, e, what=f"{what} {i}")


# ---------------------------------------------------------------------------
# Tests


@pytest.mark.parametrize("case, index", params("forward"))
def test_opinfo_forward(torch, case, index):
    expected_inputs, expected = run(torch, case, index)
    got_inputs, got = run(og, case, index)
    uninitialised = uninitialised_saved(case, index)
    with compared_values(case):
        assert_same_output(
            torch, got, expected, got_inputs, expected_inputs, "output", uninitialised
        )


@pytest.mark.parametrize("case, index", params("forward_noncontiguous"))
def test_opinfo_forward_noncontiguous(torch, case, index):
    test_opinfo_forward(torch, case, index)


@pytest.mark.parametrize("case, index", params("gradient"))
def test_opinfo_gradient(torch, case, index):
    _, expected = first_gradients(torch, case, index)
    _, got = first_gradients(og, case, index)
    assert_same_gradients(got, expected, "gradient of input")


@pytest.mark.parametrize("case, index", params("gradient_noncontiguous"))
def test_opinfo_gradient_noncontiguous(torch, case, index):
    test_opinfo_gradient(torch, case, index)


@pytest.mark.parametrize("case, index", params("second_derivative"))
def test_opinfo_second_derivative(torch, case, index):
    expected = second_gradients(torch, case, index)
    got = second_gradients(og, case, index)
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-10, err_msg=f"second derivative {i}")


@pytest.mark.parametrize("case, index", params("forward_ad"))
def test_opinfo_forward_ad(torch, case, index):
    expected = tangents(torch, case, index)
    got = tangents(og, case, index)
    with compared_values(case):
        assert_same_gradients(got, expected, "tangent of output")


def test_opinfo_coverage_list_is_current():
    """data/opinfo_coverage.json lists the OpInfos covered here
    (rewrite it with ``python tests/opinfo_support.py``)."""
    assert read_coverage() == coverage(CASES)


def test_every_xfail_names_a_collected_opinfo():
    collected = {case.id: len(case.samples) for case in CASES}
    for entry in XFAIL:
        assert entry.op in collected, f"XFAIL names {entry.op}, which is not collected"
        assert entry.samples is ALL or max(entry.samples) < collected[entry.op], entry
