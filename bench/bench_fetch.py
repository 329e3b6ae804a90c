"""web-fetch memory and time: does a 10 MiB HTML page stay under 150 MB of peak RSS, within
the time limit and the output budget?

A loopback server serves a 10 MiB article-like HTML page (gzip-encoded on the wire, as most
sites send it, and once plain), and pages that are text all the way: 1 MiB and 10 MiB of dense
article text, 10 MiB of tiny elements (the shape that costs most per byte) and 10 MiB of shop
cards whose bytes are mostly long attribute values (JSON records, srcsets, class lists), the
last three in main-content and full-page mode; and 10 MiB of tiny elements after 1 MB of
JSON-LD, which a large page keeps. The installed web-fetch-tool fetches each in a
subprocess with IKIGAI_WEB_FETCH_ALLOW_PRIVATE=1; the peak RSS of that process is its VmHWM,
polled while it runs (see `run`). Also reported: wall time and stdout size against the
60,000-byte output budget. A gzip bomb (1 GiB of zeros) checks the cap holds memory down too.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "libexec" / "ikigai" / "web-fetch-tool"  # what a host runs
PAGE_BYTES = 10 * 1024 * 1024
BUDGET = 60_000
TARGET_MB = 150.0
TARGET_S = 10.0  # the host kills a tool at 30 s; the whole call has a 25 s deadline


def article(size: int) -> str:
    """An article of sections, paragraphs, links, lists and tables, about `size` bytes long."""
    section = (
        "<h2>Section {n}</h2><p>Paragraph {n} of the benchmark page, with a "
        "<a href='/docs/{n}.html'>relative link</a>, some <em>emphasis</em> and enough words "
        "to look like prose: the quick brown fox jumps over the lazy dog, again and again, "
        "café naïve résumé.</p><ul><li>item one of {n}</li><li>item two of {n}</li></ul>"
        "<table><tr><th>key</th><th>value</th></tr><tr><td>{n}</td><td>x{n}</td></tr></table>"
    )
    parts, used, n = [], 0, 0
    while used < size:
        parts.append(section.format(n=n))
        used += len(parts[-1].encode())
        n += 1
    return "".join(parts)


def repeated(size: int, unit: Callable[[int], str], heading: str = "") -> bytes:
    """A page of about `size` bytes: `unit(n)` for n = 0, 1, ... in its <main>."""
    parts, used, n = [f"<html><body><main>{heading}"], 0, 0
    while used < size - 100:
        parts.append(unit(n))
        used += len(parts[-1])
        n += 1
    return ("".join(parts) + "</main></body></html>").encode()


def elements(size: int) -> bytes:
    """`size` bytes of tiny inline elements, numbered so no two are alike."""
    return repeated(size, lambda n: f"<span>w{n}</span> <b>x</b> ")


def attributes(size: int) -> bytes:
    """`size` bytes of shop-grid cards whose bytes are mostly attribute values: a JSON
    product record, a srcset and a utility-class list on every card."""
    record = ",".join(f'{{"sku":"A{k:03}","price":19.99,"stock":true}}' for k in range(40))
    classes = " ".join(f"md:px-{k} lg:py-{k} hover:bg-gray-{k}00" for k in range(8))
    srcset = ", ".join(f"/i/N-{w}.jpg {w}w" for w in range(100, 2000, 100))
    card = (
        f"<div class='{classes}' data-product='[{record}]'><img src='/i/N.jpg' alt='Table N' "
        f"srcset='{srcset}'><a href='/p/N'>Walnut side table N</a> $9</div>"
    )
    return repeated(size, lambda n: card.replace("N", str(n)), "<h1>Side tables</h1>")


def declared(size: int) -> bytes:
    """`size` bytes of tiny elements after 1 MB of JSON-LD made of empty objects (the most
    memory per byte parsed), which the tool reads even from a large page."""
    script = '<script type="application/ld+json">[' + ",".join(["{}"] * 33_000) + "]</script>"
    head = f"<html><head>{script * 10}</head><body>"
    return elements(size).replace(b"<html><body>", head.encode())


def page(text_bytes: int, total: int) -> bytes:
    """A page of `total` bytes whose article holds `text_bytes`; the rest is what makes real
    pages heavy: inline CSS and JavaScript, base64 images, SVG."""
    head = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Big page</title>"
        "<meta name='author' content='Bench Writer'>"
    )
    body = (
        "</head><body><nav><a href='/'>Home</a> <a href='/about'>About</a></nav>"
        f"<main><article><h1>Big page</h1>{article(text_bytes)}</article></main>"
        "<footer>footer</footer></body></html>"
    )
    rest = max(0, total - len(head) - len(body.encode()))
    style = "<style>" + ".c{color:red;margin:0 auto;padding:1px 2px}\n" * (rest // 5 // 44)
    script = "<script>" + "function f(a,b){return a+b*2;}var x=[1,2,3];\n" * (rest // 3 // 46)
    svg = "<svg>" + '<path d="M10 10 L20 20 L30 10 Z"/>' * (rest // 8 // 36) + "</svg>"
    heavy = style + "</style>" + script + "</script>" + svg
    image = "<img alt='chart' src='data:image/png;base64,{}'>"
    filler = max(0, rest - len(heavy) - len(image) - 64)
    pixels = base64.b64encode(random.Random(1).randbytes(filler * 3 // 4)).decode()
    html = head + heavy + body.replace("<h1>", image.format(pixels) + "<h1>", 1)
    pad = total - len(html.encode()) - len("<!---->")
    return html.replace("<main>", f"<!--{'p' * max(0, pad)}--><main>", 1).encode()


def serve(routes: dict[str, tuple[bytes, dict[str, str]]]) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            pass

        def do_GET(self) -> None:
            body, headers = routes.get(self.path, (b"not found", {}))
            self.send_response(200 if self.path in routes else 404)
            for key, value in ({"Content-Length": str(len(body))} | headers).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

    class Server(ThreadingHTTPServer):
        def handle_error(self, *_: object) -> None:
            pass  # the tool hangs up on the bomb and the oversized page on purpose

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def run(
    url: str, home: Path, *, full_page: bool = False
) -> tuple[dict[str, object], int, float, float]:
    """The answer, stdout bytes, wall seconds and the tool process's peak RSS in MB.

    The peak is VmHWM from /proc, polled while the tool runs: it starts afresh at exec, unlike
    getrusage(RUSAGE_CHILDREN).ru_maxrss, which on Linux also counts this parent's memory
    inherited through fork or vfork before the exec.
    """
    env = os.environ | {
        "IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1",
        "IKIGAI_CONFIG_DIR": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
    }
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [str(TOOL)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(json.dumps({"url": url, "full_page": full_page}).encode())
        proc.stdin.close()
        peak_kb = 0
        while proc.poll() is None:
            peak_kb = max(peak_kb, _hwm_kb(proc.pid))
            time.sleep(0.005)
        out = proc.stdout.read()
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"web-fetch-tool failed: {err.read().decode()[-2000:]}")
    return json.loads(out), len(out), wall, peak_kb / 1024


def _hwm_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def bomb(inflated: int) -> bytes:
    """Gzip of `inflated` zero bytes, made in pieces so this process stays small."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    return b"".join(packer.compress(zeros) for _ in range(inflated >> 20)) + packer.flush()


def main() -> None:
    big = page(400 * 1024, PAGE_BYTES)
    html = {"Content-Type": "text/html; charset=utf-8"}
    gz = html | {"Content-Encoding": "gzip"}
    routes = {
        "/big.html": (big, html),
        "/big-gzip.html": (gzip.compress(big, 6), gz),
        "/bomb": (bomb(1 << 30), gz),
        "/dense-1mib.html": (article(1024 * 1024).encode(), html),
        "/dense-10mib.html": (article(PAGE_BYTES - 4096).encode(), html),
        "/elements-10mib.html": (elements(PAGE_BYTES), html),
        "/attributes-10mib.html": (attributes(PAGE_BYTES - 8192), html),
        "/declared-10mib.html": (declared(PAGE_BYTES - (1 << 20)), html),
    }
    cases = [(path, False) for path in routes]
    full = ("/dense-10mib.html", "/elements-10mib.html", "/attributes-10mib.html")
    cases += [(path, True) for path in full]
    server, base = serve(routes)
    print(
        f"web-fetch of a {len(big) / 2**20:.2f} MiB HTML page (400 KiB of article text, the rest "
        "inline CSS/JS/SVG/base64 image) from 127.0.0.1; then gzip, a gzip bomb, 1 and 10 MiB "
        "of dense text, 10 MiB of tiny elements, 10 MiB of long attribute values, tiny elements "
        "after 1 MB of JSON-LD; [full] = full_page"
    )
    worst, slowest = 0.0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for path, full_page in cases:
            answer, size, wall, peak = run(base + path, Path(tmp), full_page=full_page)
            status = "ok" if answer.get("success") else answer.get("error_code")
            lines = answer.get("total_lines", "-")
            name = path + (" [full]" if full_page else "")
            print(
                f"  {name:27} {status!s:9} total_lines={lines!s:6} stdout={size:,} B "
                f"(budget {BUDGET:,}: {'under' if size <= BUDGET else 'OVER'}) "
                f"wall={wall:.2f} s peak RSS={peak:.1f} MB"
            )
            worst, slowest = max(worst, peak), max(slowest, wall)
            if size > BUDGET:
                sys.exit("stdout exceeded the output budget")
    server.shutdown()
    ok = worst < TARGET_MB and slowest < TARGET_S
    verdict = "PASS" if ok else "FAIL"
    print(
        f"worst peak RSS of the tool: {worst:.1f} MB (target < {TARGET_MB:.0f} MB); slowest "
        f"call: {slowest:.2f} s (target < {TARGET_S:.0f} s) {verdict}"
    )
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
