"""Private engine queries that torch exposes under ``torch._C``."""

from .autograd.engine import current_graph_task, current_node


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
