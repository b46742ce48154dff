// Standings: what `show`, `list`, the page and the daemon say about a ticket nobody is
// working, checked against the same policy the daemon plans with.

#include <board/app.hpp>

#include <catch2/catch.hpp>

using namespace board;
using StandingKind = app::Standing::Kind;

namespace {

Ticket ticket(std::string id, Status status) {
    Ticket t;
    t.id = std::move(id);
    t.title = "t";
    t.status = status;
    t.created_at = 1000;
    return t;
}

Catalog board_of(const std::vector<Ticket>& tickets) {
    std::vector<CatalogEntry> entries;
    for (const auto& t : tickets) entries.push_back(summarize(t));
    return Catalog(std::move(entries));
}

}  // namespace

TEST_CASE("a ticket that would enter a full column is held by its WIP limit, not the agent's") {
    Policy policy;
    policy.auto_planning = true;
    policy.wip[static_cast<std::size_t>(Status::planning)] = 2;
    const auto waiting = ticket("P-3", Status::ready);
    const auto catalog =
        board_of({ticket("P-1", Status::planning), ticket("P-2", Status::planning), waiting});
    const auto s = app::Standings(catalog, policy, 5000).of(waiting);
    CHECK(s.kind == StandingKind::wip_held);
    CHECK(s.turn == "wip 2/2");
    CHECK(s.why.find("waits for room in planning: it holds 2 of 2") != std::string::npos);

    // One planning ticket leaves: it is the agent's turn.
    const auto freed = board_of({ticket("P-1", Status::planning), waiting});
    const auto now = app::Standings(freed, policy, 5000).of(waiting);
    CHECK(now.kind == StandingKind::agent_next);
    CHECK(now.turn == "agent");
}

TEST_CASE("a ticket in a column whose agents are all busy waits for a slot there") {
    Policy policy;
    policy.wip[static_cast<std::size_t>(Status::implementing)] = 1;
    auto busy = ticket("P-1", Status::implementing);
    busy.run = Run{"0001", Status::implementing, 1000, {}};
    const auto idle = ticket("P-2", Status::implementing);
    const auto catalog = board_of({busy, idle});
    const app::Standings standings(catalog, policy, 5000);
    CHECK(standings.of(busy).kind == StandingKind::running);
    const auto s = standings.of(idle);
    CHECK(s.kind == StandingKind::wip_held);
    CHECK(s.turn == "wip 1/1");
    CHECK(s.why.find("a free implementing slot: 1 of 1 agents") != std::string::npos);
}

TEST_CASE("blocked names the blockers that are not done, and one not on the board") {
    auto t = ticket("P-3", Status::research);
    t.blocked_by = {"P-1", "P-2", "P-9"};
    auto done = ticket("P-2", Status::done);
    done.resolution = Resolution::completed;
    const auto catalog = board_of({ticket("P-1", Status::backlog), done, t});
    const auto s = app::Standings(catalog, Policy{}, 0).of(t);
    CHECK(s.kind == StandingKind::blocked);
    CHECK(s.blockers == std::vector<std::string>{"P-1", "P-9 (not on this board)"});
    CHECK(s.why.find("blocked by P-1, P-9") != std::string::npos);
}

TEST_CASE("with its auto flag off a ready ticket waits for a person to start planning") {
    Policy policy;
    policy.auto_planning = false;
    const auto t = ticket("P-1", Status::ready);
    const auto s = app::Standings(board_of({t}), policy, 0).of(t);
    CHECK(s.kind == StandingKind::manual);
    CHECK(s.why.find("auto.planning is off") != std::string::npos);
    CHECK(s.why.find("board start P-1") != std::string::npos);
}

TEST_CASE("after a failure the ticket backs off until a time, then it is the agent's turn") {
    Policy policy;
    policy.retry_backoff_ms = 10'000;
    auto t = ticket("P-1", Status::research);
    t.phase_attempts = 1;
    t.last_failure_at = 100'000;
    const auto catalog = board_of({t});
    const auto early = app::Standings(catalog, policy, 105'000).of(t);
    CHECK(early.kind == StandingKind::backing_off);
    CHECK(early.until == 110'000);
    CHECK(early.why.find("attempt 2 of 3") != std::string::npos);
    CHECK(app::standing_json(early).find("\"until\":\"1970-01-01T00:01:50") != std::string::npos);
    CHECK(app::Standings(catalog, policy, 110'000).of(t).kind == StandingKind::agent_next);
}

TEST_CASE("a read's standings change by time alone when the first backoff shown ends") {
    Policy policy;
    policy.retry_backoff_ms = 10'000;
    auto first = ticket("P-1", Status::research);
    first.phase_attempts = 1;
    first.last_failure_at = 100'000;  // backs off until 110'000
    auto second = ticket("P-2", Status::research);
    second.phase_attempts = 1;
    second.last_failure_at = 95'000;  // until 105'000
    auto ended = ticket("P-3", Status::research);
    ended.phase_attempts = 1;
    ended.last_failure_at = 10'000;  // long over
    auto catalog = std::make_shared<const Catalog>(board_of({first, second, ended}));
    app::Picked picked;
    picked.catalog = catalog;
    for (const auto& e : catalog->entries()) picked.entries.push_back(&e);
    picked.policy = policy;
    picked.now = 101'000;
    CHECK(app::standings_change_at(picked) == 105'000);
    picked.now = 106'000;  // the second's backoff is over: the first's is what changes next
    CHECK(app::standings_change_at(picked) == 110'000);
    picked.now = 110'000;
    CHECK_FALSE(app::standings_change_at(picked));
    // Only what the read shows counts, and without a policy no standing is written at all.
    picked.now = 101'000;
    picked.entries = {&catalog->entries()[0]};
    CHECK(app::standings_change_at(picked) == 110'000);
    picked.policy.reset();
    CHECK_FALSE(app::standings_change_at(picked));
}

TEST_CASE("awaiting, done and a ship owed are said from the ticket alone") {
    auto asking = ticket("P-1", Status::planning);
    asking.awaiting = Awaiting::approval;
    auto shipping = ticket("P-2", Status::done);
    shipping.ship_owed = true;
    shipping.branch = "board/P-2";
    auto cancelled = ticket("P-3", Status::done);
    cancelled.resolution = Resolution::wont_do;
    const Catalog none;
    const app::Standings standings(none, Policy{}, 0);
    CHECK(standings.of(asking).kind == StandingKind::awaiting);
    CHECK(standings.of(asking).turn == "approval");
    CHECK(standings.of(shipping).kind == StandingKind::shipping);
    CHECK(standings.of(shipping).why.find("board/P-2") != std::string::npos);
    CHECK(standings.of(cancelled).why == "done (cancelled)");
}
