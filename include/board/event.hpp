#pragma once
// Events: the facts a ticket's log is made of. One plain struct per kind, closed in the
// `Payload` variant; each struct names its wire `type`. The envelope (`v`, `seq`, `id`, `at`,
// `by`) is the same for all (spec/storage.md). Everything the reducer needs to decide travels
// on the event (time, policy, the parsed signal), so a fold never consults anything else.

#include <board/ticket.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace board {

/// The schema version this build writes, and the newest it reads.
inline constexpr int event_schema_version = 1;

/// Agent signals (spec §4). `BLOCKED` is kept distinct so a replay shows what was said.
enum class Signal : std::uint8_t {
    complete,
    approval_needed,
    review_requested,
    content_review,
    input_needed,
    blocked,
    escalate,
    checkpoint,
    eject,
};
std::string_view to_string(Signal);  ///< `COMPLETE`, `APPROVAL_NEEDED`, ...

enum class Verdict : std::uint8_t { approved, rejected };
std::string_view to_string(Verdict);

/// The first event of every log: a new ticket in `backlog`.
struct Created {
    static constexpr std::string_view type = "created";
    std::string ticket;  ///< the ticket id
    std::string title;
    std::string description;
    TicketType kind = TicketType::task;  ///< wire name `ticket_type`
    int priority = 2;
    std::vector<std::string> labels;
    std::string parent;
    std::vector<std::string> blocked_by;
    std::optional<Awaiting> requires_;  ///< wire name `requires`
    std::optional<Awaiting> awaiting;
    bool manual = false;  ///< legacy input: `manual` without `awaiting` reads as `awaiting: work`
    friend bool operator==(const Created&, const Created&) = default;
};

/// An agent run begins; appended before the process is launched.
struct RunStarted {
    static constexpr std::string_view type = "run-started";
    std::string run;
    Status phase = Status::research;
    int attempt = 1;
    int iteration = 1;
    RunPolicy policy;
    /// The git branch the run works on, in its worktree (`board/<ID>`); empty when it runs in
    /// the board's own checkout.
    std::string branch;
    friend bool operator==(const RunStarted&, const RunStarted&) = default;
};

/// An agent run ended. `signal` is what the signal parser chose (spec §4), `context` its text.
/// The run failed (a failed attempt) when `error` is set or `exit_code` is non-zero.
struct RunFinished {
    static constexpr std::string_view type = "run-finished";
    std::string run;
    int exit_code = 0;  ///< wire name `exit`
    bool timed_out = false;
    /// Why the run failed, in the agent's own words where it said ("API Error: 401 ...",
    /// "could not start: `claude` was not found on PATH"). May be set on a run that exited 0
    /// and still failed (an agent that reports an error as its result).
    std::string error;
    /// The failure cannot go away by retrying (a usage error, a refused credential, a program
    /// that is not installed): the ticket goes to a human at once instead of being retried.
    bool permanent = false;
    std::int64_t duration_ms = 0;
    double cost_usd = 0.0;
    /// Tokens the run used, as the agent reported them; 0 where it reports none.
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    std::int64_t cache_read_tokens = 0;   ///< input tokens served from the model's cache
    std::int64_t cache_write_tokens = 0;  ///< input tokens written to the model's cache
    std::string session;
    std::optional<Signal> signal;
    std::string context;
    friend bool operator==(const RunFinished&, const RunFinished&) = default;
};

/// The daemon stopped a run it will not judge (shutdown, crash recovery). Not an attempt.
struct RunInterrupted {
    static constexpr std::string_view type = "run-interrupted";
    std::string run;
    std::string reason;
    friend bool operator==(const RunInterrupted&, const RunInterrupted&) = default;
};

/// An artifact was written (by an agent run or by anyone). `gate` is the board's gate for
/// the phase, used when a complete artifact completes a phase outside a run.
struct ArtifactRecorded {
    static constexpr std::string_view type = "artifact-recorded";
    ArtifactKind kind = ArtifactKind::research;
    std::string path;
    ArtifactStatus status = ArtifactStatus::in_progress;
    std::string summary;
    std::string sha256;
    std::optional<Gate> gate;
    friend bool operator==(const ArtifactRecorded&, const ArtifactRecorded&) = default;
};

/// A note; who wrote it is the envelope's `by`.
struct NoteAdded {
    static constexpr std::string_view type = "note";
    std::string text;
    friend bool operator==(const NoteAdded&, const NoteAdded&) = default;
};

/// A human's verdict and its note, in one event so no agent can run between them.
struct VerdictGiven {
    static constexpr std::string_view type = "verdict";
    Verdict verdict = Verdict::approved;
    std::string note;  ///< required when rejected
    friend bool operator==(const VerdictGiven&, const VerdictGiven&) = default;
};

/// A structured question from an agent (spec §6). The timeout is resolved against `at`.
struct QuestionAsked {
    static constexpr std::string_view type = "question-asked";
    std::string question_id;  ///< wire name `question`, e.g. `q1`
    std::string question;     ///< wire name `text`
    QuestionKind kind = QuestionKind::blocking;
    ResponseType response_type = ResponseType::text;
    std::vector<QuestionOption> options;
    std::string context;
    std::optional<int> timeout_minutes;  ///< absent: the kind's default
    std::optional<std::string> default_response;
    friend bool operator==(const QuestionAsked&, const QuestionAsked&) = default;
};

struct QuestionAnswered {
    static constexpr std::string_view type = "question-answered";
    std::string question_id;  ///< wire name `question`
    std::string value;
    std::string note;
    friend bool operator==(const QuestionAnswered&, const QuestionAnswered&) = default;
};

/// Appended by the daemon once a question's `timeout_at` has passed.
struct QuestionTimedOut {
    static constexpr std::string_view type = "question-timed-out";
    std::string question_id;  ///< wire name `question`
    friend bool operator==(const QuestionTimedOut&, const QuestionTimedOut&) = default;
};

/// A person withdraws a pending question (`board cancel-question`): it was the wrong question,
/// or it no longer matters. The agent's next prompt carries the reason as a note.
struct QuestionCancelled {
    static constexpr std::string_view type = "question-cancelled";
    std::string question_id;  ///< wire name `question`
    std::string reason;
    friend bool operator==(const QuestionCancelled&, const QuestionCancelled&) = default;
};

/// Field edits. An absent field is unchanged; for `requires` and `awaiting` a present
/// nullopt means `none` (cleared).
struct Updated {
    static constexpr std::string_view type = "updated";
    std::optional<std::string> title{};
    std::optional<std::string> description{};
    std::optional<int> priority{};
    std::optional<std::vector<std::string>> labels{};
    std::optional<std::string> parent{};
    std::optional<std::vector<std::string>> blocked_by{};
    std::optional<std::optional<Awaiting>> requires_{};
    std::optional<std::optional<Awaiting>> awaiting{};
    friend bool operator==(const Updated&, const Updated&) = default;
};

/// `board start`: backlog → research, ready → planning, by hand.
struct Started {
    static constexpr std::string_view type = "started";
    friend bool operator==(const Started&, const Started&) = default;
};

/// `board move`: back to an earlier column, with a reason.
struct Moved {
    static constexpr std::string_view type = "moved";
    Status to = Status::backlog;  ///< wire name `status`
    std::string reason;
    friend bool operator==(const Moved&, const Moved&) = default;
};

struct Cancelled {
    static constexpr std::string_view type = "cancelled";
    std::string reason;
    friend bool operator==(const Cancelled&, const Cancelled&) = default;
};

struct Reopened {
    static constexpr std::string_view type = "reopened";
    std::string reason;
    friend bool operator==(const Reopened&, const Reopened&) = default;
};

/// Marks a log copied from another ticket's first `at_seq` events (`board fork`).
struct Forked {
    static constexpr std::string_view type = "forked";
    std::string from;
    std::int64_t at_seq = 0;
    std::string ticket;  ///< the new ticket's id
    friend bool operator==(const Forked&, const Forked&) = default;
};

/// The daemon shipped a done ticket's branch as board.yaml's `ship.policy` says (system only).
struct Shipped {
    static constexpr std::string_view type = "shipped";
    ShipMethod how = ShipMethod::none;
    std::string branch;
    std::string ref;  ///< the merge commit, or the pull request's address
    friend bool operator==(const Shipped&, const Shipped&) = default;
};

/// Shipping a done ticket's branch failed (a merge conflict, a refused push): the ticket goes
/// back to review, awaiting a person's work, with `reason` as a note (system only).
struct ShipFailed {
    static constexpr std::string_view type = "ship-failed";
    std::string branch;
    std::string reason;
    friend bool operator==(const ShipFailed&, const ShipFailed&) = default;
};

/// A person kept a handoff longer than board.yaml's `handoffs.<kind>.remind_after`: the board
/// records the reminder (system only), so that no restart repeats or forgets one, and then
/// runs the notify command. Refused once the ticket no longer awaits `awaiting`.
struct HandoffReminded {
    static constexpr std::string_view type = "handoff-reminded";
    Awaiting awaiting = Awaiting::work;
    int reminder = 1;  ///< 1 for the first reminder of this handoff, then 2, ...
    friend bool operator==(const HandoffReminded&, const HandoffReminded&) = default;
};

/// A handoff kept longer than `handoffs.<kind>.escalate_after` goes to `escalate_to` as well
/// (system only, once per handoff). The ticket still awaits the same kind and verdict: whoever
/// it is escalated to decides it as the first person would.
struct HandoffEscalated {
    static constexpr std::string_view type = "handoff-escalated";
    Awaiting awaiting = Awaiting::work;
    std::vector<std::string> to;  ///< names; empty: whoever reads the board
    friend bool operator==(const HandoffEscalated&, const HandoffEscalated&) = default;
};

using Payload = std::variant<Created,
                             RunStarted,
                             RunFinished,
                             RunInterrupted,
                             ArtifactRecorded,
                             NoteAdded,
                             VerdictGiven,
                             QuestionAsked,
                             QuestionAnswered,
                             QuestionTimedOut,
                             Updated,
                             Started,
                             Moved,
                             Cancelled,
                             Reopened,
                             Forked,
                             Shipped,
                             ShipFailed,
                             HandoffReminded,
                             HandoffEscalated,
                             QuestionCancelled>;

/// One line of a log: the envelope and the payload.
struct Event {
    int v = event_schema_version;
    std::int64_t seq = 0;
    std::string id;  ///< unique; a retried append with the same id is a no-op
    UnixMillis at = 0;
    Actor by;
    Payload payload;
    friend bool operator==(const Event&, const Event&) = default;
};

/// An event as a writer makes it, before the log stamps its seq, id and time: who it is by
/// and what it says. A batch may mix authors (a run's outcome carries the agent's and the
/// board's).
struct Authored {
    Actor by;
    Payload payload;
};

/// The wire `type` of an event's payload.
std::string_view type_name(const Payload&);

}  // namespace board
