"""Serve a GGUF model with llama.cpp's HTTP server (the `xllamacpp` wheel) on 127.0.0.1.

Run with a Python that has `xllamacpp` (scripts/deps/realmodel.sh makes one):
    python scripts/realmodel_serve.py MODEL.gguf PORT [CTX] [THREADS]
It prints `listening <url>` once the server answers, and serves until killed. Used by
tests/realmodel and bench/agent_tasks.py; `/v1/messages` and `/v1/chat/completions`.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import urllib.request

import xllamacpp as xl


def main() -> None:
    model, port = sys.argv[1], int(sys.argv[2])
    ctx = int(sys.argv[3]) if len(sys.argv) > 3 else 8192
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else (os.cpu_count() or 2)
    params = xl.CommonParams()
    params.model.path = model
    params.n_ctx = ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.use_jinja = True
    params.endpoint_metrics = True  # /metrics: the bench counts every agent's tokens there
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.sampling.seed = 42
    params.sampling.temp = 0.0
    params.model_alias = {"qwen"} if isinstance(params.model_alias, set) else "qwen"
    server = xl.Server(params)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as reply:
                if reply.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    print(f"listening {url}", flush=True)  # noqa: T201 (the readiness line callers wait for)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    del server


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    main()
