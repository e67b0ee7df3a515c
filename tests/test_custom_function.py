"""Custom autograd Functions (``opgrad.autograd.Function``) against PyTorch.

Follows these tests of PyTorch's test_autograd.py (TestAutograd): test_function,
test_once_differentiable, test_function_returns_input, test_function_returns_undefined_tensor,
test_materialize_grads, test_dont_materialize_grads, test_set_materialize_non_diff_grads,
test_legacy_function_deprecation_exception, test_custom_function_exception,
test_custom_function_non_tensor_inputs_outputs, test_custom_function_no_tensors,
test_custom_function_vmap_defaults, test_custom_function_setup_context_simple,
test_custom_function_setup_context_multi_output, test_custom_function_setup_context_multi_input,
test_hook_none (needs_input_grad), test_saved_variables_deprecated, test_mark_non_differentiable,
test_mark_non_differentiable_mixed, test_mark_non_differentiable_none, test_return_duplicate,
test_return_duplicate_inplace, test_custom_autograd_repeated_grad_grad,
test_custom_autograd_no_early_free, test_save_none_for_backward, test_too_many_grads,
test_custom_function_saved_tensors, test_autograd_node_isinstance,
test_autograd_python_custom_function_inplace, test_custom_function_mark_output_view_of_intermediate,
test_custom_function_inplace_on_view_of_leaf, test_custom_function_saving_mutated_view_no_leak,
test_custom_function_return_view_in_nograd, test_grad_mode_restored_reentrant,
test_custom_function_error, test_custom_function_local_inplace and the anomaly-mode NaN checks
on custom Functions. The forward-mode (jvp), vmap, functorch and torch.compile parts of those
tests are out of scope. Cases the reference file does not spell out (keyword arguments to
``apply``, gradient shape/dtype validation, hook return counts, non-tensor gradients) pin
torch 2.13's behaviour directly.

Every test runs one scenario with ``lib = opgrad`` and ``lib = torch`` and compares
plain Python results (lists of floats, logs, node names, error type and text). The Function
classes are defined inside each scenario, subclassing ``lib.autograd.Function``, so both
libraries see classes with the same name (and so the same ``<Name>Backward`` nodes).
"""

import warnings

import pytest

import opgrad as og
from torch_oracle import assert_same, assert_same_error, dtype_name, message, outcome, vals

# ---------------------------------------------------------------------------
# Helpers


def rounded(t, digits=5):
    """A 1-d tensor's values rounded, for transcendental results."""
    return None if t is None else [round(v, digits) for v in vals(t)]


def all_vals(tensors):
    return [vals(t) for t in tensors]


def grads(*tensors):
    return [vals(t.grad) for t in tensors]


def node_name(t):
    """The class name of a tensor's grad_fn (None for leaves and constants)."""
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def edges(node):
    """A node's next_functions as (class name or None, input_nr) pairs."""
    return [(None if fn is None else type(fn).__name__, nr) for fn, nr in node.next_functions]


def warned(fn):
    """Run ``fn`` recording warnings: (outcome, [(category name, normalised text)])."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = outcome(fn)
    texts = []
    for w in caught:
        text = message(w.message).split(" (Triggered internally")[0]
        texts.append((w.category.__name__, text))
    return result, texts


def leaf(lib, values=(1.0, 2.0, 3.0)):
    return lib.tensor(list(values), requires_grad=True)


def const(lib, values=(0.5, -1.0, 2.0)):
    return lib.tensor(list(values))


# grad mode on and anomaly mode off around every test, in both libraries
pytestmark = pytest.mark.usefixtures("fresh_global_modes")


# Small Functions shared by several scenarios (built per library).


def square_fn(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return 2 * a * grad

    return Square


def scaled_product_fn(lib):
    """f(a, b, k) = a * b * k with a Python scalar k."""

    class ScaledProduct(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            ctx.save_for_backward(a, b)
            ctx.k = k
            return a * b * k

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b * ctx.k, grad * a * ctx.k, None

    return ScaledProduct


def identity_fn(lib):
    class Identity(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return Identity


# ---------------------------------------------------------------------------
# Values and gradients


def test_module_exposes_function_and_once_differentiable(torch):
    def scenario(lib):
        fn_mod = lib.autograd.function
        return (
            lib.autograd.Function is fn_mod.Function,
            callable(fn_mod.once_differentiable),
            issubclass(fn_mod.BackwardCFunction, lib.autograd.graph.Node),
            hasattr(fn_mod, "FunctionCtx"),
        )

    assert_same(torch, scenario)


def test_single_input_value_and_gradient(torch):
    def scenario(lib):
        x = leaf(lib)
        y = square_fn(lib).apply(x)
        y.sum().backward()
        return vals(y), y.requires_grad, y.is_leaf, grads(x)

    assert_same(torch, scenario)


def test_tensors_and_python_scalar_inputs(torch):
    # t1 + s * t2 + t1 * t2, the shape of PyTorch's test_function
    def scenario(lib):
        class Blend(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t1, s, t2):
                ctx.s = s
                ctx.save_for_backward(t1, t2)
                return t1 + s * t2 + t1 * t2

            @staticmethod
            def backward(ctx, grad):
                t1, t2 = ctx.saved_tensors
                return grad + grad * t2, None, grad * ctx.s + grad * t1

        x = leaf(lib)
        w = leaf(lib, (4.0, -1.0, 0.5))
        y = Blend.apply(x, 3, w)
        (y * y).sum().backward()
        return vals(y), grads(x, w)

    assert_same(torch, scenario)


def test_two_outputs_both_used(torch):
    def scenario(lib):
        class SumAndDiff(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a + b, a - b

            @staticmethod
            def backward(ctx, g_sum, g_diff):
                return g_sum + g_diff, g_sum - g_diff

        x, w = leaf(lib), leaf(lib, (5.0, 7.0, 9.0))
        s, d = SumAndDiff.apply(x, w)
        (s * 2 + d * 3).sum().backward()
        return vals(s), vals(d), node_name(s), s.grad_fn is d.grad_fn, grads(x, w)

    assert_same(torch, scenario)


def test_forward_returning_a_one_element_tuple_gives_a_tuple(torch):
    def scenario(lib):
        class Wrapped(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return (a * 2,)

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        x = leaf(lib)
        out = Wrapped.apply(x)
        out[0].sum().backward()
        return type(out).__name__, len(out), vals(out[0]), grads(x)

    assert_same(torch, scenario)


def test_non_tensor_inputs_and_outputs(torch):
    def scenario(lib):
        seen = []

        class Mixed(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t1, scale, t2, label):
                ctx.scale = scale
                seen.append(("needs", ctx.needs_input_grad))
                return scale, t1 * scale + t2, None, label, t1 * t2, True

            @staticmethod
            def backward(ctx, *gs):
                seen.append(("grads", len(gs), all_vals(gs)))
                return gs[1] * ctx.scale + gs[4] * 2, None, gs[1], None

        x = leaf(lib)
        c = const(lib)
        res = Mixed.apply(x, 3, c, "label")
        kinds = [type(r).__name__ if not isinstance(r, lib.Tensor) else "Tensor" for r in res]
        lib.autograd.backward([res[1].sum(), res[4].sum()])
        return (
            kinds,
            res[0],
            res[2],
            res[3],
            res[5],
            vals(res[1]),
            vals(res[4]),
            [res[1].requires_grad, res[4].requires_grad],
            seen,
            grads(x, c),
        )

    assert_same(torch, scenario)


def test_no_tensor_inputs_at_all(torch):
    def scenario(lib):
        class Plain(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, scale):
                return a * b * scale, "tag", None

            @staticmethod
            def backward(ctx, *gs):
                return gs

        return Plain.apply(2, 3.5, 2)

    assert_same(torch, scenario)


def test_outputs_do_not_require_grad_when_no_input_does(torch):
    def scenario(lib):
        ran = []

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ran.append(vals(a))
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        y = Double.apply(const(lib))
        return vals(y), y.requires_grad, y.grad_fn is None, y.is_leaf, ran

    assert_same(torch, scenario)


def test_outputs_do_not_require_grad_under_no_grad(torch):
    def scenario(lib):
        Square = square_fn(lib)
        x = leaf(lib)
        with lib.no_grad():
            y = Square.apply(x)
        return vals(y), y.requires_grad, y.grad_fn is None

    assert_same(torch, scenario)


def test_fresh_float_output_joins_the_graph_integer_output_does_not(torch):
    def scenario(lib):
        seen = []

        class Fresh(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return lib.ones(3), (a * 10).long(), a * 2

            @staticmethod
            def backward(ctx, g_ones, g_long, g_twice):
                seen.append([dtype_name(g_long.dtype), vals(g_long), vals(g_ones)])
                return g_twice * 2 + g_ones

        x = leaf(lib)
        ones, longs, twice = Fresh.apply(x)
        flags = [(t.requires_grad, node_name(t)) for t in (ones, longs, twice)]
        twice.sum().backward()
        return flags, vals(longs), seen, grads(x)

    assert_same(torch, scenario)


def test_grad_mode_inside_forward_and_backward(torch):
    def scenario(lib):
        log = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                log.append(("forward", lib.is_grad_enabled(), a.requires_grad))
                return a * 3

            @staticmethod
            def backward(ctx, grad):
                log.append(("backward", lib.is_grad_enabled()))
                return grad * 3

        x = leaf(lib)
        lib.autograd.grad(Probe.apply(x).sum(), x)
        lib.autograd.grad(Probe.apply(x).sum(), x, create_graph=True)
        log.append(("after", lib.is_grad_enabled()))
        return log

    assert_same(torch, scenario)


def test_forward_receives_the_caller_tensor_objects(torch):
    def scenario(lib):
        x, c = leaf(lib), const(lib)
        same = []

        class Check(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                same.append((a is x, b is c))
                return a * b

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        Check.apply(x, c)
        return same

    assert_same(torch, scenario)


def test_matrix_function_computes_only_needed_gradients(torch):
    def scenario(lib):
        class MatMul(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a.mm(b)

            @staticmethod
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                ga = grad.mm(b.t()) if ctx.needs_input_grad[0] else None
                gb = a.t().mm(grad) if ctx.needs_input_grad[1] else None
                return ga, gb

        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = lib.tensor([[0.5, -1.0], [2.0, 1.0]])
        y = MatMul.apply(a, b)
        (y * y).sum().backward()
        return vals(y), grads(a, b)

    assert_same(torch, scenario)


def test_chained_functions_and_autograd_grad(torch):
    def scenario(lib):
        Square, Identity = square_fn(lib), identity_fn(lib)
        x = leaf(lib)
        y = Square.apply(Identity.apply(Square.apply(x)))
        (gx,) = lib.autograd.grad(y.sum(), x)
        return vals(y), vals(gx), node_name(y), edges(y.grad_fn)

    assert_same(torch, scenario)


def test_each_apply_builds_its_own_node_and_gradients_accumulate(torch):
    def scenario(lib):
        ScaledProduct = scaled_product_fn(lib)
        x, w = leaf(lib), leaf(lib, (2.0, 2.0, 2.0))
        y1 = ScaledProduct.apply(x, w, 2.0)
        y2 = ScaledProduct.apply(x, w, -1.0)
        (y1 + y2).sum().backward()
        return y1.grad_fn is y2.grad_fn, (y1.grad_fn.k, y2.grad_fn.k), grads(x, w)

    assert_same(torch, scenario)


def test_function_with_transcendental_ops(torch):
    def scenario(lib):
        class SoftStep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a.sigmoid() * a.exp()
                ctx.save_for_backward(a)
                return out

            @staticmethod
            def backward(ctx, grad):
                (a,) = ctx.saved_tensors
                s = a.sigmoid()
                return grad * (s * (1 - s) * a.exp() + s * a.exp())

        x = leaf(lib, (-1.0, 0.0, 0.5))
        y = SoftStep.apply(x)
        y.sum().backward()
        return rounded(y), rounded(x.grad)

    assert_same(torch, scenario)


def test_retain_graph_allows_a_second_backward(torch):
    def scenario(lib):
        x = leaf(lib)
        y = square_fn(lib).apply(x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return grads(x)

    assert_same(torch, scenario)


def test_second_backward_without_retain_graph_fails(torch):
    def scenario(lib):
        y = square_fn(lib).apply(leaf(lib)).sum()
        y.backward()
        y.backward()

    assert_same_error(torch, scenario, RuntimeError, "Trying to backward through the graph")


def test_gradcheck_and_gradgradcheck_of_a_function(torch):
    def scenario(lib):
        Square = square_fn(lib)
        x = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
        return (
            lib.autograd.gradcheck(Square.apply, (x,)),
            lib.autograd.gradgradcheck(Square.apply, (x,)),
        )

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# apply: arguments


def test_apply_accepts_keyword_arguments(torch):
    def scenario(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, scale=2.0):
                ctx.scale = scale
                return a * scale

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.scale, None

        x = leaf(lib)
        y1 = Scale.apply(x, scale=3.0)
        y2 = Scale.apply(x)
        y3 = Scale.apply(a=x, scale=-1.0)
        (y1 + y2 + y3).sum().backward()
        return vals(y1), vals(y2), vals(y3), grads(x)

    assert_same(torch, scenario)


def test_keyword_tensor_arguments_are_inputs_in_signature_order(torch):
    def scenario(lib):
        class Weighted(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, scale=2.0):
                return a * scale

            @staticmethod
            def backward(ctx, grad):
                return grad * 10, grad * 7

        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        y = Weighted.apply(scale=w, a=x)
        first_is_x = y.grad_fn.next_functions[0][0].variable is x
        y.sum().backward()
        return first_is_x, len(y.grad_fn.next_functions), grads(x, w)

    assert_same(torch, scenario)


def test_needs_input_grad_counts_keyword_arguments(torch):
    def scenario(lib):
        seen = []

        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, scale=2.0):
                seen.append(ctx.needs_input_grad)
                return a * scale

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        x = leaf(lib)
        Scale.apply(x)
        Scale.apply(x, scale=5.0)
        Scale.apply(x, 5.0)
        return seen

    assert_same(torch, scenario)


def test_keyword_argument_counts_as_an_input_for_the_gradient_count(torch):
    def scenario(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, scale=2.0):
                return a * scale

            @staticmethod
            def backward(ctx, grad):
                return grad * 10

        Scale.apply(leaf(lib), scale=3.0).sum().backward()

    assert_same_error(torch, scenario, RuntimeError, "incorrect number of gradients")


@pytest.mark.parametrize(
    "call, phrase",
    [
        ("unknown_keyword", "got an unexpected keyword argument 'foo'"),
        ("too_many_positional", "takes from 2 to 3 positional arguments but 4 were given"),
        ("missing_argument", "missing 1 required positional argument: 'a'"),
    ],
)
def test_apply_with_bad_arguments_raises_type_error(torch, call, phrase):
    # The full text comes from CPython's call machinery (torch calls forward from C++, so
    # its text lacks the qualified name); the type and the key phrase must match.
    def scenario(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, scale=2.0):
                return a * scale

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        x = leaf(lib)
        if call == "unknown_keyword":
            Scale.apply(x, foo=1)
        elif call == "too_many_positional":
            Scale.apply(x, 1.0, 2.0)
        else:
            Scale.apply()

    for lib in (torch, og):
        kind, text = outcome(lambda: scenario(lib))
        assert (lib.__name__, kind, phrase in text) == (lib.__name__, "TypeError", True), text


# ---------------------------------------------------------------------------
# The node: <Name>Backward, a Node, its edges and hooks


def test_grad_fn_type_name_and_node_identity(torch):
    def scenario(lib):
        x = leaf(lib)
        y = square_fn(lib).apply(x)
        node = y.grad_fn
        return (
            type(node).__name__,
            node.name(),
            isinstance(node, lib.autograd.graph.Node),
            issubclass(type(node), lib.autograd.graph.Node),
            isinstance(node, lib.autograd.function.BackwardCFunction),
            repr(y),
        )

    assert_same(torch, scenario)


def test_next_functions_skip_non_tensor_inputs(torch):
    def scenario(lib):
        class Combine(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k, b, d):
                return a * k + b + d

            @staticmethod
            def backward(ctx, grad):
                return grad, None, grad, grad

        x = leaf(lib)
        y = Combine.apply(x, 2.0, const(lib), x * 3)
        return edges(y.grad_fn), y.grad_fn.next_functions[0][0].variable is x

    assert_same(torch, scenario)


def test_ctx_is_the_grad_fn_in_forward_and_backward(torch):
    def scenario(lib):
        kept = {}

        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                kept["forward"] = ctx
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                kept["backward"] = ctx
                return grad * 2

        y = Keep.apply(leaf(lib))
        same_in_forward = kept["forward"] is y.grad_fn
        is_ctx = isinstance(y.grad_fn, lib.autograd.function.FunctionCtx)
        y.sum().backward()
        return same_in_forward, kept["backward"] is y.grad_fn, is_ctx

    assert_same(torch, scenario)


def test_ctx_attributes_live_across_forward_and_backward(torch):
    def scenario(lib):
        class Remember(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k, tag):
                ctx.k = k
                ctx.tag = tag
                ctx.shape = tuple(a.shape)
                return a * k

            @staticmethod
            def backward(ctx, grad):
                ctx.ran = (ctx.tag, ctx.shape)
                return grad * ctx.k, None, None

        x = leaf(lib)
        y = Remember.apply(x, 4.0, "t")
        before = (y.grad_fn.k, y.grad_fn.tag, hasattr(y.grad_fn, "ran"))
        y.sum().backward()
        return before, y.grad_fn.ran, grads(x)

    assert_same(torch, scenario)


def test_node_metadata_is_a_dict(torch):
    def scenario(lib):
        y = square_fn(lib).apply(leaf(lib))
        y.grad_fn.metadata["note"] = 1
        return y.grad_fn.metadata

    assert_same(torch, scenario)


def test_node_pre_and_post_hooks_see_the_gradients(torch):
    def scenario(lib):
        log = []
        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        y = scaled_product_fn(lib).apply(x, w, 2.0)
        y.grad_fn.register_prehook(lambda go: log.append(("pre", all_vals(go))))
        y.grad_fn.register_hook(
            lambda gi, go: log.append(("post", len(gi), all_vals(gi), all_vals(go)))
        )
        y.sum().backward()
        return log, grads(x, w)

    assert_same(torch, scenario)


def test_node_prehook_replaces_the_incoming_gradient(torch):
    def scenario(lib):
        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        y = scaled_product_fn(lib).apply(x, w, 2.0)
        y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
        y.sum().backward()
        return grads(x, w)

    assert_same(torch, scenario)


def test_node_post_hook_replaces_the_input_gradients(torch):
    def scenario(lib):
        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        y = scaled_product_fn(lib).apply(x, w, 2.0)
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0, gi[1]))
        y.sum().backward()
        return grads(x, w)

    assert_same(torch, scenario)


def test_node_hook_returning_wrong_count_is_an_error(torch):
    def scenario(lib):
        y = square_fn(lib).apply(leaf(lib))
        y.grad_fn.register_prehook(lambda go: (go[0], go[0]))
        y.sum().backward()

    assert_same_error(torch, scenario, RuntimeError, "has returned an incorrect number of values")


def test_removed_node_hook_does_not_run(torch):
    def scenario(lib):
        log = []
        y = square_fn(lib).apply(leaf(lib))
        handle = y.grad_fn.register_hook(lambda gi, go: log.append("post"))
        handle.remove()
        y.sum().backward()
        return log

    assert_same(torch, scenario)


def test_tensor_hook_on_a_function_output(torch):
    def scenario(lib):
        log = []
        x = leaf(lib)
        y = square_fn(lib).apply(x)
        y.register_hook(lambda g: log.append(vals(g)))
        (y * 3).sum().backward()
        return log, grads(x)

    assert_same(torch, scenario)


def test_calling_forward_directly_is_a_plain_call(torch):
    def scenario(lib):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        y = Twice.forward(None, leaf(lib))
        return vals(y), node_name(y)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# save_for_backward / saved_tensors


def test_saved_input_is_the_same_object_saved_output_is_equal(torch):
    def scenario(lib):
        log = []
        x = leaf(lib)

        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a * 2
                ctx.out = out
                ctx.save_for_backward(a, out, None)
                return out

            @staticmethod
            def backward(ctx, grad):
                a, out, nothing = ctx.saved_tensors
                log.append((a is x, out is ctx.out, nothing, vals(out)))
                log.append((out.grad_fn is ctx, out.requires_grad, a.requires_grad))
                return grad * 2

        Keep.apply(x).sum().backward()
        return log, grads(x)

    assert_same(torch, scenario)


def test_save_none_for_backward(torch):
    def scenario(lib):
        log = []

        class Padded(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(None, a, None)
                return a * a

            @staticmethod
            def backward(ctx, grad):
                first, a, last = ctx.saved_tensors
                log.append((first, last))
                return 2 * a * grad

        x = leaf(lib)
        Padded.apply(x).sum().backward()
        return log, grads(x)

    assert_same(torch, scenario)


def test_nothing_saved_gives_an_empty_tuple(torch):
    def scenario(lib):
        log = []

        class Bare(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                log.append(ctx.saved_tensors)
                return grad * 2

        y = Bare.apply(leaf(lib))
        log.append(y.grad_fn.saved_tensors)
        y.sum().backward()
        return log

    assert_same(torch, scenario)


def test_second_save_for_backward_replaces_the_first(torch):
    def scenario(lib):
        log = []

        class Resave(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                ctx.save_for_backward(a * 3, a)
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                log.append(all_vals(ctx.saved_tensors))
                return grad

        Resave.apply(leaf(lib)).sum().backward()
        return log

    assert_same(torch, scenario)


def test_saving_a_non_tensor_is_a_type_error(torch):
    def scenario(lib):
        class SaveInt(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a, 3)
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return grad

        SaveInt.apply(leaf(lib))

    assert_same_error(torch, scenario, TypeError, "save_for_backward can only save variables")


def test_grad_fn_saved_tensors_from_outside_and_after_backward(torch):
    def scenario(lib):
        class SaveTwo(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a, None)
                return a.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad

        x = leaf(lib)
        y = SaveTwo.apply(x)
        saved = y.grad_fn.saved_tensors
        before = (len(saved), saved[0] is x, saved[1])
        y.sum().backward()
        return before, outcome(lambda: y.grad_fn.saved_tensors)

    assert_same(torch, scenario)


def test_saved_tensors_freed_after_backward_error_in_backward(torch):
    def scenario(lib):
        x = leaf(lib)
        y = square_fn(lib).apply(x)
        y.sum().backward()
        y.sum().backward()

    assert_same_error(torch, scenario, RuntimeError, "after they have already been freed")


def test_saved_input_modified_in_place_version_error(torch):
    def scenario(lib):
        h = leaf(lib) * 1
        y = square_fn(lib).apply(h)
        h.mul_(2)
        y.sum().backward()

    assert_same_error(torch, scenario, RuntimeError, "modified by an inplace operation")


def test_saved_output_modified_in_place_version_error(torch):
    def scenario(lib):
        class CubeOut(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a * a * a
                ctx.save_for_backward(a, out)
                return out

            @staticmethod
            def backward(ctx, grad):
                a, out = ctx.saved_tensors
                return 3 * out / a * grad

        y = CubeOut.apply(leaf(lib))
        y.add_(1)
        y.sum().backward()

    assert_same_error(torch, scenario, RuntimeError, "which is output 0 of CubeOut")


def test_saved_tensors_hooks_wrap_save_for_backward(torch):
    def scenario(lib):
        log = []

        def pack(t):
            log.append(("pack", vals(t)))
            return vals(t)

        def unpack(packed):
            log.append(("unpack", packed))
            return lib.tensor(packed)

        class SaveBoth(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a * 2
                ctx.save_for_backward(a, out)
                return out

            @staticmethod
            def backward(ctx, grad):
                a, out = ctx.saved_tensors
                log.append("read once")
                a, out = ctx.saved_tensors
                return grad * out / a

        x = leaf(lib)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = SaveBoth.apply(x)
        log.append("forward done")
        y.sum().backward()
        return log, grads(x)

    assert_same(torch, scenario)


def test_saved_variables_is_deprecated(torch):
    def scenario(lib):
        class Old(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a + b

            @staticmethod
            def backward(ctx, grad):
                a, b = ctx.saved_variables
                return grad, grad

        x, w = leaf(lib), leaf(lib, (1.0, 1.0, 1.0))
        result, texts = warned(lambda: Old.apply(x, w).sum().backward())
        deprecations = [t for t in texts if "saved_variables" in t[1]]
        return result, deprecations, grads(x, w)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# needs_input_grad


def test_needs_input_grad_mixed_inputs(torch):
    def scenario(lib):
        seen = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, k, d):
                seen.append(("forward", ctx.needs_input_grad))
                return a * b * k + d

            @staticmethod
            def backward(ctx, grad):
                seen.append(("backward", ctx.needs_input_grad))
                return grad, None, None, grad

        x = leaf(lib)
        y = Probe.apply(x, const(lib), 2.0, x * 2)
        y.sum().backward()
        return seen, y.grad_fn.needs_input_grad

    assert_same(torch, scenario)


def test_needs_input_grad_when_nothing_or_no_grad(torch):
    def scenario(lib):
        seen = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                seen.append(ctx.needs_input_grad)
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return grad

        Probe.apply(const(lib))
        with lib.no_grad():
            Probe.apply(leaf(lib))
        return seen

    assert_same(torch, scenario)


def test_needs_input_grad_in_hook_none_style(torch):
    # test_hook_none: an output whose backward gradient is None still gets hooks called
    # for the other output, and the non-requiring input reads False.
    def scenario(lib):
        called = []

        class NoneGrad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                called.append(ctx.needs_input_grad)
                return a, b

            @staticmethod
            def backward(ctx, ga, gb):
                return ga, None

        x = leaf(lib)
        c = const(lib)
        rx, ry = NoneGrad.apply(x, c)
        rx.register_hook(lambda g: called.append(("rx", vals(g))))
        ry.register_hook(lambda g: called.append(("ry", vals(g))))
        (rx + ry).sum().backward()
        return called, [rx.requires_grad, ry.requires_grad], grads(x)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# mark_dirty: in-place custom Functions


def add_into_fn(lib):
    class AddInto(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, grad):
            return grad, grad * 2

    return AddInto


def test_mark_dirty_returns_the_modified_input_itself(torch):
    def scenario(lib):
        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        a = x.clone()
        out = add_into_fn(lib).apply(a, w)
        info = (out is a, a._version, node_name(a), edges(a.grad_fn), vals(a))
        out.sum().backward()
        return info, grads(x, w)

    assert_same(torch, scenario)


def test_mark_dirty_then_in_place_on_the_output(torch):
    def scenario(lib):
        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        out = add_into_fn(lib).apply(x.clone(), w)
        out.mul_(3)
        out.sum().backward()
        return vals(out), node_name(out), grads(x, w)

    assert_same(torch, scenario)


def test_mark_dirty_on_a_view_of_a_non_leaf(torch):
    def scenario(lib):
        x, w = leaf(lib), leaf(lib, (3.0, 4.0))
        base = x.clone()
        row = base[:2]
        out = add_into_fn(lib).apply(row, w)
        same = out is row
        base.sum().backward()
        return same, vals(base), node_name(base), grads(x, w)

    assert_same(torch, scenario)


def test_mark_dirty_on_a_whole_view_with_view_as(torch):
    def scenario(lib):
        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        out = add_into_fn(lib).apply(x.clone().view_as(x), w)
        out.sum().backward()
        return vals(out), grads(x, w)

    assert_same(torch, scenario)


def test_mark_dirty_on_a_leaf_requiring_grad_is_an_error(torch):
    def scenario(lib):
        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        result = outcome(lambda: add_into_fn(lib).apply(x, w))
        return result, vals(x)

    expected = scenario(torch)
    assert expected[0][0] == "RuntimeError"
    assert "a leaf Variable that requires grad" in expected[0][1]
    assert scenario(og) == expected


def test_mark_dirty_on_a_view_of_a_leaf_is_an_error(torch):
    def scenario(lib):
        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        add_into_fn(lib).apply(x.view_as(x), w)

    assert_same_error(torch, scenario, RuntimeError, "a view of a leaf Variable that requires grad")


def test_dirty_input_not_returned_is_an_error(torch):
    def scenario(lib):
        class Hidden(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad

        Hidden.apply(leaf(lib).clone())

    assert_same_error(torch, scenario, RuntimeError, "Some elements marked as dirty")


def test_mark_dirty_on_a_non_input_warns(torch):
    def scenario(lib):
        class Stranger(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                c = a * 3
                c.add_(1)
                ctx.mark_dirty(c)
                return c

            @staticmethod
            def backward(ctx, grad):
                return grad * 3

        x = leaf(lib)
        (kind, out), texts = warned(lambda: Stranger.apply(x.clone()))
        return kind, vals(out), node_name(out), texts

    assert_same(torch, scenario)


def test_mark_dirty_on_a_view_of_an_intermediate_is_an_error(torch):
    def scenario(lib):
        class DirtyView(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a.clone().view_as(a)
                ctx.mark_dirty(out)
                return out

            @staticmethod
            def backward(ctx, grad):
                return grad

        DirtyView.apply(leaf(lib).clone())

    assert_same_error(torch, scenario, RuntimeError, "received a tensor that was not an input")


def add_and_sum_fn(lib):
    class AddAndSum(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a, a + b

        @staticmethod
        def backward(ctx, g_a, g_ab):
            return g_a + g_ab, g_a + 2 * g_ab

    return AddAndSum


def test_mark_dirty_with_two_outputs(torch):
    def scenario(lib):
        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        a = x.clone()
        c, d = add_and_sum_fn(lib).apply(a, w)
        same = c is a
        c.add_(2)
        (c * d).sum().backward()
        return same, vals(c), vals(d), grads(x, w)

    assert_same(torch, scenario)


def test_mark_dirty_view_input_with_two_outputs_is_an_error(torch):
    def scenario(lib):
        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        add_and_sum_fn(lib).apply(x.clone().view_as(x), w)

    assert_same_error(
        torch, scenario, RuntimeError, "your Function modifies inplace an input that is a view"
    )


def test_mark_dirty_input_returned_twice(torch):
    def scenario(lib):
        class DoubleInplace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a, a

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 2

        x = leaf(lib)
        p, q = DoubleInplace.apply(x.clone())
        (p + q).sum().backward()
        return p is q, vals(p), grads(x)

    assert_same(torch, scenario)


def test_mark_dirty_on_input_not_requiring_grad(torch):
    def scenario(lib):
        AddInto = add_into_fn(lib)
        plain = const(lib)
        r1 = AddInto.apply(plain, const(lib, (1.0, 1.0, 1.0)))
        info1 = (r1 is plain, r1.requires_grad, node_name(r1), vals(r1))
        w = leaf(lib, (3.0, 4.0, 5.0))
        other = const(lib)
        r2 = AddInto.apply(other, w)
        info2 = (r2 is other, r2.requires_grad, node_name(r2), other.is_leaf)
        r2.sum().backward()
        return info1, info2, grads(w)

    assert_same(torch, scenario)


def test_mark_dirty_then_save_the_dirty_input(torch):
    def scenario(lib):
        log = []

        class TripleInPlace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(3)
                ctx.mark_dirty(a)
                ctx.save_for_backward(a)
                return a

            @staticmethod
            def backward(ctx, grad):
                (a,) = ctx.saved_tensors
                log.append((vals(a), a.grad_fn is ctx))
                return grad * 3

        x = leaf(lib)
        TripleInPlace.apply(x.clone()).sum().backward()
        return log, grads(x)

    assert_same(torch, scenario)


def test_mark_dirty_saved_output_then_modified_is_a_version_error(torch):
    def scenario(lib):
        class TripleInPlace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(3)
                ctx.mark_dirty(a)
                ctx.save_for_backward(a)
                return a

            @staticmethod
            def backward(ctx, grad):
                (a,) = ctx.saved_tensors
                return grad * 3

        out = TripleInPlace.apply(leaf(lib).clone())
        out.mul_(2)
        out.sum().backward()

    assert_same_error(torch, scenario, RuntimeError, "is at version 3; expected version 2")


# ---------------------------------------------------------------------------
# mark_non_differentiable


def test_mark_non_differentiable_mixed_outputs(torch):
    def scenario(lib):
        seen = []

        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                frozen, live = a + 1, a + 2
                ctx.mark_non_differentiable(frozen)
                return frozen, live

            @staticmethod
            def backward(ctx, g_frozen, g_live):
                seen.append((vals(g_frozen), vals(g_live)))
                return g_live

        x = leaf(lib)
        frozen, live = Split.apply(x)
        flags = (frozen.requires_grad, frozen.grad_fn is None, frozen.is_leaf)
        flags += (live.requires_grad, node_name(live))
        live.sum().backward()
        return flags, vals(frozen), seen, grads(x)

    assert_same(torch, scenario)


def test_mark_non_differentiable_mask_used_downstream(torch):
    def scenario(lib):
        class Positive(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                mask = a > 0
                ctx.mark_non_differentiable(mask)
                return mask

            @staticmethod
            def backward(ctx, grad):
                return None

        x = leaf(lib, (-1.0, 2.0, 0.5))
        mask = Positive.apply(x)
        y = x.masked_fill(mask, 0.0)
        y.sum().backward()
        return vals(mask), dtype_name(mask.dtype), mask.requires_grad, grads(x)

    assert_same(torch, scenario)


def test_mark_non_differentiable_output_with_none_backward(torch):
    def scenario(lib):
        class Frozen(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a.clone()
                ctx.mark_non_differentiable(out)
                return out

            @staticmethod
            def backward(ctx, grad):
                return None

        x = leaf(lib)
        r = Frozen.apply(x * x)
        (r * x).sum().backward()
        return r.requires_grad, grads(x)

    assert_same(torch, scenario)


def test_non_differentiable_gradient_is_none_without_materialization(torch):
    def scenario(lib):
        seen = []

        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.set_materialize_grads(False)
                frozen, live = a * 2, a * 3
                ctx.mark_non_differentiable(frozen)
                return frozen, live

            @staticmethod
            def backward(ctx, g_frozen, g_live):
                seen.append((g_frozen, vals(g_live)))
                return g_live

        x = leaf(lib)
        Split.apply(x)[1].sum().backward()
        return seen, grads(x)

    assert_same(torch, scenario)


def test_materialize_non_diff_grads_flag(torch):
    def scenario(lib):
        seen = []

        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                frozen, live = a.clone(), a.clone()
                ctx.mark_non_differentiable(frozen)
                ctx._materialize_non_diff_grads = False
                return live, frozen

            @staticmethod
            def backward(ctx, g_live, g_frozen):
                seen.append((vals(g_live), g_frozen))
                return g_live

        x = lib.tensor(1.0, requires_grad=True)
        Split.apply(x)[0].backward()
        return seen, grads(x)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# set_materialize_grads


def two_outputs_fn(lib, materialize, seen):
    class TwoOut(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            if not materialize:
                ctx.set_materialize_grads(False)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g_double, g_triple):
            seen.append((vals(g_double), vals(g_triple)))
            total = None
            for g, k in ((g_double, 2), (g_triple, 3)):
                if g is not None:
                    total = g * k if total is None else total + g * k
            return total

    return TwoOut


@pytest.mark.parametrize("materialize", [True, False])
def test_unused_output_gradient_zeros_or_none(torch, materialize):
    def scenario(lib):
        seen = []
        x = leaf(lib)
        _, triple = two_outputs_fn(lib, materialize, seen).apply(x)
        triple.sum().backward()
        return seen, grads(x)

    assert_same(torch, scenario)


@pytest.mark.parametrize("materialize", [True, False])
def test_both_outputs_used_arrive_as_tensors(torch, materialize):
    def scenario(lib):
        seen = []
        x = leaf(lib)
        double, triple = two_outputs_fn(lib, materialize, seen).apply(x)
        (double + triple).sum().backward()
        return seen, grads(x)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Returning an input as is, and views of inputs


@pytest.mark.parametrize("shape", [(1,), ()])
def test_returning_a_leaf_input_as_is(torch, shape):
    def scenario(lib):
        v = lib.ones(shape, requires_grad=True)
        Identity = identity_fn(lib)
        y = Identity.apply(v)
        info = (y is v, y._is_view(), y._base is v, node_name(y), y.requires_grad)
        y.backward()
        first = vals(v.grad)
        with lib.no_grad():
            v.grad.zero_()
        Identity.apply(v.clone()).backward()
        return info, first, vals(v.grad)

    assert_same(torch, scenario)


def test_returning_input_as_is_then_in_place_is_an_error(torch):
    def scenario(lib):
        y = identity_fn(lib).apply(leaf(lib).clone())
        y.add_(1)

    assert_same_error(torch, scenario, RuntimeError, "Output 0 of Identity is a view")


def test_returning_inputs_as_is_when_one_does_not_require_grad(torch):
    def scenario(lib):
        class Pass(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a, b

            @staticmethod
            def backward(ctx, ga, gb):
                return ga * 2, gb * 3

        x, c = leaf(lib), const(lib)
        p, q = Pass.apply(x, c)
        info = (p is x, q is c, q.requires_grad, node_name(q), q._is_view())
        (p + q).sum().backward()
        return info, grads(x, c)

    assert_same(torch, scenario)


def test_returning_inputs_as_is_without_grad(torch):
    def scenario(lib):
        class Pass(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a, b

            @staticmethod
            def backward(ctx, ga, gb):
                return ga, gb

        c = const(lib)
        r = Pass.apply(c, c)
        return r[0] is c, r[0] is r[1], r[0].requires_grad, vals(r[0])

    assert_same(torch, scenario)


def alias_fn(lib):
    class Alias(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a[:]

        @staticmethod
        def backward(ctx, grad):
            return grad

    return Alias


def test_returning_a_view_of_an_input(torch):
    def scenario(lib):
        x = leaf(lib)
        y = alias_fn(lib).apply(x)
        info = (y._is_view(), y._base is x, node_name(y))
        (y * 2).sum().backward()
        return info, outcome(lambda: y.zero_()), grads(x)

    assert_same(torch, scenario)


def test_view_returned_under_no_grad_cannot_be_modified(torch):
    def scenario(lib):
        x = leaf(lib)
        with lib.no_grad():
            out = alias_fn(lib).apply(x)
        with lib.no_grad():
            expected = x[:]
        return (out.requires_grad, expected.requires_grad), outcome(lambda: out.zero_())

    expected = scenario(torch)
    assert "A view was created in no_grad mode" in expected[1][1]
    assert scenario(og) == expected


@pytest.mark.parametrize("inplace", [False, True])
def test_view_of_a_local_modified_in_place_keeps_the_function_node(torch, inplace):
    def scenario(lib):
        class Head(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, inplace):
                view = a.clone()[:3]
                if inplace:
                    view += 2
                return view

            @staticmethod
            def backward(ctx, grad):
                return lib.cat([grad, lib.zeros(2)]), None

        base = lib.tensor([0.0, 1.0, 2.0, 3.0, 4.0], requires_grad=True)
        out = Head.apply(base, inplace)
        out.sum().backward()
        return node_name(out), vals(out), grads(base)

    assert_same(torch, scenario)


def test_same_output_returned_twice(torch):
    def scenario(lib):
        seen = []

        class Dup(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a * 2
                return out, out

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((vals(g1), vals(g2)))
                return g1 * 2 + g2 * 3

        x = leaf(lib)
        p, q = Dup.apply(x)
        (p + q * 2).sum().backward()
        return p is q, seen, grads(x)

    assert_same(torch, scenario)


def test_gradcheck_duplicate_outputs(torch):
    def scenario(lib):
        class Dup(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a * 2
                return out, out

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 2

        class DupInPlace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a, a

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 2

        def plain(a):
            p, q = Dup.apply(a)
            return p + q

        def inplace(a):
            p, q = DupInPlace.apply(a.clone())
            return p + q

        x = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lib.float64, requires_grad=True)
        return [
            lib.autograd.gradcheck(plain, (x,)),
            lib.autograd.gradgradcheck(plain, (x,)),
            lib.autograd.gradcheck(inplace, (x,)),
            lib.autograd.gradgradcheck(inplace, (x,)),
        ]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# None gradients, gradient count, shape and type checks


def none_grad_fn(lib):
    class Blocked(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return None

    return Blocked


def test_returning_none_gradient_leaves_grad_unset(torch):
    def scenario(lib):
        Blocked = none_grad_fn(lib)
        x = lib.ones(1, requires_grad=True)
        Blocked.apply(x).backward()
        first = vals(x.grad)
        Blocked.apply(x**2).backward()
        second = vals(x.grad)
        Blocked.apply(x).sum().backward()
        third = vals(x.grad)
        unused = lib.autograd.grad(Blocked.apply(x), x, allow_unused=True)
        return first, second, third, unused

    assert_same(torch, scenario)


def test_none_gradient_without_allow_unused_is_an_error(torch):
    def scenario(lib):
        x = leaf(lib)
        lib.autograd.grad(none_grad_fn(lib).apply(x).sum(), x)

    assert_same_error(torch, scenario, RuntimeError, "appears to not have been used in the graph")


def test_none_gradient_for_one_of_two_inputs(torch):
    def scenario(lib):
        class Half(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, grad):
                return None, grad * 2

        x, w = leaf(lib), leaf(lib, (3.0, 4.0, 5.0))
        Half.apply(x, w).sum().backward()
        return grads(x, w)

    assert_same(torch, scenario)


def test_gradient_for_input_not_requiring_grad_is_ignored(torch):
    def scenario(lib):
        class Both(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, grad):
                return grad * 2, grad * 3

        x, c = leaf(lib), const(lib)
        Both.apply(x, c).sum().backward()
        return grads(x, c)

    assert_same(torch, scenario)


def test_extra_none_gradients_are_allowed(torch):
    def scenario(lib):
        class Padded(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, grad):
                return grad, None, None

        x = leaf(lib)
        Padded.apply(x).sum().backward()
        return grads(x)

    assert_same(torch, scenario)


def test_too_many_gradients_is_an_error(torch):
    def scenario(lib):
        class TooMany(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return grad, grad

        TooMany.apply(leaf(lib)).sum().backward()

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "function TooManyBackward returned an incorrect number of gradients (expected 1, got 2)",
    )


@pytest.mark.parametrize("second", ["tensor", "scalar"])
def test_too_few_gradients_is_an_error(torch, second):
    def scenario(lib):
        class TooFew(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, grad):
                return grad

        x = leaf(lib)
        TooFew.apply(x, x if second == "tensor" else 3.0).sum().backward()

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "function TooFewBackward returned an incorrect number of gradients (expected 2, got 1)",
    )


def test_backward_returning_a_list_counts_as_one_value(torch):
    def scenario(lib):
        class Listed(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, grad):
                return [grad, grad]

        x = leaf(lib)
        Listed.apply(x, x).sum().backward()

    assert_same_error(torch, scenario, RuntimeError, "(expected 2, got 1)")


def test_gradient_for_a_non_tensor_input_is_an_error(torch):
    def scenario(lib):
        class Scaled(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k):
                return a * k

            @staticmethod
            def backward(ctx, grad):
                return grad, grad

        Scaled.apply(leaf(lib), 2.0).sum().backward()

    assert_same_error(
        torch, scenario, RuntimeError, "returned a gradient different than None at position 2"
    )


def test_non_tensor_gradient_value_is_an_error(torch):
    def scenario(lib):
        class FloatGrad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return 3.0

        FloatGrad.apply(leaf(lib)).sum().backward()

    assert_same_error(torch, scenario, RuntimeError, "expected Variable or None (got float)")


def test_wrong_gradient_shape_is_an_error(torch):
    def scenario(lib):
        class BadShape(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return lib.ones(4)

        BadShape.apply(leaf(lib)).sum().backward()

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "Function BadShapeBackward returned an invalid gradient at index 0 - got [4] but "
        "expected shape compatible with [3]",
    )


def test_broadcast_gradient_shape_is_summed_down(torch):
    def scenario(lib):
        class Wide(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return lib.ones(4, 3)

        x = leaf(lib)
        Wide.apply(x).sum().backward()
        return grads(x), tuple(x.grad.shape)

    assert_same(torch, scenario)


def test_gradient_dtype_is_cast_to_the_input_dtype(torch):
    def scenario(lib):
        class Wider(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return grad.double() * 3

        x = leaf(lib)
        Wider.apply(x).sum().backward()
        return grads(x), dtype_name(x.grad.dtype)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Errors raised by or about the Function


class CustomFailure(Exception):
    pass


@pytest.mark.parametrize("exc_type", [ValueError, KeyError, ZeroDivisionError, CustomFailure])
def test_error_in_forward_propagates_with_its_type(torch, exc_type):
    def scenario(lib):
        class Broken(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                raise exc_type("bad forward input")

            @staticmethod
            def backward(ctx, grad):
                return grad

        result = outcome(lambda: Broken.apply(leaf(lib)))
        return result, lib.is_grad_enabled()

    expected = scenario(torch)
    assert expected[0][0] == exc_type.__name__
    assert scenario(og) == expected


@pytest.mark.parametrize("exc_type", [ValueError, KeyError, CustomFailure])
@pytest.mark.parametrize("once", [False, True])
def test_error_in_backward_propagates_with_its_type(torch, exc_type, once):
    def scenario(lib):
        def backward(ctx, grad):
            raise exc_type("simulated failure in backward")

        if once:
            backward = lib.autograd.function.once_differentiable(backward)

        class Broken(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.clone()

        Broken.backward = staticmethod(backward)
        t1, t2 = leaf(lib), leaf(lib, (1.0, 1.0, 1.0))
        tmp = (t1 + t2) * (t1 + t2)
        result = outcome(lambda: Broken.apply(tmp).sum().backward())
        return result, lib.is_grad_enabled()

    expected = scenario(torch)
    assert expected[0][0] == exc_type.__name__
    assert scenario(og) == expected


def test_missing_forward_is_not_implemented(torch):
    def scenario(lib):
        class NoForward(lib.autograd.Function):
            @staticmethod
            def backward(ctx, grad):
                return grad

        NoForward.apply(leaf(lib))

    assert_same_error(torch, scenario, NotImplementedError, "must implement the forward")


def test_base_function_apply_is_not_implemented(torch):
    def scenario(lib):
        lib.autograd.Function.apply(leaf(lib))

    assert_same_error(torch, scenario, NotImplementedError, "must implement the forward")


def test_missing_backward_fails_only_at_backward(torch):
    def scenario(lib):
        class NoBackward(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.clone()

        y = NoBackward.apply(leaf(lib))
        return node_name(y), outcome(lambda: y.sum().backward())

    expected = scenario(torch)
    assert expected[1][0] == "NotImplementedError"
    assert "must implement either the backward or vjp" in expected[1][1]
    assert scenario(og) == expected


def test_vjp_alone_works_as_backward(torch):
    def scenario(lib):
        class ByVjp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def vjp(ctx, grad):
                return grad * 5

        x = leaf(lib)
        ByVjp.apply(x).sum().backward()
        return grads(x)

    assert_same(torch, scenario)


def test_backward_and_vjp_together_is_an_error(torch):
    def scenario(lib):
        class Both(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad

            @staticmethod
            def vjp(ctx, grad):
                return grad

        Both.apply(leaf(lib)).sum().backward()

    assert_same_error(torch, scenario, RuntimeError, "Implementing both 'backward' and 'vjp'")


def test_legacy_non_static_function_is_an_error(torch):
    def scenario(lib):
        class Legacy(lib.autograd.Function):
            def forward(self, a):
                return a

            def backward(self, grad):
                return grad

        return warned(lambda: Legacy()(leaf(lib)))

    expected = scenario(torch)
    assert expected[0][0] == "RuntimeError"
    assert "Legacy autograd function with non-static forward method" in expected[0][1]
    assert scenario(og) == expected


def test_instantiating_a_function_warns(torch):
    def scenario(lib):
        Identity = identity_fn(lib)
        (kind, instance), texts = warned(lambda: Identity())
        call = outcome(lambda: instance(leaf(lib)))
        return kind, texts, call

    expected = scenario(torch)
    assert expected[1] and expected[1][0][0] == "DeprecationWarning"
    assert scenario(og) == expected


def test_anomaly_mode_reports_nan_from_a_function_backward(torch):
    def scenario(lib):
        class NanGrad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad * float("nan")

        x = leaf(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                NanGrad.apply(x).sum().backward()

    assert_same_error(
        torch, scenario, RuntimeError, "Function 'NanGradBackward' returned nan values"
    )


# ---------------------------------------------------------------------------
# once_differentiable


def cube_fn(lib, once, seen=None):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a * a

        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            if seen is not None:
                seen.append((lib.is_grad_enabled(), grad.requires_grad))
            return 3 * a * a * grad

    if once:
        Cube.backward = staticmethod(lib.autograd.function.once_differentiable(Cube.backward))
    else:
        Cube.backward = staticmethod(Cube.backward)
    return Cube


def test_once_differentiable_first_derivative(torch):
    def scenario(lib):
        seen = []
        Cube = cube_fn(lib, True, seen)
        x = leaf(lib)
        (gx,) = lib.autograd.grad(Cube.apply(x).sum(), x)
        (gx2,) = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        return vals(gx), vals(gx2), gx2.requires_grad, seen, Cube.backward.__name__

    assert_same(torch, scenario)


def test_once_differentiable_second_derivative_is_an_error(torch):
    def scenario(lib):
        Cube = cube_fn(lib, True)
        x = leaf(lib)
        go = lib.ones(3, requires_grad=True)
        (gx,) = lib.autograd.grad(Cube.apply(x), x, go, create_graph=True)
        info = (vals(gx), gx.requires_grad)
        return info, outcome(lambda: gx.sum().backward())

    expected = scenario(torch)
    assert "trying to differentiate twice a function that was marked with @once_differentiable" in (
        expected[1][1]
    )
    assert scenario(og) == expected


def test_once_differentiable_with_non_tensor_inputs_and_outputs(torch):
    def scenario(lib):
        class Mixed(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t1, t2, scale, t3):
                t4 = t1 + t2 * t3
                t5 = t1 * t2 + t3
                t4 *= scale
                t5 *= scale
                ctx.scale = scale
                ctx.save_for_backward(t1, t2, t3)
                return scale, t4, None, True, t5, "bar", t1

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, *gs):
                scale = ctx.scale
                v1, v2, v3 = ctx.saved_tensors
                return (
                    gs[1] * scale + gs[4] * v2 * scale + gs[6],
                    gs[1] * v3 * scale + gs[4] * v1 * scale,
                    None,
                    gs[1] * v2 * scale + gs[4] * scale,
                )

        t1 = leaf(lib)
        t2 = leaf(lib, (0.5, 0.25, 2.0))
        t3 = const(lib)
        res = Mixed.apply(t1, t2, 3, t3)
        lib.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
        return [vals(r) if isinstance(r, lib.Tensor) else r for r in res], grads(t1, t2, t3)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Double backward


def test_double_backward_through_differentiable_backward(torch):
    def scenario(lib):
        seen = []
        Cube = cube_fn(lib, False, seen)
        x = leaf(lib)
        (gx,) = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        (ggx,) = lib.autograd.grad(gx.sum(), x)
        return vals(gx), node_name(gx), vals(ggx), seen

    assert_same(torch, scenario)


def test_double_backward_through_a_function_used_in_backward(torch):
    def scenario(lib):
        class Triple(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 3

            @staticmethod
            def backward(ctx, grad):
                return grad * 3

        class Outer(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                inner = Triple.apply(a)
                ctx.inner_info = (inner.requires_grad, node_name(inner))
                return inner + 1

            @staticmethod
            def backward(ctx, grad):
                return Triple.apply(grad)

        x = leaf(lib)
        go = lib.ones(3, requires_grad=True)
        y = Outer.apply(x)
        (gx,) = lib.autograd.grad(y, x, go, create_graph=True)
        (ggo,) = lib.autograd.grad(gx.sum(), go)
        return y.grad_fn.inner_info, vals(gx), node_name(gx), vals(ggo)

    assert_same(torch, scenario)


def test_double_backward_using_saved_output(torch):
    # test_custom_autograd_no_early_free: the saved output must survive the first grad
    def scenario(lib):
        class SquareViaOut(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a * a
                ctx.save_for_backward(a, out)
                return out

            @staticmethod
            def backward(ctx, grad):
                a, out = ctx.saved_tensors
                return grad * 2 * out / a

        x = lib.tensor(2.0, requires_grad=True)
        y = SquareViaOut.apply(x)
        (g1,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g1, x, retain_graph=True)
        (g2,) = lib.autograd.grad(y, x)
        return vals(g1), vals(g2), vals(gg)

    assert_same(torch, scenario)


def test_repeated_double_backward_gives_the_same_values(torch):
    def scenario(lib):
        Cube = cube_fn(lib, False)
        x = leaf(lib)
        y = Cube.apply(x)
        out = []
        for _ in range(2):
            (gy,) = lib.autograd.grad(y[0], x, create_graph=True)
            (ggy,) = lib.autograd.grad(gy[0], x, retain_graph=True)
            out.append(vals(ggy))
        return out

    assert_same(torch, scenario)


def test_reentrant_grad_inside_backward_restores_grad_mode(torch):
    def scenario(lib):
        log = []

        class Reenter(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.clone()

            @staticmethod
            def backward(ctx, grad):
                before = lib.is_grad_enabled()
                with lib.enable_grad():
                    inner = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
                    (g,) = lib.autograd.grad(inner**3, inner, grad_outputs=grad)
                    log.append(lib.is_grad_enabled())
                log.append((before, lib.is_grad_enabled()))
                return g

        x = leaf(lib)
        (g1,) = lib.autograd.grad(Reenter.apply(x).sum(), x)
        (g2,) = lib.autograd.grad(Reenter.apply(x).sum(), x, create_graph=True)
        return log, vals(g1), vals(g2)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# setup_context style


def test_setup_context_simple(torch):
    def scenario(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(a):
                return a**2

            @staticmethod
            def setup_context(ctx, inputs, output):
                (a,) = inputs
                ctx.save_for_backward(a)

            @staticmethod
            def backward(ctx, grad):
                (a,) = ctx.saved_tensors
                return grad * 2 * a

        x = leaf(lib)
        y = Square.apply(x)
        (gx,) = lib.autograd.grad(y.sum(), x)
        return vals(y), node_name(y), vals(gx)

    assert_same(torch, scenario)


def test_setup_context_multi_output_with_non_tensor(torch):
    def scenario(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(a):
                return a**2, a.item() * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                _, two_a = output
                ctx.two_a = two_a

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, grad, _):
                return grad * ctx.two_a

        x = lib.tensor(1.5, requires_grad=True)
        y, two_a = Square.apply(x)
        (gx,) = lib.autograd.grad(y, x)
        return vals(y), two_a, vals(gx)

    assert_same(torch, scenario)


def test_setup_context_multi_input_matches_ctx_style(torch):
    def scenario(lib):
        class Reshape(lib.autograd.Function):
            @staticmethod
            def forward(a, shape, scale_forward, scale_backward):
                return a.reshape(shape) * scale_forward

            @staticmethod
            def setup_context(ctx, inputs, output):
                a, shape, scale_forward, scale_backward = inputs
                ctx.scale_backward = scale_backward
                ctx.a_shape = a.shape

            @staticmethod
            def backward(ctx, grad):
                return grad.reshape(ctx.a_shape) * ctx.scale_backward, None, None, None

        class ReshapeRef(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, shape, scale_forward, scale_backward):
                ctx.scale_backward = scale_backward
                ctx.a_shape = a.shape
                return a.reshape(shape) * scale_forward

            @staticmethod
            def backward(ctx, grad):
                return grad.reshape(ctx.a_shape) * ctx.scale_backward, None, None, None

        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        out = []
        for fn in (Reshape, ReshapeRef):
            y = fn.apply(x, (3, 2), 2.0, 0.5)
            (gx,) = lib.autograd.grad((y * y).sum(), x)
            out.append((vals(y), vals(gx)))
        return out

    assert_same(torch, scenario)


def test_setup_context_sees_inputs_output_and_grad_mode(torch):
    def scenario(lib):
        log = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(a, k):
                return a * k, k + 1

            @staticmethod
            def setup_context(ctx, inputs, output):
                log.append(
                    (
                        type(inputs).__name__,
                        len(inputs),
                        type(output).__name__,
                        lib.is_grad_enabled(),
                        ctx.needs_input_grad,
                        output[0].requires_grad,
                    )
                )
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx, grad, _):
                return grad * ctx.k, None

        x = leaf(lib)
        y, k1 = Probe.apply(x, 3.0)
        y.sum().backward()
        return log, vals(y), k1, grads(x)

    assert_same(torch, scenario)


def test_setup_context_single_output_is_passed_as_a_tensor(torch):
    def scenario(lib):
        log = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(a):
                return a * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                log.append(
                    (isinstance(output, lib.Tensor), output.requires_grad, output.grad_fn is None)
                )

            @staticmethod
            def backward(ctx, grad):
                return grad

        y = Probe.apply(leaf(lib))
        return log, node_name(y), y.requires_grad

    assert_same(torch, scenario)


def test_setup_context_receives_bound_default_arguments(torch):
    def scenario(lib):
        log = []

        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(a, scale=2.0):
                return a * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                log.append((len(inputs), inputs[1], ctx.needs_input_grad))
                ctx.scale = inputs[1]

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.scale, None

        x = leaf(lib)
        ys = [Scale.apply(x), Scale.apply(x, scale=3.0), Scale.apply(x, 4.0)]
        sum(y.sum() for y in ys).backward()
        return log, [vals(y) for y in ys], grads(x)

    assert_same(torch, scenario)


def test_setup_context_with_mark_dirty(torch):
    def scenario(lib):
        class DoubleInPlace(lib.autograd.Function):
            @staticmethod
            def forward(a):
                a.mul_(2)
                return a

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.mark_dirty(inputs[0])

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        x = leaf(lib)
        a = x.clone()
        out = DoubleInPlace.apply(a)
        info = (out is a, node_name(out), vals(out))
        out.sum().backward()
        return info, grads(x)

    assert_same(torch, scenario)


def test_setup_context_with_mark_non_differentiable(torch):
    def scenario(lib):
        seen = []

        class Split(lib.autograd.Function):
            @staticmethod
            def forward(a):
                return a * 2, a > 1

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.mark_non_differentiable(output[1])

            @staticmethod
            def backward(ctx, g, g_mask):
                seen.append(None if g_mask is None else (dtype_name(g_mask.dtype), vals(g_mask)))
                return g * 2

        x = leaf(lib)
        y, mask = Split.apply(x)
        y.sum().backward()
        return mask.requires_grad, vals(mask), seen, grads(x)

    assert_same(torch, scenario)


def test_setup_context_with_ctx_in_forward_is_a_type_error(torch):
    def scenario(lib):
        class Confused(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, grad):
                return grad

        Confused.apply(leaf(lib))

    # torch binds the arguments with inspect.signature(forward) ("missing a required
    # argument: 'a'"); a direct call says "missing 1 required positional argument: 'a'".
    for lib in (torch, og):
        kind, text = outcome(lambda: scenario(lib))
        assert (kind, "missing" in text, "argument: 'a'" in text) == ("TypeError", True, True), text


def test_vmap_defaults(torch):
    def scenario(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(a):
                return a**2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, grad):
                (a,) = ctx.saved_tensors
                return grad * 2 * a

        return Square.generate_vmap_rule, hasattr(Square, "vmap")

    assert_same(torch, scenario)
