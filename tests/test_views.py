"""View ops against PyTorch: shared memory, ``_base``, ``_is_view()``, versions, grads.

Every view op in the table runs on the same (2, 3, 4) float64 tensor in both
libraries. A view shares memory with its base, points ``_base`` at the root
base, shares the base's version counter, and gets PyTorch's grad_fn.
"""

import numpy as np
import pytest

import opgrad as og
from torch_oracle import as_numpy, message, node_type_name, rng_for

SHAPE = (2, 3, 4)

# (id, make the view from (lib, base), writable: True when an in-place op
# through the view is allowed, False for expanded views, which PyTorch refuses
# to write, None for overlapping windows, which it writes without a check)
VIEW_OPS = [
    ("view", lambda L, t: t.view(6, 4), True),
    ("view_inferred_size", lambda L, t: t.view(-1, 3), True),
    ("view_as", lambda L, t: t.view_as(t), True),
    ("reshape_contiguous", lambda L, t: t.reshape(4, 6), True),
    ("reshape_noncontiguous_view", lambda L, t: t[:, :, ::2].reshape(6, 2), True),
    ("flatten", lambda L, t: t.flatten(1), True),
    ("select", lambda L, t: t.select(1, 2), True),
    ("select_negative", lambda L, t: t.select(-1, -1), True),
    ("getitem_int", lambda L, t: t[1], True),
    ("getitem_negative_int", lambda L, t: t[-1, -2], True),
    ("getitem_slice", lambda L, t: t[:, 1:3], True),
    ("getitem_step", lambda L, t: t[..., ::2], True),
    ("getitem_none_ellipsis", lambda L, t: t[None, ..., 1], True),
    ("getitem_mixed", lambda L, t: t[1, :, None, 2:], True),
    ("getitem_full_slice", lambda L, t: t[:], True),
    ("narrow", lambda L, t: t.narrow(2, 1, 2), True),
    ("transpose", lambda L, t: t.transpose(0, 2), True),
    ("transpose_negative", lambda L, t: t.transpose(-1, -2), True),
    ("t_of_a_row", lambda L, t: t[0].t(), True),
    ("permute", lambda L, t: t.permute(2, 0, 1), True),
    ("expand", lambda L, t: t[:, :1].expand(2, 3, 4), False),
    ("expand_new_dims", lambda L, t: t[0, 0].expand(5, 4), False),
    ("expand_as", lambda L, t: t[:1].expand_as(t), False),
    ("squeeze_dim", lambda L, t: t[:, :1].squeeze(1), True),
    ("squeeze_all", lambda L, t: t[:1, :1].squeeze(), True),
    ("unsqueeze", lambda L, t: t.unsqueeze(1), True),
    ("unsqueeze_negative", lambda L, t: t.unsqueeze(-1), True),
    ("diagonal", lambda L, t: t.diagonal(0, 1, 2), True),
    ("diagonal_offset", lambda L, t: t.diagonal(1, 1, 2), True),
    ("diagonal_of_matrix", lambda L, t: t[0].diagonal(), True),
    ("unbind", lambda L, t: t.unbind(1)[1], True),
    ("split", lambda L, t: t.split(2, dim=2)[1], True),
    ("split_sizes", lambda L, t: t.split([1, 3], dim=2)[1], True),
    ("chunk", lambda L, t: t.chunk(2, dim=2)[0], True),
    ("unfold", lambda L, t: t.unfold(2, 2, 2), True),
    ("unfold_overlapping", lambda L, t: t.unfold(2, 2, 1), None),
    ("as_strided", lambda L, t: t.as_strided((3, 2), (4, 1), 1), True),
    ("alias", lambda L, t: L.ops.aten.alias(t), True),
]
IDS = [c[0] for c in VIEW_OPS]
ALL = pytest.mark.parametrize("name, make, writable", VIEW_OPS, ids=IDS)
WRITABLE = [c for c in VIEW_OPS if c[2]]
READ_ONLY = [c for c in VIEW_OPS if c[2] is False]


def plain(lib):
    """A (2, 3, 4) float64 tensor that does not require grad."""
    return lib.tensor(np.arange(24, dtype=np.float64).reshape(SHAPE))


def leaf(lib):
    data = rng_for("views", SHAPE).standard_normal(SHAPE)
    return lib.tensor(data, requires_grad=True)


def weights(lib, shape):
    return lib.tensor(rng_for("weights", tuple(shape)).standard_normal(tuple(shape)))


def both(torch):
    return (og, torch)


# ---------------------------------------------------------------------------
# Values and memory


@ALL
def test_view_values_match_torch(torch, name, make, writable):
    got, expected = (make(lib, plain(lib)) for lib in both(torch))
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(as_numpy(got), as_numpy(expected))


@ALL
def test_view_strides_match_torch(torch, name, make, writable):
    got, expected = (make(lib, plain(lib)) for lib in both(torch))
    assert tuple(got.stride()) == tuple(expected.stride())
    assert got.is_contiguous() == expected.is_contiguous()


@ALL
def test_view_storage_offset_matches_torch(torch, name, make, writable):
    got, expected = (make(lib, plain(lib)) for lib in both(torch))
    assert got.storage_offset() == expected.storage_offset()


@ALL
def test_writing_the_base_shows_through_the_view(torch, name, make, writable):
    seen = []
    for lib in both(torch):
        base = plain(lib)
        view = make(lib, base)
        base.mul_(-1).add_(100)
        seen.append(as_numpy(view).copy())
    np.testing.assert_array_equal(seen[0], seen[1])


@pytest.mark.parametrize("name, make, writable", WRITABLE, ids=[c[0] for c in WRITABLE])
def test_writing_through_the_view_changes_the_base(torch, name, make, writable):
    bases = []
    for lib in both(torch):
        base = plain(lib)
        make(lib, base).mul_(-1)
        bases.append(as_numpy(base).copy())
    np.testing.assert_array_equal(bases[0], bases[1])
    assert (bases[1] < 0).any()


@pytest.mark.parametrize("name, make, writable", WRITABLE, ids=[c[0] for c in WRITABLE])
def test_writing_the_view_numpy_array_changes_the_base(torch, name, make, writable):
    bases = []
    for lib in both(torch):
        base = plain(lib)
        make(lib, base).numpy()[...] = -7.0
        bases.append(as_numpy(base).copy())
    np.testing.assert_array_equal(bases[0], bases[1])


@pytest.mark.parametrize("name, make, writable", READ_ONLY, ids=[c[0] for c in READ_ONLY])
def test_inplace_through_an_overlapping_view_raises_like_torch(torch, name, make, writable):
    messages = []
    for lib in both(torch):
        base = plain(lib)
        view = make(lib, base)
        with pytest.raises(RuntimeError) as info:
            view.add_(1)
        messages.append(message(info.value))
        np.testing.assert_array_equal(as_numpy(base), as_numpy(plain(lib)))
        assert base._version == 0
    assert messages[0] == messages[1]
    assert "more than one element of the written-to tensor refers to a single memory" in messages[1]


# ---------------------------------------------------------------------------
# _base, _is_view(), version counter


@ALL
def test_view_base_is_the_tensor_it_was_taken_from(torch, name, make, writable):
    for lib in both(torch):
        base = plain(lib)
        view = make(lib, base)
        assert view._base is base
        assert view._is_view()
        assert base._base is None and not base._is_view()


@ALL
def test_view_of_a_view_points_to_the_root_base(torch, name, make, writable):
    for lib in both(torch):
        root = plain(lib)
        middle = root.view_as(root)
        view = make(lib, middle)
        assert middle._base is root
        assert view._base is root


@ALL
def test_inplace_on_the_base_bumps_the_view_version(torch, name, make, writable):
    versions = []
    for lib in both(torch):
        base = plain(lib)
        view = make(lib, base)
        base.add_(1)
        versions.append((base._version, view._version))
    assert versions[0] == versions[1] == (1, 1)


@pytest.mark.parametrize("name, make, writable", WRITABLE, ids=[c[0] for c in WRITABLE])
def test_inplace_on_the_view_bumps_the_base_version(torch, name, make, writable):
    versions = []
    for lib in both(torch):
        base = plain(lib)
        view = make(lib, base)
        view.add_(1)
        view.mul_(2)
        versions.append((base._version, view._version))
    assert versions[0] == versions[1] == (2, 2)


@ALL
def test_view_of_plain_tensor_has_no_grad_fn(torch, name, make, writable):
    for lib in both(torch):
        view = make(lib, plain(lib))
        assert view.grad_fn is None and not view.requires_grad and view.is_leaf


# ---------------------------------------------------------------------------
# Autograd through views


@ALL
def test_view_grad_fn_name_matches_torch(torch, name, make, writable):
    got, expected = (make(lib, leaf(lib) * 1) for lib in both(torch))
    assert node_type_name(got.grad_fn) == node_type_name(expected.grad_fn)
    assert got.requires_grad and not got.is_leaf


@ALL
def test_view_of_a_leaf_that_requires_grad_has_the_leaf_as_base(torch, name, make, writable):
    for lib in both(torch):
        x = leaf(lib)
        view = make(lib, x)
        assert view._base is x
        assert view.requires_grad and view.grad_fn is not None


@ALL
def test_gradient_through_the_view_matches_torch(torch, name, make, writable):
    grads = []
    for lib in both(torch):
        x = leaf(lib)
        view = make(lib, x * 1)
        (view * weights(lib, view.shape)).sum().backward()
        grads.append(as_numpy(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@ALL
def test_view_in_no_grad_is_a_view_without_grad_fn(torch, name, make, writable):
    for lib in both(torch):
        base = leaf(lib) * 1
        with lib.no_grad():
            view = make(lib, base)
        assert view._is_view() and view._base is base
        assert view.grad_fn is None


MULTI = [
    ("unbind", lambda t: t.unbind(1), 3),
    ("split", lambda t: t.split(3, dim=2), 2),
    ("split_uneven", lambda t: t.split(3, dim=1), 1),
    ("split_sizes", lambda t: t.split([1, 3], dim=2), 2),
    ("chunk", lambda t: t.chunk(3, dim=2), 2),
    ("chunk_dim0", lambda t: t.chunk(2), 2),
]


@pytest.mark.parametrize("name, split, count", MULTI, ids=[c[0] for c in MULTI])
def test_every_output_of_a_multi_output_view_op_is_a_view_of_the_base(torch, name, split, count):
    shapes = []
    for lib in both(torch):
        base = plain(lib)
        parts = split(base)
        assert isinstance(parts, tuple) and len(parts) == count
        assert all(p._base is base and p._is_view() for p in parts)
        shapes.append([tuple(p.shape) for p in parts])
    assert shapes[0] == shapes[1]


@pytest.mark.parametrize("name, split, count", MULTI, ids=[c[0] for c in MULTI])
def test_multi_output_view_grad_fns_and_gradients_match_torch(torch, name, split, count):
    results = []
    for lib in both(torch):
        x = leaf(lib)
        parts = split(x * 1)
        names = [node_type_name(p.grad_fn) for p in parts]
        loss = sum((p * weights(lib, p.shape)).sum() for p in parts[::2])
        loss.backward()
        results.append((names, as_numpy(x.grad)))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


# ---------------------------------------------------------------------------
# Results that are not views


NOT_VIEWS = [
    ("reshape_of_transposed", lambda L, t: t.transpose(0, 1).reshape(6, 4)),
    ("flatten_of_transposed", lambda L, t: t.transpose(1, 2).flatten()),
    ("index_list", lambda L, t: t[[0, 1, 1]]),
    ("index_tensor", lambda L, t: t[:, L.tensor([2, 0])]),
    ("bool_mask", lambda L, t: t[t > 5]),
    ("contiguous_of_transposed", lambda L, t: t.transpose(0, 1).contiguous()),
    ("clone", lambda L, t: t.clone()),
]


@pytest.mark.parametrize("name, make", NOT_VIEWS, ids=[c[0] for c in NOT_VIEWS])
def test_copying_results_are_not_views_and_do_not_share_memory(torch, name, make):
    for lib in both(torch):
        base = plain(lib)
        out = make(lib, base)
        assert not out._is_view() and out._base is None
        before = as_numpy(out).copy()
        base.add_(1000)
        np.testing.assert_array_equal(as_numpy(out), before)
        assert out._version == 0


@pytest.mark.parametrize("name, make", NOT_VIEWS, ids=[c[0] for c in NOT_VIEWS])
def test_copying_results_grad_fn_names_match_torch(torch, name, make):
    got, expected = (make(lib, leaf(lib) * 1) for lib in both(torch))
    assert node_type_name(got.grad_fn) == node_type_name(expected.grad_fn)


def test_view_of_non_contiguous_tensor_raises_like_torch(torch):
    messages = []
    for lib in both(torch):
        with pytest.raises(RuntimeError) as info:
            plain(lib).transpose(0, 1).view(24)
        messages.append(message(info.value))
    assert messages[0] == messages[1]
    assert messages[1].startswith("view size is not compatible with input tensor's size and stride")


def test_negative_slice_step_raises_like_torch(torch):
    messages = []
    for lib in both(torch):
        with pytest.raises(ValueError) as info:
            plain(lib)[::-1]
        messages.append(message(info.value))
    assert messages[0] == messages[1] == "step must be greater than zero"


def test_integer_tensor_views_share_memory(torch):
    for lib in both(torch):
        base = lib.arange(6).view(2, 3)
        base[1].add_(10)
        assert base.tolist() == [[0, 1, 2], [13, 14, 15]]
        assert base._version == 1


# ---------------------------------------------------------------------------
# detach()


def test_detach_is_not_a_view_but_shares_memory(torch):
    for lib in both(torch):
        b = leaf(lib) * 1
        d = b.detach()
        assert d._base is None and not d._is_view()
        assert d.grad_fn is None and not d.requires_grad and d.is_leaf
        d.zero_()
        assert (as_numpy(b) == 0).all()


def test_detach_shares_the_version_counter_both_ways(torch):
    versions = []
    for lib in both(torch):
        b = leaf(lib) * 1
        d = b.detach()
        d.add_(1)
        first = (b._version, d._version)
        with lib.no_grad():
            b.mul_(2)
        versions.append(first + (b._version, d._version))
    assert versions[0] == versions[1] == (1, 1, 2, 2)


def test_detach_of_a_view_is_not_a_view_and_shares_the_base_counter(torch):
    results = []
    for lib in both(torch):
        base = leaf(lib) * 1
        d = base[0].detach()
        d.mul_(3)
        results.append((d._is_view(), d._base is None, base._version, d._version))
        np.testing.assert_allclose(as_numpy(base[0]), as_numpy(d))
    assert results[0] == results[1] == (False, True, 1, 1)


def test_view_of_a_detached_tensor_has_the_detached_tensor_as_base(torch):
    for lib in both(torch):
        d = (leaf(lib) * 1).detach()
        v = d[1]
        assert v._base is d and v.grad_fn is None


def test_empty_as_strided_may_start_past_the_storage(torch):
    # torch takes any storage offset for an empty view, past the storage's end too
    for lib in both(torch):
        view = lib.zeros(3).as_strided((0, 2), (1, 1), 100)
        assert tuple(view.shape) == (0, 2) and tuple(view.stride()) == (1, 1)
        assert view.storage_offset() == 100


# Views with no elements keep the position PyTorch gives them (numpy would restart an
# empty slice at its dim's start and refuse to place a view past its buffer's end).
EMPTY_VIEWS = [
    ("getitem_empty_slice", lambda t: t[:, 2:2]),
    ("getitem_start_past_end", lambda t: t[:, 5:1]),
    ("getitem_empty_slice_with_step", lambda t: t[..., 3:3:2]),
    ("narrow_to_nothing", lambda t: t.narrow(2, 3, 0)),
    ("split_sizes_empty_last_piece", lambda t: t.split([1, 3, 0], dim=2)[2]),
    ("unbind_of_an_empty_slice", lambda t: t[:, 1:1].unbind(0)[1]),
    ("as_strided_past_the_end", lambda t: t.as_strided((2, 0), (3, 1), 30)),
    ("slice_of_a_view_past_the_end", lambda t: t.as_strided((2, 0), (3, 1), 30)[1:]),
]


@pytest.mark.parametrize("make", [c[1] for c in EMPTY_VIEWS], ids=[c[0] for c in EMPTY_VIEWS])
def test_empty_view_keeps_torch_storage_offset_and_strides(torch, make):
    got, expected = (make(plain(lib)) for lib in both(torch))
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.storage_offset() == expected.storage_offset()
    assert tuple(got.stride()) == tuple(expected.stride())
