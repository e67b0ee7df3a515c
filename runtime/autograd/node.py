"""Graph nodes: the base class of every grad_fn, AccumulateGrad and the engine's root."""

from __future__ import annotations

import itertools
import weakref
from sys import getrefcount
from typing import NamedTuple, Optional, Tuple

from . import anomaly
from .accumulate import ONLY_THE_LIST, accumulate_grad
from .hooks import grad_numpy_dtype, run_post_accumulate_hooks
from .saved_variable import FREED, SavedVariable

_new = object.__new__

#: the thread-shared counter behind every node's sequence number
sequence_nr_counter = itertools.count()
_sequence = sequence_nr_counter
#: PyTorch gives AccumulateGrad the largest sequence number (UINT64_MAX).
ACCUMULATE_GRAD_SEQUENCE_NR = 2**64 - 1


class InputMetadata(NamedTuple):
    shape: tuple
    dtype: object


class Node:
    """A function of the backward graph (``opgrad.autograd.graph.Node``).

    ``_next_edges`` holds, per differentiable forward input, its edge or None when
    that input needs no gradient. An edge is stored flat: the node itself when the
    gradient enters it at input 0 (nearly always), else ``(node, input_nr)``; one tuple
    less per op. ``edge_parts`` reads either form. ``_in_meta`` holds, per
    forward output, the ``(shape, numpy dtype)`` its incoming gradient must have.
    """

    __slots__ = ("_next_edges", "_in_meta", "_seq", "__dict__", "__weakref__")
    _hooks = None
    _metadata = None

    #: names of the slots holding SavedVariables (generated per class)
    _releasable_slots: Tuple[str, ...] = ()

    def __init__(self) -> None:
        self._seq = next(_sequence)
        self._next_edges = ()
        self._in_meta = ()

    def name(self) -> str:
        return type(self).__name__

    def _sequence_nr(self) -> int:
        return self._seq

    @property
    def _input_metadata(self) -> list:
        """Shape and dtype each incoming gradient must have (one per forward output)."""
        from ..dtypes import from_numpy_dtype
        from ..tensor import Size

        return [
            InputMetadata(Size(shape), from_numpy_dtype(dtype)) if dtype is not None else None
            for shape, dtype in self._in_meta
        ]

    @property
    def next_functions(self) -> tuple:
        return tuple(edge_parts(e) if e is not None else (None, 0) for e in self._next_edges)

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def apply(self, grads: tuple, needs: tuple) -> tuple:
        """Gradients for each next edge from the gradients of this node's outputs."""
        raise NotImplementedError

    def __call__(self, *grads):
        expected = len(self._in_meta)
        if len(grads) != expected:
            raise TypeError(f"expected {expected} arguments, got {len(grads)} instead")
        needs = tuple(e is not None for e in self._next_edges)
        result = self.apply(list(grads), needs)
        return result[0] if len(result) == 1 else tuple(result)

    def release_variables(self) -> None:
        """Free what the node saved (after a backward without retain_graph): a tensor
        saved as itself gives way to FREED, a SavedVariable lets go of its data."""
        for slot in self._releasable_slots:
            saved = getattr(self, slot)
            if saved is None:
                continue
            if saved.__class__ is SavedVariable:
                saved._tensor = saved._hooks = None
            elif saved.__class__ is tuple:
                for item in saved:
                    if item is not None:
                        item._tensor = item._hooks = None
            else:
                setattr(self, slot, FREED)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after the node; it may return new grad_inputs."""
        from .hooks import register_node_hook

        return register_node_hook(self, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before the node; it may return new grad_outputs."""
        from .hooks import register_node_prehook

        return register_node_prehook(self, fn)

    @property
    def requires_grad(self) -> bool:
        return True


class AccumulateGrad(Node):
    """Sink of a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        self._seq = ACCUMULATE_GRAD_SEQUENCE_NR
        self._next_edges = ()
        self._in_meta = ((variable._data.shape, grad_numpy_dtype(variable)),)
        self.variable = variable

    def name(self) -> str:
        return "opgrad::autograd::AccumulateGrad"

    def apply(self, grads: list, needs: tuple) -> tuple:
        if grads[0] is None:
            return ()
        # Nobody but the engine's list holds the gradient: asked before this frame holds it
        # too, as accumulate.references counts.
        stealable = getrefcount(grads[0]) == ONLY_THE_LIST
        accumulate_grad(self.variable, grads[0], stealable)
        if self.variable._meta is not None:
            run_post_accumulate_hooks(self.variable)
        return ()


class GraphRoot(Node):
    """The engine's entry node: hands out the root gradients."""

    __slots__ = ("grads",)

    def __init__(self, edges: tuple, grads: tuple) -> None:
        self._seq = ACCUMULATE_GRAD_SEQUENCE_NR
        self._next_edges = edges
        self._in_meta = ()
        self.grads = grads

    def name(self) -> str:
        return "GraphRoot"

    def apply(self, grads: tuple, needs: tuple) -> tuple:
        return self.grads


def grad_accumulator(tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad, weakly cached on the tensor as in PyTorch."""
    ref = tensor._grad_acc
    node = ref() if ref is not None else None
    if node is None:
        node = _new(AccumulateGrad)  # AccumulateGrad(tensor), one call less per leaf and step
        node._seq = ACCUMULATE_GRAD_SEQUENCE_NR
        node._next_edges = ()
        data = tensor._data
        # a leaf with metadata may have a grad_dtype of its own
        dtype = data.dtype if tensor._meta is None else grad_numpy_dtype(tensor)
        node._in_meta = ((data.shape, dtype),)
        node.variable = tensor
        if tensor._meta is not None:
            node._hooks = True  # the leaf's tensor or post-accumulate hooks
        tensor._grad_acc = weakref.ref(node)
    return node


def leaf_edge(tensor) -> Optional[AccumulateGrad]:
    """The stored edge of a tensor without grad_fn: its AccumulateGrad, or None."""
    if not tensor._rg:
        return None
    ref = tensor._grad_acc
    if ref is not None:
        node = ref()  # the common case, inline: a leaf used again
        if node is not None:
            return node
    return grad_accumulator(tensor)


def next_edge(tensor):
    """What a node's ``_next_edges`` stores for an input ``tensor`` (see Node)."""
    fn = tensor._grad_fn
    if fn is not None:
        output_nr = tensor._output_nr
        return fn if output_nr == 0 else (fn, output_nr)
    return leaf_edge(tensor)


def edge_parts(edge) -> tuple:
    """``(node, input_nr)`` of a stored edge."""
    return edge if edge.__class__ is tuple else (edge, 0)


def gradient_edge(tensor) -> Optional[tuple]:
    """``(node, input_nr)`` through which a gradient reaches ``tensor``, or None."""
    fn = tensor._grad_fn
    if fn is not None:
        return (fn, tensor._output_nr)
    if tensor._rg:
        return (grad_accumulator(tensor), 0)
    return None


def set_history(result, grad_fn: Node) -> None:
    """Make ``result`` the single output of ``grad_fn`` (integral results get no history)."""
    if result._data.dtype.kind != "f":
        return
    result._grad_fn = grad_fn  # a fresh result: its output_nr is already 0
    result._rg = True
    grad_fn._in_meta = ((result._data.shape, result._data.dtype),)
    if anomaly.enabled:
        anomaly.record_forward(grad_fn)


def set_history_multi(results, grad_fn: Node, differentiable=None) -> None:
    """Make each of ``results`` an output of ``grad_fn`` (output_nr = its position)."""
    metadata = []
    if differentiable is None:
        differentiable = (True,) * len(results)
    for nr, (result, is_diff) in enumerate(zip(results, differentiable)):
        if result is None:  # an undefined result (a masked-out gradient) has no history
            metadata.append(((), None))
            continue
        if is_diff and result._data.dtype.kind == "f":
            result._grad_fn = grad_fn
            if nr:
                result._output_nr = nr
            result._rg = True
        metadata.append((result._data.shape, result._data.dtype))
    grad_fn._in_meta = tuple(metadata)
    if anomaly.enabled:
        anomaly.record_forward(grad_fn)
