"""ctc_loss against torch: both target layouts, int and tensor lengths, every reduction,
zero_infinity, unbatched input, float32; CtcLossBackward0's saved fields (log_alpha where
torch writes it), the NotImplemented double backward, forward AD, the aten calls a dispatch
mode sees, errors (OpInfo samples: test_opinfo.py)."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from test_nn_losses import REDUCTIONS
from torch_oracle import aten_log, assert_same_error, assert_same_tensor, outcome

RNG = np.random.default_rng(77)
T, N, C = 7, 4, 5
LOGITS = RNG.standard_normal((T, N, C))
LOG_PROBS = LOGITS - np.log(np.exp(LOGITS).sum(-1, keepdims=True))
TARGETS = np.array([[1, 2, 2, 4], [3, 3, 1, 0], [2, 1, 4, 1], [4, 4, 4, 4]])
INPUT_LENGTHS = [7, 6, 5, 3]
TARGET_LENGTHS = [4, 2, 0, 3]  # the last needs 5 steps (a repeat needs a blank): infinite loss


def F(lib):
    return lib.nn.functional


def _run(
    lib,
    *,
    reduction="mean",
    zero_infinity=False,
    tensors=False,
    concatenated=False,
    dtype="float64",
):
    log_probs = lib.tensor(LOG_PROBS, dtype=getattr(lib, dtype), requires_grad=True)
    rows = [TARGETS[i, : TARGET_LENGTHS[i]] for i in range(N)]
    targets = lib.tensor(np.concatenate(rows) if concatenated else TARGETS)
    lengths = (lib.tensor(INPUT_LENGTHS), lib.tensor(TARGET_LENGTHS))
    if not tensors:
        lengths = (INPUT_LENGTHS, TARGET_LENGTHS)
    loss = F(lib).ctc_loss(
        log_probs, targets, *lengths, reduction=reduction, zero_infinity=zero_infinity
    )
    weights = lib.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)))
    # an infinite loss (sample 3 without zero_infinity) has a NaN gradient in both
    (grad,) = lib.autograd.grad((loss * weights).sum(), log_probs, retain_graph=True)
    node = loss.grad_fn
    while node.name() != "CtcLossBackward0":
        node = next(n for n, _ in node.next_functions if n is not None)
    return loss, grad, node


def _written_log_alpha(node) -> np.ndarray:
    """log_alpha where torch writes it (t below the input length, s up to 2 * target length)."""
    alpha = node._saved_result1.detach().numpy().copy()
    for b, (il, tl) in enumerate(zip(INPUT_LENGTHS, TARGET_LENGTHS)):
        alpha[b, il:] = 0
        alpha[b, :, 2 * tl + 1 :] = 0
    return alpha


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("tensors", [False, True])
@pytest.mark.parametrize("concatenated", [False, True])
def test_ctc_loss_matches_torch(torch, reduction, zero_infinity, tensors, concatenated):
    kwargs = dict(
        reduction=reduction, zero_infinity=zero_infinity, tensors=tensors, concatenated=concatenated
    )
    got, expected = _run(og, **kwargs), _run(torch, **kwargs)
    assert_same_tensor(got[0], expected[0], rtol=1e-12)
    assert_same_tensor(got[1], expected[1], rtol=1e-10, atol=1e-13)
    assert got[0].grad_fn.name() == expected[0].grad_fn.name()
    g, e = got[2], expected[2]
    for field in (
        "_saved_input_lengths",
        "_saved_target_lengths",
        "_saved_blank",
        "_saved_zero_infinity",
    ):
        assert tuple(np.atleast_1d(getattr(g, field))) == tuple(np.atleast_1d(getattr(e, field)))
    assert_same_tensor(g._saved_result0, e._saved_result0, rtol=1e-12)
    assert_same_tensor(g._saved_targets, e._saved_targets)
    np.testing.assert_allclose(_written_log_alpha(g), _written_log_alpha(e), rtol=1e-12)


def test_ctc_loss_of_an_unbatched_input_matches_torch(torch):
    def scenario(lib):
        log_probs = lib.tensor(LOG_PROBS[:, 0], requires_grad=True)
        loss = F(lib).ctc_loss(log_probs, lib.tensor(TARGETS[0]), [7], [4], reduction="none")
        (grad,) = lib.autograd.grad(loss, log_probs)
        return loss, grad, loss.grad_fn.name()

    got, expected = scenario(og), scenario(torch)
    assert_same_tensor(got[0], expected[0], rtol=1e-12)
    assert_same_tensor(got[1], expected[1], rtol=1e-10, atol=1e-13)
    assert got[2] == expected[2]


def test_ctc_loss_in_float32_matches_torch(torch):
    got, expected = _run(og, dtype="float32", zero_infinity=True), _run(
        torch, dtype="float32", zero_infinity=True
    )
    assert_same_tensor(got[0], expected[0], rtol=1e-6)
    assert_same_tensor(got[1], expected[1], rtol=1e-5, atol=1e-7)


def test_ctc_loss_double_backward_is_not_implemented_as_torch(torch):
    def scenario(lib):
        log_probs = lib.tensor(LOG_PROBS, requires_grad=True)
        loss = F(lib).ctc_loss(log_probs, lib.tensor(TARGETS), INPUT_LENGTHS, [4, 2, 0, 1])
        (g,) = lib.autograd.grad(loss, log_probs, create_graph=True)
        kind, text = outcome(lambda: lib.autograd.grad(g.sum(), log_probs))
        return type(g.grad_fn).__name__, kind, text

    assert scenario(og) == scenario(torch)


def test_ctc_loss_forward_ad_is_not_implemented_as_torch(torch):
    def scenario(lib):
        fwd = lib.autograd.forward_ad
        with fwd.dual_level():
            x = fwd.make_dual(lib.tensor(LOG_PROBS), lib.ones(T, N, C, dtype=lib.float64))
            kind, text = outcome(
                lambda: F(lib).ctc_loss(x, lib.tensor(TARGETS), INPUT_LENGTHS, TARGET_LENGTHS)
            )
        return kind, text.split("\n")[0]

    assert scenario(og) == scenario(torch)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_dispatch_mode_sees_torch_aten_calls_with_int_lengths(torch, reduction):
    def run(lib):
        log_probs = lib.tensor(LOG_PROBS, requires_grad=True)
        targets = lib.tensor(TARGETS, dtype=lib.int32)
        return aten_log(
            lib,
            lambda: F(lib)
            .ctc_loss(
                log_probs,
                targets,
                INPUT_LENGTHS,
                TARGET_LENGTHS,
                reduction=reduction,
                zero_infinity=True,
            )
            .backward(),
        )

    assert run(og) == run(torch)


def _ctc(T_, targets=None, il=None, tl=None, **kwargs):
    return lambda Fn: Fn.ctc_loss(
        T_.tensor(LOG_PROBS),
        T_.tensor(TARGETS) if targets is None else targets,
        T_.tensor(INPUT_LENGTHS) if il is None else il,
        T_.tensor(TARGET_LENGTHS) if tl is None else tl,
        **kwargs,
    )


ERRORS = {
    "blank_out_of_range": (
        lambda T_: _ctc(T_, blank=5),
        RuntimeError,
        "blank must be in label range",
    ),
    "input_lengths_size": (
        lambda T_: _ctc(T_, il=T_.tensor([7, 6])),
        RuntimeError,
        "input_lengths must be of size batch_size",
    ),
    "target_lengths_size": (
        lambda T_: _ctc(T_, tl=T_.tensor([1, 1])),
        RuntimeError,
        "target_lengths must be of size batch_size",
    ),
    "input_length_too_long": (
        lambda T_: _ctc(T_, il=T_.tensor([8, 6, 5, 3])),
        RuntimeError,
        "Expected input_lengths to have value at most 7, but got value 8 (while checking "
        "arguments for ctc_loss_allocate_outputs)",
    ),
    "negative_input_length": (
        lambda T_: _ctc(T_, il=T_.tensor([7, -1, 5, 3])),
        RuntimeError,
        "Expected input_lengths to have value at least 0, but got value -1",
    ),
    "negative_target_length": (
        lambda T_: _ctc(T_, tl=T_.tensor([1, -2, 0, 0])),
        RuntimeError,
        "Expected target_lengths to have value at least 0, but got value -2",
    ),
    "targets_too_short": (
        lambda T_: _ctc(T_, tl=T_.tensor([5, 1, 1, 1])),
        RuntimeError,
        "Expected tensor to have size at least 5 at dimension 1, but got size 4 for argument "
        "#2 'targets'",
    ),
    "targets_batch": (
        lambda T_: _ctc(T_, targets=T_.tensor(TARGETS[:3])),
        RuntimeError,
        "Expected tensor to have size 4 at dimension 0, but got size 3 for argument #2 'targets'",
    ),
    "concatenated_targets_size": (
        lambda T_: _ctc(T_, targets=T_.tensor([1, 2, 3])),
        RuntimeError,
        "Expected tensor to have size 9 at dimension 0, but got size 3 for argument #2 'targets'",
    ),
    "float_lengths": (
        lambda T_: _ctc(T_, il=T_.tensor([7.0, 6.0, 5.0, 3.0])),
        RuntimeError,
        "input_lengths must be integral",
    ),
    "three_dim_targets": (
        lambda T_: _ctc(T_, targets=T_.tensor(TARGETS[None])),
        RuntimeError,
        "Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 'targets'",
    ),
    "half": (
        lambda T_: lambda Fn: Fn.ctc_loss(
            T_.tensor(LOG_PROBS, dtype=T_.float16),
            T_.tensor(TARGETS),
            INPUT_LENGTHS,
            TARGET_LENGTHS,
        ),
        NotImplementedError,
        "\"ctc_loss_cpu\" not implemented for 'Half'",
    ),
    "bad_reduction": (
        lambda T_: _ctc(T_, reduction="avg"),
        ValueError,
        "avg is not a valid value for reduction",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    make, exc_type, phrase = ERRORS[name]
    assert_same_error(torch, lambda lib: make(lib)(F(lib)), exc_type, phrase)
