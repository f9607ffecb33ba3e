"""Opening a page in headless Chromium and asking it what it shows, through
the DevTools protocol over --remote-debugging-pipe (standard library only).

    with Browser() as b:
        page = b.open(path, check_js)   # -> Page(result, errors, requests)
        b.screenshot(out_png)

The browser reads commands from fd 3 and answers on fd 4, one JSON message
per NUL-terminated record. Console errors, uncaught exceptions, log entries
of level error, and every network request the page makes are collected
while it loads.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import pathlib
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
# Not a measurement: how long to wait for a local file before giving up.
LOAD_TIMEOUT_S = 120.0


def find() -> str | None:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class Page:
    result: Any                       # what the check expression returned
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, width: int = 1400, height: int = 1000) -> None:
        self.exe = find()
        if self.exe is None:
            raise BrowserError("chromium is not installed (apt install chromium)")
        self.width, self.height = width, height
        self.profile = tempfile.TemporaryDirectory(prefix="heaplab-chromium-")
        self.next_id = 0
        self.buffer = b""
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def __enter__(self) -> "Browser":
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds() -> None:
            # out of the way first: either end may itself be fd 3 or 4
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child_r, from_child_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.proc = subprocess.Popen(
            [self.exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--hide-scrollbars", "--remote-debugging-pipe",
             f"--user-data-dir={self.profile.name}", f"--window-size={self.width},{self.height}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # the fds made in fds() are inheritable; every other one Python
            # opened is close-on-exec
            preexec_fn=fds, close_fds=False)
        os.close(to_child_r)
        os.close(from_child_w)
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(f"{domain}.enable")
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.session = None
            self.call("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_child)
        os.close(self.from_child)
        self.profile.cleanup()

    # -- the protocol
    def _send(self, message: dict[str, Any]) -> None:
        os.write(self.to_child, json.dumps(message).encode() + b"\0")

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_child], [], [], left)[0]:
                raise BrowserError("chromium did not answer in time")
            chunk = os.read(self.from_child, 1 << 16)
            if not chunk:
                raise BrowserError("chromium closed the pipe")
            self.buffer += chunk
        record, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(record)

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + LOAD_TIMEOUT_S
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result") or {}
            self.events.append(reply)

    def _wait_for(self, method: str) -> None:
        deadline = time.monotonic() + LOAD_TIMEOUT_S
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._receive(deadline))

    # -- what the tests use
    def open(self, path: pathlib.Path, check: str) -> Page:
        """Loads the file, then evaluates `check` (a JavaScript expression
        whose value is JSON) in it."""
        self.events.clear()
        self.call("Page.navigate", {"url": pathlib.Path(path).resolve().as_uri()})
        self._wait_for("Page.loadEventFired")
        value = self.call("Runtime.evaluate", {"expression": check, "returnByValue": True})
        page = Page(result=(value.get("result") or {}).get("value"))
        for e in self.events:
            p = e.get("params") or {}
            if e.get("method") == "Runtime.exceptionThrown":
                page.errors.append(json.dumps(p.get("exceptionDetails"))[:300])
            elif e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                page.errors.append(json.dumps(p.get("args"))[:300])
            elif e.get("method") == "Log.entryAdded" and (p.get("entry") or {}).get("level") == "error":
                page.errors.append(str((p.get("entry") or {}).get("text")))
            elif e.get("method") == "Network.requestWillBeSent":
                page.requests.append(str((p.get("request") or {}).get("url")))
        return page

    def without_script(self) -> None:
        """Pages opened from now on run none of their script."""
        self.call("Emulation.setScriptExecutionDisabled", {"value": True})

    def count(self, selector: str) -> int:
        """Elements matching `selector` in the open page, through the DOM
        domain (no script of the page's needed)."""
        root = self.call("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        return len(self.call("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"])

    def screenshot(self, out: pathlib.Path, max_height: int | None = None) -> None:
        """The whole page (or its top `max_height` CSS pixels) as a PNG."""
        size = self.call("Page.getLayoutMetrics")["cssContentSize"]
        height = size["height"] if max_height is None else min(size["height"], max_height)
        shot = self.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": height, "scale": 1}})
        pathlib.Path(out).write_bytes(base64.b64decode(shot["data"]))
