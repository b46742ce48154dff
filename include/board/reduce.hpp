#pragma once
// The reducer: the product's semantics as one pure function (spec/state-machine.md).
//
// reduce(ticket, event) returns the next ticket or a Rejection. It reads no clock, does no
// I/O, never throws (beyond std::bad_alloc) and never asserts on input: every (state, event)
// pair has an answer. Only accepted events are ever appended, so a rejection while
// replaying a log means the log is corrupt.

#include <board/event.hpp>
#include <board/expected.hpp>
#include <board/ticket.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace board {

/// Why an event was refused: stable, machine-readable (`to_string` gives the wire name).
enum class RejectReason : std::uint8_t {
    not_created,           ///< an event before `created`
    already_created,       ///< a second `created`
    out_of_sequence,       ///< `seq` is not the ticket's seq + 1
    invalid_field,         ///< a value out of range or malformed (id, priority, empty text...)
    wrong_status,          ///< the event does not apply in the ticket's column
    not_awaiting,          ///< a verdict on a ticket nobody asked a human about
    awaiting_human,        ///< agent work on a ticket that waits for a human
    run_in_flight,         ///< a second run, while one is in flight
    unknown_run,           ///< finishing a run that is not the one in flight
    not_human,             ///< provenance: only humans give verdicts, answers, cancels, gates
    unknown_question,      ///< no question with that id
    question_not_pending,  ///< answered, timed out or cancelled already
    invalid_answer,        ///< the value does not fit the question's response type
    not_due,               ///< a timeout before the question's `timeout_at`
    answer_required,       ///< a verdict on a pending question: use `answer`
    feedback_required,     ///< a rejection without feedback: an agent cannot act on a bare no
    nothing_to_do,         ///< an update that changes nothing
};
std::string_view to_string(RejectReason);

struct Rejection {
    RejectReason reason = RejectReason::invalid_field;
    std::string message;  ///< one sentence for a person, naming the ticket and the cause
    friend bool operator==(const Rejection&, const Rejection&) = default;
};

/// The outcome of reduce: the next ticket, or why not.
using Reduced = Expected<Ticket, Rejection>;

/// Applies one event. Takes the ticket by value: pass it with std::move to fold without copies.
Reduced reduce(Ticket ticket, const Event& event);

/// reduce() without moving the ticket: nullopt when the event is accepted (`ticket` is now the
/// next state), else why not, and `ticket` is unchanged. For folding a long log, where moving
/// a ticket in and out of reduce() per event costs as much as applying most events.
[[nodiscard]] std::optional<Rejection> reduce_in_place(Ticket& ticket, const Event& event);

/// The result of folding a sequence of events from an empty ticket.
struct Folded {
    Ticket ticket;  ///< the state after the last accepted event
    /// The first event that was refused (its index in the input) and why; folding stops there.
    std::optional<std::pair<std::size_t, Rejection>> failure;
};

Folded fold(std::span<const Event> events);

/// Why `value` is not a valid answer to `question` (spec §6), or nullopt if it is. For a
/// choice, `value` may name an option by id, value or label.
std::optional<std::string> answer_error(const Question& question, std::string_view value);

/// The timeout a question asked at `asked_at` gets: the kind's default when `minutes` is
/// absent, clamped to [5 minutes, 24 hours]; nullopt for a non-blocking question without one.
std::optional<UnixMillis> question_timeout_at(QuestionKind kind,
                                              std::optional<int> minutes,
                                              UnixMillis asked_at);

}  // namespace board
