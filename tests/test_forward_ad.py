"""Forward-mode AD (``opgrad.autograd.forward_ad``) against PyTorch.

Levels (entering, nesting, exiting and the tangents dropped on exit), dual
tensors and their errors, tangent values through chains of ops, views (the
tangent of a view is the same view of the tangent) and in-place ops (the
tangent is updated in place, a base and its views stay aliased), forward-over-
reverse and reverse-over-forward, and ``autograd.Function``'s ``jvp``. Ports the
scenarios of PyTorch's test_autograd.py: test_not_implemented_fwad (its
missing-jvp part), test_custom_function_forward_mode_view_checks,
..._inplace_checks, ..._wrong_formula, ..._non_tensor_before_tensor_args,
..._forward_is_no_op, test_custom_function_save_for_forward,
test_custom_function_forward_mode_non_differentiable, the forward-mode part of
test_custom_function_mark_dirty_* and the gradcheck(check_forward_ad=True) tests
(test_gradcheck_forward_ad*, test_gradcheck_check_forward_or_backward_only) that
need no complex numbers or vmap. Every scenario runs with ``lib = opgrad`` and
``lib = torch`` and compares plain Python results.
"""

import numpy as np
import pytest

import opgrad as og
from torch_oracle import assert_same, assert_same_error, outcome, rng_for, vals

X = [0.3, -1.2, 0.8]
T = [1.0, 0.5, -2.0]


def rounded(value, digits=6):
    if value is None:
        return None
    if isinstance(value, list):
        return [rounded(v, digits) for v in value]
    return round(value, digits)


def assert_same_failure(torch, scenario, phrase):
    """Both raise the same type with the same first line (which holds ``phrase``); fast
    mode's random projections differ between the libraries, so the rest may too."""
    expected = outcome(lambda: scenario(torch))
    got = outcome(lambda: scenario(og))
    assert phrase in expected[1], expected
    assert (got[0], got[1].split("\n")[0]) == (expected[0], expected[1].split("\n")[0])


def tangent_of(lib, t):
    return lib.autograd.forward_ad.unpack_dual(t).tangent


@pytest.fixture(autouse=True)
def no_level_left(torch):
    """A failing scenario must not leave a level behind for the next test."""
    yield
    for lib in (og, torch):
        fwAD = lib.autograd.forward_ad
        while fwAD._current_level >= 0:
            fwAD.exit_dual_level()


# ---------------------------------------------------------------------------
# Levels


def test_levels(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        log = [fwAD._current_level]
        with fwAD.dual_level() as level:
            log += [level, fwAD._current_level]
        log.append(fwAD._current_level)
        log.append(fwAD.enter_dual_level())
        fwAD.exit_dual_level(level=0)
        return log

    assert_same(torch, scenario)


def test_nested_level_is_an_error(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            with fwAD.dual_level():
                pass

    assert_same_error(torch, scenario, RuntimeError, "Nested forward mode AD is not supported")


def test_exit_without_level_is_an_error(torch):
    def scenario(lib):
        lib.autograd.forward_ad.exit_dual_level()

    assert_same_error(torch, scenario, RuntimeError, "Dual level must be a positive number")


def test_exit_of_another_level_is_an_error(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            fwAD.exit_dual_level(level=1)

    assert_same_error(
        torch, scenario, RuntimeError, "Trying to exit a forward AD level that was not the last"
    )


def test_tangents_are_dropped_when_the_level_exits(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        x = lib.tensor(X)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, lib.tensor(T))
            y = d * 2
            inside = [vals(tangent_of(lib, d)), vals(tangent_of(lib, y))]
        after = [fwAD.unpack_dual(d).tangent, fwAD.unpack_dual(y).tangent]
        with fwAD.dual_level():  # a new level: still none
            again = [
                vals(tangent_of(lib, d)),
                vals(tangent_of(lib, y)),
                vals(tangent_of(lib, d * 3)),
            ]
        return inside, after, again

    assert_same(torch, scenario)


def test_dual_level_as_decorator(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad

        @fwAD.dual_level()
        def f(x):
            return vals(tangent_of(lib, fwAD.make_dual(x, lib.ones(3)).exp()))

        return rounded(f(lib.tensor(X))), fwAD._current_level

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# make_dual / unpack_dual


def test_make_dual_outside_a_level(torch):
    def scenario(lib):
        lib.autograd.forward_ad.make_dual(lib.tensor(X), lib.tensor(T))

    assert_same_error(torch, scenario, RuntimeError, "no level exists, make sure to enter_dual")


def test_make_dual_size_mismatch(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            fwAD.make_dual(lib.tensor(X), lib.tensor([1.0, 2.0]))

    assert_same_error(
        torch, scenario, RuntimeError, "Tensor is of size [3] while the given forward gradient"
    )


@pytest.mark.parametrize("which", ["primal", "tangent"])
def test_make_dual_needs_floating_point(torch, which):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        ints, floats = lib.tensor([1, 2, 3]), lib.tensor(X)
        with fwAD.dual_level():
            if which == "primal":
                fwAD.make_dual(ints, floats)
            else:
                fwAD.make_dual(floats, ints)

    assert_same_error(torch, scenario, ValueError, f"Expected {which} to be floating point")


def test_make_dual_of_a_dual_is_an_error(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.tensor(X), lib.tensor(T))
            fwAD.make_dual(d, lib.tensor(T))

    assert_same_error(torch, scenario, RuntimeError, "already has a forward gradient")


def test_make_dual_and_unpack_dual(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        x = lib.tensor(X, requires_grad=True)
        t = lib.tensor(T)
        outside = fwAD.unpack_dual(x)
        result = [type(outside).__name__, outside.primal is x, outside.tangent]
        with fwAD.dual_level():
            d = fwAD.make_dual(x, t)
            p, tangent = fwAD.unpack_dual(d)
            result += [
                d._base is x,
                d.requires_grad,
                d.grad_fn.name(),
                tangent is t,
                p is d,
                p._base is x,
                vals(p),
                fwAD.unpack_dual(p).tangent,
                fwAD.unpack_dual(x).tangent,
                fwAD.unpack_dual(lib.tensor(X)).tangent,
                type(fwAD.unpack_dual(d)).__name__,
                fwAD.unpack_dual(d)._fields,
            ]
            # a plain tensor's primal is a new alias
            plain = lib.tensor(X)
            result.append(fwAD.unpack_dual(plain).primal is plain)
            # a tangent of another dtype is kept; a non-contiguous one is copied to the layout
            t64 = lib.tensor(T, dtype=lib.float64)
            d64 = fwAD.make_dual(lib.tensor(X), t64)
            result += [tangent_of(lib, d64) is t64, str(tangent_of(lib, d64).dtype)[-7:]]
            tn = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).t()
            dn = fwAD.make_dual(lib.zeros(2, 3), tn)
            result += [
                tangent_of(lib, dn) is tn,
                tangent_of(lib, dn).stride(),
                vals(tangent_of(lib, dn)),
            ]
        return result

    assert_same(torch, scenario)


def test_unpack_dual_errors(torch):
    def not_a_tensor(lib):
        with lib.autograd.forward_ad.dual_level():
            lib.autograd.forward_ad.unpack_dual(3)

    assert_same_error(torch, not_a_tensor, TypeError, "must be Tensor, not int")


def test_detach_and_data_drop_the_tangent(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.tensor(X), lib.tensor(T))
            y = d * 2
            return [tangent_of(lib, y.detach()), tangent_of(lib, y.data), vals(tangent_of(lib, y))]

    assert_same(torch, scenario)


def test_backward_through_make_dual_and_unpack_dual(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        x = lib.tensor(X, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, lib.tensor(T))
            primal = fwAD.unpack_dual(d * d).primal
            primal.sum().backward()
        return rounded(vals(x.grad))

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Tangents of expressions


EXPRESSIONS = {
    "chain": lambda T, a, b: ((a * b).exp() + a.sin() / (b * b + 1)).sum(0),
    "broadcast": lambda T, a, b: a[0] * b + a.mean(0),
    "matmul": lambda T, a, b: (a @ b.t()).tanh(),
    "reshape_views": lambda T, a, b: a.t().reshape(-1)[1:4].unsqueeze(0) * b.flatten()[:3],
    "mixed_dtype": lambda T, a, b: a.float() * 2.5 + b.float().sum(),
    "reductions": lambda T, a, b: T.cat([a.sum(1), b.mean(0), T.stack([a, b]).sum((0, 2))]),
    "where_clamp": lambda T, a, b: T.where(a > b, a.clamp(-0.5, 0.5), b.relu()),
    "pow": lambda T, a, b: (a * a + 1) ** b + 2**a,
}


@pytest.mark.parametrize("which", ["both", "first", "second"])
@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_expression_tangents_match_torch(torch, name, which):
    """Inputs without a tangent count as zero (``which`` picks the duals)."""
    fn = EXPRESSIONS[name]

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        rng = rng_for("fwad", name)
        a, b = (lib.tensor(rng.standard_normal((2, 3))) for _ in range(2))
        ta, tb = (lib.tensor(rng.standard_normal((2, 3))) for _ in range(2))
        with fwAD.dual_level():
            if which in ("both", "first"):
                a = fwAD.make_dual(a, ta)
            if which in ("both", "second"):
                b = fwAD.make_dual(b, tb)
            primal, tangent = fwAD.unpack_dual(fn(lib, a, b))
            return [str(primal.dtype)[-7:], np.array(vals(primal)), np.array(vals(tangent))]

    got, expected = scenario(og), scenario(torch)
    assert got[0] == expected[0]
    for g, e in zip(got[1:], expected[1:]):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)


def test_integer_operand_and_no_tangent_at_all(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.tensor(X), lib.tensor(T))
            ints = lib.tensor([1, 2, 3])
            return [
                vals(tangent_of(lib, d * ints)),
                vals(tangent_of(lib, ints + d)),
                tangent_of(lib, lib.tensor(X).exp()),
                tangent_of(lib, d > 0),
                tangent_of(lib, lib.ones_like(d)),
            ]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Views and in-place ops


def test_tangent_of_a_view_is_a_view_of_the_tangent(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        t = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.zeros(2, 3), t)
            v = d[1]
            w = d.t()[1:]
            vt, wt = tangent_of(lib, v), tangent_of(lib, w)
            result = [vals(vt), vt._base is t, vals(wt), wt._base is t]
            t[1, 1] = 50.0  # the view's tangent sees changes of the tangent
            result.append(vals(tangent_of(lib, v)))
            parts = d.unbind(1)
            result.append([vals(tangent_of(lib, p)) for p in parts])
            result.append(tangent_of(lib, parts[2])._base is t)
            result.append(vals(tangent_of(lib, fwAD.unpack_dual(d).primal[0])))
        return result

    assert_same(torch, scenario)


INPLACE = {
    "add_": lambda T, s, o: s.add_(o, alpha=2),
    "sub_": lambda T, s, o: s.sub_(o),
    "mul_": lambda T, s, o: s.mul_(o),
    "div_": lambda T, s, o: s.div_(o * o + 1),
    "exp_": lambda T, s, o: s.exp_(),
    "sin_": lambda T, s, o: s.sin_(),
    "log_": lambda T, s, o: (s.mul_(s)).add_(1).log_(),
    "reciprocal_": lambda T, s, o: s.add_(3).reciprocal_(),
    "neg_": lambda T, s, o: s.neg_(),
    "relu_": lambda T, s, o: s.relu_(),
    "tanh_": lambda T, s, o: s.tanh_(),
    "sigmoid_": lambda T, s, o: s.sigmoid_(),
    "clamp_": lambda T, s, o: s.clamp_(-0.5, 0.5),
    "pow_": lambda T, s, o: s.pow_(3),
    "abs_": lambda T, s, o: s.abs_(),
    "sqrt_": lambda T, s, o: s.abs_().add_(1).sqrt_(),
    "copy_": lambda T, s, o: s.copy_(o),
    "copy_broadcast": lambda T, s, o: s.copy_(o[0]),
    "zero_": lambda T, s, o: s.zero_(),
    "fill_": lambda T, s, o: s.fill_(2.0),
    "fill_tensor": lambda T, s, o: s.fill_(o.sum()),
    "masked_fill_": lambda T, s, o: s.masked_fill_(o > 0, 1.5),
    "masked_fill_tensor": lambda T, s, o: s.masked_fill_(o > 0, o.sum()),
    "index_put_": lambda T, s, o: s.index_put_((T.tensor([1, 0]),), o[:, 1:], accumulate=True),
    "squeeze_": lambda T, s, o: s.unsqueeze_(0).squeeze_(),
    "transpose_": lambda T, s, o: s.transpose_(0, 1).mul_(2),
    "t_": lambda T, s, o: s.t_(),
}


@pytest.mark.parametrize("dual", ["self", "other", "both"])
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_tangents_match_torch(torch, name, dual):
    fn = INPLACE[name]

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        rng = rng_for("fwad-inplace", name)
        s, o = (lib.tensor(rng.standard_normal((2, 2))) for _ in range(2))
        ts, to = (lib.tensor(rng.standard_normal((2, 2))) for _ in range(2))
        with fwAD.dual_level():
            if dual in ("self", "both"):
                s = fwAD.make_dual(s, ts)
            if dual in ("other", "both"):
                o = fwAD.make_dual(o, to)
            out = fn(lib, s, o)
            tangent = tangent_of(lib, s)
            result = [out is s, rounded(vals(s), 8), rounded(vals(tangent), 8)]
            if dual in ("self", "both"):
                # the dual's own tangent was updated in place
                result.append(tangent is ts)
                result.append(rounded(vals(ts), 8))
        return result

    assert_same(torch, scenario)


def test_inplace_on_a_view_of_a_dual_updates_the_base_tangent(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        t = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.ones(2, 2), t)
            row = d[0]
            row.mul_(3)
            return [vals(tangent_of(lib, d)), vals(t), tangent_of(lib, d) is t]

    assert_same(torch, scenario)


def test_inplace_on_a_view_of_a_plain_base(torch):
    """The base gets a zero tangent and the view's is a view of it."""

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            base = lib.zeros(4)
            view = base[1:3]
            view.copy_(fwAD.make_dual(lib.ones(2), lib.tensor([3.0, 5.0])))
            tb, tv = tangent_of(lib, base), tangent_of(lib, view)
            result = [vals(tb), vals(tv), tv._base is tb]
            view.mul_(2)
            result.append(vals(tangent_of(lib, base)))
        return result

    assert_same(torch, scenario)


def test_views_see_a_tangent_their_base_got_in_place(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        base = lib.zeros(2, 3)
        early = base[:, 1]  # made before the level
        with fwAD.dual_level():
            late = base.t()[2]
            base.add_(fwAD.make_dual(lib.ones(2, 3), lib.arange(6.0).view(2, 3)))
            return [vals(tangent_of(lib, early)), vals(tangent_of(lib, late))]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Forward and reverse mode together


def test_forward_over_reverse(torch):
    """The jvp of a gradient: backward formulas run on dual tensors (saved inputs and
    saved outputs keep their tangents)."""

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, lib.tensor(T, dtype=lib.float64))
            y = (d.exp().sin() * d.tanh() + d.sigmoid() / d.exp()).sum()
            (g,) = lib.autograd.grad(y, x, create_graph=True)
            (g2,) = lib.autograd.grad((d * d.exp()).sum(), x)
            return [rounded(vals(g), 8), rounded(vals(tangent_of(lib, g)), 8)] + [
                rounded(vals(tangent_of(lib, g2)), 8)
            ]

    assert_same(torch, scenario)


def test_reverse_over_forward(torch):
    """Backward through tangent computations reaches primal and tangent."""

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        p = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        t = lib.tensor(T, dtype=lib.float64, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(p, t)
            out = (d.exp().sin() * d)[1:] @ d[:2].cos()
            jvp = fwAD.unpack_dual(out).tangent
            gp, gt = lib.autograd.grad(jvp, (p, t))
            return [rounded(vals(jvp), 8), rounded(vals(gp), 8), rounded(vals(gt), 8)]

    assert_same(torch, scenario)


def test_reverse_over_forward_through_inplace(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        p = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        t = lib.tensor(T, dtype=lib.float64, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(p, t).clone()
            d.mul_(d.detach() + 1).sin_()
            jvp = fwAD.unpack_dual(d).tangent
            gp, gt = lib.autograd.grad(jvp.sum(), (p, t))
            return [rounded(vals(jvp), 8), rounded(vals(gp), 8), rounded(vals(gt), 8)]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# autograd.Function: jvp


def _mul2(lib, jvp):
    class Mul2(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    Mul2.jvp = staticmethod(jvp)
    return Mul2


def test_function_jvp(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        log = []

        class Fn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                log.append(("forward sees a tangent", fwAD.unpack_dual(x).tangent is not None))
                log.append(("grad mode", lib.is_grad_enabled()))
                out = x * y
                log.append(("forward computes tangents", fwAD.unpack_dual(out).tangent))
                ctx.save_for_forward(x, y)
                return out, y.exp()

            @staticmethod
            def jvp(ctx, x_t, y_t):
                x, y = ctx.saved_tensors
                log.append(("grad mode in jvp", lib.is_grad_enabled()))
                return x_t * y + x * y_t, y_t * y.exp()

        with fwAD.dual_level():
            x = fwAD.make_dual(lib.tensor(X), lib.tensor(T))
            a, b = Fn.apply(x, lib.tensor([1.0, 2.0, 3.0]))
            log.append([rounded(vals(tangent_of(lib, a))), rounded(vals(tangent_of(lib, b)))])
        return log

    assert_same(torch, scenario)


def test_function_without_jvp(torch):
    def scenario(lib):
        class NoJvp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

        fwAD = lib.autograd.forward_ad
        inp = lib.rand(1, requires_grad=True)
        NoJvp.apply(inp)  # fine without tangents
        with fwAD.dual_level():
            NoJvp.apply(fwAD.make_dual(inp, lib.rand(1)))

    assert_same_error(torch, scenario, NotImplementedError, "must implement the jvp function")


@pytest.mark.parametrize(
    "jvp, exc, phrase",
    [
        (lambda ctx, t: (t, t), RuntimeError, "invalid number of forward gradients"),
        (lambda ctx, t: (), RuntimeError, "(expected 1 but got 0)"),
        (lambda ctx, t: 3, RuntimeError, "expected Variable or None (got int) for grad output 0"),
        (lambda ctx, t: t[:2], RuntimeError, "different size than that of the original"),
    ],
    ids=["too_many", "none_returned", "not_a_tensor", "wrong_size"],
)
def test_function_jvp_result_checks(torch, jvp, exc, phrase):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            _mul2(lib, jvp).apply(fwAD.make_dual(lib.tensor(X), lib.tensor(T)))

    assert_same_error(torch, scenario, exc, phrase)


def test_save_for_forward_needs_tensors(torch):
    def scenario(lib):
        class Fn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_forward(x, 3)
                return x * 2

        Fn.apply(lib.tensor(X))

    assert_same_error(torch, scenario, AssertionError, "save_for_forward expects all arguments")


def test_custom_function_save_for_forward(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        log = []

        class Func(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, z):
                ctx.save_for_backward(x, y)
                ctx.save_for_forward(x, y)
                ctx.z = z
                ctx.prod = x * y
                return z * ctx.prod

            @staticmethod
            def jvp(ctx, x_t, y_t, _):
                x_p, y_p = ctx.saved_tensors
                return ctx.z * (y_p * x_t + x_p * y_t)

            @staticmethod
            def vjp(ctx, grad_out):
                x, y = ctx.saved_tensors
                return ctx.z * grad_out * y, ctx.z * grad_out * x, None

        a = lib.tensor(1.0, requires_grad=True, dtype=lib.double)
        b = lib.tensor(2.0, requires_grad=True, dtype=lib.double)
        with fwAD.dual_level():
            out = Func.apply(fwAD.make_dual(a, lib.tensor(1.0, dtype=lib.double)), b, 4)
            log.append(vals(tangent_of(lib, out)))
            out.backward()
        log += [vals(a.grad), vals(b.grad)]
        log.append(lib.autograd.gradcheck(Func.apply, (a, b, 4), check_forward_ad=True))

        class Func2(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clone()

            @staticmethod
            def jvp(ctx, x_t):
                log.append(("jvp saved", len(ctx.saved_tensors)))
                return x_t

            @staticmethod
            def vjp(ctx, grad_out):
                log.append(("vjp saved", len(ctx.saved_tensors)))
                return grad_out

        with fwAD.dual_level():
            out = Func2.apply(fwAD.make_dual(a, lib.tensor(1.0, dtype=lib.double)))
            out.backward()
        return log

    assert_same(torch, scenario)


def test_custom_function_forward_mode_non_tensor_before_tensor_args(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        seen = []

        class MyFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, nt, x, nt2, y):
                return x * 2 + y * 3

            @staticmethod
            def jvp(ctx, nt, x_t, nt2, y_t):
                seen.append((nt, nt2, vals(y_t)))
                return x_t * 2 + y_t * 3

        x = lib.tensor(1.0, dtype=lib.double)
        y = lib.tensor(1.0, dtype=lib.double)
        with fwAD.dual_level():
            out = MyFn.apply(1, fwAD.make_dual(x, lib.tensor(1.0, dtype=lib.double)), 1, y)
            seen.append(vals(tangent_of(lib, out)))
        seen.append(
            lib.autograd.gradcheck(
                MyFn.apply,
                (1, x.requires_grad_(True), 1, y.requires_grad_(True)),
                check_forward_ad=True,
                check_backward_ad=False,
                check_batched_grad=False,
            )
        )
        return seen

    assert_same(torch, scenario)


@pytest.mark.parametrize("kind", ["view_as", "self", "mul_by_2"])
def test_custom_function_forward_mode_forward_is_no_op(torch, kind):
    """An input returned as is counts as a view of it: jvp must return a view too."""
    fns = {"view_as": lambda x: x.view_as(x), "self": lambda x: x, "mul_by_2": lambda x: x * 2}

    def scenario(lib):
        fwAD = lib.autograd.forward_ad

        class MyFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y, x

            @staticmethod
            def vjp(ctx, gO1, gO2):
                return gO1 + gO2, gO1

            @staticmethod
            def jvp(ctx, x_t, y_t):
                return x_t + y_t, fns[kind](x_t)

        a = lib.tensor(1.0, dtype=lib.double, requires_grad=True)
        t = lib.tensor(1.0, dtype=lib.double)
        b = lib.tensor(1.0, dtype=lib.double, requires_grad=True)
        c = lib.tensor(1.0, dtype=lib.double)
        t2 = lib.tensor(1.0, dtype=lib.double)
        d = lib.tensor(1.0, dtype=lib.double)
        with fwAD.dual_level():
            _, out2 = MyFn.apply(fwAD.make_dual(a, t), b)
            _, out3 = MyFn.apply(fwAD.make_dual(c, t2), d)
            result = [tangent_of(lib, out2)._base is t, tangent_of(lib, out3)._base is t2]
        result.append(lib.autograd.gradcheck(MyFn.apply, (a, c), check_forward_ad=True))
        return result

    if kind == "view_as":
        assert_same(torch, scenario)
    else:
        assert_same_error(
            torch, scenario, RuntimeError, "A custom Function's forward is returning a view"
        )


def test_custom_function_forward_mode_non_differentiable(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        log = []

        class Func(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                out = y.clone()
                ctx.mark_non_differentiable(out)
                return x.clone(), out

            @staticmethod
            def jvp(ctx, x_tangent, y_tangent):
                return x_tangent, None

        class IntFunc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x.clone(), y.clone()

            @staticmethod
            def jvp(ctx, x_tangent, y_tangent):
                log.append(("int input tangent", y_tangent))
                return x_tangent, None

        class NonTensor(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone(), object(), x.clone()

            @staticmethod
            def jvp(ctx, x_tangent):
                return x_tangent, None, x_tangent

        x, x_tangent = lib.tensor(2.0), lib.tensor(1.0)
        with fwAD.dual_level():
            _, out2 = Func.apply(fwAD.make_dual(x, x_tangent), lib.tensor(3.0))
            log.append(tangent_of(lib, out2))
            _, out2 = IntFunc.apply(fwAD.make_dual(x, x_tangent), lib.tensor(3))
            log.append(tangent_of(lib, out2))
            out1, _, out3 = NonTensor.apply(fwAD.make_dual(x, x_tangent))
            log.append([vals(tangent_of(lib, out1)), vals(tangent_of(lib, out3))])
        return log

    assert_same(torch, scenario)


def test_custom_function_forward_mode_non_differentiable_wrong(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad

        class FuncWrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                out = y.clone()
                ctx.mark_non_differentiable(out)
                return x.clone(), out

            @staticmethod
            def jvp(ctx, x_tangent, y_tangent):
                return x_tangent, x_tangent.clone()

        with fwAD.dual_level():
            FuncWrong.apply(fwAD.make_dual(lib.tensor(2.0), lib.tensor(1.0)), lib.tensor(3.0))

    assert_same_error(
        torch, scenario, RuntimeError, "You should return None at that position instead"
    )


def _view_fn(lib, flag):
    class ViewFn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, foo, flag):
            ctx.flag = flag
            ctx.size = foo.size()
            return foo.narrow(0, 0, 2)

        @staticmethod
        def vjp(ctx, gO):
            gI = gO.new_zeros(ctx.size)
            gI.narrow(0, 0, 2).copy_(gO)
            return gI, None

        @staticmethod
        def jvp(ctx, gI, _):
            res = gI.narrow(0, 0, 2)
            if ctx.flag != "ok":
                res = res.clone()  # breaks the view
            if ctx.flag in ["not_a_view_of_inp", "not_a_view_of_inp_base"]:
                res = res.view_as(res)  # a view, of the wrong thing
            return res

    def test_fn(inp):
        if flag == "not_a_view_of_inp_base":
            inp = inp.view_as(inp)
        return ViewFn.apply(inp, flag)

    return test_fn


@pytest.mark.parametrize(
    "flag, phrase",
    [
        ("ok", None),
        ("not_a_view", "jvp is not returning a view"),
        ("not_a_view_of_inp", "jvp is not returning a view of the given"),
        ("not_a_view_of_inp_base", "jvp is not returning a view of the same base"),
    ],
)
def test_custom_function_forward_mode_view_checks(torch, flag, phrase):
    def scenario(lib):
        inp = lib.rand(4, 4, dtype=lib.double, requires_grad=True)
        return lib.autograd.gradcheck(_view_fn(lib, flag), inp, check_forward_ad=True)

    if phrase is None:
        assert_same(torch, scenario)
    else:
        assert_same_error(torch, scenario, RuntimeError, phrase)


def _inplace_fn(lib):
    class InplaceFn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, foo, flag):
            ctx.mark_dirty(foo)
            ctx.flag = flag
            foo.mul_(2)
            return foo

        @staticmethod
        def vjp(ctx, gO):
            return 2 * gO, None

        @staticmethod
        def jvp(ctx, gI, _):
            if ctx.flag:
                return 2 * gI  # not in place
            gI.mul_(2)
            return gI

    def test_fn(inp, flag):
        return InplaceFn.apply(inp.clone(), flag)

    return InplaceFn, test_fn


@pytest.mark.parametrize("flag", [False, True])
def test_custom_function_forward_mode_inplace_checks(torch, flag):
    def scenario(lib):
        inp = lib.rand(4, 4, dtype=lib.double, requires_grad=True)
        return lib.autograd.gradcheck(_inplace_fn(lib)[1], (inp, flag), check_forward_ad=True)

    if flag:
        assert_same_error(
            torch, scenario, RuntimeError, "not modifying the forward mode gradients inplace"
        )
    else:
        assert_same(torch, scenario)


@pytest.mark.parametrize("jvp_err", [False, True])
def test_custom_function_mark_dirty_jvp(torch, jvp_err):
    """mark_dirty: the jvp must modify the input's tangent in place and return it as is."""

    def scenario(lib):
        fwAD = lib.autograd.forward_ad

        class InplaceMul(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                result = x.mul_(2)
                ctx.mark_dirty(result)
                return result

            @staticmethod
            def backward(ctx, grad_output):
                pass

            @staticmethod
            def jvp(ctx, x_t):
                if jvp_err:
                    return x_t
                return x_t.mul_(2)

        x = lib.tensor(1.0).clone()
        with fwAD.dual_level():
            x_tangent = lib.ones_like(x)
            x_dual = fwAD.make_dual(x, x_tangent)
            out = InplaceMul.apply(x_dual)
            _, out_tangent = fwAD.unpack_dual(out)
            return [out is x_dual, out_tangent is x_tangent, vals(out_tangent)]

    if jvp_err:
        assert_same_error(
            torch, scenario, RuntimeError, "jvp function must modify the corresponding gradient"
        )
    else:
        assert_same(torch, scenario)


def test_custom_function_dirty_input_without_tangent_gets_one(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad

        class AddInplace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.mark_dirty(x)
                return x.add_(y)

            @staticmethod
            def jvp(ctx, x_t, y_t):
                return x_t.add_(y_t)

        with fwAD.dual_level():
            x = lib.zeros(3)
            out = AddInplace.apply(x, fwAD.make_dual(lib.ones(3), lib.tensor(T)))
            return [out is x, vals(tangent_of(lib, x))]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# gradcheck(check_forward_ad=True)


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("should_fail", [False, True])
def test_custom_function_forward_mode_wrong_formula(torch, fast_mode, should_fail):
    def scenario(lib):
        class UserFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, foo, should_fail):
                ctx.should_fail = should_fail
                return foo * 2

            @staticmethod
            def vjp(ctx, gO):
                return 2 * gO, None

            @staticmethod
            def jvp(ctx, gI, _):
                return (3 if ctx.should_fail else 2) * gI

        inp = lib.rand(10, dtype=lib.double, requires_grad=True)
        return lib.autograd.gradcheck(
            UserFn.apply, (inp, should_fail), check_forward_ad=True, fast_mode=fast_mode
        )

    if should_fail:
        assert_same_failure(
            torch, scenario, "Jacobian computed with forward mode mismatch for output 0"
        )
    else:
        assert_same(torch, scenario)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_forward_ad(torch, fast_mode):
    def fn(x, y):
        return x + y, y

    def scenario(lib, bad):
        fwAD = lib.autograd.forward_ad

        def bad_fn(x, y):
            if fwAD._current_level >= 0:  # inside a forward AD level
                y_p, y_d = fwAD.unpack_dual(y)
                y = fwAD.make_dual(y_p, y_d * 1.1)
            return x + y, y

        x = lib.rand(2, dtype=lib.double, requires_grad=True)
        y = lib.rand(2, dtype=lib.double, requires_grad=True)
        return lib.autograd.gradcheck(
            bad_fn if bad else fn, (x, y), check_forward_ad=True, fast_mode=fast_mode
        )

    assert_same(torch, lambda lib: scenario(lib, False))
    phrase = "Jacobian computed with forward mode mismatch for output 0 with respect to input 1"
    assert_same_failure(torch, lambda lib: scenario(lib, True), phrase)


def test_gradcheck_forward_ad_inputs_do_not_require_grad_and_jvp_counts(torch):
    """test_gradcheck_forward_ad_runs_with_no_requires_grad and ..._respects_requires_grad
    (without their vmap parts): duals do not require grad; jvp runs once per input, and
    twice more per input for the undefined-tangent check."""

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        log = []

        class UserFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                if fwAD._current_level >= 0:
                    log.append((x.requires_grad, y.requires_grad))
                return x.clone(), y.clone()

            @staticmethod
            def jvp(ctx, x_t, y_t):
                log.append("jvp")
                return x_t, y_t

        x = lib.rand(1, dtype=lib.double, requires_grad=True)
        y = lib.rand(1, dtype=lib.double, requires_grad=True)
        counts = []
        for undefined in (False, True):
            log.clear()
            lib.autograd.gradcheck(
                UserFn.apply,
                (x, y),
                check_forward_ad=True,
                check_undefined_grad=undefined,
                check_backward_ad=False,
                check_batched_grad=False,
            )
            counts.append(log.count("jvp"))
            counts.append(all(entry == (False, False) for entry in log if entry != "jvp"))
        log.clear()
        y.requires_grad_(False)
        lib.autograd.gradcheck(UserFn.apply, (x, y), check_forward_ad=True, check_backward_ad=False)
        counts.append(log.count("jvp"))
        return counts

    assert_same(torch, scenario)


def _forward_or_backward_cases():
    for fast_mode in (True, False):
        for fwd in (True, False):
            for bwd in (True, False):
                for fwd_bad in (True, False):
                    for bwd_bad in (True, False):
                        yield pytest.param(
                            fast_mode,
                            fwd,
                            bwd,
                            fwd_bad,
                            bwd_bad,
                            id=f"fast{fast_mode:d}-fwd{fwd:d}-bwd{bwd:d}-fb{fwd_bad:d}-bb{bwd_bad:d}",
                        )


@pytest.mark.parametrize("fast_mode, fwd, bwd, fwd_bad, bwd_bad", _forward_or_backward_cases())
def test_gradcheck_check_forward_or_backward_only(torch, fast_mode, fwd, bwd, fwd_bad, bwd_bad):
    def scenario(lib):
        class UserFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, foo, fwd_bad, bwd_bad):
                ctx.fwd_bad = fwd_bad
                ctx.bwd_bad = bwd_bad
                return foo * 2

            @staticmethod
            def vjp(ctx, gO):
                if ctx.bwd_bad:
                    raise RuntimeError("FAIL BWD")
                return 2 * gO, None, None

            @staticmethod
            def jvp(ctx, gI, _1, _2):
                if ctx.fwd_bad:
                    raise RuntimeError("FAIL FWD")
                return 2 * gI

        x = lib.rand(2, dtype=lib.double, requires_grad=True)
        try:
            return lib.autograd.gradcheck(
                UserFn.apply,
                (x, fwd_bad, bwd_bad),
                check_forward_ad=fwd,
                check_backward_ad=bwd,
                check_undefined_grad=bwd,
                check_batched_grad=False,
                fast_mode=fast_mode,
            )
        except (RuntimeError, AssertionError) as exc:
            return type(exc).__name__, str(exc)[:40]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Reprs and library ops


def test_repr_shows_the_tangent(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            inside = repr(fwAD.make_dual(lib.ones(2), lib.tensor([1.0, 2.0])))
        return inside.replace("torch", "LIB").replace("opgrad", "LIB")

    assert_same(torch, scenario)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("with_autograd", [False, True])
def test_custom_op_under_forward_ad(torch, requires_grad, with_autograd):
    """A custom op's kernel runs below autograd and sees no tangents; with inputs
    that require grad its autograd Function has no jvp."""
    name = f"fwadtest::op_{int(requires_grad)}{int(with_autograd)}"

    def scenario(lib):
        fwAD = lib.autograd.forward_ad

        @lib.library.custom_op(name, mutates_args=())
        def op(x: lib.Tensor) -> lib.Tensor:
            return x.sin()

        if with_autograd:
            op.register_autograd(lambda ctx, g: g, setup_context=lambda ctx, inputs, output: None)
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.ones(2, requires_grad=requires_grad), lib.ones(2))
            return tangent_of(lib, op(d))

    if requires_grad:
        assert_same_error(torch, scenario, NotImplementedError, "must implement the jvp function")
    else:
        assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Review fixes: levels given explicitly, duals as tangents, 0-dim tangent reprs,
# jvp results that cannot be tangents, the unpacked primal's Identity node


def assert_same_type_and_phrase(torch, scenario, exc_type, phrase):
    """Both raise ``exc_type`` with ``phrase`` in the text (PyTorch's internal asserts
    carry a source path that opgrad has no reason to copy)."""
    expected = outcome(lambda: scenario(torch))
    got = outcome(lambda: scenario(og))
    assert expected[0] == exc_type.__name__ and phrase in expected[1], expected
    assert got[0] == expected[0] and phrase in got[1], got


def test_make_dual_with_a_dual_tangent_is_an_error(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            fwAD.make_dual(lib.ones(2), fwAD.make_dual(lib.ones(2), lib.ones(2)))

    assert_same_error(
        torch, scenario, RuntimeError, "itself has a forward gradient at the same level0"
    )


@pytest.mark.parametrize("inside", [True, False], ids=["inside", "outside"])
@pytest.mark.parametrize("what", ["plain", "dual", "view_of_dual"])
@pytest.mark.parametrize("level", [0, 1, 5, -1, -2])
def test_unpack_dual_with_an_explicit_level(torch, inside, what, level):
    """Another level only fails for a tensor with a tangent (PyTorch checks the tangent
    at level 0); a negative level returns the tensor as is."""

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.tensor(X), lib.tensor(T))
            t = {"plain": lib.tensor(X), "dual": d, "view_of_dual": d[1:]}[what]
            if inside:
                p, tangent = fwAD.unpack_dual(t, level=level)
                return [p is t, vals(p), vals(tangent), tangent_of(lib, p) is None]
        p, tangent = fwAD.unpack_dual(t, level=level)
        return [p is t, vals(p), vals(tangent)]

    expected = outcome(lambda: scenario(torch))
    assert outcome(lambda: scenario(og)) == expected


@pytest.mark.parametrize("inside", [True, False], ids=["inside", "outside"])
@pytest.mark.parametrize(
    "level, case",
    [(0, "ok"), (1, "ok"), (5, "ok"), (-1, "ok"), (5, "int"), (5, "size"), (0, "size")],
)
def test_make_dual_with_an_explicit_level(torch, inside, level, case):
    """PyTorch checks, in order: a level exists (for negative ones), floating point,
    level 0, the tangent's size, then that level 0 exists."""

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        primal = lib.tensor([1, 2, 3]) if case == "int" else lib.tensor(X)
        tangent = lib.ones(2) if case == "size" else lib.tensor(T)
        if not inside:
            return vals(tangent_of(lib, fwAD.make_dual(primal, tangent, level=level)))
        with fwAD.dual_level():
            return vals(tangent_of(lib, fwAD.make_dual(primal, tangent, level=level)))

    expected = outcome(lambda: scenario(torch))
    assert outcome(lambda: scenario(og)) == expected


@pytest.mark.parametrize(
    "primal, tangent, dtype_p, dtype_t",
    [
        ([1.0, 2.0], [3.0, 4.0], None, None),
        (3.0, 7.0, None, None),
        (3.0, 7e-5, None, None),
        (3.0, 1e-8, None, None),
        (3.0, 7e6, None, None),
        (1.0, -0.0, None, None),
        (1.0, 2.5, "float64", "float64"),
        (1.0, 0.1, "float64", "float64"),
        (1.0, 2.5, "float32", "float64"),
        (1.0, 0.1, "float64", "float32"),
        (1.23456789e8, 0.1, "float64", "float64"),
        (float("nan"), float("inf"), None, None),
        ([1.0, 2.0], [2.5, 3.0], "float64", "float64"),
        ([1.0, 2.0], [2.5, 3.0], "float32", "float64"),
        ([[1.0, 2.0], [3.0, 4.0]], [[2.5, 3.0], [1e-9, 1.0]], None, None),
        ([[1.0, 2.0], [3.0, 4.0]], [[2.5, 3.0], [1e-9, 1.0]], "float64", "float64"),
        ([float(i) for i in range(2000)], [float(i) for i in range(2000)], None, None),
    ],
)
def test_repr_of_a_dual_formats_the_tangent_as_torch(torch, primal, tangent, dtype_p, dtype_t):
    """``tangent=`` is followed by the tangent formatted as a value (a 0-dim one is a
    Python number), and long suffixes wrap onto a new line."""

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        dp = getattr(lib, dtype_p) if dtype_p else None
        dt = getattr(lib, dtype_t) if dtype_t else None
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.tensor(primal, dtype=dp), lib.tensor(tangent, dtype=dt))
            # clone, not d * 2: opgrad's absent tangents are real zeros (0 * inf = nan),
            # PyTorch's are ZeroTensors
            shown = [repr(d), str(d), repr(d.clone())]
            if d.dim() == 0:
                shown.append(repr(d.requires_grad_()))
        return [s.replace("torch", "LIB").replace("opgrad", "LIB") for s in shown]

    assert_same(torch, scenario)


def test_repr_of_a_reduced_dual(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]))
            return [repr(d.sum()), repr(d.sum().exp()), repr(d.sum() * 1e-5)]

    assert_same(torch, scenario)


def _two_outputs(lib, jvp):
    class Two(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2, x * 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

    Two.jvp = staticmethod(jvp)
    return Two


@pytest.mark.parametrize(
    "jvp",
    [
        lambda lib: _mul2(lib, lambda ctx, t: None),
        lambda lib: _mul2(lib, lambda ctx, t: lib.ones(3, dtype=lib.int64)),
        lambda lib: _mul2(lib, lambda ctx, t: lib.ones(3, dtype=lib.bool)),
        lambda lib: _two_outputs(lib, lambda ctx, t: (None, t * 3)),
        lambda lib: _two_outputs(lib, lambda ctx, t: (t * 2, None)),
        lambda lib: _two_outputs(lib, lambda ctx, t: (None, None)),
    ],
    ids=["none", "int64", "bool", "none_first_of_two", "none_second_of_two", "none_none"],
)
def test_function_jvp_must_give_a_floating_tangent(torch, jvp):
    """A differentiable output needs a floating point tangent: None or an integer one
    fails PyTorch's internal assert."""

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            jvp(lib).apply(fwAD.make_dual(lib.tensor(X), lib.tensor(T)))

    assert_same_type_and_phrase(
        torch,
        scenario,
        RuntimeError,
        "Expected both tensor and its forward grad to be floating point or complex",
    )


def _dirty_none(lib):
    class Dirty(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def jvp(ctx, t):
            return None

    return Dirty


def _view_none(lib, same):
    class View(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x if same else x.view(3)

        @staticmethod
        def jvp(ctx, t):
            return None

    return View


@pytest.mark.parametrize(
    "make, exc_phrase",
    [
        (_dirty_none, "is not modifying the forward mode gradients inplace"),
        (lambda lib: _view_none(lib, False), "cannot call get_autograd_meta() on undefined"),
        (lambda lib: _view_none(lib, True), "cannot call get_autograd_meta() on undefined"),
    ],
    ids=["dirty", "view", "input_as_is"],
)
@pytest.mark.parametrize("view_input", [False, True])
def test_function_jvp_none_for_a_dirty_or_view_output(torch, make, exc_phrase, view_input):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            x = fwAD.make_dual(lib.tensor(X), lib.tensor(T)).clone()
            make(lib).apply(x[:] if view_input else x)

    assert_same_type_and_phrase(torch, scenario, RuntimeError, exc_phrase)


def test_function_jvp_returning_a_dual_is_an_error(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            fn = _mul2(lib, lambda ctx, t: fwAD.make_dual(lib.ones(3), lib.ones(3)))
            fn.apply(fwAD.make_dual(lib.tensor(X), lib.tensor(T)))

    assert_same_error(
        torch, scenario, RuntimeError, "itself has a forward gradient at the same level0"
    )


def test_unpacked_primal_has_an_identity_node(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        x = lib.tensor(X, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, lib.tensor(T))
            result = []
            for t in (d, x, d * 2):
                p = fwAD.unpack_dual(t).primal
                node = p.grad_fn
                result += [
                    node.name().replace("torch", "LIB").replace("opgrad", "LIB"),
                    repr(p).replace("torch", "LIB").replace("opgrad", "LIB"),
                    [type(n).__name__ for n, _ in node.next_functions],
                    p._is_view(),
                ]
            with lib.no_grad():
                result.append(fwAD.unpack_dual(d).primal.grad_fn)
            p = fwAD.unpack_dual(d).primal
            (p * p).sum().backward()
            result.append(vals(x.grad))
        return result

    assert_same(torch, scenario)


def test_long_reprs_wrap_their_suffixes(torch):
    """The suffix rule ``tangent=`` shares with grad_fn and dtype: a new line past 80 columns."""

    def scenario(lib):
        x = lib.tensor([0.125 * i for i in range(9)], dtype=lib.float64, requires_grad=True)
        shown = [repr(x), repr(x * 2), repr(lib.ones(12, dtype=lib.float64)), repr(x[:2] * 2)]
        return [s.replace("torch", "LIB").replace("opgrad", "LIB") for s in shown]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# An input without a tangent counts as an exact zero (PyTorch's zero tensors):
# its terms vanish, so 0 * inf never turns a tangent into nan, and -0.0 keeps its sign.

SPECIALS = [float("inf"), 1.0, -float("inf"), float("nan"), 0.0, -2.0]
SPECIAL_TANGENT = [1.0, -0.0, 2.0, 1.0, float("inf"), -1.0]

UNDEFINED_TANGENT_CASES = {
    "dual_times_number": lambda T, d, p: d * 2,
    "number_times_dual": lambda T, d, p: 3 * d,
    "dual_times_plain": lambda T, d, p: d * p,
    "plain_times_dual": lambda T, d, p: p * d,
    "dual_plus_plain": lambda T, d, p: d + p,
    "plain_minus_dual": lambda T, d, p: p - d,
    "dual_over_plain": lambda T, d, p: d / p,
    "plain_over_dual": lambda T, d, p: p / d,
    "broadcast_plus": lambda T, d, p: d[0] + p.reshape(3, 2),
    "inplace_mul": lambda T, d, p: p.clone().mul_(d),
    "inplace_add": lambda T, d, p: p.clone().add_(d, alpha=2),
    "dual_minus_number": lambda T, d, p: d - 1.5,
}


def _bits(values):
    import math

    flat = values if isinstance(values, list) else [values]
    out = []
    for v in flat:
        if isinstance(v, list):
            out.append(_bits(v))
        elif math.isnan(v):
            out.append("nan")
        else:
            out.append((v, math.copysign(1.0, v)))
    return out


@pytest.mark.parametrize("name", sorted(UNDEFINED_TANGENT_CASES))
def test_undefined_tangents_are_exact_zeros(torch, name):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        plain = lib.tensor([0.5, float("inf"), 2.0, -1.0, 0.0, 3.0])
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.tensor(SPECIALS), lib.tensor(SPECIAL_TANGENT))
            out = UNDEFINED_TANGENT_CASES[name](lib, d, plain)
            tangent = fwAD.unpack_dual(out).tangent
            return _bits(tangent.tolist()), list(tangent.shape)

    assert_same(torch, scenario)


@pytest.mark.parametrize("name", ["dual_times_number", "dual_plus_plain", "plain_over_dual"])
def test_undefined_tangent_keeps_history_when_primals_require_grad(torch, name):
    """While grad mode records, the zero term still ties the tangent to the primals."""

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        x = lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
        plain = lib.tensor([0.5, 1.5, 2.0, -1.0, 1.0, 3.0])
        with fwAD.dual_level():
            d = fwAD.make_dual(x, lib.ones(6))
            tangent = fwAD.unpack_dual(UNDEFINED_TANGENT_CASES[name](lib, d, plain)).tangent
            return rounded(vals(tangent)), tangent.requires_grad

    assert_same(torch, scenario)
