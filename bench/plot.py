#!/usr/bin/env python3
"""Plots gvirtus-bench results and writes a markdown summary of their key ratios.

    bench/plot.py [--summary FILE] [--out DIR] PATH...

Each PATH is a JSON file written by `gvirtus-bench comm|calls|gpu|frameworks|copy --json`, or a
directory whose
*.json files are read. Draws, next to the inputs (or into --out):
  <name>.png         per comm file: NetPIPE-style round trip and bandwidth vs message size,
                     log-log, one line per channel (the transport, raw TCP, Unix socket, memcpy);
  comm-<host>-<N>cpu.png  per host: every transport measured there (the newest file of each), beside
                     the raw TCP and Unix socket baselines of that file's run;
  <name>.png         per gpu file: cudaMemcpy bandwidth vs size, native and per transport;
  <name>.png         per frameworks file: the MLP's loss curve natively and per transport, and
                     each figure's remote / native ratio;
  <name>.png         per copy file: cudaMemcpy bandwidth vs size per direction and memory kind,
                     per transport beside that transport's raw streaming bandwidth (and native
                     where there was a GPU).
The summary (default bench/results/summary.md next to this script) has one table per mode.
Ratios compare figures of one run only: figures of different runs drift too much on small VMs.
"""

import argparse
import json
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt
    import matplotlib.ticker
except ImportError:
    sys.exit("bench/plot.py needs matplotlib: pip install matplotlib")

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ("comm", "calls", "gpu", "frameworks", "copy")
FRAMEWORK_FIGURES = ("first_tensor_s", "matmul_ms", "mlp_step_ms", "resnet18_step_ms")


def load(paths):
    """Every result file under `paths`, as (path, parsed JSON), sorted by path."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += [os.path.join(path, n) for n in sorted(os.listdir(path)) if n.endswith(".json")]
        else:
            files.append(path)
    results = []
    for path in sorted(files):
        with open(path) as f:
            data = json.load(f)
        if data.get("mode") in MODES:
            results.append((path, data))
        else:
            print(f"plot.py: skipping {path}: not a gvirtus-bench result", file=sys.stderr)
    return results


def size_label(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def point_at(points, size):
    return next((p for p in points if p["bytes"] == size), None)


def num(x):
    """Plain figures for tables: 5056, 64.9, 0.2 (never 5.056e+04)."""
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def cpus_of(host):
    """'2 CPUs', or '1 of 2 CPUs' for a run confined to fewer (taskset, a cpuset)."""
    usable = host.get("usable_cpus", host["cpus"])  # older files do not record it
    return f"{usable} of {host['cpus']} CPUs" if usable < host["cpus"] else f"{host['cpus']} CPUs"


def host_of(data):
    """Hosts are told apart by name and size: lent machines may share a name with the VM."""
    h = data["host"]
    usable = h.get("usable_cpus", h["cpus"])
    return f"{h['name']}-{h['cpus']}cpu" + (f"-{usable}used" if usable < h["cpus"] else "")


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def comm_channels(data):
    """(label, points, style) for each channel of one comm result."""
    b = data["baselines"]
    return [
        (f"gvirtus {data['transport']}", data["points"], "-"),
        ("raw TCP", b["raw_tcp"]["points"], "--"),
        ("Unix socket", b["unix_socket"]["points"], ":"),
    ]


def size_axis(ax, label="message size"):
    """A log2 x axis of byte counts labelled 1 B, 32 B, 1 KiB, ... rather than 2^n."""
    ax.set_xscale("log", base=2)
    ax.set_xticks([1 << s for s in range(0, 31, 5)])
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: size_label(int(x))))
    ax.set_xlabel(label)


def netpipe_axes(title):
    fig, (lat, bw) = plt.subplots(1, 2, figsize=(13, 5))
    fig.suptitle(title)
    for ax in (lat, bw):
        size_axis(ax)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    lat.set_ylabel("round trip, median (µs)")
    lat.set_title("ping-pong latency")
    bw.set_ylabel("one-way bandwidth (MB/s)")
    bw.set_title("streaming bandwidth")
    return fig, lat, bw


def draw_channel(lat, bw, label, points, style, **kwargs):
    xs = [p["bytes"] for p in points]
    lat.plot(xs, [p["rtt_us"] for p in points], style, marker=".", label=label, **kwargs)
    bw.plot(xs, [p["MBps"] for p in points], style, marker=".", label=label, **kwargs)


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plot.py: wrote {path}")


def plot_comm(path, data, out_dir):
    host = data["host"]
    fig, lat, bw = netpipe_axes(
        f"gvirtus-bench comm: {data['transport']} on {host['name']} ({cpus_of(host)}), "
        f"commit {data['commit']}, {data['date'][:10]}")
    for label, points, style in comm_channels(data):
        draw_channel(lat, bw, label, points, style)
    memcpy = data["baselines"].get("memcpy_MBps")
    if memcpy:
        bw.axhline(memcpy, color="grey", linewidth=1, label="memcpy (one core)")
    lat.legend()
    bw.legend()
    save(fig, os.path.join(out_dir, os.path.basename(path)[:-5] + ".png"))


def plot_comm_hosts(comm, out_dir):
    """One plot per host: the newest result of each transport, with its run's baselines."""
    by_host = {}
    for path, data in comm:
        newest = by_host.setdefault(host_of(data), {})
        if data["transport"] not in newest or data["date"] > newest[data["transport"]][1]["date"]:
            newest[data["transport"]] = (path, data)
    for host, runs in by_host.items():
        if len(runs) < 2:
            continue
        fig, lat, bw = netpipe_axes(f"gvirtus transports on {host} (newest run of each)")
        for transport, (path, data) in sorted(runs.items()):
            label, points, style = comm_channels(data)[0]
            draw_channel(lat, bw, f"{label} ({os.path.basename(path)[:-5]})", points, style)
        # One set of baselines, from the newest run, in grey: they are the yardstick, not a subject.
        path, newest = max(runs.values(), key=lambda run: run[1]["date"])
        for label, points, style in comm_channels(newest)[1:]:
            draw_channel(lat, bw, f"{label} ({os.path.basename(path)[:-5]})", points, style,
                         color="grey")
        lat.legend(fontsize=8)
        bw.legend(fontsize=8)
        save(fig, os.path.join(out_dir, f"comm-{host}.png"))


def plot_gpu(path, data, out_dir):
    """cudaMemcpy bandwidth vs size: one panel per direction and host memory kind."""
    runs = [("native", data["native"])] + [
        (name, run) for name, run in sorted(data["remote"].items()) if "memcpy" in run]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharex=True, sharey=True)
    fig.suptitle(f"gvirtus-bench gpu: cudaMemcpy on {data['device']}, {data['date'][:10]}")
    for row, direction in enumerate(("H2D", "D2H")):
        for col, memory in enumerate(("pageable", "pinned")):
            ax = axes[row][col]
            for name, run in runs:
                pts = [p for p in run["memcpy"]
                       if p["direction"] == direction and p["memory"] == memory]
                ax.plot([p["bytes"] for p in pts], [p["GBps"] for p in pts], marker=".",
                        label=name if name == "native" else f"gvirtus {name}")
            ax.set_title(f"{direction}, {memory}")
            size_axis(ax, "copy size")
            ax.set_yscale("log")
            ax.grid(True, which="both", alpha=0.3)
            ax.set_ylabel("GB/s")
            ax.legend()
    save(fig, os.path.join(out_dir, os.path.basename(path)[:-5] + ".png"))


def plot_frameworks(path, data, out_dir):
    """The MLP's loss per step, native and per transport; each figure's remote / native ratio."""
    fig, (curve, bars) = plt.subplots(1, 2, figsize=(12, 4.5))
    fig.suptitle(f"gvirtus-bench frameworks ({data['framework']}) on {data['device']}, "
                 f"{data['date'][:10]}")
    runs = [("native", data["native"])] + [
        (f"gvirtus {name}", run) for name, run in sorted(data["remote"].items())
        if "mlp_losses" in run]
    for label, run in runs:
        curve.plot(range(1, len(run["mlp_losses"]) + 1), run["mlp_losses"], label=label)
    curve.set_xlabel("training step")
    curve.set_ylabel("MLP loss")
    curve.set_yscale("log")
    curve.legend()
    width = 0.8 / max(1, len(data["ratios"]))
    for i, (name, r) in enumerate(sorted(data["ratios"].items())):
        values = [r.get(f) or 0 for f in FRAMEWORK_FIGURES]
        bars.bar([x + i * width for x in range(len(FRAMEWORK_FIGURES))], values, width, label=name)
    bars.axhline(1, color="grey", linewidth=0.8)
    bars.set_xticks([x + width * (len(data["ratios"]) - 1) / 2
                     for x in range(len(FRAMEWORK_FIGURES))])
    bars.set_xticklabels(FRAMEWORK_FIGURES, rotation=15, fontsize=8)
    bars.set_ylabel("gvirtus / native")
    bars.legend()
    save(fig, os.path.join(out_dir, os.path.basename(path)[:-5] + ".png"))


def plot_copy(path, data, out_dir):
    """cudaMemcpy through gvirtus vs the transport's raw streaming, per direction and memory."""
    where = "GPU" if data["gpu_evidence"] else "accepting device, no GPU: not GPU evidence"
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharex=True, sharey=True)
    fig.suptitle(f"gvirtus-bench copy ({where}), {data['date'][:10]}")
    transports = [(n, t) for n, t in sorted(data["transports"].items()) if "points" in t]
    for row, direction in enumerate(("h2d", "d2h")):
        for col, memory in enumerate(("pageable", "pinned")):
            ax = axes[row][col]
            if isinstance(data["native"], list):
                pts = [p for p in data["native"]
                       if p["direction"] == direction and p["memory"] == memory]
                ax.plot([p["bytes"] for p in pts], [p["mbps"] for p in pts], "k-", marker=".",
                        label="native")
            for i, (name, t) in enumerate(transports):
                color = f"C{i}"
                pts = [p for p in t["points"]
                       if p["direction"] == direction and p["memory"] == memory]
                ax.plot([p["bytes"] for p in pts], [p["mbps"] for p in pts], "-", color=color,
                        marker=".", label=f"gvirtus {name}")
                ax.plot([r["bytes"] for r in t["raw_mbps"]], [r["mbps"] for r in t["raw_mbps"]],
                        ":", color=color, label=f"raw {name} streaming")
            ax.plot([m["bytes"] for m in data["memcpy_mbps"]],
                    [m["mbps"] for m in data["memcpy_mbps"]], "--", color="grey",
                    label="memcpy, one core")
            ax.set_title(f"{direction}, {memory}")
            size_axis(ax, "copy size")
            ax.set_yscale("log")
            ax.grid(True, which="both", alpha=0.3)
            ax.set_ylabel("MB/s")
            ax.legend(fontsize=7)
    save(fig, os.path.join(out_dir, os.path.basename(path)[:-5] + ".png"))


def copy_rows(copy):
    rows = ["| file | device | transport | dir | memory | 64 MiB MB/s | / raw streaming | "
            "/ memcpy | / native |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for path, d in copy:
        device = "GPU" if d["gpu_evidence"] else f"accepting, {d.get('accepting', '?')} (no GPU)"
        for name, t in sorted(d["transports"].items()):
            if "error" in t:
                rows.append(f"| {os.path.basename(path)} | {device} | {name} | "
                            f"not measured: {t['error'].splitlines()[0]} ||||||")
                continue
            for p in t["points"]:
                if p["bytes"] != 64 << 20:
                    continue
                cells = ["-" if p.get(k) is None else f"{p[k]:.2f}x"
                         for k in ("raw_ratio", "memcpy_ratio", "native_ratio")]
                rows.append(f"| {os.path.basename(path)} | {device} | {name} | {p['direction']} | "
                            f"{p['memory']} | {num(p['mbps'])} | " + " | ".join(cells) + " |")
    return rows


def comm_rows(comm):
    rows = ["| file | transport | host | 64 B rtt µs (raw TCP) | ratio | 4 MiB MB/s (raw TCP) | ratio "
            "| largest MB/s (raw TCP) | ratio | memcpy MB/s |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for path, d in comm:
        raw = d["baselines"]["raw_tcp"]["points"]
        small, raw_small = point_at(d["points"], 64), point_at(raw, 64)
        big, raw_big = point_at(d["points"], 4 << 20), point_at(raw, 4 << 20)
        last, raw_last = d["points"][-1], raw[-1]
        def cell(p, q, key):
            return f"{num(p[key])} ({num(q[key])})" if p and q else "-"
        rows.append(
            f"| {os.path.basename(path)} | {d['transport']} | {d['host']['name']} "
            f"({cpus_of(d['host'])}) | {cell(small, raw_small, 'rtt_us')} | "
            f"{ratio(small and small['rtt_us'], raw_small and raw_small['rtt_us'])} | "
            f"{cell(big, raw_big, 'MBps')} | {ratio(big and big['MBps'], raw_big and raw_big['MBps'])} | "
            f"{size_label(last['bytes'])}: {cell(last, raw_last, 'MBps')} | "
            f"{ratio(last['MBps'], raw_last['MBps'])} | {d['baselines'].get('memcpy_MBps', 0):.0f} |")
    return rows


def calls_rows(calls):
    rows = ["| file | transport | host | sync call µs median (p99) | transport rtt µs | "
            "call / rtt | async calls/s | N clients: calls/s (baseline) | ratio |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for path, d in calls:
        s, t = d["sync_call_us"], d["transport_rtt_us"]
        c = d.get("concurrent")  # only with --clients
        many = (f"{c['clients']}: {num(c['calls_per_s'])} ({c['baseline']} "
                f"{num(c['baseline_calls_per_s'])}) | {c['over_baseline']:.2f}x" if c else "- | -")
        rows.append(
            f"| {os.path.basename(path)} | {d['transport']} | {d['host']['name']} "
            f"({cpus_of(d['host'])}) | {s['median']:.3g} ({s['p99']:.3g}) | {t['median']:.3g} | "
            f"{d['ratios']['sync_call_over_transport_rtt']:.2f}x | {num(d['async_calls_per_s'])} | "
            f"{many} |")
    return rows


def gpu_rows(gpu):
    rows = ["| file | device | transport | saxpy host | saxpy kernel | matrixMul host | "
            "matrixMul kernel | launches/s | pinned H2D 64 MiB GB/s |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for path, d in gpu:
        for transport, r in sorted(d["ratios"].items()):
            copy = next((p["ratio"] for p in r["memcpy_GBps"] if p["bytes"] == 64 << 20
                         and p["direction"] == "H2D" and p["memory"] == "pinned"), None)
            cells = [r.get(k) for k in ("saxpy_host_ms", "saxpy_kernel_ms", "matrixMul_host_ms",
                                        "matrixMul_kernel_ms", "launches_per_s")] + [copy]
            rows.append(f"| {os.path.basename(path)} | {d['device']} | {transport} | " +
                        " | ".join("-" if c is None else f"{c:.2f}x" for c in cells) + " |")
        for transport, r in sorted(d["remote"].items()):
            if "error" in r:
                rows.append(f"| {os.path.basename(path)} | {d['device']} | {transport} | "
                            f"not measured: {r['error']} ||||||")
    return rows


def frameworks_rows(frameworks):
    rows = ["| file | framework | device | transport | first tensor | matmul | MLP step | "
            "ResNet-18 step | loss curve max rel diff |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for path, d in frameworks:
        for transport, r in sorted(d["ratios"].items()):
            cells = ["-" if r.get(f) is None else f"{r[f]:.2f}x" for f in FRAMEWORK_FIGURES]
            diff = r.get("mlp_loss_max_rel_diff")
            rows.append(f"| {os.path.basename(path)} | {d['framework']} | {d['device']} | "
                        f"{transport} | " + " | ".join(cells) +
                        f" | {'-' if diff is None else f'{diff:.1e}'} |")
        for transport, r in sorted(d["remote"].items()):
            if "error" in r:
                rows.append(f"| {os.path.basename(path)} | {d['framework']} | {d['device']} | "
                            f"{transport} | not measured: {r['error']} ||||||")
    return rows


def summary(comm, calls, gpu, frameworks=(), copy=()):
    lines = ["# Benchmark summary", "",
             "Generated by `bench/plot.py` from the JSON files of `gvirtus-bench`. Every ratio "
             "compares figures of one run (see docs/benchmarks.md).", ""]
    if comm:
        lines += ["## Transports (comm)", "",
                  "Ratios are the gvirtus transport / raw TCP loopback of the same run: rtt above 1 "
                  "and MB/s below 1 cost more than bare sockets.", ""] + comm_rows(comm) + [""]
    if calls:
        lines += ["## Calls through the whole stack (calls)", "",
                  "Synchronous null call (core Ping, 8 bytes) vs the same communicator's 64-byte "
                  "round trip; asynchronous core Sink calls per second.", ""] + calls_rows(calls) + [""]
    if gpu:
        lines += ["## GPU workloads (gpu)", "",
                  "Remote / native: above 1 is more time for host/kernel figures and more rate for "
                  "launches/s and GB/s.", ""] + gpu_rows(gpu) + [""]
    if frameworks:
        lines += ["## Frameworks (frameworks)", "",
                  "Remote / native of each figure (above 1 is slower through gvirtus) and the "
                  "largest relative difference of the MLP's loss curve.", ""] + \
            frameworks_rows(frameworks) + [""]
    if copy:
        lines += ["## Copies (copy)", "",
                  "cudaMemcpy of 64 MiB through gvirtus over the transport's raw streaming "
                  "bandwidth, single-core memcpy and native cudaMemcpy of the same run.", ""] + \
            copy_rows(copy) + [""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[os.path.join(HERE, "results")],
                        help="result files or directories (default bench/results)")
    parser.add_argument("--out", help="directory for the PNGs (default: beside each input)")
    parser.add_argument("--summary", default=os.path.join(HERE, "results", "summary.md"),
                        help="markdown summary to write (default bench/results/summary.md)")
    args = parser.parse_args()
    results = load(args.paths)
    if not results:
        sys.exit("plot.py: no gvirtus-bench results found in " + ", ".join(args.paths))
    by_mode = {m: [(p, d) for p, d in results if d["mode"] == m] for m in MODES}
    for path, data in by_mode["comm"]:
        plot_comm(path, data, args.out or os.path.dirname(path))
    if by_mode["comm"]:
        plot_comm_hosts(by_mode["comm"], args.out or os.path.dirname(by_mode["comm"][0][0]))
    for path, data in by_mode["gpu"]:
        plot_gpu(path, data, args.out or os.path.dirname(path))
    for path, data in by_mode["frameworks"]:
        plot_frameworks(path, data, args.out or os.path.dirname(path))
    for path, data in by_mode["copy"]:
        plot_copy(path, data, args.out or os.path.dirname(path))
    with open(args.summary, "w") as f:
        f.write(summary(by_mode["comm"], by_mode["calls"], by_mode["gpu"], by_mode["frameworks"],
                        by_mode["copy"]))
    print(f"plot.py: wrote {args.summary}")


if __name__ == "__main__":
    main()
