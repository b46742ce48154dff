#include "reducer/handlers.hpp"
#include "reducer/ticket_ops.hpp"

#include <board/reduce.hpp>

#include <array>
#include <string>

namespace board {

std::string_view to_string(RejectReason reason) {
    static constexpr std::array<std::string_view, 17> names{"not_created",
                                                            "already_created",
                                                            "out_of_sequence",
                                                            "invalid_field",
                                                            "wrong_status",
                                                            "not_awaiting",
                                                            "awaiting_human",
                                                            "run_in_flight",
                                                            "unknown_run",
                                                            "not_human",
                                                            "unknown_question",
                                                            "question_not_pending",
                                                            "invalid_answer",
                                                            "not_due",
                                                            "answer_required",
                                                            "feedback_required",
                                                            "nothing_to_do"};
    const auto i = static_cast<std::size_t>(reason);
    return i < names.size() ? names[i] : std::string_view{"?"};
}

std::optional<Rejection> reduce_in_place(Ticket& ticket, const Event& event) {
    const bool creates = std::holds_alternative<Created>(event.payload);
    if (!creates && ticket.id.empty()) {
        return ops::reject(RejectReason::not_created,
                           {type_name(event.payload), ": the log does not start with `created`"});
    }
    if (creates && !ticket.id.empty()) {
        return ops::reject(RejectReason::already_created, {ticket.id, " already exists"});
    }
    if (!is_valid_actor(event.by)) {
        // The codec would write it, but no reader would take the line back.
        return ops::reject(RejectReason::invalid_field,
                           {"by: \"",
                            to_string(event.by),
                            "\" is not an actor (a name is one word of printable characters)"});
    }
    if (event.seq != ticket.seq + 1) {
        return ops::reject(RejectReason::out_of_sequence,
                           {ticket.id.empty() ? "the first event" : ticket.id,
                            ": event seq ",
                            std::to_string(event.seq),
                            " does not follow seq ",
                            std::to_string(ticket.seq)});
    }
    const std::optional<Awaiting> awaited = ticket.awaiting;
    auto rejection =
        std::visit([&](const auto& payload) { return handlers::apply(ticket, event, payload); },
                   event.payload);
    if (rejection) return rejection;
    // A new handoff (or none) starts its service-level clock afresh, whatever event made it.
    if (ticket.awaiting != awaited) {
        ticket.awaiting_since = ticket.awaiting ? event.at : 0;
        ticket.reminders = 0;
        ticket.reminded_at = 0;
        ticket.escalated_at = 0;
        ticket.escalated_to.clear();
    }
    ticket.seq = event.seq;
    ticket.updated_at = event.at;
    return std::nullopt;
}

Reduced reduce(Ticket ticket, const Event& event) {
    if (auto rejection = reduce_in_place(ticket, event)) return std::move(*rejection);
    return ticket;
}

Folded fold(std::span<const Event> events) {
    Folded out;
    for (std::size_t i = 0; i < events.size(); ++i) {
        // A refused event leaves the ticket as it was: the state before it, as promised.
        if (auto rejection = reduce_in_place(out.ticket, events[i])) {
            out.failure.emplace(i, std::move(*rejection));
            return out;
        }
    }
    return out;
}

}  // namespace board
