"""redis-server driven by redis-benchmark: the served process is the server.

    redis.py REQUESTS [--client PROGRAM]

The server listens only on a unix socket in the run's temporary folder (no
TCP port: `--port 0`), with persistence off. redis-benchmark (not served:
it runs on the system allocator, so only the server differs between
allocators) sends REQUESTS requests of each of SET, GET, LPUSH and
LRANGE_100 from 10 clients. The figure is the mean of its requests per
second over those tests (higher is better). The server is stopped in every
case (SIGTERM, which redis answers by exiting, then SIGKILL), also when the
client fails; --client replaces redis-benchmark (the tests use a client that
fails).
"""
from __future__ import annotations

import csv
import io
import os
import pathlib
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import served  # noqa: E402

TESTS = "set,get,lpush,lrange_100"
CLIENTS = "10"
READY_TIMEOUT_S = 10.0
POLL_S = 0.01


def wait_ready(sock: pathlib.Path, server: served.Served) -> bool:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline and server.proc.poll() is None:
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(str(sock))
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return True
        except OSError:
            pass
        time.sleep(POLL_S)
    return False


def mean_rps(text: str) -> float | None:
    rows = [r for r in csv.reader(io.StringIO(text)) if len(r) >= 2]
    values = []
    for row in rows[1:]:
        try:
            values.append(float(row[1]))
        except ValueError:
            continue
    return sum(values) / len(values) if values else None


def main(argv: list[str]) -> int:
    served.drop_preload()
    requests = argv[1]
    client = argv[argv.index("--client") + 1] if "--client" in argv else "redis-benchmark"
    server_path = served.need("redis-server", "redis-server")
    client_path = served.need(client, "redis-tools")
    sock = pathlib.Path.cwd() / "redis.sock"
    server = served.Served([server_path, "--port", "0", "--unixsocket", str(sock),
                            "--save", "", "--appendonly", "no", "--daemonize", "no",
                            "--dir", str(pathlib.Path.cwd())])
    figures, failure = {}, None
    try:
        if not wait_ready(sock, server):
            failure = "redis-server did not answer PING on its socket"
        else:
            proc = subprocess.run([client_path, "-s", str(sock), "-n", requests, "-c", CLIENTS,
                                   "-t", TESTS, "--csv"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=served.plain_env(),
                                  stdin=subprocess.DEVNULL, check=False)
            rps = mean_rps(proc.stdout) if proc.returncode == 0 else None
            if rps is None:
                tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
                failure = f"{client} exited with status {proc.returncode}; stderr: {tail}"
            else:
                figures["requests_per_s"] = served.figure(rps, "requests/s", "higher")
    finally:
        err = server.stop()
    if failure is None and server.status not in (0, None):
        failure = served.failed_exit(server, err)
    return served.finish(server, "redis-server (the client runs on the system allocator)",
                         figures, failure)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
