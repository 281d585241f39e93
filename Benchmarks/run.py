#!/usr/bin/env python3
"""Runs Wattle's benchmarks against their references and writes BENCHMARKS.md.

Started by `make bench` once the programs are built. It starts nginx on 127.0.0.1 with its own
configuration in a temporary folder (HTTP/1.1 on one port; TLS with HTTP/2 and a self-signed
certificate made with the openssl CLI on another), runs every measurement interleaved
(A, B, C, A, B, C, ...), computes min/median/max over the repetitions and the ratios to the
reference, writes BENCHMARKS.md (and the raw results under bench-results/), and stops nginx by
its pid whatever happens.

A benchmark is not a test: a missed goal is reported, never an exit status. The exit status is
non-zero only when the harness itself cannot run (nginx does not start, a program is missing).
"""

import argparse
import datetime
import json
import os
import platform
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

REPS = 3  # at least 3 everywhere
HTTP_REPS = 5  # the short networking runs are noisier: 5, still interleaved
# The keychain's read/upsert runs: a durable upsert is mostly one fsync, whose latency moves in
# phases of seconds on this VM (the same C program's p50 went from 134 to 188 µs between runs a
# second apart), so a median of 3 let one row swing by 20%. A run takes under a second: 9.
KEYCHAIN_REPS = 9
# The Wattle row measured with its requests run on the network thread
# (Session.withNetworkThreadExecutor), beside the default row.
EXECUTOR = "Wattle, network-thread executor"
AS_WATTLE = "libcurl with Wattle's options (C)"


# --------------------------------------------------------------------------------------------
# nginx


class Nginx:
    """nginx in a temporary folder; stopped by its pid in stop() (also on SIGINT/SIGTERM)."""

    def __init__(self, folder):
        self.folder = folder
        self.process = None
        self.http_port = free_port()
        self.https_port = free_port()
        self.cert = os.path.join(folder, "cert.pem")

    def prepare(self, big_bytes):
        www = os.path.join(self.folder, "www")
        os.makedirs(www)
        os.makedirs(os.path.join(self.folder, "temp"))
        # nginx's workers drop to an unprivileged user when started as root: let them read.
        os.chmod(self.folder, 0o755)
        os.chmod(www, 0o755)
        record = {
            "id": 1842,
            "name": "Wattle benchmark",
            "email": "bench@example.test",
            "active": True,
            "roles": ["reader", "writer"],
            "created": "2026-01-01T00:00:00Z",
            "token": "0123456789abcdef0123456789abcdef",
            "tags": ["alpha", "beta", "gamma", "delta"],
            "score": 97.25,
            "address": {"street": "1 Loopback Lane", "city": "Localhost", "zip": "12700"},
        }
        small = json.dumps(record, indent=1).encode() + b"\n"
        with open(os.path.join(www, "small.json"), "wb") as f:
            f.write(small)
        self.small_bytes = len(small)
        chunk = os.urandom(1 << 20)
        with open(os.path.join(www, "big.bin"), "wb") as f:
            written = 0
            while written < big_bytes:
                n = min(len(chunk), big_bytes - written)
                f.write(chunk[:n])
                written += n
        self.big_bytes = big_bytes
        for name in ("small.json", "big.bin"):
            os.chmod(os.path.join(www, name), 0o644)
        # A self-signed certificate for 127.0.0.1 and localhost, made now.
        key = os.path.join(self.folder, "key.pem")
        run_quiet(
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout", key, "-out", self.cert,
            ]
        )
        os.chmod(key, 0o644)
        t = self.folder
        conf = f"""
worker_processes 1;
daemon off;
master_process on;
pid {t}/nginx.pid;
error_log {t}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    types {{ application/json json; application/octet-stream bin; }}
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    open_file_cache max=16 inactive=300s;
    client_body_temp_path {t}/temp/client;
    proxy_temp_path {t}/temp/proxy;
    fastcgi_temp_path {t}/temp/fastcgi;
    uwsgi_temp_path {t}/temp/uwsgi;
    scgi_temp_path {t}/temp/scgi;
    server {{
        listen 127.0.0.1:{self.http_port} backlog=4096;
        root {t}/www;
    }}
    server {{
        listen 127.0.0.1:{self.https_port} ssl http2 backlog=4096;
        root {t}/www;
        ssl_certificate {self.cert};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:SSL:1m;
        http2_max_concurrent_streams 256;
    }}
}}
"""
        self.conf = os.path.join(self.folder, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(conf)

    def start(self):
        self.process = subprocess.Popen(
            ["nginx", "-p", self.folder, "-c", self.conf, "-e", os.path.join(self.folder, "error.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise SystemExit("nginx did not start: " + self.process.stderr.read().decode(errors="replace"))
            if port_open(self.http_port) and port_open(self.https_port):
                return
            time.sleep(0.05)
        raise SystemExit("nginx did not open its ports in 10 s")

    def stop(self):
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None

    def url(self, tls, path):
        if tls:
            return f"https://127.0.0.1:{self.https_port}/{path}"
        return f"http://127.0.0.1:{self.http_port}/{path}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def run_quiet(argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# --------------------------------------------------------------------------------------------
# Running programs


def run_json(argv, timeout=600, env=None):
    """Runs a benchmark program; returns its last JSON line, or {"error": ...}."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                           env=dict(os.environ, **env) if env else None)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    except OSError as e:
        return {"error": str(e)}
    result = None
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                result = json.loads(line)
            except ValueError:
                pass
    if result is None:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {p.returncode}: {tail[:200]}"}
    if p.returncode != 0 or result.get("errors", 0):
        tail = (p.stderr.strip().splitlines() or [""])[-1]
        result["error"] = f"exit {p.returncode}, {result.get('errors', 0)} failed requests: {tail[:200]}"
    return result


def interleaved(entries, reps=REPS, log=None):
    """entries: [(label, argv or callable)]. Runs A, B, C, A, B, C, ...; returns {label: [results]}."""
    results = {label: [] for label, _ in entries}
    for rep in range(reps):
        for label, command in entries:
            r = command() if callable(command) else run_json(command)
            results[label].append(r)
            if log:
                log(f"  rep {rep + 1}/{reps} {label}: {summary(r)}")
    return results


def summary(r):
    if "error" in r and "seconds" not in r:
        return "ERROR " + r["error"]
    keys = ("requests", "seconds", "cpu", "maxrss_kb", "read_p50_us", "upsert_p50_us", "open_p50_us", "wall")
    text = " ".join(f"{k}={r[k]:.4g}" if isinstance(r[k], float) else f"{k}={r[k]}" for k in keys if k in r)
    return text + (" ERROR " + r["error"] if "error" in r else "")


# --------------------------------------------------------------------------------------------
# Statistics


def good(results):
    return [r for r in results if "error" not in r]


def stats(values):
    if not values:
        return None
    return (min(values), statistics.median(values), max(values))


def metric(results, f):
    return stats([f(r) for r in good(results)])


def rps(r):
    return r["requests"] / r["seconds"]


def cpu_ms_per_1000(r):
    return r["cpu"] / r["requests"] * 1000 * 1000


def mb_per_s(r):
    return r["bytes"] / r["seconds"] / 1e6


def mib(kb):
    return kb / 1024


def fmt(v, digits=None):
    if v is None:
        return "–"
    if digits is not None:
        return f"{v:,.{digits}f}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def fmt3(s, digits=None):
    if s is None:
        return "failed"
    return f"{fmt(s[0], digits)} / **{fmt(s[1], digits)}** / {fmt(s[2], digits)}"


def ratio(a, b):
    if a is None or b is None or b[1] == 0:
        return None
    return a[1] / b[1]


def fmt_ratio(r):
    return "–" if r is None else f"{r:.2f}x"


# --------------------------------------------------------------------------------------------
# Goals


class Goals:
    def __init__(self):
        self.rows = []
        # Names of the missed goals that the reference of their row missed as well (see at_least).
        self.beyond_limit = []

    def at_least(self, name, value, target, unit="x", limit=None, limit_name=None):
        """A goal of at least `target`. For a ratio to another client (URLSession,
        AsyncHTTPClient), `limit` is the same ratio for the practical limit (`limit_name`: raw
        libcurl) measured in the same run: when the limit itself falls short, a miss says so,
        since meeting the goal would then take beating the limit."""
        self._add(name, value, target, value is not None and value >= target, ">=", unit)
        if limit is None or value is None or value >= target or limit >= target:
            return
        name_, shown, goal, result, by = self.rows[-1]
        self.rows[-1] = (name_, shown, goal, result, f"{by}; {limit_name} itself: {limit:.2f}x")
        self.beyond_limit.append(name)

    def at_most(self, name, value, target, unit="x"):
        self._add(name, value, target, value is not None and value <= target, "<=", unit)

    def not_measured(self, name, why):
        self.rows.append((name, "–", "–", "not measured", why))

    def _add(self, name, value, target, ok, op, unit):
        if value is None:
            self.rows.append((name, "–", f"{op} {target}{unit}", "not measured", "a run failed"))
            return
        shown = f"{value:.2f}{unit}" if unit == "x" else f"{value:.1f} {unit}"
        goal = f"{op} {target}{unit}" if unit == "x" else f"{op} {target} {unit}"
        if ok:
            self.rows.append((name, shown, goal, "**pass**", ""))
            return
        if op == ">=":
            by = f"short by {(1 - value / target) * 100:.0f}%" if target else ""
        else:
            by = f"over by {(value / target - 1) * 100:.0f}%" if target else ""
        self.rows.append((name, shown, goal, "**miss**", by))


# --------------------------------------------------------------------------------------------
# The measurements


class Bench:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.bin = args.bin_dir
        self.cbin = args.c_bin_dir
        self.sections = []  # markdown chunks
        self.goals = Goals()
        self.raw = {}

    def log(self, text):
        print(text, flush=True)

    def prog(self, name):
        folder = self.cbin if name.startswith("bench-curl") or name.startswith("bench-keychain-c") else self.bin
        return os.path.join(folder, name)

    def n(self, full, quick):
        return quick if self.quick else full

    # HTTP ---------------------------------------------------------------------------------

    def http_tools(self, mode, tls, h2, n, c=None, urlsession=True, url=None):
        """The (label, argv) of each client for one HTTP measurement."""
        version = "h2" if h2 else "h1"
        ca = self.nginx.cert if tls else ""
        url = url or self.nginx.url(tls, "small.json")
        slow = max(1000, n // 4)  # URLSession is ~10x slower: fewer requests, same rate

        def argv(program, count):
            if mode == "conc":
                return [self.prog(program), "conc", url, str(count), str(c), version, ca]
            return [self.prog(program), mode, url, str(count), version, ca]

        tools = [
            ("raw libcurl (C)", argv("bench-curl", n)),
            # The same C program doing the libcurl work Wattle asks for (its options, callbacks,
            # header lines and metrics, a multi handle per transfer): not a goal's reference, but
            # what tells the cost of Wattle's libcurl features from the cost of its Swift layer.
            (AS_WATTLE, ["env", "BENCH_AS_WATTLE=1"] + argv("bench-curl", n)),
            ("Wattle", argv("bench-wattle", n)),
            # The same program, its measurement run inside Session.withNetworkThreadExecutor.
            (EXECUTOR, ["env", "WATTLE_BENCH_EXECUTOR=1"] + argv("bench-wattle", n)),
            ("AsyncHTTPClient", argv("bench-ahc", n)),
        ]
        if urlsession and not tls:
            tools.append(("URLSession", argv("bench-urlsession", slow)))
        return tools

    def throughput_section(self, key, title, note, tools):
        self.log(f"{title}")
        results = interleaved(tools, reps=HTTP_REPS, log=self.log)
        self.raw[key] = results
        ref = results["raw libcurl (C)"]
        ref_rps, ref_cpu = metric(ref, rps), metric(ref, cpu_ms_per_1000)
        lines = [f"### {title}", "", note, "",
                 "| client | requests/s (min / **median** / max) | vs libcurl | CPU ms per 1,000 requests (min / **median** / max) | vs libcurl |",
                 "| --- | --- | --- | --- | --- |"]
        out = {}
        for label, _ in tools:
            rs = results[label]
            r, c = metric(rs, rps), metric(rs, cpu_ms_per_1000)
            out[label] = (r, c)
            failed = [x["error"] for x in rs if "error" in x]
            extra = f" ({len(failed)} of {len(rs)} runs failed: {failed[0]})" if failed else ""
            lines.append(f"| {label}{extra} | {fmt3(r)} | {fmt_ratio(ratio(r, ref_rps))} | {fmt3(c)} | {fmt_ratio(ratio(c, ref_cpu))} |")
        counts = ", ".join(f"{label}: {rs[0].get('requests', '?')}" for label, rs in results.items() if rs)
        lines += ["", f"Requests per repetition: {counts}.", ""]
        split = self.cost_split(out)
        if split:
            lines += [split, ""]
        self.sections.append("\n".join(lines))
        return out

    @staticmethod
    def cost_split(out):
        """One sentence splitting Wattle's extra CPU per request (medians; ms per 1,000 requests
        is µs per request) into its libcurl features' share (the C program doing Wattle's libcurl
        work, against the plain one) and its Swift layer's (Wattle against that C program)."""
        def median(label):
            value = out.get(label, (None, None))[1]
            return value[1] if value else None

        ref, same = median("raw libcurl (C)"), median(AS_WATTLE)
        if ref is None or same is None:
            return ""
        parts = [f"{median(label) - same:.1f} µs {name}"
                 for label, name in (("Wattle", "by default"), (EXECUTOR, "with the network-thread executor"))
                 if median(label) is not None]
        if not parts:
            return ""
        return (f"CPU per request, split: Wattle's libcurl features (the C program doing the same libcurl work) "
                f"cost {same - ref:.1f} µs over raw libcurl's {ref:.1f} µs; "
                f"its Swift layer over that, {' and '.join(parts)}.")

    def http_goals(self, name, out, urlsession=False, ahc=True):
        c_rps, c_cpu = out["raw libcurl (C)"]
        for label, suffix in (("Wattle", ""), (EXECUTOR, " (network-thread executor)")):
            if label not in out:
                continue
            w_rps, w_cpu = out[label]
            self.goals.at_least(f"{name}: throughput vs raw libcurl{suffix}", ratio(w_rps, c_rps), 0.9)
            self.goals.at_most(f"{name}: CPU per request vs raw libcurl{suffix}", ratio(w_cpu, c_cpu), 1.3)
            for other, wanted, target in (("URLSession", urlsession, 5), ("AsyncHTTPClient", ahc, 2)):
                if wanted and other in out:
                    self.goals.at_least(f"{name}: throughput vs {other}{suffix}", ratio(w_rps, out[other][0]), target,
                                        limit=ratio(c_rps, out[other][0]), limit_name="raw libcurl")

    def run_http(self):
        seq_n = self.n(20000, 3000)
        conc_n = self.n(40000, 6000)
        self.sections.append("## Networking\n")

        out = self.throughput_section(
            "seq_http", "Sequential GETs over HTTP (HTTP/1.1, one kept-alive connection)",
            f"GET of the {self.nginx.small_bytes}-byte JSON, one after another, each awaited before the next.",
            self.http_tools("seq", False, False, seq_n))
        self.http_goals("Sequential, HTTP", out, urlsession=True)

        out = self.throughput_section(
            "seq_https_h1", "Sequential GETs over HTTPS, HTTP/1.1",
            "The same over TLS (one connection, one handshake). URLSession is absent from every HTTPS row: "
            "on Linux it cannot be made to trust a self-signed certificate.",
            self.http_tools("seq", True, False, seq_n))
        self.http_goals("Sequential, HTTPS HTTP/1.1", out)

        out = self.throughput_section(
            "seq_https_h2", "Sequential GETs over HTTPS, HTTP/2 (Wattle's default)",
            "The same over one HTTP/2 connection.",
            self.http_tools("seq", True, True, seq_n))
        self.http_goals("Sequential, HTTPS HTTP/2", out)

        out = self.throughput_section(
            "conc_h1", "32 concurrent GETs over HTTP/1.1 (connection pool)",
            "32 requests in flight at all times over plain HTTP: each client opens a pool of up to 32 kept-alive "
            "connections (libcurl: one multi handle, CURLMOPT_MAXCONNECTS 32; Wattle: connectionsPerHost 32; "
            "AsyncHTTPClient: concurrentHTTP1ConnectionsPerHostSoftLimit 32; URLSession: httpMaximumConnectionsPerHost 32).",
            self.http_tools("conc", False, False, conc_n, c=32))
        self.http_goals("32 concurrent, HTTP/1.1", out, urlsession=True)

        out = self.throughput_section(
            "conc_h2", "32 concurrent GETs over HTTP/2 (one multiplexed TLS connection)",
            "32 streams in flight on one HTTP/2 connection (libcurl: CURLPIPE_MULTIPLEX with CURLOPT_PIPEWAIT; "
            "Wattle: multiplexing on, the default; AsyncHTTPClient: HTTP/2 negotiated by ALPN).",
            self.http_tools("conc", True, True, conc_n, c=32))
        self.http_goals("32 concurrent, HTTP/2", out)

    def run_download(self):
        size_mb = self.nginx.big_bytes / 1e6
        rows = []
        for key, tls, h2, title in (
            ("download_http", False, False, "over HTTP/1.1"),
            ("download_https", True, True, "over HTTPS, HTTP/2"),
        ):
            url = self.nginx.url(tls, "big.bin")
            ca = self.nginx.cert if tls else ""
            version = "h2" if h2 else "h1"
            target = os.path.join(self.args.scratch, "download.bin")

            def tool(program, env=None):
                def go():
                    r = run_json([self.prog(program), "download", url, target, version, ca], env=env)
                    if "error" not in r and r.get("bytes") != self.nginx.big_bytes:
                        r["error"] = f"wrote {r.get('bytes')} bytes, not {self.nginx.big_bytes}"
                    if os.path.exists(target):
                        os.unlink(target)
                    return r
                return go

            plain, durable = "raw libcurl (C)", "raw libcurl (C) + fsync of the file and its folder"
            synced, unsynced = "Wattle (default: `.synced`)", "Wattle, `durability: .unsynced`"
            tools = [(plain, tool("bench-curl")), (durable, tool("bench-curl", {"BENCH_FSYNC": "1"})),
                     (synced, tool("bench-wattle")), (unsynced, tool("bench-wattle", {"WATTLE_BENCH_UNSYNCED": "1"})),
                     ("AsyncHTTPClient", tool("bench-ahc"))]
            if not tls:
                tools.append(("URLSession", tool("bench-urlsession")))
            self.log(f"Download {size_mb:.0f} MB {title}")
            results = interleaved(tools, reps=HTTP_REPS, log=self.log)
            self.raw[key] = results
            ref, durable_ref = metric(results[plain], mb_per_s), metric(results[durable], mb_per_s)
            for label, _ in tools:
                rs = results[label]
                t, rss = metric(rs, mb_per_s), metric(rs, lambda r: mib(r["maxrss_kb"]))
                start = metric(rs, lambda r: mib(r["rss_start_kb"]))
                cpu = metric(rs, lambda r: r["cpu"] / r["bytes"] * 1e9)  # CPU seconds per GB
                failed = [x["error"] for x in rs if "error" in x]
                extra = f" ({len(failed)} of {len(rs)} runs failed: {failed[0]})" if failed else ""
                rows.append(f"| {title} | {label}{extra} | {fmt3(t)} | {fmt_ratio(ratio(t, ref))} | "
                            f"{fmt_ratio(ratio(t, durable_ref))} | {fmt3(rss)} | "
                            f"{fmt(start[1]) if start else '–'} | {fmt3(cpu)} |")
                # Each Wattle mode against the reference doing the same work: the page cache
                # alone, or the page cache and then the disk.
                if label == unsynced:
                    self.goals.at_least(f"Download {size_mb:.0f} MB {title}: throughput vs raw libcurl (`.unsynced`)",
                                        ratio(t, ref), 0.9)
                if label == synced:
                    self.goals.at_least(f"Download {size_mb:.0f} MB {title}: throughput vs raw libcurl + fsync "
                                        "(`.synced`, the default)", ratio(t, durable_ref), 0.9)
                if label in (synced, unsynced):
                    self.goals.at_most(f"Download {size_mb:.0f} MB {title}: peak RSS ({'`.synced`' if label == synced else '`.unsynced`'})",
                                       rss[2] if rss else None, 30, "MiB")
        self.sections.append("\n".join([
            f"### Download of a {size_mb:.0f} MB file to a file", "",
            "Each run is a new process that streams the body to a file on disk. Wattle: `Session.download(_:to:)`, which "
            "writes a temporary file and renames it into place; by default (`.synced`) it fsyncs the file before the "
            "rename and the folder after it, so a finished download survives a power loss, and with "
            "`durability: .unsynced` it leaves both to the page cache. libcurl: a write callback calling write(2), and "
            "a second row that also fsyncs the file and its folder, the like-for-like reference for `.synced`. "
            "AsyncHTTPClient: FileDownloadDelegate; URLSession: `download(from:)`, then a move into place; neither "
            "fsyncs. The goal rows compare each Wattle mode with the reference doing the same work. "
            "Peak RSS is the process's VmHWM, start-up included; "
            "\"RSS at process start\" is VmRSS before the client was made (the runtime and the libraries the program "
            "links; the Swift programs' own code uses no Foundation, so for Wattle it is what Wattle brings in), so "
            "the difference is what the download itself costs.", "",
            "| protocol | client | MB/s (min / **median** / max) | vs libcurl | vs libcurl + fsync | peak RSS MiB (min / **median** / max) | RSS at process start MiB (median) | CPU s per GB (min / **median** / max) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"] + rows + [""]))

    def run_flat(self):
        n = self.n(100000, 20000)
        url = self.nginx.url(False, "small.json")
        tools = [("raw libcurl (C)", [self.prog("bench-curl"), "flat", url, str(n), "h1", ""]),
                 ("Wattle", [self.prog("bench-wattle"), "flat", url, str(n), "h1", ""])]
        self.log(f"Flat memory: {n} sequential requests")
        results = interleaved(tools, log=self.log)
        self.raw["flat"] = results
        rows = []
        for label, _ in tools:
            rs = results[label]
            warm = metric(rs, lambda r: mib(r["rss_warm_kb"]))
            end = metric(rs, lambda r: mib(r["rss_end_kb"]))
            growth = metric(rs, lambda r: mib(r["rss_end_kb"] - r["rss_warm_kb"]))
            peak = metric(rs, lambda r: mib(r["maxrss_kb"]))
            rows.append(f"| {label} | {fmt3(warm)} | {fmt3(end)} | {fmt3(growth, 2)} | {fmt3(peak)} |")
            if label == "Wattle":
                self.goals.at_most(f"{n:,}-request run: RSS growth after warm-up (worst run)",
                                   growth[2] if growth else None, 5, "MiB")
        self.sections.append("\n".join([
            f"### Memory over a {n:,}-request run", "",
            f"{n:,} sequential GETs over HTTP/1.1 in one process. RSS is read (VmRSS) after the first {n // 10:,} "
            "requests (warm) and at the end; memory must stay flat.", "",
            "| client | RSS after warm-up MiB | RSS at end MiB | growth MiB | peak RSS MiB |",
            "| --- | --- | --- | --- | --- |"] + rows + [""]))

    def cli_ready(self, cli, url, env):
        """(True, "") when `cli GET url` works, else (False, why)."""
        if not cli or not os.access(cli, os.X_OK):
            return False, f"CLI not ready: no executable at {cli}"
        try:
            p = subprocess.run([cli, "GET", url], capture_output=True, timeout=30, stdin=subprocess.DEVNULL, env=env)
        except (OSError, subprocess.TimeoutExpired) as e:
            return False, f"CLI not ready: {e}"
        if p.returncode == 0 and b"Wattle benchmark" in p.stdout:
            return True, ""
        return False, f"CLI not ready: `wattle GET URL` exited {p.returncode}"

    def run_cli(self):
        url = self.nginx.url(False, "small.json")
        origin = self.nginx.url(False, "")
        # The CLI keeps tokens in $XDG_DATA_HOME/wattle: throw-away ones, never the user's. A plain
        # GET creates no keychain there and, finding none, opens none: the GET of someone who has
        # never logged in. The second folder holds a keychain with a token for nginx's origin
        # (`wattle auth set-token`): each GET opens it, reads the token and sends it, as a
        # logged-in user's does; its reference is curl sending the same header.
        env = dict(os.environ, XDG_DATA_HOME=os.path.join(self.args.scratch, "xdg"))
        token_env = dict(os.environ, XDG_DATA_HOME=os.path.join(self.args.scratch, "xdg-token"))
        token = "bench-" + "0123456789abcdef" * 2
        # The same CLI twice: as `swift build` links it (the Swift runtime and FoundationEssentials
        # as shared libraries) and as `make cli` links it (--static-swift-stdlib, and libstdc++,
        # libsodium and SQLite linked in by scripts/static-libs.sh), as one would ship it.
        builds = [("wattle", self.args.wattle_cli, "CLI one-shot GET"),
                  ("wattle, static Swift runtime", self.args.wattle_cli_static, "CLI one-shot GET (static Swift runtime)")]
        http = shutil.which("http")
        curl = shutil.which("curl")
        with_token = "curl, with the token"
        commands = [("curl", [curl, "-s", url], env),
                    (with_token, [curl, "-s", "-H", f"Authorization: Bearer {token}", url], env)]
        missing = []
        token_rows = []  # (label, goal) of the builds timed with a stored token
        for label, cli, goal in builds:
            if not cli:
                continue
            ready, why = self.cli_ready(cli, url, env)
            if not ready:
                missing.append((label, goal, why))
                continue
            commands.append((label, [cli, "GET", url], env))
            kept = subprocess.run([cli, "auth", "set-token", token, "--url", origin], capture_output=True,
                                  timeout=30, stdin=subprocess.DEVNULL, env=token_env)
            if kept.returncode == 0:
                commands.append((f"{label}, with a stored token", [cli, "GET", url], token_env))
                token_rows.append((f"{label}, with a stored token", goal.replace("GET", "GET with a stored token", 1)))
            else:
                self.log(f"  {label}: `wattle auth set-token` exited {kept.returncode}: {kept.stderr[-300:]!r}")
        httpie_label = "httpie (http)"
        if http:
            commands.append((httpie_label, [http, "--ignore-stdin", "GET", url], env))
        # 60 runs a repetition (20 until session 20): with 20, the two curl rows, which do the
        # same work, differed by up to 7% in one run, as much as the margins being measured.
        # httpie, ~40x slower and far from its goal, runs 10 times a repetition.
        runs = self.n(60, 3)
        httpie_runs = self.n(10, 3)
        self.log(f"CLI one-shot GET, {runs} runs per repetition ({httpie_runs} of httpie), "
                 "the tools taking turns run by run")

        def once(argv, environment):
            t0 = time.perf_counter()
            p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=environment)
            return time.perf_counter() - t0, p.returncode

        # Each run of one tool is followed by a run of each other, so that a change in the
        # machine's state during a repetition (the disk writing back the downloads before,
        # another process) reaches every tool alike; a repetition is the median of its runs. The
        # order is shuffled at every turn: with a fixed order, curl right after a wattle run took
        # 6.88 ms and curl right after curl 6.62 (200 turns), so the order itself moved ratios.
        shuffler = random.Random(7)
        results = {label: [] for label, _, _ in commands}
        for rep in range(REPS):
            walls = {label: [] for label, _, _ in commands}
            errors = {}
            for _ in range(runs):
                for label, argv, environment in shuffler.sample(commands, len(commands)):
                    if label in errors or (label == httpie_label and len(walls[label]) >= httpie_runs):
                        continue
                    wall, code = once(argv, environment)
                    if code != 0:
                        errors[label] = f"{argv[0]} exited {code}"
                    walls[label].append(wall)
            for label, _, _ in commands:
                if label in errors:
                    r = {"error": errors[label]}
                else:
                    r = {"wall": statistics.median(walls[label]) * 1000, "runs": len(walls[label])}
                results[label].append(r)
                self.log(f"  rep {rep + 1}/{REPS} {label}: {summary(r)}")
        self.raw["cli"] = results
        ref = metric(results["curl"], lambda r: r["wall"])
        token_ref = metric(results[with_token], lambda r: r["wall"])
        rows = []
        for label, argv, environment in commands:
            w = metric(results[label], lambda r: r["wall"])
            shown = " ".join(os.path.basename(a) if i == 0 else (f'"{a}"' if " " in a else a)
                             for i, a in enumerate(argv)).replace(token, "TOKEN")
            against = token_ref if environment is token_env else ref
            rows.append(f"| {label} | `{shown}` | {fmt3(w)} | {fmt_ratio(ratio(w, against))} |")
        for label, goal, why in missing:
            rows.append(f"| {label} | `wattle GET {url}` | not measured ({why}) | – |")
            self.goals.not_measured(f"{goal} vs curl", why)
            self.goals.not_measured(f"{goal} vs httpie", why)
        for label, _, goal in builds:
            if label not in results:
                continue
            w = metric(results[label], lambda r: r["wall"])
            self.goals.at_most(f"{goal}: wall time vs curl", ratio(w, ref), 1.5)
            if http:
                self.goals.at_most(f"{goal}: wall time vs httpie", ratio(w, metric(results[httpie_label], lambda r: r["wall"])), 0.999)
        for label, goal in token_rows:
            w = metric(results[label], lambda r: r["wall"])
            self.goals.at_most(f"{goal}: wall time vs curl sending the token", ratio(w, token_ref), 1.5)
        self.sections.append("\n".join([
            "### Command line: one GET, process start to exit", "",
            f"Wall time of one invocation, output to /dev/null; each repetition is the median of {runs} runs "
            f"({httpie_runs} for httpie), "
            "the tools taking turns run by run, in an order shuffled at every turn. "
            "\"wattle\" is the CLI as `swift build -c release` links it (the Swift runtime and FoundationEssentials "
            "as shared libraries); \"static Swift runtime\" is the same code as `make cli` links it, as a CLI would be "
            "shipped: `--static-swift-stdlib`, and libstdc++, libsodium and SQLite linked in too "
            "(`scripts/static-libs.sh`; libcurl stays shared). "
            "\"With a stored token\" is the GET of a logged-in user: a keychain holds a token for the origin "
            "(`wattle auth set-token`), which each run opens, reads and sends; it is compared with curl sending the "
            "same `Authorization` header, the others with plain curl.", "",
            "| tool | command | wall ms (min / **median** / max) | vs curl |",
            "| --- | --- | --- | --- |"] + rows + [""]))

    # Keychain -------------------------------------------------------------------------------

    def run_keychain(self):
        sizes = [1000, 10000, 100000] if not self.quick else [1000, 10000]
        reads = self.n(20000, 5000)
        upserts_disk = self.n(1000, 200)
        upserts_mem = self.n(2000, 500)
        swift, c = self.prog("bench-keychain"), self.prog("bench-keychain-c")
        disk_root = tempfile.mkdtemp(prefix="wattle-bench-kc-", dir=self.args.scratch)
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
        mem_root = tempfile.mkdtemp(prefix="wattle-bench-kc-", dir=shm) if shm else None
        fill_root = mem_root or disk_root
        rows_rw, rows_fill = [], []
        try:
            for size in sizes:
                self.log(f"Keychain: {size} items")
                fill = {}
                for label, program in (("WattleKeychain", swift), ("C limit", c)):
                    folder = os.path.join(fill_root, f"{label[0]}{size}")
                    os.makedirs(folder, mode=0o700)
                    r = run_json([program, "fill", folder, str(size)], timeout=1800)
                    fill[label] = r
                    self.log(f"  fill {label}: {summary(r)} seconds={r.get('seconds')}")
                    # The measured copy lives on disk (durable fsync); fill on tmpfs saves minutes of fsyncs.
                    shutil.copytree(folder, os.path.join(disk_root, f"{label[0]}{size}"))
                rows_fill.append(f"| {size:,} | {fill['WattleKeychain'].get('seconds', '–')} | {fill['C limit'].get('seconds', '–')} |")
                for where, root, ups in (("disk", disk_root, upserts_disk), ("tmpfs", mem_root, upserts_mem)):
                    if root is None:
                        continue
                    tools = [(label, [program, "rw", os.path.join(root, f"{label[0]}{size}"), str(size), str(reads), str(ups)])
                             for label, program in (("WattleKeychain", swift), ("C limit", c))]
                    self.log(f"  read/upsert on {where}")
                    results = interleaved(tools, reps=KEYCHAIN_REPS, log=self.log)
                    self.raw[f"keychain_{size}_{where}"] = results
                    w, ref = results["WattleKeychain"], results["C limit"]
                    cols = {}
                    for key in ("read_p50_us", "read_p99_us", "upsert_p50_us", "upsert_p99_us"):
                        cols[key] = (metric(w, lambda r: r[key]), metric(ref, lambda r: r[key]))
                    def cell(key):
                        a, b = cols[key]
                        return f"{fmt3(a)} | {fmt3(b)} | {fmt_ratio(ratio(a, b))}"
                    if where == "disk":
                        rows_rw.append(f"| {size:,} | read p50 | {cell('read_p50_us')} |")
                        rows_rw.append(f"| {size:,} | read p99 | {cell('read_p99_us')} |")
                        self.goals.at_most(f"Keychain read p50 at {size:,} items vs C", ratio(*cols["read_p50_us"]), 2)
                    label = "upsert p50 (durable, disk)" if where == "disk" else "upsert p50 (tmpfs: no fsync)"
                    rows_rw.append(f"| {size:,} | {label} | {cell('upsert_p50_us')} |")
                    rows_rw.append(f"| {size:,} | {label.replace('p50', 'p99')} | {cell('upsert_p99_us')} |")
                    if where == "disk":
                        self.goals.at_most(f"Keychain durable upsert p50 at {size:,} items vs C",
                                           ratio(*cols["upsert_p50_us"]), 1.2)
                    else:
                        self.goals.at_most(f"Keychain upsert p50 without fsync (tmpfs) at {size:,} items vs C",
                                           ratio(*cols["upsert_p50_us"]), 1.2)
            # Open / unlock.
            rows_open = []
            for credential, reps in (("keyfile", self.n(50, 10)), ("passphrase", self.n(5, 2))):
                folder_w = os.path.join(disk_root, f"open-w-{credential}")
                folder_c = os.path.join(disk_root, f"open-c-{credential}")
                os.makedirs(folder_w, mode=0o700)
                os.makedirs(folder_c, mode=0o700)
                tools = [("WattleKeychain", [swift, "open", folder_w, credential, str(reps)]),
                         ("C limit", [c, "open", folder_c, credential, str(reps)])]
                self.log(f"  open with {credential}")
                results = interleaved(tools, log=self.log)
                self.raw[f"keychain_open_{credential}"] = results
                a = metric(results["WattleKeychain"], lambda r: r["open_p50_us"] / 1000)
                b = metric(results["C limit"], lambda r: r["open_p50_us"] / 1000)
                what = "key file" if credential == "keyfile" else "passphrase (Argon2id, interactive limits: 2 passes, 64 MiB)"
                rows_open.append(f"| {what} | {fmt3(a, 2)} | {fmt3(b, 2)} | {fmt_ratio(ratio(a, b))} |")
        finally:
            shutil.rmtree(disk_root, ignore_errors=True)
            if mem_root:
                shutil.rmtree(mem_root, ignore_errors=True)
        self.sections.append("\n".join([
            "## Keychain", "",
            "WattleKeychain through its typed API (`Keychain.data(forKey:)`, `Keychain.set(_:forKey:)`, a key-file "
            "credential) against `Benchmarks/C/bench-keychain.c`, which does the same work with nothing above it: "
            "the same schema and pragmas (WAL, synchronous=FULL), the keyed BLAKE2b identity hash, the point lookup "
            "by blob key and one XChaCha20-Poly1305 open of the padded secret per read; per upsert the hash, "
            "BEGIN IMMEDIATE, the lookup and open of the existing attributes (to keep the creation date, as Wattle "
            "does), the group hash only for a new item (a replaced row's is reused once its attributes opened, as Wattle "
            "does), two seals, INSERT .. ON CONFLICT DO UPDATE and COMMIT. "
            f"Each repetition: {reads:,} reads of random keys, then {upserts_disk:,} upserts of random keys on disk "
            f"(durable: one fsync of the WAL per commit) or {upserts_mem:,} on tmpfs (no fsync: what the CPU costs). "
            "Both keychains are filled the same way (on tmpfs, then copied to disk) before the measurement. "
            "Latencies in microseconds.", "",
            "| items | operation | WattleKeychain µs (min / **median** / max) | C limit µs (min / **median** / max) | ratio |",
            "| --- | --- | --- | --- | --- |"] + rows_rw + [
            "", "Open (a new `KeychainStore(fileURL:credential:)` on an existing keychain; the C opens the file, sets "
            "the pragmas, checks `user_version` (the schema, in a write transaction, only when it is missing), "
            "prepares the header's statement (the others when first used) and reads the header without a "
            "transaction, derives the wrapping key, unwraps the master key and derives the five subkeys). Each "
            "repetition is the median "
            "of several opens.", "",
            "| credential | WattleKeychain ms (min / **median** / max) | C limit ms (min / **median** / max) | ratio |",
            "| --- | --- | --- | --- |"] + rows_open + [
            "", "Filling (not a goal; one `set` per item for Wattle, 1,000 items per transaction for C, on tmpfs):", "",
            "| items | WattleKeychain s | C s |", "| --- | --- | --- |"] + rows_fill + [""]))

    # Report ---------------------------------------------------------------------------------

    def machine(self):
        def first_line(argv):
            try:
                return subprocess.run(argv, capture_output=True, text=True).stdout.strip().splitlines()[0]
            except (OSError, IndexError):
                return "unknown"
        def stderr_line(argv):
            try:
                return subprocess.run(argv, capture_output=True, text=True).stderr.strip().splitlines()[0]
            except (OSError, IndexError):
                return "unknown"
        cpu = "unknown"
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name"):
                        cpu = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        mem = "unknown"
        try:
            with open("/proc/meminfo") as f:
                mem = f"{int(f.readline().split()[1]) / 1024 / 1024:.0f} GiB"
        except (OSError, ValueError):
            pass
        return [
            f"- Date: {datetime.datetime.now().strftime('%Y-%m-%d %H:%M %Z').strip()}",
            f"- Machine: {os.cpu_count()} cores (`nproc` {first_line(['nproc'])}), {cpu}, {mem} of memory, Linux {platform.release()}",
            f"- libcurl: {first_line(['pkg-config', '--modversion', 'libcurl'])} (`{first_line(['curl', '--version'])}`)",
            f"- Server: {stderr_line(['nginx', '-v']).replace('nginx version: ', '')}, 1 worker process, on 127.0.0.1 "
            f"(plain HTTP/1.1, and TLS 1.3 with HTTP/2 by ALPN and a self-signed P-256 certificate made by "
            f"`openssl req` for this run); keepalive_requests 1000000, access log off",
            f"- Swift: {first_line(['swift', '--version'])}; benchmark programs built with `-c release`; C with `cc -O2`",
            f"- Wattle git revision: {first_line(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'])}"
            + (" (with uncommitted changes)" if first_line(['git', '-C', ROOT, 'status', '--porcelain', '--untracked-files=no']) not in ("", "unknown") else ""),
            f"- Repetitions: {HTTP_REPS} for each request and download measurement, {KEYCHAIN_REPS} for the "
            f"keychain's reads and upserts, {REPS} for the others, "
            "interleaved (A, B, C, A, B, C, ...)" + (" — QUICK MODE (reduced counts)" if self.quick else ""),
        ]

    def write(self, elapsed):
        goals = self.goals.rows
        passed = sum(1 for g in goals if g[3] == "**pass**")
        missed = sum(1 for g in goals if g[3] == "**miss**")
        lines = [
            "# Benchmarks", "",
            "Written by `make bench` (`Benchmarks/run.py`); do not edit by hand: the analysis of misses comes from "
            "`Benchmarks/ANALYSIS.md`.", "",
            *self.machine(),
            f"- Whole run: {elapsed / 60:.1f} minutes of measurement", "",
            "## How to read this", "",
            "Every figure comes from this one run on this machine, with all clients measured side by side against "
            "the same nginx. Each measurement was repeated 3 to 9 times, interleaved, and is shown as min / **median** / "
            "max; ratios compare medians, and are to the reference of the row (raw libcurl in C for networking, a C "
            "program doing the same SQLite and libsodium work for the keychain, curl for the command line). For "
            "throughput higher is better; for CPU, memory and latency lower is better. CPU is the client process's "
            "user+system time (getrusage) over the timed requests, after a warm-up of 200 requests. The server shares "
            "the 2 cores with the client, so absolute numbers are loopback numbers, not network numbers: compare "
            "ratios. A benchmark is not a test: a missed goal is reported here and never fails CI; differences of a "
            "few percent between runs are noise.", "",
            f"## Goals ({passed} met, {missed} missed, {len(goals) - passed - missed} not measured)", "",
        ]
        if self.goals.beyond_limit:
            lines += [
                f"{len(self.goals.beyond_limit)} of the misses are goals against another client that raw libcurl, the "
                "practical limit, missed as well in this run (its own ratio is in the last column): on this machine "
                "they ask Wattle to be faster than libcurl driven from C with nothing above it. The issue set those "
                "goals from a measurement where raw libcurl ran about 8x URLSession and 3x AsyncHTTPClient.", ""]
        lines += ["| goal | Wattle | target | result | by how much |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in goals]
        lines.append("")
        analysis = os.path.join(HERE, "ANALYSIS.md")
        if os.path.exists(analysis):
            with open(analysis) as f:
                lines += [f.read().strip(), ""]
        lines += self.sections
        text = "\n".join(lines).rstrip() + "\n"
        with open(self.args.out, "w") as f:
            f.write(text)
        os.makedirs(self.args.results_dir, exist_ok=True)
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        with open(os.path.join(self.args.results_dir, f"results-{stamp}.json"), "w") as f:
            json.dump(self.raw, f, indent=1)
        self.log(f"Wrote {self.args.out} ({passed} goals met, {missed} missed)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", default=os.path.join(HERE, ".build", "release"))
    parser.add_argument("--c-bin-dir", default=os.path.join(HERE, ".build", "c"))
    parser.add_argument("--wattle-cli", default="")
    parser.add_argument("--wattle-cli-static", default="")
    parser.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    parser.add_argument("--results-dir", default=os.path.join(ROOT, "bench-results"))
    parser.add_argument("--big-mb", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="reduced counts, to try the harness")
    parser.add_argument("--only", default="http,download,flat,cli,keychain",
                        help="comma-separated parts: http, download, flat, cli, keychain")
    args = parser.parse_args()
    for program in ("bench-wattle", "bench-urlsession", "bench-ahc", "bench-keychain"):
        if not os.access(os.path.join(args.bin_dir, program), os.X_OK):
            raise SystemExit(f"missing {args.bin_dir}/{program}: build with swift build -c release --package-path Benchmarks")
    for program in ("bench-curl", "bench-keychain-c"):
        if not os.access(os.path.join(args.c_bin_dir, program), os.X_OK):
            raise SystemExit(f"missing {args.c_bin_dir}/{program}")

    scratch = tempfile.mkdtemp(prefix="wattle-bench-")
    os.chmod(scratch, 0o755)  # nginx's workers (an unprivileged user when started as root) read below it
    args.scratch = scratch
    nginx = Nginx(os.path.join(scratch, "nginx"))
    os.makedirs(nginx.folder)

    def on_signal(signum, frame):
        raise SystemExit(f"stopped by signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    bench = Bench(args)
    bench.nginx = nginx
    started = time.time()
    try:
        nginx.prepare(args.big_mb * 1000 * 1000)
        nginx.start()
        print(f"nginx {nginx.process.pid} on 127.0.0.1:{nginx.http_port} (HTTP) and :{nginx.https_port} (HTTPS, HTTP/2)",
              flush=True)
        parts = args.only.split(",")
        if "http" in parts:
            bench.run_http()
        if "download" in parts:
            bench.run_download()
        if "flat" in parts:
            bench.run_flat()
        if "cli" in parts:
            bench.run_cli()
        nginx.stop()
        if "keychain" in parts:
            bench.run_keychain()
        bench.write(time.time() - started)
    finally:
        nginx.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
