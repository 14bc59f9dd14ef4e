"""``apple-roofline devices``: every backend, compiled in or not, with its devices and key figures."""

from __future__ import annotations

import io
import json
import shutil
from typing import TYPE_CHECKING, Annotated, Any, Dict, List, Sequence, Tuple

import typer

from .common import EXIT_FAILED, backend_error_type, fail, import_failure

if TYPE_CHECKING:
    from ..devices import DeviceStatus

__all__ = ["devices", "devices_table"]

#: The wgpu APIs the WebGPU backend runs the compute suites on (its OpenGL adapters draw only).
COMPUTE_APIS = ("Vulkan", "Metal", "D3D12")


def _format_bytes(n: object) -> str:
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        return str(n)
    from ..sizes import format_size

    try:
        return format_size(int(n))
    except ValueError:
        return str(n)


_DETAIL_KEYS: Tuple[str, ...] = (
    "threads",
    "logical_cpus",
    "isa",
    "vector_bits",
    "compute_units",
    "memory_bytes",
    "memory",
    "clock_hz",
)


def _details_summary(details: Dict[str, Any]) -> str:
    keys = [k for k in _DETAIL_KEYS if k in details] or [
        k for k, v in details.items() if k != "name" and isinstance(v, (str, int, float, bool))
    ]
    parts = []
    for k in keys:
        v = details[k]
        if "memory" in k or k.endswith("_bytes"):
            parts.append(f"{k.replace('_bytes', '')}={_format_bytes(v)}")
        elif k.endswith("_hz") and isinstance(v, (int, float)) and not isinstance(v, bool):
            parts.append(f"{k.replace('_hz', '')}={v / 1e9:.2f} GHz")
        else:
            parts.append(f"{k}={v}")
    return ", ".join(parts)


def devices(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List every backend, compiled in or not, and the wgpu adapters (graphics study): devices found,
    device name, key figures, why absent."""
    statuses = _statuses()
    found, wgpu_reason = _wgpu_adapters()
    if as_json:
        typer.echo(json.dumps(_devices_json(statuses, found, wgpu_reason), indent=2, default=str))
        return
    rows = _devices_rows(statuses, found, wgpu_reason)
    typer.echo(devices_table(rows, shutil.get_terminal_size().columns), nl=False)


def _statuses() -> List["DeviceStatus"]:
    """Every compute backend's status (:func:`~apple_roofline.devices.list_devices`); exits 1 when the
    extension cannot be imported or discovery fails."""
    try:
        from ..devices import list_devices

        return list_devices()
    except ImportError as exc:
        import_failure(exc)
    except backend_error_type() as exc:
        fail(f"device discovery failed: {exc}", EXIT_FAILED)


def _wgpu_adapters() -> Tuple[List[Dict[str, Any]], str]:
    """The wgpu adapters (:func:`~apple_roofline.graphics.wgpu_device.adapters`) and, where there is
    none, why (empty when some were found)."""
    from ..graphics.wgpu_device import WgpuUnavailable, adapters

    try:
        found = adapters()
    except WgpuUnavailable as exc:
        return [], str(exc)
    return found, "" if found else "wgpu finds no adapter (no Vulkan, Metal or D3D12 driver)"


def _wgpu_compiled(wgpu_reason: str) -> bool:
    """Whether the wgpu package is installed (the reason is not the one asking to install it)."""
    return not wgpu_reason.startswith("the graphics suites need")


def _devices_json(
    statuses: Sequence["DeviceStatus"], found: Sequence[Dict[str, Any]], wgpu_reason: str
) -> List[Dict[str, Any]]:
    """``devices --json``: one object per backend (backend, compiled, devices, name, reason, details),
    the wgpu adapters last as one backend whose details list them."""
    payload = [
        {
            "backend": s.backend,
            "compiled": s.compiled,
            "devices": s.devices,
            "name": s.name,
            "reason": s.reason,
            "details": dict(s.details),
        }
        for s in statuses
    ]
    payload.append(
        {
            "backend": "wgpu",
            "compiled": _wgpu_compiled(wgpu_reason),
            "devices": len(found),
            "name": found[0]["name"] if found else None,
            "reason": wgpu_reason,
            "details": {"adapters": list(found)},
        }
    )
    return payload


def _devices_rows(
    statuses: Sequence["DeviceStatus"], found: Sequence[Dict[str, Any]], wgpu_reason: str
) -> List[List[str]]:
    """The table's rows (:func:`devices_table`): one per backend, one per wgpu adapter (``wgpu:N``), or
    one saying why there is none."""
    rows = []
    for s in statuses:
        details = dict(s.details)
        rows.append(
            [
                s.backend,
                "yes" if s.compiled else "no",
                str(s.devices),
                s.name or "-",
                _details_summary(details) if details else "-",
                s.reason or "",
            ]
        )
    for i, a in enumerate(found):
        rows.append(
            [
                f"wgpu:{i}",
                "yes",
                "1",
                a["name"],
                f"api={a['backend']}, type={a['adapter_type']}, max_texture={a['max_texture_2d']}, "
                f"features={'+'.join(a['features']) or 'none'}",
                "graphics; run's stream, sweep, peak" if a["backend"] in COMPUTE_APIS else "graphics only",
            ]
        )
    if not found:
        rows.append(["wgpu", "yes" if _wgpu_compiled(wgpu_reason) else "no", "0", "-", "-", wgpu_reason])
    return rows


def devices_table(rows: Sequence[Sequence[str]], width: int) -> str:
    """The rows of ``devices`` (backend, compiled, devices, name, figures, reason) as a table of at
    most ``width`` characters a line: Rich wraps the name, figures and reason within their columns
    (at spaces, a word longer than its column folded), so no line runs past the terminal. The cells are
    text, not Rich markup: a reason's ``pip install 'apple_roofline[graphics]'`` shows whole."""
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(
        box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, expand=False, collapse_padding=True, padding=(0, 1, 0, 0)
    )
    for header in ("backend", "compiled", "devices"):
        table.add_column(header, no_wrap=True)
    table.add_column("name", overflow="fold")
    table.add_column("figures", overflow="fold")
    table.add_column("reason", overflow="fold")
    for row in rows:
        table.add_row(*map(escape, row))  # package and device text, not markup: "apple_roofline[graphics]" whole
    buffer = io.StringIO()
    Console(file=buffer, width=max(width, 40), no_color=True, highlight=False, soft_wrap=False).print(table)
    return "\n".join(ln.rstrip() for ln in buffer.getvalue().splitlines()) + "\n"
