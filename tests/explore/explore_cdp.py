"""A headless chromium driven over its DevTools protocol with the standard
library only: `--remote-debugging-pipe` reads commands on fd 3 and writes
answers and events on fd 4, each a JSON message ended by a NUL byte
(https://chromedevtools.github.io/devtools-protocol/). Enough of it for the
explorer's browser tests: open a URL, click an element as a mouse does,
press keys, reload, read the DOM by script and take screenshots.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
KEYS = {"ArrowLeft": 37, "ArrowRight": 39, "ArrowUp": 38, "ArrowDown": 40, "Home": 36, "End": 35}


class CdpError(Exception):
    pass


class Browser:
    """One chromium, one page (tab) attached; more tabs with new_tab()."""

    def __init__(self, profile: Path, width: int = 1400, height: int = 900):
        cmd_r, cmd_w = os.pipe()      # we write commands, chromium reads them on fd 3
        out_r, out_w = os.pipe()      # chromium writes on fd 4, we read
        for fd in (cmd_r, out_w):
            os.set_inheritable(fd, True)

        def to_3_and_4() -> None:     # (in the child) the two ends at the numbers chromium expects
            a = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(out_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", "--hide-scrollbars", "--disable-dev-shm-usage", "--mute-audio",
             f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=to_3_and_4, close_fds=False)
        os.close(cmd_r)
        os.close(out_w)
        self._w = cmd_w
        self._r = out_r
        self._next = 0
        self._answers: dict[int, "queue.Queue"] = {}
        self._targets: dict[str, str] = {}     # session -> its tab's target
        self._lock = threading.Lock()
        self.events: list[dict] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self.session = self.new_tab(width, height)

    # ---- the pipe ------------------------------------------------------------------

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._r, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self._lock:
                        q = self._answers.get(msg["id"])
                    if q is not None:
                        q.put(msg)
                else:
                    self.events.append(msg)

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    def send(self, method: str, params: dict | None = None, session: str | None = "",
             timeout: float = 60) -> dict:
        with self._lock:
            self._next += 1
            n = self._next
            q: queue.Queue = queue.Queue()
            self._answers[n] = q
        msg = {"id": n, "method": method, "params": params or {}}
        session = self.session if session == "" else session
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        try:
            answer = q.get(timeout=timeout)
        except queue.Empty:
            raise CdpError(f"{method}: no answer in {timeout} s") from None
        finally:
            with self._lock:
                self._answers.pop(n, None)
        if "error" in answer:
            raise CdpError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    # ---- pages ---------------------------------------------------------------------

    def new_tab(self, width: int = 1400, height: int = 900) -> str:
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=None)["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                            session=None)["sessionId"]
        for method in ("Page.enable", "Runtime.enable"):
            self.send(method, session=session)
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1, "mobile": False},
                  session=session)
        self._targets[session] = target
        return session

    def close_tab(self, session: str) -> None:
        self.send("Target.closeTarget", {"targetId": self._targets.pop(session)}, session=None)

    def eval(self, expression: str, session: str | None = "") -> object:
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                      session=session)
        if "exceptionDetails" in r:
            raise CdpError(f"{expression[:80]}: {r['exceptionDetails'].get('text')}")
        return r["result"].get("value")

    def _loaded(self, session: str | None) -> str:
        """Wait until a new page is loaded and drawn (the old one was marked); its URL."""
        deadline = time.monotonic() + 60
        probe = ("(document.readyState==='complete'&&document.documentElement.getAttribute("
                 "'data-kmc-ready')==='1'&&!window.__kmcOld)?location.href:''")
        while time.monotonic() < deadline:
            try:
                href = self.eval(probe, session)
            except CdpError:   # the old page's context went away mid-navigation
                href = ""
            if href:
                return href
            time.sleep(0.05)
        raise CdpError("the page did not load (no data-kmc-ready)")

    def _mark(self, session: str | None) -> str:
        return self.eval("window.__kmcOld=1; location.href", session)

    def open(self, url: str, session: str | None = "") -> str:
        self._mark(session)
        self.send("Page.navigate", {"url": url}, session=session)
        return self._loaded(session)

    def reload(self, session: str | None = "") -> str:
        self._mark(session)
        self.send("Page.reload", {"ignoreCache": True}, session=session)
        return self._loaded(session)

    def click(self, selector: str, session: str | None = "") -> str:
        """Click the element as a mouse does (at its centre); wait for the
        page it leads to. Returns that page's URL."""
        rect = self.eval(f"(function(){{var e=document.querySelector({json.dumps(selector)});"
                         "if(!e){return null;} e.scrollIntoView({block:'center'});"
                         "var r=e.getBoundingClientRect(); return [r.left+r.width/2, r.top+r.height/2];})()",
                         session)
        if rect is None:
            raise CdpError(f"no element {selector}")
        self._mark(session)
        x, y = rect
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                   "clickCount": 1}, session=session)
        return self._loaded(session)

    def key(self, key: str, session: str | None = "") -> str:
        """Press a key (a named one or one character); wait for the page it leads to."""
        self._mark(session)
        self.press(key, session)
        return self._loaded(session)

    def press(self, key: str, session: str | None = "") -> None:
        """Press a key (a named one or one character), waiting for nothing."""
        params = {"key": key, "code": key}
        if key in KEYS:
            params["windowsVirtualKeyCode"] = KEYS[key]
        else:
            params["text"] = key
            params["windowsVirtualKeyCode"] = ord(key.upper())
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", **params}, session=session)
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **params}, session=session)

    def viewport(self, width: int, height: int, session: str | None = "") -> None:
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1, "mobile": False},
                  session=session)
        time.sleep(0.5)   # the diagram is redrawn for the new width (ResizeObserver)

    def screenshot(self, path: Path, width: int, height: int, session: str | None = "") -> Path:
        self.viewport(width, height, session)
        data = self.send("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.send("Browser.close", session=None, timeout=10)
        except (CdpError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._w, self._r):
            try:
                os.close(fd)
            except OSError:
                pass
