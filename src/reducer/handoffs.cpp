// Handoff service levels (board.yaml `handoffs`, `reviewers`): when a person has kept a ticket
// long enough to be reminded or to have it escalated, and the two events that record it. The
// clock is an argument and the events carry their time, so a replay decides as the daemon did.

#include "reducer/handlers.hpp"
#include "reducer/ticket_ops.hpp"

#include <board/next_action.hpp>

#include <algorithm>
#include <string>

namespace board {
namespace {

using ops::cat;
using ops::reject;

/// The board alone records service-level events, for the handoff the ticket is in now.
std::optional<Rejection> may_record(const Ticket& t,
                                    const Event& e,
                                    std::string_view what,
                                    Awaiting awaiting) {
    if (e.by.kind != ActorKind::system) {
        return reject(RejectReason::not_human,
                      {what,
                       ": only the board records a handoff's reminders (this event is by ",
                       to_string(e.by),
                       ")"});
    }
    if (!t.awaiting || *t.awaiting != awaiting) {
        return reject(RejectReason::nothing_to_do,
                      {what,
                       ": ",
                       t.id,
                       " no longer awaits ",
                       to_string(awaiting),
                       t.awaiting ? cat({" (it awaits ", to_string(*t.awaiting), ")"}) : ""});
    }
    return std::nullopt;
}

std::optional<UnixMillis> reminder_due(const TicketSummary& t, const HandoffPolicy& p) {
    if (p.remind_after_ms <= 0) return std::nullopt;
    return (t.reminders == 0 ? t.awaiting_since : t.reminded_at) + p.remind_after_ms;
}

std::optional<UnixMillis> escalation_due(const TicketSummary& t, const HandoffPolicy& p) {
    if (p.escalate_after_ms <= 0 || t.escalated_at != 0) return std::nullopt;
    return t.awaiting_since + p.escalate_after_ms;
}

}  // namespace

namespace handlers {

Outcome apply(Ticket& t, const Event& e, const HandoffReminded& r) {
    if (auto bad = may_record(t, e, "handoff-reminded", r.awaiting)) return *bad;
    if (r.reminder != t.reminders + 1) {
        return reject(RejectReason::invalid_field,
                      {"handoff-reminded: reminder ",
                       std::to_string(r.reminder),
                       " does not follow reminder ",
                       std::to_string(t.reminders)});
    }
    t.reminders = r.reminder;
    t.reminded_at = e.at;
    return std::nullopt;
}

Outcome apply(Ticket& t, const Event& e, const HandoffEscalated& x) {
    if (auto bad = may_record(t, e, "handoff-escalated", x.awaiting)) return *bad;
    if (t.escalated_at != 0)
        return reject(RejectReason::nothing_to_do,
                      {"handoff-escalated: ", t.id, "'s handoff was escalated already"});
    for (const auto& name : x.to) {
        if (!is_valid_actor(Actor{ActorKind::human, name}))
            return reject(RejectReason::invalid_field,
                          {"handoff-escalated: \"", name, "\" is not a person's name"});
    }
    t.escalated_at = e.at;
    t.escalated_to = x.to;
    std::string to;
    for (const auto& name : x.to) to += (to.empty() ? "" : ", ") + name;
    ops::add_system_note(t,
                         cat({"no one has answered this ",
                              to_string(x.awaiting),
                              " request in the time board.yaml allows (handoffs.",
                              to_string(x.awaiting),
                              ".escalate_after): escalated",
                              to.empty() ? "" : " to ",
                              to}),
                         e.at);
    return std::nullopt;
}

}  // namespace handlers

std::optional<UnixMillis> next_handoff_deadline(const TicketSummary& ticket, const Policy& policy) {
    if (!ticket.awaiting) return std::nullopt;
    const HandoffPolicy& p = policy.handoff(*ticket.awaiting);
    const auto remind = reminder_due(ticket, p);
    const auto escalate = escalation_due(ticket, p);
    if (remind && escalate) return std::min(*remind, *escalate);
    return remind ? remind : escalate;
}

std::vector<Payload> handoff_events_due(const TicketSummary& ticket,
                                        const Policy& policy,
                                        UnixMillis now) {
    std::vector<Payload> out;
    if (!ticket.awaiting) return out;
    const Awaiting kind = *ticket.awaiting;
    const HandoffPolicy& p = policy.handoff(kind);
    if (const auto at = reminder_due(ticket, p); at && *at <= now)
        out.emplace_back(HandoffReminded{kind, ticket.reminders + 1});
    if (const auto at = escalation_due(ticket, p); at && *at <= now)
        out.emplace_back(HandoffEscalated{kind, p.escalate_to});
    return out;
}

bool is_for(const TicketSummary& ticket, const Policy& policy, std::string_view person) {
    if (!ticket.awaiting) return false;
    const auto names = [&](const std::vector<std::string>& list) {
        return std::find(list.begin(), list.end(), person) != list.end();
    };
    const auto& reviewers = policy.handoff(*ticket.awaiting).reviewers;
    return reviewers.empty() || names(reviewers) || names(ticket.escalated_to);
}

}  // namespace board
