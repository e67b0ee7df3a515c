"""resize_ and resize_as_ against torch: shapes, strides, the elements kept (in storage
order, from the storage offset), version counters, views, memory formats, the aten calls a
dispatch mode sees, and errors. Elements a resize adds are uninitialised in both libraries,
so only the kept ones are compared."""

from __future__ import annotations

import pytest

import opgrad as og
from torch_oracle import dtype_name, outcome_and_aten_log


def _describe(kept):
    def describe(t):
        return (
            tuple(t.shape),
            t.stride(),
            t.storage_offset(),
            dtype_name(t.dtype),
            t._version,
            t.flatten()[:kept].tolist() if kept else None,
        )

    return describe


def _same(torch, call, kept=0):
    expected = outcome_and_aten_log(torch, call, _describe(kept))
    assert outcome_and_aten_log(og, call, _describe(kept)) == expected


def _arange(L, n=6):
    return L.arange(float(n))


CASES = {
    # (call, how many leading elements both keep)
    "shrink": (lambda L: _arange(L).resize_(2, 2), 4),
    "grow": (lambda L: _arange(L).resize_(3, 3), 6),
    "same_numel": (lambda L: _arange(L).resize_(3, 2), 6),
    "list": (lambda L: _arange(L).resize_([2, 3]), 6),
    "tuple": (lambda L: _arange(L).resize_((2, 3)), 6),
    "size_object": (lambda L: _arange(L).resize_(L.Size([5])), 5),
    "keyword": (lambda L: _arange(L).resize_(size=(4,)), 4),
    "to_empty": (lambda L: _arange(L).resize_(0), 0),
    "to_0dim": (lambda L: _arange(L).resize_([]), 1),
    "zero_sized_dim": (lambda L: _arange(L).resize_(0, 3), 0),
    "int_dtype": (lambda L: L.arange(6).resize_(2, 2), 4),
    "twice": (lambda L: _arange(L).resize_(2).resize_(6), 2),
    # a transposed tensor: its storage order, not its row-major order
    "transposed": (lambda L: _arange(L).view(2, 3).t().resize_(6), 6),
    # resized to its own shape: the strides stay
    "own_shape_keeps_strides": (lambda L: _arange(L).view(2, 3).t().resize_(3, 2), 6),
    "own_shape_contiguous_format": (
        lambda L: _arange(L).view(2, 3).t().resize_(3, 2, memory_format=L.contiguous_format),
        6,
    ),
    "channels_last": (
        lambda L: L.zeros(2, 3, 4, 5).resize_(2, 3, 4, 5, memory_format=L.channels_last),
        0,
    ),
    "channels_last_grow": (
        lambda L: L.zeros(2).resize_(1, 2, 3, 4, memory_format=L.channels_last),
        0,
    ),
    "view_shrink": (lambda L: _arange(L)[2:].resize_(2), 2),
    "view_grow": (lambda L: _arange(L)[2:].resize_(8), 4),
    "resize_as": (lambda L: L.zeros(3, 2).resize_as_(L.ones(2)), 2),
    "resize_as_grow": (lambda L: _arange(L).resize_as_(L.ones(2, 4)), 6),
    "resize_as_function": (lambda L: L.resize_as_(_arange(L), L.ones(4)), 4),
    "resize_as_other_dtype": (
        lambda L: L.zeros(2, 3, dtype=L.int32).resize_as_(L.ones(4, dtype=L.float64)),
        4,
    ),
    # None: contiguous, whatever the template's layout
    "resize_as_ignores_template_layout": (
        lambda L: L.zeros(2).resize_as_(
            L.ones(2, 3, 4, 5).contiguous(memory_format=L.channels_last)
        ),
        0,
    ),
    "resize_as_preserve": (
        lambda L: L.zeros(2).resize_as_(
            L.ones(2, 3, 4, 5).contiguous(memory_format=L.channels_last),
            memory_format=L.preserve_format,
        ),
        0,
    ),
    "resize_as_channels_last": (
        lambda L: L.zeros(2).resize_as_(L.ones(2, 3, 4, 5), memory_format=L.channels_last),
        0,
    ),
    "resize_as_template_requires_grad": (
        lambda L: L.zeros(2).resize_as_(L.ones(3, requires_grad=True)),
        0,
    ),
    # errors
    "requires_grad": (lambda L: L.zeros(2, requires_grad=True).resize_(3), 0),
    "requires_grad_own_shape": (lambda L: L.zeros(2, requires_grad=True).resize_(2), 0),
    "non_leaf": (lambda L: (L.zeros(2, requires_grad=True) * 1).resize_(3), 0),
    "resize_as_requires_grad": (
        lambda L: L.zeros(2, requires_grad=True).resize_as_(L.ones(2)),
        0,
    ),
    "negative": (lambda L: L.zeros(2).resize_(-1), 0),
    "negative_inner": (lambda L: L.zeros(2).resize_(2, -3), 0),
    "preserve_format": (
        lambda L: L.zeros(2).resize_(2, 3, 4, 5, memory_format=L.preserve_format),
        0,
    ),
    "channels_last_rank": (
        lambda L: L.zeros(2).resize_(2, 3, memory_format=L.channels_last),
        0,
    ),
    "channels_last_3d_rank": (
        lambda L: L.zeros(2).resize_as_(L.ones(2, 3, 4, 5), memory_format=L.channels_last_3d),
        0,
    ),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_resize_matches_torch(torch, case):
    call, kept = case
    _same(torch, call, kept)


def test_resize_under_no_grad_still_refuses(torch):
    def scenario(L):
        x = L.zeros(2, requires_grad=True)
        with L.no_grad():
            try:
                x.resize_(3)
            except RuntimeError as exc:
                return str(exc), tuple(x.shape), x._version

    assert scenario(og) == scenario(torch)


def test_shrunk_view_shares_its_base_memory_and_version(torch):
    def scenario(L):
        base = _arange(L)
        view = base[2:]
        view.resize_(2, 1)
        view[0, 0] = 100.0
        return base.tolist(), view._is_view(), base._version, view._version

    assert scenario(og) == scenario(torch)


def test_resized_tensor_with_views_of_its_old_shape(torch):
    """A view made before a shrink keeps reading the same memory."""

    def scenario(L):
        x = _arange(L)
        view = x[3:]
        x.resize_(4)
        x[3] = -1.0
        return view.tolist(), x.tolist(), view._version

    assert scenario(og) == scenario(torch)


def test_detached_alias_resizes_alone(torch):
    def scenario(L):
        a = L.zeros(2, requires_grad=True)
        d = a.detach()
        d.resize_(1)
        return tuple(a.shape), tuple(d.shape), a.requires_grad

    assert scenario(og) == scenario(torch)


def test_grow_keeps_the_old_elements_as_prefix():
    x = og.arange(6.0).view(2, 3)
    x.resize_(4, 4)
    assert x.flatten()[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    x.fill_(7.0)  # the new memory is writable
    assert x.sum().item() == 112.0


def test_refused_resize_to_own_shape_leaves_the_version(torch):
    def scenario(L):
        x = L.zeros(2, 3, 4, 5)
        try:
            x.resize_(2, 3, 4, 5, memory_format=L.preserve_format)
        except RuntimeError as exc:
            return str(exc), x._version, x.stride()

    assert scenario(og) == scenario(torch)
