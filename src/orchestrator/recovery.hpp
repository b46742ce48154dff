#pragma once
// Runs left in flight by a daemon that died (spec/agents.md: every step resumable). At start
// the daemon finds each ticket whose log says a run is in flight; this stops that run's agent
// if it still runs (its whole group) and reads what it saved.

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
/// phase runs again). `found`: processes_with_a_board_run(); `say` reports each agent stopped.
struct LeftoverRun {
    RunRecord record;
    bool ended = false;
};

LeftoverRun resolve_leftover_run(const RunContext& context,
                                 const std::string& id,
                                 const Run& run,
                                 const std::vector<AgentProcessFound>& found,
                                 const std::function<void(const std::string&)>& say);

/// Runs left in flight by a daemon that died, for each ticket of `known` with a run open on
/// its log: the agent is stopped if it still runs, then the run is finished from its saved
/// output when that ends with a signal, else recorded as interrupted (the phase runs again);
/// either way the draft it left is taken, so the ticket's file and its log agree.
void recover_runs(const RunContext& context,
                  KnownTickets& known,
                  OwnWrites& writes,
                  const std::function<void(const std::string&)>& say);

}  // namespace board::orchestrator
