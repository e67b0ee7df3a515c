"""F.scaled_dot_product_attention against torch: which path runs (the CPU flash op or the
math composition), values and gradients, nodes and saved fields, the aten calls a
dispatch mode sees, _safe_softmax's masked rows, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import aten_log, assert_same_error, outcome, saved_attribute_names


def _inputs(lib, shapes, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    return [
        lib.tensor(rng.standard_normal(s), dtype=getattr(lib, dtype), requires_grad=True)
        for s in shapes
    ]


def _bool_mask(lib):
    return lib.tensor(np.random.default_rng(1).random((4, 5)) > 0.3)


SCENARIOS = {
    "flash": ([(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8)], lambda lib: {}),
    "flash_float_mask": (
        [(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8)],
        lambda lib: {"attn_mask": lib.tensor(np.random.default_rng(2).standard_normal((4, 5)))},
    ),
    "flash_bool_mask": (
        [(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8)],
        lambda lib: {"attn_mask": _bool_mask(lib)},
    ),
    "flash_causal": ([(1, 2, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8)], lambda lib: {"is_causal": True}),
    "flash_scale": ([(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8)], lambda lib: {"scale": 0.3}),
    "math_3d": ([(3, 4, 8), (3, 5, 8), (3, 5, 8)], lambda lib: {}),
    "math_3d_causal": ([(3, 4, 8), (3, 5, 8), (3, 5, 8)], lambda lib: {"is_causal": True}),
    "math_3d_bool_mask": (
        [(3, 4, 8), (3, 5, 8), (3, 5, 8)],
        lambda lib: {"attn_mask": _bool_mask(lib)},
    ),
    "math_negative_scale": ([(3, 4, 8), (3, 5, 8), (3, 5, 8)], lambda lib: {"scale": -0.5}),
    "math_value_head_size": ([(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)], lambda lib: {}),
    "math_2d": ([(4, 8), (5, 8), (5, 8)], lambda lib: {}),
    # grouped-query attention: the flash op takes the shared heads as they are; the math
    # path repeats them (repeat_interleave on dim -3)
    "flash_gqa": ([(2, 6, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8)], lambda lib: {"enable_gqa": True}),
    "flash_gqa_causal_one_shared_head": (
        [(1, 4, 3, 8), (1, 1, 5, 8), (1, 1, 5, 8)],
        lambda lib: {"enable_gqa": True, "is_causal": True},
    ),
    "math_gqa_key_and_value_heads_differ": (
        [(1, 4, 5, 8), (1, 2, 5, 8), (1, 1, 5, 8)],
        lambda lib: {"enable_gqa": True},
    ),
    "math_gqa_3d": ([(4, 5, 8), (2, 5, 8), (2, 5, 8)], lambda lib: {"enable_gqa": True}),
    "math_gqa_batch_broadcast": (
        [(2, 4, 5, 8), (1, 2, 5, 8), (1, 2, 5, 8)],
        lambda lib: {"enable_gqa": True},
    ),
    "gqa_with_equal_heads": (
        [(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8)],
        lambda lib: {"enable_gqa": True},
    ),
}


def _run(lib, name):
    shapes, kwargs = SCENARIOS[name]
    q, k, v = _inputs(lib, shapes)
    y = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs(lib))
    grads = lib.autograd.grad((y * y).sum(), [q, k, v])
    return y, grads


@pytest.mark.parametrize("name", SCENARIOS)
def test_values_and_gradients_match_torch(torch, name):
    (y, grads), (ty, tgrads) = _run(og, name), _run(torch, name)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    for g, tg in zip(grads, tgrads):
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", SCENARIOS)
def test_node_and_saved_fields_match_torch(torch, name):
    (y, _), (ty, _) = _run(og, name), _run(torch, name)
    assert y.grad_fn.name() == ty.grad_fn.name()
    assert saved_attribute_names(y.grad_fn) == saved_attribute_names(ty.grad_fn)


@pytest.mark.parametrize("name", [n for n in SCENARIOS if n != "math_3d_causal"])
def test_dispatch_mode_sees_torch_calls(torch, name):
    """(PyTorch builds the causal mask with ones and tril, which opgrad lacks.)"""
    shapes, kwargs = SCENARIOS[name]

    def scenario(lib):
        q, k, v = _inputs(lib, shapes)
        extra = kwargs(lib)
        return aten_log(
            lib, lambda: lib.nn.functional.scaled_dot_product_attention(q, k, v, **extra)
        )

    assert scenario(og) == scenario(torch)


def test_flash_node_saves_torch_fields(torch):
    def scenario(lib):
        q, k, v = _inputs(lib, [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)])
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.5)
        node = y.grad_fn
        return (
            node._saved_dropout_p,
            node._saved_is_causal,
            node._saved_scale,
            node._saved_attn_mask,
            tuple(node._saved_logsumexp.shape),
            str(node._saved_logsumexp.dtype).split(".")[-1],
            tuple(node._saved_output.shape),
        )

    assert scenario(og) == scenario(torch)


def test_mask_that_needs_a_gradient_takes_the_math_path(torch):
    def scenario(lib):
        q, k, v, mask = _inputs(lib, [(1, 2, 3, 8), (1, 2, 3, 8), (1, 2, 3, 8), (3, 3)])
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        (grad,) = lib.autograd.grad(y.sum(), [mask])
        return y.grad_fn.name(), np.round(grad.numpy(), 10).tolist()

    assert scenario(og) == scenario(torch)


def test_fully_masked_rows_give_zero_output_and_gradient(torch):
    def scenario(lib, shape):
        q, k, v = _inputs(lib, [shape + (3, 4), shape + (2, 4), shape + (2, 4)])
        mask = lib.tensor([[True, True], [False, False], [True, False]])
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        grads = lib.autograd.grad(y.sum(), [q, k, v])
        return np.round(y.detach().numpy(), 10).tolist(), [
            np.round(g.numpy(), 10).tolist() for g in grads
        ]

    for shape in [(1, 1), (1,)]:  # the flash op and the math path
        assert scenario(og, shape) == scenario(torch, shape)


def test_safe_softmax_of_an_all_minus_inf_row_is_zero_with_zero_tangent(torch):
    def scenario(lib):
        x = lib.tensor([[0.0, -float("inf")], [-float("inf"), -float("inf")]])
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(x, lib.ones(2, 2))
            y = lib._safe_softmax(dual, -1)
            tangent = lib.autograd.forward_ad.unpack_dual(y).tangent
        leaf = x.clone().requires_grad_()
        z = lib._safe_softmax(leaf, -1)
        (grad,) = lib.autograd.grad(z.sum(), leaf)
        return y.tolist(), tangent.tolist(), grad.tolist(), z.grad_fn.name(), z.grad_fn._saved_dim

    got, expected = scenario(og), scenario(torch)
    assert got[:4] == expected[:4]
    assert got[4] == -1 and expected[4] in (-1, 2**64 - 1)


ERRORS = {
    "dtypes": (
        lambda lib: [lib.ones(2, 3, 4), lib.ones(2, 3, 4, dtype=lib.float64), lib.ones(2, 3, 4)],
        {},
        "Expected query, key, and value to have the same dtype",
    ),
    "mask_dtype": (
        lambda lib: [lib.ones(2, 3, 4)] * 3,
        {"attn_mask": "int64"},
        "Expected attn_mask dtype to be bool or float or to match query dtype",
    ),
    "one_dim": (lambda lib: [lib.ones(4)] * 3, {}, "at least 2 dimensional"),
    "gqa_heads_do_not_divide": (
        lambda lib: [lib.ones(1, 4, 5, 8), lib.ones(1, 3, 5, 8), lib.ones(1, 3, 5, 8)],
        {"enable_gqa": True},
        "Number of heads in key and value must divide the number of heads in",
    ),
    "fewer_heads_without_gqa": (
        lambda lib: [lib.ones(1, 4, 5, 8), lib.ones(1, 2, 5, 8), lib.ones(1, 2, 5, 8)],
        {},
        "The size of tensor a (4) must match the size of tensor b (2) at non-singleton dim",
    ),
    "causal_and_mask": (
        lambda lib: [lib.ones(2, 3, 4)] * 3,
        {"is_causal": True, "attn_mask": "float32"},
        "Explicit attn_mask should not be set when is_causal=True",
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(torch, name):
    make, kwargs, phrase = ERRORS[name]

    def scenario(lib):
        extra = dict(kwargs)
        if "attn_mask" in extra:
            extra["attn_mask"] = lib.ones(3, 3, dtype=getattr(lib, extra["attn_mask"]))
        return lib.nn.functional.scaled_dot_product_attention(*make(lib), **extra)

    assert_same_error(torch, scenario, RuntimeError, phrase)


def test_flash_has_no_forward_mode_or_double_backward_as_torch(torch):
    def forward_mode(lib):
        q = lib.ones(1, 1, 2, 4)
        with lib.autograd.forward_ad.dual_level():
            d = lib.autograd.forward_ad.make_dual(q, lib.ones(1, 1, 2, 4))
            return lib.nn.functional.scaled_dot_product_attention(d, d, d).shape

    def double_backward(lib):
        q = lib.ones(1, 1, 2, 4, requires_grad=True)
        y = lib.nn.functional.scaled_dot_product_attention(q, q * 2, q * 3)
        (g,) = lib.autograd.grad(y.sum(), q, create_graph=True)
        g.sum().backward()

    got, expected = outcome(lambda: forward_mode(og)), outcome(lambda: forward_mode(torch))
    assert got[0] == expected[0] == "NotImplementedError"
    assert "_scaled_dot_product_flash_attention_for_cpu" in got[1]
    assert outcome(lambda: double_backward(og)) == outcome(lambda: double_backward(torch))


def test_safe_softmax_computes_in_the_dtype_asked_for_as_torch(torch):
    def scenario(lib):
        x = lib.tensor([[1.0, 2.0, -float("inf")], [-float("inf")] * 3], dtype=lib.float16)
        y = lib._safe_softmax(x, -1, dtype=lib.float32)
        return str(y.dtype).split(".")[-1], y.tolist()

    (got_dtype, got), (dtype, expected) = scenario(og), scenario(torch)
    assert got_dtype == dtype == "float32"
    np.testing.assert_allclose(got, expected, rtol=1e-6)  # float32 exp rounds differently
