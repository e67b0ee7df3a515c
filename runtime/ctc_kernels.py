"""Numpy kernels of the CTC loss (PyTorch's LossCTC.cpp on CPU): the forward (alpha)
recursion and the backward (beta) recursion of Graves et al., in log space, vectorised over
the batch and the extended label sequence with a loop over time only.

derivatives.yaml names them as ``k.<name>``: numpy_kernels imports them through loss_kernels.
"""

from __future__ import annotations

import numpy as np

from . import dtypes

__all__ = ["ctc_loss_forward", "ctc_loss_backward"]

_NEG_INF = -np.inf
_CHECKED = " (while checking arguments for ctc_loss_allocate_outputs)"


def _tensor_type_name(dtype) -> str:
    """``opgrad.FloatTensor``: the legacy type name PyTorch's TensorArg checks print."""
    return f"opgrad.{dtypes.scalar_type_name(dtype)}Tensor"


def _lengths(values, name: str, batch_size: int) -> np.ndarray:
    lengths = np.asarray(values, dtype=np.int64).reshape(-1)
    if lengths.size != batch_size:
        raise RuntimeError(f"{name} must be of size batch_size")
    return lengths


def _check(log_probs, targets, input_lengths, target_lengths, blank: int):
    """PyTorch's argument checks, in its order; the lengths as int64 arrays."""
    if log_probs.dtype.kind != "f" or log_probs.dtype == np.float16:
        raise NotImplementedError(
            f"\"ctc_loss_cpu\" not implemented for '{dtypes.scalar_type_name(log_probs.dtype)}'"
        )
    wanted = np.int64 if targets.dtype == np.int64 else np.int32
    if targets.dtype != wanted:
        raise RuntimeError(
            "Expected tensor for argument #2 'targets' to have scalar type "
            f"{dtypes.scalar_type_name(np.dtype(wanted))}; but got "
            f"{_tensor_type_name(targets.dtype)} instead{_CHECKED}"
        )
    if log_probs.ndim != 3:
        raise RuntimeError(
            f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional tensor for "
            f"argument #1 'log_probs'{_CHECKED}"
        )
    if not 1 <= targets.ndim <= 2:
        raise RuntimeError(
            f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor for "
            f"argument #2 'targets'{_CHECKED}"
        )
    max_input_length, batch_size, num_labels = log_probs.shape
    if not 0 <= blank < num_labels:
        raise RuntimeError("blank must be in label range")
    il = _lengths(input_lengths, "input_lengths", batch_size)
    tl = _lengths(target_lengths, "target_lengths", batch_size)
    negative = tl < 0
    if negative.any():
        raise RuntimeError(
            "Expected target_lengths to have value at least 0, but got value "
            f"{tl[negative][0]}{_CHECKED}"
        )
    max_target_length = int(tl.max(initial=0))
    if targets.ndim == 1 and targets.shape[0] != tl.sum():
        raise RuntimeError(
            f"Expected tensor to have size {tl.sum()} at dimension 0, but got size "
            f"{targets.shape[0]} for argument #2 'targets'{_CHECKED}"
        )
    if targets.ndim == 2:
        if targets.shape[0] != batch_size:
            raise RuntimeError(
                f"Expected tensor to have size {batch_size} at dimension 0, but got size "
                f"{targets.shape[0]} for argument #2 'targets'{_CHECKED}"
            )
        if targets.shape[1] < max_target_length:
            raise RuntimeError(
                f"Expected tensor to have size at least {max_target_length} at dimension 1, "
                f"but got size {targets.shape[1]} for argument #2 'targets'{_CHECKED}"
            )
    for bad, bound, word in (
        (il < 0, 0, "least"),
        (il > max_input_length, max_input_length, "most"),
    ):
        if bad.any():
            raise RuntimeError(
                f"Expected input_lengths to have value at {word} {bound}, but got value "
                f"{il[bad][0]}{_CHECKED}"
            )
    return il, tl, max_target_length


def _extended_labels(targets, tl, max_target_length: int, blank: int):
    """Per sample: the label sequence with blanks around and between the targets ("l'",
    2 * max_target_length + 1 long), which positions are in use, and where the recursion
    may skip from s - 2 (a target differing from the one two before)."""
    batch_size = tl.size
    positions = np.arange(max_target_length)
    in_target = positions[None, :] < tl[:, None]
    if targets.ndim == 1:
        offsets = np.concatenate(([0], np.cumsum(tl)[:-1])).astype(np.int64)
        flat = targets.astype(np.int64, copy=False)
        index = np.where(in_target, offsets[:, None] + positions[None, :], 0)
        padded = np.where(in_target, flat[index] if flat.size else 0, 0)
    else:
        padded = np.where(in_target, targets[:, :max_target_length].astype(np.int64), 0)
    width = 2 * max_target_length + 1
    primes = np.full((batch_size, width), blank, np.int64)
    primes[:, 1::2] = padded
    in_use = np.arange(width)[None, :] < (2 * tl + 1)[:, None]
    skip = np.zeros((batch_size, width), bool)
    skip[:, 2:] = primes[:, 2:] != primes[:, :-2]
    return primes, in_use, skip


def _log_add3(a, b, c):
    """log(exp(a) + exp(b) + exp(c)) around their maximum (0 when all are -inf), as
    PyTorch's recursion computes it."""
    top = np.maximum(np.maximum(a, b), c)
    top = np.where(top == _NEG_INF, 0, top)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(a - top) + np.exp(b - top) + np.exp(c - top)) + top


def _shifted(row, by: int):
    """``row[:, s - by]`` (``row[:, s + by]`` for negative ``by``), -inf outside."""
    out = np.full_like(row, _NEG_INF)
    if by > 0:
        out[:, by:] = row[:, :-by]
    else:
        out[:, :by] = row[:, -by:]
    return out


def ctc_loss_forward(log_probs, targets, input_lengths, target_lengths, blank: int, zero_infinity):
    """(neg_log_likelihood per sample, log_alpha (batch, time, 2 * max_target + 1)); entries
    past a sample's input or label length are -inf (PyTorch leaves them unwritten)."""
    il, tl, max_target_length = _check(log_probs, targets, input_lengths, target_lengths, blank)
    primes, in_use, skip = _extended_labels(targets, tl, max_target_length, blank)
    max_input_length, batch_size, _ = log_probs.shape
    width = primes.shape[1]
    batch = np.arange(batch_size)
    log_alpha = np.full((batch_size, max_input_length, width), _NEG_INF, log_probs.dtype)
    if max_input_length:
        log_alpha[:, 0, 0] = log_probs[0, batch, blank]
        if width > 1:
            first = log_probs[0, batch, primes[:, 1]]
            log_alpha[:, 0, 1] = np.where(tl > 0, first, _NEG_INF)
    for t in range(1, max_input_length):
        previous = log_alpha[:, t - 1]
        step = _log_add3(
            previous, _shifted(previous, 1), np.where(skip, _shifted(previous, 2), _NEG_INF)
        )
        step = step + np.take_along_axis(log_probs[t], primes, axis=1)
        log_alpha[:, t] = np.where(in_use & (t < il)[:, None], step, _NEG_INF)
    last = log_alpha[batch, np.maximum(il - 1, 0)]
    last = np.where((il > 0)[:, None], last, _NEG_INF)
    l1 = last[batch, 2 * tl]
    l2 = np.where(tl > 0, last[batch, np.maximum(2 * tl - 1, 0)], _NEG_INF)
    top = np.maximum(l1, l2)
    top = np.where(top == _NEG_INF, 0, top)
    with np.errstate(divide="ignore"):
        log_likelihood = np.log(np.exp(l1 - top) + np.exp(l2 - top)) + top
    return (-log_likelihood).astype(log_probs.dtype), log_alpha


def ctc_loss_backward(
    grad,
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    neg_log_likelihood,
    log_alpha,
    blank: int,
    zero_infinity: bool,
):
    """d loss / d log_probs: exp(lp) - exp(log sum over s with l'[s] = c of alpha * beta
    + nll - lp), times each sample's grad; zero past a sample's input length (and for an
    infinite loss with zero_infinity)."""
    il, tl, max_target_length = _check(log_probs, targets, input_lengths, target_lengths, blank)
    primes, in_use, skip = _extended_labels(targets, tl, max_target_length, blank)
    max_input_length, batch_size, num_labels = log_probs.shape
    width = primes.shape[1]
    batch = np.arange(batch_size)
    log_beta = np.full((batch_size, max_input_length, width), _NEG_INF, log_probs.dtype)
    end = 2 * tl
    skip_ahead = np.zeros_like(skip)
    skip_ahead[:, :-2] = skip[:, 2:]  # l'[s + 2] differs from l'[s]
    next_row = np.full((batch_size, width), _NEG_INF, log_probs.dtype)
    for t in range(max_input_length - 1, -1, -1):
        lp_t = np.take_along_axis(log_probs[t], primes, axis=1)
        start = np.full((batch_size, width), _NEG_INF, log_probs.dtype)
        start[batch, end] = lp_t[batch, end]
        before_end = np.maximum(end - 1, 0)
        start[batch, before_end] = np.where(
            tl > 0, lp_t[batch, before_end], start[batch, before_end]
        )
        step = _log_add3(
            next_row, _shifted(next_row, -1), np.where(skip_ahead, _shifted(next_row, -2), _NEG_INF)
        )
        step = np.where(in_use, step + lp_t, _NEG_INF)
        row = np.where(
            (t == il - 1)[:, None], start, np.where((t < il - 1)[:, None], step, _NEG_INF)
        )
        log_beta[:, t] = row
        next_row = row
    # log sum of alpha * beta over the positions s of each label c, per sample and time
    log_ab = log_alpha + log_beta
    index = (batch[:, None, None], np.arange(max_input_length)[None, :, None], primes[:, None, :])
    top = np.full((batch_size, max_input_length, num_labels), _NEG_INF, log_probs.dtype)
    np.maximum.at(top, index, log_ab)
    safe_top = np.where(top == _NEG_INF, 0, top)
    total = np.zeros_like(top)
    label_top = np.take_along_axis(safe_top, np.broadcast_to(primes[:, None, :], log_ab.shape), 2)
    np.add.at(total, index, np.exp(log_ab - label_top))
    with np.errstate(divide="ignore"):
        collected = np.log(total) + safe_top
    lp = np.moveaxis(log_probs, 1, 0)  # (batch, time, labels)
    nll = neg_log_likelihood.reshape(batch_size, 1, 1)
    g = np.broadcast_to(grad, (batch_size,)).reshape(batch_size, 1, 1)
    with np.errstate(invalid="ignore", over="ignore"):
        result = (np.exp(lp) - np.exp(collected + nll - lp)) * g
    active = np.arange(max_input_length)[None, :] < il[:, None]
    if zero_infinity:
        active &= ~(neg_log_likelihood == np.inf)[:, None]
    result = np.where(active[:, :, None], result, 0)
    return np.ascontiguousarray(np.moveaxis(result, 0, 1)).astype(log_probs.dtype, copy=False)
