// Shipping (board.yaml `ship:`): a ticket whose implementing work is on a branch owes its
// shipping once a person approves it done; only the board records how it went.

#include "reducer/testing.hpp"

#include <board/next_action.hpp>
#include <board/reduce.hpp>

#include <catch2/catch.hpp>

using namespace board;
using namespace board::testing;

namespace {

/// PROJ-1 implemented in its worktree, the review-prep agent done: awaiting the review.
Log reviewed_on_a_branch() {
    Log log{ticket_in(Status::implementing)};
    log.must(RunStarted{"r1", Status::implementing, 1, 1, {}, "board/PROJ-1"}, system_actor());
    log.must(complete_artifact(Status::implementing), agent(Status::implementing));
    RunFinished done = signalled(Signal::complete);
    done.run = "r1";
    log.must(done, system_actor());
    log.run(Status::review, signalled(Signal::complete), {}, complete_artifact(Status::review));
    REQUIRE(log.ticket().awaiting == Awaiting::review);
    return log;
}

}  // namespace

TEST_CASE("an approved ticket with a branch owes its shipping, which the board records",
          "[reducer][ship]") {
    Log log = reviewed_on_a_branch();
    CHECK(log.ticket().branch == "board/PROJ-1");
    CHECK_FALSE(log.ticket().ship_owed);

    const Ticket& done = log.must(VerdictGiven{Verdict::approved, "ship it"});
    CHECK(done.status == Status::done);
    CHECK(done.ship_owed);
    CHECK(next_action(done, Policy{}) == Action{Ship{"board/PROJ-1"}});

    // Only the board says it shipped, and only the ticket's own branch.
    log.refused(
        Shipped{ShipMethod::merge, "board/PROJ-1", "abc"}, human(), RejectReason::not_human);
    log.refused(Shipped{ShipMethod::merge, "board/PROJ-1", "abc"},
                agent(Status::review),
                RejectReason::not_human);
    log.refused(Shipped{ShipMethod::merge, "board/PROJ-2", "abc"},
                system_actor(),
                RejectReason::invalid_field);

    const Ticket& shipped =
        log.must(Shipped{ShipMethod::merge, "board/PROJ-1", "abc"}, system_actor());
    CHECK_FALSE(shipped.ship_owed);
    REQUIRE(shipped.shipped);
    CHECK(shipped.shipped->how == ShipMethod::merge);
    CHECK(shipped.shipped->ref == "abc");
    CHECK(next_action(shipped, Policy{}) == Action{Idle{IdleReason::done}});
    // Shipped once: a second record has nothing to record.
    log.refused(Shipped{ShipMethod::merge, "board/PROJ-1", "abc"},
                system_actor(),
                RejectReason::nothing_to_do);
}

TEST_CASE("a failed shipping sends the ticket back to a person with the reason",
          "[reducer][ship]") {
    Log log = reviewed_on_a_branch();
    log.must(VerdictGiven{Verdict::approved, {}});
    const Ticket& back =
        log.must(ShipFailed{"board/PROJ-1", "merge conflict in src/a.cpp"}, system_actor());
    CHECK(back.status == Status::review);
    CHECK(back.awaiting == Awaiting::work);
    CHECK(back.handoff == Handoff::system);
    CHECK_FALSE(back.resolution);
    CHECK_FALSE(back.ship_owed);
    REQUIRE_FALSE(back.notes.empty());
    CHECK(back.notes.back().text == "shipping board/PROJ-1 failed: merge conflict in src/a.cpp");
    CHECK(next_action(back, Policy{}) == Action{AwaitHuman{Awaiting::work}});

    // The person puts it right and says it is done: it owes its shipping again.
    const Ticket& again = log.must(VerdictGiven{Verdict::approved, "resolved by hand"});
    CHECK(again.status == Status::done);
    CHECK(again.ship_owed);
}

TEST_CASE("no branch, nothing owed: work in the board's checkout and won't-do tickets",
          "[reducer][ship]") {
    Log plain{ticket_in(Status::review, Awaiting::review)};
    const Ticket& done = plain.must(VerdictGiven{Verdict::approved, {}});
    CHECK_FALSE(done.ship_owed);
    CHECK(next_action(done, Policy{}) == Action{Idle{IdleReason::done}});
    plain.refused(Shipped{ShipMethod::none, "", ""}, system_actor(), RejectReason::nothing_to_do);

    Log cancelled = reviewed_on_a_branch();
    const Ticket& given_up = cancelled.must(Cancelled{"not needed"});
    CHECK(given_up.status == Status::done);
    CHECK_FALSE(given_up.ship_owed);
}

TEST_CASE("a reopened ticket ships again, and a run claims only its own ticket's branch",
          "[reducer][ship]") {
    Log log = reviewed_on_a_branch();
    log.must(VerdictGiven{Verdict::approved, {}});
    log.must(Shipped{ShipMethod::merge, "board/PROJ-1", "abc"}, system_actor());
    const Ticket& reopened = log.must(Reopened{"regressed"});
    CHECK_FALSE(reopened.shipped);
    CHECK_FALSE(reopened.ship_owed);
    CHECK(reopened.branch == "board/PROJ-1");

    // A run of PROJ-1 may only claim PROJ-1's branch.
    Log other{ticket_in(Status::implementing)};
    other.refused(RunStarted{"r1", Status::implementing, 1, 1, {}, "board/PROJ-9"},
                  system_actor(),
                  RejectReason::invalid_field);
}
