#!/usr/bin/env python3
"""DeepSpeed's pipeline TrainSchedule as a dataflow, against the 1F1B time.

Why: Megatron-DeepSpeed runs (MT-NLG 530B, calibration) are priced 22-28%
too fast, and DeepSpeed's pipeline engine is the obvious suspect. This
checks whether its schedule, with p2p that blocks, costs more than the
(m + p - 1)(F + B) that nestfast prices for 1F1B.

The schedule is DeepSpeed's TrainSchedule.steps (deepspeed/runtime/pipe/
schedule.py at 38327e07f): 2(m + p - 1) steps; on each, a stage runs the
forward of one micro-batch or the backward of another, alternating by the
parity of step and stage, with its sends and receives at the start of the
step. The p2p order inside a step changed in b528f50e3 (2023-03); before it
(the order of MT-NLG's 2021 and BLOOM's 2022 runs) a forward step received
first and a backward step sent first. Every stage runs its commands in
order on one stream (p2p.send / p2p.recv without async_op block the
stream, deepspeed/runtime/pipe/p2p.py:46-84); a send and its receive start
when both stages have reached them and take T.

    tests/bench/pipeline/deepspeed_train_schedule.py P M F B T
prints the simulated time of both orders and the 1F1B time, in the unit
of F, B and T.
"""
import sys


def train_schedule(stages, micro_batches, stage, order_2023):
    """One stage's commands: (op, micro-batch) with op F, B, send_act, recv_act, send_grad, recv_grad."""
    def step_micro_batch(step):
        even_step, even_stage = step % 2 == 0, stage % 2 == 0
        if even_step and even_stage:
            return step // 2 - stage // 2, True
        if not even_step and not even_stage:
            return (step - 1) // 2 - stage // 2, True
        if even_step:
            return step // 2 - stages + (stage + 1) // 2, False
        return (step - 1) // 2 - stages + 1 + stage // 2, False

    def valid(j):
        return 0 <= j < micro_batches

    commands, previous = [], -1
    for step in range(2 * (micro_batches + stages - 1)):
        current, forward = step_micro_batch(step)
        if forward and stage > 0:
            exchange = [("send_grad", previous, valid(previous)), ("recv_act", current, valid(current))]
        elif not forward and stage < stages - 1:
            exchange = [("recv_grad", current, valid(current)), ("send_act", previous, valid(previous))]
        else:
            exchange = []
        if not order_2023:
            exchange.reverse()
        commands += [(op, j) for op, j, ok in exchange if ok]
        if valid(current):
            commands.append(("F" if forward else "B", current))
        previous = current
    return commands


PARTNER = {"send_act": (1, "recv_act"), "recv_act": (-1, "send_act"),
           "send_grad": (-1, "recv_grad"), "recv_grad": (1, "send_grad")}


def simulate(commands, forward, backward, transfer):
    """Makespan of the stages' command lists, or SystemExit on a deadlock."""
    stages = len(commands)
    next_op, clock = [0] * stages, [0.0] * stages
    left = sum(len(c) for c in commands)
    while left > 0:
        progressed = False
        for s in range(stages):
            while next_op[s] < len(commands[s]):
                op, j = commands[s][next_op[s]]
                if op in ("F", "B"):
                    clock[s] += forward if op == "F" else backward
                    next_op[s] += 1
                    left -= 1
                    progressed = True
                    continue
                step, match = PARTNER[op]
                peer = s + step
                if next_op[peer] >= len(commands[peer]) or commands[peer][next_op[peer]] != (match, j):
                    break
                clock[s] = clock[peer] = max(clock[s], clock[peer]) + transfer
                next_op[s] += 1
                next_op[peer] += 1
                left -= 2
                progressed = True
        if not progressed:
            raise SystemExit(f"deadlock with the stages at commands {next_op}")
    return max(clock)


def main():
    if len(sys.argv) != 6:
        raise SystemExit("usage: deepspeed_train_schedule.py STAGES MICRO-BATCHES F B T")
    stages, micro_batches = int(sys.argv[1]), int(sys.argv[2])
    forward, backward, transfer = (float(x) for x in sys.argv[3:6])
    if stages < 2 or micro_batches < 1 or min(forward, backward, transfer) < 0:
        raise SystemExit("P >= 2, M >= 1 and F, B, T >= 0")
    one_f_one_b = (micro_batches + stages - 1) * (forward + backward)
    for order_2023, name in [(False, "2020-2023 order"), (True, "2023 order")]:
        commands = [train_schedule(stages, micro_batches, s, order_2023) for s in range(stages)]
        time = simulate(commands, forward, backward, transfer)
        print(f"{name}: {time:.2f} ({time / one_f_one_b:.4f} x the 1F1B time {one_f_one_b:.2f})")


if __name__ == "__main__":
    main()
