"""opgrad.utils.checkpoint against torch.utils.checkpoint.

Ports these tests of PyTorch's test_autograd.py (TestAutograd), with plain functions in
place of nn modules (opgrad has no nn): test_checkpointing, test_checkpointing_without_reentrant
(both input_requires_grad), test_checkpointing_without_reentrant_custom_function_works,
test_checkpointing_without_reentrant_with_context_fn,
test_checkpoint_warns_if_use_reentrant_not_passed_explcitly,
test_checkpoint_sequential_warns_if_use_reentrant_not_passed_explcitly,
test_checkpoint_graph_execution_group, test_checkpoint_detects_non_determinism,
test_access_saved_tensor_twice_without_recomputation_works, test_checkpoint_valid_reset_on_error,
test_checkpointing_without_reentrant_detached_tensor,
test_checkpointing_without_reentrant_saved_object_identity,
test_checkpointing_without_reentrant_correct_grad,
test_checkpointing_without_reentrant_parameter_used_in_an_out,
test_checkpointing_without_reentrant_arbitrary_input_output, test_custom_autograd_ac_early_stop.
(Autocast, CUDA memory, DataParallel and selective checkpointing have no opgrad counterpart.)

The other tests run one scenario with ``lib = opgrad`` and ``lib = torch`` and compare plain
Python results: gradients, how often and how far the function is recomputed, errors.
"""

import contextlib
import gc
import warnings
import weakref

import pytest

from torch_oracle import assert_same, assert_same_error, outcome

pytestmark = pytest.mark.usefixtures("fresh_global_modes")


def cp(lib):
    return lib.utils.checkpoint


def rounded(t, digits=8):
    return None if t is None else [round(v, digits) for v in t.detach().reshape(-1).tolist()]


def values(lib, n, shift=0.0, requires_grad=False, shape=None):
    data = [((i * 7) % 13) / 13.0 - 0.5 + shift for i in range(n)]
    t = lib.tensor(data, dtype=lib.float64)
    if shape is not None:
        t = t.reshape(shape)
    return t.requires_grad_(requires_grad)


def mlp(lib, n_in=4, hidden=6):
    """A Linear-ReLU-Linear block as a function plus its parameters (float64)."""
    w1 = values(lib, n_in * hidden, 0.1, True, (hidden, n_in))
    b1 = values(lib, hidden, -0.2, True)
    w2 = values(lib, n_in * hidden, 0.3, True, (n_in, hidden))
    b2 = values(lib, n_in, 0.05, True)

    def block(x):
        return (x @ w1.t() + b1).relu() @ w2.t() + b2

    return block, [w1, b1, w2, b2]


# ---- the reference tests -----------------------------------------------------------------


@pytest.mark.parametrize(
    "use_reentrant, input_requires_grad", [(True, True), (False, True), (False, False)]
)
def test_checkpointing_gives_the_gradients_of_the_plain_run(
    torch, use_reentrant, input_requires_grad
):
    """test_checkpointing and test_checkpointing_without_reentrant: many small inputs
    through a checkpointed block, then one joint loss. (Reentrant checkpointing needs an
    input that requires grad, so it has no False case.)"""

    def scenario(lib):
        block, params = mlp(lib)
        feats, plain = [], []
        for k in range(12):
            data = values(lib, 4, k / 10.0, input_requires_grad, (1, 4))
            if use_reentrant:
                feats.append(cp(lib).checkpoint(block, data, use_reentrant=True))
            else:  # keyword arguments reach the function (non-reentrant only)
                feats.append(cp(lib).checkpoint(lambda x: block(x), x=data, use_reentrant=False))
            plain.append(block(data))
        lib.stack(feats).mean().backward()
        with_checkpoint = [rounded(p.grad) for p in params]
        for p in params:
            p.grad = None
        lib.stack(plain).mean().backward()
        return with_checkpoint, [rounded(p.grad) for p in params]

    import opgrad

    with_checkpoint, plain = scenario(opgrad)
    assert with_checkpoint == plain
    assert_same(torch, scenario)


def test_checkpointing_without_reentrant_custom_function_works(torch):
    msg = "Unpack is being triggered for a tensor that was already unpacked once"

    def scenario(lib):
        seen = []

        class MyFunc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, z):
                w = x * y * z
                out = w + w
                ctx.save_for_backward(x, y, z, w, out)
                return out

            @staticmethod
            def backward(ctx, grad_out):
                x, y, z, w, out = ctx.saved_tensors
                # Recomputed tensors are dropped as soon as they are unpacked.
                seen.append(outcome(lambda: ctx.saved_tensors))
                return x, y, z

        x = lib.tensor(1.0, requires_grad=True)
        y = lib.tensor(2.0, requires_grad=True)
        z = lib.tensor(3.0, requires_grad=True)

        def foo(x, y, z):
            x = x * y * z
            y = y * y * z
            z = z * z
            return MyFunc.apply(x, y, z)

        out = cp(lib).checkpoint(foo, x, y, z, use_reentrant=False)
        out.sum().backward()
        return seen[0][0], msg in seen[0][1], [x.grad.item(), y.grad.item(), z.grad.item()]

    assert_same(torch, scenario)


def test_checkpointing_without_reentrant_with_context_fn(torch):
    def scenario(lib):
        base = lib.utils._python_dispatch.TorchDispatchMode

        class Verbose(base):
            def __init__(self):
                super().__init__()
                self.operators = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.operators.append(func.__name__)
                return func(*args, **(kwargs or {}))

        x = lib.tensor(1.0, requires_grad=True)
        verbose = Verbose()
        cp(lib).checkpoint(
            lambda x: x.exp(),
            x,
            use_reentrant=False,
            context_fn=lambda: (verbose, contextlib.nullcontext()),
        )
        forward_ops = verbose.operators
        verbose.operators = []
        out = cp(lib).checkpoint(
            lambda x: x.exp(),
            x,
            use_reentrant=False,
            context_fn=lambda: (contextlib.nullcontext(), verbose),
        )
        out.backward()
        error = outcome(
            lambda: cp(lib).checkpoint(
                lambda x: x.sin(),
                x,
                use_reentrant=True,
                context_fn=lambda: (contextlib.nullcontext(), verbose),
            )
        )
        return forward_ops, verbose.operators, error

    assert_same(torch, scenario)


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category.__name__, str(w.message).replace("torch", "LIB")) for w in caught]


def test_checkpoint_warns_if_use_reentrant_not_passed_explicitly(torch):
    def scenario(lib):
        a = lib.randn(1, requires_grad=True)
        explicit = _warnings_of(lambda: cp(lib).checkpoint(lambda x: x, a, use_reentrant=False))
        implicit = _warnings_of(lambda: cp(lib).checkpoint(lambda x: x, a))
        return explicit, implicit

    assert_same(torch, scenario)
    import opgrad

    assert "the use_reentrant parameter should be passed explicitly" in scenario(opgrad)[1][0][1]


def test_checkpoint_sequential_warns_if_use_reentrant_not_passed_explicitly(torch):
    def scenario(lib):
        a = values(lib, 3, requires_grad=True)
        functions = [lambda x: x * 2, lambda x: x.sin(), lambda x: x + 1]
        explicit = _warnings_of(
            lambda: cp(lib).checkpoint_sequential(functions, 3, a, use_reentrant=False)
        )
        implicit = _warnings_of(lambda: cp(lib).checkpoint_sequential(functions, 3, a))
        return explicit, implicit

    assert_same(torch, scenario)


def test_checkpoint_graph_execution_group(torch):
    def scenario(lib):
        counts = []
        for use_group in (True, False):
            counter = [0]

            def fn(x):
                counter[0] += 1
                y = x.sin().cos()
                z = y.sin().cos()
                return y, z

            x = values(lib, 9, requires_grad=True, shape=(3, 3))
            y, z = cp(lib).checkpoint(fn, x, use_reentrant=False)
            ctx = cp(lib).GraphExecGroup() if use_group else contextlib.nullcontext()
            with ctx:
                (grad_y,) = lib.autograd.grad(z, inputs=(y,), grad_outputs=(lib.ones(3, 3),))
                lib.autograd.grad(y, inputs=(x,), grad_outputs=(grad_y,))
            counts.append(counter[0])
        # Backward calls in one group that need the same activation: an error.
        x = values(lib, 9, requires_grad=True, shape=(3, 3))
        out = cp(lib).checkpoint(lambda x: x.sin().cos(), x, use_reentrant=False)
        with cp(lib).GraphExecGroup():
            out.sum().backward(retain_graph=True)
            error = outcome(lambda: out.sum().backward())
        return counts, error[0], "Performing two backward calls that overlap" in error[1]

    assert_same(torch, scenario)


def _non_det_fn(orig_fn, recompute_fn):
    counter = [0]

    def fn(x):
        if counter[0] == 0:
            counter[0] += 1
            return orig_fn(x)
        return recompute_fn(x)

    return fn


def _save_3_tensors(x):
    out = x.sin().exp()
    return out.sin()


def _save_2_tensors(x):
    return x.sin().exp()


def _save_2_tensors_alt(lib):
    return lambda x: x.sin() * lib.tensor([1.0, 2.0])


def _run_non_det(lib, orig, recompute, **kwargs):
    a = lib.randn(1, requires_grad=True)

    def run():
        out = cp(lib).checkpoint(_non_det_fn(orig, recompute), a, use_reentrant=False, **kwargs)
        out.backward()

    return outcome(run)


def _phrase_in(result, phrase):
    return result[0], phrase in result[1]


def test_checkpoint_detects_non_determinism(torch):
    def scenario(lib):
        results = {}
        results["fewer"] = _phrase_in(
            _run_non_det(lib, _save_3_tensors, _save_2_tensors),
            "A different number of tensors was saved",
        )
        with cp(lib).set_checkpoint_early_stop(False):
            results["more"] = _phrase_in(
                _run_non_det(lib, _save_2_tensors, _save_3_tensors),
                "trying to save more tensors during recomputation",
            )
        # With early stop the extra tensors are never reached: no error.
        results["more, early stop"] = _run_non_det(lib, _save_2_tensors, _save_3_tensors)
        alt = _save_2_tensors_alt(lib)
        results["metadata"] = _phrase_in(
            _run_non_det(lib, _save_2_tensors, alt), "tensors have different metadata"
        )
        debug_phrase = "You are seeing this error because you passed `debug=True` to checkpoint"
        results["debug"] = _phrase_in(
            _run_non_det(lib, _save_2_tensors, alt, debug=True), debug_phrase
        )
        with cp(lib).set_checkpoint_debug_enabled(True):
            results["debug, global"] = _phrase_in(
                _run_non_det(lib, _save_2_tensors, alt, debug=False), debug_phrase
            )
        with cp(lib).set_checkpoint_debug_enabled(False):
            results["debug, globally off"] = _phrase_in(
                _run_non_det(lib, _save_2_tensors, alt, debug=True),
                "Recomputed values for the following tensors have different",
            )
        results["no check"] = _run_non_det(lib, _save_2_tensors, alt, determinism_check="none")
        return results

    assert_same(torch, scenario)


def test_checkpoint_error_types_and_metadata_listing(torch):
    def scenario(lib):
        error = None
        try:
            _run = cp(lib).checkpoint(
                _non_det_fn(_save_2_tensors, _save_2_tensors_alt(lib)),
                lib.randn(1, requires_grad=True),
                use_reentrant=False,
            )
            _run.backward()
        except Exception as exc:  # noqa: BLE001 - the type is compared
            error = exc
        text = str(error).replace("torch.", "LIB.").replace("opgrad.", "LIB.")
        return (
            isinstance(error, cp(lib).CheckpointError),
            isinstance(error, RuntimeError),
            "tensor at position 1:" in text,
            "saved metadata: {'shape': LIB.Size([1]), 'dtype': LIB.float32" in text,
            "recomputed metadata: {'shape': LIB.Size([2]), 'dtype': LIB.float32" in text,
        )

    assert_same(torch, scenario)


def test_debug_report_lists_the_ops_of_both_runs():
    import opgrad as og

    result = _run_non_det(og, _save_2_tensors, _save_2_tensors_alt(og), debug=True)
    assert result[0] == "CheckpointError"
    text = result[1]
    forward_part = text.split("Operations executed during the original forward:")[1]
    forward_ops, recompute_ops = forward_part.split("Operations executed during recomputation:")
    assert "aten.sin.default" in forward_ops and "aten.exp.default" in forward_ops
    # the recomputation stops once it saved as many tensors as the forward (inside mul)
    assert "aten.sin.default" in recompute_ops and "aten.exp.default" not in recompute_ops
    assert "test_checkpoint.py" in text  # the user's stack for each op


def test_access_saved_tensor_twice_without_recomputation_works(torch):
    def scenario(lib):
        count = [0]

        def foo(a):
            count[0] += 1
            b = a * a
            a * b
            return lib.exp(a)

        a = lib.randn(5, requires_grad=True)
        d = cp(lib).checkpoint(foo, a, use_reentrant=False)
        counts = [count[0]]
        # Outside backward every access recomputes, and drops the result right away.
        d.grad_fn._saved_result
        counts.append(count[0])
        d.grad_fn._saved_result
        counts.append(count[0])
        d.sum().backward()
        counts.append(count[0])
        error = outcome(lambda: d.grad_fn._saved_result)
        return counts, _phrase_in(
            error, "or directly access saved tensors after they have already been freed"
        )

    assert_same(torch, scenario)


def test_checkpoint_valid_reset_on_error(torch):
    def scenario(lib):
        a = values(lib, 4, requires_grad=True, shape=(2, 2))
        b = cp(lib).checkpoint(lib.exp, a, use_reentrant=True).sum()
        error = outcome(lambda: lib.autograd.grad(b, (a,)))
        c = cp(lib).checkpoint(lib.exp, a, use_reentrant=True).sum()
        c.backward()
        return error, rounded(a.grad)

    assert_same(torch, scenario)


def test_reentrant_checkpoint_refuses_backward_with_inputs(torch):
    def scenario(lib):
        a = values(lib, 3, requires_grad=True)
        b = cp(lib).checkpoint(lambda x: x.sin(), a, use_reentrant=True).sum()
        b.backward(inputs=[a])

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "When use_reentrant=True, LIB.utils.checkpoint is incompatible with .grad() or passing",
    )


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpointing_without_reentrant_detached_tensor(torch, use_reentrant):
    def scenario(lib):
        w1 = values(lib, 4, 0.1, True, (2, 2))
        w2 = values(lib, 4, -0.3, True, (2, 2))

        def no_grad_block(x):
            with lib.no_grad():
                return (x @ w1) @ w2

        a = values(lib, 4, requires_grad=True, shape=(2, 2))
        results = []
        for _ in range(3):

            def run():
                out = cp(lib).checkpoint(no_grad_block, a, use_reentrant=use_reentrant)
                out += a  # makes the loss require grad
                out.sum().backward()
                return rounded(a.grad)

            results.append(outcome(run))
        return results

    assert_same(torch, scenario)


def test_checkpointing_without_reentrant_saved_object_identity(torch):
    def scenario(lib):
        seen = []

        class Test(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(y)
                return x

            @staticmethod
            def backward(ctx, x):
                seen.append(ctx.saved_tensors[0])
                return x, None

        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(1.0, requires_grad=False)
        Test.apply(a, b).backward()
        cp(lib).checkpoint(Test.apply, a, b, use_reentrant=False).backward()
        return [s is b for s in seen]

    assert_same(torch, scenario)


def test_checkpointing_without_reentrant_correct_grad(torch):
    def scenario(lib):
        a = values(lib, 4, requires_grad=True, shape=(2, 2))
        lib.exp(a).sum().backward()
        plain = rounded(a.grad)
        a.grad = None
        cp(lib).checkpoint(lib.exp, a, use_reentrant=False).sum().backward()
        with_backward = rounded(a.grad)
        a.grad = None
        d = cp(lib).checkpoint(lib.exp, a, use_reentrant=False).sum()
        (d_grad,) = lib.autograd.grad(d, (a,))
        return plain, with_backward, rounded(d_grad)

    assert_same(torch, scenario)


def test_checkpointing_without_reentrant_parameter_used_in_an_out(torch):
    """A tensor used inside and outside the checkpoint: its hook runs once."""

    def scenario(lib):
        w = values(lib, 9, requires_grad=True, shape=(3, 3))
        count = [0]
        w.register_hook(lambda grad: count.__setitem__(0, count[0] + 1))
        x = values(lib, 9, 0.2, True, (3, 3))
        h = w * x
        out = cp(lib).checkpoint(lambda x: w * x, h, use_reentrant=False)
        out.sum().backward()
        return count[0], rounded(w.grad)

    assert_same(torch, scenario)


def test_checkpointing_without_reentrant_arbitrary_input_output(torch):
    def scenario(lib):
        weight = values(lib, 25, requires_grad=True, shape=(5, 5))

        def model(dict_input):
            return {"result": dict_input["tensor"] @ weight.t()}

        inp = {"tensor": values(lib, 25, 0.3, shape=(5, 5))}
        plain = model(inp)["result"].sum()
        plain.backward()
        plain_grad = rounded(weight.grad)
        weight.grad = None
        out = cp(lib).checkpoint(model, inp, use_reentrant=False)["result"].sum()
        out.backward()
        return round(plain.item(), 8) == round(out.item(), 8), plain_grad == rounded(weight.grad)

    assert_same(torch, scenario)


def test_custom_autograd_ac_early_stop(torch):
    """Early stop: a tensor saved inside the recomputation is freed once backward is done,
    by reference counting alone (the recomputation stopped inside the Function's save)."""

    def scenario(lib):
        refs = []

        class Test(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.clone()
                ctx.save_for_backward(y)
                refs.append(weakref.ref(y))
                return y

            @staticmethod
            def backward(ctx, *args):
                ctx.saved_tensors
                return None

        inp = lib.randn(5, 5, requires_grad=True)

        def scope():
            out = cp(lib).checkpoint(Test.apply, inp, use_reentrant=False)
            out.sum().backward()

        was_enabled = gc.isenabled()
        gc.disable()
        try:
            scope()
            # refs[0], the forward's own output, is left to the cycle collector by torch
            # 2.13 (unlike in the reference test's claim); the recomputed one must be gone.
            return len(refs), refs[1]() is None
        finally:
            if was_enabled:
                gc.enable()

    assert_same(torch, scenario)


# ---- opgrad against torch: more of the contract ------------------------------------------


def _logging_fn(lib, log):
    """x -> sin -> exp -> (log "after exp") -> * 2 -> (log "end"): saves sin's input and
    exp's result, and mul by a scalar saves nothing."""

    def fn(x):
        log.append("start")
        y = x.sin()
        z = y.exp()
        log.append("after exp")
        out = z * 2
        log.append("end")
        return out

    return fn


@pytest.mark.parametrize("early_stop", [None, True, False])
def test_recomputation_stops_once_everything_needed_is_back(torch, early_stop):
    def scenario(lib):
        log = []
        x = values(lib, 3, requires_grad=True)
        ctx = (
            contextlib.nullcontext()
            if early_stop is None
            else cp(lib).set_checkpoint_early_stop(early_stop)
        )
        with ctx:
            out = cp(lib).checkpoint(_logging_fn(lib, log), x, use_reentrant=False)
        log.append("backward")
        out.sum().backward()  # the switch is read when the checkpoint is made
        return log, rounded(x.grad)

    assert_same(torch, scenario)


def test_early_stop_argument(torch):
    def scenario(lib):
        log = []
        x = values(lib, 3, requires_grad=True)
        out = cp(lib).checkpoint(_logging_fn(lib, log), x, use_reentrant=False, early_stop=False)
        log.append("backward")
        out.sum().backward()
        return log

    assert_same(torch, scenario)


def test_each_backward_through_a_retained_graph_recomputes(torch):
    def scenario(lib):
        log = []
        x = values(lib, 3, requires_grad=True)
        out = cp(lib).checkpoint(_logging_fn(lib, log), x, use_reentrant=False).sum()
        out.backward(retain_graph=True)
        out.backward()
        return log.count("start"), rounded(x.grad)

    assert_same(torch, scenario)


@pytest.mark.filterwarnings("ignore:None of the inputs have requires_grad=True")
@pytest.mark.parametrize("inner_reentrant", [True, False])
@pytest.mark.parametrize("outer_reentrant", [True, False])
def test_nested_checkpoints(torch, outer_reentrant, inner_reentrant):
    def scenario(lib):
        calls = {"inner": 0, "outer": 0}

        def inner(x):
            calls["inner"] += 1
            return x.sin().exp()

        def outer(x):
            calls["outer"] += 1
            y = cp(lib).checkpoint(inner, x * x, use_reentrant=inner_reentrant)
            return (y * x).cos()

        x = values(lib, 4, requires_grad=True)
        out = cp(lib).checkpoint(outer, x, use_reentrant=outer_reentrant).sum()
        forward_calls = dict(calls)
        out.backward()
        return forward_calls, calls, rounded(x.grad)

    assert_same(torch, scenario)


def test_non_reentrant_supports_double_backward(torch):
    def scenario(lib):
        x = values(lib, 3, requires_grad=True)
        out = cp(lib).checkpoint(lambda a: (a.sin() * a).exp(), x, use_reentrant=False).sum()
        (g,) = lib.autograd.grad(out, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return rounded(g), rounded(gg)

    assert_same(torch, scenario)


def test_non_reentrant_gradient_of_an_intermediate_and_partial_backward(torch):
    """autograd.grad to a tensor made inside the checkpoint, then the rest: recomputed per
    backward; the holders freed by the first backward are skipped by the second."""

    def scenario(lib):
        count = [0]

        def fn(x):
            count[0] += 1
            y = x.sin()
            return y, (y * y).exp()

        x = values(lib, 3, requires_grad=True)
        y, z = cp(lib).checkpoint(fn, x, use_reentrant=False)
        (gy,) = lib.autograd.grad(z.sum(), y)
        (gx,) = lib.autograd.grad(y, x, gy)
        return count[0], rounded(gy), rounded(gx)

    assert_same(torch, scenario)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_rng_state_is_preserved_for_the_recomputation(torch, use_reentrant):
    """A random mask drawn inside the function: the recomputation draws the same one, and
    the generator continues after backward as if nothing had been recomputed."""

    def scenario(lib):
        def noisy(x):
            return x * (lib.rand(3) > 0.5).to(x.dtype) + x.sin()

        runs = []
        for checkpointed in (True, False):
            x = values(lib, 3, requires_grad=True)
            lib.manual_seed(7)
            if checkpointed:
                out = cp(lib).checkpoint(noisy, x, use_reentrant=use_reentrant)
            else:
                out = noisy(x)
            after_forward = lib.rand(2).tolist()
            out.sum().backward()
            runs.append((rounded(x.grad), after_forward, lib.rand(2).tolist()))
        return runs[0] == runs[1]

    assert_same(torch, scenario)
    import opgrad

    assert scenario(opgrad)


def test_without_preserving_rng_state_the_recomputation_draws_anew(torch):
    def scenario(lib):
        seen = []

        def noisy(x):
            r = lib.rand(3)
            seen.append(r.tolist())
            return x * r

        lib.manual_seed(3)
        x = values(lib, 3, requires_grad=True)
        out = cp(lib).checkpoint(noisy, x, use_reentrant=False, preserve_rng_state=False)
        out.sum().backward()
        lib.manual_seed(3)
        out = cp(lib).checkpoint(noisy, x, use_reentrant=False)
        out.sum().backward()
        return seen[0] == seen[1], seen[2] == seen[3]

    assert_same(torch, scenario)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_under_no_grad_just_runs(torch, use_reentrant):
    def scenario(lib):
        count = [0]

        def fn(x):
            count[0] += 1
            return x.exp()

        x = values(lib, 3, requires_grad=True)
        with lib.no_grad():
            out = cp(lib).checkpoint(fn, x, use_reentrant=use_reentrant)
        return out.requires_grad, out.grad_fn is None, count[0], rounded(out)

    assert_same(torch, scenario)


def test_reentrant_non_tensor_arguments_and_outputs(torch):
    def scenario(lib):
        x = values(lib, 3, requires_grad=True)
        y = values(lib, 3, 0.4)

        def fn(a, scale, b, tag):
            return (a * scale + b).sin(), tag, a.cos()

        first, tag, second = cp(lib).checkpoint(fn, x, 2.5, y, "t", use_reentrant=True)
        (first.sum() + second.sum()).backward()
        return tag, type(first.grad_fn).__name__, rounded(x.grad), y.grad is None

    assert_same(torch, scenario)


def test_reentrant_warns_when_no_input_requires_grad(torch):
    def scenario(lib):
        x = values(lib, 3)
        got = []
        warned = _warnings_of(
            lambda: got.append(cp(lib).checkpoint(lambda a: a.sin(), x, use_reentrant=True))
        )
        return warned, got[0].requires_grad

    assert_same(torch, scenario)


def test_non_reentrant_input_not_requiring_grad_still_reaches_parameters(torch):
    def scenario(lib):
        w = values(lib, 3, requires_grad=True)
        x = values(lib, 3, 0.2)
        out = cp(lib).checkpoint(lambda a: (a * w).exp(), x, use_reentrant=False)
        out.sum().backward()
        return rounded(w.grad)

    assert_same(torch, scenario)


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential(torch, use_reentrant, segments):
    def scenario(lib):
        block1, params1 = mlp(lib)
        block2, params2 = mlp(lib, hidden=3)
        functions = [block1, lambda x: x.tanh(), block2, lambda x: x * 1.5]
        x = values(lib, 8, requires_grad=True, shape=(2, 4))
        out = cp(lib).checkpoint_sequential(functions, segments, x, use_reentrant=use_reentrant)
        out.pow(2).sum().backward()
        return rounded(out), rounded(x.grad), [rounded(p.grad) for p in params1 + params2]

    assert_same(torch, scenario)


def test_activations_are_not_kept_alive(torch):
    """What checkpointing is for: an intermediate made inside the function is freed after
    the forward, while the plain graph keeps it (it is saved by the next op)."""

    def scenario(lib):
        result = {}
        for mode in ("plain", "reentrant", "non-reentrant"):
            refs = []

            def fn(x):
                h = x.sin()
                refs.append(weakref.ref(h))
                return h.exp()

            x = values(lib, 3, requires_grad=True)
            if mode == "plain":
                out = fn(x)
            else:
                out = cp(lib).checkpoint(fn, x, use_reentrant=mode == "reentrant")
            result[mode] = refs[0]() is None
            out.sum().backward()
            result[mode + " grad"] = rounded(x.grad)
        return result

    assert_same(torch, scenario)


# ---- errors ------------------------------------------------------------------------------

ERRORS = {
    "reentrant with keyword arguments": (
        lambda lib: cp(lib).checkpoint(lambda x: x, values(lib, 1), use_reentrant=True, foo=1),
        ValueError,
        "Unexpected keyword arguments: foo",
    ),
    "reentrant with debug": (
        lambda lib: cp(lib).checkpoint(lambda x: x, values(lib, 1), use_reentrant=True, debug=True),
        ValueError,
        "Passing `context_fn` or `debug` is only supported when use_reentrant=False.",
    ),
    "debug with a context_fn": (
        lambda lib: cp(lib).checkpoint(
            lambda x: x,
            values(lib, 1),
            use_reentrant=False,
            debug=True,
            context_fn=lambda: (contextlib.nullcontext(), contextlib.nullcontext()),
        ),
        ValueError,
        "debug=True is incompatible with non-default context_fn",
    ),
    "unknown determinism check": (
        lambda lib: cp(lib).checkpoint(
            lambda x: x, values(lib, 1), use_reentrant=False, determinism_check="strict"
        ),
        ValueError,
        "determinism_check should be one of ['default', 'none'], but got strict",
    ),
    "sequential with unknown keyword arguments": (
        lambda lib: cp(lib).checkpoint_sequential(
            [lambda x: x], 1, values(lib, 1), use_reentrant=False, bar=2
        ),
        ValueError,
        "Unexpected keyword arguments: bar",
    ),
    "reentrant: no output requires grad": (
        lambda lib: (
            cp(lib).checkpoint(
                lambda x: x.detach(), values(lib, 2, requires_grad=True), use_reentrant=True
            )
            + values(lib, 2, requires_grad=True)
        )
        .sum()
        .backward(),
        RuntimeError,
        "none of output has requires_grad=True, this checkpoint() is not necessary",
    ),
    "forward context that swallows the error": (
        lambda lib: cp(lib).checkpoint(
            lambda x: 1 / 0,
            values(lib, 2, requires_grad=True),
            use_reentrant=False,
            context_fn=lambda: (contextlib.suppress(ZeroDivisionError), contextlib.nullcontext()),
        ),
        RuntimeError,
        "the forward context provided by context_fn suppressed an exception",
    ),
    "detach_variable of a list": (
        lambda lib: cp(lib).detach_variable([values(lib, 2)]),
        RuntimeError,
        "Only tuple of tensors is supported. Got Unsupported input type: list",
    ),
    "nested exec groups": (
        lambda lib: _nested_groups(lib),
        RuntimeError,
        "GraphExecGroup contexts cannot be nested",
    ),
}


def _nested_groups(lib):
    with cp(lib).GraphExecGroup():
        with cp(lib).GraphExecGroup():
            pass


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(torch, name):
    scenario, exc_type, phrase = ERRORS[name]
    expected = outcome(lambda: scenario(torch))
    assert expected[0] == exc_type.__name__ and phrase in expected[1].replace("LIB", "torch")
    import opgrad

    got = outcome(lambda: scenario(opgrad))
    assert got[0] == expected[0]
    if name != "nested exec groups":  # that one names the group object
        assert got == expected


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_a_dispatch_mode_sees_the_same_ops(torch, use_reentrant):
    """Forward, recomputation (with the pack hook's detaches) and backward, op by op."""
    from torch_oracle import aten_log

    def scenario(lib):
        a = values(lib, 2, requires_grad=True)

        def run():
            out = cp(lib).checkpoint(lambda x: x.sin().exp(), a, use_reentrant=use_reentrant)
            out.sum().backward()

        return aten_log(lib, run)

    assert_same(torch, scenario)


def test_checkpoint_error_texts_start_as_torch(torch):
    """The messages' opening lines to the debug tip, character for character (PyTorch's
    non-breaking hyphen in "checkpoint‑debug", the debug report's leading space). The
    paragraph torch adds about torch.compile is left out: opgrad has no compiler."""

    def scenario(lib):
        fewer = _run_non_det(lib, _save_3_tensors, _save_2_tensors)
        debug = _run_non_det(lib, _save_2_tensors, _save_2_tensors_alt(lib), debug=True)
        head = fewer[1][: fewer[1].index("globally.") + len("globally.")]
        return fewer[0], head, debug[0], debug[1][:120]

    assert_same(torch, scenario)
