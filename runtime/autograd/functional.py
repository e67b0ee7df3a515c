"""``opgrad.autograd.functional``: derivatives of whole functions.

``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp`` take a Python
function of tensors and the point to differentiate at, and return PyTorch's
structures: a single tensor stays a single tensor, a tuple stays a tuple, and
a Jacobian of a tuple-returning function of a tuple is a tuple of tuples
(``[output][input]``).

Everything is built on ``autograd.grad``. ``jvp`` and ``hvp`` use the double
backward trick (a gradient is linear in its grad_outputs, so differentiating
it with respect to them gives the forward product), as PyTorch does.

``vectorize=True`` means one batched ``autograd.grad`` call in PyTorch (vmap);
opgrad has no vmap, so the batch is run one row at a time: same values,
shapes, dtypes and errors, only slower. ``strategy="forward-mode"`` pushes one
tangent per input element through ``forward_ad``.
"""

from __future__ import annotations

from typing import Callable, Optional, Tuple, Union

from ..tensor import Tensor
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

TensorOrTensors = Union[Tensor, Tuple[Tensor, ...]]


# ---- structure: tuples in, tuples out ------------------------------------------------------


def _tupled(value, arg_name: Optional[str], fn_name: Optional[str]) -> Tuple[bool, tuple]:
    """``(was it a tuple, value as a tuple of Tensors)``; anything else is a TypeError."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for index, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"value at index {index}" if is_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the {where} has type {type(item)}."
            )
    return is_tuple, items


def _untuple(result: tuple, was_tuple: Union[bool, Tuple[bool, bool]]):
    """Undo ``_tupled``: one flag for a flat result, (outer, inner) for a nested one."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(row[0] for row in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def _fresh_inputs(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects to differentiate with respect to.

    Always new objects, so that a tensor the function captures from outside is
    not mistaken for the argument. With ``create_graph`` an input that requires
    grad stays connected to its history (a view); otherwise it is detached.
    """
    fresh = []
    for t in inputs:
        if create_graph and t.requires_grad:
            fresh.append(t.view_as(t))
        else:
            fresh.append(t.detach().requires_grad_(need_graph))
    return tuple(fresh)


def _detach_unless(results: tuple, create_graph: bool) -> tuple:
    """Drop the history of the results unless the caller asked for it (nested tuples too)."""
    if create_graph:
        return results
    return tuple(
        r.detach() if isinstance(r, Tensor) else _detach_unless(r, create_graph) for r in results
    )


def _check_v(v: tuple, like: tuple, like_is_tuple: bool) -> None:
    """``v`` must have one tensor per entry of ``like``, of the same size."""
    if len(v) != len(like):
        if like_is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for index, (vi, ref) in enumerate(zip(v, like)):
        if vi.size() != ref.size():
            prefix = f"Entry {index} in " if like_is_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {ref.size()} but got {vi.size()}."
            )


def _prepare_v(v, like: tuple, like_is_tuple: bool, fn_name: str, create_graph: bool) -> tuple:
    _, v = _tupled(v, "v", fn_name)
    v = _fresh_inputs(v, create_graph, need_graph=False)
    _check_v(v, like, like_is_tuple)
    return v


def _need_scalar_input(inputs: tuple, wording: str) -> None:
    if len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError(wording)


_V_NONE_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element."
)


# ---- strict mode ---------------------------------------------------------------------------

# What strict mode says when a stage's tensors do not require grad, per stage.
_NOT_DIFFERENTIABLE = {
    "outputs": (
        "Output {i} of the user-provided function does not require gradients. The outputs "
        "must be computed in a differentiable manner from the input when running in strict "
        "mode."
    ),
    "grad_inputs": (
        "The gradient with respect to input {i} is independent of the inputs of the "
        "user-provided function. This is not allowed in strict mode."
    ),
    "jacobian": (
        "While computing the hessian, found that the jacobian of the user-provided function "
        "with respect to input {i} is independent of the input. This is not allowed in strict "
        "mode. You should ensure that your function is twice differentiable and that the "
        "jacobian depends on the inputs (this would be violated by a linear function for "
        "example)."
    ),
    "hessian": (
        "The hessian of the user-provided function with respect to input {i} is independent "
        "of the input. This is not allowed in strict mode. You should ensure that your "
        "function is thrice differentiable and that the hessian depends on the inputs."
    ),
}


def _strict_requires_grad(tensors: tuple, stage: str, strict: bool) -> None:
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode."
            )
        if not t.requires_grad:
            raise RuntimeError(_NOT_DIFFERENTIABLE[stage].format(i=i))


# What strict mode says when a gradient is missing (None), per backward pass.
_MISSING = {
    "back": (
        "The output of the user-provided function is independent of input {i}. This is not "
        "allowed in strict mode."
    ),
    "back_trick": (
        "The gradient with respect to the input is independent of entry {i} in the "
        "grad_outputs when using the double backward trick to compute forward mode gradients. "
        "This is not allowed in strict mode."
    ),
    "double_back": (
        "The jacobian of the user-provided function is independent of input {i}. This is not "
        "allowed in strict mode."
    ),
    "double_back_trick": (
        "The hessian of the user-provided function is independent of entry {i} in the "
        "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
        "double backward trick to replace forward mode AD."
    ),
}


def _zeros_for_missing(grads: tuple, like: tuple, strict: bool, create_graph: bool, stage: str):
    """Missing gradients are zeros (of ``like``'s shape) unless strict mode forbids them."""
    filled = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i=i))
            g = _zeros_like(like[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True."
            )
        filled.append(g)
    return tuple(filled)


def _zeros_like(t: Tensor) -> Tensor:
    from ..generated import ops as aten

    return aten.zeros_like(t)


def _grad(outputs: tuple, inputs: tuple, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` that skips outputs which are None or do not require grad, and
    gives None for every input when no output is left."""
    from . import grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return grad(
        tuple(o for o, _ in kept),
        inputs,
        tuple(g for _, g in kept),
        allow_unused=True,
        create_graph=create_graph,
        retain_graph=retain_graph,
    )


# ---- vector products -----------------------------------------------------------------------


def _backward_product(of, wrt, v, inputs, create_graph: bool, strict: bool, stage: str):
    """``v``-weighted gradient of ``of`` with respect to ``wrt``, zeros (or strict's error)
    standing for the inputs it does not reach."""
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(of, wrt, v, create_graph=create_graph)
        return _zeros_for_missing(grads, inputs, strict, create_graph, stage)


def _finish(outputs, outputs_tuple: bool, result, inputs_tuple: bool, create_graph: bool):
    """The (outputs, result) pair, detached unless create_graph, untupled as given."""
    outputs = _detach_unless(outputs, create_graph)
    result = _detach_unless(result, create_graph)
    return _untuple(outputs, outputs_tuple), _untuple(result, inputs_tuple)


def vjp(
    func: Callable,
    inputs: TensorOrTensors,
    v=None,
    create_graph: bool = False,
    strict: bool = False,
):
    """``(func(inputs), v^T J)``: the vector-Jacobian product, shaped like the inputs.

    ``v`` may be omitted when ``func`` returns a single one-element tensor.
    """
    with enable_grad():
        inputs_tuple, inputs = _tupled(inputs, "inputs", "vjp")
        inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _tupled(
            func(*inputs), "outputs of the user-provided function", "vjp"
        )
        _strict_requires_grad(outputs, "outputs", strict)
        if v is not None:
            v = _prepare_v(v, outputs, outputs_tuple, "vjp", create_graph)
        else:
            _need_scalar_input(
                outputs,
                "The vector v can only be None if the user-provided function returns a single "
                "Tensor with a single element.",
            )
    result = _backward_product(outputs, inputs, v, inputs, create_graph, strict, "back")
    return _finish(outputs, outputs_tuple, result, inputs_tuple, create_graph)


def jvp(
    func: Callable,
    inputs: TensorOrTensors,
    v=None,
    create_graph: bool = False,
    strict: bool = False,
):
    """``(func(inputs), J v)``: the Jacobian-vector product, shaped like the outputs.

    Computed with the double backward trick. ``v`` may be omitted when the input
    is a single one-element tensor.
    """
    with enable_grad():
        inputs_tuple, inputs = _tupled(inputs, "inputs", "jvp")
        inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _prepare_v(v, inputs, inputs_tuple, "jvp", create_graph)
        else:
            _need_scalar_input(inputs, _V_NONE_INPUT)
        outputs_tuple, outputs = _tupled(
            func(*inputs), "outputs of the user-provided function", "jvp"
        )
        _strict_requires_grad(outputs, "outputs", strict)
        # The gradient is linear in these, so their value never matters: zeros are
        # safe (no inf or nan can leak into the result).
        dummies = tuple(_zeros_like(o).requires_grad_() for o in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _strict_requires_grad(grad_inputs, "grad_inputs", strict)
    result = _backward_product(grad_inputs, dummies, v, outputs, create_graph, strict, "back_trick")
    return _finish(outputs, outputs_tuple, result, outputs_tuple, create_graph)


def _scalar_output_checks(outputs: tuple, outputs_tuple: bool, fn_name: str) -> None:
    if outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )


def _scalar_function_setup(func, inputs, v, create_graph, strict, fn_name):
    """The common first half of vhp/hvp: inputs, v, the output and its gradient (a graph)."""
    inputs_tuple, inputs = _tupled(inputs, "inputs", fn_name)
    inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
    if v is not None:
        v = _prepare_v(v, inputs, inputs_tuple, fn_name, create_graph)
    else:
        _need_scalar_input(inputs, _V_NONE_INPUT)
    outputs_tuple, outputs = _tupled(
        func(*inputs), "outputs of the user-provided function", fn_name
    )
    _strict_requires_grad(outputs, "outputs", strict)
    _scalar_output_checks(outputs, outputs_tuple, fn_name)
    jac = _grad(outputs, inputs, create_graph=True)
    _strict_requires_grad(jac, "jacobian", strict)
    return inputs_tuple, inputs, v, outputs_tuple, outputs, jac


def vhp(
    func: Callable,
    inputs: TensorOrTensors,
    v=None,
    create_graph: bool = False,
    strict: bool = False,
):
    """``(func(inputs), v^T H)`` for a function returning a one-element tensor."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _scalar_function_setup(
            func, inputs, v, create_graph, strict, "vhp"
        )
    result = _backward_product(jac, inputs, v, inputs, create_graph, strict, "double_back")
    return _finish(outputs, outputs_tuple, result, inputs_tuple, create_graph)


def hvp(
    func: Callable,
    inputs: TensorOrTensors,
    v=None,
    create_graph: bool = False,
    strict: bool = False,
):
    """``(func(inputs), H v)`` for a function returning a one-element tensor (the double
    backward trick applied to the gradient; equals ``vhp`` for a symmetric Hessian)."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _scalar_function_setup(
            func, inputs, v, create_graph, strict, "hvp"
        )
        dummies = tuple(_zeros_like(t).requires_grad_() for t in inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        # PyTorch checks the jacobian here again (not double_back): kept for the same errors.
        _strict_requires_grad(jac, "hessian", strict)
    result = _backward_product(
        double_back, dummies, v, inputs, create_graph, strict, "double_back_trick"
    )
    return _finish(outputs, outputs_tuple, result, inputs_tuple, create_graph)


# ---- Jacobian and Hessian ------------------------------------------------------------------


def _basis_chunks(tensors: tuple, numels: Tuple[int, ...]) -> tuple:
    """The identity of size ``sum(numels)``, cut into one column block per tensor (each
    with that tensor's dtype): row k of the blocks is the k-th standard basis vector."""
    total = sum(numels)
    chunks = tuple(t.new_zeros(total, n) for t, n in zip(tensors, numels))
    offset = 0
    for chunk, n in zip(chunks, numels):
        chunk.diagonal(offset).fill_(1)
        offset -= n
    return chunks


def _stack_rows(rows: list) -> Tensor:
    from ..generated import ops as aten

    return aten.stack(rows, 0)


def _jacobian_rows(outputs, inputs, create_graph, strict) -> tuple:
    """One ``autograd.grad`` per output element (PyTorch's ``vectorize=False``)."""
    jacobian = []
    for i, out in enumerate(outputs):
        rows = [[] for _ in inputs]
        flat = out.reshape(-1)
        for j in range(out.nelement()):
            grads = _grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
            for k, (g, inp) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(
                            f"Output {i} of the user-provided function is independent of input "
                            f"{k}. This is not allowed in strict mode."
                        )
                    g = _zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(
                        f"The jacobian of the user-provided function is independent of input "
                        f"{i}. This is not allowed in strict mode when create_graph=True."
                    )
                rows[k].append(g)
        jacobian.append(
            tuple(
                _stack_rows(rows_k).view(out.size() + inputs[k].size())
                for k, rows_k in enumerate(rows)
            )
        )
    return tuple(jacobian)


def _jacobian_batched(outputs, inputs, create_graph) -> tuple:
    """PyTorch's ``vectorize=True``: the vjp of all outputs at once with every standard
    basis vector as grad_outputs. PyTorch batches those with vmap; here they run in turn."""
    numels = tuple(o.nelement() for o in outputs)
    total = sum(numels)
    basis = _basis_chunks(outputs, numels)
    flat_outputs = tuple(o.reshape(-1) for o in outputs)
    per_input = [[] for _ in inputs]
    for row in range(total):
        grads = _grad(
            flat_outputs,
            inputs,
            tuple(chunk[row] for chunk in basis),
            create_graph=create_graph,
            retain_graph=True,
        )
        for k, g in enumerate(grads):
            per_input[k].append(g)
    jac_by_input = []
    for k, inp in enumerate(inputs):
        rows = per_input[k]
        if all(g is None for g in rows):
            # What the batched call gives for an unused input: zeros, expanded.
            stacked = _zeros_like(inp).expand((total,) + tuple(inp.shape))
        else:
            stacked = _stack_rows([_zeros_like(inp) if g is None else g for g in rows])
        jac_by_input.append(
            tuple(
                block.view(out.size() + inp.size())
                for block, out in zip(stacked.split(numels, 0), outputs)
            )
        )
    return tuple(zip(*jac_by_input))  # [input][output] -> [output][input]


def _forward_tangents(func, inputs: tuple, tangents: tuple):
    """``(is the output a tuple, primal outputs, output tangents)`` for one tangent per
    input, by forward-mode AD."""
    from . import forward_ad as fwAD

    with fwAD.dual_level():
        duals = tuple(fwAD.make_dual(x, t) for x, t in zip(inputs, tangents))
        outputs_tuple, outs = _tupled(func(*duals), "outputs", None)
        primals, out_tangents = [], []
        for out in outs:
            primal, tangent = fwAD.unpack_dual(out)
            primals.append(primal)
            out_tangents.append(_zeros_like(primal) if tangent is None else tangent)
        return outputs_tuple, tuple(primals), tuple(out_tangents)


def _jacobian_forward(func, inputs, strict: bool, vectorize: bool):
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`strict=False` or `strategy="reverse-mode"`.'
        )
    inputs_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`."
        )
    numels = tuple(x.nelement() for x in inputs)
    basis = _basis_chunks(inputs, numels)
    columns = []  # per input element: the tangents of every output
    outputs_tuple, primals = None, None
    for row in range(sum(numels)):
        outputs_tuple, primals, tangents = _forward_tangents(
            func, inputs, tuple(chunk[row].view_as(x) for chunk, x in zip(basis, inputs))
        )
        columns.append(tangents)
    jacobian = []
    for i, out in enumerate(primals):
        stacked = _stack_rows([col[i] for col in columns])  # (sum(numels), *out.shape)
        blocks = stacked.split(numels, 0)
        jacobian.append(
            [
                block.permute(*range(1, block.dim()), 0).reshape(out.size() + inp.size())
                for block, inp in zip(blocks, inputs)
            ]
        )
    return _untuple(jacobian, (outputs_tuple, inputs_tuple))


def jacobian(
    func: Callable,
    inputs: TensorOrTensors,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
):
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` has shape
    ``outputs[i].shape + inputs[j].shape`` (unnested where func takes or returns a
    single tensor)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _jacobian_forward(func, inputs, strict, vectorize)
    with enable_grad():
        inputs_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
        inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _tupled(
            func(*inputs), "outputs of the user-provided function", "jacobian"
        )
        _strict_requires_grad(outputs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`."
                )
            result = _jacobian_batched(outputs, inputs, create_graph)
        else:
            result = _jacobian_rows(outputs, inputs, create_graph, strict)
        result = _detach_unless(result, create_graph)
        return _untuple(result, (outputs_tuple, inputs_tuple))


def hessian(
    func: Callable,
    inputs: TensorOrTensors,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
):
    """The Hessian of a function returning a one-element tensor: the Jacobian of its
    gradient. ``H[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``."""
    inputs_tuple, inputs = _tupled(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*args):
        out = func(*args)
        out_tuple, outs = _tupled(out, "outputs of the user-provided function", "hessian")
        _strict_requires_grad(outs, "outputs", strict)
        _scalar_output_checks(outs, out_tuple, "hessian")
        return out.squeeze()

    def gradient(*args):
        if outer_jacobian_strategy == "forward-mode":
            # the inner jacobian keeps these connected only if they require grad
            args = tuple(t.requires_grad_(True) for t in args)
        jac = jacobian(scalar_func, args, create_graph=True)
        _strict_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(
        gradient,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _untuple(result, (inputs_tuple, inputs_tuple))
