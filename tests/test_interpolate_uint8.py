"""uint8 bilinear and bicubic resampling (with and without antialias, and lanczos) against
torch, bit for bit: PyTorch computes uint8 images in int16 fixed point, and opgrad
reproduces its weights, rounding and clamping exactly, in both memory formats, on the
OpInfo samples and on many random images and sizes."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import assert_same_error

_AA_OPS = {
    "bilinear": "_upsample_bilinear2d_aa",
    "bicubic": "_upsample_bicubic2d_aa",
    "lanczos": "_upsample_lanczos2d_aa",
}
_PLAIN_OPS = {"bilinear": "upsample_bilinear2d", "bicubic": "upsample_bicubic2d"}


def _tensors(torch, x: np.ndarray, channels_last: bool):
    t, o = torch.tensor(x), og.tensor(x)
    if channels_last:
        t = t.contiguous(memory_format=torch.channels_last)
        o = o.contiguous(memory_format=og.channels_last)
    return o, t


def _assert_bit_exact(got, want, what=""):
    assert str(got.dtype) == "opgrad.uint8", what
    assert tuple(got.stride()) == tuple(want.stride()), what
    np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=str(what))


# ---- the OpInfo samples ----------------------------------------------------------------------


def _opinfo_samples(torch, name, variant):
    from torch.testing._internal.common_methods_invocations import op_db

    (opinfo,) = [o for o in op_db if o.name == name and o.variant_test_name == variant]
    torch.manual_seed(0)
    return opinfo, list(opinfo.sample_inputs("cpu", torch.uint8, requires_grad=False))


def _opgrad_value(torch, value):
    if isinstance(value, torch.Tensor):
        o = og.tensor(value.contiguous().numpy())
        if value.is_contiguous(memory_format=torch.channels_last) and not value.is_contiguous():
            o = o.contiguous(memory_format=og.channels_last)
        return o
    if isinstance(value, torch.Size):
        return og.Size(value)
    return value


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_opinfo_uint8_samples_are_bit_exact(torch, mode):
    opinfo, samples = _opinfo_samples(torch, "nn.functional.interpolate", mode)
    assert samples
    for i, s in enumerate(samples):
        want = torch.nn.functional.interpolate(s.input, *s.args, **s.kwargs)
        args = [_opgrad_value(torch, a) for a in s.args]
        got = og.nn.functional.interpolate(_opgrad_value(torch, s.input), *args, **s.kwargs)
        _assert_bit_exact(got, want, (mode, i))


def test_upsample_bilinear2d_aa_opinfo_uint8_samples_are_bit_exact(torch):
    opinfo, samples = _opinfo_samples(torch, "_upsample_bilinear2d_aa", "")
    for i, s in enumerate(samples):
        want = torch.ops.aten._upsample_bilinear2d_aa(s.input, *s.args, **s.kwargs)
        kwargs = {k: _opgrad_value(torch, v) for k, v in s.kwargs.items()}
        got = og.ops.aten._upsample_bilinear2d_aa(_opgrad_value(torch, s.input), **kwargs)
        _assert_bit_exact(got, want, i)


# ---- a 32 x 32 image, down and up --------------------------------------------------------


@pytest.mark.parametrize("channels_last", [False, True], ids=["contiguous", "channels_last"])
@pytest.mark.parametrize("antialias", [False, True], ids=["plain", "antialias"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_32x32_image_down_and_up_is_bit_exact(torch, mode, antialias, channels_last):
    if mode == "lanczos" and not antialias:
        pytest.skip("lanczos needs antialias")
    x = np.random.default_rng(21).integers(0, 256, (1, 3, 32, 32)).astype(np.uint8)
    o, t = _tensors(torch, x, channels_last)
    for align_corners in ([False] if mode == "lanczos" else [False, True]):
        for kwargs in (
            {"size": (13, 17)},
            {"size": (45, 64)},
            {"scale_factor": 0.37},
            {"scale_factor": (2.6, 0.8)},
            {"scale_factor": 0.5, "recompute_scale_factor": True},
        ):
            call = dict(mode=mode, antialias=antialias, align_corners=align_corners, **kwargs)
            want = torch.nn.functional.interpolate(t, **call)
            got = og.nn.functional.interpolate(o, **call)
            _assert_bit_exact(got, want, call)


# ---- many random images and sizes -----------------------------------------------------------


def _random_cases(seed, count):
    rng = np.random.default_rng(seed)
    for trial in range(count):
        antialias = bool(trial % 2)
        modes = ["bilinear", "bicubic", "lanczos"] if antialias else ["bilinear", "bicubic"]
        mode = modes[(trial // 2) % len(modes)]
        channels = int(rng.integers(1, 7))  # up to 4 and over 4 take different kernels in torch
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        channels_last = bool(rng.integers(0, 2))
        align_corners = bool(rng.integers(0, 2))
        if trial % 3 == 0:
            scales = [float(v) for v in rng.uniform(0.1, 3.0, 2)]
            size = [max(1, int(h * scales[0])), max(1, int(w * scales[1]))]
        else:
            scales = [None, None]
            size = [int(v) for v in rng.integers(1, 45, 2)]
        x = rng.integers(0, 256, (2, channels, h, w)).astype(np.uint8)
        op = (_AA_OPS if antialias else _PLAIN_OPS)[mode]
        yield op, x, size, align_corners, scales, channels_last


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_images_and_sizes_are_bit_exact(torch, seed):
    for op, x, size, align_corners, scales, channels_last in _random_cases(seed, 250):
        o, t = _tensors(torch, x, channels_last)
        want = getattr(torch.ops.aten, op)(t, size, align_corners, *scales)
        got = getattr(og.ops.aten, op)(o, size, align_corners, *scales)
        _assert_bit_exact(got, want, (op, x.shape, size, align_corners, scales, channels_last))


def test_large_downscale_is_bit_exact(torch):
    x = np.random.default_rng(22).integers(0, 256, (1, 3, 270, 210)).astype(np.uint8)
    o, t = _tensors(torch, x, False)
    for mode in ("bilinear", "bicubic", "lanczos"):
        want = torch.nn.functional.interpolate(t, size=(7, 130), mode=mode, antialias=True)
        got = og.nn.functional.interpolate(o, size=(7, 130), mode=mode, antialias=True)
        _assert_bit_exact(got, want, mode)


@pytest.mark.parametrize("channels", [3, 6], ids=["vectorised_kernel", "generic_kernel"])
def test_one_pixel_wide_output_is_bit_exact(torch, channels):
    # torch's generic kernel (over 4 channels) repeats the first row here; its vectorised
    # one (up to 4 channels) does not
    x = np.random.default_rng(23).integers(0, 256, (2, channels, 12, 9)).astype(np.uint8)
    for antialias in (False, True):
        o, t = _tensors(torch, x, False)
        call = dict(size=(5, 1), mode="bilinear", antialias=antialias)
        _assert_bit_exact(
            og.nn.functional.interpolate(o, **call),
            torch.nn.functional.interpolate(t, **call),
            call,
        )


def test_uint8_backward_is_refused_as_torch(torch):
    assert_same_error(
        torch,
        lambda lib: lib.ops.aten._upsample_bicubic2d_aa_backward(
            lib.zeros(1, 1, 2, 2, dtype=lib.uint8), [2, 2], [1, 1, 4, 4], False
        ),
        NotImplementedError,
        "\"upsample_bicubic2d_aa_backward_cpu\" not implemented for 'Byte'",
    )


@pytest.mark.parametrize("mode, shape", [("linear", (1, 1, 4)), ("trilinear", (1, 1, 2, 4, 4))])
def test_uint8_linear_and_trilinear_are_refused_as_torch(torch, mode, shape):
    assert_same_error(
        torch,
        lambda lib: lib.nn.functional.interpolate(
            lib.zeros(*shape, dtype=lib.uint8), scale_factor=2, mode=mode
        ),
        NotImplementedError,
        "not implemented for 'Byte'",
    )
