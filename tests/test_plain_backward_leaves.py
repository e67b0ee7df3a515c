"""In the plain state the engine stores a leaf's first gradient where it routes it, and a
gradient reduced for a hookless leaf is made already detached. What the user sees must
stay torch's: which leaf shares memory with the gradient a node returned, what a hook
receives, and whether ``.grad`` is a view. The same scenarios run with the plain path
off in CI's second pass.
"""

from __future__ import annotations

import numpy as np
import pytest

import opgrad


def _shares(tensor, array) -> bool:
    return bool(np.shares_memory(tensor.detach().numpy(), array))


def _function(lib, backward, inputs: int = 1):
    """A custom Function: the sum of its inputs forward, ``backward(g)`` backward."""

    class Custom(lib.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            total = args[0] * 1
            for arg in args[1:]:
                total = total + arg
            return total

        @staticmethod
        def backward(ctx, grad):
            return backward(grad)

    return Custom


def fresh_gradient(lib) -> dict:
    returned = []

    def backward(grad):
        fresh = grad * 3
        returned.append(fresh.detach().numpy())  # the memory, not the tensor
        return fresh

    x = lib.ones(3, requires_grad=True)
    _function(lib, backward).apply(x).sum().backward()
    return {"grad": x.grad.tolist(), "stored_without_copy": _shares(x.grad, returned[0])}


def gradient_the_node_keeps(lib) -> dict:
    kept = []

    def backward(grad):
        fresh = grad * 3
        kept.append(fresh)
        return fresh

    x = lib.ones(3, requires_grad=True)
    _function(lib, backward).apply(x).sum().backward()
    kept[0].mul_(10)  # the leaf's gradient must not change with it
    return {"grad": x.grad.tolist(), "shares_kept": _shares(x.grad, kept[0].numpy())}


def one_gradient_for_two_leaves(lib, swapped: bool) -> dict:
    returned = []

    def backward(grad):
        fresh = grad * 3
        returned.append(fresh.detach().numpy())
        return fresh, fresh

    a, b = lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)
    inputs = (b, a) if swapped else (a, b)
    _function(lib, backward).apply(*inputs).sum().backward()
    return {
        "grads": [a.grad.tolist(), b.grad.tolist()],
        "shares": [_shares(a.grad, returned[0]), _shares(b.grad, returned[0])],
    }


def leaf_with_a_gradient_already(lib) -> dict:
    x = lib.ones(3, requires_grad=True)
    earlier = lib.zeros(3)
    x.grad = earlier
    (x * 3).sum().backward()
    return {"same_tensor": x.grad is earlier, "grad": x.grad.tolist()}


def bias_reduced_by_the_engine(lib) -> dict:
    x = lib.ones(4, 3)
    w = lib.ones(3, 2, requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    (x.matmul(w) + b).sum().backward()
    return {"grad": b.grad.tolist(), "is_view": b.grad._is_view(), "version": b.grad._version}


def bias_with_a_tensor_hook(lib) -> dict:
    x = lib.ones(4, 3)
    w = lib.ones(3, 2, requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    b.register_hook(lambda g: seen.append((g._is_view(), g.is_contiguous(), g.tolist())))
    (x.matmul(w) + b).sum().backward()
    return {"hook_saw": seen, "grad_is_view": b.grad._is_view()}


def bias_with_a_post_accumulate_hook(lib) -> dict:
    x = lib.ones(4, 3)
    b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    b.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad._is_view()))
    (x + b).sum().backward()
    return {"hook_saw_view": seen, "grad": b.grad.tolist()}


SCENARIOS = {
    "fresh_gradient": fresh_gradient,
    "gradient_the_node_keeps": gradient_the_node_keeps,
    "one_gradient_for_two_leaves": lambda lib: one_gradient_for_two_leaves(lib, False),
    "one_gradient_for_two_leaves_swapped": lambda lib: one_gradient_for_two_leaves(lib, True),
    "leaf_with_a_gradient_already": leaf_with_a_gradient_already,
    "bias_reduced_by_the_engine": bias_reduced_by_the_engine,
    "bias_with_a_tensor_hook": bias_with_a_tensor_hook,
    "bias_with_a_post_accumulate_hook": bias_with_a_post_accumulate_hook,
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_what_a_leaf_stores_is_what_torch_stores(torch, name):
    scenario = SCENARIOS[name]
    assert scenario(opgrad) == scenario(torch)
