"""A local HTTP server with the pages the web_fetch tests need (real sockets, 127.0.0.1)."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAGE = """<!doctype html><html><head><title>Widget docs</title>
<style>body { color: red }</style><script>window.tracking = true</script></head>
<body><nav><a href="/">Home</a> · <a href="/about">About</a></nav>
<h1>Widgets</h1><p>A <strong>widget</strong> turns <em>gears</em>.
See <a href="/api">the API</a>.</p>
<ul><li>fast</li><li>small</li></ul>
<pre><code>widget.turn(3)</code></pre></body></html>"""


class Pages(BaseHTTPRequestHandler):
    """Routes: /page (HTML), /to/<url> (302 to url), /big (oversize), /slow (hangs),
    /data.json, /doc.pdf, /loop (redirects to itself), /missing (404), /long (long HTML)."""

    hits: list[str]

    def log_message(self, format: str, *args: object) -> None:
        del format, args

    def do_GET(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        if self.path == "/page":
            self._send(200, "text/html; charset=utf-8", PAGE.encode())
        elif self.path.startswith("/to/"):
            self.send_response(302)
            self.send_header("Location", self.path[len("/to/") :])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/loop":
            self.send_response(301)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/big":
            self._send(200, "text/plain", b"x" * 3_000_000)
        elif self.path == "/big-chunked":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Connection", "close")
            self.end_headers()
            for _ in range(300):
                self.wfile.write(b"y" * 10_000)
        elif self.path == "/slow":
            time.sleep(5)
            self._send(200, "text/plain", b"late")
        elif self.path == "/data.json":
            self._send(200, "application/json", json.dumps({"name": "widget", "size": 3}).encode())
        elif self.path == "/doc.pdf":
            self._send(200, "application/pdf", b"%PDF-1.7\n" + b"\x00" * 2000)
        elif self.path == "/long":
            body = "".join(f"<p>Paragraph {i} about filler text.</p>" for i in range(3000))
            body += "<p>The gearbox ratio is 42 to 1.</p>"
            self._send(200, "text/html", f"<html><body>{body}</body></html>".encode())
        else:
            self._send(404, "text/plain", b"not here")

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    """A client that hangs up mid-body (web_fetch stops reading at its size cap) is
    expected here, not an error worth a traceback in the test output."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


@contextmanager
def web_server() -> Iterator[ThreadingHTTPServer]:
    server = _Server(("127.0.0.1", 0), Pages)
    server.daemon_threads = True
    server.hits = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def base_url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"
