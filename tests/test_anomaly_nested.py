"""Anomaly mode's reports against torch (issue 16 point 4), from the reference tests
test_nested_anomaly_detect_nan and test_anomaly_grad_warnings: a node made while another
node's backward ran (create_graph) remembers it, and an error in it warns with its own
forward traceback, then with each inducing node's ("Previous calculation was induced by
..."); when warnings are errors, the reports go to stderr and the backward's own error
still propagates."""

from __future__ import annotations

import io
import sys
import warnings

import pytest

SIZE = 10


def _functions(lib):
    class MyFunc(lib.autograd.Function):
        @staticmethod
        def forward(ctx, inp1, fail_0th):
            ctx.fail_0th = fail_0th
            ctx.save_for_backward(inp1)
            return inp1.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, gO):
            (inp,) = ctx.saved_tensors
            g = gO.clone().expand(SIZE)
            return MyFunc2.apply(g * inp, g + inp, ctx.fail_0th), None

    class MyFunc2(lib.autograd.Function):
        @staticmethod
        def forward(ctx, inp1, inp2, fail_0th):
            ctx.fail_0th = fail_0th
            return inp1 * 2.0 + inp2

        @staticmethod
        def backward(ctx, gO):
            g1, g2 = gO.clone(), gO.clone()
            g1[0] = 0
            g2[0] = 0
            if ctx.fail_0th:
                g1[0] /= 0
            else:
                g2[0] /= 0
            return g1, g2, None

    return MyFunc, MyFunc2


def _nested(lib, anomaly_in_forward: bool):
    MyFunc, _ = _functions(lib)
    inp = lib.rand(SIZE, requires_grad=True)
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if anomaly_in_forward:
                with lib.autograd.detect_anomaly():
                    out = MyFunc.apply(inp, False)
                    (ginp,) = lib.autograd.grad(out, (inp,), create_graph=True)
                    ginp.sum().backward()
            else:
                out = MyFunc.apply(inp, True)
                (ginp,) = lib.autograd.grad(out, (inp,), create_graph=True)
                gsum = ginp.sum()
                with lib.autograd.detect_anomaly():
                    gsum.backward()
        except RuntimeError as exc:
            error = str(exc)
    # numpy's own warning for 0 / 0 in the backward: opgrad filters numpy's floating-point
    # warnings out of its modules at import, and simplefilter("always") above resets that
    # filter (torch has no such warning): not anomaly mode's business
    messages = [str(w.message) for w in caught if "encountered in" not in str(w.message)]
    return error, len(messages), messages


@pytest.mark.parametrize("anomaly_in_forward", [False, True])
def test_nested_reports_match_torch(torch, anomaly_in_forward):
    import opgrad as og

    got, expected = _nested(og, anomaly_in_forward), _nested(torch, anomaly_in_forward)
    assert got[0] == expected[0]
    assert got[1] == expected[1]
    if anomaly_in_forward:
        # the frames differ (torch's list its own files too); what they show must agree
        for index, phrase in ((1, "MyFunc2.apply"), (2, "MyFunc.apply")):
            assert phrase in got[2][index] and phrase in expected[2][index]
        prefix = "\n\nPrevious calculation was induced by MyFuncBackward. Traceback of forward"
        assert got[2][2].startswith(prefix) and expected[2][2].startswith(prefix)
    else:
        assert "No forward pass information" in got[2][1]
        assert got[2][1] == expected[2][1].split(" (Triggered internally")[0]


def _inplace_error(lib, warnings_as_errors: bool):
    class Diverted:
        def __enter__(self):
            self.saved, sys.stderr = sys.stderr, io.StringIO()
            return self

        def __exit__(self, *exc):
            self.captured = sys.stderr.getvalue()
            sys.stderr = self.saved

    error = None
    with warnings.catch_warnings(record=True) as caught:
        with lib.autograd.detect_anomaly():
            warnings.simplefilter("error" if warnings_as_errors else "always")
            with Diverted() as diverted:
                try:
                    a = lib.randn(5, requires_grad=True)
                    d1 = a + 1
                    d2 = d1**2
                    d1 += 1
                    lib.autograd.grad(d2.sum(), a)
                except RuntimeError as exc:
                    error = str(exc).split(":")[0]
    messages = [str(w.message).split(".")[0] for w in caught]
    return error, messages, "Error detected in PowBackward0" in diverted.captured


@pytest.mark.parametrize("warnings_as_errors", [False, True])
def test_reports_while_an_error_propagates(torch, warnings_as_errors):
    import opgrad as og

    assert _inplace_error(og, warnings_as_errors) == _inplace_error(torch, warnings_as_errors)
