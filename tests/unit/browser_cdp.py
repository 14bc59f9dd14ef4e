"""A headless Chromium driven through the DevTools protocol over a pipe (``--remote-debugging-pipe``:
JSON messages ending in a NUL byte, on file descriptors 3 and 4), with the standard library only: the
pages' tests load a file, act on it with real mouse events and scripts, and record every network
request the page makes (``Network.requestWillBeSent``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

BROWSERS = ("chromium-headless-shell", "chromium", "google-chrome", "chrome")


def find_browser() -> Optional[str]:
    """The first headless Chromium on PATH (Debian's ``chromium-headless-shell``, which ``.ci/run``
    installs, first); None when there is none."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One Chromium with one page (``width`` x ``height`` CSS pixels), its profile under ``home``."""

    def __init__(self, binary: str, home: Path, width: int = 1280, height: int = 900) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire() -> None:  # in the child: its fd 3 reads our commands, fd 4 writes its answers
            r, w = os.dup(to_child_r), os.dup(from_child_w)  # off 3 and 4 first, whatever numbers they had
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             f"--user-data-dir={home / 'profile'}", f"--window-size={width},{height}", "--hide-scrollbars",
             "--no-first-run", "about:blank"],
            close_fds=False, preexec_fn=wire,  # every other descriptor of ours is close-on-exec stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=dict(os.environ, HOME=str(home)))
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next = 0
        self.events: List[Dict[str, Any]] = []
        target = self.send("Target.createTarget", {"url": "about:blank", "width": width, "height": height})
        self.session = self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]
        for domain in ("Network", "Page", "Runtime"):
            self.send(f"{domain}.enable", session=True)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def _read(self, timeout: float) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from the browser")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise RuntimeError("the browser closed its pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        out: Dict[str, Any] = json.loads(message)
        return out

    def send(self, method: str, params: Optional[Dict[str, Any]] = None, *, session: bool = False,
             timeout: float = 60.0) -> Dict[str, Any]:
        """Call ``method`` (on the page's session with ``session``) and return its result; events
        that arrive meanwhile are kept in :attr:`events`.

        Raises:
            RuntimeError: the browser answered with an error.
        """
        self._next += 1
        msg: Dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        while True:
            answer = self._read(timeout)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: Dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def open(self, url: str, timeout: float = 60.0) -> None:
        """Navigate to ``url`` and wait for its load event."""
        self.send("Page.navigate", {"url": url}, session=True)
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            self.events.append(self._read(timeout))

    def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression on the page (a promise awaited).

        Raises:
            RuntimeError: the expression threw.
        """
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                "returnByValue": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def mouse(self, kind: str, x: float, y: float, clicks: int = 1) -> None:
        """A real mouse event at viewport pixel (x, y): ``mouseMoved``, ``mousePressed`` or ``mouseReleased``."""
        params: Dict[str, Any] = {"type": kind, "x": x, "y": y}
        if kind != "mouseMoved":
            params.update(button="left", clickCount=clicks)
        else:
            params.update(button="left" if getattr(self, "_down", False) else "none")
        self._down = kind == "mousePressed" or (kind == "mouseMoved" and getattr(self, "_down", False))
        self.send("Input.dispatchMouseEvent", params, session=True)

    def click(self, x: float, y: float) -> None:
        """A left click at (x, y)."""
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y)
        self.mouse("mouseReleased", x, y)

    def drag(self, x0: float, y0: float, x1: float, y1: float, steps: int = 8) -> None:
        """Press at (x0, y0), move to (x1, y1) in ``steps``, release."""
        self.mouse("mouseMoved", x0, y0)
        self.mouse("mousePressed", x0, y0)
        for k in range(1, steps + 1):
            self.mouse("mouseMoved", x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps)
        self.mouse("mouseReleased", x1, y1)
        self._down = False

    def wait_for(self, expression: str, timeout: float = 10.0) -> Any:
        """Poll a JavaScript expression until it is truthy; its value.

        Raises:
            TimeoutError: it stayed falsy.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.eval(expression)
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(expression)

    def requests(self) -> List[str]:
        """The URL of every request the page made so far."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        """Close the browser."""
        try:
            self.send("Browser.close", timeout=10.0)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)
