"""Helpers for checking opgrad against real PyTorch.

PyTorch is the oracle these tests compare against, never a dependency of
opgrad. Every test that needs it goes through :func:`require_torch` (or the
``torch`` fixture in conftest.py, which calls it): without torch the test is
skipped on a user's machine, but fails when the environment variable ``CI``
is ``"true"``, because CI installs ``torch==2.13.0`` and must run them.

Most helpers take ``lib``, the module under test (``opgrad``) or the oracle
(``torch``), so one expression can be evaluated by both.
"""

from __future__ import annotations

import contextlib

import importlib
import os
import zlib

import numpy as np
import pytest

_INT64_SIGN = 2**63
_UINT64_WRAP = 2**64


def require_torch():
    """Return the ``torch`` module, or skip (fail under ``CI=true``) without it."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the machine
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but PyTorch, the test oracle, is missing: {exc}")
        pytest.skip("PyTorch (the test oracle) is not installed")
    return torch


def torch_signed(value):
    """Undo PyTorch's unsigned read-back of saved negative ints.

    PyTorch's ``_saved_*`` getters return ``dim=-1`` as 18446744073709551615;
    opgrad keeps the sign (design §1). Tuples are converted element-wise.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value >= _INT64_SIGN:
        return value - _UINT64_WRAP
    if isinstance(value, tuple):
        return tuple(torch_signed(v) for v in value)
    return value


def dtype_name(dtype) -> str:
    """``torch.float32`` / ``opgrad.float32`` -> ``'float32'``."""
    return str(dtype).rsplit(".", 1)[-1]


def to_opgrad_text(text: str) -> str:
    """PyTorch's text as opgrad prints it (``torch.Size`` -> ``opgrad.Size``)."""
    return text.replace("torch.", "opgrad.")


def is_tensor(lib, value) -> bool:
    return isinstance(value, lib.Tensor)


def as_numpy(tensor) -> np.ndarray:
    """A tensor's values as a numpy array, whatever its requires_grad."""
    tensor = tensor.detach()
    try:
        return np.asarray(tensor.numpy())
    except RuntimeError:
        # torch returns some all-zero gradients as ZeroTensors, which numpy()
        # only converts when forced.
        return np.asarray(tensor.numpy(force=True))


#: while set (``up_to_sign``), float values are compared by magnitude only
_COMPARE_MAGNITUDES = []


@contextlib.contextmanager
def up_to_sign():
    """Compare float values up to sign within this block: for singular vectors, which each
    LAPACK build may return negated (torch's MKL and numpy's OpenBLAS differ), together with
    what is computed from them (saved U and Vh, their tangents)."""
    _COMPARE_MAGNITUDES.append(True)
    try:
        yield
    finally:
        _COMPARE_MAGNITUDES.pop()


_TOLERANCES = []


@contextlib.contextmanager
def within(rtol: float, atol: float):
    """Compare float values to ``rtol``/``atol`` within this block: for functions whose
    torch kernels are less accurate than the library opgrad computes them with."""
    _TOLERANCES.append((rtol, atol))
    try:
        yield
    finally:
        _TOLERANCES.pop()


def assert_same_tensor(got, expected, *, rtol=None, atol=None, what="tensor"):
    """``got`` (opgrad) equals ``expected`` (torch): shape, dtype and values (to 1e-7
    relative and 1e-10 absolute unless told, or within a ``within`` block)."""
    default_rtol, default_atol = _TOLERANCES[-1] if _TOLERANCES else (1e-7, 1e-10)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    assert tuple(got.shape) == tuple(
        expected.shape
    ), f"{what}: shape {tuple(got.shape)} != torch's {tuple(expected.shape)}"
    assert dtype_name(got.dtype) == dtype_name(
        expected.dtype
    ), f"{what}: dtype {got.dtype} != torch's {expected.dtype}"
    got_np, exp_np = as_numpy(got), as_numpy(expected)
    if _COMPARE_MAGNITUDES and exp_np.dtype.kind == "f":
        got_np, exp_np = np.abs(got_np), np.abs(exp_np)
    if exp_np.dtype.kind in "fc":
        np.testing.assert_allclose(got_np, exp_np, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(got_np, exp_np, err_msg=what)


def outcome_on_data(call, lib, data, dtype: str):
    """``('ok', call(lib, lib.tensor(data, dtype)))`` or the exception's type and normalised
    text (numpy's floating-point warnings silenced: they are no part of the comparison)."""
    try:
        with np.errstate(all="ignore"):
            return "ok", call(lib, lib.tensor(data, dtype=getattr(lib, dtype)))
    except Exception as exc:  # noqa: BLE001 - compared by type and text
        return type(exc).__name__, message(exc)


def assert_close_values(got, expected, rtol, atol, what, signed_zeros=False):
    """opgrad's tensor ``got`` has torch's dtype, shape and values: integers exactly, floats
    to rtol/atol with NaN and infinities in the same places (and signed zeros, if asked)."""
    assert dtype_name(got.dtype) == dtype_name(expected.dtype), what
    assert tuple(got.shape) == tuple(expected.shape), what
    e = expected.detach().numpy()
    g = np.asarray(got.detach().tolist(), dtype=e.dtype).reshape(e.shape)
    if e.dtype.kind != "f":
        np.testing.assert_array_equal(g, e, err_msg=what)
        return
    ef, gf = e.astype(np.float64), g.astype(np.float64)
    assert (np.isnan(ef) == np.isnan(gf)).all(), (what, ef, gf)
    inf = np.isinf(ef)
    assert (inf == np.isinf(gf)).all() and (ef[inf] == gf[inf]).all(), (what, ef, gf)
    np.testing.assert_allclose(gf, ef, rtol=rtol, atol=atol, err_msg=what)
    if signed_zeros:
        zero = ef == 0
        assert (np.signbit(ef[zero]) == np.signbit(gf[zero])).all(), f"{what}: signed zeros"


def rng_for(*key) -> np.random.Generator:
    """A numpy generator seeded from a readable key (stable across runs)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def saved_attribute_names(grad_fn) -> set:
    """Every ``_saved_*`` and ``_raw_saved_*`` name that ``dir(grad_fn)`` lists."""
    return {n for n in dir(grad_fn) if n.startswith(("_saved_", "_raw_saved_"))}


def node_type_name(node):
    """The class name of a graph node (``'MulBackward0'``), None for None."""
    return None if node is None else type(node).__name__


def next_function_names(grad_fn):
    """``grad_fn.next_functions`` with nodes replaced by their class names."""
    return [(node_type_name(node), nr) for node, nr in grad_fn.next_functions]


def grad_fn_chain(grad_fn) -> list:
    """The class names of every node reachable from ``grad_fn``, breadth first (a node
    reached twice is listed twice)."""
    names, todo = [], [grad_fn]
    while todo:
        node = todo.pop(0)
        if node is None:
            continue
        names.append(type(node).__name__)
        todo += [f for f, _ in node.next_functions]
    return names


def dispatch_module(lib):
    """``lib.utils._python_dispatch`` (imported explicitly: torch loads it lazily)."""
    return importlib.import_module(lib.__name__ + ".utils._python_dispatch")


def logging_mode_class(lib):
    """A TorchDispatchMode subclass for ``lib`` that records ``str(func)``."""
    base = dispatch_module(lib).TorchDispatchMode

    class LoggingMode(base):
        def __init__(self):
            super().__init__()
            self.log = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.log.append(str(func))
            return func(*args, **(kwargs or {}))

    return LoggingMode


def aten_log(lib, fn):
    """The aten ops a LoggingMode sees while ``fn()`` runs."""
    with logging_mode_class(lib)() as mode:
        fn()
    return mode.log


# ---- comparing one scenario run by opgrad and by torch ------------------------------


def vals(t):
    """A tensor's values as nested lists (None stays None)."""
    return None if t is None else t.detach().tolist()


def message(exc):
    """An exception's text with the library name normalised."""
    return str(exc).replace("torch", "LIB").replace("opgrad", "LIB")


def outcome(fn):
    """``('ok', result)`` or ``(exception type name, normalised message)``."""
    try:
        return ("ok", fn())
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return (type(exc).__name__, message(exc))


def result_scenario(fn):
    """``assert_same``'s scenario for ``fn(lib, lib.tensor)``: its result's values, dtype
    and shape, or its exception type and text."""

    def scenario(lib):
        kind, value = outcome(lambda: fn(lib, lib.tensor))
        if kind == "ok":
            return kind, value.tolist(), dtype_name(value.dtype), tuple(value.shape)
        return kind, value

    return scenario


def outcome_and_aten_log(lib, call, describe):
    """``('ok', describe(call(lib)))`` or the exception's type and normalised text, with the
    aten calls a dispatch mode saw meanwhile."""
    with logging_mode_class(lib)() as mode:
        try:
            result = ("ok", describe(call(lib)))
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            result = (type(exc).__name__, message(exc))
    return result, mode.log


def assert_same(torch, scenario):
    """Run ``scenario(lib)`` with both libraries; the results must be equal."""
    expected = scenario(torch)
    import opgrad as og

    got = scenario(og)
    assert got == expected


def assert_same_error(torch, scenario, exc_type, phrase):
    """Both libraries raise ``exc_type`` with the same text, which contains ``phrase``."""
    expected = outcome(lambda: scenario(torch))
    assert expected[0] == exc_type.__name__ and phrase in expected[1], expected
    import opgrad as og

    assert outcome(lambda: scenario(og)) == expected


def reset_global_modes(torch) -> None:
    """Grad mode on and anomaly mode off in both libraries (a leaked mode must not fail
    the tests after the one that leaked it)."""
    import opgrad as og

    for switch in (og.set_grad_enabled, torch.set_grad_enabled):
        try:
            switch(True)
        except Exception:  # noqa: BLE001 - a broken switch fails its own tests
            pass
    for lib in (og, torch):
        try:
            lib.autograd.set_detect_anomaly(False)
        except Exception:  # noqa: BLE001 - a broken switch fails its own tests
            pass


# ---- grad_fn saved fields -----------------------------------------------------------


def _identity_index(value, inputs):
    """Index of the input that ``value`` *is*, or None."""
    for i, t in enumerate(inputs):
        if value is t:
            return i
    return None


def assert_same_saved_fields(
    torch, got_fn, expected_fn, got_inputs=(), expected_inputs=(), *, what, uninitialised=()
):
    """opgrad's node ``got_fn`` has torch's ``_saved_*`` / ``_raw_saved_*`` names, the same
    saved values (tensors: values, dtype, requires_grad and which input they are), and
    ``SavedTensor`` wrappers where torch has them. Saved tensors named in
    ``uninitialised`` (torch.empty_like memory that torch never writes) are compared by
    shape and dtype only."""
    import opgrad as og

    names = saved_attribute_names(expected_fn)
    assert saved_attribute_names(got_fn) == names, f"{what}: saved attribute names"
    for name in sorted(names):
        where = f"{what}.{name}"
        g, e = getattr(got_fn, name), getattr(expected_fn, name)
        if name in uninitialised:
            assert tuple(g.shape) == tuple(e.shape), f"{where}: shape"
            assert dtype_name(g.dtype) == dtype_name(e.dtype), f"{where}: dtype"
            continue
        if name.startswith("_raw_saved_"):
            # SavedTensor wrappers (one per element of a saved list)
            got_types = [type(r).__name__ for r in (g if isinstance(g, tuple) else (g,))]
            expected_types = [type(r).__name__ for r in (e if isinstance(e, tuple) else (e,))]
            assert got_types == expected_types, f"{where}: {got_types} != {expected_types}"
        elif isinstance(e, tuple) and any(is_tensor(torch, item) for item in e):
            # a saved Tensor[] / Tensor?[]: compare element by element
            assert isinstance(g, tuple) and len(g) == len(e), f"{where}: {g!r}"
            for g_item, e_item in zip(g, e):
                if e_item is None:
                    assert g_item is None, f"{where}: expected None"
                else:
                    assert_same_tensor(g_item, e_item, what=where)
        elif e is None:
            assert g is None, f"{where}: expected None, got {g!r}"
        elif is_tensor(torch, e):
            assert is_tensor(og, g), f"{where}: expected a Tensor, got {type(g).__name__}"
            assert_same_tensor(g, e, what=where)
            assert g.requires_grad == e.requires_grad, f"{where}: requires_grad"
            assert _identity_index(g, got_inputs) == _identity_index(
                e, expected_inputs
            ), f"{where}: identity with the inputs differs from torch"
        else:
            e = torch_signed(e)
            assert type(g) is type(e), f"{where}: {type(g).__name__} != {type(e).__name__}"
            assert g == e, f"{where}: {g!r} != torch's {e!r}"


def torch_draws_bernoulli_from_mkl() -> bool:
    """Whether torch's bernoulli_(float p) takes its MKL path (Intel CPU, MKL build)."""
    import torch

    if not torch.backends.mkl.is_available():
        return False
    try:
        with open("/proc/cpuinfo") as info:
            return "GenuineIntel" in info.read()
    except OSError:
        return True  # unknown vendor: do not claim a match
