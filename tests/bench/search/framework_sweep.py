#!/usr/bin/env python3
"""The sweep of issue 14 in both search spaces, side by side.

For every model x cluster x GPU count it runs `nestfast solve --json` once
with --framework megatron-core and once with --framework nest (same point;
the Megatron-style manual baseline, a plan both spaces contain, is priced
once under megatron-core) and prints one markdown table: the best plan's iteration
time in each space, the Megatron-style manual baseline's, the speed-up over it
in each space, and whether nest's best is one of its own plans or a
megatron-core plan (the NEST space holds those too), then the points where
nest's best is slower (there should be none). It also writes every
megatron-core line it saw (best plan, alternatives, manual baseline, and the
megatron-core plans among nest's) to OUT/megatron-lines.jsonl, one JSON object
a line with the priced plan it came from, so the lines can be checked by
another tool (tests/bench/megatron/check_megatron_lines.py: Megatron-LM's
own argument checks, and whether it builds what was priced).

usage: framework_sweep.py NESTFAST OUT_DIR [--models a,b] [--clusters a,b] [--gpus 64,256] [--a2a auto|fanout|deepep]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

MODELS = ["llama3-70b", "mixtral-8x7b", "gpt3-175b", "llama2-7b", "deepseek-v3"]
CLUSTERS = ["h100-superpod", "h200-superpod", "mi300x-roce"]
GPUS = [64, 256, 1024]


def solve(nestfast, model, cluster, gpus, framework, a2a):
    gbs = max(gpus, 512)
    cmd = [nestfast, "solve", "--model", model, "--cluster", cluster, "--gpus", str(gpus), "--gbs", str(gbs),
           "--framework", framework, "--a2a", a2a, "--top-k", "5", "--threads", "1", "--json"]
    if framework == "nest":
        cmd.append("--no-baselines")  # the manual baseline is the same plan in both spaces: priced once
    run = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if not run.stdout.strip():
        sys.exit(f"{' '.join(cmd)}: no output ({run.stderr.strip()})")
    return " ".join(cmd), json.loads(run.stdout)


def manual(result):
    for plan in result.get("plans", []):
        if plan["kind"] == "manual" and plan["feasible"]:
            return plan
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("nestfast")
    parser.add_argument("out")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--clusters", default=",".join(CLUSTERS))
    parser.add_argument("--gpus", default=",".join(map(str, GPUS)))
    parser.add_argument("--a2a", default="auto", help="the MoE all-to-all of both spaces (solve --a2a)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    with open(os.path.join(args.out, "megatron-lines.jsonl"), "w") as lines:
        for model in args.models.split(","):
            for cluster in args.clusters.split(","):
                for gpus in map(int, args.gpus.split(",")):
                    row = {"model": model, "cluster": cluster, "gpus": gpus}
                    for framework in ("megatron-core", "nest"):
                        command, result = solve(args.nestfast, model, cluster, gpus, framework, args.a2a)
                        if not result.get("feasible"):
                            row[framework] = None
                            continue
                        base = manual(result)
                        nest = [p for p in result["plans"] if p["kind"] == "nest"]
                        row[framework] = {"best": nest[0]["iteration_time_s"],
                                          "manual": base["iteration_time_s"] if base else None,
                                          "framework": nest[0]["framework"]}
                        plans = [("best", nest[0])] + [(f"alternative {p['rank_k']}", p) for p in nest[1:]]
                        if base:
                            plans.append(("manual", base))
                        if framework == "nest":
                            # Megatron-Core plans found in the NEST space run as emitted too.
                            plans = [(f"nest {what}", plan) for what, plan in plans
                                     if plan["framework"] == "megatron-core"]
                        for what, plan in plans:
                            lines.write(json.dumps({"model": model, "cluster": cluster, "gpus": gpus, "what": what,
                                                    "command": command, "args": plan["megatron_args"],
                                                    "environment": plan["megatron_environment"],
                                                    "notes": plan["megatron_notes"], "plan": plan}) + "\n")
                    rows.append(row)
                    print(f"{model} {cluster} {gpus}: done", file=sys.stderr, flush=True)

    def cell(value, fmt="{:.3f}"):
        return "-" if value is None else fmt.format(value)

    print("| model | cluster | GPUs | manual (s) | megatron-core best (s) | speed-up | nest best (s) | speed-up | nest best's framework |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    ups = {"megatron-core": [], "nest": []}
    slower = []
    for row in rows:
        cells = []
        base = None
        for framework in ("megatron-core", "nest"):
            entry = row[framework]
            best = entry["best"] if entry else None
            if framework == "megatron-core":
                base = entry["manual"] if entry else None
            up = base / best if (base is not None and best) else None
            if up is not None:
                ups[framework].append(up)
            cells += [cell(best), cell(up, "{:.2f}x")]
        nest_framework = row["nest"]["framework"] if row["nest"] else "-"
        print(f"| {row['model']} | {row['cluster']} | {row['gpus']} | {cell(base)} | " + " | ".join(cells) +
              f" | {nest_framework} |")
        if row["megatron-core"] and (not row["nest"] or row["nest"]["best"] > row["megatron-core"]["best"]):
            slower.append(f"{row['model']} {row['cluster']} {row['gpus']}")
    for framework, values in ups.items():
        if values:
            print(f"\n{framework}: {len(values)} points with a manual baseline, speed-up median "
                  f"{statistics.median(values):.2f}x, geometric mean {statistics.geometric_mean(values):.2f}x, "
                  f"range {min(values):.2f}-{max(values):.2f}x")
    print(f"\nnest's best slower than megatron-core's at {len(slower)} of {len(rows)} points"
          + (": " + ", ".join(slower) if slower else ""))


if __name__ == "__main__":
    main()
