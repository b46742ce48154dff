// The planner alone: which runs start, in what order, and when to look again.

#include "orchestrator/planner.hpp"

#include <catch2/catch.hpp>

#include <map>

using namespace board;
using namespace board::orchestrator;
using namespace std::chrono_literals;

namespace {

/// A board in memory and what the daemon holds against each ticket.
struct BoardInMemory {
    std::map<std::string, Ticket> tickets;
    std::map<std::string, TicketHold> holds;
    Catalog catalog;

    void add(const std::string& id, int priority, Status status = Status::backlog) {
        Ticket t;
        t.id = id;
        t.title = id;
        t.priority = priority;
        t.status = status;
        t.created_at = static_cast<UnixMillis>(tickets.size());
        tickets[id] = t;
    }

    PlanInput input(int max_parallel, Clock::time_point now, UnixMillis wall = 1'000'000) {
        std::vector<CatalogEntry> entries;
        for (const auto& [id, t] : tickets) entries.push_back(summarize(t));
        catalog = Catalog{std::move(entries)};
        PlanInput in;
        in.catalog = &catalog;
        in.max_parallel = max_parallel;
        in.now = now;
        in.wall = wall;
        in.hold = [this](const std::string& id) {
            TicketHold hold = holds[id];
            hold.ticket = &tickets.at(id);
            return hold;
        };
        return in;
    }
};

std::vector<std::string> ids(const Plan& plan) {
    std::vector<std::string> out;
    for (const auto& launch : plan.launches) out.push_back(launch.id);
    return out;
}

const Clock::time_point t0 = Clock::time_point{} + 1h;

}  // namespace

TEST_CASE("at most max_parallel runs start, the most urgent first", "[planner]") {
    BoardInMemory board;
    board.add("P-1", 2);
    board.add("P-2", 0);
    board.add("P-3", 1);
    const Plan plan = plan_runs(board.input(2, t0));
    CHECK(ids(plan) == std::vector<std::string>{"P-2", "P-3"});
    CHECK(plan.launches.front().start.phase == Status::research);
    CHECK_FALSE(plan.wake_at);

    auto busy = board.input(2, t0);
    busy.running = 1;
    CHECK(ids(plan_runs(busy)) == std::vector<std::string>{"P-2"});
    busy.running = 2;
    CHECK(plan_runs(busy).launches.empty());
    auto stopping = board.input(2, t0);
    stopping.stopping = true;
    CHECK(plan_runs(stopping).launches.empty());
}

TEST_CASE("a column's WIP limit counts the runs this plan starts", "[planner]") {
    BoardInMemory board;
    for (int i = 1; i <= 5; ++i) board.add("P-" + std::to_string(i), 2);
    auto input = board.input(5, t0);
    input.policy.wip[static_cast<std::size_t>(Status::research)] = 3;
    CHECK(plan_runs(input).launches.size() == 3);
}

TEST_CASE("a run whose start is not on the log yet counts against its column's WIP", "[planner]") {
    BoardInMemory board;
    for (int i = 1; i <= 4; ++i) board.add("P-" + std::to_string(i), 2);
    board.holds["P-1"].running = true;  // begun; the catalog still shows it in backlog
    auto input = board.input(4, t0);
    input.policy.wip[static_cast<std::size_t>(Status::research)] = 2;
    input.running = 1;
    CHECK(plan_runs(input).launches.size() == 2);  // without the starting run: one too many
    input.starting = {StartingRun{Status::backlog, Status::research}};
    CHECK(ids(plan_runs(input)) == std::vector<std::string>{"P-2"});
}

TEST_CASE("running tickets, and with once the ones that ran, are not started", "[planner]") {
    BoardInMemory board;
    board.add("P-1", 0);
    board.add("P-2", 1);
    board.holds["P-1"].running = true;
    board.holds["P-2"].ran_this_session = true;
    CHECK(ids(plan_runs(board.input(4, t0))) == std::vector<std::string>{"P-2"});
    auto once = board.input(4, t0);
    once.once = true;
    CHECK(plan_runs(once).launches.empty());
}

TEST_CASE("a debounce or a retry backoff holds a ticket and says when to look again", "[planner]") {
    BoardInMemory board;
    board.add("P-1", 0);
    board.add("P-2", 1, Status::research);
    board.add("P-3", 2);
    board.holds["P-1"].available_at = t0 + 400ms;  // a person just changed it
    Ticket& failed = board.tickets.at("P-2");
    failed.phase_attempts = 1;
    failed.last_failure_at = 1'000'000;  // the wall clock below: backoff from now
    auto input = board.input(4, t0, 1'000'000);
    input.policy.retry_backoff_ms = 10'000;
    const Plan plan = plan_runs(input);
    CHECK(ids(plan) == std::vector<std::string>{"P-3"});
    REQUIRE(plan.wake_at);
    CHECK(*plan.wake_at == t0 + 400ms);

    board.holds["P-1"].available_at = {};
    auto later = board.input(4, t0 + 1s, 1'001'000);
    later.policy.retry_backoff_ms = 10'000;
    const Plan next = plan_runs(later);
    CHECK(ids(next) == std::vector<std::string>{"P-1", "P-3"});
    REQUIRE(next.wake_at);
    CHECK(*next.wake_at == t0 + 1s + 9s);  // the backoff ends 10 s after the failure
}

TEST_CASE("scoped to an epic, only its children start", "[planner]") {
    BoardInMemory board;
    board.add("P-1", 2);
    board.tickets["P-1"].type = TicketType::epic;
    board.add("P-2", 0);  // standalone and more urgent: not this daemon's
    board.add("P-3", 2);
    board.tickets["P-3"].parent = "P-1";
    board.add("P-4", 1);
    board.tickets["P-4"].parent = "P-1";
    PlanInput in = board.input(4, t0);
    CHECK(ids(plan_runs(in)) == std::vector<std::string>{"P-2", "P-4", "P-3"});
    in.scope.epic = "P-1";
    CHECK(ids(plan_runs(in)) == std::vector<std::string>{"P-4", "P-3"});
}
