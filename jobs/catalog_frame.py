#!/usr/bin/env python3
"""A nestfast catalog's tables as pandas DataFrames (h5py + pandas, strings decoded).

The one line, from Python (with jobs/ on sys.path):

    plans = catalog_frame.read_table("catalog.h5", "plans")

Tables: plans, stages, validation/alltoallv. Every column's unit and meaning
(the dataset attributes "<column>.unit" and "<column>.meaning") come along in
frame.attrs["units"] and frame.attrs["meanings"]. stage_frame() adds each
stage's plan columns (model, cluster, gpus, kind, rank_k) for grouping.

From the shell:

    python3 jobs/catalog_frame.py catalog.h5 [--table plans] [--describe] [--csv]

pd.read_hdf cannot read these tables (it needs PyTables and PyTables' own
layout); this module is the documented way.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import system_python  # noqa: E402

TABLES = ("plans", "stages", "validation/alltoallv")


def _modules():
    system_python.require(["h5py", "pandas", "numpy"], os.path.abspath(__file__))
    import h5py
    import numpy
    import pandas
    return h5py, numpy, pandas


def _text(value):
    return value.decode().rstrip("\0") if isinstance(value, bytes) else value


def open_catalog(path):
    """The catalog as an h5py File; SystemExit with one line when it is not a finished nestfast catalog."""
    h5py, _, _ = _modules()
    try:
        catalog = h5py.File(path, "r")
    except OSError as error:
        sys.exit(f"catalog_frame: {path}: cannot be opened as HDF5 ({error})")
    if _text(catalog.attrs.get("format", b"")) != "nestfast-catalog" or "plans" not in catalog:
        catalog.close()
        sys.exit(f"catalog_frame: {path}: not a finished nestfast catalog")
    return catalog


def frame_of(dataset):
    """A compound dataset as a DataFrame: one column per member, fixed strings decoded to str."""
    _, numpy, pandas = _modules()
    rows = dataset[()]
    columns = {}
    for name in rows.dtype.names:
        column = rows[name]
        if column.dtype.kind == "S":
            column = numpy.char.decode(numpy.char.rstrip(column, b"\0"), "utf-8")
        columns[name] = column
    frame = pandas.DataFrame(columns)
    frame.attrs["units"] = {name: _text(dataset.attrs.get(name + ".unit", b"")) for name in rows.dtype.names}
    frame.attrs["meanings"] = {name: _text(dataset.attrs.get(name + ".meaning", b"")) for name in rows.dtype.names}
    return frame


def read_table(path, table="plans"):
    """One table of the catalog at `path` as a DataFrame (see the module's doc)."""
    if table not in TABLES:
        sys.exit(f"catalog_frame: table '{table}' is not one of {', '.join(TABLES)}")
    with open_catalog(path) as catalog:
        if table not in catalog:
            _, _, pandas = _modules()
            return pandas.DataFrame()
        return frame_of(catalog[table])


def stage_frame(path):
    """/stages with the columns of each stage's plan (model, cluster, gpus, global_batch, kind, rank_k)."""
    stages = read_table(path, "stages")
    plans = read_table(path, "plans")
    keys = ["model", "cluster", "gpus", "global_batch", "kind", "rank_k"]
    joined = stages.join(plans[keys], on="plan_row")
    joined.attrs = stages.attrs
    return joined


def describe(frame):
    """The columns' units and meanings as a DataFrame."""
    _, _, pandas = _modules()
    return pandas.DataFrame({"unit": frame.attrs["units"], "meaning": frame.attrs["meanings"]})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("catalog", help="a nestfast catalog (.h5)")
    parser.add_argument("--table", default="plans", choices=TABLES)
    parser.add_argument("--describe", action="store_true", help="the columns' units and meanings instead of the rows")
    parser.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    args = parser.parse_args()
    _, _, pandas = _modules()
    frame = read_table(args.catalog, args.table)
    shown = describe(frame) if args.describe else frame
    if args.csv:
        shown.to_csv(sys.stdout)
    else:
        with pandas.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200,
                                   "display.max_colwidth", 100):
            print(shown)


if __name__ == "__main__":
    main()
