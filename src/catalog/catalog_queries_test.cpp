// Tests the catalog's §7 queries over tickets in memory: next, lists, epics, validation, replace.

#include "catalog/catalog_test_support.hpp"

#include <board/catalog.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace board;
using namespace board::catalog_test;

namespace {

Catalog catalog_of(std::vector<Ticket> tickets) {
    std::vector<CatalogEntry> entries;
    for (const auto& t : tickets) entries.push_back(summarize(t));
    return Catalog{std::move(entries)};
}

std::vector<std::string> ids(const std::vector<const CatalogEntry*>& entries) {
    std::vector<std::string> out;
    for (const auto* e : entries) out.push_back(e->ticket.id);
    return out;
}

}  // namespace

TEST_CASE("next order: priority, then epic momentum, other epics, standalone, orphans",
          "[catalog][order]") {
    Ticket busy_epic = make("P-1");
    busy_epic.type = TicketType::epic;
    Ticket quiet_epic = make("P-2");
    quiet_epic.type = TicketType::epic;
    Ticket done_epic = make("P-3");
    done_epic.type = TicketType::epic;
    done_epic.status = Status::done;
    done_epic.resolution = Resolution::wont_do;

    Ticket in_flight = make("P-10", 2, 1);  // gives P-1 its momentum
    in_flight.parent = "P-1";
    in_flight.status = Status::research;
    in_flight.run = running(Status::research);
    Ticket momentum = make("P-11", 2, 50);
    momentum.parent = "P-1";
    Ticket other_epic = make("P-12", 2, 10);
    other_epic.parent = "P-2";
    Ticket standalone = make("P-13", 2, 5);
    Ticket orphan = make("P-14", 2, 1);
    orphan.parent = "P-3";
    Ticket urgent_orphan = make("P-15", 0, 99);
    urgent_orphan.parent = "P-3";

    const auto catalog = catalog_of({busy_epic,
                                     quiet_epic,
                                     done_epic,
                                     in_flight,
                                     momentum,
                                     other_epic,
                                     standalone,
                                     orphan,
                                     urgent_orphan});
    CHECK(ids(catalog.ready(Policy{}, {})) ==
          std::vector<std::string>{"P-15", "P-11", "P-12", "P-13", "P-14"});
    REQUIRE(catalog.next_for_agent(Policy{}, {}) != nullptr);
    CHECK(catalog.next_for_agent(Policy{}, {})->ticket.id == "P-15");

    NextFilter only_epic;
    only_epic.epic = "P-2";
    CHECK(ids(catalog.ready(Policy{}, only_epic)) == std::vector<std::string>{"P-12"});
    NextFilter standalone_only;
    standalone_only.standalone = true;
    CHECK(ids(catalog.ready(Policy{}, standalone_only)) == std::vector<std::string>{"P-13"});
    NextFilter orphans;
    orphans.orphan = true;
    CHECK(ids(catalog.ready(Policy{}, orphans)) == std::vector<std::string>{"P-15", "P-14"});
}

TEST_CASE("the agent never gets done, awaiting, running, blocked, epic or disallowed work",
          "[catalog][next]") {
    Ticket done = make("P-1");
    done.status = Status::done;
    Ticket awaiting = make("P-2");
    awaiting.status = Status::review;
    awaiting.awaiting = Awaiting::review;
    Ticket running_one = make("P-3");
    running_one.status = Status::implementing;
    running_one.run = running(Status::implementing);
    Ticket blocked = make("P-4");
    blocked.blocked_by = {"P-5"};
    Ticket blocker = make("P-5", 3);
    Ticket epic = make("P-6", 0);
    epic.type = TicketType::epic;
    Ticket ready_column = make("P-7", 0);  // auto.planning is off by default
    ready_column.status = Status::ready;
    Ticket unknown_blocker = make("P-8", 0);
    unknown_blocker.blocked_by = {"P-99"};
    const auto catalog = catalog_of(
        {done, awaiting, running_one, blocked, blocker, epic, ready_column, unknown_blocker});
    CHECK(ids(catalog.ready(Policy{}, {})) == std::vector<std::string>{"P-5"});

    Policy planning_on;
    planning_on.auto_planning = true;
    CHECK(ids(catalog.ready(planning_on, {})) == std::vector<std::string>{"P-7", "P-5"});

    SECTION("a done blocker releases the ticket") {
        blocker.status = Status::done;
        const auto released = catalog_of({blocked, blocker});
        CHECK(ids(released.ready(Policy{}, {})) == std::vector<std::string>{"P-4"});
    }
    SECTION("WIP: research holds 3 by default; a fourth backlog ticket waits") {
        std::vector<Ticket> tickets;
        for (int i = 1; i <= 3; ++i) {
            Ticket t = make("W-" + std::to_string(i));
            t.status = Status::research;
            t.run = running(Status::research);
            tickets.push_back(t);
        }
        tickets.push_back(make("W-4"));
        CHECK(catalog_of(tickets).ready(Policy{}, {}).empty());
    }
}

TEST_CASE("the human side: any status, optionally of some awaiting types, same order",
          "[catalog][next][human]") {
    Ticket review = make("P-1", 2, 5);
    review.status = Status::review;
    review.awaiting = Awaiting::review;
    Ticket input = make("P-2", 1, 9);
    input.status = Status::implementing;  // handed off mid-phase: tk's `next` missed these
    input.awaiting = Awaiting::input;
    Ticket work = make("P-3", 3);
    work.awaiting = Awaiting::work;
    Ticket agent_turn = make("P-4", 0);
    const auto catalog = catalog_of({review, input, work, agent_turn});

    REQUIRE(catalog.next_for_human({}, {}) != nullptr);
    CHECK(catalog.next_for_human({}, {})->ticket.id == "P-2");
    const std::vector<Awaiting> review_only{Awaiting::review, Awaiting::work};
    CHECK(catalog.next_for_human(review_only, {})->ticket.id == "P-1");
    CHECK(ids(catalog.awaiting_human({}, {})) == std::vector<std::string>{"P-2", "P-1", "P-3"});
    const std::vector<Awaiting> escalations{Awaiting::escalation};
    CHECK(catalog.next_for_human(escalations, {}) == nullptr);
}

TEST_CASE("list filters, and done tickets only when asked for", "[catalog][list]") {
    Ticket epic = make("P-1");
    epic.type = TicketType::epic;
    Ticket child = make("P-2");
    child.parent = "P-1";
    child.labels = {"backend", "api"};
    Ticket done_child = make("P-3");
    done_child.parent = "P-1";
    done_child.status = Status::done;
    Ticket waiting = make("P-4");
    waiting.awaiting = Awaiting::approval;
    waiting.labels = {"backend"};
    const auto catalog = catalog_of({epic, child, done_child, waiting});

    CHECK(ids(catalog.list({})) == std::vector<std::string>{"P-2", "P-1", "P-4"});
    ListFilter all;
    all.all = true;
    CHECK(catalog.list(all).size() == 4);
    ListFilter done;
    done.statuses = {Status::done};
    CHECK(ids(catalog.list(done)) == std::vector<std::string>{"P-3"});
    ListFilter children;
    children.parent = "P-1";
    CHECK(ids(catalog.list(children)) == std::vector<std::string>{"P-2"});
    ListFilter standalone;
    standalone.standalone = true;
    CHECK(ids(catalog.list(standalone)) == std::vector<std::string>{"P-1", "P-4"});
    ListFilter awaiting;
    awaiting.awaiting_any = true;
    CHECK(ids(catalog.list(awaiting)) == std::vector<std::string>{"P-4"});
    awaiting.awaiting = {Awaiting::input};
    CHECK(catalog.list(awaiting).empty());
    ListFilter labelled;
    labelled.labels = {"backend", "api"};
    CHECK(ids(catalog.list(labelled)) == std::vector<std::string>{"P-2"});
}

TEST_CASE("an epic is done when all its children are, derived not stored", "[catalog][epic]") {
    const Ticket epic = make_epic("P-1");
    const Ticket a = child_of("P-1", "P-2", Status::done);
    Ticket b = child_of("P-1", "P-3");

    const auto open = catalog_of({epic, a, b});
    CHECK(open.epic_progress("P-1").children == 2);
    CHECK(open.epic_progress("P-1").done == 1);
    CHECK_FALSE(open.epic_progress("P-1").complete);
    CHECK(open.shown_status(open.find("P-1")->ticket) == Status::backlog);

    b.status = Status::done;
    const auto complete = catalog_of({epic, a, b});
    CHECK(complete.epic_progress("P-1").complete);
    CHECK(complete.shown_status(complete.find("P-1")->ticket) == Status::done);
    CHECK(complete.list({}).empty());

    const auto childless = catalog_of({epic});
    CHECK_FALSE(childless.epic_progress("P-1").complete);
}

TEST_CASE("a catalog built from tickets out of id order answers as one built in order",
          "[catalog][order]") {
    const Ticket epic = make_epic("P-10");
    const Ticket done_child = child_of("P-10", "P-2", Status::done);
    Ticket busy_child = child_of("P-10", "P-30", Status::research);
    busy_child.run = running(Status::research);
    Ticket blocked = make("P-4");
    blocked.blocked_by = {"P-30"};

    const auto in_order = catalog_of({done_child, blocked, epic, busy_child});
    const auto shuffled = catalog_of({busy_child, epic, done_child, blocked});
    const std::vector<std::string> expected{"P-2", "P-4", "P-10", "P-30"};
    std::vector<std::string> shuffled_ids;
    for (const auto& e : shuffled.entries()) shuffled_ids.push_back(e.ticket.id);
    CHECK(shuffled_ids == expected);
    for (const auto& id : expected) {
        REQUIRE(shuffled.find(id) != nullptr);
        CHECK(shuffled.find(id)->ticket.id == id);
    }
    CHECK(shuffled.find("P-3") == nullptr);
    CHECK(shuffled.epic_progress("P-10").children == 2);
    CHECK(shuffled.epic_progress("P-10").done == 1);
    CHECK(shuffled.epic_state(busy_child) == EpicState::in_flight);
    CHECK_FALSE(shuffled.blockers_done(blocked));
    CHECK(ids(shuffled.list({})) == ids(in_order.list({})));
}

TEST_CASE("blocked_by and parent are validated against the board", "[catalog][validate]") {
    Ticket a = make("P-1");
    Ticket b = make("P-2");
    b.blocked_by = {"P-1"};
    Ticket c = make("P-3");
    c.blocked_by = {"P-2"};
    Ticket epic = make("P-4");
    epic.type = TicketType::epic;
    const auto catalog = catalog_of({a, b, c, epic});

    const std::vector<std::string> fine{"P-3"};
    CHECK_FALSE(catalog.blocked_by_error("P-5", fine).has_value());
    const std::vector<std::string> unknown{"P-9"};
    CHECK(catalog.blocked_by_error("P-1", unknown).value() ==
          "blocked_by: no ticket P-9 on this board");
    const std::vector<std::string> self{"P-1"};
    CHECK_THAT(catalog.blocked_by_error("P-1", self).value(),
               Catch::Contains("cannot block itself"));
    const std::vector<std::string> malformed{"p-1"};
    CHECK_THAT(catalog.blocked_by_error("P-1", malformed).value(),
               Catch::Contains("is not a ticket id"));
    const std::vector<std::string> cycle{"P-3"};
    CHECK(catalog.blocked_by_error("P-1", cycle).value() ==
          "blocked_by: P-1 → P-3 → P-2 → P-1 would be a cycle (each waits for the next)");

    CHECK_FALSE(catalog.parent_error("P-1", "P-4").has_value());
    CHECK_FALSE(catalog.parent_error("P-1", "").has_value());
    CHECK(catalog.parent_error("P-1", "P-2").value() == "parent: P-2 is a task, not an epic");
    CHECK(catalog.parent_error("P-1", "P-8").value() == "parent: no ticket P-8 on this board");
    CHECK_THAT(catalog.parent_error("P-4", "P-4").value(), Catch::Contains("its own parent"));

    // Epics in epics: P-6 is inside P-5, which is inside P-4.
    Ticket outer = epic;
    Ticket middle = make("P-5");
    middle.type = TicketType::epic;
    middle.parent = "P-4";
    Ticket inner = make("P-6");
    inner.type = TicketType::epic;
    inner.parent = "P-5";
    const auto nested = catalog_of({outer, middle, inner});
    CHECK_FALSE(nested.parent_error("P-6", "P-4").has_value());
    CHECK(nested.parent_error("P-4", "P-6").value() ==
          "parent: P-4 → P-6 → P-5 → P-4 would be a cycle (each inside the next)");
    CHECK(nested.parent_error("P-4", "P-5").value() ==
          "parent: P-4 → P-5 → P-4 would be a cycle (each inside the next)");
}

TEST_CASE("replace: a catalog that follows changes answers as one built afresh",
          "[catalog][replace]") {
    Ticket epic = make("P-1");
    epic.type = TicketType::epic;
    Ticket child = make("P-2", 2, 1);
    child.parent = "P-1";
    Ticket sibling = make("P-3", 2, 2);
    sibling.parent = "P-1";
    sibling.status = Status::done;
    sibling.resolution = Resolution::completed;
    Ticket standalone = make("P-4", 1, 3);
    // A long id: its string is on the heap, so a stale view of it would dangle (ASan).
    Ticket long_id = make("P-1000000000000000000000000000000", 3, 4);
    std::vector<Ticket> board{epic, child, sibling, standalone, long_id};
    Catalog followed = catalog_of(board);
    REQUIRE(followed.ready(Policy{}, {}).size() == 3);

    // The child runs, then finishes: the epic is done; the standalone ticket is cancelled.
    child.status = Status::research;
    child.run = running(Status::research);
    REQUIRE(followed.replace(summarize(child)));
    CHECK(followed.epic_state(sibling) == EpicState::in_flight);
    child.run.reset();
    child.status = Status::done;
    child.resolution = Resolution::completed;
    standalone.status = Status::done;
    standalone.resolution = Resolution::wont_do;
    long_id.priority = 0;
    for (const Ticket& t : {child, standalone, long_id}) REQUIRE(followed.replace(summarize(t)));
    CHECK_FALSE(followed.replace(summarize(make("P-9"))));  // not on the board: build anew

    const Catalog fresh = catalog_of({epic, child, sibling, standalone, long_id});
    CHECK(ids(followed.ready(Policy{}, {})) == ids(fresh.ready(Policy{}, {})));
    ListFilter everything;
    everything.all = true;
    CHECK(ids(followed.list(everything)) == ids(fresh.list(everything)));
    CHECK(followed.epic_progress("P-1").complete);
    CHECK(followed.epic_progress("P-1").done == 2);
    CHECK(followed.find(long_id.id) != nullptr);
    CHECK(followed.find(long_id.id)->ticket.priority == 0);
    CHECK(followed.entries() == fresh.entries());
}

namespace {

/// `steps` random changes to a board of `tickets` tickets (Q-1..Q-3 epics at first), each put
/// in place with replace(); after each, every query of the followed catalog must answer as a
/// catalog built afresh. The changes move tickets between columns (to done with
/// `done_share` in 100), runs, parents (an epic, a task, itself, none, one not on the board)
/// and kinds, and close and reopen epics.
void follow_random_changes(unsigned seed, int tickets, int steps, std::size_t done_share) {
    std::mt19937 random{seed};
    const auto pick = [&](std::size_t n) { return std::size_t{random()} % n; };
    const std::vector<std::string> parents{"", "Q-1", "Q-2", "Q-3", "Q-4", "Q-99"};
    const auto changed = [&](Ticket t) {
        switch (pick(5)) {
            case 0:
                t.status =
                    pick(100) < done_share ? Status::done : all_statuses[pick(all_statuses.size())];
                break;
            case 1:
                if (t.run)
                    t.run.reset();
                else
                    t.run = running(all_statuses[1 + pick(4)]);
                break;
            case 2:
                t.parent = parents[pick(parents.size())];
                break;
            case 3:
                t.type = pick(4) == 0 ? TicketType::epic : TicketType::task;
                break;
            default:
                t.priority = static_cast<int>(pick(4));
                break;
        }
        return t;
    };
    std::vector<Ticket> board;
    for (int i = 1; i <= 3; ++i) board.push_back(make_epic("Q-" + std::to_string(i)));
    for (int i = 4; i <= tickets; ++i) {
        Ticket t = make("Q-" + std::to_string(i), static_cast<int>(pick(4)), i);
        t.parent = parents[pick(parents.size())];
        board.push_back(t);
    }
    Catalog followed = catalog_of(board);
    ListFilter everything;
    everything.all = true;
    for (int step = 0; step < steps; ++step) {
        Ticket& t = board[pick(board.size())];
        t = changed(t);
        REQUIRE(followed.replace(summarize(t)));
        const Catalog fresh = catalog_of(board);
        INFO("seed " << seed << ", step " << step << ", " << t.id << " changed");
        REQUIRE(followed.column_facts().in_status == fresh.column_facts().in_status);
        REQUIRE(followed.column_facts().runs_in_status == fresh.column_facts().runs_in_status);
        for (const Ticket& each : board) {
            INFO(each.id);
            const EpicProgress a = followed.epic_progress(each.id);
            const EpicProgress b = fresh.epic_progress(each.id);
            REQUIRE(a.children == b.children);
            REQUIRE(a.done == b.done);
            REQUIRE(a.complete == b.complete);
            REQUIRE(followed.epic_state(each) == fresh.epic_state(each));
            REQUIRE(followed.shown_status(each) == fresh.shown_status(each));
        }
        REQUIRE(followed.epic_progress("Q-99").children == fresh.epic_progress("Q-99").children);
        const auto ready = ids(fresh.ready(Policy{}, {}));
        REQUIRE(ids(followed.ready(Policy{}, {})) == ready);
        REQUIRE(ids(followed.list(everything)) == ids(fresh.list(everything)));
        // One at a time, as the daemon's planner takes them: the same order, and no further
        // than asked (take returns false after the first when `wanted` is 0 or 1).
        std::vector<std::string> taken;
        const std::size_t wanted = pick(4);
        followed.take_ready(Policy{}, {}, [&](const CatalogEntry& e) {
            taken.push_back(e.ticket.id);
            return taken.size() < wanted;
        });
        const auto expected = static_cast<long>(std::min(ready.size(), std::max(wanted, 1UL)));
        REQUIRE(taken == std::vector<std::string>(ready.begin(), ready.begin() + expected));
        const CatalogEntry* next = followed.next_for_agent(Policy{}, {});
        REQUIRE((next ? next->ticket.id : "") == (ready.empty() ? "" : ready.front()));
    }
}

}  // namespace

TEST_CASE("replace: after any sequence of changes, every query answers as a catalog built afresh",
          "[catalog][replace]") {
    // Seeded, so a failure is repeatable. A board of 30 for long runs of changes; many small
    // boards, where an epic loses all its children or sees them all done.
    follow_random_changes(20261127, 30, 2000, 0);
    for (unsigned seed = 1; seed <= 200; ++seed) follow_random_changes(seed, 7, 60, 50);
}

TEST_CASE("a catalog moved from is empty", "[catalog]") {
    Catalog from = catalog_of({make_epic("P-1"), child_of("P-1", "P-2", Status::research)});
    const Catalog to = std::move(from);
    CHECK(to.entries().size() == 2);
    CHECK(to.column_facts().in_status[static_cast<std::size_t>(Status::research)] == 1);
    CHECK(to.epic_progress("P-1").children == 1);
    // NOLINTNEXTLINE(bugprone-use-after-move): what is left is the point
    CHECK(from.entries().empty());
    CHECK(from.column_facts().in_status[static_cast<std::size_t>(Status::research)] == 0);
    CHECK(from.epic_progress("P-1").children == 0);
}
