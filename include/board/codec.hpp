#pragma once
// The codec: events and tickets to and from JSON (spec/storage.md, spec/state-machine.md §2).
//
// Encoding cannot fail and always writes what decoding reads back: decode(encode(x)) == x.
// Decoding never throws: every malformed input, however broken, comes back as a CodecError
// that names the offending field. Enum and actor spellings come from names.cpp (to_string /
// parse), so the wire and the CLI never disagree.
//
// Wire rules shared by events and tickets:
// - Keys are snake_case; event `type`s are kebab-case (`run-started`), as type_name() says.
// - An absent std::optional is an absent key. `null` is never written and never accepted.
// - Timestamps are strings, `2026-11-21T10:04:05.123Z` (see format_timestamp).
// - Unknown keys are ignored, so a newer build may add fields within a schema version.
// - Strings that are not valid UTF-8 are written with each invalid byte replaced by U+FFFD:
//   agent output can hold any bytes, and a line that cannot be read back would brick its log.

#include <board/event.hpp>
#include <board/expected.hpp>
#include <board/ticket.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace board {

/// Why an input could not be decoded.
struct CodecError {
    /// The offending field as a path: `seq`, `policy.gate`, `questions[1].options[0].id`.
    /// Empty when the input as a whole is at fault (not JSON, not an object).
    std::string field;
    /// One sentence for a person that names the field, e.g.
    /// `field "seq": expected an integer, got a string`, `missing field "title"`,
    /// `field "type": unknown event type "frobnicate"`,
    /// `field "v": schema version 3 is newer than this build reads (1)`,
    /// `invalid JSON at offset 17: syntax error`, `invalid UTF-8 at offset 9`.
    std::string message;
    friend bool operator==(const CodecError&, const CodecError&) = default;
};

/// The outcome of a decode: the value, or why not.
template <class T>
using DecodeResult = Expected<T, CodecError>;

// ---------------------------------------------------------------------------------------------
// Timestamps

/// The range a timestamp can be written in: years 0000 to 9999 (proleptic Gregorian, UTC).
/// Times before 1970 are negative and supported.
inline constexpr UnixMillis min_timestamp = -62'167'219'200'000;  ///< 0000-01-01T00:00:00.000Z
inline constexpr UnixMillis max_timestamp = 253'402'300'799'999;  ///< 9999-12-31T23:59:59.999Z

/// `2026-11-21T10:04:05.123Z`: always UTC, always three fractional digits, so the strings sort
/// as the times do. A value outside [min_timestamp, max_timestamp] is clamped to the range
/// (no clock produces one; the clamp keeps every written line readable).
std::string format_timestamp(UnixMillis);

/// The inverse of format_timestamp. Accepts exactly `YYYY-MM-DDTHH:MM:SS[.f]Z` with 1 to 9
/// fractional digits (truncated to milliseconds) or none, a real calendar date and no leap
/// second. Anything else (lower-case `t`/`z`, offsets, spaces) gives nullopt.
std::optional<UnixMillis> parse_timestamp(std::string_view);

// ---------------------------------------------------------------------------------------------
// Events: one line of events.jsonl

/// One JSON object, no newline. Keys in order: `v`, `seq`, `id`, `at`, `by`, `type`, then the
/// payload's fields, e.g.
/// `{"v":1,"seq":7,"id":"e7","at":"2026-11-21T10:04:05.123Z","by":"human:ana","type":"verdict",
///   "verdict":"rejected","note":"Use the existing retry helper"}`.
///
/// Payload wire names are the model's field names except:
/// - created: `kind` → `ticket_type` (`type` is the event's); `manual` only when true.
/// - every `requires_` → `requires`.
/// - run-started: the policy is a nested object
///   `"policy":{"gate","max_iterations","max_attempts","max_cost_usd","review_agent"}`.
/// - run-finished: `exit_code` → `exit`; `signal` is the signal's wire name (`COMPLETE`...);
///   `permanent` and the four `*_tokens` counts are written only when not false / 0.
/// - question-asked: `question_id` → `question`, `question` → `text`; `options` is
///   `[{"id","label","value","description"}]`.
/// - question-answered, question-timed-out: `question_id` → `question`.
/// - moved: `to` → `status`.
/// - updated: an absent optional is an absent key (unchanged); a present-but-cleared
///   `requires` or `awaiting` is the string `"none"`.
///
/// Every other field is always written, `v` as the event holds it. Doubles are written in their
/// shortest round-trip form and must be finite (a non-finite one is written as 0 so the line
/// stays readable).
std::string encode_event(const Event&);

/// Appends encode_event(event) to `out`, so a batch of lines can share one buffer.
void append_event(std::string& out, const Event& event);

/// The event as a JSON value, for embedding in a larger document (`log --json`): the same keys
/// and values as encode_event, doubles included (parsed back exactly).
boost::json::object event_to_json(const Event&);

/// Decodes one line (trailing whitespace, such as the `\n`, is allowed).
///
/// Required: the envelope (`v`, `seq`, `id`, `at`, `by`, `type`); identities (`ticket`, `run`,
/// `question`, `path`, `from`, `at_seq`); the values a decision is made from (`title`,
/// `phase`, `attempt`, `iteration`, the whole `policy`, `exit`, `cost_usd`, `kind`, `status`,
/// `verdict`, `text`, `response_type`, `value`); and an option's `id`. Everything else (free
/// text, lists, booleans, `priority` (2), `ticket_type` (task), `duration_ms` (0), optionals)
/// may be absent and then takes the model's default.
///
/// Errors: not JSON (with the byte offset), invalid UTF-8, not an object, a `v` above
/// event_schema_version or below 1, an unknown `type`, a missing required field, a wrong JSON
/// type, an integer out of range, an unknown enum spelling, a malformed actor or timestamp.
/// Ticket ids are not validated here (the reducer does that).
DecodeResult<Event> decode_event(std::string_view line);

/// Decodes an already parsed event (the inverse of event_to_json). Prefer decoding text where
/// there is text: Boost.JSON 1.81's own parser may round a double to a neighbouring value,
/// whereas the codec's parser converts doubles exactly.
DecodeResult<Event> event_from_json(const boost::json::value&);

/// Decodes many lines fast: it reuses one parser and one arena for every line, so a line costs
/// no allocation beyond the strings of the event it returns. Not thread-safe; one per thread.
class EventDecoder {
public:
    EventDecoder();
    ~EventDecoder();
    EventDecoder(const EventDecoder&) = delete;
    EventDecoder& operator=(const EventDecoder&) = delete;
    EventDecoder(EventDecoder&&) noexcept;
    EventDecoder& operator=(EventDecoder&&) noexcept;

    /// Same contract as decode_event(std::string_view). A moved-from decoder still works.
    DecodeResult<Event> decode(std::string_view line);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------------
// Tickets: ticket.json, `show --json`

/// The ticket with the field names of state-machine.md §2, in that order:
/// `id, title, description, type, priority, labels, parent, blocked_by, status, resolution,
/// awaiting, handoff, requires, artifacts, notes, questions, phase_attempts, phase_iterations,
/// phase_started_at, last_failure_at, run, last_run_ended_at, last_session, cost_usd,
/// runs_total, created_at, updated_at, seq`. `last_failure_at` and `last_run_ended_at` are
/// omitted until there was a failure or a run (no 1970 dates for a script to trip on).
/// - `artifacts` is an object keyed by kind (`implementation-log`...), holding only the kinds
///   recorded: `{"path","status","summary","sha256","created_at","updated_at"}`.
/// - `notes` are `[{"from","author","text","at"}]`.
/// - `questions` are `[{"id","question","kind","response_type","options","context",
///   "default_response","asked_at","timeout_at","status","answer","answered_by",
///   "answered_at"}]`; `answer`, `answered_by`, `answered_at` are omitted while they hold
///   their defaults (empty, `system`, 0), so a pending question does not look answered.
/// - `run` is `{"id","phase","started_at","policy":{...}}` (policy as on run-started).
std::string encode_ticket(const Ticket&);

/// The same document as encode_ticket, as a JSON value.
boost::json::object ticket_to_json(const Ticket&);

/// The inverse of encode_ticket. Only identities are required (the ticket's `id`, a
/// question's `id`, a run's `id`, an artifact's `path`); any other absent field takes the
/// model's default, so a snapshot written by an older build, or an imported ticket, loads.
/// Legacy input: `"manual": true` without `awaiting` reads as `awaiting: work`.
/// Wrong types and unknown spellings are errors, as for events.
DecodeResult<Ticket> decode_ticket(std::string_view json);

/// Decodes an already parsed ticket (the inverse of ticket_to_json; see event_from_json on
/// doubles).
DecodeResult<Ticket> ticket_from_json(const boost::json::value&);

}  // namespace board
