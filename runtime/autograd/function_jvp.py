"""Forward mode for ``autograd.Function``: ``jvp`` gives the outputs' tangents.

After ``forward`` (run with forward AD off) and the backward bookkeeping,
``MyFn.jvp(ctx, *input_tangents)`` is called when an input has a tangent;
what it returns is checked as PyTorch does (count, types, views of views,
in-place updates of modified inputs) and set on the outputs.
"""

from __future__ import annotations

from ..tensor import Tensor
from . import forward_grad as fg


def _fw_base_key(tensor) -> int:
    base = fg._forward_base(tensor) if tensor._base is not None else None
    return id(base if base is not None else tensor)


def process_forward_mode(cls, node, args, raw_output, result) -> None:
    grads = [fg.fw_grad(a) if isinstance(a, Tensor) else None for a in args]
    if all(g is None for g in grads):
        node.__dict__.pop("saved_for_forward", None)
        return
    versions = [g._version if g is not None else None for g in grads]
    # where each input's forward base is, to recognize outputs that are views of inputs
    bases = {}
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            bases.setdefault(_fw_base_key(a), i)
            if a._base is not None:
                bases.setdefault(id(a._base), i)

    materialize = getattr(node, "materialize_grads", True)
    tangents = []
    for a, g in zip(args, grads):
        if not isinstance(a, Tensor):
            tangents.append(None)
        elif g is None and materialize and a._data.dtype.kind in "fc":
            tangents.append(fg.zeros_tangent(a))
        else:
            tangents.append(g)

    node._in_jvp = True
    try:
        with fg.suspended():
            out_grads = cls.jvp(node, *tangents)
    finally:
        node._in_jvp = False
        node.__dict__.pop("saved_for_forward", None)
    if not isinstance(out_grads, tuple):
        out_grads = (out_grads,)
    outputs = result if isinstance(result, tuple) else (result,)
    raw_outputs = raw_output if isinstance(raw_output, tuple) else (raw_output,)
    if len(out_grads) != len(outputs):
        raise RuntimeError(
            "Function's jvp returned an invalid number of forward gradients (expected "
            f"{len(outputs)} but got {len(out_grads)})"
        )
    for i, g in enumerate(out_grads):
        if g is not None and not isinstance(g, Tensor):
            raise RuntimeError(
                f"expected Variable or None (got {type(g).__name__}) for grad output {i}."
            )

    dirty = {id(t) for t in (getattr(node, "dirty_tensors", ()) or ())}
    non_diff = {id(t) for t in (getattr(node, "non_differentiable", ()) or ())}
    input_index = {id(a): i for i, a in enumerate(args) if isinstance(a, Tensor)}
    for i, (out, raw, g) in enumerate(zip(outputs, raw_outputs, out_grads)):
        if not isinstance(raw, Tensor):
            continue
        if id(raw) in non_diff or raw._data.dtype.kind not in "fc":
            if g is not None:
                raise RuntimeError(
                    f"Function's jvp returned a gradient at position {i}, but  the "
                    "corresponding forward output is not a differentiable Tensor.You should "
                    "return None at that position instead."
                )
            continue
        # a differentiable output needs a tangent: None fails below as in PyTorch
        if id(out) in dirty:
            k = input_index[id(out)]
            if grads[k] is not None:
                if g is None or g._version == versions[k]:
                    raise RuntimeError(
                        "An inplace custom Function is not modifying the forward mode gradients "
                        "inplace. If the forward is modifying an input inplace, then the jvp "
                        "function must modify the corresponding gradient inplace."
                    )
                if g is not grads[k]:
                    raise RuntimeError(
                        "An inplace custom Function is not returning the forward mode gradients "
                        "as-is. If the forward is modifying an input inplace, then the jvp "
                        "function must modify the gradient inplace and return it as-is."
                    )
            else:
                fg.check_new_tangent(g)
                fg.set_fw_grad_inplace(out, g)
            continue
        if out._base is not None:
            k = bases.get(_fw_base_key(out))
            if k is not None:
                _check_view_tangent(grads[k], g)
                if grads[k] is None:
                    fg.check_new_tangent(g)
                    fg.set_fw_grad_inplace(out, g)
                    continue
        fg.check_new_tangent(g)
        fg.set_fw_grad(out, g)


def _check_view_tangent(input_grad, grad) -> None:
    """An output that views an input needs a tangent that views the input's tangent."""
    if input_grad is None:
        return
    if grad is None:  # PyTorch asks an undefined tensor whether it is a view
        raise RuntimeError("cannot call get_autograd_meta() on undefined tensor")
    if grad._base is None:
        raise RuntimeError(
            "A custom Function's forward is returning a view (or an input as-is) but the jvp "
            "is not returning a view."
        )
    if input_grad._base is not None:
        if input_grad._base is not grad._base:
            raise RuntimeError(
                "A custom Function is returning a view but the jvp is not returning a view of "
                "the same base as the given grad input."
            )
    elif input_grad is not grad._base:
        raise RuntimeError(
            "A custom Function is returning a view but the jvp is not returning a view of the "
            "given grad input."
        )
