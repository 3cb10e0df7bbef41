#!/usr/bin/env python3
"""Draw the figures of a nestfast catalog (HDF5): PNG and SVG of each.

  plot_catalog.py CATALOG [--out DIR] [--plan-row R]

  throughput   tokens/s vs GPUs per model: NEST's best plan vs the baselines
  timeline     the 1F1B pipeline schedule of one plan (forward and backward
               micro-batches per stage), from the stored per-stage times
  placement    the plan's pipeline stages coloured over the GPUs, servers and
               the next network level (racks / leaves) of its cluster
  alltoallv    /validation/alltoallv: bus bandwidth vs size per algorithm,
               with the bandwidth the lower bound allows

Needs h5py and matplotlib (Debian: python3-h5py python3-matplotlib).
"""
import argparse
import os
import sys

try:
    import h5py
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
except ImportError as error:
    sys.exit(f"plot_catalog: {error}: install python3-h5py and python3-matplotlib")

KIND_COLOURS = {"nest": "tab:blue", "manual": "tab:orange", "phaze": "tab:green", "mcmc": "tab:red"}
ALGO_COLOURS = {"fast": "tab:blue", "mpi": "tab:orange", "pairwise": "tab:green", "fanout": "tab:purple"}


def text(value):
    return value.decode().rstrip("\0") if isinstance(value, bytes) else str(value)


def save(figure, out_dir, name):
    paths = []
    for extension in ("png", "svg"):
        path = os.path.join(out_dir, f"{name}.{extension}")
        figure.savefig(path, dpi=110, bbox_inches="tight")
        paths.append(path)
    plt.close(figure)
    print("wrote " + " ".join(paths))


def plot_throughput(plans, out_dir):
    """(1) tokens/s vs GPUs, one panel per model; NEST's best (rank 0) and each baseline."""
    models = sorted({text(p["model"]) for p in plans})
    figure, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 4.2), squeeze=False)
    clusters = sorted({text(p["cluster"]) for p in plans})
    styles = ["-", "--", ":", "-."]
    for axis, model in zip(axes[0], models):
        for c, cluster in enumerate(clusters):
            for kind, colour in KIND_COLOURS.items():
                points = sorted(
                    (int(p["gpus"]), float(p["tokens_per_s"]))
                    for p in plans
                    if text(p["model"]) == model and text(p["cluster"]) == cluster and text(p["kind"]) == kind
                    and int(p["rank_k"]) == 0 and int(p["feasible"]) == 1
                )
                if not points:
                    continue
                axis.plot([g for g, _ in points], [t for _, t in points], styles[c % len(styles)], marker="o",
                          color=colour, label=f"{kind} ({cluster})")
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_xlabel("GPUs")
        axis.set_ylabel("throughput (tokens/s)")
        axis.set_title(f"{model}: NEST vs baselines")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=7)
    figure.suptitle("Training throughput of the best plan per sweep point")
    figure.tight_layout()
    save(figure, out_dir, "throughput")


def default_plan_row(plans):
    """NEST's best plan with the deepest pipeline (fewest GPUs among those): the most to see."""
    candidates = [
        (-int(p["pp"]), int(p["gpus"]), row)
        for row, p in enumerate(plans)
        if text(p["kind"]) == "nest" and int(p["rank_k"]) == 0 and int(p["feasible"]) == 1
    ]
    if not candidates:
        sys.exit("plot_catalog: the catalog has no feasible NEST plan to draw")
    return min(candidates)[2]


def one_f_one_b(fw, bw, p2p, micro_batches):
    """Start and end of every forward and backward micro-batch under 1F1B
    (non-interleaved): stage s runs min(S-s-1, m) forwards, then alternates
    one forward and one backward, then drains its backwards."""
    stages = len(fw)
    orders = []
    for s in range(stages):
        warmup = min(stages - s - 1, micro_batches)
        order = [("F", i) for i in range(warmup)]
        f, b = warmup, 0
        while f < micro_batches:
            order.append(("F", f))
            f += 1
            order.append(("B", b))
            b += 1
        order += [("B", i) for i in range(b, micro_batches)]
        orders.append(order)
    done = {}
    clock = [0.0] * stages
    position = [0] * stages
    progress = True
    while progress:
        progress = False
        for s in range(stages):
            while position[s] < len(orders[s]):
                kind, i = orders[s][position[s]]
                if kind == "F":
                    before = ("F", s - 1, i) if s > 0 else None
                    link = p2p[s] if s > 0 else 0.0
                else:
                    before = ("B", s + 1, i) if s + 1 < stages else ("F", s, i)
                    link = p2p[s + 1] if s + 1 < stages else 0.0
                if before is not None and before not in done:
                    break
                ready = done[before][1] + link if before is not None else 0.0
                start = max(clock[s], ready)
                end = start + (fw[s] if kind == "F" else bw[s])
                done[(kind, s, i)] = (start, end)
                clock[s] = end
                position[s] += 1
                progress = True
    return done


def plot_timeline(plan, stages, out_dir, row):
    """(2) the 1F1B schedule of one plan; bars are micro-batches (F: forward, B: backward).
    Long schedules are drawn with fewer micro-batches (warm-up, a steady state
    and the drain); the full schedule's length is computed and printed."""
    micro_batches = max(1, int(plan["global_batch"]) // max(1, int(plan["dp"]) * int(plan["micro_batch"])))
    fw = [float(s["forward_per_microbatch_s"]) for s in stages]
    bw = [float(s["backward_per_microbatch_s"]) for s in stages]
    p2p = [float(s["p2p_per_microbatch_s"]) for s in stages]
    full = max(end for _, end in one_f_one_b(fw, bw, p2p, micro_batches).values())
    drawn = min(micro_batches, max(16, 3 * len(stages)))
    events = one_f_one_b(fw, bw, p2p, drawn)
    figure, axis = plt.subplots(figsize=(11, 0.55 * len(stages) + 1.8))
    for (kind, s, i), (start, end) in events.items():
        axis.barh(s, end - start, left=start, height=0.8, color="tab:blue" if kind == "F" else "tab:orange",
                  edgecolor="white", linewidth=0.3)
        if drawn <= 16:
            axis.text((start + end) / 2, s, str(i), ha="center", va="center", fontsize=6, color="white")
    axis.set_yticks(range(len(stages)))
    axis.set_yticklabels([f"stage {s['stage']} (layers {s['first_layer']}-{s['last_layer']}, {s['devices']} GPUs)"
                          for s in stages], fontsize=7)
    axis.invert_yaxis()
    axis.set_xlabel("time (s)")
    notes = []
    if drawn < micro_batches:
        notes.append(f"drawn with {drawn} of the {micro_batches} micro-batches (the steady state repeats)")
    if int(plan["vpp"]) > 1:
        notes.append(f"vpp={int(plan['vpp'])} drawn non-interleaved")
    axis.set_title(f"1F1B pipeline of plan row {row}: {text(plan['model'])} on {int(plan['gpus'])} GPUs "
                   f"({text(plan['cluster'])}), pp={int(plan['pp'])}, {micro_batches} micro-batches\n"
                   f"full pipeline {full:.3f} s (catalog iteration time {float(plan['iteration_time_s']):.3f} s)"
                   + ("\n" + "; ".join(notes) if notes else ""), fontsize=9)
    axis.legend(handles=[Patch(color="tab:blue", label="forward"), Patch(color="tab:orange", label="backward")],
                loc="lower right", fontsize=7)
    axis.grid(True, axis="x", alpha=0.3)
    save(figure, out_dir, "timeline")


def device_stages(plan, stages):
    """Stage of every GPU. Ranks are numbered in the plan's placement order
    (first name varies fastest, ep lies inside dp); when that does not give the
    stored first devices, each stage is drawn as a block from its first device."""
    gpus = int(plan["gpus"])
    order = [name for name in text(plan["placement"]).split(",") if name in ("tp", "pp", "dp", "cp")]
    radices = [(name, max(1, int(plan[name]))) for name in order]
    product = 1
    for _, radix in radices:
        product *= radix
    owner = [-1] * gpus
    if product == gpus and "pp" in order:
        for device in range(gpus):
            rest = device
            for name, radix in radices:
                if name == "pp":
                    owner[device] = rest % radix
                rest //= radix
        firsts = [owner.index(s) if s in owner else -1 for s in range(len(stages))]
        if firsts == [int(s["first_device"]) for s in stages]:
            return owner, "placement order " + text(plan["placement"])
    owner = [-1] * gpus
    for s in stages:
        for device in range(int(s["first_device"]), min(gpus, int(s["first_device"]) + int(s["devices"]))):
            owner[device] = int(s["stage"])
    return owner, "stages drawn as blocks from their first device"


def plot_placement(plan, stages, levels, out_dir, row):
    """(3) GPUs as cells: one row per server, servers grouped by the next level (rack / leaf)."""
    names = [text(n) for n in levels["level_name"]]
    sizes = [int(g) for g in levels["group_size"]]
    per_server = sizes[0] if sizes and sizes[0] > 0 else 8
    per_group = sizes[1] if len(sizes) > 1 and sizes[1] > 0 else 0
    gpus = int(plan["gpus"])
    servers = (gpus + per_server - 1) // per_server
    owner, how = device_stages(plan, stages)
    colours = plt.get_cmap("tab20" if len(stages) > 10 else "tab10")
    figure, axis = plt.subplots(figsize=(7, min(24, 1.6 + 0.18 * servers)))
    for device, stage in enumerate(owner):
        server, slot = divmod(device, per_server)
        colour = colours(stage % colours.N) if stage >= 0 else "lightgrey"
        axis.add_patch(plt.Rectangle((slot, server), 0.95, 0.9, color=colour))
    if per_group:
        for boundary in range(per_group, servers, per_group):
            axis.axhline(boundary - 0.05, color="black", linewidth=1.2)
    axis.set_xlim(0, per_server)
    axis.set_ylim(servers, 0)
    step = max(1, servers // 32)
    axis.set_yticks([server + 0.45 for server in range(0, servers, step)])
    axis.set_yticklabels([str(server) for server in range(0, servers, step)], fontsize=7)
    axis.set_xticks([slot + 0.475 for slot in range(per_server)])
    axis.set_xticklabels([str(slot) for slot in range(per_server)], fontsize=7)
    axis.set_xlabel(f"GPU within the server ({names[0] if names else 'level 0'})")
    group_note = f"; black lines: {names[1]} groups of {per_group} servers" if per_group and len(names) > 1 else ""
    axis.set_ylabel("server")
    axis.set_title(f"Placement of plan row {row}: {text(plan['model'])}, {gpus} GPUs on {text(plan['cluster'])}\n"
                   f"tp={int(plan['tp'])} pp={int(plan['pp'])} dp={int(plan['dp'])} ep={int(plan['ep'])} "
                   f"({how}{group_note})", fontsize=9)
    boundary_names = [names[int(s["boundary_level"])] if 0 <= int(s["boundary_level"]) < len(names) else "-"
                      for s in stages]
    axis.legend(handles=[Patch(color=colours(int(s["stage"]) % colours.N),
                               label=f"stage {int(s['stage'])} (boundary: {b})") for s, b in zip(stages, boundary_names)],
                fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1))
    save(figure, out_dir, "placement")


def plot_alltoallv(validation, plans, out_dir):
    """(4) bus bandwidth vs bytes per rank per algorithm, one panel per validated plan."""
    rows = sorted({int(v["plan_row"]) for v in validation})
    shown = rows[:6]
    columns = min(3, len(shown))
    lines = (len(shown) + columns - 1) // columns
    figure, axes = plt.subplots(lines, columns, figsize=(5 * columns, 3.8 * lines), squeeze=False)
    for axis, row in zip(axes.flat, shown):
        mine = [v for v in validation if int(v["plan_row"]) == row]
        for algo in sorted({text(v["algo"]) for v in mine}):
            points = sorted((int(v["bytes_per_rank"]), float(v["busbw_GBps"]), float(v["busbw_GBps"]) * float(v["time_avg_us"])
                             / float(v["lower_bound_us"]) if float(v["lower_bound_us"]) > 0 else 0.0)
                            for v in mine if text(v["algo"]) == algo)
            axis.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                      color=ALGO_COLOURS.get(algo, None), label=algo)
        bound = sorted({(int(v["bytes_per_rank"]), float(v["busbw_GBps"]) * float(v["time_avg_us"]) / float(v["lower_bound_us"]))
                        for v in mine if float(v["lower_bound_us"]) > 0 and text(v["algo"]) == text(mine[0]["algo"])})
        if bound:
            axis.plot([b[0] for b in bound], [b[1] for b in bound], "k--", label="lower bound")
        plan = plans[row]
        first = mine[0]
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_xlabel("bytes per rank")
        axis.set_ylabel("bus bandwidth (GB/s)")
        axis.set_title(f"plan row {row}: {text(plan['model'])} {int(plan['gpus'])} GPUs, ep={int(plan['ep'])}\n"
                       f"run on {int(first['servers'])} servers x {int(first['gpus_per_server'])} ranks", fontsize=8)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=7)
    for axis in list(axes.flat)[len(shown):]:
        axis.set_visible(False)
    more = f" (first {len(shown)} of {len(rows)} validated plans)" if len(rows) > len(shown) else ""
    figure.suptitle("alltoallv of the chosen plans' MoE traffic on the job's ranks" + more)
    figure.tight_layout()
    save(figure, out_dir, "alltoallv")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("catalog", help="a nestfast catalog (.h5)")
    parser.add_argument("--out", default="figures", help="folder for the figures (default: figures)")
    parser.add_argument("--plan-row", type=int, default=None,
                        help="/plans row drawn by the timeline and placement (default: NEST's deepest best plan)")
    args = parser.parse_args()
    try:
        catalog = h5py.File(args.catalog, "r")
    except OSError as error:
        sys.exit(f"plot_catalog: {args.catalog}: cannot be opened as HDF5 ({error})")
    with catalog:
        if text(catalog.attrs.get("format", b"")) != "nestfast-catalog" or "plans" not in catalog:
            sys.exit(f"plot_catalog: {args.catalog}: not a finished nestfast catalog")
        plans = catalog["plans"][()]
        all_stages = catalog["stages"][()]
        validation = catalog["validation/alltoallv"][()] if "validation/alltoallv" in catalog else []
        if len(plans) == 0:
            sys.exit(f"plot_catalog: {args.catalog}: /plans is empty")
        row = default_plan_row(plans) if args.plan_row is None else args.plan_row
        if not 0 <= row < len(plans):
            sys.exit(f"plot_catalog: --plan-row {row}: the catalog has rows 0-{len(plans) - 1}")
        plan = plans[row]
        if int(plan["feasible"]) != 1 or int(plan["stage_count"]) == 0:
            sys.exit(f"plot_catalog: --plan-row {row}: that plan is infeasible (no stages to draw)")
        first = int(plan["stage_offset"])
        stages = all_stages[first:first + int(plan["stage_count"])]
        cluster = catalog["clusters/" + text(plan["cluster"]).replace("/", "_")]
        levels = {name: cluster[name][()] for name in ("level_name", "group_size")}

        os.makedirs(args.out, exist_ok=True)
        plot_throughput(plans, args.out)
        plot_timeline(plan, stages, args.out, row)
        plot_placement(plan, stages, levels, args.out, row)
        if len(validation) > 0:
            plot_alltoallv(validation, plans, args.out)
        else:
            print("alltoallv: skipped, the catalog has no /validation/alltoallv rows (run `nestfast run` with "
                  "[validate] enabled to measure them)")


if __name__ == "__main__":
    main()
