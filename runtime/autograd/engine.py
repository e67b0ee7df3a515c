"""The backward engine: runs a graph task iteratively, newest node first.

1. A GraphRoot node hands out the root gradients.
2. Dependencies: count, for every reachable node, the edges pointing at it.
3. With ``inputs=``, mark the nodes on a path to an input (``needed``) and
   capture the gradients that arrive at the inputs' edges.
4. A node runs once all its gradients have arrived (input buffers sum them),
   highest sequence number first, as PyTorch orders its ready queue.
"""

from __future__ import annotations

import heapq
import itertools
from sys import getrefcount
from typing import Dict, List, Optional, Sequence

from .._tls import state as _tls
from . import anomaly, functions_manual
from .hooks import run_post_hooks, run_pre_hooks, run_tensor_pre_hooks
from .accumulate import ONLY_THE_LIST, accumulate_grad
from .node import AccumulateGrad, GraphRoot, Node, edge_parts


def _validate_output(node: Node, index: int, grad, target: Node, input_nr: int):
    shape, dtype = target._in_meta[input_nr]
    data = grad._data
    if data.shape != shape:
        if not _is_expandable_to(shape, data.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(data.shape)} but expected shape compatible with {list(shape)}"
            )
        grad = functions_manual.sum_to(grad, shape)
    if grad._data.dtype != dtype:
        from ..generated import ops as aten

        grad = aten._to_copy(grad, dtype=_opgrad_dtype(dtype))
    return grad


def _validate_outputs(node: Node, outputs, edges, needs):
    """``outputs`` with every routed gradient reduced and cast to its input's metadata."""
    validated = None
    for index, edge in enumerate(edges):
        grad = outputs[index]
        if grad is None or not needs[index]:
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


def _compute_dependencies(root: Node) -> Dict[Node, int]:
    dependencies: Dict[Node, int] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for edge in node._next_edges:
            if edge is not None:
                target = edge[0] if edge.__class__ is tuple else edge
                count = dependencies.get(target)
                if count is None:  # first visit (the root is never a target)
                    dependencies[target] = 1
                    stack.append(target)
                else:
                    dependencies[target] = count + 1
    return dependencies


def _needs(edges, captures, needed) -> list:
    """Per edge, whether a pruned task (autograd.grad, backward(inputs=)) routes along it."""
    targets = [edge_parts(e)[0] if e is not None else None for e in edges]
    return [t is not None and (t in captures or needed.get(t, False)) for t in targets]


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


def _dependencies_from(start: Node) -> Dict[Node, int]:
    """``_compute_dependencies`` for a single root edge into ``start``."""
    dependencies: Dict[Node, int] = {start: 1}
    stack = [start]
    while stack:
        node = stack.pop()
        for edge in node._next_edges:
            if edge is not None:
                target = edge[0] if edge.__class__ is tuple else edge
                count = dependencies.get(target)
                if count is None:
                    dependencies[target] = 1
                    stack.append(target)
                else:
                    dependencies[target] = count + 1
    return dependencies


_task_ids = itertools.count()


class GraphTask:
    """One backward call: what the engine knows while it runs (callbacks, the
    current node, which nodes it will execute)."""

    __slots__ = ("dependencies", "needed", "captures", "callbacks", "current_node", "id")

    def __init__(self, dependencies, needed, captures) -> None:
        self.dependencies = dependencies
        self.needed = needed
        self.captures = captures
        self.callbacks: list = []
        self.current_node = None
        self.id = next(_task_ids)

    def will_execute(self, node) -> bool:
        """Whether ``node`` runs in this task (PyTorch's _will_engine_execute_node)."""
        if node not in self.dependencies:
            return False
        if self.needed is None:
            return True
        return self.needed.get(node, False) or node in self.captures


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
) -> List:
    """Run backward from ``root_edges`` seeded with ``root_grads``.

    With ``capture_edges`` (autograd.grad's inputs) only the nodes leading to
    them run, and the gradients arriving at each edge are returned in order;
    their nodes run only their tensor hooks. With ``run_edges`` (backward's
    leaf inputs) the nodes leading to them run, those nodes included; the
    capture edges of backward (non-leaf inputs) also run their node pre-hooks.
    """
    root = GraphRoot(tuple(root_edges), tuple(root_grads))
    dependencies = _compute_dependencies(root)

    needed = None
    captures: Dict[Node, list] = {}
    captured: List = []
    if capture_edges is not None or run_edges is not None:
        capture_edges = capture_edges or ()
        captured = [None] * len(capture_edges)
        for position, edge in enumerate(capture_edges):
            if edge is not None:
                captures.setdefault(edge[0], []).append((edge[1], position))
        targets = set(captures) | {edge[0] for edge in run_edges or ()}
        needed = _compute_needed(root, targets)
        for edge in run_edges or ():
            needed[edge[0]] = True
    # backward(inputs=) returns nothing: its capture edges only mark where to stop, and
    # holding their gradients would stop a leaf from storing one without a copy.
    backward_inputs = run_edges is not None

    task = GraphTask(dependencies, needed, captures)
    buffers: Dict[Node, list] = {}
    ready: list = []
    counter = 0
    tls = _tls
    # A leaf's AccumulateGrad stores an incoming gradient without a copy only when
    # nobody else references it. The root keeps its gradients (PyTorch never steals
    # them), and so does this list the root gradients converted to an input's dtype.
    converted_root_grads: list = []
    previous_grad_mode = tls.grad_enabled
    tasks = tls.graph_tasks
    depth = len(tasks)
    heappush, heappop, heapreplace = heapq.heappush, heapq.heappop, heapq.heapreplace
    upcoming = None  # a ready entry not (yet) pushed onto the heap
    node = root
    outputs = root.grads
    try:
        # inside the try: the finally undoes them wherever an exception strikes
        tasks.append(task)
        tls.grad_enabled = create_graph
        while True:
            # Route this node's outputs along its edges; a target whose last
            # gradient arrived becomes ready.
            edges = node._next_edges
            if needed is None:
                needs = edges  # an edge is truthy exactly when its input needs a gradient
            else:
                needs = _needs(edges, captures, needed)
            count = len(outputs)
            if count != len(edges):
                raise RuntimeError(
                    f"function {node.name()} returned an incorrect number of gradients "
                    f"(expected {len(edges)}, got {count})"
                )
            if node is not root and (count > 2 or (count == 2 and buffers)):
                # PyTorch validates every output (sum_to, dtype) before routing any, so the
                # reductions come before the additions of the routing below. Routing
                # validates each output just before it is added; that order differs only
                # when an addition precedes a later output's validation: with a gradient
                # already waiting in a buffer, or with three outputs or more.
                outputs = _validate_outputs(node, outputs, edges, needs)
            for index, edge in enumerate(edges):
                if not needs[index]:
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
                        if node is root:
                            converted_root_grads.append(grad)
                remaining = dependencies[target] - 1
                dependencies[target] = remaining
                if remaining == 0 and input_nr == 0 and len(target._in_meta) == 1:
                    # The common case: a single-input node gets its only gradient.
                    buffer = buffers.pop(target, None)
                    if buffer is None:
                        buffer = [grad]
                    elif grad is not None:
                        previous = buffer[0]
                        buffer[0] = grad if previous is None else previous + grad
                else:
                    buffer = buffers.get(target)
                    if buffer is None:
                        buffer = buffers[target] = [None] * len(target._in_meta)
                    if grad is not None:
                        previous = buffer[input_nr]
                        buffer[input_nr] = grad if previous is None else previous + grad
                    if remaining:
                        continue
                    del buffers[target]
                entry = (-target._seq, counter, target, buffer)
                counter += 1
                if upcoming is None:
                    upcoming = entry  # most steps make one node ready: skip the heap
                else:
                    heappush(ready, entry)

            # Drop this frame's references to the routed gradients: a leaf's
            # AccumulateGrad counts who else holds its gradient.
            outputs = grad = data = buffer = previous = entry = None

            # Run the next ready node: the most recently created one first.
            while True:
                if upcoming is not None:
                    if ready and ready[0] < upcoming:
                        upcoming = heapreplace(ready, upcoming)
                    _, _, node, grads = upcoming
                    upcoming = None
                elif ready:
                    _, _, node, grads = heappop(ready)
                else:
                    for callback in task.callbacks:
                        callback()
                    return captured
                task.current_node = node
                if node._hooks is not None:
                    grads = run_tensor_pre_hooks(node, grads)
                if needed is None:
                    break
                targets = captures.get(node)
                if targets is not None and not backward_inputs:
                    for input_nr, position in targets:
                        captured[position] = grads[input_nr]
                if needed.get(node, False):
                    break
                if backward_inputs and node._hooks is not None and targets is not None:
                    run_pre_hooks(node, grads)
            if needed is None:
                node_needs = node._next_edges
            else:
                node_needs = _needs(node._next_edges, captures, needed)
            if node._hooks is None:
                outputs = node.apply(grads, node_needs)
            else:
                grads = run_pre_hooks(node, grads)
                outputs = run_post_hooks(node, node.apply(grads, node_needs), grads)
            if anomaly.enabled:
                anomaly.check_outputs(node, outputs)
            if not keep_graph and node._releasable_slots:
                node.release_variables()
    except BaseException as error:
        if anomaly.enabled and task.current_node is not None:
            anomaly.report(task.current_node, error)
        raise
    finally:
        del tasks[depth:]
        tls.grad_enabled = previous_grad_mode


def execute_plain(root_edge: tuple, root_grad, keep_graph: bool) -> None:
    """``loss.backward()`` in the plain state: one root edge, no ``inputs=``, no
    create_graph, no anomaly mode. As ``execute`` without its captures and pruning, and
    a leaf's AccumulateGrad without hooks runs inline."""
    target, input_nr = root_edge
    shape, dtype = target._in_meta[input_nr]
    data = root_grad._data
    if data.shape != shape or data.dtype != dtype:
        execute((root_edge,), (root_grad,), keep_graph, False)
        return
    dependencies = _dependencies_from(target)
    task = GraphTask(dependencies, None, {})
    buffers: Dict[Node, list] = {}
    ready: list = []
    counter = 0
    tls = _tls
    previous_grad_mode = tls.grad_enabled
    tasks = tls.graph_tasks
    depth = len(tasks)
    heappush, heappop, heapreplace = heapq.heappush, heapq.heappop, heapq.heapreplace
    upcoming = None
    node = None
    edges = (root_edge,)
    # The root's gradient stays held by root_grad: as PyTorch, a leaf never steals it.
    outputs = (root_grad,)
    try:
        tasks.append(task)
        tls.grad_enabled = False
        while True:
            count = len(outputs)
            if count != len(edges):
                raise RuntimeError(
                    f"function {node.name()} returned an incorrect number of gradients "
                    f"(expected {len(edges)}, got {count})"
                )
            if count > 2 or (count == 2 and buffers):
                outputs = _validate_outputs(node, outputs, edges, edges)  # as execute
            for index, edge in enumerate(edges):
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
                dependencies[target] = remaining
                if remaining == 0 and input_nr == 0 and len(target._in_meta) == 1:
                    buffer = buffers.pop(target, None)
                    if buffer is None:
                        buffer = [grad]
                    elif grad is not None:
                        previous = buffer[0]
                        buffer[0] = grad if previous is None else previous + grad
                else:
                    buffer = buffers.get(target)
                    if buffer is None:
                        buffer = buffers[target] = [None] * len(target._in_meta)
                    if grad is not None:
                        previous = buffer[input_nr]
                        buffer[input_nr] = grad if previous is None else previous + grad
                    if remaining:
                        continue
                    del buffers[target]
                entry = (-target._seq, counter, target, buffer)
                counter += 1
                if upcoming is None:
                    upcoming = entry
                else:
                    heappush(ready, entry)
            # A leaf's AccumulateGrad counts who else holds its gradient: not this frame.
            outputs = grad = data = buffer = previous = entry = None

            while True:
                if upcoming is not None:
                    if ready and ready[0] < upcoming:
                        upcoming = heapreplace(ready, upcoming)
                    _, _, node, grads = upcoming
                    upcoming = None
                elif ready:
                    _, _, node, grads = heappop(ready)
                else:
                    for callback in task.callbacks:
                        callback()
                    return
                task.current_node = node
                if node._hooks is not None:
                    grads = run_tensor_pre_hooks(node, grads)
                    edges = node._next_edges
                    grads = run_pre_hooks(node, grads)
                    outputs = run_post_hooks(node, node.apply(grads, edges), grads)
                    break
                if node.__class__ is AccumulateGrad and node.variable._meta is None:
                    if grads[0] is not None:
                        # asked before this frame holds it, as AccumulateGrad.apply asks
                        stealable = getrefcount(grads[0]) == ONLY_THE_LIST
                        accumulate_grad(node.variable, grads[0], stealable)
                    continue
                edges = node._next_edges
                outputs = node.apply(grads, edges)
                break
            if not keep_graph and node._releasable_slots:
                node.release_variables()
    finally:
        del tasks[depth:]
        tls.grad_enabled = previous_grad_mode


class ExecutionEngine:
    """``Variable._execution_engine``: the engine's queries PyTorch exposes."""

    @staticmethod
    def queue_callback(callback) -> None:
        queue_callback(callback)


def current_node():
    """The node the engine is running on this thread (None outside backward)."""
    task = current_graph_task()
    return task.current_node if task is not None else None
