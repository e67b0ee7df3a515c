"""``opgrad.autograd``: reverse-mode differentiation of tensor programs."""

from __future__ import annotations

from typing import Optional, Sequence, Union

from numpy import empty

from .._tls import state as _tls
from ..dtypes import from_numpy_dtype
from ..generated import ops as aten
from ..memory_formats import preserve_format
from ..overrides import overridable
from ..tensor import Tensor, _make

#: torch.autograd.Variable: the Tensor class under its old name
Variable = Tensor
from . import graph
from .anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .gradcheck import gradcheck, gradgradcheck
from . import function
from . import forward_ad
from . import functional
from .function import Function
from .saved_variable import SavedTensor  # noqa: F401 - torch.autograd.SavedTensor
from .engine import execute, execute_plain
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .node import gradient_edge

__all__ = [
    "backward",
    "grad",
    "graph",
    "functional",
    "gradcheck",
    "gradgradcheck",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
]


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (Tensor, graph.GradientEdge)):
        return (value,)
    return tuple(value)


def _make_grads(outputs: tuple, grad_outputs: tuple) -> list:
    """Check user gradients against outputs; seed scalar outputs with ones."""
    grads = []
    for index, (out, grad) in enumerate(zip(outputs, grad_outputs)):
        if isinstance(out, graph.GradientEdge):
            shape, dtype = out.node._in_meta[out.output_nr]
            if grad is None:
                if _numel(shape) != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                grads.append(aten.ones(shape, dtype=from_numpy_dtype(dtype)))
                continue
            out_shape = shape
        else:
            out_shape = out._data.shape
        if grad is None:
            if out._rg:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out._data.dtype.kind != "f":
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype}"
                    )
                # torch.ones_like's binding passes both, so a dispatch mode sees them
                grads.append(aten.ones_like(out, pin_memory=False, memory_format=preserve_format))
            else:
                grads.append(None)
            continue
        if not isinstance(grad, Tensor):
            raise TypeError(
                "gradients can be either Tensors or None, but got " + type(grad).__name__
            )
        if grad._data.shape != out_shape:
            from ..tensor import Size

            raise RuntimeError(
                f"Mismatch in shape: grad_output[{index}] has a shape of "
                f"{grad.shape} and output[{index}] has a shape of {Size(out_shape)}."
            )
        grads.append(grad)
    return grads


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _root_edges(outputs: tuple) -> list:
    edges = []
    for index, out in enumerate(outputs):
        if isinstance(out, graph.GradientEdge):
            edges.append((out.node, out.output_nr))
            continue
        edge = gradient_edge(out)
        if edge is None:
            raise RuntimeError(
                f"element {index} of tensors does not require grad and does not have a grad_fn"
            )
        edges.append(edge)
    return edges


def _input_edge(t) -> tuple:
    """Where the gradient of a requested input is captured: a tensor's edge, or a GradientEdge."""
    if isinstance(t, graph.GradientEdge):
        return (t.node, t.output_nr)
    if not t._rg:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return gradient_edge(t)


_CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak."
)


def run_backward(
    tensors,
    grad_tensors=None,
    retain_graph: Optional[bool] = None,
    create_graph: bool = False,
    grad_variables=None,
    inputs=None,
) -> None:
    """Accumulate into ``.grad`` of the graph leaves the gradient of ``tensors``.

    With ``inputs``, only those tensors' ``.grad`` change (a non-leaf among them
    retains its grad), and only the graph leading to them runs. ``backward`` and
    ``Tensor.backward`` call this once __torch_function__ had its say.
    """
    if (
        tensors.__class__ is Tensor
        and grad_tensors is None
        and grad_variables is None
        and inputs is None
        and not create_graph
        and _tls.plain
    ):
        # The common call, loss.backward(): one root with history, seeded with ones, the
        # plain engine. The seed is aten.ones_like's result, made directly: nobody observes.
        fn = tensors._grad_fn
        data = tensors._data
        if fn is not None and data.size == 1 and data.dtype.kind == "f":
            seed = empty(data.shape, data.dtype)
            seed.fill(1)
            execute_plain((fn, tensors._output_nr), _make(seed), bool(retain_graph))
            return
    import warnings

    outputs = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if len(grads) < len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    grads = grads[: len(outputs)]  # extra gradients are ignored, as in PyTorch
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warnings.warn(_CYCLE_WARNING, UserWarning, stacklevel=3)
    if inputs is not None and len(_as_tuple(inputs)) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    inputs = _as_tuple(inputs)
    root_edges = _root_edges(outputs)
    root_grads = _make_grads(outputs, grads)
    if not inputs:
        execute(root_edges, root_grads, retain_graph, create_graph)
        return
    for t in inputs:  # all checked before any of them is touched
        if not isinstance(t, (Tensor, graph.GradientEdge)):
            raise RuntimeError(
                "all inputs have to be Tensors or GradientEdges, but got " + type(t).__name__
            )
    run_edges, capture_edges = [], []
    for t in inputs:
        if isinstance(t, graph.GradientEdge):
            run_edges.append((t.node, t.output_nr))
        elif not t._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        elif t._grad_fn is None:
            run_edges.append(gradient_edge(t))
        else:
            t.retain_grad()  # the engine stores its gradient through the retains_grad hook
            capture_edges.append(gradient_edge(t))
    execute(
        root_edges,
        root_grads,
        retain_graph,
        create_graph,
        capture_edges,
        run_edges=run_edges,
    )


def run_grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: Optional[bool] = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: Optional[bool] = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
):
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated)."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    as_dict = isinstance(inputs, dict)
    keys = list(inputs.keys()) if as_dict else None
    inputs_tuple = tuple(inputs.values()) if as_dict else _as_tuple(inputs)
    if not inputs_tuple:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if materialize_grads and any(isinstance(t, graph.GradientEdge) for t in inputs_tuple):
        raise RuntimeError(
            "materialize_grads cannot be used when the given input is a GradientEdge"
        )
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(
            f"grad requires one grad_output per output: got {len(grads)} grad_outputs "
            f"and {len(outputs)} outputs"
        )
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        result = _grad_batched(
            outputs, inputs_tuple, grads, retain_graph, create_graph, allow_unused
        )
        return _finish_grad(result, inputs_tuple, keys, create_graph, materialize_grads)
    root_edges = _root_edges(outputs)
    input_edges = [_input_edge(t) for t in inputs_tuple]
    root_grads = _make_grads(outputs, grads)
    captured = execute(root_edges, root_grads, retain_graph, create_graph, input_edges)
    for index, g in enumerate(captured):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {index} appears to not have been used "
                "in the graph. Set allow_unused=True if this is the desired behavior."
            )
    return _finish_grad(captured, inputs_tuple, keys, create_graph, materialize_grads)


def _finish_grad(captured, inputs_tuple, keys, create_graph: bool, materialize_grads: bool):
    result = []
    for t, g in zip(inputs_tuple, captured):
        if g is None and materialize_grads:
            g = aten.zeros_like(t)  # unbatched even with is_grads_batched, as in PyTorch
            if create_graph:
                g.requires_grad_()
        result.append(g)
    if keys is not None:
        return dict(zip(keys, result))
    return tuple(result)


def _grad_batched(outputs, inputs, grads, retain_graph, create_graph, allow_unused) -> list:
    """``grad`` once per row of the batched ``grads`` (PyTorch vmaps it), rows stacked."""
    for index, (out, g) in enumerate(zip(outputs, grads)):
        out_shape = (
            out.node._in_meta[out.output_nr][0]
            if isinstance(out, graph.GradientEdge)
            else out._data.shape
        )
        if g is None or g._data.shape[1:] != out_shape:
            from ..tensor import Size

            shown = Size(g._data.shape[2:]) if g is not None else Size(())
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{index}] has a shape of {shown} and output[{index}] has a "
                f"shape of {Size(out_shape)}. If you only want some tensors in `grad_output` to "
                "be considered batched, consider using vmap."
            )
    batch = grads[0]._data.shape[0]
    rows = [
        run_grad(
            outputs,
            inputs,
            tuple(g[i] for g in grads),
            retain_graph=retain_graph if i == batch - 1 else True,
            create_graph=create_graph,
            allow_unused=allow_unused,
        )
        for i in range(batch)
    ]
    return [None if column[0] is None else aten.stack(list(column), 0) for column in zip(*rows)]


def _tensors_of(*groups) -> list:
    found = []
    for group in groups:
        if group.__class__ is Tensor:
            found.append(group)
            continue
        if isinstance(group, dict):
            group = tuple(group.values())
        found.extend(t for t in _as_tuple(group) if isinstance(t, Tensor))
    return found


def _backward_tensors(args: tuple, kwargs: dict) -> list:
    inputs = args[5] if len(args) > 5 else kwargs.get("inputs")
    return _tensors_of(args[0] if args else kwargs.get("tensors"), inputs)


def _grad_tensors(args: tuple, kwargs: dict) -> list:
    outputs = args[0] if args else kwargs.get("outputs")
    return _tensors_of(outputs, args[1] if len(args) > 1 else kwargs.get("inputs"))


# backward and grad reach TorchFunctionModes and the subclasses among their tensors.
backward = overridable(
    run_backward, builtin=False, relevant=_backward_tensors, name="backward", qualname="backward"
)
grad = overridable(run_grad, builtin=False, relevant=_grad_tensors, name="grad", qualname="grad")
