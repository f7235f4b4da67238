#!/usr/bin/env python3
"""Combines the VM harness's gvirtus-bench comm results (tests/vm/run_vm.sh BUILD --bench DIR) into
one JSON and one text report: each transport beside the guest's own tcp communicator, as ratios.
Under software emulation absolute figures mean little; ratios from one boot are what to compare.

usage: combine.py DIR OUT_BASE [COMMIT]   (writes OUT_BASE.json and OUT_BASE.txt; the guest has no
       git, so COMMIT names the build that ran)
"""
import json
import sys
from pathlib import Path

RUNS = ["tcp", "vsock", "ib", "ib-block"]
LABELS = {"tcp": "tcp (guest loopback)", "vsock": "vsock (vsock_loopback)",
          "ib": "rdma, completion poll (Soft-RoCE)", "ib-block": "rdma, completion block (Soft-RoCE)"}
SIZES = [64, 4096, 65536, 1 << 20, 4 << 20]


def by_size(run):
    return {p["bytes"]: p for p in run["points"]}


def size_name(b):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div} {unit}"
    return f"{b} B"


def main():
    src, out = Path(sys.argv[1]), sys.argv[2]
    commit = sys.argv[3] if len(sys.argv) > 3 else None
    runs = {}
    for name in RUNS:
        f = src / f"bench-{name}.json"
        if f.exists() and f.stat().st_size > 0:
            runs[name] = json.loads(f.read_text())
    if "tcp" not in runs:
        sys.exit("no tcp run to compare with")
    if commit:
        for run in runs.values():
            run["commit"] = commit
    tcp = by_size(runs["tcp"])
    summary = {}
    lines = ["gvirtus-bench comm inside the VM harness's qemu guest (TCG software emulation, 2 vCPUs,",
             "Soft-RoCE rdma_rxe on a dummy netdev, vsock_loopback). Only ratios mean anything here.",
             f"commit {runs['tcp'].get('commit')}, {runs['tcp'].get('date')}, guest kernel "
             f"{runs['tcp'].get('host', {}).get('kernel')}", "",
             "ratio = transport / guest tcp communicator, same boot (rtt: < 1 is faster; MB/s: > 1 is faster)", ""]
    header = f"{'transport':38} " + " ".join(f"{'rtt ' + size_name(s):>14}" for s in SIZES[:2]) + " " + \
        " ".join(f"{'MB/s ' + size_name(s):>14}" for s in SIZES[2:])
    lines.append(header)
    for name, run in runs.items():
        pts = by_size(run)
        row = {}
        cells = []
        for s in SIZES[:2]:
            if s in pts and s in tcp:
                r = pts[s]["rtt_us"] / tcp[s]["rtt_us"]
                row[f"rtt_{s}"] = {"us": pts[s]["rtt_us"], "tcp_us": tcp[s]["rtt_us"], "ratio": round(r, 3)}
                cells.append(f"{pts[s]['rtt_us']:8.0f}us {r:4.2f}x")
            else:
                cells.append(f"{'-':>14}")
        for s in SIZES[2:]:
            if s in pts and s in tcp:
                r = pts[s]["MBps"] / tcp[s]["MBps"]
                row[f"MBps_{s}"] = {"MBps": pts[s]["MBps"], "tcp_MBps": tcp[s]["MBps"], "ratio": round(r, 3)}
                cells.append(f"{pts[s]['MBps']:7.1f} {r:5.2f}x")
            else:
                cells.append(f"{'-':>14}")
        summary[name] = row
        lines.append(f"{LABELS.get(name, name):38} " + " ".join(cells))
    lines.append("")
    for name in runs:
        txt = src / f"bench-{name}.txt"
        if txt.exists():
            text = txt.read_text().rstrip()
            if commit:
                text = text.replace("commit unknown", "commit " + commit)
            lines += [f"---- {LABELS.get(name, name)} (gvirtus-bench comm --transport "
                      f"{'ib' if name.startswith('ib') else name}) ----", text, ""]
    Path(out + ".json").write_text(json.dumps(
        {"mode": "comm-vm", "environment": "qemu TCG guest, Soft-RoCE + vsock_loopback",
         "ratios_to_guest_tcp": summary, "runs": runs}, indent=1) + "\n")
    Path(out + ".txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
