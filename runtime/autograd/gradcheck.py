"""``gradcheck`` / ``gradgradcheck``: the autograd engine against finite differences.

PyTorch 2.13's checks, messages and defaults, written for opgrad:

* the *numerical* Jacobian perturbs each element of each checked input in place
  (through the numpy array behind ``input.data``) and takes central
  differences ``(f(x + eps) - f(x - eps)) / (2 eps)`` of every output;
* the *analytical* Jacobian is built row by row with ``opgrad.autograd.grad``
  and one-hot ``grad_outputs`` -- twice, to catch a backward that is not
  reentrant (nondeterministic);
* ``fast_mode`` compares the scalars ``v^T J u`` instead, for random unit
  vectors ``u`` (per input) and ``v`` (per output);
* then: a zero ``grad_output`` must give zero gradients, and undefined (None)
  ``grad_outputs`` must be handled (``check_undefined_grad``).

Jacobians have shape ``(input.numel(), output.numel())`` as in PyTorch, so the
failure messages print the same matrices. ``check_forward_ad`` builds the
Jacobian again with forward-mode AD (dual inputs, one tangent direction at a
time, or ``J u`` in fast mode) and checks undefined input tangents. vmap
(batched gradients) does not exist in opgrad yet: asking for those checks
raises NotImplementedError.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np

from .. import autograd as _autograd  # for grad(); a partially initialised package here
from .. import dtypes
from ..factories import from_numpy, zeros_like
from ..random import _DEFAULT_SEED
from ..random import generator as _global_generator
from ..random_kernels import uniform
from ..tensor import Tensor
from .engine import execute
from .grad_mode import no_grad
from .node import gradient_edge

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    r"""Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()

_UNDEFINED_NOTE = (
    'Please look at "Notes about undefined output gradients" in '
    '"tools/autograd/derivatives.yaml"'
)


def _not_implemented(what: str):
    return NotImplementedError(f"{what} is not implemented yet")


# ---------------------------------------------------------------------------
# Small helpers


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x) -> tuple:
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _checked_inputs(inputs) -> list:
    """``(position, tensor)`` of the inputs that require grad (the checked ones)."""
    return [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _as_tensor(array: np.ndarray) -> Tensor:
    return from_numpy(np.array(array, order="C"))


def _vjp(outputs, inputs, grad_outputs, **kwargs):
    return _autograd.grad(outputs, inputs, grad_outputs, allow_unused=True, **kwargs)


def _check_inputs(inputs) -> None:
    checked = _checked_inputs(inputs)
    for idx, inp in checked:
        if inp.dtype != dtypes.float64:
            warnings.warn(
                f"Input #{idx} requires gradient and "
                "is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are "
                "not of double precision floating point or complex. ",
                stacklevel=4,
            )
        if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only "
                "supports inputs that are non-overlapping to be able to "
                "compute the numerical gradients correctly. You should call "
                ".contiguous on the input before passing it to gradcheck."
            )
    if not checked:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of them have requires_grad=True."
        )


# ---------------------------------------------------------------------------
# Numerical derivatives: central differences


def _check_same_dtype_and_shape(a: Tensor, b: Tensor, eps, idx=None) -> None:
    on_index = f"on index {idx} " if idx is not None else ""
    for what, x, y in (("shape", a.shape, b.shape), ("dtype", a.dtype, b.dtype)):
        if x != y:
            raise AssertionError(
                f"Expected `func` to return outputs with the same {what}"
                f" when inputs are perturbed {on_index}by {eps}, but got:"
                f" {what}s {x} and {y}."
            )


def _central_difference(func, inputs, values, where, delta, eps, idx=None) -> list:
    """``(f(x + delta) - f(x - delta)) / (2 eps)`` flattened, per output of ``func``.

    ``values`` is the numpy array behind a checked input, perturbed in place at
    ``where``; ``func``'s outputs are cloned as the next call may overwrite them.
    """
    orig = values[where].copy()
    try:
        values[where] = orig - delta
        before = [o.clone() for o in _as_tuple(func(*inputs))]
        values[where] = orig + delta
        after = [o.clone() for o in _as_tuple(func(*inputs))]
    finally:
        values[where] = orig
    columns = []
    for a, b in zip(before, after):
        _check_same_dtype_and_shape(a, b, eps, idx)
        with no_grad():
            columns.append(((b - a) / (2 * eps)).detach().reshape(-1))
    return columns


def _numerical_jacobians(func, inputs, eps) -> list:
    """``[input][output]`` Jacobians (numpy, ``(input.numel(), output.numel())``).

    One entry per checked input and per output of ``func``; None for outputs
    that are not floating point.
    """
    outputs = _as_tuple(func(*inputs))
    jacobians = []
    for _, inp in _checked_inputs(inputs):
        values = inp.data.numpy()
        delta = values.dtype.type(eps)
        per_output = [
            np.zeros((values.size, o.numel()), o.dtype.np) if o.is_floating_point() else None
            for o in outputs
        ]
        for row, idx in enumerate(itertools.product(*map(range, values.shape))):
            columns = _central_difference(func, inputs, values, idx, delta, eps, idx)
            for jacobian, column in zip(per_output, columns):
                if jacobian is not None:
                    jacobian[row] = column.numpy()
        jacobians.append(per_output)
    return jacobians


def _numerical_jvps(func, inputs, all_u, eps) -> list:
    """``[input][output]`` directional derivatives ``J u`` (flat numpy arrays)."""
    jvps = []
    for (_, inp), u in zip(_checked_inputs(inputs), all_u):
        values = inp.data.numpy()
        delta = (u * eps).reshape(values.shape)
        columns = _central_difference(func, inputs, values, Ellipsis, delta, eps)
        jvps.append([c.numpy() for c in columns])
    return jvps


# ---------------------------------------------------------------------------
# Analytical derivatives: the backward pass


def _analytical_jacobians(inputs, output, nondet_tol, check_grad_dtypes, seeds=None) -> list:
    """Per checked input, the numpy matrix whose column ``j`` is the gradient for
    ``seeds[j]`` (one-hot rows of the Jacobian by default), computed twice."""
    diff_inputs = [t for _, t in _checked_inputs(inputs)]
    if seeds is None:
        dtype = output.dtype.np
        seeds = [
            np.eye(1, output.numel(), j, dtype).reshape(output.shape) for j in range(output.numel())
        ]

    def backward_pass():
        jacobians = [np.zeros((t.numel(), len(seeds)), t.dtype.np) for t in diff_inputs]
        sizes_ok = types_ok = True
        for j, seed in enumerate(seeds):
            grads = _vjp(output, diff_inputs, _as_tensor(seed), retain_graph=True)
            for jacobian, inp, g in zip(jacobians, diff_inputs, grads):
                if g is None:
                    continue
                if g.shape != inp.shape:
                    sizes_ok = False
                    continue
                if g.dtype != inp.dtype:
                    types_ok = False
                jacobian[:, j] = g.detach().numpy().reshape(-1)
        return jacobians, sizes_ok, types_ok

    first, sizes_ok, types_ok = backward_pass()
    second, _, _ = backward_pass()
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for j1, j2 in zip(first, second):
        if j1.size and np.abs(j1 - j2).max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with "
                "same input and grad_output multiple times gives different values, "
                "although analytical gradient matches numerical gradient."
                f"The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG
            )
    return first


def _mismatch_msg(analytical, numerical, output_idx: int, input_idx: int, forward=False) -> str:
    mode = "computed with forward mode " if forward else ""
    return (
        f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input "
        f"{input_idx:d},\nnumerical:{numerical}\nanalytical:{analytical}\n"
    )


# ---------------------------------------------------------------------------
# Analytical derivatives: forward mode


def _dual_inputs(inputs, fwAD):
    """The checked inputs as detached duals with zero tangents, and those tangents."""
    duals, tangents = [], []
    for inp in inputs:
        if isinstance(inp, Tensor) and inp.requires_grad:
            inp = fwAD.make_dual(inp.detach(), zeros_like(inp))
            # read back: the tangent the dual carries (it may be a copy)
            tangents.append(fwAD.unpack_dual(inp).tangent)
        duals.append(inp)
    return duals, tangents


def _output_tangents(func, duals, fwAD, positions) -> list:
    """Per output position, the flat numpy tangent (zeros when it has none)."""
    outputs = _as_tuple(func(*duals))
    result = []
    for k in positions:
        primal, tangent = fwAD.unpack_dual(outputs[k])
        if tangent is None:
            result.append(np.zeros(primal.numel(), primal.dtype.np))
        else:
            result.append(tangent.detach().numpy().reshape(-1).copy())
    return result


def _forward_jacobians(func, inputs, positions, all_u=None) -> list:
    """``[input][output]``: the Jacobian (input.numel(), output.numel()) built one
    tangent direction at a time, or with ``all_u`` the flat ``J u`` per output."""
    from . import forward_ad as fwAD

    jacobians = []
    with fwAD.dual_level():
        duals, tangents = _dual_inputs(inputs, fwAD)
        for i, tangent in enumerate(tangents):
            values = tangent.detach().numpy()
            if all_u is not None:
                values[...] = all_u[i].reshape(values.shape)
                jacobians.append(_output_tangents(func, duals, fwAD, positions))
                values[...] = 0
                continue
            rows = []
            for idx in itertools.product(*map(range, values.shape)):
                values[idx] = 1
                rows.append(_output_tangents(func, duals, fwAD, positions))
                values[idx] = 0
            jacobians.append(
                [
                    np.stack([r[o] for r in rows]) if rows else np.zeros((0, 0))
                    for o in range(len(positions))
                ]
            )
    return jacobians


def _check_undefined_forward_mode(func, inputs) -> None:
    """An input without tangent must give the tangents a zero tangent gives."""
    from . import forward_ad as fwAD

    rng = np.random.default_rng(_DEFAULT_SEED)
    all_u = [_random_unit_vector(rng, t) for _, t in _checked_inputs(inputs)]
    with fwAD.dual_level():
        duals, tangents = _dual_inputs(inputs, fwAD)
        for tangent, u in zip(tangents, all_u):
            tangent.detach().numpy()[...] = u.reshape(tuple(tangent.shape))
        for idx, inp in _checked_inputs(inputs):
            kept = duals[idx]
            duals[idx] = fwAD.make_dual(inp.detach(), zeros_like(inp))
            outs1 = [o for o in _as_tuple(func(*duals)) if _is_float_tensor(o)]
            duals[idx] = inp.detach()
            outs2 = [o for o in _as_tuple(func(*duals)) if _is_float_tensor(o)]
            duals[idx] = kept
            for index_o, (o1, o2) in enumerate(zip(outs1, outs2)):
                t1, t2 = fwAD.unpack_dual(o1).tangent, fwAD.unpack_dual(o2).tangent
                if t1 is not None and t2 is not None:
                    if not np.allclose(t1.detach().numpy(), t2.detach().numpy()):
                        raise GradcheckError(
                            "Mismatch in tangent values for output with index: ",
                            index_o,
                            " when input: ",
                            inp,
                            " has an undefined tangent value. ",
                            " Got: ",
                            t1,
                            " but expected: ",
                            t2,
                        )


def _is_float_tensor(x) -> bool:
    return isinstance(x, Tensor) and x.is_floating_point()


# ---------------------------------------------------------------------------
# The two comparisons: whole Jacobians (slow) and projections (fast_mode)


def _slow_check(
    func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol, forward=False
):
    numerical = _numerical_jacobians(func, inputs, eps)
    if not outputs:
        if any(j is not None and (j != 0).any() for per_out in numerical for j in per_out):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    positions = [k for k, o in enumerate(_as_tuple(func_out)) if o.requires_grad]
    if forward:
        analytical = _forward_jacobians(func, inputs, positions)
        for i, k in enumerate(positions):
            for j, per_output in enumerate(analytical):
                a, n = per_output[i], numerical[j][k]
                if not np.allclose(a.reshape(n.shape), n, rtol, atol):
                    raise GradcheckError(
                        _mismatch_msg(_as_tensor(a), _as_tensor(n), i, j, forward=True)
                    )
        return
    for i, (k, output) in enumerate(zip(positions, outputs)):
        analytical = _analytical_jacobians(inputs, output, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][k]
            if not np.allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch_msg(_as_tensor(a), _as_tensor(n), i, j))


def _random_unit_vector(rng: np.random.Generator, tensor: Tensor) -> np.ndarray:
    vec = rng.random(tensor.numel()).astype(tensor.dtype.np)
    with np.errstate(invalid="ignore"):
        return vec / np.linalg.norm(vec)


def _slow_mode_report(
    func, inputs, output, position, input_idx, rtol, atol, eps, forward=False
) -> str:
    """After a fast-mode failure: the full Jacobians of the failing pair (``output``
    is ``func``'s output number ``position``)."""
    numerical = _numerical_jacobians(func, inputs, eps)[input_idx][position]
    if forward:
        analytical = _forward_jacobians(func, inputs, [position])[input_idx][0]
        analytical = analytical.reshape(numerical.shape)
    else:
        analytical = _analytical_jacobians(inputs, output, float("inf"), False)[input_idx]
    max_diff = np.abs(numerical - analytical).max()
    msg = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
        "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
        f"Numerical:\n {_as_tensor(numerical)}\n"
        f"Analytical:\n{_as_tensor(analytical)}\n\n"
        f"The max per-element difference (slow mode) is: {max_diff}.\n"
    )
    if np.allclose(analytical, numerical, rtol, atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _fast_check(
    func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol, forward=False
):
    # A private generator with a fixed seed: reproducible, and the user's RNG is untouched.
    rng = np.random.default_rng(_DEFAULT_SEED)
    all_u = [_random_unit_vector(rng, t) for _, t in _checked_inputs(inputs)]
    if forward:
        # forward mode computes J u itself: compared with the numerical J u directly
        jvps = _numerical_jvps(func, inputs, all_u, eps)
        positions = [k for k, o in enumerate(_as_tuple(func_out)) if o.requires_grad]
        analytical = _forward_jacobians(func, inputs, positions, all_u)
        for j, u in enumerate(all_u):
            for i, k in enumerate(positions):
                a, n = analytical[j][i], jvps[j][k]
                if not np.allclose(a, n, rtol, atol * float(u.sum())):
                    report = _slow_mode_report(
                        func, inputs, outputs[i], k, j, rtol, atol, eps, forward=True
                    )
                    raise GradcheckError(
                        _mismatch_msg(_as_tensor(a), _as_tensor(n), i, j, forward=True) + report
                    )
        return
    all_v = [_random_unit_vector(rng, o) for o in outputs]
    jvps = _numerical_jvps(func, inputs, all_u, eps)
    if not outputs:
        for jvp in (j for per_out in jvps for j in per_out):
            if jvp.size and np.abs(jvp).max() > nondet_tol:
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    positions = [k for k, o in enumerate(_as_tuple(func_out)) if o.requires_grad]
    for i, (k, output, v) in enumerate(zip(positions, outputs, all_v)):
        seed = v.reshape(output.shape)
        vjps = _analytical_jacobians(inputs, output, nondet_tol, check_grad_dtypes, [seed])
        for j, (vjp, u) in enumerate(zip(vjps, all_u)):
            analytical = float(vjp[:, 0] @ u)
            numerical = float(v @ jvps[j][k])
            # each entry may be off by atol: the projection by sum(u) * sum(v) times that
            scaled_atol = atol * float(u.sum()) * float(v.sum())
            if not np.allclose(analytical, numerical, rtol, scaled_atol):
                report = _slow_mode_report(func, inputs, output, k, j, rtol, atol, eps)
                raise GradcheckError(_mismatch_msg(analytical, numerical, i, j) + report)


# ---------------------------------------------------------------------------
# Checks of the backward functions themselves


def _check_backward_multiplies_by_grad_output(outputs, inputs, masked) -> None:
    diff_inputs = [t for _, t in _checked_inputs(inputs)]
    grads = _vjp(outputs, diff_inputs, [zeros_like(o) for o in outputs])
    for g, inp in zip(grads, diff_inputs):
        if g is None:
            continue
        values = g.detach().numpy()
        zero = np.allclose(values, 0) if masked else bool((values == 0).all())
        if not zero:
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != inp.dtype:
            raise GradcheckError("grad is incorrect type")
        if g.shape != inp.shape:
            raise GradcheckError("grad is incorrect size")


def _warn_bc_breaking() -> None:
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking "
        "feature is enabled by default, but it may break existing callers "
        "of this function. If this is true for you, you can call this "
        'function with "check_undefined_grad=False" to disable the feature',
        stacklevel=5,
    )


def _check_undefined_grad(func, inputs) -> None:
    """Backward must accept undefined (None) output gradients: all at once, or one
    at a time while the others are zero, and then give None or zero gradients."""
    diff_inputs = [t for _, t in _checked_inputs(inputs)]
    outputs = _differentiable_outputs(func(*inputs))
    trials = [(outputs, [None] * len(outputs))]
    if len(outputs) > 1:
        for k in range(len(outputs)):
            fresh = _differentiable_outputs(func(*inputs))
            trials.append((fresh, [None if i == k else zeros_like(o) for i, o in enumerate(fresh)]))
    for outs, grad_outputs in trials:
        if not outs:
            continue
        try:
            grads = execute(
                [gradient_edge(o) for o in outs],
                grad_outputs,
                False,
                False,
                [gradient_edge(t) for t in diff_inputs],
            )
        except Exception as e:  # torch: RuntimeError; opgrad's Python formulas raise any kind
            _warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. " + _UNDEFINED_NOTE
            ) from e
        for g in grads:
            if g is not None and not (g.detach().numpy() == 0).all():
                _warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads "
                    "are undefined or zero. " + _UNDEFINED_NOTE
                )


# ---------------------------------------------------------------------------
# Public API


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked=None,
) -> bool:
    r"""Check the gradients of ``func`` at ``inputs`` against finite differences.

    Every input tensor with ``requires_grad=True`` is checked (they should be
    float64); other inputs are passed through. Returns True when every
    analytical Jacobian is ``allclose`` to the numerical one; otherwise raises
    :class:`GradcheckError` (or returns False with ``raise_exception=False``).
    ``fast_mode`` compares ``v^T J u`` for random unit vectors ``u`` and ``v``.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True"
        )
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
        )
    if check_batched_forward_grad:
        raise _not_implemented("batched forward gradient checking (vmap)")
    if check_batched_grad:
        raise _not_implemented("batched gradient checking (vmap)")
    try:
        _run_gradcheck(
            func,
            _as_tuple(inputs),
            eps,
            atol,
            rtol,
            nondet_tol,
            check_undefined_grad,
            check_grad_dtypes,
            fast_mode,
            masked,
            check_forward_ad,
            check_backward_ad,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _run_gradcheck(
    func,
    inputs,
    eps,
    atol,
    rtol,
    nondet_tol,
    check_undefined_grad,
    check_grad_dtypes,
    fast,
    masked,
    check_forward_ad=False,
    check_backward_ad=True,
) -> None:
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    check = _fast_check if fast else _slow_check
    args = (func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol)
    if check_backward_ad:
        check(*args)
    if check_forward_ad:
        check(*args, forward=True)
        if check_undefined_grad:
            _check_undefined_forward_mode(func, inputs)
    if not check_backward_ad:
        return
    _check_backward_multiplies_by_grad_output(outputs, inputs, masked)
    if check_undefined_grad:
        _check_undefined_grad(func, inputs)


def _random_grad_output(output: Tensor, noncontiguous: bool) -> Tensor:
    """Uniform in [-1, 1) like ``torch.testing.make_tensor``, from opgrad's global generator
    (PyTorch's draws for a floating output)."""
    np_dtype = output.dtype.np if output.is_floating_point() else np.dtype(np.float64)
    shape = tuple(output.shape)
    values = uniform(_global_generator(), math.prod(shape), np_dtype) * np_dtype.type(2.0)
    values = (values - np_dtype.type(1.0)).reshape(shape)
    if noncontiguous and output.numel() > 1:
        return from_numpy(np.repeat(values, 2, axis=-1))[..., ::2].requires_grad_()
    return from_numpy(values).requires_grad_()


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    r"""Check second derivatives: :func:`gradcheck` of the map from
    ``(inputs, grad_outputs)`` to the gradients of ``func`` w.r.t. its inputs.

    Without ``grad_outputs``, random ones (uniform in [-1, 1), requiring grad)
    are drawn from opgrad's global generator.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
        )
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True"
        )
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(
            _random_grad_output(o, gen_non_contig_grad_outputs) for o in outputs
        )
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    n_inputs = len(tupled_inputs)
    diff_input_positions = [i for i, _ in _checked_inputs(tupled_inputs)]

    def first_derivatives(*args):
        input_args, grads = args[:n_inputs], args[n_inputs:]
        # forward mode passes detached duals: restore which inputs require grad
        input_args = tuple(
            a.requires_grad_() if i in diff_input_positions and not a.requires_grad else a
            for i, a in enumerate(input_args)
        )
        grads = tuple(
            g.requires_grad_() if isinstance(g, Tensor) and not g.requires_grad else g
            for g in grads
        )
        outputs = _differentiable_outputs(func(*input_args))
        wrt = [input_args[i] for i in diff_input_positions]
        result = _vjp(outputs, wrt, grads, create_graph=True)
        return tuple(g for g in result if g is not None)

    return gradcheck(
        first_derivatives,
        tupled_inputs + tupled_grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        masked=masked,
    )
