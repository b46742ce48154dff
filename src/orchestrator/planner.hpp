#pragma once
// The daemon's planner: which runs to start now. Pure: the board as the catalog holds it, the
// policy, what the daemon holds against each ticket and the clock go in; the runs to start,
// and when to look again, come out. No I/O, no clock of its own, so every decision of the
// daemon's loop can be tested without a process.

#include <board/catalog.hpp>
#include <board/next_action.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace board::orchestrator {

using Clock = std::chrono::steady_clock;

/// What the daemon holds against one ticket.
struct TicketHold {
    /// The ticket as the daemon keeps it (with its questions); null: not known (skipped).
    const Ticket* ticket = nullptr;
    bool running = false;           ///< a run of it is in flight
    bool ran_this_session = false;  ///< with `once`: it does not run again
    /// A person just changed it: nothing starts before this (the debounce).
    Clock::time_point available_at{};
};

/// A run the daemon has begun whose `run-started` is not on the log yet: the catalog still
/// shows its ticket where it was.
struct StartingRun {
    Status from = Status::backlog;  ///< the ticket's column before the run
    Status phase = Status::research;
};

struct PlanInput {
    const Catalog* catalog = nullptr;
    Policy policy;
    /// What the daemon holds against the ticket with this id.
    std::function<TicketHold(const std::string& id)> hold;
    int running = 0;  ///< runs in flight now (the starting ones included)
    std::vector<StartingRun> starting;
    int max_parallel = 1;  ///< runs in flight at most
    bool stopping = false;
    bool once = false;  ///< each ticket runs at most once this session
    NextFilter scope;   ///< `board-daemon EPIC`: only that epic's children run
    Clock::time_point now;
    UnixMillis wall = 0;  ///< the same instant on the wall clock (retry backoffs are wall times)
};

struct Launch {
    std::string id;
    StartRun start;
};

struct Plan {
    std::vector<Launch> launches;  ///< in `next` order, at most max_parallel - running
    /// When to plan again at the latest (a debounce or a retry backoff ends); none: only when
    /// something changes.
    std::optional<Clock::time_point> wake_at;
};

/// The runs to start now, in `next` order (the catalog's §7 queries). WIP limits count the
/// starting runs and the runs this plan starts as it goes, as next_action() would see them
/// once they have started.
Plan plan_runs(const PlanInput& input);

}  // namespace board::orchestrator
