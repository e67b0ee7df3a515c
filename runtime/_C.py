"""Private engine queries that torch exposes under ``torch._C``."""

from .autograd.engine import current_graph_task, current_node
from .overrides import (  # noqa: F401  (torch._C's __torch_function__ switches)
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_function_impl,
    _is_torch_function_all_disabled,
    _is_torch_function_enabled,
    _is_torch_function_mode_enabled,
    _len_torch_function_stack,
    _pop_mode as _pop_torch_function_stack,
    _push_mode as _push_on_torch_function_stack,
    has_torch_function as _has_torch_function,
    has_torch_function_unary as _has_torch_function_unary,
    has_torch_function_variadic as _has_torch_function_variadic,
)


def _current_autograd_node():
    """The Node being executed by the backward running on this thread, or None."""
    return current_node()


def _will_engine_execute_node(node) -> bool:
    from .autograd.graph import GradientEdge
    from .autograd.node import Node

    task = current_graph_task()
    if task is None:
        raise RuntimeError(
            "_get_should_execute_nodes should only be called during the backward pass"
        )
    if isinstance(node, GradientEdge):
        node = node.node
    if not isinstance(node, Node):
        raise RuntimeError(
            f"_will_engine_execute_node expects an grad_fn, but got {type(node).__name__}"
        )
    return task.will_execute(node)


def _current_graph_task_id() -> int:
    task = current_graph_task()
    return -1 if task is None else task.id
