#include <board/next_action.hpp>

#include <algorithm>
#include <array>
#include <charconv>

namespace board {

std::string_view to_string(IdleReason reason) {
    static constexpr std::array<std::string_view, 7> names{
        "done", "epic", "run_in_flight", "blocked", "auto_off", "wip_limit", "budget_exhausted"};
    const auto i = static_cast<std::size_t>(reason);
    return i < names.size() ? names[i] : std::string_view{"?"};
}

RunPolicy Policy::run_policy(Status phase) const {
    const Gate gate = phase == Status::research   ? research_gate
                      : phase == Status::planning ? planning_gate
                                                  : Gate::none;
    return RunPolicy{gate, max_iterations, max_attempts, max_cost_usd, review_agent};
}

namespace {

/// The agent phase a ticket in `status` would run, if the board may start it on its own.
std::optional<Status> phase_to_run(Status status, const Policy& policy) {
    switch (status) {
        case Status::backlog:
            return policy.auto_research ? std::optional{Status::research} : std::nullopt;
        case Status::ready:
            return policy.auto_planning ? std::optional{Status::planning} : std::nullopt;
        case Status::done:
            return std::nullopt;
        default:
            return status;
    }
}

UnixMillis retry_not_before(const TicketSummary& t, const Policy& policy) {
    if (!t.last_failure_at || t.phase_attempts <= 0) return 0;
    UnixMillis delay = policy.retry_backoff_ms;
    for (int i = 1; i < t.phase_attempts && delay < policy.retry_backoff_max_ms; ++i) delay *= 2;
    return *t.last_failure_at + std::min(delay, policy.retry_backoff_max_ms);
}

}  // namespace

Action next_action(const TicketSummary& ticket, const Policy& policy, const BoardFacts& facts) {
    if (ticket.status == Status::done)
        return ticket.ship_owed ? Action{Ship{ticket.branch}} : Action{Idle{IdleReason::done}};
    if (ticket.type == TicketType::epic) return Idle{IdleReason::epic};
    if (ticket.awaiting) return AwaitHuman{*ticket.awaiting};
    if (ticket.run) return Idle{IdleReason::run_in_flight};
    if (!facts.blockers_done) return Idle{IdleReason::blocked};

    const auto phase = phase_to_run(ticket.status, policy);
    if (!phase) return Idle{IdleReason::auto_off};
    // Entering a column needs room in it. A ticket already in its column (a gate can move
    // several in at once) needs a run slot there: at most `wip` agents work a column.
    const int limit = policy.wip_limit(*phase);
    const auto column = static_cast<std::size_t>(*phase);
    const int used =
        *phase != ticket.status ? facts.in_status[column] : facts.runs_in_status[column];
    if (limit > 0 && used >= limit) return Idle{IdleReason::wip_limit};

    const bool same_phase = *phase == ticket.status;
    return StartRun{*phase,
                    same_phase ? ticket.phase_attempts + 1 : 1,
                    same_phase ? ticket.phase_iterations + 1 : 1,
                    same_phase ? retry_not_before(ticket, policy) : 0,
                    policy.run_policy(*phase)};
}

std::optional<UnixMillis> next_question_deadline(const Ticket& ticket) {
    std::optional<UnixMillis> earliest;
    for (const auto& q : ticket.questions) {
        if (q.status != QuestionStatus::pending || !q.timeout_at) continue;
        if (!earliest || *q.timeout_at < *earliest) earliest = q.timeout_at;
    }
    return earliest;
}

std::vector<std::string> questions_due(const Ticket& ticket, UnixMillis now) {
    std::vector<std::string> due;
    for (const auto& q : ticket.questions) {
        if (q.status == QuestionStatus::pending && q.timeout_at && *q.timeout_at <= now)
            due.push_back(q.id);
    }
    return due;
}

QueueKey queue_key(const TicketSummary& ticket, EpicState epic) {
    return QueueKey{ticket.priority,
                    ticket.parent.empty() ? EpicState::none : epic,
                    ticket.created_at,
                    ticket.id};
}

namespace {

/// §7: momentum first, then other epic work, then standalone, then orphans.
int epic_rank(EpicState e) {
    switch (e) {
        case EpicState::in_flight:
            return 0;
        case EpicState::open:
            return 1;
        case EpicState::none:
            return 2;
        case EpicState::done:
            return 3;
    }
    return 2;
}

std::pair<std::string_view, std::uint64_t> split_id(std::string_view id) {
    const auto dash = id.rfind('-');
    if (dash == std::string_view::npos) return {id, 0};
    std::uint64_t number = 0;
    const auto digits = id.substr(dash + 1);
    std::from_chars(digits.data(), digits.data() + digits.size(), number);
    return {id.substr(0, dash), number};
}

/// True if `id` has a dash at `dash` and only digits after it.
bool digits_after(std::string_view id, std::size_t dash) {
    // More digits than 18 may not fit the number the slow path parses.
    if (dash == std::string_view::npos || dash + 1 >= id.size() || id.size() - dash - 1 > 18)
        return false;
    return std::all_of(id.begin() + static_cast<std::ptrdiff_t>(dash) + 1, id.end(), [](char c) {
        return c >= '0' && c <= '9';
    });
}

}  // namespace

bool id_less(std::string_view a, std::string_view b) {
    // Two ids of one length with the dash at one place and digits after it order as their
    // text: prefixes of one length first, then digit strings of one length, which order as
    // their numbers. Most pairs on a board are such (sorting, binary search), and need no
    // number parsed.
    if (a.size() == b.size()) {
        const auto dash = a.rfind('-');
        if (dash == b.rfind('-') && digits_after(a, dash) && digits_after(b, dash)) return a < b;
    }
    const auto [prefix_a, number_a] = split_id(a);
    const auto [prefix_b, number_b] = split_id(b);
    if (prefix_a != prefix_b) return prefix_a < prefix_b;
    if (number_a != number_b) return number_a < number_b;
    return a < b;
}

bool comes_before(const QueueKey& a, const QueueKey& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    if (epic_rank(a.epic) != epic_rank(b.epic)) return epic_rank(a.epic) < epic_rank(b.epic);
    if (a.created_at != b.created_at) return a.created_at < b.created_at;
    return id_less(a.id, b.id);
}

}  // namespace board
