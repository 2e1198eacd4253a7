"""Loads a model and node data into Google's Model Explorer (ai-edge-model-explorer with its ONNX
adapter) and reads what it renders through headless Chromium's DevTools protocol. Run by the
Model Explorer environment's Python (scripts/bootstrap.sh: .deps/model-explorer-env) for
test_model_explorer.py; prints one JSON object:
  rows: the "Node data" table (label, value text, the value cell's background colour),
  revealed_red_pixels: pixels of the graph area within 12 of `--colour` after the row whose value
    is `--reveal` is clicked (Model Explorer then shows that node in the graph),
  screenshot: the PNG written.
  model_explorer_view.py MODEL NODE_DATA OUT_PNG --reveal VALUE_PREFIX --colour '#e53935'"""
import argparse
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import zlib

import websocket

ROWS_JS = """(() => JSON.stringify([...document.querySelectorAll('tr')]
  .map(tr => [...tr.querySelectorAll('td')])
  .filter(tds => tds.length >= 3 && tds[1].classList.contains('node-label'))
  .map(tds => ({label: tds[1].textContent.trim(), value: tds[2].textContent.trim(),
                bg: getComputedStyle(tds[2]).backgroundColor}))))()"""
CLICK_JS = """(prefix => {
  const rows = [...document.querySelectorAll('tr')].filter(tr => tr.querySelector('td.node-label'));
  const row = rows.find(tr => tr.querySelectorAll('td')[2].textContent.trim().startsWith(prefix));
  if (!row) return false;
  for (const td of row.querySelectorAll('td')) td.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  return true;
})"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, seconds):
    t0 = time.time()
    while time.time() - t0 < seconds:
        try:
            return urllib.request.urlopen(url, timeout=2).read()
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not answer within {seconds} s")


def png_pixels(data):
    """(width, height, rows of RGB(A) bytes) of an 8-bit non-interlaced PNG."""
    pos, chunks, width = 8, [], 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(b"".join(chunks)), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("node_data")
    ap.add_argument("out_png")
    ap.add_argument("--reveal", required=True)
    ap.add_argument("--colour", required=True)
    a = ap.parse_args()
    port, cdp_port = free_port(), free_port()
    server = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "model-explorer"),
                               "--extensions=model_explorer_onnx", a.model, f"--node_data_paths={a.node_data}",
                               "--no_open_in_browser", "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    profile = tempfile.mkdtemp(prefix="chromium-me-")
    browser = None
    try:
        wait_http(f"http://127.0.0.1:{port}/", 60)
        config = {"models": [{"url": a.model}], "nodeData": [a.node_data], "nodeDataTargets": [""]}
        url = f"http://127.0.0.1:{port}/?data=" + urllib.parse.quote(json.dumps(config))
        browser = subprocess.Popen(["chromium", "--headless=new", "--no-sandbox", "--use-gl=angle",
                                    "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                                    "--window-size=1600,1000", f"--remote-debugging-port={cdp_port}",
                                    f"--user-data-dir={profile}", "about:blank"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tabs = json.loads(wait_http(f"http://127.0.0.1:{cdp_port}/json", 60))
        ws = websocket.create_connection(next(t for t in tabs if t["type"] == "page")["webSocketDebuggerUrl"],
                                         timeout=60)
        ids = [0]

        def call(method, **params):
            ids[0] += 1
            ws.send(json.dumps({"id": ids[0], "method": method, "params": params}))
            while True:
                m = json.loads(ws.recv())
                if m.get("id") == ids[0]:
                    if "error" in m:
                        raise SystemExit(f"{method}: {m['error']}")
                    return m["result"]

        def evaluate(expr):
            return call("Runtime.evaluate", expression=expr, returnByValue=True)["result"].get("value")

        call("Page.enable")
        call("Page.navigate", url=url)
        rows, t0 = [], time.time()
        while time.time() - t0 < 90 and not rows:  # the graph is processed, then the table fills
            time.sleep(0.5)
            rows = json.loads(evaluate(ROWS_JS) or "[]")
        if not rows:
            raise SystemExit("Model Explorer showed no node data table within 90 s")
        revealed = evaluate(f"({CLICK_JS})({json.dumps(a.reveal)})")
        time.sleep(3)  # the graph scrolls to the node and draws it
        png = base64.b64decode(call("Page.captureScreenshot", format="png")["data"])
        with open(a.out_png, "wb") as f:
            f.write(png)
        want = tuple(int(a.colour[i:i + 2], 16) for i in (1, 3, 5))
        width, height, bpp, pixels = png_pixels(png)
        graph_width = int(width * 0.72)  # left of the side panel
        red = sum(1 for row in pixels for x in range(graph_width)
                  if all(abs(row[x * bpp + k] - want[k]) <= 12 for k in range(3)))
        print(json.dumps({"rows": rows, "revealed": bool(revealed), "revealed_red_pixels": red,
                          "screenshot": a.out_png}))
        ws.close()
    finally:
        for p in (browser, server):
            if p is not None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
