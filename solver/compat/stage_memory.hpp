#pragma once
// The NEST artifact's memory rule for one pipeline stage, shared by both cost
// models (nest/Solver/device_placement/device_placement.cpp at 3e163ad, lines
// 1533-1572): the stage needs 2P + O + A + (s-1) * stash bytes when s
// micro-batches are in flight (PipeDream-Flush: a stage with s stages from it
// to the pipeline's end, itself included, holds s), O = 6P for Adam (fp32
// moments and master weights, 12 bytes per 2-byte parameter) and 0 for SGD,
// stash = the bytes of the edges from earlier stages with recomputation and
// A without.
#include "solver/compat/nest_problem.hpp"

namespace nestfast::compat {

// The most micro-batches in flight that fit (the artifact's
// max_s_memory_feasible): 0 when even one does not, maxDevices when any
// number does. Computed in double in the artifact's order of operations.
int max_in_flight(const NestProblem& problem, double parameter_bytes, double activation_bytes, double stash_bytes);

}  // namespace nestfast::compat
