"""opgrad.autograd.functional against torch.autograd.functional.

The reference test_autograd.py has no tests of these functions (PyTorch keeps them in
test/autograd/test_functional.py), so the scenarios here are systematic: every function
(vjp, jvp, jacobian, hessian, vhp, hvp) on functions taking and returning a single
tensor or a tuple, with and without create_graph, strict and vectorize, both jacobian
strategies, and every error PyTorch raises. Each scenario runs with ``lib = opgrad`` and
``lib = torch``; results are compared as plain Python: the nesting (tuple or list, its
length), and per tensor its shape, dtype, values, requires_grad and grad_fn name.
"""

import pytest

from torch_oracle import assert_same, assert_same_error, outcome

pytestmark = pytest.mark.usefixtures("fresh_global_modes")


def describe(result, digits=8, history=True):
    """A nested result as plain Python, comparable across the two libraries; without
    ``history``, only shape, dtype and values; with ``history="requires_grad"``, not the
    grad_fn's name (torch's vmapped forward-mode reshapes end in ReshapeAliasBackward0, a
    node of vmap's batching rules, which opgrad does not have)."""
    if isinstance(result, (tuple, list)):
        return (type(result).__name__, [describe(r, digits, history) for r in result])
    if result is None:
        return None
    values = [round(v, digits) + 0.0 for v in result.detach().reshape(-1).tolist()]
    plain = (tuple(result.shape), str(result.dtype).rsplit(".", 1)[-1], values)
    if not history:
        return plain
    if history == "requires_grad":
        return plain + (result.requires_grad,)
    node = type(result.grad_fn).__name__ if result.grad_fn is not None else None
    return plain + (result.requires_grad, node)


def F(lib):
    return lib.autograd.functional


def point(lib, *shapes, requires_grad=False):
    """Fixed float64 inputs of the given shapes (the same numbers in both libraries)."""
    tensors = []
    for k, shape in enumerate(shapes):
        n = 1
        for s in shape:
            n *= s
        values = [0.3 * ((i * 7 + 3 * k) % 11) - 1.4 for i in range(n)]
        tensors.append(
            lib.tensor(values, dtype=lib.float64).reshape(shape).requires_grad_(requires_grad)
        )
    return tensors


# Functions of tensors, written once for both libraries.
def exp_reducer(x):
    return x.exp().sum(dim=1)


def pair_to_pair(x, y):
    return (x.exp() * 2 + y.sum(), (x.sin() * y[0]).sum())


def single_to_pair(x):
    return (x.sin(), x.cos().sum())


def pair_to_single(x, y):
    return (x * y.sum()).tanh()


def unused_second(x, y):
    return x.exp()


def linear(x):
    return 2 * x


# Vector-valued scenarios: (function, input shapes, inputs as tuple?)
VECTOR_CASES = {
    "single->single": (exp_reducer, [(2, 3)], False),
    "pair->pair": (pair_to_pair, [(3,), (2,)], True),
    "single->pair": (single_to_pair, [(2, 2)], False),
    "pair->single": (pair_to_single, [(2,), (3,)], True),
    "unused input": (unused_second, [(3,), (2,)], True),
    "linear": (linear, [(3,)], False),
    "1-tuple->single": (exp_reducer, [(2, 2)], True),
}


def scalar_pow(x):
    return x.pow(3).sum()


def scalar_pair(x, y):
    return (x.pow(2) * y.sum() + y.exp().sum()).sum()


def scalar_unused(x, y):
    return x.pow(3).sum()


def scalar_linear(x):
    return (3 * x).sum()


def scalar_quadratic(x):
    return (x * x).sum()


SCALAR_CASES = {
    "pow3": (scalar_pow, [(2, 2)], False),
    "pair": (scalar_pair, [(3,), (2,)], True),
    "unused input": (scalar_unused, [(2,), (3,)], True),
    "linear": (scalar_linear, [(3,)], False),
    "quadratic": (scalar_quadratic, [(3,)], False),
    "1-tuple": (scalar_pow, [(3,)], True),
}


def args_of(lib, shapes, as_tuple, requires_grad=False):
    tensors = point(lib, *shapes, requires_grad=requires_grad)
    return tuple(tensors) if as_tuple else tensors[0]


def ones_like_all(lib, shapes_or_tensors, as_tuple):
    vs = tuple(lib.ones(s, dtype=lib.float64) * 0.5 for s in shapes_or_tensors)
    return vs if as_tuple else vs[0]


def output_shapes(lib, fn, shapes, as_tuple):
    out = fn(*point(lib, *shapes))
    outs = out if isinstance(out, tuple) else (out,)
    return [tuple(o.shape) for o in outs], isinstance(out, tuple)


def product_scenario(name, case, create_graph, strict, requires_grad):
    """vjp/jvp/vhp/hvp: (output, product) described, or the error."""
    fn, shapes, as_tuple = case

    def scenario(lib):
        inputs = args_of(lib, shapes, as_tuple, requires_grad)
        if name == "vjp":
            out_shapes, out_tuple = output_shapes(lib, fn, shapes, as_tuple)
            v = ones_like_all(lib, out_shapes, out_tuple)
        else:
            v = ones_like_all(lib, shapes, as_tuple)
        return outcome(
            lambda: describe(
                getattr(F(lib), name)(fn, inputs, v, create_graph=create_graph, strict=strict)
            )
        )

    return scenario


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", sorted(VECTOR_CASES))
@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_vjp_jvp(torch, name, case, create_graph, strict, requires_grad):
    assert_same(
        torch, product_scenario(name, VECTOR_CASES[case], create_graph, strict, requires_grad)
    )


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", sorted(SCALAR_CASES))
@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_vhp_hvp(torch, name, case, create_graph, strict, requires_grad):
    assert_same(
        torch, product_scenario(name, SCALAR_CASES[case], create_graph, strict, requires_grad)
    )


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", sorted(VECTOR_CASES))
def test_jacobian_reverse_mode(torch, case, create_graph, strict, vectorize, requires_grad):
    fn, shapes, as_tuple = VECTOR_CASES[case]

    def scenario(lib):
        inputs = args_of(lib, shapes, as_tuple, requires_grad)
        return outcome(
            lambda: describe(
                F(lib).jacobian(
                    fn, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize
                )
            )
        )

    assert_same(torch, scenario)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("case", sorted(VECTOR_CASES))
def test_jacobian_forward_mode(torch, case, requires_grad):
    """Values, dtypes, history and nesting (a list of lists for tuple -> tuple, as PyTorch)."""
    fn, shapes, as_tuple = VECTOR_CASES[case]

    def scenario(lib):
        inputs = args_of(lib, shapes, as_tuple, requires_grad)
        result = F(lib).jacobian(fn, inputs, vectorize=True, strategy="forward-mode")
        return describe(result, history="requires_grad")

    assert_same(torch, scenario)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", sorted(SCALAR_CASES))
def test_hessian_reverse_mode(torch, case, create_graph, strict, vectorize, requires_grad):
    fn, shapes, as_tuple = SCALAR_CASES[case]

    def scenario(lib):
        inputs = args_of(lib, shapes, as_tuple, requires_grad)
        return outcome(
            lambda: describe(
                F(lib).hessian(
                    fn, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize
                )
            )
        )

    assert_same(torch, scenario)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("case", sorted(SCALAR_CASES))
def test_hessian_forward_over_reverse(torch, case, requires_grad):
    fn, shapes, as_tuple = SCALAR_CASES[case]

    def scenario(lib):
        inputs = args_of(lib, shapes, as_tuple, requires_grad)
        result = F(lib).hessian(fn, inputs, vectorize=True, outer_jacobian_strategy="forward-mode")
        return describe(result, history="requires_grad")

    assert_same(torch, scenario)


# ---- create_graph: the results are differentiable functions of the inputs ----------------


@pytest.mark.parametrize(
    "call",
    [
        lambda F, lib, x: F.jacobian(exp_reducer, x, create_graph=True),
        lambda F, lib, x: F.jacobian(exp_reducer, x, create_graph=True, vectorize=True),
        lambda F, lib, x: F.hessian(lambda a: a.pow(3).sum(), x, create_graph=True),
        lambda F, lib, x: F.vjp(exp_reducer, x, lib.ones(2, dtype=lib.float64), True)[1],
        lambda F, lib, x: F.jvp(exp_reducer, x, lib.ones(2, 3, dtype=lib.float64), True)[1],
        lambda F, lib, x: F.vhp(scalar_pow, x, lib.ones(2, 3, dtype=lib.float64), True)[1],
        lambda F, lib, x: F.hvp(scalar_pow, x, lib.ones(2, 3, dtype=lib.float64), True)[1],
    ],
    ids=["jacobian", "jacobian-vectorize", "hessian", "vjp", "jvp", "vhp", "hvp"],
)
def test_create_graph_results_backpropagate_to_the_inputs(torch, call):
    def scenario(lib):
        (x,) = point(lib, (2, 3), requires_grad=True)
        result = call(F(lib), lib, x)
        (result * result).sum().backward()
        return [round(v, 8) for v in x.grad.reshape(-1).tolist()]

    assert_same(torch, scenario)


def test_without_create_graph_results_have_no_history_even_from_inputs_requiring_grad(torch):
    def scenario(lib):
        (x,) = point(lib, (3,), requires_grad=True)
        out, prod = F(lib).vjp(lambda a: a.exp(), x, lib.ones(3, dtype=lib.float64))
        return out.requires_grad, prod.requires_grad, out.grad_fn is None, x.grad is None

    assert_same(torch, scenario)


def test_inputs_are_new_tensors_so_a_captured_input_is_a_constant(torch):
    """pytorch#32576: the function also reads the input from its closure; only the argument
    counts as the input."""

    def scenario(lib):
        (x,) = point(lib, (3,))
        return describe(F(lib).jacobian(lambda a: a * x, x))

    assert_same(torch, scenario)


def test_grad_mode_off_outside_still_computes(torch):
    def scenario(lib):
        (x,) = point(lib, (3,))
        with lib.no_grad():
            res = F(lib).vjp(lambda a: a.exp(), x, lib.ones(3, dtype=lib.float64))
            jac = F(lib).jacobian(lambda a: a.exp(), x)
            hes = F(lib).hvp(scalar_pow, x, lib.ones(3, dtype=lib.float64), create_graph=True)
        return describe(res), describe(jac), describe(hes), lib.is_grad_enabled()

    assert_same(torch, scenario)


def test_v_may_be_omitted_for_one_element(torch):
    def scenario(lib):
        x = lib.tensor([0.7], dtype=lib.float64)
        return (
            describe(F(lib).vjp(lambda a: (a * 3).sum(), point(lib, (3,))[0])),
            describe(F(lib).jvp(lambda a: a.exp() * 2, x)),
            describe(F(lib).vhp(lambda a: a.pow(4).sum(), x)),
            describe(F(lib).hvp(lambda a: a.pow(4).sum(), x)),
        )

    assert_same(torch, scenario)


def test_jacobian_of_float32_function_keeps_dtypes(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0])
        y = lib.tensor([0.5], dtype=lib.float64)
        fn = lambda a, b: (a * 2, (a.sum() * b).exp())  # noqa: E731
        return (
            describe(F(lib).jacobian(fn, (x, y)), digits=5),
            describe(F(lib).jacobian(fn, (x, y), vectorize=True), digits=5),
            describe(
                F(lib).jacobian(fn, (x, y), vectorize=True, strategy="forward-mode"),
                digits=5,
                history=False,
            ),
        )

    assert_same(torch, scenario)


# ---- errors ------------------------------------------------------------------------------


def _x(lib):
    return point(lib, (3,))[0]


ERRORS = {
    "vjp: non-tensor input": (
        lambda lib: F(lib).vjp(lambda a: a, 3.0),
        TypeError,
        "The inputs given to vjp must be either a Tensor or a tuple of Tensors",
    ),
    "jacobian: non-tensor in input tuple": (
        lambda lib: F(lib).jacobian(lambda a, b: a, (_x(lib), 2)),
        TypeError,
        "but the value at index 1 has type",
    ),
    "jvp: non-tensor output": (
        lambda lib: F(lib).jvp(lambda a: 3, _x(lib), _x(lib)),
        TypeError,
        "The outputs of the user-provided function given to jvp",
    ),
    "hessian: list output": (
        lambda lib: F(lib).hessian(lambda a: [a.sum()], _x(lib)),
        TypeError,
        "The outputs of the user-provided function given to hessian",
    ),
    "vjp: v of wrong length": (
        lambda lib: F(lib).vjp(single_to_pair, _x(lib), (_x(lib),)),
        RuntimeError,
        "v is a tuple of invalid length: should be 2 but got 1.",
    ),
    "vjp: v a tuple for a single output": (
        lambda lib: F(lib).vjp(lambda a: a * 2, _x(lib), (_x(lib), _x(lib))),
        RuntimeError,
        "The given v should contain a single Tensor.",
    ),
    "jvp: v of wrong size": (
        lambda lib: F(lib).jvp(lambda a: a * 2, _x(lib), lib.ones(2, dtype=lib.float64)),
        RuntimeError,
        "v has invalid size: should be",
    ),
    "jvp: v of wrong size in a tuple": (
        lambda lib: F(lib).jvp(
            pair_to_single, (_x(lib), _x(lib)), (_x(lib), lib.ones(2, dtype=lib.float64))
        ),
        RuntimeError,
        "Entry 1 in v has invalid size",
    ),
    "vjp: v omitted for a vector output": (
        lambda lib: F(lib).vjp(lambda a: a * 2, _x(lib)),
        RuntimeError,
        "The vector v can only be None if the user-provided function returns",
    ),
    "jvp: v omitted for a vector input": (
        lambda lib: F(lib).jvp(lambda a: a * 2, _x(lib)),
        RuntimeError,
        "The vector v can only be None if the input to the user-provided function",
    ),
    "hvp: v omitted for a vector input": (
        lambda lib: F(lib).hvp(scalar_pow, _x(lib)),
        RuntimeError,
        "The vector v can only be None if the input to the user-provided function",
    ),
    "vhp: tuple output": (
        lambda lib: F(lib).vhp(lambda a: (a.sum(),), _x(lib), _x(lib)),
        RuntimeError,
        "The function given to vhp should return a single Tensor",
    ),
    "hvp: vector output": (
        lambda lib: F(lib).hvp(lambda a: a * 2, _x(lib), _x(lib)),
        RuntimeError,
        "The Tensor returned by the function given to hvp should contain a single element",
    ),
    "hessian: tuple output": (
        lambda lib: F(lib).hessian(lambda a: (a.pow(3).sum(),), _x(lib)),
        RuntimeError,
        "The function given to hessian should return a single Tensor",
    ),
    "hessian: vector output": (
        lambda lib: F(lib).hessian(lambda a: a.pow(3), _x(lib)),
        RuntimeError,
        "The Tensor returned by the function given to hessian should contain a single element",
    ),
    "jacobian: unknown strategy": (
        lambda lib: F(lib).jacobian(linear, _x(lib), strategy="sideways"),
        AssertionError,
        'Expected strategy to be either "forward-mode" or "reverse-mode". Hint',
    ),
    "hessian: unknown strategy": (
        lambda lib: F(lib).hessian(scalar_pow, _x(lib), outer_jacobian_strategy="x"),
        AssertionError,
        'Expected strategy to be either "forward-mode" or "reverse-mode".',
    ),
    "jacobian: forward-mode with create_graph": (
        lambda lib: F(lib).jacobian(
            linear, _x(lib), create_graph=True, vectorize=True, strategy="forward-mode"
        ),
        NotImplementedError,
        '`create_graph=True` and `strategy="forward-mode"` are not supported together',
    ),
    "jacobian: forward-mode with strict": (
        lambda lib: F(lib).jacobian(
            linear, _x(lib), strict=True, vectorize=True, strategy="forward-mode"
        ),
        RuntimeError,
        '`strict=True` and `strategy="forward-mode"` are not supported together',
    ),
    "jacobian: forward-mode without vectorize": (
        lambda lib: F(lib).jacobian(linear, _x(lib), strategy="forward-mode"),
        NotImplementedError,
        "only implemented for `vectorize=True`.",
    ),
    "jacobian: forward-mode without vectorize, non-tensor input": (
        lambda lib: F(lib).jacobian(linear, 1.0, strategy="forward-mode"),
        TypeError,
        "The inputs given to jacobian must be either a Tensor",
    ),
    "hessian: forward-mode without vectorize": (
        lambda lib: F(lib).hessian(scalar_pow, _x(lib), outer_jacobian_strategy="forward-mode"),
        NotImplementedError,
        "forward-over-reverse Hessian",
    ),
    "jacobian: vectorize with strict": (
        lambda lib: F(lib).jacobian(
            exp_reducer, _x(lib).reshape(1, 3), strict=True, vectorize=True
        ),
        RuntimeError,
        "`strict=True` and `vectorized=True` are not supported together",
    ),
    "jacobian: strict output check comes before the vectorize one": (
        lambda lib: F(lib).jacobian(lambda a: a.detach(), _x(lib), strict=True, vectorize=True),
        RuntimeError,
        "Output 0 of the user-provided function does not require gradients.",
    ),
    "vjp: strict, output does not require grad": (
        lambda lib: F(lib).vjp(lambda a: lib.ones(3), _x(lib), lib.ones(3), strict=True),
        RuntimeError,
        "Output 0 of the user-provided function does not require gradients.",
    ),
    "jvp: strict, an input that no output uses": (
        lambda lib: F(lib).jvp(unused_second, (_x(lib), _x(lib)), (_x(lib), _x(lib)), strict=True),
        RuntimeError,
        "The output of the user-provided function is independent of input 1.",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(torch, name):
    scenario, exc_type, phrase = ERRORS[name]
    assert_same_error(torch, scenario, exc_type, phrase)


def test_jvp_strict_detects_output_independent_of_the_grad_outputs(torch):
    """The double backward trick in strict mode: the gradient of a function that does not
    use its input at all through a differentiable path (x * 0 + c still uses x)."""

    def scenario(lib):
        x = _x(lib)
        return (
            outcome(lambda: describe(F(lib).jvp(linear, x, x, strict=True))),
            outcome(lambda: describe(F(lib).jvp(linear, x, x, strict=True, create_graph=True))),
            outcome(lambda: describe(F(lib).hvp(scalar_linear, x, x, strict=True))),
            outcome(lambda: describe(F(lib).vhp(scalar_quadratic, x, x, strict=True))),
            outcome(
                lambda: describe(F(lib).vhp(scalar_quadratic, x, x, strict=True, create_graph=True))
            ),
        )

    assert_same(torch, scenario)


def test_function_called_once_per_reverse_jacobian(torch):
    """vectorize=False and vectorize=True both run the function once in reverse mode."""

    def scenario(lib):
        calls = []

        def fn(a):
            calls.append(1)
            return a.exp()

        x = _x(lib)
        F(lib).jacobian(fn, x)
        F(lib).jacobian(fn, x, vectorize=True)
        F(lib).hessian(lambda a: fn(a).sum(), x)
        return len(calls)

    assert_same(torch, scenario)
