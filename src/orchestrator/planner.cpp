#include "orchestrator/planner.hpp"

#include <algorithm>
#include <array>

namespace board::orchestrator {

Plan plan_runs(const PlanInput& input) {
    Plan plan;
    const auto wake_no_later = [&](Clock::time_point t) {
        plan.wake_at = plan.wake_at ? std::min(*plan.wake_at, t) : t;
    };
    int free = input.stopping ? 0 : input.max_parallel - input.running;
    if (free <= 0 || !input.catalog) return plan;  // the end of a run plans again
    // What this plan's launches change: next_action sees WIP as it will be.
    std::array<int, all_statuses.size()> entered{};
    std::array<int, all_statuses.size()> started{};
    const auto count_start = [&](Status from, Status phase) {
        if (phase != from) {
            --entered[static_cast<std::size_t>(from)];
            ++entered[static_cast<std::size_t>(phase)];
        }
        ++started[static_cast<std::size_t>(phase)];
    };
    for (const StartingRun& run : input.starting) count_start(run.from, run.phase);
    input.catalog->take_ready(input.policy, input.scope, [&](const CatalogEntry& candidate) {
        const std::string& id = candidate.ticket.id;
        const TicketHold hold = input.hold(id);
        if (!hold.ticket || hold.running) return true;
        if (input.once && hold.ran_this_session) return true;
        if (hold.available_at > input.now) {
            wake_no_later(hold.available_at);
            return true;
        }
        BoardFacts facts = input.catalog->facts_for(candidate.ticket);
        for (std::size_t i = 0; i < all_statuses.size(); ++i) {
            facts.in_status[i] += entered[i];
            facts.runs_in_status[i] += started[i];
        }
        const auto action = next_action(*hold.ticket, input.policy, facts);
        const auto* start = std::get_if<StartRun>(&action);
        if (!start) return true;
        if (start->not_before > input.wall) {
            wake_no_later(input.now + std::chrono::milliseconds{start->not_before - input.wall});
            return true;
        }
        if (free == 0) return false;
        count_start(hold.ticket->status, start->phase);
        plan.launches.push_back(Launch{id, *start});
        --free;
        return true;
    });
    return plan;
}

}  // namespace board::orchestrator
