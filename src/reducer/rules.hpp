#pragma once
// The rules of spec/state-machine.md as data: what a signal does (§4), what a verdict does
// (§5), where a gate leads (§3). reduce.cpp interprets these tables; tests walk them.

#include <board/event.hpp>
#include <board/ticket.hpp>

#include <array>
#include <optional>

namespace board::rules {

/// §4: the handoff a signal asks for. `complete` has none (it completes the phase).
struct SignalRule {
    Signal signal;
    std::optional<Awaiting> awaiting;
    bool implementing_moves_to_review;  ///< approval-type handoffs are asked from `review`
};

inline constexpr std::array<SignalRule, 9> signal_rules{{
    {Signal::complete, std::nullopt, false},
    {Signal::approval_needed, Awaiting::approval, true},
    {Signal::review_requested, Awaiting::review, true},
    {Signal::content_review, Awaiting::content, true},
    {Signal::input_needed, Awaiting::input, false},
    {Signal::blocked, Awaiting::input, false},  // legacy spelling of INPUT_NEEDED
    {Signal::escalate, Awaiting::escalation, false},
    {Signal::checkpoint, Awaiting::checkpoint, false},
    {Signal::eject, Awaiting::work, false},
}};

constexpr const SignalRule& rule_for(Signal s) {
    return signal_rules[static_cast<std::size_t>(s)];
}

/// §5: what a verdict does to the ticket.
enum class VerdictEffect : std::uint8_t {
    advance,                ///< the phase's gate passes: on to the next column
    complete_without_gate,  ///< the human did the work: the phase is done, its gate skipped
    back_to_agent,          ///< the agent continues in the phase, counters kept
    back_to_agent_reset,    ///< as above, with attempts and iterations reset (escalation)
    redo,                   ///< the agent redoes the phase: attempts + 1, artifact rejected
    close_wont_do,          ///< done / wont_do
};

struct VerdictRule {
    Awaiting awaiting;
    VerdictEffect approved;
    VerdictEffect rejected;
};

inline constexpr std::array<VerdictRule, 7> verdict_rules{{
    {Awaiting::work, VerdictEffect::complete_without_gate, VerdictEffect::back_to_agent},
    {Awaiting::approval, VerdictEffect::advance, VerdictEffect::redo},
    {Awaiting::input, VerdictEffect::back_to_agent, VerdictEffect::close_wont_do},
    {Awaiting::review, VerdictEffect::advance, VerdictEffect::redo},
    {Awaiting::content, VerdictEffect::advance, VerdictEffect::redo},
    {Awaiting::escalation, VerdictEffect::back_to_agent_reset, VerdictEffect::close_wont_do},
    {Awaiting::checkpoint, VerdictEffect::back_to_agent, VerdictEffect::redo},
}};

constexpr const VerdictRule& rule_for(Awaiting a) {
    return verdict_rules[static_cast<std::size_t>(a)];
}

/// §3: the column a passed gate leads to, from each column (done: nowhere further).
inline constexpr std::array<Status, all_statuses.size()> advance_to{
    Status::research,      // backlog: the human starts it
    Status::ready,         // research
    Status::planning,      // ready: the human starts it
    Status::implementing,  // planning
    Status::review,        // implementing
    Status::done,          // review
    Status::done,          // done
};

/// The board's default gate per phase, for a phase completed outside a run (spec defaults).
constexpr Gate default_gate(Status phase) {
    return phase == Status::planning ? Gate::approval : Gate::none;
}

/// §6: default and bounds of question timeouts, in minutes.
constexpr std::optional<int> default_timeout_minutes(QuestionKind kind) {
    switch (kind) {
        case QuestionKind::blocking:
            return 30;
        case QuestionKind::approval:
            return 15;
        case QuestionKind::error_recovery:
            return 10;
        case QuestionKind::non_blocking:
            return std::nullopt;
    }
    return std::nullopt;
}

inline constexpr int min_timeout_minutes = 5;
inline constexpr int max_timeout_minutes = 24 * 60;

}  // namespace board::rules
