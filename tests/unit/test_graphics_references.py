"""The graphics references and the target comparison, computed in chunks and from tables, give bit
for bit what the whole-image formulas give (graphics/kernels.py, graphics/compare.py): the formulas
are kept here, written out per pixel and per fetch over the whole image, as the independent reference."""

from __future__ import annotations

from typing import Dict, Sequence, Tuple

import numpy as np
import pytest

from apple_roofline.graphics import compare as C
from apple_roofline.graphics import kernels as K
from apple_roofline.suites.fma import FMA_KERNELS

# odd sizes: the last chunk is short, and a row of pixels spans two chunks
SHAPES = ((37, 23), (61, 45))


def lowbias32(v: np.ndarray) -> np.ndarray:
    """The hash in Python integers, the shaders' uint32 steps with explicit wrap-around."""
    out = []
    for x in v.tolist():
        x ^= x >> 16
        x = (x * 0x7FEB352D) & 0xFFFFFFFF
        x ^= x >> 15
        x = (x * 0x846CA68B) & 0xFFFFFFFF
        out.append(x ^ (x >> 16))
    return np.array(out, dtype=np.int64)


def whole_image_sums(
    texture: np.ndarray, width: int, height: int, pattern: str, filter_: str, counts: Sequence[int]
) -> Dict[int, np.ndarray]:
    """texture_sums as one pass over the whole image per fetch: the bytes read through a 256-entry
    table of b/255, the bilinear neighbours gathered one by one."""
    size = texture.shape[0]
    unorm = np.arange(256, dtype=np.float32) / np.float32(255.0)
    t = unorm[texture].reshape(-1, 4)
    p = np.arange(width * height, dtype=np.int64)
    total = np.zeros((width * height, 4), dtype=np.float32)
    out = {}
    for k in range(max(counts)):
        if pattern == "random":
            idx = lowbias32((p * 16 + k) & 0xFFFFFFFF) % (size * size)
        else:
            idx = (p + k * width * height) % (size * size)
        if filter_ == "nearest":
            total += t[idx]
        else:
            tx, ty = idx % size, idx // size
            x1, y1 = (tx + 1) % size, (ty + 1) % size
            total += ((t[ty * size + tx] + t[ty * size + x1]) + (t[y1 * size + tx] + t[y1 * size + x1])) * np.float32(
                0.25
            )
        if k + 1 in counts:
            out[k + 1] = total.reshape(height, width, 4).copy()
    return out


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("size", (4, 16))
@pytest.mark.parametrize("pattern", K.PATTERNS)
@pytest.mark.parametrize("filter_", K.FILTERS)
@pytest.mark.parametrize("table", (True, False))
def test_texture_sums_are_the_whole_image_sums(
    shape: Tuple[int, int], size: int, pattern: str, filter_: str, table: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    width, height = shape
    monkeypatch.setattr(K, "CHUNK_PIXELS", 100)  # many chunks, the last one short
    if not table:
        monkeypatch.setattr(K, "TABLE_TEXELS", 0)  # bilinear filtered fetch by fetch
    tex = K.texture_noise(size, seed=size + width)
    got = K.texture_sums(tex, width, height, pattern, filter_, (1, 3, 9))
    want = whole_image_sums(tex, width, height, pattern, filter_, (1, 3, 9))
    assert set(got) == {1, 3, 9}
    for n in (1, 3, 9):
        assert got[n].dtype == np.float32 and got[n].shape == (height, width, 4)
        assert np.array_equal(got[n].view(np.uint32), want[n].view(np.uint32)), n
    assert not np.array_equal(got[3], got[9])  # the counts differ: the comparison can fail


def test_a_table_given_is_the_table_texture_sums_builds() -> None:
    tex = K.texture_noise(16, seed=2)
    table = K.bilinear_texels(tex)
    assert table.shape == (16, 16, 4) and table.dtype == np.float32
    t = tex.astype(np.float32) / np.float32(255.0)
    corner = ((t[15, 15] + t[15, 0]) + (t[0, 15] + t[0, 0])) * np.float32(0.25)  # repeat addressing
    assert np.array_equal(table[15, 15], corner)
    for pattern in K.PATTERNS:
        given = K.texture_sums(tex, 37, 23, pattern, "bilinear", (2, 5), table)
        built = K.texture_sums(tex, 37, 23, pattern, "bilinear", (2, 5))
        assert all(np.array_equal(given[n], built[n]) for n in (2, 5))
    with pytest.raises(ValueError, match="bilinear table has shape"):
        K.texture_sums(tex, 37, 23, "random", "bilinear", (2,), table[:8])


def test_texel_indices_are_the_formula() -> None:
    width, height = SHAPES[1]
    p = np.arange(width * height, dtype=np.int64).reshape(height, width)
    for size, k in ((4, 0), (16, 5), (64, 15)):
        coherent = K.texel_indices(width, height, size, k, "coherent")
        random = K.texel_indices(width, height, size, k, "random")
        assert coherent.dtype == random.dtype == np.int64
        assert np.array_equal(coherent, (p + k * width * height) % (size * size))
        assert np.array_equal(random, lowbias32(p.reshape(-1) * 16 + k).reshape(height, width) % (size * size))


def test_hash32_wraps_as_uint32() -> None:
    values = np.array([0, 1, 0xFFFF, 0x10000, 0x7FFFFFFF, 0xFFFFFFFF], dtype=np.uint32)
    got = K.hash32(values)
    assert got.dtype == np.uint32 and got.tolist() == lowbias32(values.astype(np.int64)).tolist()
    assert values.tolist()[-1] == 0xFFFFFFFF  # the input is left as it was


def whole_image_fill(width: int, height: int, F: int, fmt: str) -> np.ndarray:
    """fill_reference computed for every pixel from its input, as fs_fill does."""
    x = K.pixel_inputs(width, height).reshape(-1, 4)
    lanes = FMA_KERNELS["vec4_cross4"].reference(x.reshape(-1), F, "fp32").astype(np.float32).reshape(-1, 4)
    total = (lanes[:, 0] + lanes[:, 1]) + (lanes[:, 2] + lanes[:, 3])
    shared = total * np.float32(0.0078125) + np.float32(0.5)
    colour = (lanes * np.float32(0.03125) + shared[:, None]).astype(np.float32)
    target = K.FORMATS[fmt]
    colour = colour[:, : target.channels].reshape(height, width, target.channels)
    out: np.ndarray = (
        np.rint(np.clip(colour, 0.0, 1.0).astype(np.float64) * 255.0).astype(np.uint8)
        if target.storage == "unorm8"
        else colour.astype(target.dtype)
    )
    return out


@pytest.mark.parametrize("F", (0, 1, 9, 128))
@pytest.mark.parametrize("fmt", tuple(K.FORMATS))
def test_fill_reference_is_the_per_pixel_formula(F: int, fmt: str) -> None:
    width, height = SHAPES[0]
    got, want = K.fill_reference(width, height, F, fmt), whole_image_fill(width, height, F, fmt)
    assert got.dtype == want.dtype and got.shape == want.shape == (height, width, K.FORMATS[fmt].channels)
    assert got.tobytes() == want.tobytes()
    assert len(np.unique(got.reshape(-1, got.shape[-1]), axis=0)) > 1  # pixels differ: the test can fail


def float64_verdict(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> Tuple[np.ndarray, float]:
    with np.errstate(invalid="ignore", over="ignore"):
        g, w = got.astype(np.float64), want.astype(np.float64)
        bound, err = atol + rtol * np.abs(w), np.abs(g - w)
        return ~(err <= bound), float(np.max(err / np.maximum(bound, 1e-300)))


@pytest.mark.parametrize("dtype", (np.uint8, np.float16, np.float32))
def test_the_chunked_comparison_decides_as_float64(dtype: type, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(C, "CHUNK_VALUES", 97)  # many chunks, the last one short
    rng = np.random.default_rng(5)
    want: np.ndarray = (rng.random((23, 37, 4)) * 200).astype(dtype)
    got = want.copy()
    got[rng.random(want.shape) < 0.01] += 2  # beyond a bound of 1
    got[rng.random(want.shape) < 0.01] += 1  # at it
    got = got[:, ::-1]  # not contiguous
    want = want[:, ::-1]
    bad, worst = C.beyond_bound(got, want, 0.0, 1.0)
    bad64, worst64 = float64_verdict(got, want, 0.0, 1.0)
    assert bad.shape == got.shape and np.array_equal(bad, bad64) and 0 < bad.sum() < bad.size
    assert worst == pytest.approx(worst64, rel=1e-6)


def test_a_nan_anywhere_makes_the_worst_ratio_nan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(C, "CHUNK_VALUES", 16)
    want = np.ones(100, dtype=np.float32)
    got = want.copy()
    got[40] = np.nan
    bad, worst = C.beyond_bound(got, want, 1e-6, 0.0)
    assert bad.tolist() == [i == 40 for i in range(100)] and np.isnan(worst)
    with pytest.raises(ValueError, match="shape"):
        C.beyond_bound(got[:50], want, 1e-6, 0.0)
