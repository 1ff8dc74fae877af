"""Inside the sandbox: loopback ports that lead out through Unix sockets (stdlib only).

A sandboxed run has its own network namespace: only its own loopback exists, and nothing
it opens reaches this machine or the internet. What the settings let through arrives as
Unix sockets in a folder bound into the sandbox, each served on the host by agentls:

- `proxy.sock` leads to agentls's filtering HTTP proxy (`sandbox.network.allowedDomains`):
  this program listens on a free loopback port for it and starts the command with
  `HTTP_PROXY`/`HTTPS_PROXY` pointing there;
- `port-N.sock` leads to port N on the host's loopback (`allowLocalBinding`): this program
  listens on port N inside, so `127.0.0.1:N` works as it does outside.

Copied into that folder and run as `python -I -S _forwarder.py FOLDER NO_PROXY -- ARGV...`
(so it runs even when agentls's own files are hidden). It only copies bytes; the proxy
does the HTTP. It exits with the command's status; stop signals are for the command.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading

_CHUNK = 64 * 1024


def pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(_CHUNK):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((target, socket.SHUT_WR), (source, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                sock.shutdown(how)


def serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        for source, target in ((client, upstream), (upstream, client)):
            threading.Thread(target=pump, args=(source, target), daemon=True).start()


def listen(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    return listener


def ignore(signum: int, frame: object) -> None:
    """Stop signals are for the command; a handler (not SIG_IGN) is reset by exec."""


def main() -> None:
    folder, no_proxy, separator, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    if separator != "--" or not argv:
        sys.stderr.write("usage: _forwarder.py FOLDER NO_PROXY -- ARGV...\n")
        sys.exit(2)
    env = dict(os.environ)
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name == "proxy.sock":
            listener = listen(0)
            address = f"http://127.0.0.1:{listener.getsockname()[1]}"
            for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
                env[var] = address
            env["NO_PROXY"] = env["no_proxy"] = no_proxy
        elif name.startswith("port-") and name.endswith(".sock"):
            try:
                listener = listen(int(name[5:-5]))
            except (ValueError, OSError):
                continue
        else:
            continue
        threading.Thread(target=serve, args=(listener, path), daemon=True).start()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, ignore)
    try:
        child = subprocess.Popen(argv, env=env)
    except OSError as exc:
        sys.stderr.write(f"agentls: cannot run {argv[0]!r}: {exc.strerror}\n")
        sys.exit(127)
    status = child.wait()
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


if __name__ == "__main__":
    main()
