"""F.multi_head_attention_forward against torch: for each path (packed or separate
in-projection, self-attention, key is value, bias_k/bias_v, add_zero_attn, static keys and
values, bool and float masks in 2-D and 3-D, is_causal, dropout, unbatched inputs, with and
without the weights) the outputs, the whole grad_fn chain and its saved fields, the gradients,
the random stream, the warnings and every refusal. torch's OpInfo samples run in
test_opinfo.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opgrad as og
from torch_oracle import assert_same_saved_fields, assert_same_tensor, rng_for

L, S, N, E, H = 3, 4, 2, 6, 2


def _tensor(lib, rng, shape, rg=True):
    return lib.tensor(rng.standard_normal(shape), dtype=lib.float64, requires_grad=rg)


def _bool_mask(lib, rng, shape):
    mask = rng.random(shape) < 0.3
    mask[..., 0] = False  # every row keeps one key, so no row is all -inf
    return lib.tensor(mask)


def _float_mask(lib, rng, shape):
    return lib.tensor(rng.standard_normal(shape), dtype=lib.float64)


def build(lib, case: str, **options):
    """The inputs of scenario ``case`` (same values in both libraries) and the call's
    keyword arguments."""
    rng = rng_for("mha", case)
    batch = () if options.pop("unbatched", False) else (N,)
    kdim = options.pop("kdim", E)
    vdim = options.pop("vdim", E)
    query = _tensor(lib, rng, (L,) + batch + (E,))
    sharing = options.pop("sharing", "none")
    key = query if sharing == "self" else _tensor(lib, rng, (S,) + batch + (kdim,))
    value = key if sharing in ("self", "kv") else _tensor(lib, rng, (S,) + batch + (vdim,))
    args = dict(
        query=query,
        key=key,
        value=value,
        embed_dim_to_check=E,
        num_heads=H,
        in_proj_weight=_tensor(lib, rng, (3 * E, E)),
        in_proj_bias=_tensor(lib, rng, (3 * E,)),
        bias_k=None,
        bias_v=None,
        add_zero_attn=False,
        dropout_p=0.0,
        out_proj_weight=_tensor(lib, rng, (E, E)),
        out_proj_bias=_tensor(lib, rng, (E,)),
    )
    makers = {"bool": _bool_mask, "float": _float_mask}
    for name in ("attn_mask", "key_padding_mask"):
        spec = options.pop(name, None)
        if spec is not None:
            kind, shape = spec
            args[name] = makers[kind](lib, rng, shape)
    if options.pop("bias_kv", False):
        args["bias_k"] = _tensor(lib, rng, (1, 1, E))
        args["bias_v"] = _tensor(lib, rng, (1, 1, E))
    if options.pop("separate", False):
        args["use_separate_proj_weight"] = True
        args["in_proj_weight"] = None
        args["q_proj_weight"] = _tensor(lib, rng, (E, E))
        args["k_proj_weight"] = _tensor(lib, rng, (E, kdim))
        args["v_proj_weight"] = _tensor(lib, rng, (E, vdim))
    if options.pop("static_kv", False):
        extra = S + 1
        args["static_k"] = _tensor(lib, rng, (N * H, extra, E // H))
        args["static_v"] = _tensor(lib, rng, (N * H, extra, E // H))
    for name in ("in_proj_bias", "out_proj_bias"):
        if options.pop(f"no_{name}", False):
            args[name] = None
    args.update(options)
    return args


CASES = {
    "self_attention_weights": dict(sharing="self"),
    "self_attention_no_weights": dict(sharing="self", need_weights=False),
    "key_is_value": dict(sharing="kv"),
    "key_is_value_no_weights_no_biases": dict(
        sharing="kv", need_weights=False, no_in_proj_bias=True, no_out_proj_bias=True
    ),
    "separate_inputs": dict(),
    "separate_inputs_no_in_proj_bias": dict(no_in_proj_bias=True),
    "separate_weights_other_dims": dict(separate=True, kdim=5, vdim=3),
    "separate_weights_no_weights": dict(separate=True, kdim=5, vdim=3, need_weights=False),
    "per_head_weights": dict(average_attn_weights=False),
    "bool_attn_mask_2d": dict(attn_mask=("bool", (L, S))),
    "float_attn_mask_3d": dict(attn_mask=("float", (N * H, L, S))),
    "float_attn_mask_3d_no_weights": dict(attn_mask=("float", (N * H, L, S)), need_weights=False),
    "bool_attn_mask_2d_no_weights": dict(attn_mask=("bool", (L, S)), need_weights=False),
    "key_padding_mask_only": dict(key_padding_mask=("bool", (N, S))),
    "key_padding_mask_only_no_weights": dict(key_padding_mask=("bool", (N, S)), need_weights=False),
    "both_masks_merged": dict(attn_mask=("float", (L, S)), key_padding_mask=("float", (N, S))),
    "both_masks_bool_no_weights": dict(
        attn_mask=("bool", (L, S)), key_padding_mask=("bool", (N, S)), need_weights=False
    ),
    "bias_kv_with_masks": dict(
        bias_kv=True, attn_mask=("float", (L, S)), key_padding_mask=("float", (N, S))
    ),
    "bias_kv_no_weights": dict(bias_kv=True, need_weights=False),
    "add_zero_attn_with_masks": dict(
        add_zero_attn=True, attn_mask=("bool", (N * H, L, S)), key_padding_mask=("bool", (N, S))
    ),
    "add_zero_attn_bias_kv": dict(add_zero_attn=True, bias_kv=True, need_weights=False),
    "static_kv": dict(static_kv=True),
    "static_kv_no_weights": dict(static_kv=True, need_weights=False),
    "causal_hint_to_sdpa": dict(attn_mask=("bool", (L, S)), is_causal=True, need_weights=False),
    "causal_hint_with_weights": dict(attn_mask=("bool", (L, S)), is_causal=True),
    "causal_hint_with_padding": dict(
        attn_mask=("bool", (L, S)),
        key_padding_mask=("bool", (N, S)),
        is_causal=True,
        need_weights=False,
    ),
    "unbatched": dict(unbatched=True, key_padding_mask=("bool", (S,))),
    "unbatched_3d_mask_no_weights": dict(
        unbatched=True, attn_mask=("float", (H, L, S)), need_weights=False
    ),
    "unbatched_self_attention": dict(unbatched=True, sharing="self", attn_mask=("bool", (L, L))),
    "eval_ignores_dropout": dict(dropout_p=0.5, training=False),
}


def graph_names(output) -> list:
    """Every node of ``output``'s graph, depth first along next_functions, by class name."""
    names, seen, stack = [], set(), [output.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        stack.extend(fn for fn, _ in reversed(node.next_functions))
    return names


def graph_nodes(output) -> list:
    nodes, seen, stack = [], set(), [output.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(fn for fn, _ in reversed(node.next_functions))
    return nodes


def run(lib, case: str, options: dict):
    args = build(lib, case, **dict(options))
    lib.manual_seed(7)
    out, weights = lib.nn.functional.multi_head_attention_forward(**args)
    return args, out, weights


def _leaves(args):
    return [v for k, v in sorted(args.items()) if hasattr(v, "requires_grad") and v.requires_grad]


@pytest.mark.parametrize("case", sorted(CASES))
def test_outputs_match_torch(torch, case):
    _, got, got_w = run(og, case, CASES[case])
    _, exp, exp_w = run(torch, case, CASES[case])
    assert_same_tensor(got, exp, rtol=1e-9, atol=1e-12, what="attn_output")
    if exp_w is None:
        assert got_w is None
    else:
        assert_same_tensor(got_w, exp_w, rtol=1e-9, atol=1e-12, what="attn_weights")


@pytest.mark.parametrize("case", sorted(CASES))
def test_grad_fn_chain_matches_torch(torch, case):
    _, got, got_w = run(og, case, CASES[case])
    _, exp, exp_w = run(torch, case, CASES[case])
    assert graph_names(got) == graph_names(exp)
    if exp_w is not None:
        assert graph_names(got_w) == graph_names(exp_w)


@pytest.mark.parametrize("case", sorted(CASES))
def test_saved_fields_match_torch(torch, case):
    got_args, got, _ = run(og, case, CASES[case])
    exp_args, exp, _ = run(torch, case, CASES[case])
    got_in, exp_in = _leaves(got_args), _leaves(exp_args)
    for g, e in zip(graph_nodes(got), graph_nodes(exp)):
        assert_same_saved_fields(torch, g, e, got_in, exp_in, what=type(e).__name__)


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradients_match_torch(torch, case):
    def grads(lib):
        args, out, weights = run(lib, case, CASES[case])
        rng = rng_for("mha grad", case)
        total = (out * lib.tensor(rng.standard_normal(tuple(out.shape)))).sum()
        if weights is not None:
            total = total + (weights * lib.tensor(rng.standard_normal(tuple(weights.shape)))).sum()
        return lib.autograd.grad(total, _leaves(args), allow_unused=True)

    for g, e in zip(grads(og), grads(torch)):
        if e is None:  # static keys and values leave the in-projection unused
            assert g is None
        else:
            assert_same_tensor(g, e, rtol=1e-8, atol=1e-11, what="gradient")


@pytest.mark.parametrize("need_weights", [True, False], ids=["weights", "sdpa"])
def test_dropout_draws_torch_masks(torch, need_weights):
    options = dict(sharing="self", dropout_p=0.4, need_weights=need_weights)
    _, got, got_w = run(og, "dropout", options)
    _, exp, exp_w = run(torch, "dropout", options)
    assert_same_tensor(got, exp, rtol=1e-9, atol=1e-12, what="attn_output")
    assert graph_names(got) == graph_names(exp)
    if need_weights:
        assert_same_tensor(got_w, exp_w, rtol=1e-9, atol=1e-12, what="attn_weights")
    # the same draws leave both generators at the same place
    assert og.rand(3).tolist() == torch.rand(3).tolist()


def _warnings_of(lib, case, options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(lib, case, options)
    return [(w.category.__name__, str(w.message)) for w in caught]


def test_mismatched_mask_types_warn_as_torch(torch):
    options = dict(attn_mask=("float", (L, S)), key_padding_mask=("bool", (N, S)))
    got = _warnings_of(og, "warn", options)
    assert got == _warnings_of(torch, "warn", options)
    assert got == [
        (
            "UserWarning",
            "Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type "
            "for both instead.",
        )
    ]


def test_matching_mask_types_do_not_warn(torch):
    options = dict(attn_mask=("bool", (L, S)), key_padding_mask=("bool", (N, S)))
    assert _warnings_of(og, "quiet", options) == _warnings_of(torch, "quiet", options) == []


def _error(lib, options, mutate=None):
    args = build(lib, "error", **dict(options))
    if mutate is not None:
        mutate(lib, args)
    try:
        lib.nn.functional.multi_head_attention_forward(**args)
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return type(exc).__name__, str(exc).replace("torch.", "LIB.").replace("opgrad.", "LIB.")
    return None


def _set(**values):
    def mutate(lib, args):
        for name, make in values.items():
            args[name] = make(lib)

    return mutate


ERRORS = {
    "query_4d": ({}, _set(query=lambda lib: lib.ones(1, L, N, E))),
    "batched_key_2d": ({}, _set(key=lambda lib: lib.ones(S, E))),
    "batched_padding_mask_1d": ({}, _set(key_padding_mask=lambda lib: lib.ones(S).bool())),
    "batched_attn_mask_4d": ({}, _set(attn_mask=lambda lib: lib.ones(1, 1, L, S).bool())),
    "unbatched_value_3d": (dict(unbatched=True), _set(value=lambda lib: lib.ones(S, 1, E))),
    "unbatched_padding_mask_2d": (
        dict(unbatched=True),
        _set(key_padding_mask=lambda lib: lib.ones(1, S).bool()),
    ),
    "unbatched_attn_mask_1d": (dict(unbatched=True), _set(attn_mask=lambda lib: lib.ones(S))),
    "unbatched_attn_mask_3d_shape": (
        dict(unbatched=True),
        _set(attn_mask=lambda lib: lib.ones(H + 1, L, S)),
    ),
    "integer_padding_mask": ({}, _set(key_padding_mask=lambda lib: lib.ones(N, S).long())),
    "integer_attn_mask": ({}, _set(attn_mask=lambda lib: lib.ones(L, S).long())),
    "causal_without_mask": (dict(is_causal=True), None),
    "embed_dim_to_check": (dict(embed_dim_to_check=E + 1), None),
    "heads_do_not_divide": (dict(num_heads=4), None),
    "key_value_shapes": ({}, _set(value=lambda lib: lib.ones(S + 1, N, E))),
    "separate_key_value_dims": (
        dict(separate=True, kdim=5, vdim=3),
        _set(value=lambda lib: lib.ones(S + 1, N, 3)),
    ),
    "no_in_proj_weight": ({}, _set(in_proj_weight=lambda lib: None)),
    "no_q_proj_weight": (dict(separate=True), _set(q_proj_weight=lambda lib: None)),
    "no_k_proj_weight": (dict(separate=True), _set(k_proj_weight=lambda lib: None)),
    "no_v_proj_weight": (dict(separate=True), _set(v_proj_weight=lambda lib: None)),
    "q_proj_weight_shape": (dict(separate=True), _set(q_proj_weight=lambda lib: lib.ones(E, 5))),
    "k_proj_weight_shape": (dict(separate=True), _set(k_proj_weight=lambda lib: lib.ones(5, E))),
    "v_proj_weight_shape": (dict(separate=True), _set(v_proj_weight=lambda lib: lib.ones(E, 2))),
    "attn_mask_2d_shape": ({}, _set(attn_mask=lambda lib: lib.ones(L, S + 1))),
    "attn_mask_3d_shape": ({}, _set(attn_mask=lambda lib: lib.ones(N, L, S))),
    "bias_k_without_bias_v": ({}, _set(bias_k=lambda lib: lib.ones(1, 1, E))),
    "bias_v_without_bias_k": ({}, _set(bias_v=lambda lib: lib.ones(1, 1, E))),
    "bias_with_static_k": (dict(bias_kv=True), _set(static_k=lambda lib: lib.ones(N * H, S, 3))),
    "bias_with_static_v": (dict(bias_kv=True), _set(static_v=lambda lib: lib.ones(N * H, S, 3))),
    "static_k_batch": ({}, _set(static_k=lambda lib: lib.ones(N, S, 3))),
    "static_k_head_dim": ({}, _set(static_k=lambda lib: lib.ones(N * H, S, 2))),
    "static_v_batch": ({}, _set(static_v=lambda lib: lib.ones(N, S, 3))),
    "static_v_head_dim": ({}, _set(static_v=lambda lib: lib.ones(N * H, S, 4))),
    "padding_mask_batch": ({}, _set(key_padding_mask=lambda lib: lib.ones(N + 1, S).bool())),
    "padding_mask_length": ({}, _set(key_padding_mask=lambda lib: lib.ones(N, S + 1).bool())),
    "attn_mask_not_a_tensor": (
        dict(key_padding_mask=("bool", (N, S))),
        _set(attn_mask=lambda lib: [[0.0]]),
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_refusal_matches_torch(torch, name):
    options, mutate = ERRORS[name]
    expected = _error(torch, options, mutate)
    assert expected is not None
    assert _error(og, options, mutate) == expected


def test_signature_matches_torch(torch):
    import inspect

    got = inspect.signature(og.nn.functional.multi_head_attention_forward)
    expected = inspect.signature(torch.nn.functional.multi_head_attention_forward)
    assert [(p.name, p.default, p.kind) for p in got.parameters.values()] == [
        (p.name, p.default, p.kind) for p in expected.parameters.values()
    ]


def test_torch_function_subclass_takes_the_call(torch):
    class Tagged(og.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is og.nn.functional.multi_head_attention_forward:
                return "handled"
            return super().__torch_function__(func, types, args, kwargs or {})

    args = build(og, "subclass")
    args["out_proj_bias"] = args["out_proj_bias"].detach().as_subclass(Tagged)
    assert og.nn.functional.multi_head_attention_forward(**args) == "handled"


def test_values_match_a_module_of_torch(torch):
    """torch's nn.MultiheadAttention calls this function: same numbers from its weights."""
    module = torch.nn.MultiheadAttention(E, H, dtype=torch.float64)
    x = np.random.default_rng(5).standard_normal((L, N, E))
    expected, expected_w = module(*(torch.tensor(x),) * 3)
    weights = {n: og.tensor(p.detach().numpy()) for n, p in module.named_parameters()}
    q = og.tensor(x)
    got, got_w = og.nn.functional.multi_head_attention_forward(
        q,
        q,
        q,
        E,
        H,
        weights["in_proj_weight"],
        weights["in_proj_bias"],
        None,
        None,
        False,
        0.0,
        weights["out_proj.weight"],
        weights["out_proj.bias"],
    )
    assert_same_tensor(got, expected, rtol=1e-9, atol=1e-12)
    assert_same_tensor(got_w, expected_w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "shape, dims",
    [((3, 2, 2, 4), (1, 2, 0, 3)), ((2, 3, 2, 4), (0, 2, 1, 3)), ((2, 2, 3, 4), (0, 1, 2, 3))],
    ids=["sequence_outermost", "heads_inner", "contiguous"],
)
def test_flash_attention_output_is_laid_out_like_the_query(torch, shape, dims):
    """scaled_dot_product_attention's CPU flash output keeps the query's dim order, on which
    the view-ness of multi_head_attention_forward's reshape depends."""

    def strides(lib):
        q = lib.ones(*shape, dtype=lib.float64).permute(*dims)
        out = lib.nn.functional.scaled_dot_product_attention(q, q, q)
        return out.stride(), out.permute(2, 0, 1, 3).reshape(-1, 4)._base is not None

    assert strides(og) == strides(torch)
