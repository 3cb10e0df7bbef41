#!/usr/bin/env python3
"""Draw the figures of a nestfast catalog (HDF5): PNG and SVG of each.

  plot_catalog.py CATALOG [--out DIR] [--plan-row R]

  throughput   tokens/s per GPU of NEST's best plan and of each baseline, one
               panel per model, cluster, global batch and sequence length,
               bars on a linear axis, NEST's speed-up over the best baseline
  timeline     the 1F1B schedule of one plan from its stored per-stage times:
               forward, backward, the recompute inside it, the p2p sends and
               the idle bubble; a long schedule is drawn with its steady state
               cut out of the time axis, and says so
  placement    one plan's GPUs, a panel per parallel dimension (tp, cp, ep,
               dp, pp): which GPUs form each group and the lowest network
               level (NVLink server, leaf, spine ...) that holds every group
  alltoallv    /validation/alltoallv, every validated plan: measured time per
               algorithm (mean, bars from the fastest to the slowest
               iteration), the solver's prediction and the lower bound at the
               cluster's declared link rates

Reads the catalog through catalog_frame.py (h5py + pandas) and, when the
python3 first on PATH lacks those modules, runs again under Debian's
/usr/bin/python3 (python3-h5py, python3-matplotlib, python3-pandas).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import system_python  # noqa: E402

system_python.require(["h5py", "matplotlib", "pandas", "numpy"], os.path.abspath(__file__))

import catalog_frame  # noqa: E402
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

KIND_COLOURS = {"nest": "tab:blue", "manual": "tab:orange", "phaze": "tab:green", "mcmc": "tab:red"}
ALGO_COLOURS = {"fast": "tab:blue", "mpi": "tab:orange", "pairwise": "tab:green", "fanout": "tab:purple",
                "auto": "tab:brown"}
DIMENSIONS = ("tp", "cp", "ep", "dp", "pp")  # as /plans placement names them


def save(figure, out_dir, name):
    paths = []
    for extension in ("png", "svg"):
        path = os.path.join(out_dir, f"{name}.{extension}")
        figure.savefig(path, dpi=110, bbox_inches="tight")
        paths.append(path)
    plt.close(figure)
    print("wrote " + " ".join(paths))


def best_rows(plans):
    """Rank-0 feasible rows: NEST's best plan and each baseline's, per sweep point."""
    return plans[(plans["rank_k"] == 0) & (plans["feasible"] == 1)]


# ---------------------------------------------------------------- throughput

def plot_throughput(plans, out_dir):
    """(1) per-GPU tokens/s per sweep point, one panel per (model, cluster, global batch, sequence)."""
    best = best_rows(plans)
    panels = sorted(best.groupby(["model", "cluster", "global_batch", "seq_len"]).groups)
    kinds = [kind for kind in KIND_COLOURS if kind in set(best["kind"])]
    columns = min(2, len(panels))
    lines = (len(panels) + columns - 1) // columns
    figure, axes = plt.subplots(lines, columns, figsize=(6.4 * columns, 3.6 * lines), squeeze=False)
    width = 0.8 / max(1, len(kinds))
    for axis, (model, cluster, batch, seq) in zip(axes.flat, panels):
        mine = best[(best["model"] == model) & (best["cluster"] == cluster) & (best["global_batch"] == batch)
                    & (best["seq_len"] == seq)]
        gpus = sorted(set(mine["gpus"]))
        top = 0.0
        for k, kind in enumerate(kinds):
            values = []
            for g in gpus:
                row = mine[(mine["gpus"] == g) & (mine["kind"] == kind)]
                values.append(float(row["tokens_per_s"].iloc[0]) / g if len(row) else 0.0)
            top = max([top] + values)
            axis.bar([x + (k - (len(kinds) - 1) / 2) * width for x in range(len(gpus))], values, width,
                     color=KIND_COLOURS[kind], label=kind)
        for x, g in enumerate(gpus):
            at = mine[mine["gpus"] == g]
            nest = at[at["kind"] == "nest"]["tokens_per_s"]
            others = at[at["kind"] != "nest"]["tokens_per_s"]
            manual = at[at["kind"] == "manual"]["tokens_per_s"]
            if len(nest) and len(others):
                label = f"{float(nest.iloc[0]) / float(others.max()):.2f}x"
                if len(manual):
                    label += f"\n({float(nest.iloc[0]) / float(manual.iloc[0]):.2f}x manual)"
                axis.text(x, top * 1.02, label, ha="center", va="bottom", fontsize=6)
        axis.set_xticks(range(len(gpus)))
        axis.set_xticklabels([str(g) for g in gpus])
        axis.set_ylim(0, top * 1.2 if top > 0 else 1)
        axis.set_xlabel("GPUs")
        axis.set_ylabel("tokens/s per GPU")
        axis.set_title(f"{model} on {cluster}: global batch {batch} x {seq} tokens", fontsize=9)
        axis.grid(True, axis="y", alpha=0.3)
    for axis in list(axes.flat)[len(panels):]:
        axis.set_visible(False)
    figure.suptitle("Training throughput of each method's best plan per sweep point (linear axis); "
                    "above each group: NEST's speed-up over the best baseline (and over the manual plan)", fontsize=10)
    figure.legend(handles=[Patch(color=KIND_COLOURS[kind], label=kind) for kind in kinds], loc="upper center",
                  ncol=len(kinds), fontsize=8, bbox_to_anchor=(0.5, 0.965))
    figure.tight_layout(rect=(0, 0, 1, 0.95))
    save(figure, out_dir, "throughput")


# ------------------------------------------------------------------ timeline

def one_f_one_b(fw, bw, p2p, micro_batches):
    """Start and end of every forward and backward micro-batch under 1F1B
    (non-interleaved): stage s runs min(S-s-1, m) forwards, then alternates
    one forward and one backward, then drains its backwards. A forward of
    stage s > 0 waits for the one before it plus p2p[s]; a backward waits for
    the next stage's plus p2p[s + 1]."""
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


def idle_spans(events, stages, end_time):
    """Per stage, the (start, end) spans with nothing running between 0 and end_time: the bubble."""
    spans = []
    for s in range(stages):
        busy = sorted((start, end) for (_, stage, _), (start, end) in events.items() if stage == s)
        clock = 0.0
        for start, end in busy:
            if start > clock + 1e-12:
                spans.append((s, clock, start))
            clock = max(clock, end)
        if end_time > clock + 1e-12:
            spans.append((s, clock, end_time))
    return spans


def draw_schedule(axis, events, spans, p2p, recompute, lo, hi, label_micro_batches):
    """The part of the schedule inside [lo, hi] on one axis."""
    for (kind, s, i), (start, end) in events.items():
        if end < lo or start > hi:
            continue
        colour = "tab:blue" if kind == "F" else "tab:orange"
        axis.barh(s, end - start, left=start, height=0.7, color=colour, edgecolor="white", linewidth=0.3)
        if kind == "B" and recompute[s] > 0:
            # Recompute runs first in the backward pass.
            axis.barh(s, min(recompute[s], end - start), left=start, height=0.7, color="tab:orange",
                      edgecolor="black", hatch="////", linewidth=0.0)
        if label_micro_batches:
            axis.text((start + end) / 2, s, str(i), ha="center", va="center", fontsize=5, color="white")
        # The send this micro-batch waited for, drawn in the lane's top (F) or bottom (B) edge.
        if kind == "F" and s > 0 and p2p[s] > 0:
            sent = events[("F", s - 1, i)][1]
            axis.plot([sent, sent + p2p[s]], [s - 0.42, s - 0.42], color="black", linewidth=1.2)
        if kind == "B" and ("B", s + 1, i) in events and p2p[s + 1] > 0:
            sent = events[("B", s + 1, i)][1]
            axis.plot([sent, sent + p2p[s + 1]], [s + 0.42, s + 0.42], color="black", linewidth=1.2)
    for s, start, end in spans:
        if end < lo or start > hi:
            continue
        axis.barh(s, end - start, left=start, height=0.7, color="none", edgecolor="tab:red", hatch="..",
                  linewidth=0.0)
    axis.set_xlim(lo, hi)
    axis.grid(True, axis="x", alpha=0.3)


def plot_timeline(plan, stages, out_dir, row):
    """(2) the 1F1B schedule of one plan, every micro-batch on a true time axis
    (a long steady state is cut out and named), with recompute, p2p and the bubble."""
    micro_batches = int(plan["micro_batches"])
    pp = int(plan["pp"])
    fw = [float(s) for s in stages["forward_per_microbatch_s"]]
    bw = [float(s) for s in stages["backward_per_microbatch_s"]]
    p2p = [float(s) for s in stages["p2p_per_microbatch_s"]] + [0.0]
    # Recompute is inside backward_per_microbatch_s; its share per micro-batch
    # is the plan's recompute_s (bottleneck rank) over the micro-batches, on
    # the stages that recompute.
    per_micro_batch = float(plan["recompute_s"]) / max(1, micro_batches)
    recompute = [per_micro_batch if r != "none" else 0.0 for r in stages["recompute"]]
    events = one_f_one_b(fw, bw, p2p, micro_batches)
    full = max(end for _, end in events.values())
    spans = idle_spans(events, len(fw), full)
    idle = sum(end - start for _, start, end in spans)
    cycle = max(f + b for f, b in zip(fw, bw))
    window = (len(fw) + 3) * cycle + sum(fw)  # warm-up and a few steady cycles on each side
    cut = full > 2.6 * window
    pieces = [(0.0, window), (full - window, full)] if cut else [(0.0, full)]
    height = 0.5 * len(fw) + 3.2
    figure, axes = plt.subplots(1, len(pieces), figsize=(12, height), squeeze=False, sharey=True,
                                gridspec_kw={"wspace": 0.04})
    figure.subplots_adjust(top=1 - 0.75 / height, bottom=0.95 / height)
    for axis, (lo, hi) in zip(axes[0], pieces):
        draw_schedule(axis, events, spans, p2p, recompute, lo, hi, label_micro_batches=(hi - lo) < 40 * cycle)
        axis.set_xlabel("time (s)")
    first = axes[0][0]
    first.set_yticks(range(len(fw)))
    first.set_yticklabels([f"stage {int(s['stage'])}: layers {int(s['first_layer'])}-{int(s['last_layer'])}, "
                           f"{int(s['devices'])} GPUs" for _, s in stages.iterrows()], fontsize=7)
    first.invert_yaxis()
    notes = []
    if cut:
        elided = sorted({i for (kind, s, i), (start, end) in events.items() if start >= window and end <= full - window})
        whole = [i for i in elided if all(window <= events[(k, s, i)][0] and events[(k, s, i)][1] <= full - window
                                          for k in "FB" for s in range(len(fw)))]
        notes.append(f"cut out: {window:.2f}-{full - window:.2f} s of steady state, where {len(whole)} of the "
                     f"{micro_batches} micro-batches run whole (every stage busy)")
        axes[0][1].spines["left"].set_linestyle((0, (4, 4)))
        first.spines["right"].set_linestyle((0, (4, 4)))
    if pp == 1:
        notes.append("pp = 1: one stage, no pipeline: the micro-batches run back to back, no p2p, no bubble")
    if int(plan["vpp"]) > 1:
        notes.append(f"vpp = {int(plan['vpp'])}: drawn non-interleaved (one chunk per rank)")
    if any(recompute):
        notes.append(f"recompute: the first {1e3 * per_micro_batch:.1f} ms of each backward on stages "
                     + ", ".join(str(s) for s, r in enumerate(recompute) if r > 0)
                     + f" (the plan's recompute_s over its {micro_batches} micro-batches)")
    else:
        notes.append("no recompute in this plan")
    rest = float(plan["iteration_time_s"]) - full
    figure.suptitle(
        f"1F1B schedule of plan row {row}: {plan['model']} on {int(plan['gpus'])} GPUs ({plan['cluster']}), "
        f"tp={int(plan['tp'])} pp={pp} dp={int(plan['dp'])}, {micro_batches} micro-batches of {int(plan['micro_batch'])}\n"
        f"pipeline {full:.3f} s, idle (bubble) {100 * idle / (full * len(fw)):.1f}% of stage time; the catalog's "
        f"iteration time {float(plan['iteration_time_s']):.3f} s adds {rest:.3f} s after it (gradient sync "
        f"{float(plan['dp_sync_s']):.3f} s, optimizer {float(plan['optimizer_s']):.3f} s ...)", fontsize=9)
    if notes:
        figure.text(0.5, 0.01, "\n".join(notes), ha="center", va="bottom", fontsize=8)
    handles = [Patch(color="tab:blue", label="forward"), Patch(color="tab:orange", label="backward"),
               Patch(facecolor="tab:orange", edgecolor="black", hatch="////", label="recompute (in backward)"),
               plt.Line2D([], [], color="black", linewidth=1.2, label="p2p send (top: activation, bottom: gradient)"),
               Patch(facecolor="none", edgecolor="tab:red", hatch="..", label="idle (bubble)")]
    axes[0][-1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7)
    save(figure, out_dir, "timeline")


# ----------------------------------------------------------------- placement

def grid_coordinates(devices, dims):
    """Each device's coordinate in a grid of (name, size) dims, innermost first."""
    coords = []
    for device in range(devices):
        rest, mine = device, {}
        for name, n in dims:
            mine[name] = rest % n
            rest //= n
        coords.append(mine)
    return coords


def coordinates(plan):
    """Each GPU's coordinate per dimension, from the placement order (innermost
    first; ep is the ep factor of dp, dp the rest: solver/search/execution.hpp)."""
    size = {"tp": int(plan["tp"]), "cp": int(plan["cp"]), "ep": int(plan["ep"]), "pp": int(plan["pp"]),
            "dp": int(plan["dp"]) // max(1, int(plan["ep"]))}
    order = [name for name in str(plan["placement"]).split(",") if name in size]
    if sorted(order) != sorted(DIMENSIONS):
        return None, size
    return grid_coordinates(int(plan["gpus"]), [(name, size[name]) for name in order]), size


def expert_coordinates(plan):
    """Megatron-Core's expert grid for a megatron-core plan with ep > 1: its
    experts are grouped over tp*cp*dp as etp, ep, expert-dp, innermost first,
    beside pp where the placement puts it (parallel_state.py:871-900 at
    Megatron-LM d98e8a64; megatron_expert_grid in
    solver/search/execution_layout.cpp prices the same grid). None for every
    other plan, whose ep is the ep factor of dp in the placement order.
    Returns the coordinates and etp (a catalog before schema 6 has no etp
    column: its plans ran etp = tp)."""
    ep = int(plan["ep"])
    if ep <= 1 or str(plan.get("framework", "")) != "megatron-core":
        return None
    tp, cp, pp, gpus = int(plan["tp"]), int(plan["cp"]), int(plan["pp"]), int(plan["gpus"])
    etp = int(plan["etp"]) if "etp" in plan and int(plan["etp"]) > 0 else tp
    edp = tp * cp * int(plan["dp"]) // (etp * ep)
    sizes = [("etp", etp), ("ep", ep)] + ([("edp", edp), ("pp", pp)]
                                           if str(plan["placement"]).split(",")[-1] == "pp"
                                           else [("pp", pp), ("edp", edp)])
    return grid_coordinates(gpus, sizes), etp


def spanning_level(coords, name, blocks, level_names):
    """The lowest level whose blocks (devices per block) each hold every group of dimension `name`."""
    groups = {}
    for device, mine in enumerate(coords):
        key = tuple(v for k, v in sorted(mine.items()) if k != name)
        groups.setdefault(key, []).append(device)
    for level, block in enumerate(blocks):
        if block == 0 or all(min(d) // block == max(d) // block for d in groups.values()):
            return level_names[level]
    return level_names[-1]


def plot_placement(plan, stages, levels, out_dir, row):
    """(3) the plan's GPUs (a row per server) once per parallel dimension of degree > 1:
    colour = the GPU's coordinate in that dimension, so one group is one of
    each colour; the title names the lowest network level holding every group."""
    names = [str(n) for n in levels["level_name"]]
    sizes = [int(g) for g in levels["group_size"]]
    per_server = sizes[0] if sizes and sizes[0] > 0 else 8
    gpus = int(plan["gpus"])
    servers = (gpus + per_server - 1) // per_server
    blocks, product = [], 1
    for g in sizes:
        product = product * g if g > 0 else 0
        blocks.append(product)
    coords, size = coordinates(plan)
    if coords is None:
        sys.exit(f"plot_catalog: plan row {row}: placement '{plan['placement']}' does not name {', '.join(DIMENSIONS)}")
    first_devices = [next(d for d, c in enumerate(coords) if c["pp"] == s % size["pp"] and
                          all(c[k] == 0 for k in c if k != "pp")) for s in stages["stage"]]
    if first_devices != [int(d) for d in stages["first_device"]]:
        sys.exit(f"plot_catalog: plan row {row}: the placement does not give the stored first devices")
    shown = [name for name in DIMENSIONS if size[name] > 1] or ["tp"]
    server_group = sizes[1] if len(sizes) > 1 and sizes[1] > 0 else 0
    figure, axes = plt.subplots(1, len(shown), figsize=(3.6 * len(shown) + 1, min(20, 1.9 + 0.22 * servers)),
                                squeeze=False)
    experts, etp = expert_coordinates(plan) or (None, None)
    for axis, name in zip(axes[0], shown):
        panel = experts if name == "ep" and experts is not None else coords
        colours = plt.get_cmap("tab10" if size[name] <= 10 else "tab20" if size[name] <= 20 else "viridis")
        for device, mine in enumerate(panel):
            server, slot = divmod(device, per_server)
            value = mine[name]
            colour = colours(value % colours.N) if colours.N <= 20 else colours(value / max(1, size[name] - 1))
            axis.add_patch(plt.Rectangle((slot, server), 0.92, 0.86, color=colour))
            if size[name] <= 20 and per_server <= 16:
                axis.text(slot + 0.46, server + 0.43, str(value), ha="center", va="center", fontsize=6, color="white")
        if server_group:
            for boundary in range(server_group, servers, server_group):
                axis.axhline(boundary - 0.07, color="black", linewidth=1.4)
        axis.set_xlim(0, per_server)
        axis.set_ylim(servers, 0)
        step = max(1, servers // 32)
        axis.set_yticks([server + 0.43 for server in range(0, servers, step)])
        axis.set_yticklabels([str(server) for server in range(0, servers, step)], fontsize=7)
        axis.set_xticks([slot + 0.46 for slot in range(per_server)])
        axis.set_xticklabels([str(slot) for slot in range(per_server)], fontsize=7)
        axis.set_xlabel(f"GPU in the server ({names[0]})", fontsize=8)
        label = f"dp/ep (dp = {int(plan['dp'])} with ep)" if name == "dp" and size["ep"] > 1 else name
        if panel is experts:
            label = f"ep (Megatron's expert grid, etp {etp})"
        axis.set_title(f"{label} = {size[name]}: each group within one\n"
                       f"{spanning_level(panel, name, blocks, names)}", fontsize=9)
    axes[0][0].set_ylabel("server")
    described = []
    for level, (level_name, g) in enumerate(zip(names, sizes)):
        if level == 0:
            described.append(f"{level_name}: {g} GPUs = one row")
        elif g > 0:
            described.append(f"{level_name}: {g} of the level below" + (" (black lines)" if level == 1 else ""))
        else:
            described.append(f"{level_name}: everything above")
    used = next((names[level] for level, block in enumerate(blocks) if block == 0 or gpus <= block), names[-1])
    stage_levels = ", ".join(sorted({str(b) for b in stages["boundary_level_name"] if str(b)}))
    figure.suptitle(f"Placement of plan row {row}: {plan['model']}, {gpus} GPUs on {plan['cluster']} "
                    f"(placement {plan['placement']}, innermost first)\n"
                    f"colour and number = the GPU's coordinate in that dimension; a group is one GPU of each colour "
                    f"(the GPUs whose other coordinates are equal)\n"
                    f"levels: {'; '.join(described)}\nthis plan's {gpus} GPUs sit in one {used} group"
                    + (f"; pipeline sends cross {stage_levels}" if stage_levels else ""), fontsize=8)
    figure.tight_layout()
    save(figure, out_dir, "placement")


# ----------------------------------------------------------------- alltoallv

def plot_alltoallv(validation, plans, out_dir):
    """(4) every validated plan: measured time per algorithm (mean, min-max bars),
    the solver's prediction and the declared-rate lower bound, vs bytes per rank."""
    rows = sorted(set(int(r) for r in validation["plan_row"]))
    columns = min(5, len(rows))
    lines = (len(rows) + columns - 1) // columns
    figure, axes = plt.subplots(lines, columns, figsize=(3.7 * columns, 3.4 * lines + 0.6), squeeze=False,
                                sharey=True)
    for axis, row in zip(axes.flat, rows):
        mine = validation[validation["plan_row"] == row].sort_values("bytes_per_rank")
        for algo in sorted(set(mine["algo"])):
            runs = mine[mine["algo"] == algo]
            axis.errorbar(runs["bytes_per_rank"], runs["time_avg_us"],
                          yerr=[runs["time_avg_us"] - runs["time_min_us"], runs["time_max_us"] - runs["time_avg_us"]],
                          marker="o", markersize=3, capsize=2, color=ALGO_COLOURS.get(algo), label=f"{algo} (measured)")
        per_size = mine.drop_duplicates("bytes_per_rank")
        if (per_size["predicted_us"] > 0).any():
            axis.plot(per_size["bytes_per_rank"], per_size["predicted_us"], "k--", label="predicted (solver)")
        if (per_size["lower_bound_us"] > 0).any():
            axis.plot(per_size["bytes_per_rank"], per_size["lower_bound_us"], ":", color="grey",
                      label="lower bound (declared rates)")
        plan = plans.iloc[row]
        first = mine.iloc[0]
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_xlabel("bytes per rank", fontsize=8)
        if axis in axes[:, 0]:
            axis.set_ylabel("time (us)", fontsize=8)
        axis.set_title(f"row {row}: {plan['model']} {int(plan['gpus'])} GPUs, ep={int(plan['ep'])}, {plan['cluster']}\n"
                       f"measured on {int(first['servers'])} server(s) x {int(first['gpus_per_server'])} ranks, "
                       f"{int(first['iterations'])} iterations", fontsize=8)
        axis.grid(True, which="both", alpha=0.3)
        axis.tick_params(labelsize=7)
    for axis in list(axes.flat)[len(rows):]:
        axis.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, bbox_to_anchor=(0.5, 0.0))
    figure.suptitle(f"alltoallv of the chosen plans' MoE traffic on this job's own ranks: all {len(rows)} validated plans\n"
                    "measured on the machines that ran the job (mean, bars: fastest to slowest iteration); predicted and "
                    "lower bound at the link rates of the plan's cluster,\nso they meet the measurements only where the "
                    "job ran on that cluster (slurm/validate-h200.sbatch) or on a testbed priced as itself "
                    "(tests/testbed/validate.sh)", fontsize=9)
    figure.tight_layout(rect=(0, 0.05, 1, 0.95))
    save(figure, out_dir, "alltoallv")


# ---------------------------------------------------------------------- main

def nest_best(plans):
    candidates = plans[(plans["kind"] == "nest") & (plans["rank_k"] == 0) & (plans["feasible"] == 1)]
    if len(candidates) == 0:
        sys.exit("plot_catalog: the catalog has no feasible NEST plan to draw")
    return candidates


def timeline_row(plans):
    """NEST's best plan with the deepest pipeline (fewest GPUs among those): the most to see."""
    candidates = nest_best(plans)
    return int(candidates.assign(key=-candidates["pp"]).sort_values(["key", "gpus"], kind="stable").index[0])


def placement_row(plans):
    """NEST's best plan with the most parallel dimensions of degree > 1 (ep first, then fewest GPUs)."""
    candidates = nest_best(plans)
    dims = ((candidates["tp"] > 1).astype(int) + (candidates["cp"] > 1) + (candidates["ep"] > 1) + (candidates["pp"] > 1)
            + (candidates["dp"] // candidates["ep"].clip(lower=1) > 1))
    ranked = candidates.assign(dims=-dims, moe=-(candidates["ep"] > 1).astype(int))
    return int(ranked.sort_values(["dims", "moe", "gpus"], kind="stable").index[0])


def stages_of(all_stages, plans, row):
    plan = plans.iloc[row]
    if int(plan["feasible"]) != 1 or int(plan["stage_count"]) == 0:
        sys.exit(f"plot_catalog: --plan-row {row}: that plan is infeasible (no stages to draw)")
    first = int(plan["stage_offset"])
    return plan, all_stages.iloc[first:first + int(plan["stage_count"])].reset_index(drop=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("catalog", help="a nestfast catalog (.h5)")
    parser.add_argument("--out", default="figures", help="folder for the figures (default: figures)")
    parser.add_argument("--plan-row", type=int, default=None,
                        help="/plans row drawn by the timeline and placement (default: NEST's deepest best plan "
                             "for the timeline, its best plan with the most parallel dimensions for the placement)")
    args = parser.parse_args()
    plans = catalog_frame.read_table(args.catalog, "plans")
    if len(plans) == 0:
        sys.exit(f"plot_catalog: {args.catalog}: /plans is empty")
    all_stages = catalog_frame.read_table(args.catalog, "stages")
    validation = catalog_frame.read_table(args.catalog, "validation/alltoallv")
    if args.plan_row is not None and not 0 <= args.plan_row < len(plans):
        sys.exit(f"plot_catalog: --plan-row {args.plan_row}: the catalog has rows 0-{len(plans) - 1}")
    timeline = timeline_row(plans) if args.plan_row is None else args.plan_row
    placement = placement_row(plans) if args.plan_row is None else args.plan_row
    with catalog_frame.open_catalog(args.catalog) as catalog:
        cluster = catalog["clusters/" + str(plans.iloc[placement]["cluster"]).replace("/", "_")]
        levels = {"level_name": [n.decode() if isinstance(n, bytes) else str(n) for n in cluster["level_name"][()]],
                  "group_size": list(cluster["group_size"][()])}

    os.makedirs(args.out, exist_ok=True)
    plot_throughput(plans, args.out)
    plan, stages = stages_of(all_stages, plans, timeline)
    plot_timeline(plan, stages, args.out, timeline)
    plan, stages = stages_of(all_stages, plans, placement)
    plot_placement(plan, stages, levels, args.out, placement)
    if len(validation) > 0:
        plot_alltoallv(validation, plans, args.out)
    else:
        print("alltoallv: skipped, the catalog has no /validation/alltoallv rows (run `nestfast run` with "
              "[validate] enabled to measure them)")


if __name__ == "__main__":
    main()
