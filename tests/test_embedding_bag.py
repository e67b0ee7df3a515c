"""F.embedding_bag against torch: the three modes with offsets, include_last_offset, 2-d input,
empty bags, per_sample_weights, padding_idx, scale_grad_by_freq and max_norm; the four outputs
of the aten ops, which op the composite picks, EmbeddingBagBackward0's saved fields, the
double backward and forward AD torch refuses, and the errors. torch's embedding_bag OpInfo
samples run in test_opinfo.py."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import (
    aten_log,
    assert_same,
    assert_same_error,
    assert_same_saved_fields,
    assert_same_tensor,
    vals,
)

WEIGHT = np.random.default_rng(5).standard_normal((10, 3))
INDICES = [1, 2, 4, 5, 4, 3, 2, 9]
SAMPLE_WEIGHTS = np.random.default_rng(6).standard_normal(8)


def _call(lib, indices=INDICES, *, dtype="float64", weight=WEIGHT, psw=False, **kwargs):
    """(weight, per_sample_weights or None, output) of one F.embedding_bag call."""
    w = lib.tensor(weight, dtype=getattr(lib, dtype), requires_grad=True)
    p = None
    if psw:
        p = lib.tensor(SAMPLE_WEIGHTS, dtype=getattr(lib, dtype), requires_grad=True)
        kwargs["per_sample_weights"] = p.view(np.shape(indices))
    if "offsets" in kwargs:
        kwargs["offsets"] = lib.tensor(kwargs["offsets"])
    return w, p, lib.nn.functional.embedding_bag(lib.tensor(indices), w, **kwargs)


def _gradients(lib, w, p, out):
    grad_out = lib.tensor(np.random.default_rng(7).standard_normal(tuple(out.shape)))
    inputs = [w] if p is None else [w, p]
    return lib.autograd.grad(out, inputs, grad_out.to(out.dtype))


SCENARIOS = {
    "sum": dict(offsets=[0, 4], mode="sum"),
    "mean": dict(offsets=[0, 4], mode="mean"),
    "max": dict(offsets=[0, 4], mode="max"),
    "empty bags max": dict(offsets=[0, 0, 4, 8], mode="max"),
    "empty bags mean": dict(offsets=[0, 0, 4, 8], mode="mean"),
    "include_last_offset sum": dict(offsets=[0, 4, 8], mode="sum", include_last_offset=True),
    "include_last_offset short mean": dict(
        offsets=[0, 4, 6], mode="mean", include_last_offset=True
    ),
    "include_last_offset short max": dict(offsets=[0, 4, 6], mode="max", include_last_offset=True),
    "padding sum": dict(offsets=[0, 4], mode="sum", padding_idx=2),
    "padding mean": dict(offsets=[0, 4], mode="mean", padding_idx=4),
    "padding max negative": dict(offsets=[0, 4], mode="max", padding_idx=-1),
    "per_sample_weights": dict(offsets=[0, 4], mode="sum", psw=True),
    "per_sample_weights padding": dict(offsets=[0, 4], mode="sum", psw=True, padding_idx=2),
    "2-d input": dict(indices=[[1, 2, 4, 5], [4, 3, 2, 9]], mode="mean"),
    "2-d per_sample_weights": dict(indices=[[1, 2, 4, 5], [4, 3, 2, 9]], mode="sum", psw=True),
    # torch divides by the count of the k-th smallest index, not of the index itself
    "scale_grad_by_freq": dict(indices=[[1, 2, 4, 5], [4, 3, 1, 1]], scale_grad_by_freq=True),
    "scale_grad_by_freq padding": dict(
        indices=[[1, 2, 4, 5], [4, 3, 1, 1]], mode="sum", scale_grad_by_freq=True, padding_idx=4
    ),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_values_gradients_and_saved_fields(torch, name, dtype):
    kwargs = SCENARIOS[name]
    got, expected = _call(og, dtype=dtype, **kwargs), _call(torch, dtype=dtype, **kwargs)
    assert_same_tensor(got[2], expected[2], rtol=1e-6)
    assert got[2].grad_fn.name() == expected[2].grad_fn.name() == "EmbeddingBagBackward0"
    assert_same_saved_fields(
        torch, got[2].grad_fn, expected[2].grad_fn, got[:2], expected[:2], what=name
    )
    for g, e in zip(_gradients(og, *got), _gradients(torch, *expected)):
        assert_same_tensor(g, e, rtol=1e-6)


def test_max_keeps_the_first_maximum_and_a_leading_nan(torch):
    weight = WEIGHT.copy()
    weight[3] = [np.nan, 5.0, 5.0]
    weight[9] = [7.0, np.nan, 5.0]

    def scenario(lib):
        w, _, out = _call(lib, [3, 9, 9, 3, 3], weight=weight, offsets=[0, 3], mode="max")
        g = out.grad_fn
        return vals(out), vals(g._saved_result3), vals(_gradients(lib, w, None, out)[0])

    got, expected = scenario(og), scenario(torch)
    assert repr(got) == repr(expected)  # NaN == NaN in repr


@pytest.mark.parametrize("dtype", ["float16"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_reduced_float_values(torch, dtype, mode):
    def scenario(lib):
        w, _, out = _call(lib, dtype=dtype, offsets=[0, 4], mode=mode)
        return (
            out.dtype == getattr(lib, dtype),
            vals(out.float()),
            vals(_gradients(lib, w, None, out)[0].float()),
        )

    assert_same(torch, scenario)


def _aten_outputs(lib, requires_grad, mode, **kwargs):
    weight = lib.tensor(WEIGHT, requires_grad=requires_grad).float()
    return [
        (vals(t), str(t.dtype).split(".")[-1])
        for t in lib.embedding_bag(
            weight,
            lib.tensor(INDICES, dtype=lib.int32),
            lib.tensor([0, 4, 6]),
            False,
            mode,
            **kwargs,
        )
    ]


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_four_outputs_of_the_aten_op(torch, requires_grad, mode, include_last_offset):
    """offset2bag empty on the fast sum path, bag sizes, max_indices; int32 indices promote
    to the offsets' int64."""

    def scenario(lib):
        return _aten_outputs(lib, requires_grad, mode, include_last_offset=include_last_offset)

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "weight_grad, psw_grad, grad_mode",
    [(False, False, True), (True, False, True), (True, False, False), (False, True, True)],
)
def test_composite_picks_the_forward_only_op_when_nothing_needs_a_gradient(
    torch, weight_grad, psw_grad, grad_mode
):
    def scenario(lib):
        w = lib.tensor(WEIGHT, requires_grad=weight_grad)
        p = lib.tensor(SAMPLE_WEIGHTS, requires_grad=psw_grad)
        idx = lib.tensor([[1, 2, 4, 5], [4, 3, 2, 9]]).t().t()

        def call():
            with lib.set_grad_enabled(grad_mode):
                lib.nn.functional.embedding_bag(
                    idx[:, ::2], w, mode="sum", per_sample_weights=p.view(2, 4)[:, ::2]
                )

        return aten_log(lib, call)

    assert_same(torch, scenario)


def test_backward_calls_the_backward_ops(torch):
    def scenario(lib):
        w, p, out = _call(lib, offsets=[0, 4], mode="sum", psw=True)
        return aten_log(lib, lambda: out.sum().backward())

    assert_same(torch, scenario)


@pytest.mark.parametrize("kwargs", [{"max_norm": 1.0}, {"max_norm": 0.5, "norm_type": 1.0}])
def test_max_norm_renormalises_the_weight_in_place_unrecorded(torch, kwargs):
    def scenario(lib):
        w, _, out = _call(lib, offsets=[0, 4], mode="mean", **kwargs)
        log = aten_log(lib, lambda: _call(lib, offsets=[0, 4], mode="mean", **kwargs))
        return w._version, vals(w), vals(out), vals(_gradients(lib, w, None, out)[0]), log

    assert_same(torch, scenario)


def test_double_backward_is_refused_as_torch_refuses_it(torch):
    def scenario(lib):
        w, p, out = _call(lib, offsets=[0, 4], mode="sum", psw=True)
        gw, gp = lib.autograd.grad(out.pow(2).sum(), (w, p), create_graph=True)
        names = (gw.grad_fn.name(), type(gp.grad_fn).__name__)
        errors = []
        for g in (gw, gp):
            try:
                lib.autograd.grad(g.sum(), (w, p), allow_unused=True)
            except Exception as exc:  # noqa: BLE001 - the type is compared
                errors.append((type(exc).__name__, str(exc)))
        return names, errors

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "tangent_on, op",
    [("weight", "_embedding_bag"), ("per_sample_weights", "_embedding_bag_forward_only")],
)
def test_forward_ad_is_not_implemented(torch, tangent_on, op):
    """A tangent on the weight reaches _embedding_bag, one on the per-sample weights alone
    the forward-only op: neither has a forward formula in torch."""

    def raised(lib):
        fwAD = lib.autograd.forward_ad
        w = lib.tensor(WEIGHT)
        p = lib.tensor(SAMPLE_WEIGHTS)
        with fwAD.dual_level():
            if tangent_on == "weight":
                w = fwAD.make_dual(w, lib.ones_like(w))
            else:
                p = fwAD.make_dual(p, lib.ones_like(p))
            with pytest.raises(NotImplementedError) as info:
                lib.nn.functional.embedding_bag(
                    lib.tensor(INDICES), w, lib.tensor([0, 4]), mode="sum", per_sample_weights=p
                )
        return str(info.value).splitlines()[0]

    phrase = f"Trying to use forward AD with {op} that does not support it"
    assert phrase in raised(torch) and phrase in raised(og)


def test_swapped_arguments_warn_and_are_swapped(torch):
    def scenario(lib):
        with pytest.warns(UserWarning, match="Argument order of nn.functional.embedding_bag"):
            out = lib.nn.functional.embedding_bag(
                lib.tensor(WEIGHT), lib.tensor(INDICES), lib.tensor([0, 4])
            )
        return vals(out)

    assert_same(torch, scenario)


def _F_error(call):
    def scenario(lib):
        w = lib.tensor(WEIGHT)
        return call(lib.nn.functional, lib.tensor, w)

    return scenario


@pytest.mark.parametrize(
    "call, exc, phrase",
    [
        (lambda F, t, w: F.embedding_bag(t([1, 2]), w), ValueError, "offsets has to be a 1D"),
        (lambda F, t, w: F.embedding_bag(t([1]), w, t([[0]])), ValueError, "offsets has to be"),
        (lambda F, t, w: F.embedding_bag(t([[1]]), w, t([0])), ValueError, "if input is 2D"),
        (lambda F, t, w: F.embedding_bag(t([[[1]]]), w), ValueError, "input has to be 1D or 2D"),
        (lambda F, t, w: F.embedding_bag(t([1]), w[0], t([0])), ValueError, "weight has to be"),
        (lambda F, t, w: F.embedding_bag(t([1]), w, t([0]), mode="min"), ValueError, "mode has"),
        (
            lambda F, t, w: F.embedding_bag(t([1]), w, t([0]), mode="max", sparse=True),
            ValueError,
            "max mode does not support sparse",
        ),
        (
            lambda F, t, w: F.embedding_bag(t([1]), w, t([0]), mode="max", scale_grad_by_freq=True),
            ValueError,
            "max mode does not support scaling",
        ),
        (
            lambda F, t, w: F.embedding_bag(t([1, 2]), w, t([0]), per_sample_weights=w[0, :1]),
            ValueError,
            "must have the same shape as the input",
        ),
        (
            lambda F, t, w: F.embedding_bag(t([1]), w, t([0]), per_sample_weights=w[0, :1]),
            NotImplementedError,
            "only supported for mode='sum'",
        ),
        (lambda F, t, w: F.embedding_bag(t([1, 10]), w, t([0])), RuntimeError, "found idx"),
        (
            lambda F, t, w: F.embedding_bag(t([1, 10]), w.float(), t([0]), mode="sum"),
            RuntimeError,
            "Index 1 of input takes value 10",
        ),
        (
            lambda F, t, w: F.embedding_bag(t([1, -1]), w.float(), t([0]), mode="max"),
            RuntimeError,
            "found idx to be -1",
        ),
        (lambda F, t, w: F.embedding_bag(t([1]), w, t([1])), RuntimeError, "offsets[0] has"),
        (lambda F, t, w: F.embedding_bag(t([1]), w, t([0, 2])), RuntimeError, "offsets[-1]"),
        (lambda F, t, w: F.embedding_bag(t([1.0]), w, t([0])), RuntimeError, "'indices'"),
        (lambda F, t, w: F.embedding_bag(t([1]), w, t([0.0])), RuntimeError, "'indices'"),
        (lambda F, t, w: F.embedding_bag(t([1]), w.int(), t([0])), RuntimeError, "'weight'"),
        (
            lambda F, t, w: F.embedding_bag(t([1]), w, t([0]), padding_idx=10),
            RuntimeError,
            "padding_idx must be within",
        ),
        (
            lambda F, t, w: F.embedding_bag(t([1]), w, t([0]), padding_idx=-11),
            RuntimeError,
            "padding_idx must be within",
        ),
        (
            lambda F, t, w: F.embedding_bag(t([1]), w, t([]).long(), include_last_offset=True),
            RuntimeError,
            "include_last_offset: number of offset",
        ),
        (
            lambda F, t, w: F.embedding_bag(
                t([1]), w, t([0]), mode="sum", per_sample_weights=w[0, :1].float()
            ),
            RuntimeError,
            "to have the same type as tensor",
        ),
    ],
)
def test_errors(torch, call, exc, phrase):
    assert_same_error(torch, _F_error(call), exc, phrase)


@pytest.mark.parametrize(
    "args, phrase",
    [
        (lambda t, w: (w, t(1), t([0])), "input has to be a 1D or 2D"),
        (lambda t, w: (w, t([1]), t([[0]])), "offsets has to be a 1D Tensor, but got"),
        (lambda t, w: (w.view(10, 3, 1), t([1]), t([0])), "weight has to be a 2D"),
        (lambda t, w: (w, t([1]), t([0]), False, 3), "`mode` must be sum, mean, or max."),
        (lambda t, w: (w, t([1]), t([0]), False, 1, False, w[0, :1]), "per_sample_weights only"),
        (lambda t, w: (w, t([1]), t([0]), False, 0, False, w[0, :2]), "numel() == indices"),
        (lambda t, w: (w, t([1]), t([0]), False, 0, False, w[:1, :1]), "dim() == 1"),
    ],
)
def test_aten_errors(torch, args, phrase):
    def scenario(lib):
        return lib.embedding_bag(*args(lib.tensor, lib.tensor(WEIGHT)))

    assert_same_error(torch, scenario, RuntimeError, phrase)


def test_sparse_gradients_are_refused():
    weight = og.tensor(WEIGHT, requires_grad=True)
    out = og.nn.functional.embedding_bag(og.tensor([1]), weight, og.tensor([0]), sparse=True)
    with pytest.raises(NotImplementedError, match="sparse"):
        out.sum().backward()
