"""AccumulateGrad stores an incoming gradient without a copy only when nobody else
holds it, as PyTorch decides by the gradient's reference count.

Each scenario runs twice backward on opgrad and on torch and compares what a user
can see: the values of every tensor the user kept, the leaf's ``.grad``, whether
the two share memory, and the aten calls a dispatch mode sees while the first
gradient is stored (``detach`` when stolen, ``new_empty_strided`` + ``copy_`` when
copied). Where torch itself aliases (views of a user's gradient, a kept
``detach()``), opgrad aliases too.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

from torch_oracle import aten_log, assert_same


def _shares(a, b) -> bool:
    return bool(np.shares_memory(a.detach().numpy(), b.detach().numpy()))


def _report(x, kept) -> dict:
    """What the user sees after the second backward."""
    return {
        "kept": [k.tolist() for k in kept],
        "grad": x.grad.tolist(),
        "grad_shares_kept": [_shares(x.grad, k) for k in kept],
    }


def _leaf(lib):
    return lib.tensor([1.0, 2.0], requires_grad=True)


# ---- the patterns: each returns (leaf, tensors the user kept) after two backwards ----------


def hook_keeps_gradient(lib):
    x, kept = _leaf(lib), []
    x.register_hook(lambda g: kept.append(g))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return x, kept


def hook_returns_global(lib):
    x, kept = _leaf(lib), [lib.ones(2)]
    handle = x.register_hook(lambda g: kept[0])
    (x * 2).sum().backward()
    handle.remove()
    (x * 3).sum().backward()
    return x, kept


def non_leaf_hook_keeps_pass_through(lib):
    x, kept = _leaf(lib), []
    y = x + 0  # AddBackward0 hands its gradient on unchanged
    y.register_hook(lambda g: kept.append(g))
    (y * 2).sum().backward()
    (x * 3).sum().backward()
    return x, kept


def _function_returning(lib, pick):
    class Returns(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.buf = lib.ones(2)
            ctx.save_for_backward(lib.full((2,), 7.0))
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return pick(ctx)

    return Returns


def function_returns_ctx_attribute(lib):
    x = _leaf(lib)
    y = _function_returning(lib, lambda ctx: ctx.buf).apply(x)
    kept = [y.grad_fn.buf]
    y.sum().backward(retain_graph=True)
    (x * 3).sum().backward()
    return x, kept


def function_returns_saved_tensor(lib):
    x = _leaf(lib)
    y = _function_returning(lib, lambda ctx: ctx.saved_tensors[0]).apply(x)
    y.sum().backward(retain_graph=True)
    (x * 3).sum().backward()
    kept = list(y.grad_fn.saved_tensors)
    y.sum().backward()  # the saved tensor is unchanged: no version error
    return x, kept


def function_returns_global(lib):
    kept = [lib.ones(2)]
    x = _leaf(lib)
    _function_returning(lib, lambda ctx: kept[0]).apply(x).sum().backward()
    (x * 3).sum().backward()
    return x, kept


def function_returns_saved_output(lib):
    # torch saves an output as a new tensor on the same memory: returned from
    # backward, it is stolen, and the output itself changes with .grad.
    class SavedOutput(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 1
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return ctx.saved_tensors[0]

    x = _leaf(lib)
    y = SavedOutput.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward(retain_graph=True)
    return x, [y]


def accumulate_post_hook_keeps_gradient(lib):
    # The post-hook runs after the gradient was stored: torch steals it, then the
    # hook keeps the stored memory.
    x, kept = _leaf(lib), []
    y = x * 2
    y.grad_fn.next_functions[0][0].register_hook(lambda gi, go: kept.append(go[0]))
    y.sum().backward()
    (x * 3).sum().backward()
    return x, kept


def node_post_hook_keeps_gradient(lib):
    x, kept = _leaf(lib), []
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: kept.append(gi[0]))
    y.sum().backward()
    (x * 3).sum().backward()
    return x, kept


def accumulate_pre_hook_keeps_gradient(lib):
    x, kept = _leaf(lib), []
    y = x * 2
    y.grad_fn.next_functions[0][0].register_prehook(lambda go: kept.append(go[0]))
    y.sum().backward()
    (x * 3).sum().backward()
    return x, kept


def multi_grad_hook_keeps_gradients(lib):
    x, z, kept = _leaf(lib), _leaf(lib), []
    lib.autograd.graph.register_multi_grad_hook((x, z), lambda gs: kept.extend(gs))
    (x * 2 + z * 2).sum().backward()
    (x * 3 + z * 3).sum().backward()
    return x, kept


def post_accumulate_hook_keeps_grad(lib):
    x, kept = _leaf(lib), []
    x.register_post_accumulate_grad_hook(lambda t: kept.append(t.grad))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return x, kept


def hook_keeps_view(lib):
    x, kept = _leaf(lib), []
    x.register_hook(lambda g: kept.append(g[:]))  # a view keeps its base
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return x, kept


def hook_keeps_detached(lib):
    # torch's detach() shares memory without holding the gradient: torch steals.
    x, kept = _leaf(lib), []
    x.register_hook(lambda g: kept.append(g.detach()))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return x, kept


def hook_keeps_data(lib):
    x, kept = _leaf(lib), []
    x.register_hook(lambda g: kept.append(g.data))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return x, kept


def cat_backward_views_user_gradient(lib):
    # CatBackward0 hands on narrow views of the caller's gradient: torch steals them.
    a, b = _leaf(lib), _leaf(lib)
    g = lib.ones(4)
    lib.cat([a, b]).backward(g)
    lib.cat([a, b]).backward(g)
    return a, [g]


def stack_backward_views_user_gradient(lib):
    a, b = _leaf(lib), _leaf(lib)
    g = lib.ones(2, 2)
    lib.stack([a, b]).backward(g)
    lib.stack([a, b]).backward(g)
    return a, [g]


def reshape_backward_views_user_gradient(lib):
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    g = lib.ones(2, 2)
    a.reshape(2, 2).backward(g)
    a.reshape(2, 2).backward(g)
    return a, [g]


def leaf_backward_with_user_gradient(lib):
    a, g = _leaf(lib), lib.ones(2)
    a.backward(g)
    a.backward(g)
    return a, [g]


def gradient_sent_along_two_edges(lib):
    a, b = _leaf(lib), _leaf(lib)
    (a * 1 + b).backward(lib.ones(2) * 2)
    (a * 1 + b).backward(lib.ones(2))
    return a, [b.grad]


def custom_op_backward_returns_kept_tensor(lib):
    kept = [lib.ones(2)]
    # the op's name carries the library's so that each registers its own
    name = f"steal_{lib.__name__}::returns_kept"

    @lib.library.custom_op(name, mutates_args=(), schema="(Tensor x) -> Tensor")
    def returns_kept(x):
        return x.clone()

    returns_kept.register_autograd(lambda ctx, g: kept[0])
    x = _leaf(lib)
    y = returns_kept(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward(retain_graph=True)
    y.sum().backward()  # no spurious "modified by an inplace operation"
    return x, kept


PATTERNS = [
    hook_keeps_gradient,
    hook_returns_global,
    non_leaf_hook_keeps_pass_through,
    function_returns_ctx_attribute,
    function_returns_saved_tensor,
    function_returns_global,
    function_returns_saved_output,
    accumulate_post_hook_keeps_gradient,
    node_post_hook_keeps_gradient,
    accumulate_pre_hook_keeps_gradient,
    multi_grad_hook_keeps_gradients,
    post_accumulate_hook_keeps_grad,
    hook_keeps_view,
    hook_keeps_detached,
    hook_keeps_data,
    cat_backward_views_user_gradient,
    stack_backward_views_user_gradient,
    reshape_backward_views_user_gradient,
    leaf_backward_with_user_gradient,
    gradient_sent_along_two_edges,
    custom_op_backward_returns_kept_tensor,
]


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.__name__)
def test_kept_gradients_change_only_where_torch_aliases(torch, pattern):
    def scenario(lib):
        x, kept = pattern(lib)
        return _report(x, kept)

    assert_same(torch, scenario)


def test_a_kept_gradient_is_not_rewritten_by_the_next_backward(torch):
    import opgrad

    x, kept = hook_keeps_gradient(opgrad)
    assert kept[0].tolist() == [2.0, 2.0]  # 5.0 when .grad was the kept tensor
    assert x.grad.tolist() == [5.0, 5.0]


def _first_store_log(pattern_setup):
    def scenario(lib):
        x, backward = pattern_setup(lib)
        log = aten_log(lib, backward)
        gc.collect()
        return log

    return scenario


def _fresh_product(lib):
    x = _leaf(lib)
    return x, lambda: (x * 2).sum().backward()


def _kept_by_hook(lib):
    x, kept = _leaf(lib), []
    x.register_hook(lambda g: kept.append(g))
    return x, lambda: (x * 2).sum().backward()


def _two_edges(lib):
    a, b = _leaf(lib), _leaf(lib)
    s = a * 1 + b
    return a, lambda: s.backward(lib.ones(2) * 2)


def _backward_inputs_non_leaf_and_leaf(lib):
    # backward(inputs=) keeps no reference to the non-leaf's gradient, which AddBackward0
    # hands on to the leaf unchanged
    x = _leaf(lib)
    y = x + 0
    return x, lambda: (y * 2).sum().backward(inputs=[y, x])


def _transposed_leaf(lib):
    # a gradient laid out unlike the leaf is copied into the leaf's layout
    x = lib.ones(3, 2).t().detach().requires_grad_()
    return x, lambda: (x * 2).sum().backward()


@pytest.mark.parametrize(
    "setup",
    [
        _fresh_product,
        _kept_by_hook,
        _two_edges,
        _backward_inputs_non_leaf_and_leaf,
        _transposed_leaf,
    ],
    ids=lambda s: s.__name__.strip("_"),
)
def test_steal_or_copy_is_the_call_torch_makes(torch, setup):
    assert_same(torch, _first_store_log(setup))


def test_a_fresh_gradient_is_stored_without_a_copy():
    import opgrad

    x = _leaf(opgrad)
    arrays = []
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: arrays.append(gi[0].detach().numpy()))
    y.sum().backward()
    assert np.shares_memory(x.grad.numpy(), arrays[0])


def _transposed_leaf_summed(lib):
    # sum's gradient is an expanded (stride 0) tensor: never stealable, always copied
    return lib.ones(3, 2).t().detach().requires_grad_()


def _permuted_leaf_summed(lib):
    return lib.ones(2, 3, 4).permute(2, 0, 1).detach().requires_grad_()


def _sliced_leaf_summed(lib):
    # not dense: the copy is row-major contiguous
    return lib.ones(4, 6)[:, ::2].detach().requires_grad_()


@pytest.mark.parametrize(
    "make_leaf",
    [_transposed_leaf_summed, _permuted_leaf_summed, _sliced_leaf_summed],
    ids=lambda s: s.__name__.strip("_"),
)
def test_a_copied_gradient_takes_the_dense_leafs_strides(torch, make_leaf):
    def scenario(lib):
        x = make_leaf(lib)
        x.sum().backward()
        return x.grad.stride(), x.grad.tolist()

    assert_same(torch, scenario)
