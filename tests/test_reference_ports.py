"""Small ports of reference tests that tests/README.md listed as "not yet".

Each test follows one test of PyTorch's test_autograd.py (TestAutograd), named in its
docstring, and runs the scenario with ``lib = opgrad`` and ``lib = torch``, comparing plain
Python results (lists of floats, error type and text). Values are fixed, not random, so both
libraries see the same numbers.
"""

import warnings

import opgrad as og
from torch_oracle import assert_same, outcome, vals


def test_unrelated_inputs_pass_gradcheck_and_gradgradcheck(torch):
    """test_unrelated_inputs: an input the function never uses is still a valid input."""

    def scenario(lib):
        x = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([1.0, 0.25, -0.75], dtype=lib.float64, requires_grad=True)

        def my_function(a, b):
            return a * a

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return (
                lib.autograd.gradcheck(my_function, (x, y)),
                lib.autograd.gradgradcheck(my_function, (x, y)),
            )

    assert_same(torch, scenario)


def test_nextafter_backward_as_torch(torch):
    """test_not_implemented_grad: the reference expects nextafter's backward to raise
    NotImplementedError, but torch 2.13 differentiates nextafter; torch 2.13 wins, so this
    compares the outcome (the NotImplementedError itself is compared for acosh_ and friends in
    test_unary_math.py::test_inplace_inverse_hyperbolics_are_not_differentiated_as_in_torch)."""

    def scenario(lib):
        a = lib.tensor([0.5, 1.5], requires_grad=True)
        b = lib.tensor([1.0, -2.0], requires_grad=True)
        lib.nextafter(a, b).sum().backward()
        return vals(a.grad), vals(b.grad)

    assert outcome(lambda: scenario(og)) == outcome(lambda: scenario(torch))


def test_accumulate_grad_with_zero_numel_grad(torch):
    """test_accumulate_grad_with_zero_numel_grad: a (4, 0) leaf broadcast with a (4, 1) one."""

    def scenario(lib):
        a = lib.ones(4, 0, requires_grad=True)
        b = lib.full((4, 1), 0.5, requires_grad=True)
        c = a + b
        c.sum().backward()
        return tuple(c.shape), vals(a.grad), tuple(a.grad.shape), vals(b.grad)

    assert_same(torch, scenario)


def _grad_of(lib, view_fn, make_v):
    a = lib.arange(1000, dtype=lib.float64).reshape(10, 10, 10).requires_grad_()
    (result,) = lib.autograd.grad(view_fn(a), a, make_v(lib))
    return vals(result)


def test_select_expanded_v(torch):
    """test_select_expanded_v: backward of a select fed a stride-0 grad_output."""

    def scenario(lib):
        return _grad_of(lib, lambda a: a[0], lambda L: L.arange(10, dtype=L.float64).expand(10, 10))

    assert_same(torch, scenario)


def test_slice_expanded_v(torch):
    """test_slice_expanded_v: backward of a slice fed a stride-0 grad_output."""

    def scenario(lib):
        return _grad_of(
            lib,
            lambda a: a[3:5],
            lambda L: L.arange(10, dtype=L.float64).reshape(10, 1).expand(2, 10, 10),
        )

    assert_same(torch, scenario)


def test_diagonal_expanded_v(torch):
    """test_diagonal_expanded_v: backward of diagonal fed a 0-dim value expanded to (10,)."""

    def scenario(lib):
        a = lib.arange(100, dtype=lib.float64).reshape(10, 10).requires_grad_()
        v = lib.tensor(0.75, dtype=lib.float64).expand(10)
        (result,) = lib.autograd.grad(a.diagonal(), a, v)
        return vals(result)

    assert_same(torch, scenario)


def test_grad_fn_prehook_on_a_multi_output_node(torch):
    """test_grad_fn_prehooks_multiple_outputs: a prehook on var_mean's node sees and
    replaces both grad_outputs, once."""

    def scenario(lib):
        a = lib.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0], [2.0, 0.0, -2.0]], requires_grad=True)
        counter = [0]

        def prehook(grad_output):
            gvar, gmean = grad_output
            counter[0] += 1
            return (gvar * 2, gmean * 2)

        var, mean = lib.var_mean(a, dim=0)
        mean.grad_fn.register_prehook(prehook)
        (var + mean).sum().backward()
        return counter[0], vals(a.grad)

    assert_same(torch, scenario)
