#pragma once
// What an agent printed, read back: the one signal that counts (spec/state-machine.md §4) and
// the structured questions it asked (§6). Pure functions over the captured text: no I/O, no
// clock. The daemon turns the results into the `run-finished` event, `question-asked` events
// and warning / system notes.
//
// The input is the agent's *text*: for agents that print JSON events (Claude Code's
// `stream-json`) the caller first extracts the assistant text, since a signal or a question
// quoted inside a JSON string is escaped and its fences are not at the start of a line.

#include <board/event.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace board {

/// Longest signal context kept, in bytes of UTF-8. A longer context is cut at a code point
/// boundary at or below this size and `truncation_marker` is appended.
inline constexpr std::size_t max_signal_context_bytes = 4096;
inline constexpr std::string_view truncation_marker = " [… truncated]";

/// At most this many warnings are listed per scan; when there were more, one final warning
/// says how many were left out (`... and 7 more warnings`).
inline constexpr std::size_t max_scan_warnings = 20;

/// The result of `scan_signals`.
struct SignalScan {
    /// The signal that counts: the last handoff signal (any but `COMPLETE`) if there was one,
    /// else `COMPLETE` if there was one, else none (the run was one iteration).
    std::optional<Signal> signal;
    /// The chosen tag's context, trimmed; empty without one. Valid UTF-8: invalid bytes are
    /// replaced with U+FFFD. At most `max_signal_context_bytes` plus the truncation marker.
    std::string context;
    /// Every different valid signal seen, in first-seen order. More than one entry means the
    /// caller should write a system note listing them.
    std::vector<Signal> distinct;
    /// One line each, valid UTF-8, naming the 1-based line of the offending tag, e.g.
    /// `unknown signal "FOO" at line 12`, `unterminated <promise> at line 40`.
    std::vector<std::string> warnings;

    friend bool operator==(const SignalScan&, const SignalScan&) = default;
};

/// Finds the agent's signal in `output` (spec §4).
///
/// - A signal is `<promise>NAME</promise>` or `<promise>NAME: context</promise>`. `NAME` is
///   case-sensitive and may have whitespace around it; `CONTENT REVIEW` reads as
///   `CONTENT_REVIEW`. The context runs from the first `:` to `</promise>`, may span lines
///   and hold colons, and is trimmed.
/// - Tags inside fenced code blocks are ignored: a line that starts, after at most 3 spaces,
///   with 3+ backticks (and no backtick after them) or 3+ tildes opens a fence; a line of at
///   least as many of the same character (then only blanks) closes it; an unclosed fence runs
///   to the end. Inline code spans are *not* ignored: an agent that wraps its real signal in
///   backticks must not lose it, and a quoted signal in prose at worst hands off to a human.
/// - A tag is the text up to the first `</promise>`. A `<promise>` with no `</promise>` before
///   the next `<promise>` (nested tags) or before the end is unterminated: it is skipped with a
///   warning and scanning resumes right after it, so
///   `<promise><promise>COMPLETE</promise></promise>` yields `COMPLETE` and two warnings. A
///   well-formed tag is atomic: a fence line inside its context is context text.
/// - Unknown names (e.g. lowercase `complete`), empty tags and stray `</promise>` are
///   warnings, never errors.
///
/// Never throws on any input (only std::bad_alloc can escape). Linear in the input; memory
/// beyond the result is constant.
SignalScan scan_signals(std::string_view output);

/// The result of `scan_questions`.
struct QuestionScan {
    /// The valid questions in output order. `question_id` is left empty: the caller numbers
    /// them against the ticket's existing questions.
    std::vector<QuestionAsked> questions;
    /// One line each, valid UTF-8, naming the block's 1-based line and the field, e.g.
    /// `<question> at line 8: "type" "urgent" is not one of blocking, non_blocking, ...`.
    std::vector<std::string> warnings;

    friend bool operator==(const QuestionScan&, const QuestionScan&) = default;
};

/// Finds `<question>{JSON}</question>` blocks in `output` (spec §6), with the same tag and
/// fence rules as `scan_signals`. A block whose body is wrapped in one fenced code block
/// (```` ```json ````) is read as the JSON inside. The JSON is the 003 `ask_question` shape:
///
/// - `question`: required, a non-empty string (trimmed).
/// - `type`: `blocking`, `non_blocking`, `approval` or `error_recovery`. Absent: `blocking`,
///   the safe reading (a human is asked rather than the question dropped).
/// - `responseType`: `text`, `choice`, `boolean` or `approval`. Absent: `approval` for
///   approval questions, else `text`.
/// - `options`: an array of `{id, label, value, description}`, required non-empty for
///   `choice`. Each needs a `label` or a `value` (the other defaults to it); a missing `id` is
///   the option's 1-based position; ids must be unique.
/// - `context`: a string; any other JSON value is kept as its compact JSON text.
/// - `timeoutMinutes`: a positive number, rounded up to whole minutes (the reducer clamps it
///   to the spec's range). Absent: the kind's default.
/// - `defaultResponse`: for `text` a string, number or boolean; for `boolean` `true`/`false`
///   (JSON or string); for `approval` `approve`/`reject`; for `choice` an option's id, value
///   or label, stored as that option's value.
///
/// `null` reads as absent; unknown fields are ignored; `response_type`, `timeout_minutes` and
/// `default_response` are accepted as aliases. A block with malformed JSON or a wrong field is
/// dropped with one warning. Never throws on any input (only std::bad_alloc can escape).
QuestionScan scan_questions(std::string_view output);

}  // namespace board
