// Handoff service levels (board.yaml `handoffs`, `reviewers`): when the board owes a person a
// reminder or an escalation, and how the two events it records change the ticket.

#include "reducer/testing.hpp"

#include <board/next_action.hpp>
#include <board/reduce.hpp>

#include <catch2/catch.hpp>

using namespace board;
using namespace board::testing;

namespace {

constexpr UnixMillis hour = 3'600'000;

/// Reviews remind after 1 h and escalate to carol after 3 h; alice and bob review.
Policy review_sla() {
    Policy p;
    HandoffPolicy& review = p.handoffs[static_cast<std::size_t>(Awaiting::review)];
    review.remind_after_ms = hour;
    review.escalate_after_ms = 3 * hour;
    review.escalate_to = {"carol"};
    review.reviewers = {"alice", "bob"};
    return p;
}

}  // namespace

TEST_CASE("a handoff's clock starts when the ticket is handed over and resets with the next",
          "[reducer][handoff]") {
    Log log{ticket_in(Status::implementing)};
    CHECK(log.ticket().awaiting_since == 0);
    const UnixMillis handed = log.now();
    const Ticket& waiting = log.must(Updated{.awaiting = std::optional{Awaiting::review}});
    CHECK(waiting.awaiting_since == handed);
    // A note does not restart the wait; another kind of request does.
    log.must(NoteAdded{"looking at it tomorrow"});
    CHECK(log.ticket().awaiting_since == handed);
    const UnixMillis changed = log.now();
    CHECK(log.must(Updated{.awaiting = std::optional{Awaiting::work}}).awaiting_since == changed);
    CHECK(log.must(Updated{.awaiting = std::optional<Awaiting>{}}).awaiting_since == 0);
}

TEST_CASE(
    "a request kept past remind_after is reminded, again every remind_after, and "
    "escalated once past escalate_after",
    "[reducer][handoff]") {
    const Policy policy = review_sla();
    Log log{ticket_in(Status::review)};
    const UnixMillis since = log.now();
    log.must(Updated{.awaiting = std::optional{Awaiting::review}});
    CHECK(next_handoff_deadline(log.ticket(), policy) == since + hour);
    CHECK(handoff_events_due(log.ticket(), policy, since + hour - 1).empty());

    // Late by a day: one reminder, not one per hour missed.
    auto due = handoff_events_due(log.ticket(), policy, since + hour);
    REQUIRE(due.size() == 1);
    CHECK(due[0] == Payload{HandoffReminded{Awaiting::review, 1}});

    log.advance_clock(hour);
    const UnixMillis reminded = log.now();
    const Ticket& once = log.must(due[0], system_actor());
    CHECK(once.reminders == 1);
    CHECK(once.reminded_at == reminded);
    CHECK(next_handoff_deadline(once, policy) == reminded + hour);

    log.advance_clock(2 * hour);
    due = handoff_events_due(log.ticket(), policy, log.now());
    REQUIRE(due.size() == 2);
    CHECK(due[0] == Payload{HandoffReminded{Awaiting::review, 2}});
    CHECK(due[1] == Payload{HandoffEscalated{Awaiting::review, {"carol"}}});
    log.must(due[0], system_actor());
    const Ticket& escalated = log.must(due[1], system_actor());
    CHECK(escalated.escalated_to == std::vector<std::string>{"carol"});
    CHECK(escalated.awaiting == Awaiting::review);  // carol decides it as alice would
    CHECK(escalated.notes.back().text.find("escalated to carol") != std::string::npos);
    // Escalated once: only reminders are owed from now on.
    for (const auto& p : handoff_events_due(escalated, policy, log.now() + 10 * hour))
        CHECK(std::holds_alternative<HandoffReminded>(p));

    // The person decides: the handoff is over, and so are its reminders.
    const Ticket& done = log.must(VerdictGiven{Verdict::approved, "ship it"});
    CHECK(done.reminders == 0);
    CHECK(done.escalated_to.empty());
    CHECK_FALSE(next_handoff_deadline(done, policy));
}

TEST_CASE("only the board records a reminder, for the request the ticket still has",
          "[reducer][handoff]") {
    Log log{ticket_in(Status::review)};
    log.must(Updated{.awaiting = std::optional{Awaiting::review}});
    log.refused(HandoffReminded{Awaiting::review, 1}, human(), RejectReason::not_human);
    log.refused(
        HandoffReminded{Awaiting::review, 1}, agent(Status::review), RejectReason::not_human);
    log.refused(
        HandoffReminded{Awaiting::approval, 1}, system_actor(), RejectReason::nothing_to_do);
    log.refused(HandoffReminded{Awaiting::review, 2}, system_actor(), RejectReason::invalid_field);
    log.refused(HandoffEscalated{Awaiting::review, {"not a name"}},
                system_actor(),
                RejectReason::invalid_field);
    log.must(HandoffEscalated{Awaiting::review, {}}, system_actor());
    log.refused(
        HandoffEscalated{Awaiting::review, {}}, system_actor(), RejectReason::nothing_to_do);
}

TEST_CASE(
    "a request is for its kind's reviewers, everyone's without any, and for whom it was "
    "escalated to",
    "[reducer][handoff]") {
    const Policy policy = review_sla();
    Log log{ticket_in(Status::review)};
    CHECK_FALSE(is_for(log.ticket(), policy, "alice"));  // the agent's turn: no one's
    log.must(Updated{.awaiting = std::optional{Awaiting::review}});
    CHECK(is_for(log.ticket(), policy, "alice"));
    CHECK(is_for(log.ticket(), policy, "bob"));
    CHECK_FALSE(is_for(log.ticket(), policy, "carol"));
    log.must(HandoffEscalated{Awaiting::review, {"carol"}}, system_actor());
    CHECK(is_for(log.ticket(), policy, "carol"));

    Log work{ticket_in(Status::review)};
    work.must(Updated{.awaiting = std::optional{Awaiting::work}});
    CHECK(is_for(work.ticket(), policy, "dave"));
}
