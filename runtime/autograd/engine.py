"""The backward engine: runs a graph task iteratively, newest node first.

1. A GraphTask counts, for every node reachable from the root edges, the edges pointing
   at it (its dependencies).
2. With ``inputs=``, a PrunedGraphTask marks the nodes on a path to an input (``needed``)
   and captures the gradients that arrive at the inputs' edges.
3. ``GraphTask.run`` routes the root gradients (``execute``: a GraphRoot hands them out;
   ``execute_plain``, ``loss.backward()`` in the plain state: its one seed makes the loss's
   node ready at once), then repeats until no node is ready: pop the ready node with the
   highest sequence number (PyTorch's ready-queue order), run it, route its outputs into
   the input buffers of the nodes they point at (``GraphTask.route``). A node is ready
   once all its gradients have arrived; its input buffer sums them.
"""

from __future__ import annotations

import itertools
from heapq import heappop, heappush, heapreplace
from sys import getrefcount
from typing import Dict, Optional, Sequence

from .._tls import state as _tls
from . import anomaly, functions_manual
from .hooks import run_post_hooks, run_pre_hooks, run_tensor_pre_hooks
from .accumulate import ONLY_THE_LIST, accumulate_grad
from .node import AccumulateGrad, GraphRoot, Node, edge_parts


def _references_of_a_local() -> int:
    grad = object()
    return getrefcount(grad)


#: What ``route`` counts for a gradient held by its local name alone (besides the
#: node's outputs, discounted): more means another holder, from whom a leaf copies.
ONLY_THE_NAME = _references_of_a_local()


def _validate_output(node: Node, index: int, grad, target: Node, input_nr: int):
    shape, dtype = target._in_meta[input_nr]
    data = grad._data
    if data.shape != shape:
        if not _is_expandable_to(shape, data.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(data.shape)} but expected shape compatible with {list(shape)}"
            )
        reduced = None
        if target.__class__ is AccumulateGrad and target._hooks is None:
            if target.variable._meta is None:  # a leaf without hooks: no one sees a view
                reduced = functions_manual.sum_to_detached(grad, shape)
        grad = functions_manual.sum_to(grad, shape) if reduced is None else reduced
    if dtype is not None and grad._data.dtype != dtype:  # None: a leaf's grad_dtype of None
        from ..generated import ops as aten

        grad = aten._to_copy(grad, dtype=_opgrad_dtype(dtype))
    return grad


def _validate_outputs(node: Node, outputs, edges):
    """``outputs`` with every routed gradient reduced and cast to its input's metadata."""
    validated = None
    for index, edge in enumerate(edges):
        grad = outputs[index]
        if grad is None or edge is None:
            continue
        target, input_nr = edge_parts(edge)
        shape, dtype = target._in_meta[input_nr]
        data = grad._data
        if data.shape != shape or data.dtype != dtype:
            if validated is None:
                validated = list(outputs)
            validated[index] = _validate_output(node, index, grad, target, input_nr)
    return outputs if validated is None else validated


def _opgrad_dtype(npdtype):
    from ..dtypes import from_numpy_dtype

    return from_numpy_dtype(npdtype)


def _is_expandable_to(shape: tuple, desired: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``desired``."""
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True


def _pruned(edges, captures, needed) -> tuple:
    """``edges`` with None for each one a pruned task (autograd.grad, backward(inputs=))
    does not route along. Routing skips a None edge, and a node's apply computes the
    gradients its ``needs`` marks truthy: the pruned edges serve as both."""
    pruned = []
    for edge in edges:
        if edge is not None:
            target = edge_parts(edge)[0]
            if not (target in captures or needed.get(target, False)):
                edge = None
        pruned.append(edge)
    return tuple(pruned)


def _compute_needed(root: Node, capture_nodes: set) -> Dict[Node, bool]:
    """Which nodes lie on a path from ``root`` to a capture node (iterative post-order)."""
    needed: Dict[Node, bool] = {}
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            result = False
            for edge in node._next_edges:
                if edge is not None:
                    target = edge_parts(edge)[0]
                    if target in capture_nodes or needed.get(target, False):
                        result = True
            needed[node] = result
            continue
        if node in needed:
            continue
        needed[node] = False  # provisional; graphs are acyclic
        stack.append((node, True))
        for edge in node._next_edges:
            if edge is not None:
                target = edge_parts(edge)[0]
                if target not in needed:
                    stack.append((target, False))
    return needed


_task_ids = itertools.count()


class GraphTask:
    """One backward call and all the engine's state for it: the gradients each node still
    waits for, the input buffers, the ready queue, the final callbacks and the node
    running now. It runs every node reachable from the root edges."""

    __slots__ = (
        "dependencies",
        "buffers",
        "ready",
        "counter",
        "callbacks",
        "current_node",
        "id",
        "needed",
        "captures",
        "captured",
    )

    def __init__(self, root_edges: Sequence) -> None:
        # Count, for every node reachable from the root edges, the edges pointing at it.
        # Counted here, not in a helper: a plain backward makes one call less.
        dependencies: Dict[Node, int] = {}
        stack = [root_edges]  # edges still to walk, a node's at a time
        while stack:
            for edge in stack.pop():
                if edge is not None:
                    target = edge[0] if edge.__class__ is tuple else edge
                    if target in dependencies:
                        dependencies[target] += 1
                    else:  # first visit
                        dependencies[target] = 1
                        stack.append(target._next_edges)
        self.dependencies = dependencies
        self.buffers: Dict[Node, list] = {}
        # a heap of (-sequence number, arrival counter, node, gradients): the most recently
        # created node first, first come first served among equals
        self.ready: list = []
        self.counter = 0
        self.callbacks: list = []
        self.current_node = None
        self.id = next(_task_ids)
        # Nothing pruned: PrunedGraphTask sets these.
        self.needed: Optional[Dict[Node, bool]] = None
        self.captures: Optional[Dict[Node, list]] = None
        self.captured: Sequence = ()

    def will_execute(self, node) -> bool:
        """Whether ``node`` runs in this task (PyTorch's _will_engine_execute_node)."""
        if node not in self.dependencies:
            return False
        if self.needed is None:
            return True
        return self.needed.get(node, False) or node in self.captures

    def run(self, root, upcoming, grad_mode: bool, keep_graph: bool) -> Sequence:
        """Route the gradients of ``root``, a GraphRoot, or (the plain path, with ``root``
        None) start from ``upcoming``, the ready entry of the node the seed feeds. Then,
        until no node is ready: pop the next ready node, run it, route its outputs. Then the
        final callbacks. Returns the captured gradients.

        The pop and run steps stay inline, not methods: they happen once per node, and a
        call per node would cost more than the rest of the engine's work on it."""
        tls = _tls
        tasks = tls.graph_tasks
        depth = len(tasks)
        previous_grad_mode = tls.grad_enabled
        needed, ready = self.needed, self.ready
        try:
            # inside the try: the finally undoes them wherever an exception strikes
            tasks.append(self)
            tls.grad_enabled = grad_mode
            if root is not None:
                edges = root._next_edges
                if needed is not None:
                    edges = _pruned(edges, self.captures, needed)
                # As PyTorch, every root gradient is validated before any is routed, and the
                # root holds the converted ones, so that no leaf's AccumulateGrad steals one.
                root.grads = _validate_outputs(root, root.grads, edges)
                upcoming = self.route(root, root.grads, edges)
            while True:
                # Pop the next node to run: the most recently created one first.
                while True:
                    if upcoming is not None:
                        if ready and ready[0] < upcoming:
                            upcoming = heapreplace(ready, upcoming)
                        _, _, node, grads = upcoming
                        upcoming = None
                    elif ready:
                        _, _, node, grads = heappop(ready)
                    else:
                        for callback in self.callbacks:  # sees those queued meanwhile
                            callback()
                        return self.captured
                    self.current_node = node
                    hooked = node._hooks is not None  # read once: a class attribute is slow
                    if hooked:
                        grads = run_tensor_pre_hooks(node, grads)
                    elif (
                        node.__class__ is AccumulateGrad
                        and node.variable._meta is None
                        and needed is None
                    ):
                        # A leaf without hooks stores its gradient right here: no call to
                        # apply, and no outputs to route.
                        if grads[0] is not None:
                            # asked before this frame holds it, as AccumulateGrad.apply asks
                            stealable = getrefcount(grads[0]) == ONLY_THE_LIST
                            accumulate_grad(node.variable, grads[0], stealable)
                        continue
                    if needed is None or self.runs(node, grads):
                        break

                # Run it.
                edges = node._next_edges
                if needed is not None:
                    edges = _pruned(edges, self.captures, needed)
                if hooked:
                    grads = run_pre_hooks(node, grads)
                    outputs = run_post_hooks(node, node.apply(grads, edges), grads)
                else:
                    outputs = node.apply(grads, edges)
                # The node's incoming gradients are spent: a gradient it passed through
                # unchanged is now held by its outputs alone, and a leaf may steal it.
                grads = None
                if anomaly.enabled:
                    anomaly.check_outputs(node, outputs)
                if not keep_graph and node._releasable_slots:
                    node.release_variables()

                # Route its outputs.
                upcoming = self.route(node, outputs, edges)
                # A leaf's AccumulateGrad counts who else holds its gradient: not this frame.
                outputs = None
        except BaseException as error:
            if anomaly.enabled and self.current_node is not None:
                anomaly.report(self.current_node, error)
            raise
        finally:
            del tasks[depth:]
            tls.grad_enabled = previous_grad_mode

    def route(self, node, outputs, edges) -> Optional[tuple]:
        """Add each of ``outputs`` into the input buffer of the node its edge points at (an
        output whose edge is None goes nowhere), validated first against that input's shape
        and dtype. A node whose last gradient arrived becomes ready: the first one is
        returned as its ready entry rather than pushed, since most steps make one node
        ready and it runs next without a trip through the heap."""
        count = len(outputs)
        if count != len(edges):
            raise RuntimeError(
                f"function {node.name()} returned an incorrect number of gradients "
                f"(expected {len(edges)}, got {count})"
            )
        buffers = self.buffers
        if count > 2 or (count == 2 and buffers):
            # PyTorch validates every output (sum_to, dtype) before routing any, so the
            # reductions come before the additions of the routing below. Routing
            # validates each output just before it is added; that order differs only
            # when an addition precedes a later output's validation: with a gradient
            # already waiting in a buffer, or with three outputs or more.
            outputs = _validate_outputs(node, outputs, edges)
        dependencies = self.dependencies
        upcoming = None
        index = -1
        for edge in edges:
            index += 1  # cheaper than enumerate() over a node's one or two edges
            if edge is None:
                continue
            if edge.__class__ is tuple:
                target, input_nr = edge
            else:
                target, input_nr = edge, 0
            grad = outputs[index]
            if grad is not None:
                data = grad._data
                shape, dtype = target._in_meta[input_nr]
                if data.shape != shape or data.dtype != dtype:
                    grad = _validate_output(node, index, grad, target, input_nr)
            remaining = dependencies[target] - 1
            if remaining == 0 and len(target._in_meta) == 1:
                # The common case: a single-input node gets its last gradient. (Its count,
                # now zero, is never read again: not stored.)
                buffer = buffers.pop(target, None) if buffers else None
                if buffer is None:
                    if (
                        target.__class__ is AccumulateGrad
                        and grad is not None
                        and target.variable._grad is None
                        and target._hooks is None
                        and target.variable._meta is None
                        and getrefcount(grad) - (grad is outputs[index]) == ONLY_THE_NAME
                        and self.needed is None
                        and _tls.plain
                    ):
                        # A leaf's first gradient, which nobody else holds, is stored here
                        # rather than by the leaf's node, which would run next anyway (it
                        # outranks every other). Nothing can tell: no gradient is added
                        # into, there are no hooks and no inputs=, and in the plain state
                        # no dispatch mode sees current_node() differ meanwhile.
                        accumulate_grad(target.variable, grad, True)
                        continue
                    buffer = [grad]
                elif grad is not None:
                    previous = buffer[0]
                    buffer[0] = grad if previous is None else previous + grad
            else:
                dependencies[target] = remaining
                buffer = buffers.get(target)
                if buffer is None:
                    buffer = buffers[target] = [None] * len(target._in_meta)
                if grad is not None:
                    previous = buffer[input_nr]
                    buffer[input_nr] = grad if previous is None else previous + grad
                if remaining:
                    continue
                del buffers[target]
            entry = (-target._seq, self.counter, target, buffer)
            self.counter += 1
            if upcoming is None:
                upcoming = entry
            else:
                heappush(self.ready, entry)
        return upcoming


class PrunedGraphTask(GraphTask):
    """A task that runs only the nodes on a path to given inputs. ``capture_edges``
    (autograd.grad's inputs) get the gradients arriving at them captured, in order; their
    nodes run only their tensor hooks. ``run_edges`` (backward's leaf inputs) lead to
    nodes that run; backward's non-leaf inputs come as capture edges whose nodes also run
    their node pre-hooks."""

    __slots__ = ("backward_inputs",)

    def __init__(self, root: Node, capture_edges: Sequence, run_edges: Optional[Sequence]) -> None:
        super().__init__(root._next_edges)
        captures: Dict[Node, list] = {}
        self.captures = captures
        self.captured = [None] * len(capture_edges)
        for position, edge in enumerate(capture_edges):
            if edge is not None:
                captures.setdefault(edge[0], []).append((edge[1], position))
        targets = set(captures) | {edge[0] for edge in run_edges or ()}
        needed = self.needed = _compute_needed(root, targets)
        for edge in run_edges or ():
            needed[edge[0]] = True
        # backward(inputs=) returns nothing: its capture edges only mark where to stop, and
        # holding their gradients would stop a leaf from storing one without a copy.
        self.backward_inputs = run_edges is not None

    def runs(self, node: Node, grads: list) -> bool:
        """For a task pruned to inputs, at a popped node: capture the gradients arriving at
        an input of autograd.grad, run the node pre-hooks of backward's non-leaf input
        that stops here, and tell whether the node runs."""
        targets = self.captures.get(node)
        if targets is not None and not self.backward_inputs:
            captured = self.captured
            for input_nr, position in targets:
                captured[position] = grads[input_nr]
        if self.needed.get(node, False):
            return True
        if self.backward_inputs and node._hooks is not None and targets is not None:
            run_pre_hooks(node, grads)
        return False


def current_graph_task():
    stack = _tls.graph_tasks
    return stack[-1] if stack else None


def queue_callback(callback) -> None:
    task = current_graph_task()
    if task is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    task.callbacks.append(callback)


def execute(
    root_edges: Sequence,
    root_grads: Sequence,
    keep_graph: bool,
    create_graph: bool,
    capture_edges: Optional[Sequence] = None,
    run_edges: Optional[Sequence] = None,
) -> Sequence:
    """Run backward from ``root_edges`` seeded with ``root_grads``.

    With ``capture_edges`` (autograd.grad's inputs) only the nodes leading to
    them run, and the gradients arriving at each edge are returned in order;
    their nodes run only their tensor hooks. With ``run_edges`` (backward's
    leaf inputs) the nodes leading to them run, those nodes included; the
    capture edges of backward (non-leaf inputs) also run their node pre-hooks.
    """
    root = GraphRoot(tuple(root_edges), tuple(root_grads))
    if capture_edges is None and run_edges is None:
        task = GraphTask(root._next_edges)
    else:
        task = PrunedGraphTask(root, capture_edges or (), run_edges)
    return task.run(root, None, create_graph, keep_graph)


def execute_plain(root_edge: tuple, root_grad, keep_graph: bool) -> None:
    """``loss.backward()`` in the plain state: one root edge, no ``inputs=``, no
    create_graph. As ``execute`` without a GraphRoot: a seed that fits its input needs no
    validation, and a leaf never steals it, since the caller holds it."""
    target, input_nr = root_edge
    shape, dtype = target._in_meta[input_nr]
    data = root_grad._data
    if data.shape != shape or data.dtype != dtype:
        execute((root_edge,), (root_grad,), keep_graph, False)
        return
    # Nothing else in the graph leads to the loss's node: the seed makes it ready at once,
    # no routing needed. (Its entry is popped before any other exists, so its arrival
    # counter never breaks a tie.)
    grads = [None] * len(target._in_meta)
    grads[input_nr] = root_grad
    GraphTask((root_edge,)).run(None, (-target._seq, 0, target, grads), False, keep_graph)


class ExecutionEngine:
    """``Variable._execution_engine``: the engine's queries PyTorch exposes."""

    @staticmethod
    def queue_callback(callback) -> None:
        queue_callback(callback)


def current_node():
    """The node the engine is running on this thread (None outside backward)."""
    task = current_graph_task()
    return task.current_node if task is not None else None
