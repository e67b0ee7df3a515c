"""rand/randn's CPU kernels: PyTorch's uniform and normal samplers over the mt19937 stream.

Every kernel draws its 32-bit words in the order PyTorch's serial CPU kernels do, and
rounds where they round, so a seed gives PyTorch's values bit for bit:

* uniform: float32 keeps the low 24 bits of one word, float64 the low 53 bits of two
  (first word high); times 2**-24 / 2**-53.
* normal, fewer than 16 values or a non-contiguous result: double Box-Muller per pair of
  values, the second value cached in the generator for the next call.
* normal, 16 or more contiguous values: all values drawn uniform first, then each block of
  16 turned into normals (first half cosines, second half sines), the last partial block
  redrawn as a fresh 16. float16 runs float32's transform block by block and rounds; its
  partial last block is never drawn before the fresh 16. float64 uses libm (as PyTorch's std::log/cos/sin do). float32
  follows PyTorch's AVX2 kernel (cephes polynomials in single precision, fused
  multiply-adds where its compiler fused them), which PyTorch runs on x86 CPUs with AVX2
  and FMA (AVX-512 ones too); elsewhere, or with ATEN_CPU_CAPABILITY=default, PyTorch
  calls single-precision libm per value, which this module rounds from double precision:
  within one float32 ulp of PyTorch, not always bit for bit.
"""

from __future__ import annotations

import math
import os

import numpy as np

from .random import Generator


def _torch_runs_avx2_normal() -> bool:
    """Whether PyTorch picks its AVX2 normal kernel on this machine (its dispatch needs
    AVX2 and FMA3; ATEN_CPU_CAPABILITY=default turns vector kernels off)."""
    if os.environ.get("ATEN_CPU_CAPABILITY", "").lower() == "default":
        return False
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as features
    return bool(features.get("AVX2") and features.get("FMA3"))


_AVX2 = _torch_runs_avx2_normal()

_F32 = np.float32
_LOW24 = np.uint64(0xFFFFFF)
_LOW21 = np.uint64(0x1FFFFF)
_SHIFT32 = np.uint64(32)


def uniform(gen: Generator, count: int, dtype: np.dtype) -> np.ndarray:
    """``count`` values in [0, 1) (at::uniform_real_distribution(0, 1)); float16 rounds
    float32's values, and one that rounds up to 1 becomes 0, as in PyTorch."""
    if dtype == np.float16:
        values = uniform(gen, count, np.dtype(_F32)).astype(np.float16)
        values[values == 1] = 0
        return values
    if dtype == np.float32:
        return (gen._words(count) & _LOW24).astype(_F32) * _F32(2.0**-24)
    words = gen._words(2 * count)
    mantissa = ((words[0::2] & _LOW21) << _SHIFT32) | words[1::2]  # random64's low 53 bits
    return mantissa.astype(np.float64) * 2.0**-53


def normal(gen: Generator, count: int, dtype: np.dtype, contiguous: bool = True) -> np.ndarray:
    """``count`` standard normal values, by the path PyTorch's normal kernel takes."""
    if count >= 16 and contiguous:
        if dtype == np.float16:
            return _fill_by_blocks(gen, count).astype(np.float16)
        if dtype == np.float32:
            return _fill(gen, count, dtype, _normal_16_avx2 if _AVX2 else _normal_16_single)
        return _fill(gen, count, dtype, _normal_16_double)
    values = _box_muller_double(gen, count)
    # float16 is built from a float: the double rounds to float32 first
    return values.astype(_F32).astype(dtype) if dtype == np.float16 else values.astype(dtype)


# ---- per-value path -------------------------------------------------------------------------


def _box_muller_double(gen: Generator, count: int) -> np.ndarray:
    """at::normal_distribution<double>, called ``count`` times in a row."""
    out = np.empty(count, np.float64)
    start = 0
    if count and gen._next_double is not None:
        out[0], gen._next_double = gen._next_double, None
        start = 1
    pairs = (count - start + 1) // 2
    if pairs:
        draws = uniform(gen, 2 * pairs, np.float64)
        u1, u2 = draws[0::2], draws[1::2]
        radius = np.sqrt(-2.0 * np.array([math.log1p(-u) for u in u2.tolist()]))
        theta = 2.0 * math.pi * u1
        values = np.empty(2 * pairs, np.float64)
        values[0::2] = radius * np.cos(theta)
        values[1::2] = radius * np.sin(theta)
        out[start:] = values[: count - start]
        if (count - start) % 2:
            gen._next_double = float(values[-1])
    return out + 0.0  # x * std + mean with std 1, mean 0: -0.0 becomes 0.0


# ---- filled path ----------------------------------------------------------------------------


def _fill(gen: Generator, count: int, dtype: np.dtype, normal_16) -> np.ndarray:
    whole = count - count % 16
    redraw = 16 if whole != count else 0  # the last 16 values again, from 16 fresh draws
    # Every draw precedes every transform, so one batch holds the blocks and the redraw.
    draws = uniform(gen, count + redraw, dtype)
    blocks = np.concatenate([draws[:whole], draws[count:]]).reshape(-1, 16)
    normals = normal_16(blocks).reshape(-1)
    data = np.concatenate([normals[:whole], draws[whole:count]])
    if redraw:
        data[count - 16 :] = normals[whole:]
    return data


def _fill_by_blocks(gen: Generator, count: int) -> np.ndarray:
    """float16's filled path, in float32 block by block: 16 draws per whole block, and for
    a partial last block 16 fresh draws whose normals overwrite the last 16 values (the
    leftover values are never drawn, unlike float32's path)."""
    whole = count - count % 16
    draws = uniform(gen, whole + (16 if whole != count else 0), np.dtype(_F32))
    normal_16 = _normal_16_avx2 if _AVX2 else _normal_16_single
    normals = normal_16(draws.reshape(-1, 16)).reshape(-1)
    if whole == count:
        return normals
    return np.concatenate([normals[: count - 16], normals[whole:]])


def _normal_16_double(blocks: np.ndarray) -> np.ndarray:
    u1 = 1.0 - blocks[:, :8]
    # numpy's SIMD log differs from libm's in the last bit now and then; libm's is PyTorch's.
    logs = np.array([math.log(u) for u in u1.ravel().tolist()]).reshape(u1.shape)
    radius = np.sqrt(-2.0 * logs)
    theta = 2.0 * math.pi * blocks[:, 8:]
    return np.concatenate([radius * np.cos(theta), radius * np.sin(theta)], axis=1) + 0.0


def _normal_16_single(blocks: np.ndarray) -> np.ndarray:
    """normal_fill_16<float>: logf, cosf, sinf taken as double results rounded to float."""
    u1 = (_F32(1.0) - blocks[:, :8]).astype(np.float64)
    radius = np.sqrt(_F32(-2.0) * np.log(u1).astype(_F32))
    theta = (2.0 * math.pi * blocks[:, 8:].astype(np.float64)).astype(_F32).astype(np.float64)
    cos, sin = np.cos(theta).astype(_F32), np.sin(theta).astype(_F32)
    return np.concatenate([radius * cos, radius * sin], axis=1) + _F32(0.0)


def _normal_16_avx2(blocks: np.ndarray) -> np.ndarray:
    u1 = _F32(1.0) - blocks[:, :8]
    radius = np.sqrt(_F32(-2.0) * _log_single(u1))
    sin, cos = _sincos_single(_F32(2.0 * math.pi) * blocks[:, 8:])
    return np.concatenate([radius * cos, radius * sin], axis=1) + _F32(0.0)


# ---- PyTorch's AVX2 single-precision log and sincos (avx_mathfun's cephes ports) -----------


def _fma(a, b, c) -> np.ndarray:
    """Single-precision a * b + c rounded once, as the fused instruction gives (the product
    is exact in double; the double sum then rounds to float32, which agrees with one
    rounding except in vanishingly rare ties)."""
    wide = np.multiply(a, b, dtype=np.float64)
    wide += c
    return wide.astype(_F32)


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.int32)


_LOG_POLY = tuple(
    _F32(c)
    for c in (
        7.0376836292e-2,
        -1.1514610310e-1,
        1.1676998740e-1,
        -1.2420140846e-1,
        1.4249322787e-1,
        -1.6668057665e-1,
        2.0000714765e-1,
        -2.4999993993e-1,
        3.3333331174e-1,
    )
)


def _log_single(x: np.ndarray) -> np.ndarray:
    """log256_ps for x in (0, 1]: exponent and mantissa split, then a degree-9 polynomial."""
    ints = _bits(x)
    e = ((ints >> 23) - 0x7F).astype(_F32) + _F32(1.0)
    x = (ints & ~0x7F800000 | _bits(np.array(0.5, _F32))).view(_F32)  # mantissa in [0.5, 1)
    small = x < _F32(0.707106781186547524)
    x = (x - _F32(1.0)) + np.where(small, x, _F32(0.0))
    e = e - np.where(small, _F32(1.0), _F32(0.0))
    z = x * x
    y = np.full_like(x, _LOG_POLY[0])
    for coefficient in _LOG_POLY[1:]:
        y = _fma(y, x, coefficient)
    y = y * x
    y = _fma(y, z, e * _F32(-2.12194440e-4))
    y = _fma(-z, _F32(0.5), y)
    return _fma(e, _F32(0.693359375), x + y)


def _sincos_single(x: np.ndarray):
    """sincos256_ps: reduce by multiples of pi/4 in three parts, then the cephes sin and
    cos polynomials, each picked per octant."""
    sign_sin = _bits(x) & np.int32(-(2**31))
    x = np.abs(x)
    octant = (x * _F32(1.27323954473516)).astype(np.int32)  # truncates, like cvttps
    octant = (octant + 1) & ~1
    y = octant.astype(_F32)
    sign_sin = sign_sin ^ ((octant & 4) << 29)
    sign_cos = (~(octant - 2) & 4) << 29
    use_sin_poly = (octant & 2) == 0
    x = _fma(y, _F32(-0.78515625), x)
    x = _fma(y, _F32(-2.4187564849853515625e-4), x)
    x = _fma(y, _F32(-3.77489497744594108e-8), x)
    z = x * x
    cos_poly = _fma(np.full_like(x, _F32(2.443315711809948e-005)), z, _F32(-1.388731625493765e-003))
    cos_poly = _fma(cos_poly, z, _F32(4.166664568298827e-002)) * z
    cos_poly = _fma(cos_poly, z, -(z * _F32(0.5))) + _F32(1.0)
    sin_poly = _fma(np.full_like(x, _F32(-1.9515295891e-4)), z, _F32(8.3321608736e-3))
    sin_poly = _fma(sin_poly, z, _F32(-1.6666654611e-1)) * z
    sin_poly = _fma(sin_poly, x, x)
    # the kernel adds the unpicked polynomial's masked-out +0.0 (turning -0.0 into 0.0)
    sin = np.where(use_sin_poly, sin_poly, cos_poly) + _F32(0.0)
    cos = np.where(use_sin_poly, cos_poly, sin_poly) + _F32(0.0)
    return (_bits(sin) ^ sign_sin).view(_F32), (_bits(cos) ^ sign_cos).view(_F32)
