"""Anomaly mode: detect_anomaly / set_detect_anomaly, NaN checks and forward tracebacks,
against PyTorch.

Follows these tests of PyTorch's test_autograd.py (TestAutograd): test_anomaly_detect_nan,
test_nested_anomaly_detect_nan (its "No forward pass information" half),
test_anomaly_grad_warnings, test_anomaly_mode_no_check_nan and
test_anomaly_assign_parent_cleanup (the recorded traceback lives in ``grad_fn.metadata``).
opgrad has no ``autograd.Function`` yet, so the NaN-producing backward is ``sqrt`` at 0 fed
a zero gradient (0 * inf), ``inf * 0`` inside ``MulBackward0``, or a tensor hook returning NaN.

PyTorch reports the forward traceback as a UserWarning ("Error detected in <Node>. Traceback of
forward call that caused the error: ...") emitted just before the RuntimeError; the tests
compare the frames of this file that the warning names, not PyTorch's "(Triggered internally
at ...)" suffix. Every test runs one scenario with ``lib = opgrad`` and ``lib = torch``.
"""

import inspect
import os
import re
import warnings

import pytest

import opgrad as og
from torch_oracle import vals, message, outcome, assert_same

# ---------------------------------------------------------------------------
# Helpers

THIS_FILE = os.path.basename(__file__)
FRAME = re.compile(r'File "([^"]*)", line (\d+), in (\S+)')


# grad mode on and anomaly mode off around every test, in both libraries
pytestmark = pytest.mark.usefixtures("fresh_global_modes")


def recorded(fn):
    """Run ``fn``; return its outcome and the warnings it raised.

    numpy's floating-point RuntimeWarnings (0 / 0 ...) are left out: they are not part of
    anomaly mode's contract.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = outcome(fn)
    return result, [w for w in caught if not issubclass(w.category, RuntimeWarning)]


def headline(warning):
    """A warning's category and first sentence, without PyTorch's C++ location suffix."""
    text = str(warning.message).split(" (Triggered internally at")[0]
    return warning.category.__name__, message(text.split(". ")[0])


def frames_in_this_file(text):
    """``(line, function)`` of every frame of this test file named in a traceback text."""
    return [
        (int(line), func)
        for path, line, func in FRAME.findall(text)
        if os.path.basename(path) == THIS_FILE
    ]


def nan_from_sqrt(lib):
    """sqrt at 0 fed a zero gradient: SqrtBackward0 computes 0 / (2 * 0) = nan."""
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt()
    (y * 0).sum().backward()
    return vals(x.grad)


# ---------------------------------------------------------------------------
# Switching the mode


def test_anomaly_mode_is_off_by_default_and_checks_nan_by_default(torch):
    assert_same(torch, lambda lib: (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))


def test_detect_anomaly_enables_the_mode_only_inside(torch):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                inside = (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
            with lib.autograd.detect_anomaly(check_nan=False):
                no_nan = (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
        return inside, no_nan, lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()

    assert_same(torch, scenario)


def test_detect_anomaly_warns_that_it_slows_things_down(torch):
    def scenario(lib):
        def enter():
            with lib.autograd.detect_anomaly():
                pass

        result, caught = recorded(enter)
        return result, [(w.category.__name__, str(w.message)) for w in caught]

    assert_same(torch, scenario)


def test_set_detect_anomaly_called_as_a_function_changes_the_mode(torch):
    def scenario(lib):
        lib.autograd.set_detect_anomaly(True, check_nan=False)
        on = (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
        lib.autograd.set_detect_anomaly(False)
        return on, (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())

    assert_same(torch, scenario)


def test_set_detect_anomaly_as_a_context_manager_restores_the_mode(torch):
    def scenario(lib):
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            inside = (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
        return inside, (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())

    assert_same(torch, scenario)


def test_anomaly_mode_signatures_match_torch(torch):
    def scenario(lib):
        return [
            [(p.name, p.default) for p in inspect.signature(f).parameters.values()]
            for f in (lib.autograd.detect_anomaly, lib.autograd.set_detect_anomaly)
        ]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# NaN checks


def test_without_anomaly_mode_nan_gradients_pass_silently(torch):
    assert_same(torch, nan_from_sqrt_as_text)


def nan_from_sqrt_as_text(lib):
    return [str(v) for v in nan_from_sqrt(lib)]


def test_nan_in_a_backward_output_raises_naming_the_node(torch):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                return outcome(lambda: nan_from_sqrt(lib))

    expected = scenario(torch)
    assert expected == (
        "RuntimeError",
        "Function 'SqrtBackward0' returned nan values in its 0th output.",
    )
    assert scenario(og) == expected


def test_nan_in_a_second_gradient_names_its_index(torch):
    def scenario(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([float("inf"), 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                c = b * a  # the gradient for a is 0 * inf
                return outcome(lambda: (c * 0).sum().backward())

    assert_same(torch, scenario)


def test_nan_returned_by_a_tensor_hook_is_caught_in_the_next_node(torch):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                a = lib.tensor([1.0, 2.0], requires_grad=True)
                b = lib.tensor([3.0, 4.0], requires_grad=True)
                c = a * b
                c.register_hook(lambda g: g * float("nan"))
                return outcome(lambda: c.sum().backward())

    assert_same(torch, scenario)


def test_check_nan_false_lets_nan_gradients_through(torch):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly(check_nan=False):
                return outcome(lambda: [str(v) for v in nan_from_sqrt(lib)])

    assert_same(torch, scenario)


def test_inner_check_nan_overrides_the_outer_setting_and_is_undone_on_exit(torch):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly(check_nan=False):
                first = outcome(lambda: nan_from_sqrt(lib))[0]
                with lib.autograd.detect_anomaly(check_nan=True):
                    inner = outcome(lambda: nan_from_sqrt(lib))
                last = outcome(lambda: nan_from_sqrt(lib))[0]
        return first, inner, last

    assert_same(torch, scenario)


def test_anomaly_mode_leaves_finite_gradients_unchanged(torch):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                x = lib.tensor([1.0, 4.0], dtype=lib.float64, requires_grad=True)
                (x.sqrt() * x.exp()).sum().backward()
        return [round(v, 9) for v in vals(x.grad)]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# The forward traceback


def test_nan_error_is_preceded_by_a_warning_with_the_forward_traceback(torch):
    def scenario(lib):
        def run():
            with lib.autograd.detect_anomaly():
                x = lib.tensor([0.0, 1.0], requires_grad=True)
                y = x.sqrt()  # the forward call the warning must point at
                (y * 0).sum().backward()

        result, caught = recorded(run)
        headlines = [headline(w) for w in caught]
        error_warnings = [w for w in caught if "Error detected in" in str(w.message)]
        text = str(error_warnings[0].message) if error_warnings else ""
        return (
            result,
            headlines,
            "Traceback of forward call that caused the error:" in text,
            frames_in_this_file(text)[-1:],
            "y = x.sqrt()" in text,
        )

    expected = scenario(torch)
    assert expected[0][0] == "RuntimeError" and expected[2] and expected[4], expected
    assert scenario(og) == expected


def test_forward_made_outside_anomaly_mode_has_no_traceback_to_show(torch):
    def scenario(lib):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        y = x.sqrt()

        def run():
            with lib.autograd.detect_anomaly():
                (y * 0).sum().backward()

        result, caught = recorded(run)
        return result, [
            str(w.message).split(" (Triggered internally at")[0]
            for w in caught
            if "Error detected in" in str(w.message)
        ]

    expected = scenario(torch)
    assert "No forward pass information available." in expected[1][0]
    assert scenario(og) == expected


def test_anomaly_mode_records_the_forward_traceback_in_node_metadata(torch):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                x = lib.tensor([0.0, 1.0], requires_grad=True)
                y = x.sqrt()  # recorded
        stack = y.grad_fn.metadata["traceback_"]
        last = stack[-1]
        return (
            type(stack).__name__,
            type(last).__name__,
            frames_in_this_file(last),
            "y = x.sqrt()" in last,
        )

    assert_same(torch, scenario)


def test_no_traceback_is_recorded_outside_anomaly_mode(torch):
    def scenario(lib):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        return "traceback_" in x.sqrt().grad_fn.metadata

    assert_same(torch, scenario)


def test_version_error_in_anomaly_mode_names_the_node_and_changes_the_hint(torch):
    def scenario(lib):
        def run():
            with lib.autograd.detect_anomaly():
                a = lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
                d1 = a + 1
                d2 = d1**2
                d1 += 1
                lib.autograd.grad(d2.sum(), a)

        result, caught = recorded(run)
        return result, [headline(w) for w in caught]

    expected = scenario(torch)
    assert expected[0][1].endswith(
        "The variable in question was changed in there or anywhere later. Good luck!"
    )
    assert expected[1][-1] == ("UserWarning", "Error detected in PowBackward0")
    assert scenario(og) == expected
