#include "orchestrator/due_events.hpp"

#include <board/event_log.hpp>
#include <board/next_action.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

namespace board::orchestrator {

void DueEvents::ticket_changed(const std::string& id, const Ticket* after) {
    if (after && next_question_deadline(*after))
        timed_questions_.insert(id);
    else
        timed_questions_.erase(id);
    if (after && next_handoff_deadline(*after, policy_))
        timed_handoffs_.insert(id);
    else
        timed_handoffs_.erase(id);
}

std::optional<UnixMillis> DueEvents::commit_due() {
    std::optional<UnixMillis> next;
    commit_each(
        timed_questions_,
        [](const Ticket& t, UnixMillis now) {
            std::vector<Payload> timeouts;
            for (auto& q : questions_due(t, now)) timeouts.emplace_back(QuestionTimedOut{q});
            return timeouts;
        },
        [](const Ticket& t) { return next_question_deadline(t); },
        next);
    const Policy& policy = policy_;
    commit_each(
        timed_handoffs_,
        [&policy](const Ticket& t, UnixMillis now) { return handoff_events_due(t, policy, now); },
        [&policy](const Ticket& t) { return next_handoff_deadline(t, policy); },
        next);
    return next;
}

template <class Due, class Deadline>
void DueEvents::commit_each(const std::set<std::string>& timed,
                            Due due,
                            Deadline deadline,
                            std::optional<UnixMillis>& next) {
    const auto earliest = [&next](UnixMillis at) { next = next ? std::min(*next, at) : at; };
    const UnixMillis now = wall_clock_now();
    const auto steady_now = KnownTickets::Clock::now();
    // Held (a write of it was refused, or a person just changed it): looked at again when the
    // hold ends, not at every turn of the loop.
    const auto held = [&](const KnownTickets::Entry& entry) {
        if (entry.available_at <= steady_now) return false;
        earliest(now + std::chrono::duration_cast<std::chrono::milliseconds>(entry.available_at -
                                                                             steady_now)
                           .count());
        return true;
    };
    // A copy: committing changes the set.
    for (const std::string& id : std::vector<std::string>(timed.begin(), timed.end())) {
        const auto& entry = known_.all().at(id);
        if (held(entry) || !entry.ticket) continue;
        if (!due(*entry.ticket, now).empty()) {
            writes_.commit(id, [due, now](const Ticket& t) {
                std::vector<Authored> batch;
                for (auto& payload : due(t, now))
                    batch.push_back({Actor{ActorKind::system, {}}, std::move(payload)});
                return batch;
            });
        }
        // The ticket as that commit left it: the deadline just met is past, or it is held.
        if (held(entry) || !entry.ticket) continue;
        if (auto at = deadline(*entry.ticket)) earliest(*at);
    }
}

}  // namespace board::orchestrator
