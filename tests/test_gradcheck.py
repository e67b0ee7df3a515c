"""``opgrad.autograd.gradcheck`` / ``gradgradcheck``, compared with PyTorch's.

The same function is checked by both libraries on the same float64 values:
verdicts, error types and messages must agree (messages say ``opgrad.``
where torch says ``torch.``). Then every differentiable op case of
test_ops_vs_torch.py must pass both checks in opgrad; a case is xfail only
where torch's own gradcheck fails too (non-smooth points).
"""

import re
import warnings

import numpy as np
import pytest

import opgrad as og
import test_ops_vs_torch as cases
from opgrad.autograd.gradcheck import GradcheckError
from torch_oracle import rng_for

VALUES = np.array([[0.3, -1.2, 0.8], [1.5, -0.1, 0.05]])
OTHER = np.array([[0.7, 0.2, -0.4], [0.1, 0.9, -1.1]])


def _leaf(lib, values=VALUES, **kw):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True, **kw)


def _pair(lib):
    return _leaf(lib), _leaf(lib, OTHER)


def _same_text(text: str) -> str:
    """A message as opgrad words it: ``opgrad.`` dtypes and sizes, whitespace collapsed
    (opgrad's tensor repr does not wrap a long ``dtype=`` suffix onto its own line)."""
    text = re.sub(r"\btorch\.(float|Size|int|bool)", r"opgrad.\1", text)
    return " ".join(text.split())


def _outcome(lib, check, fn, inputs, **kwargs):
    """``(result or exception type, message, warnings)`` of one check."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = getattr(lib.autograd, check)(fn(lib), inputs(lib), **kwargs)
            outcome = (result, "")
        except Exception as exc:  # noqa: BLE001 - the type is compared
            outcome = (type(exc).__name__, _same_text(str(exc)))
    messages = [_same_text(str(w.message)) for w in caught if w.category is UserWarning]
    return outcome + (messages,)


# ---------------------------------------------------------------------------
# Functions with known verdicts


def _broken_second_derivative(lib):
    """x**2 whose gradient 2x is right but built from detached values, so the
    gradient of the gradient is 0 instead of 2."""

    def fn(x):
        d = x.detach()
        return d * d + (x - d) * (2 * d)

    return fn


def _gradient_ignores_grad_output(lib):
    def fn(x):
        y = x * 2
        y.register_hook(lambda g: g + 1)
        return y

    return fn


def _nondeterministic_backward(lib):
    calls = iter(range(1000))

    def fn(x):
        y = x * 2
        y.register_hook(lambda g: g * (1 + 1e-3 * next(calls)))
        return y

    return fn


MATCHING = [
    # (id, check, fn maker, inputs maker, kwargs)
    ("smooth", "gradcheck", lambda T: lambda x, y: (x * y.sin()).sum(0), _pair, {}),
    ("tensor_not_tuple", "gradcheck", lambda T: lambda x: x.exp(), _leaf, {}),
    ("two_outputs", "gradcheck", lambda T: lambda x, y: (x * y, (x * x).sum()), _pair, {}),
    (
        "non_tensor_inputs_pass_through",
        "gradcheck",
        lambda T: lambda x, s, m: x * s + m,
        lambda T: (_leaf(T), 2.0, T.tensor(OTHER)),
        {},
    ),
    ("output_is_input", "gradcheck", lambda T: lambda x: x, _leaf, {}),
    ("detached_term", "gradcheck", lambda T: lambda x, y: x * y.detach(), _pair, {}),
    (
        "detached_term_no_raise",
        "gradcheck",
        lambda T: lambda x, y: x * y.detach(),
        _pair,
        {"raise_exception": False},
    ),
    (
        "second_output_wrong",
        "gradcheck",
        lambda T: lambda x, y: (x * y, (x + 1).detach() * y),
        _pair,
        {},
    ),
    ("not_double", "gradcheck", lambda T: lambda x: x * 2, lambda T: _leaf(T).float(), {}),
    (
        "no_input_requires_grad",
        "gradcheck",
        lambda T: lambda x: x * 2,
        lambda T: T.tensor(VALUES),
        {},
    ),
    (
        "stride_0_input",
        "gradcheck",
        lambda T: lambda x: x * 2,
        lambda T: _leaf(T, [1.0]).expand(3),
        {},
    ),
    (
        "shape_changes_when_perturbed",
        "gradcheck",
        lambda T: lambda x: x[x > 0.5],
        lambda T: _leaf(T, [0.5, 1.0]),
        {},
    ),
    ("no_differentiable_output", "gradcheck", lambda T: lambda x: x.detach() * 2, _leaf, {}),
    (
        "no_differentiable_output_fast",
        "gradcheck",
        lambda T: lambda x: x.detach() * 2,
        _leaf,
        {"fast_mode": True},
    ),
    ("constant_output", "gradcheck", lambda T: lambda x: x.detach() * 0, _leaf, {}),
    ("bool_output", "gradcheck", lambda T: lambda x: x > 0, _leaf, {}),
    ("backward_ignores_grad_output", "gradcheck", _gradient_ignores_grad_output, _leaf, {}),
    ("nondeterministic_backward", "gradcheck", _nondeterministic_backward, _leaf, {}),
    ("smooth_fast", "gradcheck", lambda T: lambda x, y: (x * y.sin()).sum(0), _pair, {}),
    ("broken_second_derivative", "gradcheck", _broken_second_derivative, _leaf, {}),
    (
        "broken_second_derivative_no_raise",
        "gradgradcheck",
        _broken_second_derivative,
        _leaf,
        {"raise_exception": False},
    ),
    ("smooth", "gradgradcheck", lambda T: lambda x, y: (x * y.sin()).sum(0), _pair, {}),
    ("two_outputs", "gradgradcheck", lambda T: lambda x, y: (x * y, (x * x).sum()), _pair, {}),
    ("linear", "gradgradcheck", lambda T: lambda x: x * 2 + 1, _leaf, {}),
    ("output_is_input", "gradgradcheck", lambda T: lambda x: x, _leaf, {}),
    (
        "non_contiguous_grad_outputs",
        "gradgradcheck",
        lambda T: lambda x: x**3,
        _leaf,
        {"gen_non_contig_grad_outputs": True},
    ),
    ("fast", "gradgradcheck", lambda T: lambda x: x.sin() * x, _leaf, {"fast_mode": True}),
    (
        "no_backward_check",
        "gradcheck",
        lambda T: lambda x: x,
        _leaf,
        {"check_backward_ad": False},
    ),
    (
        "batched_without_backward",
        "gradcheck",
        lambda T: lambda x: x,
        _leaf,
        {"check_backward_ad": False, "check_batched_grad": True, "check_forward_ad": True},
    ),
    (
        "no_rev_over_rev",
        "gradgradcheck",
        lambda T: lambda x: x,
        _leaf,
        {"check_rev_over_rev": False},
    ),
]


@pytest.mark.parametrize(
    "check, fn, inputs, kwargs",
    [pytest.param(*c[1:], id=f"{c[1]}-{c[0]}") for c in MATCHING],
)
def test_outcome_matches_torch(torch, check, fn, inputs, kwargs):
    got = _outcome(og, check, fn, inputs, **kwargs)
    expected = _outcome(torch, check, fn, inputs, **kwargs)
    assert got == expected


def test_failure_message_is_pytorchs(torch):
    x, y = _pair(og)
    with pytest.raises(GradcheckError) as info:
        og.autograd.gradcheck(lambda x, y: x * y.detach(), (x, y))
    message = str(info.value)
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 1,\nnumerical:")
    assert "\nanalytical:tensor([[0., 0., 0., 0., 0., 0.]," in message
    assert isinstance(info.value, RuntimeError)
    assert type(info.value).__module__ == "opgrad.autograd.gradcheck"
    assert (
        og.autograd.gradcheck(lambda x, y: x * y.detach(), (x, y), raise_exception=False) is False
    )


def test_fast_mode_failure_reports_slow_mode_jacobians(torch):
    """The projections differ (each library draws its own u, v); the rest is equal."""

    def outcome(lib):
        with pytest.raises(RuntimeError) as info:
            lib.autograd.gradcheck(lambda x, y: x * y.detach(), _pair(lib), fast_mode=True)
        lines = str(info.value).split("\n")
        assert lines[0] == "Jacobian mismatch for output 0 with respect to input 1,"
        assert lines[1].startswith("numerical:") and float(lines[1][10:]) != 0
        assert lines[2] == "analytical:0.0"
        return _same_text("\n".join(lines[3:]))

    got = outcome(og)
    assert got == outcome(torch)
    assert "we recompute numerical and analytical jacobians in slow mode" in got


def test_gradgradcheck_message_matches_torch_with_given_grad_outputs(torch):
    def outcome(lib):
        with pytest.raises(RuntimeError) as info:
            lib.autograd.gradgradcheck(
                _broken_second_derivative(lib), _leaf(lib), _leaf(lib, OTHER)
            )
        return _same_text(str(info.value))

    got = outcome(og)
    assert got.startswith("Jacobian mismatch for output 0 with respect to input 0,")
    assert got == outcome(torch)


def test_non_double_inputs_warn(torch):
    with pytest.warns(UserWarning, match=r"Input #0 requires gradient and is not a double"):
        assert og.autograd.gradcheck(lambda x: x * 2, _leaf(og).float(), eps=1e-3, atol=1e-3)


def test_nondet_tol_accepts_small_nondeterminism():
    x = _leaf(og)
    calls = iter(range(1000))

    def fn(x):
        y = x * 2
        y.register_hook(lambda g: g * (1 + 1e-9 * next(calls)))
        return y

    assert og.autograd.gradcheck(fn, x, nondet_tol=1e-6)


def test_inputs_are_restored_and_rng_untouched():
    x, y = _pair(og)
    version = x._version
    og.manual_seed(3)
    og.autograd.gradcheck(lambda x, y: x * y, (x, y), fast_mode=True)
    after = og.rand(3).numpy()
    og.manual_seed(3)
    np.testing.assert_array_equal(after, og.rand(3).numpy())
    np.testing.assert_array_equal(x.detach().numpy(), VALUES)
    np.testing.assert_array_equal(y.detach().numpy(), OTHER)
    assert x._version == version and x.grad is None


def test_batched_forward_checks_are_not_implemented():
    with pytest.raises(NotImplementedError, match="batched forward gradient checking"):
        og.autograd.gradcheck(
            lambda x: x, _leaf(og), check_forward_ad=True, check_batched_forward_grad=True
        )


# ---------------------------------------------------------------------------
# Every op case of test_ops_vs_torch passes gradcheck and gradgradcheck

# Non-smooth points: torch's own checks fail there too (asserted by the test).
TORCH_ALSO_FAILS = {
    ("relu_at_zero", "gradcheck"),
    ("relu_at_zero", "gradgradcheck"),
    ("clamp_at_bounds", "gradcheck"),
    ("clamp_at_bounds", "gradgradcheck"),
    ("clamp_tensor_at_bounds", "gradcheck"),
    ("clamp_tensor_at_bounds", "gradgradcheck"),
    ("abs_at_zero", "gradgradcheck"),
    ("maximum_ties", "gradgradcheck"),
}


def _case_params():
    out = []
    for case in cases.DIFFERENTIABLE:
        for check in ("gradcheck", "gradgradcheck"):
            marks = []
            if (case.id, check) in TORCH_ALSO_FAILS:
                marks.append(
                    pytest.mark.xfail(
                        reason="non-differentiable point: torch fails too",
                        strict=True,
                        raises=GradcheckError,
                    )
                )
            out.append(pytest.param(case, check, id=f"{check}-{case.id}", marks=marks))
    return out


def _check_case(lib, case, check, **kwargs):
    inputs = cases.make_inputs(lib, case)

    def fn(*args):
        return case.fn(lib, *args)

    if any(arg.dtype == "float32" and arg.differentiable for arg in case.args):
        # single precision inputs (the cast ops): coarser steps and tolerances
        kwargs.update(eps=1e-3, atol=1e-3, rtol=1e-2)
    if check == "gradgradcheck":
        # fixed grad_outputs, so that the verdict does not depend on the global RNG
        out = fn(*inputs)
        grad = rng_for("gradgrad", case.id).standard_normal(tuple(out.shape))
        kwargs["grad_outputs"] = lib.tensor(grad, dtype=out.dtype, requires_grad=True)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Input #", category=UserWarning)
        return getattr(lib.autograd, check)(fn, inputs, **kwargs)


@pytest.mark.parametrize("case, check", _case_params())
def test_every_op_passes_gradcheck(torch, case, check):
    if (case.id, check) in TORCH_ALSO_FAILS:
        assert _check_case(torch, case, check, raise_exception=False) is False
    assert _check_case(og, case, check) is True


def _forward_case_params(check="gradcheck"):
    out = []
    for case in cases.DIFFERENTIABLE:
        marks = []
        if (case.id, check) in TORCH_ALSO_FAILS:
            marks.append(
                pytest.mark.xfail(
                    reason="non-differentiable point: torch fails too",
                    strict=True,
                    raises=GradcheckError,
                )
            )
        out.append(pytest.param(case, id=case.id, marks=marks))
    return out


@pytest.mark.parametrize("case", _forward_case_params())
def test_every_op_passes_forward_ad_gradcheck(torch, case):
    """Forward mode against finite differences, and undefined input tangents (as zeros)."""
    kwargs = dict(check_forward_ad=True, check_backward_ad=False)
    if (case.id, "gradcheck") in TORCH_ALSO_FAILS:
        assert _check_case(torch, case, "gradcheck", raise_exception=False, **kwargs) is False
    assert _check_case(og, case, "gradcheck", **kwargs) is True


@pytest.mark.parametrize("case", _forward_case_params())
def test_every_op_passes_forward_ad_fast_gradcheck(case):
    kwargs = dict(check_forward_ad=True, check_backward_ad=False, fast_mode=True)
    assert _check_case(og, case, "gradcheck", **kwargs) is True


@pytest.mark.parametrize("case", _forward_case_params("gradgradcheck"))
def test_every_op_passes_forward_over_reverse_gradgradcheck(torch, case):
    """The jvp of each op's gradient (its backward formulas run on dual tensors)."""
    kwargs = dict(check_fwd_over_rev=True, check_rev_over_rev=False, check_undefined_grad=False)
    if (case.id, "gradgradcheck") in TORCH_ALSO_FAILS:
        assert _check_case(torch, case, "gradgradcheck", raise_exception=False, **kwargs) is False
    assert _check_case(og, case, "gradgradcheck", **kwargs) is True
