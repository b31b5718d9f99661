#!/usr/bin/env python3
"""cdp.py — load a page in headless Chromium and drive it over the DevTools
protocol, through a pipe (--remote-debugging-pipe: JSON messages ended by
NUL on fds 3 and 4, so no websocket library is needed).

    cdp.py PAGE OUT.json [SCREENSHOT.png] < STEPS

Chromium starts with a fresh --user-data-dir and the flags of a quiet
headless run (no background networking, component updates or sync), loads
PAGE from file://, then evaluates each step of STEPS (JavaScript
expressions separated by lines holding only "----"; a step may return a
promise) and writes OUT.json:

    {"load_ms": ..., "results": [value of each step],
     "requests": [every URL requested other than the page itself],
     "errors": [console errors, uncaught exceptions, error log entries]}

Chromium is stopped by its pid at the end, also when anything fails.
$CHROMIUM names the binary (default: chromium).
"""
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, binary):
        self.profile = tempfile.mkdtemp(prefix="proff-chromium.")
        cmd_r, self.cmd_w = os.pipe()
        self.resp_r, resp_w = os.pipe()

        def child_fds():
            os.dup2(cmd_r, 3)
            os.dup2(resp_w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--mute-audio", "--hide-scrollbars",
             "--window-size=1280,900", "--user-data-dir=" + self.profile,
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child_fds, pass_fds=(3, 4))
        os.close(cmd_r)
        os.close(resp_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        want = self.next_id
        end = time.time() + timeout
        while True:
            m = self.read(end)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def read(self, end):
        while b"\0" not in self.buf:
            left = end - time.time()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            r, _, _ = select.select([self.resp_r], [], [], left)
            if not r:
                continue
            chunk = os.read(self.resp_r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def wait_event(self, method, timeout=60):
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        end = time.time() + timeout
        while True:
            m = self.read(end)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", session=False, timeout=5)
                except Exception:
                    pass
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            for fd in (self.cmd_w, self.resp_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    page, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    shot = sys.argv[3] if len(sys.argv) > 3 else None
    steps = [s.strip() for s in sys.stdin.read().split("\n----\n") if s.strip()]
    url = "file://" + page
    b = Browser(os.environ.get("CHROMIUM", "chromium"))
    try:
        targets = b.send("Target.getTargets", session=False)["targetInfos"]
        page_t = next(t for t in targets if t["type"] == "page")
        b.session = b.send("Target.attachToTarget", {"targetId": page_t["targetId"], "flatten": True},
                           session=False)["sessionId"]
        for dom in ("Page", "Network", "Runtime", "Log"):
            b.send(dom + ".enable")
        t0 = time.time()
        b.send("Page.navigate", {"url": url})
        b.wait_event("Page.loadEventFired")
        load_ms = (time.time() - t0) * 1000
        results = []
        for s in steps:
            r = b.send("Runtime.evaluate", {"expression": s, "returnByValue": True, "awaitPromise": True})
            if "exceptionDetails" in r:
                results.append({"exception": r["exceptionDetails"].get("exception", {}).get("description",
                                r["exceptionDetails"].get("text"))})
            else:
                results.append(r["result"].get("value"))
        if shot:
            png = b.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
            with open(shot, "wb") as f:
                f.write(base64.b64decode(png))
        # the events that came meanwhile
        b.send("Runtime.evaluate", {"expression": "1"})
        requests, errors = [], []
        for m in b.events:
            meth, p = m.get("method"), m.get("params", {})
            if meth == "Network.requestWillBeSent":
                u = p["request"]["url"]
                if u != url:
                    requests.append(u)
            elif meth == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif meth == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                errors.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
            elif meth == "Log.entryAdded" and p["entry"]["level"] == "error":
                errors.append("log: " + p["entry"]["text"])
        with open(out, "w") as f:
            json.dump({"load_ms": load_ms, "results": results, "requests": requests, "errors": errors}, f)
    finally:
        b.close()


if __name__ == "__main__":
    main()
