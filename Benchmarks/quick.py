#!/usr/bin/env python3
"""A quick A/B of one Wattle benchmark binary against raw libcurl, without the whole `make bench`.

For engine work: build `bench-wattle` alone and compare it with raw libcurl (C) on the same
nginx that `make bench` uses, interleaved, printing medians of requests/s and CPU µs per request.
Not a benchmark of record: BENCHMARKS.md comes from `make bench` only.

    swift build -c release --package-path Benchmarks --product bench-wattle
    cc -O2 -o Benchmarks/.build/c/bench-curl Benchmarks/C/bench-curl.c $(pkg-config --cflags --libs libcurl)
    python3 Benchmarks/quick.py Benchmarks/.build/release/bench-wattle seq-http conc-http seq-https-h2

The first argument may name several binaries, comma-separated; each is measured interleaved with
the others, and with `+executor` appended, with WATTLE_BENCH_EXECUTOR=1 (the measurement runs in
`Session.withNetworkThreadExecutor`): `BIN,BIN+executor`. `curl-as-wattle` names the C program
doing the libcurl work Wattle asks for (BENCH_AS_WATTLE=1, see Benchmarks/C/bench-curl.c).

Modes: seq-http, seq-https-h1, seq-https-h2, conc-http, conc-https-h2 (32 in flight).
Environment: N (requests per sequential run, doubled for concurrent; 20000), REPS (3),
PIN (unset: the kernel places the processes; `same`: the clients and nginx all on CPU 0;
`split`: the clients on CPU 0, nginx on CPU 1). On this kind of VM a sequential request whose
answer wakes the other vCPU costs ~40 µs of CPU more than one answered on the same vCPU (see
ANALYSIS.md, session 43), so `PIN=same` shows what the code costs with little of the host's
noise, and `PIN=split` what a woken vCPU adds.
Needs nginx (`make bench` installs it).
"""

import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (run.py beside this file: its Nginx and run_json)


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    wattles = sys.argv[1].split(",")
    modes = sys.argv[2:] or ["seq-http"]
    curl = os.path.join(HERE, ".build", "c", "bench-curl")
    n = int(os.environ.get("N", "20000"))
    reps = int(os.environ.get("REPS", "3"))
    pin = os.environ.get("PIN", "")
    if pin not in ("", "same", "split"):
        raise SystemExit(f"PIN={pin}: expected same or split")
    nginx = run.Nginx(tempfile.mkdtemp())
    nginx.prepare(1 << 20)
    nginx.start()
    try:
        if pin:
            # The master and its worker (a child of the master).
            workers = subprocess.run(["pgrep", "-P", str(nginx.process.pid)], capture_output=True, text=True)
            for pid in [str(nginx.process.pid)] + workers.stdout.split():
                subprocess.run(["taskset", "-a", "-pc", "0" if pin == "same" else "1", pid],
                               check=True, stdout=subprocess.DEVNULL)
        for mode in modes:
            tls, h2 = "https" in mode, "h2" in mode
            version, ca = ("h2" if h2 else "h1"), (nginx.cert if tls else "")
            url = nginx.url(tls, "small.json")

            def argv(program):
                prefix = []
                if program.endswith("+executor"):
                    prefix, program = ["env", "WATTLE_BENCH_EXECUTOR=1"], program[: -len("+executor")]
                elif program == "curl-as-wattle":
                    prefix, program = ["env", "BENCH_AS_WATTLE=1"], curl
                if pin:
                    prefix = ["taskset", "-c", "0"] + prefix
                if mode.startswith("conc"):
                    return prefix + [program, "conc", url, str(n * 2), "32", version, ca]
                return prefix + [program, "seq", url, str(n), version, ca]

            programs = [("curl", curl)] + [(w, w) for w in wattles]
            results = {key: [] for key, _ in programs}
            for _ in range(reps):
                for key, program in programs:
                    results[key].append(run.run_json(argv(program)))
            summary = {}
            for key, rs in results.items():
                ok = [r for r in rs if "seconds" in r and "error" not in r]
                if not ok:
                    raise SystemExit(f"{mode}: {key} failed: {rs[0].get('error')}")
                summary[key] = (statistics.median(r["requests"] / r["seconds"] for r in ok),
                                statistics.median(r["cpu"] / r["requests"] * 1e6 for r in ok))
            c_rps, c_cpu = summary["curl"]
            for w in wattles:
                w_rps, w_cpu = summary[w]
                name = os.path.basename(w)
                print(f"{mode}: libcurl {c_rps:,.0f}/s {c_cpu:.1f} µs | {name} {w_rps:,.0f}/s {w_cpu:.1f} µs"
                      f" | throughput {w_rps / c_rps:.2f}x, CPU {w_cpu / c_cpu:.2f}x", flush=True)
    finally:
        nginx.stop()


if __name__ == "__main__":
    main()
