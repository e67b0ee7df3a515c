"""SavedTensor handles (``grad_fn._raw_saved_*``, ``_raw_saved_tensors`` of custom Function
nodes) against torch (issue 16 point 4): what ``.data`` and ``.unpack_hook`` give, the
register_hooks errors, handles after the graph is freed, and InplaceFunction. Follows the
reference tests test_get_data_and_hooks_from_raw_saved_variable,
test_cant_create_saved_tensors and test_custom_function_saved_tensors."""

from __future__ import annotations

import pytest

import opgrad as og
from torch_oracle import message


def _outcome(fn):
    try:
        return "ok", fn()
    except (RuntimeError, TypeError) as err:
        return type(err).__name__, message(err).split("\n")[0]


def test_data_and_unpack_hook(torch):
    def run(lib):
        def pack_hook(t):
            return t

        def unpack_hook(t):
            return t

        a = lib.tensor(2.0, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            b = a**2
        c = b.exp()
        d = c**2
        pow_sv = b.grad_fn._raw_saved_self
        exp_sv = c.grad_fn._raw_saved_result
        pow2_sv = d.grad_fn._raw_saved_self
        return (
            pow_sv.data is a,
            pow_sv.unpack_hook is unpack_hook,
            exp_sv.data is c,
            exp_sv.data.tolist(),
            exp_sv.unpack_hook,
            pow2_sv.data is c,
            pow2_sv.unpack_hook,
        )

    assert run(og) == run(torch)


def test_saved_tensors_cannot_be_made_from_python(torch):
    def run(lib):
        return _outcome(lambda: lib.autograd.SavedTensor())

    assert run(og) == run(torch)


@pytest.mark.parametrize("save", [True, False])
def test_custom_function_raw_saved_tensors(torch, save):
    def run(lib):
        class MyFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if save:
                    ctx.save_for_backward(x, None)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = MyFn.apply(a)
        out = [len(y.grad_fn.saved_tensors)]
        saved = y.grad_fn._raw_saved_tensors
        out.append([type(s).__name__ for s in saved])
        if not save:
            return out
        out.append(saved[1].data)
        out.append(_outcome(lambda: saved[1].register_hooks(lambda x: x, lambda x: x)))
        out.append(_outcome(lambda: saved[0].register_hooks(lambda x: x))[0])
        out.append(_outcome(lambda: saved[0].register_hooks(1, 1))[0])
        out.append(_outcome(lambda: saved[0].register_hooks(lambda x: x, lambda x: x)))
        out.append(_outcome(lambda: saved[0].register_hooks(lambda x: x, lambda x: x)))
        y.sum().backward()
        del saved
        out.append(_outcome(lambda: y.grad_fn._raw_saved_tensors))
        out.append(_outcome(lambda: y.grad_fn.saved_tensors))
        return out

    assert run(og) == run(torch)


def test_inplace_function_remembers_inplace(torch):
    def run(lib):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return (
                lib.autograd.function.InplaceFunction().inplace,
                lib.autograd.function.InplaceFunction(inplace=True).inplace,
                issubclass(lib.autograd.function.InplaceFunction, lib.autograd.Function),
            )

    assert run(og) == run(torch)


def test_once_differentiable_results_hang_on_an_error_node(torch):
    def run(lib):
        once_differentiable = lib.autograd.function.once_differentiable

        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            @once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * x

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        seed = lib.ones(2, requires_grad=True)
        (g,) = lib.autograd.grad(Twice.apply(x), x, seed, create_graph=True)
        node = g.grad_fn
        return (
            type(node).__name__,
            node.name().split("::", 1)[-1],
            [type(n).__name__ for n, _ in node.next_functions],
            isinstance(node, lib.autograd.graph.Node),
            repr(g).split("grad_fn=")[1],
            _outcome(lambda: g.sum().backward()),
        )

    assert run(og) == run(torch)
