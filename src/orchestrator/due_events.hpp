#pragma once
// The events the system owes a ticket at a time, not after a run: question timeouts, and the
// reminders and escalations of board.yaml's `handoffs` (the notify command hears of each as
// the change is folded). The tickets that can owe one are kept as they change, so a turn of
// the daemon's loop never passes over every ticket.

#include "orchestrator/known_tickets.hpp"
#include "orchestrator/own_writes.hpp"

#include <board/board_config.hpp>
#include <board/ticket.hpp>

#include <optional>
#include <set>
#include <string>

namespace board::orchestrator {

class DueEvents {
public:
    DueEvents(KnownTickets& known, OwnWrites& writes, const Policy& policy)
        : known_(known)
        , writes_(writes)
        , policy_(policy) {}

    /// After every change of what is known of `id` (`after` null: it is gone).
    void ticket_changed(const std::string& id, const Ticket* after);

    /// Appends every event due now; returns the wall time at which to look again (the next
    /// deadline, or the end of a hold on a ticket whose write was refused), none when none.
    std::optional<UnixMillis> commit_due();

private:
    template <class Due, class Deadline>
    void commit_each(const std::set<std::string>& timed,
                     Due due,
                     Deadline deadline,
                     std::optional<UnixMillis>& next);

    KnownTickets& known_;
    OwnWrites& writes_;
    const Policy& policy_;
    std::set<std::string> timed_questions_;  ///< tickets with a question that can time out
    std::set<std::string> timed_handoffs_;   ///< tickets a handoff service level may remind
};

}  // namespace board::orchestrator
