"""Damages a copy of a catalog the way a disk, a transfer or an editor does (h5py).

damage.py IN OUT offset-past-stages   /plans row 0's stage_offset = 2^64-1
damage.py IN OUT huge-plans           /plans resized to 2^34 rows (never written)
damage.py IN OUT flip-plans           one byte of /plans' first stored chunk flipped
damage.py IN OUT flip SEED            one byte anywhere in the file flipped (position from SEED)
damage.py IN OUT drop-clusters        the /clusters group deleted
damage.py IN OUT edit TABLE MEMBER VALUE
                                      MEMBER of the first feasible plan's row (or that plan's first
                                      stage's) set to VALUE (nan, -1, inf, 0, a text, or +N: N added
                                      to the integer stored) through HDF5, so every checksum still
                                      holds; prints the row and the value stored
damage.py IN OUT extra-stage          a copy of the last /stages row appended (a stage of no plan);
                                      prints its row and plan_row
"""
import random
import shutil
import sys

import h5py

source, target, how = sys.argv[1:4]
shutil.copyfile(source, target)
if how == "offset-past-stages":
    with h5py.File(target, "r+") as f:
        row = f["plans"][0]
        row["stage_offset"] = 2**64 - 1
        f["plans"][0] = row
elif how == "huge-plans":
    # The table written again with 2^34 rows of which only the first are stored
    # (chunks allocated late; resizing the original would allocate them all).
    with h5py.File(target, "r+") as f:
        rows = f["plans"][...]
        del f["plans"]
        table = f.create_dataset("plans", shape=(2**34,), maxshape=(None,), chunks=(12,), dtype=rows.dtype)
        table[: len(rows)] = rows
elif how == "flip-plans":
    with h5py.File(target, "r") as f:
        chunk = f["plans"].id.get_chunk_info(0)
        offset = chunk.byte_offset + chunk.size // 2
    with open(target, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ 0x5A]))
elif how == "flip":
    data = bytearray(open(target, "rb").read())
    rng = random.Random(int(sys.argv[4]))
    position = rng.randrange(len(data))
    data[position] ^= 1 << rng.randrange(8)
    open(target, "wb").write(data)
    print(position)
elif how == "drop-clusters":
    with h5py.File(target, "r+") as f:
        del f["clusters"]
elif how == "edit":
    table, member, text = sys.argv[4:7]
    with h5py.File(target, "r+") as f:
        plan = next(i for i, row in enumerate(f["plans"]) if row["feasible"] == 1)
        index = plan if table == "plans" else int(f["plans"][plan]["stage_offset"])
        row = f[table][index]
        kind = row.dtype[member].kind
        if text.startswith("+"):
            row[member] = int(row[member]) + int(text[1:])
        else:
            row[member] = text.encode() if kind == "S" else (float(text) if kind == "f" else int(text))
        f[table][index] = row
        print(index, row[member].decode() if kind == "S" else row[member])
elif how == "extra-stage":
    with h5py.File(target, "r+") as f:
        stages = f["stages"]
        last = stages[len(stages) - 1]
        stages.resize((len(stages) + 1,))
        stages[len(stages) - 1] = last
        print(len(stages) - 1, last["plan_row"])
else:
    sys.exit("damage.py: unknown damage " + how)
