#pragma once
// Runs left in flight by a daemon that died (spec/agents.md: every step resumable). At start
// the daemon stops every process still working for a run of its board, then finds each
// ticket whose log says a run is in flight and reads what that run saved.

#include "orchestrator/known_tickets.hpp"
#include "orchestrator/own_writes.hpp"
#include "orchestrator/run_executor.hpp"
#include "orchestrator/run_folder.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace board::orchestrator {

/// What a run left: its draft and notes taken back as after any run, and its saved output
/// read. `ended` when that output ends with a signal (the record is then applied as the
/// run's outcome); else the caller records the run as interrupted, beside its artifact (the
/// phase runs again).
struct LeftoverRun {
    RunRecord record;
    bool ended = false;
};

LeftoverRun resolve_leftover_run(const RunContext& context, const std::string& id, const Run& run);

/// Stops each of `found` (processes_with_a_board_run()) that works for a run started on this
/// board (its files are in the ticket's `runs/`), with its group when that group leads its
/// session as an agent's does and is not the daemon's; `say` reports each. Called with
/// the board's lock held, before any launch: none of them can belong to a run that is going,
/// whatever the log says. A run can end on the log, and its daemon die, before the sweep
/// that stops what its agent left running (strays.hpp).
void stop_leftover_processes(const RunContext& context,
                             const std::vector<AgentProcessFound>& found,
                             const std::function<void(const std::string&)>& say);

/// What a daemon that died left: first the processes still running for the board's runs
/// (stop_leftover_processes); then, for each ticket of `known` with a run open on its log,
/// the run is finished from its saved output when that ends with a signal, else recorded as
/// interrupted (the phase runs again); either way the draft it left is taken, so the
/// ticket's file and its log agree. `say` reports each process stopped.
void recover_runs(const RunContext& context,
                  KnownTickets& known,
                  OwnWrites& writes,
                  const std::function<void(const std::string&)>& say);

}  // namespace board::orchestrator
