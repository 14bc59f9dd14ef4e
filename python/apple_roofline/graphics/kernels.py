"""The graphics suites as data: what each render pass computes per pixel, how it is counted, and its
NumPy reference (docs/design/graphics.md, "The graphics study").

Three suites, after the "Graphics Pipeline: TBDR Changes Everything" part of the Apple M5 GPU
Roofline Analysis, which compares itself with a Vulkan study of a Radeon 780M:

* ``fillrate``: a fullscreen triangle drawn ``overdraw`` times into a W x H target (1920 x 1080 by
  default), the fragment shader running F iterations of the compute suites' ``vec4_cross4`` chains
  per pixel (32·F FLOPs per shaded pixel, counted per lane), F = 0 … 512, in two modes:
  ``opaque`` (blending off: a tile-based deferred renderer may shade only the last of identical
  opaque layers) and ``blended`` (blend operation max over a zero clear: every layer is shaded, and the
  result is still exactly the shader's value), each with the store action ``store`` or ``discard``.
* ``tilemem``: the same pass in ``opaque`` mode with the render-target format varied (r8unorm,
  rgba8unorm, rgba16float, rgba32float), the article's R8-against-RGBA8 comparison.
* ``texture``: N fetches per pixel (1 … 16) from an S x S RGBA8 noise texture (64² … 4096², 8192²
  where the device allows), coherent or random texel indices, nearest or bilinear sampling; the
  working set is S² × 4 bytes.

The per-pixel computations are exact in fp32 up to the rounding the references model, so every pass's
target is checked against NumPy: the fill shader's output is built from the ``vec4_cross4`` reference of
the pixel's input, quantised as the target format stores it; the texture shader's is the sum of the
texels it reads. Twins: ``shaders/wgsl/graphics.wgsl`` and ``shaders/metal/graphics.metal``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import numpy as np

from ..suites.base import EPS
from ..suites.fma import FMA_KERNELS, tolerance
from .compare import beyond_bound

__all__ = [
    "WIDTH",
    "HEIGHT",
    "DEFAULT_OVERDRAW",
    "MAX_F",
    "FILL_F",
    "TILEMEM_F",
    "MODES",
    "STORES",
    "FORMATS",
    "FILL_FORMAT",
    "TEXTURE_FORMAT",
    "TEXTURE_SIZES",
    "FETCHES",
    "PATTERNS",
    "FILTERS",
    "SUITES",
    "STORAGE_DTYPES",
    "TABLE_TEXELS",
    "CHUNK_PIXELS",
    "TargetFormat",
    "FLOPS_PER_ITERATION",
    "pixel_inputs",
    "fill_reference",
    "texture_noise",
    "texel_indices",
    "texture_sums",
    "bilinear_texels",
    "texture_reference",
    "check_target",
    "hash32",
]

WIDTH, HEIGHT = 1920, 1080
DEFAULT_OVERDRAW = 128
MAX_F = 512
#: F of the fill-rate sweep (0: the rasteriser/ROP ceiling; 512: the ALU ceiling).
FILL_F: Tuple[int, ...] = (0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
#: F of the tile-memory comparison (the article compares formats at F = 128).
TILEMEM_F: Tuple[int, ...] = (0, 16, 128, 512)
MODES: Tuple[str, ...] = ("opaque", "blended")
STORES: Tuple[str, ...] = ("store", "discard")
SUITES: Tuple[str, ...] = ("fillrate", "tilemem", "texture")
TEXTURE_SIZES: Tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096, 8192)
FETCHES: Tuple[int, ...] = (1, 2, 4, 8, 16)
PATTERNS: Tuple[str, ...] = ("coherent", "random")
FILTERS: Tuple[str, ...] = ("nearest", "bilinear")
#: Bilinear textures of at most this many texels get a table of filtered texels in
#: :func:`texture_sums` (4096²: 256 MiB); larger ones are filtered fetch by fetch.
TABLE_TEXELS = 4096 * 4096
#: Pixels the texture references sum at a time (:func:`texture_sums`): a chunk's sums, 256 KiB,
#: and its other arrays stay in a core's second-level cache.
CHUNK_PIXELS = 1 << 15
#: FLOPs of one chain iteration per pixel: four 4-wide FMAs, 2 FLOPs per lane.
FLOPS_PER_ITERATION = FMA_KERNELS["vec4_cross4"].flops_per_item(1)


@dataclass(frozen=True)
class TargetFormat:
    """A render-target format: its WebGPU name, bytes per pixel, channels, and how it stores a
    float colour (``"unorm8"``, ``"f16"``, ``"f32"``)."""

    name: str
    bytes_per_pixel: int
    channels: int
    storage: str

    @property
    def dtype(self) -> Any:
        """The NumPy dtype one channel is read back in: uint8 (unorm8), float16 (f16), float32 (f32)."""
        return STORAGE_DTYPES[self.storage]


#: The NumPy dtype of each storage kind of :class:`TargetFormat`.
STORAGE_DTYPES: Dict[str, Any] = {"unorm8": np.uint8, "f16": np.float16, "f32": np.float32}


FORMATS: Dict[str, TargetFormat] = {
    f.name: f
    for f in (
        TargetFormat("r8unorm", 1, 1, "unorm8"),
        TargetFormat("rgba8unorm", 4, 4, "unorm8"),
        TargetFormat("rgba16float", 8, 4, "f16"),
        TargetFormat("rgba32float", 16, 4, "f32"),
    )
}
FILL_FORMAT = "rgba8unorm"
#: The texture suite accumulates its fetches in fp32, so its target is rgba32float.
TEXTURE_FORMAT = "rgba32float"


def pixel_inputs(width: int, height: int) -> np.ndarray:
    """The fill shader's input 4-vector of every pixel, shape (height, width, 4), float32:
    ``x_k = ((7 px + 13 py + 5 k) mod 32) / 64 - 0.25``, exact in fp32 and within [-0.25, 0.234]."""
    px = np.arange(width, dtype=np.int64)[None, :, None]
    py = np.arange(height, dtype=np.int64)[:, None, None]
    k = np.arange(4, dtype=np.int64)[None, None, :]
    out: np.ndarray = ((7 * px + 13 * py + 5 * k) % 32).astype(np.float32) / np.float32(64.0) - np.float32(0.25)
    return out


def fill_reference(width: int, height: int, F: int, fmt: str) -> np.ndarray:
    """What ``fs_fill`` leaves in a ``fmt`` target after any number of identical layers, shape
    (height, width, channels): ``s``, the ``vec4_cross4`` reference ``c+d+e+f`` of each pixel's input
    (the same FMA rounding as the compute suites), then ``t = (s.x+s.y) + (s.z+s.w)`` and the colour
    ``s/32 + (t/128 + 0.5)`` in fp32 (every channel depends on every lane, so no lane is dead code for
    a one-channel target), stored as ``fmt`` stores it (unorm8: round(255 v) as uint8; f16: float16;
    f32: float32).

    A pixel's input (:func:`pixel_inputs`) depends only on ``m = (7 px + 13 py) mod 32`` (lane k is
    level ``(m + 5k) mod 32``), so the colour is computed once for each of the 32 values of m and
    the image gathered from those: the same arithmetic per pixel, done 32 times instead of W·H.

    Raises:
        ValueError: ``F`` outside 0 … :data:`MAX_F`, or an unknown format.
    """
    if not 0 <= F <= MAX_F:
        raise ValueError(f"F {F} is out of range (valid: 0 to {MAX_F})")
    target = _format(fmt)
    levels = np.arange(32, dtype=np.float32) / np.float32(64.0) - np.float32(0.25)  # every input value
    sum_of_level = FMA_KERNELS["vec4_cross4"].reference(levels, F, "fp32").astype(np.float32)
    m = np.arange(32, dtype=np.int64)
    lanes = sum_of_level[(m[:, None] + 5 * np.arange(4, dtype=np.int64)[None, :]) % 32]  # (32, 4): s of each m
    total = (lanes[..., 0] + lanes[..., 1]) + (lanes[..., 2] + lanes[..., 3])
    shared = (total * np.float32(0.0078125) + np.float32(0.5)).astype(np.float32)
    colour: np.ndarray = (lanes * np.float32(0.03125) + shared[..., None]).astype(np.float32)
    table = _store(colour[..., : target.channels], target.storage)
    px = np.arange(width, dtype=np.int64)[None, :]
    py = np.arange(height, dtype=np.int64)[:, None]
    image: np.ndarray = np.take(table, (7 * px + 13 * py) % 32, axis=0)
    return image


def _format(fmt: str) -> TargetFormat:
    if fmt not in FORMATS:
        raise ValueError(
            f"format {fmt!r} is not a render-target format of the graphics suites (valid: {', '.join(FORMATS)})"
        )
    return FORMATS[fmt]


def _store(colour: np.ndarray, storage: str) -> np.ndarray:
    dtype = STORAGE_DTYPES[storage]
    if storage == "unorm8":
        colour = np.rint(np.clip(colour, 0.0, 1.0).astype(np.float64) * 255.0)
    out: np.ndarray = colour.astype(dtype)
    return out


def hash32(v: np.ndarray) -> np.ndarray:
    """lowbias32 (Chris Wellons): the integer hash of the random texture pattern, in uint32
    arithmetic exactly as the shaders compute it; an array of ``v``'s shape, uint32."""
    h: np.ndarray = v.astype(np.uint32)  # a copy: the steps below work in place
    shifted = np.empty_like(h)
    for shift, factor in ((16, 0x7FEB352D), (15, 0x846CA68B)):
        h ^= np.right_shift(h, np.uint32(shift), out=shifted)
        h *= np.uint32(factor)  # wraps modulo 2³², as u32 multiplication does
    h ^= np.right_shift(h, np.uint32(16), out=shifted)
    return h


def texture_noise(size: int, seed: int = 7) -> np.ndarray:
    """An RGBA8 texture of uniform noise (incompressible), shape (size, size, 4), uint8."""
    return np.random.default_rng(seed).integers(0, 256, (size, size, 4), dtype=np.uint8)


def texel_indices(width: int, height: int, size: int, fetch: int, pattern: str) -> np.ndarray:
    """The linear texel index of fetch ``fetch`` of every pixel, shape (height, width), int64:
    ``(p + fetch·P) mod S²`` (coherent: neighbouring pixels read neighbouring texels) or
    ``hash(16 p + fetch) mod S²`` (random), p = py·W + px and P = W·H.

    Raises:
        ValueError: an unknown pattern, or a size that is not a power of two.
    """
    _check_texture(size, pattern)
    p = np.arange(width * height, dtype=np.int64)
    out: np.ndarray = _indices(p, fetch, width * height, size * size - 1, pattern).astype(np.int64)
    return out.reshape(height, width)


def _check_texture(size: int, pattern: str) -> None:
    if pattern not in PATTERNS:
        raise ValueError(f"pattern {pattern!r} is not a texture pattern (valid: {', '.join(PATTERNS)})")
    if size <= 0 or size & (size - 1):
        raise ValueError(f"texture size {size} is not a power of two")


def _indices(p: np.ndarray, fetch: int, pixels: int, mask: int, pattern: str) -> np.ndarray:
    """:func:`texel_indices` of the pixels ``p`` (1-D int64), as the shaders compute them in uint32."""
    index: np.ndarray = (
        hash32(p.astype(np.uint32) * np.uint32(16) + np.uint32(fetch)) & np.uint32(mask)
        if pattern == "random"
        else (p + fetch * pixels) & mask
    )
    return index


def texture_sums(
    texture: np.ndarray,
    width: int,
    height: int,
    pattern: str,
    filter_: str,
    counts: Sequence[int],
    table: Optional[np.ndarray] = None,
) -> Dict[int, np.ndarray]:
    """What ``fs_texture`` writes after each fetch count of ``counts``, {N: array (height, width, 4)
    float32}: the sum over fetches 0 … N-1 of the texel read (nearest: the texel; bilinear: the mean
    of it and its neighbours right, below and below-right, repeat addressing), each texel's byte b
    read as b/255, summed in fetch order in fp32 — one pass over the fetches serves every count.

    The pixels are summed :data:`CHUNK_PIXELS` at a time, every fetch of a chunk before the next
    chunk, so that the chunk's arrays stay in the core's cache (each pixel's sum is the same
    arithmetic in the same order, so the chunk size does not change a bit of it).

    ``table``: the texture's :func:`bilinear_texels` where already computed (bilinear filtering of a
    texture of at most :data:`TABLE_TEXELS` texels, which gathers from it; computed here otherwise),
    so that the lines of one texture share it.

    Raises:
        ValueError: an unknown pattern or filter, a size that is not a power of two, a count below 1,
            or a ``table`` of another shape than (S, S, 4).
    """
    if filter_ not in FILTERS:
        raise ValueError(f"filter {filter_!r} is not a texture filter (valid: {', '.join(FILTERS)})")
    if not counts or min(counts) < 1:
        raise ValueError(f"fetch counts {list(counts)} must each be 1 or more")
    size = texture.shape[0]
    _check_texture(size, pattern)
    if table is not None and table.shape != (size, size, 4):
        raise ValueError(f"the bilinear table has shape {table.shape}, not ({size}, {size}, 4)")
    fetch = _bilinear(texture, table) if filter_ == "bilinear" else _nearest(texture)
    pixels, mask = width * height, size * size - 1
    out = {n: np.empty((pixels, 4), dtype=np.float32) for n in sorted(set(counts))}
    for start in range(0, pixels, CHUNK_PIXELS):
        p = np.arange(start, min(start + CHUNK_PIXELS, pixels), dtype=np.int64)
        total = np.zeros((p.size, 4), dtype=np.float32)
        for k in range(max(counts)):
            total += fetch(_indices(p, k, pixels, mask, pattern))
            if k + 1 in out:
                out[k + 1][start : start + p.size] = total
    return {n: sums.reshape(height, width, 4) for n, sums in out.items()}


def _unorm(texels: np.ndarray) -> np.ndarray:
    """Bytes b as the texture unit reads them, b/255 in fp32 (a correctly rounded division, so the
    same value as any other way of computing it in fp32)."""
    values: np.ndarray = texels.astype(np.float32)
    values /= np.float32(255.0)
    return values


def _nearest(texture: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Fetch: texel indices (1-D) -> their values, shape (n, 4) float32."""
    words = np.ascontiguousarray(texture, dtype=np.uint8).view(np.uint32).reshape(-1)  # one gather per texel

    def fetch(index: np.ndarray) -> np.ndarray:
        return _unorm(np.take(words, index).view(np.uint8).reshape(-1, 4))

    return fetch


def _bilinear(texture: np.ndarray, table: Optional[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """Fetch: texel indices (1-D) -> the filtered values there, shape (n, 4) float32:
    ``((t[y,x] + t[y,x+1]) + (t[y+1,x] + t[y+1,x+1])) · 0.25``, repeat addressing. A texture of at
    most :data:`TABLE_TEXELS` texels gets every texel's filtered value once (``table``, else
    :func:`bilinear_texels`: the same arithmetic), so that a fetch is one gather instead of four."""
    size = texture.shape[0]
    shift = size.bit_length() - 1
    if size * size <= TABLE_TEXELS:
        flat = (bilinear_texels(texture) if table is None else table).reshape(-1, 4)
        return lambda index: np.take(flat, index, axis=0)  # 6.7x faster than flat[index] (NumPy 2.4)
    texels = _nearest(texture)

    def fetch(index: np.ndarray) -> np.ndarray:
        tx, ty = index & (size - 1), index >> shift
        x1, y1 = (tx + 1) & (size - 1), ((ty + 1) & (size - 1)) << shift
        ty <<= shift
        value: np.ndarray = (texels(index) + texels(ty + x1)) + (texels(y1 + tx) + texels(y1 + x1))
        value *= np.float32(0.25)
        return value

    return fetch


def bilinear_texels(texture: np.ndarray) -> np.ndarray:
    """Every texel's bilinear value, ``((t[y,x] + t[y,x+1]) + (t[y+1,x] + t[y+1,x+1])) · 0.25`` in
    fp32 with repeat addressing (t: the bytes read as b/255), for an S x S RGBA8 ``texture``; shape
    (S, S, 4) float32. Built a band of rows at a time: a row's horizontal pair sums serve the band's
    row and the one above."""
    size = texture.shape[0]
    texels = np.ascontiguousarray(texture, dtype=np.uint8)
    out = np.empty((size, size, 4), dtype=np.float32)
    rows = max(1, CHUNK_PIXELS // size)
    for y0 in range(0, size, rows):
        y1 = min(size, y0 + rows)
        band = _unorm(texels[np.arange(y0, y1 + 1) % size])
        pairs = band + np.roll(band, -1, axis=1)  # t[y,x] + t[y,x+1]
        np.add(pairs[:-1], pairs[1:], out=out[y0:y1])
        out[y0:y1] *= np.float32(0.25)
    return out


def texture_reference(
    width: int, height: int, texture: np.ndarray, fetches: int, pattern: str, filter_: str
) -> np.ndarray:
    """What ``fs_texture`` writes with ``fetches`` per pixel (:func:`texture_sums`), shape
    (height, width, 4), float32. Raises ValueError as :func:`texture_sums`."""
    return texture_sums(texture, width, height, pattern, filter_, (fetches,))[fetches]


def check_target(
    got: np.ndarray, want: np.ndarray, storage: str, *, fetches: int = 0, bilinear: bool = False
) -> Tuple[bool, str]:
    """Compare a read-back target with its reference, at the bound its storage allows.

    unorm8: within 1 (the device's float-to-unorm rounding); f16: within 1 ulp of fp16 and the FMA
    chains' drift (:func:`apple_roofline.suites.fma.tolerance`); f32: the chains' drift; a texture
    sum (``fetches`` > 0): N × 2⁻⁸/255 for bilinear filtering (8-bit subtexel weights, as GPUs filter)
    plus N ulps of the sum.

    Returns:
        ``(valid, message)``: the bound and how close the worst pixel came, or the first pixel off.
    """
    if got.shape != want.shape:
        return False, f"the target read back has shape {got.shape}, not {want.shape}"
    rtol, atol = tolerance("fp32")
    if fetches:
        rtol, atol = fetches * 4 * EPS["fp32"], fetches * ((1.0 / 255.0) if bilinear else 0.0)
    elif storage == "unorm8":
        rtol, atol = 0.0, 1.0
    elif storage == "f16":
        rtol += EPS["fp16"]
    bad, worst = beyond_bound(got, want, rtol, atol)
    n = int(np.count_nonzero(bad))
    if n:
        y, x = (int(v) for v in np.argwhere(bad.reshape(bad.shape[0], bad.shape[1], -1).any(axis=2))[0])
        return False, (
            f"{n} of {got.size} values differ from the NumPy reference; first at pixel ({x}, {y}): "
            f"got {got[y, x].tolist()}, want {want[y, x].tolist()}"
        )
    return True, f"{got.size} values match the NumPy reference (worst at {worst:.2f} of the bound)"
