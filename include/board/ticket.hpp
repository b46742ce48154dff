#pragma once
// The ticket: the state a log folds to. Plain values only, so a ticket can be compared,
// copied into a snapshot and printed; every rule that changes it lives in reduce().
//
// Field and enumerator names follow the wire names of spec/state-machine.md §2; the
// to_string/parse pairs below are the single source of those spellings.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace board {

/// Milliseconds since the Unix epoch, UTC. Time only ever enters the model on an event.
using UnixMillis = std::int64_t;

/// The columns, in board order (earlier column = smaller value).
enum class Status : std::uint8_t { backlog, research, ready, planning, implementing, review, done };
inline constexpr std::array all_statuses{Status::backlog,
                                         Status::research,
                                         Status::ready,
                                         Status::planning,
                                         Status::implementing,
                                         Status::review,
                                         Status::done};

/// The statuses in which an agent works (spec §3).
constexpr bool is_agent_phase(Status s) {
    return s == Status::research || s == Status::planning || s == Status::implementing ||
           s == Status::review;
}

enum class Resolution : std::uint8_t { completed, wont_do };

/// How a done ticket's branch left the board (board.yaml `ship.policy`): merged into the base
/// branch, offered as a pull request, or left where it is.
enum class ShipMethod : std::uint8_t { none, merge, pr };

/// A ticket's branch, shipped.
struct Shipment {
    ShipMethod how = ShipMethod::none;
    std::string branch;
    std::string ref;  ///< the merge commit, or the pull request's address; empty for none
    UnixMillis at = 0;
    friend bool operator==(const Shipment&, const Shipment&) = default;
};

/// Whose turn it is when not the agent's. The ticket's `awaiting` is absent for the agent.
enum class Awaiting : std::uint8_t {
    work,
    approval,
    input,
    review,
    content,
    escalation,
    checkpoint
};
inline constexpr std::array all_awaitings{Awaiting::work,
                                          Awaiting::approval,
                                          Awaiting::input,
                                          Awaiting::review,
                                          Awaiting::content,
                                          Awaiting::escalation,
                                          Awaiting::checkpoint};

/// Why the ticket awaits a human: the rules for a verdict depend on it (spec §3, §5, §6).
enum class Handoff : std::uint8_t {
    signal,    ///< an agent signalled it, or a human set it with `update --awaiting`
    gate,      ///< a phase gate of the board policy: approving passes the gate
    question,  ///< a pending blocking question: answered with `board answer`, not a verdict
    system,    ///< the board escalated (budget, attempts, iterations, a timed-out question)
};

enum class Gate : std::uint8_t { none, checkpoint, approval };

enum class TicketType : std::uint8_t { task, bug, feature, chore, epic };

enum class ArtifactKind : std::uint8_t { research, plan, implementation_log, review };
inline constexpr std::array all_artifact_kinds{ArtifactKind::research,
                                               ArtifactKind::plan,
                                               ArtifactKind::implementation_log,
                                               ArtifactKind::review};

enum class ArtifactStatus : std::uint8_t { in_progress, complete, rejected };

enum class ActorKind : std::uint8_t { human, agent, system };

enum class QuestionKind : std::uint8_t { blocking, non_blocking, approval, error_recovery };
enum class ResponseType : std::uint8_t { text, choice, boolean, approval };
enum class QuestionStatus : std::uint8_t { pending, answered, timed_out, cancelled };

/// Who wrote an event: `human:<name>`, `agent:<phase>` or `system`.
struct Actor {
    ActorKind kind = ActorKind::system;
    std::string name;  ///< the human's name or the agent's phase; empty for system
    friend bool operator==(const Actor&, const Actor&) = default;
};

struct Artifact {
    std::string path;  ///< relative to the ticket folder, e.g. `research.md`
    ArtifactStatus status = ArtifactStatus::in_progress;
    std::string summary;
    std::string sha256;  ///< hex digest of the content when it was recorded
    UnixMillis created_at = 0;
    UnixMillis updated_at = 0;
    friend bool operator==(const Artifact&, const Artifact&) = default;
};

struct Note {
    ActorKind from = ActorKind::human;
    std::string author;  ///< the human's name or the agent's phase; empty for system
    std::string text;
    UnixMillis at = 0;
    friend bool operator==(const Note&, const Note&) = default;
};

struct QuestionOption {
    std::string id;
    std::string label;
    std::string value;
    std::string description;
    friend bool operator==(const QuestionOption&, const QuestionOption&) = default;
};

struct Question {
    std::string id;  ///< local to the ticket (`q1`); the CLI shows it as `PROJ-12.q1`
    std::string question;
    QuestionKind kind = QuestionKind::blocking;
    ResponseType response_type = ResponseType::text;
    std::vector<QuestionOption> options;
    std::string context;
    std::optional<std::string> default_response;
    UnixMillis asked_at = 0;
    std::optional<UnixMillis> timeout_at;  ///< absent: never times out
    QuestionStatus status = QuestionStatus::pending;
    std::string answer;
    Actor answered_by;
    UnixMillis answered_at = 0;
    friend bool operator==(const Question&, const Question&) = default;
};

namespace detail {

/// Where each question id sits in `Ticket::questions`, and how many leading questions are
/// settled, so that the reducer finds a question, refuses a duplicate id and finds the pending
/// ones without scanning a long history (a scan per event made a replay quadratic in the
/// ticket's questions). A cache, not state: every index compares equal, the codec does not
/// see it, a copy starts empty. The reducer checks it against `questions` before each use and
/// rebuilds it when the vector is another buffer or shorter than what was indexed, so
/// appending, replacing or truncating `questions` is safe. Rewriting a question's id in place,
/// or making a settled question pending again, is not: the reducer never does either (ids are
/// identities, and a question is answered, timed out or cancelled once).
class QuestionIndex {
public:
    QuestionIndex() = default;

    QuestionIndex(const QuestionIndex&) noexcept {}

    QuestionIndex& operator=(const QuestionIndex& other) noexcept {
        if (this != &other) reset();
        return *this;
    }

    QuestionIndex(QuestionIndex&& other) noexcept
        : positions_(std::move(other.positions_))
        , buffer_(std::exchange(other.buffer_, nullptr))
        , indexed_(std::exchange(other.indexed_, 0))
        , settled_(std::exchange(other.settled_, 0)) {}

    QuestionIndex& operator=(QuestionIndex&& other) noexcept {
        positions_ = std::move(other.positions_);
        buffer_ = std::exchange(other.buffer_, nullptr);
        indexed_ = std::exchange(other.indexed_, 0);
        settled_ = std::exchange(other.settled_, 0);
        return *this;
    }

    ~QuestionIndex() = default;

    // Defined in the reducer.
    /// The last question in `questions` with this id, or null.
    Question* find(std::vector<Question>& questions, std::string_view id);
    /// The position of the first question that is still pending (or the size): every one
    /// before it is settled.
    std::size_t first_unsettled(const std::vector<Question>& questions);

    friend bool operator==(const QuestionIndex&, const QuestionIndex&) noexcept { return true; }

private:
    struct Hash {
        using is_transparent = void;

        std::size_t operator()(std::string_view s) const noexcept {
            return std::hash<std::string_view>{}(s);
        }
    };

    void reset() noexcept {
        positions_.clear();
        buffer_ = nullptr;
        indexed_ = 0;
        settled_ = 0;
    }

    /// Resets the index unless `questions` is the vector it indexed (same buffer, no shorter).
    void check(const std::vector<Question>& questions) noexcept;

    std::unordered_map<std::string, std::size_t, Hash, std::equal_to<>> positions_;
    const void* buffer_ = nullptr;  ///< questions.data() when indexed
    std::size_t indexed_ = 0;       ///< questions[0, indexed_) are in positions_
    std::size_t settled_ = 0;       ///< questions[0, settled_) are not pending
};

}  // namespace detail

/// The limits a run was started under. They travel on the `run-started` event so a replay
/// decides exactly as the daemon did, even after board.yaml has changed.
struct RunPolicy {
    Gate gate = Gate::none;  ///< the gate of the run's phase
    int max_iterations = 10;
    int max_attempts = 3;
    double max_cost_usd = 10.0;  ///< per ticket; 0 = unlimited
    bool review_agent = true;    ///< implementing → review runs the review-prep agent first
    friend bool operator==(const RunPolicy&, const RunPolicy&) = default;
};

/// The agent run in flight.
struct Run {
    std::string id;
    Status phase = Status::research;
    UnixMillis started_at = 0;
    RunPolicy policy;
    friend bool operator==(const Run&, const Run&) = default;
};

/// A ticket's artifact per kind, kept off the ticket until the first one is recorded: four
/// empty slots inline were half of a Ticket's size, and a board-wide query holds 10,000
/// tickets whose artifacts it never reads. A value: copies copy the slots, == compares them.
class ArtifactSlots {
public:
    using Slots = std::array<std::optional<Artifact>, all_artifact_kinds.size()>;

    ArtifactSlots() = default;

    ArtifactSlots(const ArtifactSlots& other)
        : slots_(other.slots_ ? std::make_unique<Slots>(*other.slots_) : nullptr) {}

    ArtifactSlots& operator=(const ArtifactSlots& other) {
        if (this != &other)
            slots_ = other.slots_ ? std::make_unique<Slots>(*other.slots_) : nullptr;
        return *this;
    }

    ArtifactSlots(ArtifactSlots&&) noexcept = default;
    ArtifactSlots& operator=(ArtifactSlots&&) noexcept = default;
    ~ArtifactSlots() = default;

    static constexpr std::size_t size() { return all_artifact_kinds.size(); }

    /// The slot of kind index `k` (< size()); an empty optional when none was recorded.
    const std::optional<Artifact>& operator[](std::size_t k) const {
        static const std::optional<Artifact> none;
        return slots_ ? (*slots_)[k] : none;
    }

    /// The slot to write; the slots are allocated on first use.
    std::optional<Artifact>& operator[](std::size_t k) {
        if (!slots_) slots_ = std::make_unique<Slots>();
        return (*slots_)[k];
    }

    friend bool operator==(const ArtifactSlots& a, const ArtifactSlots& b) {
        for (std::size_t k = 0; k < size(); ++k)
            if (a[k] != b[k]) return false;
        return true;
    }

private:
    std::unique_ptr<Slots> slots_;
};

/// What board-wide queries read of a ticket: every field next_action(), queue_key(), a
/// standing and `list` read. A Ticket is its summary plus its bulk, so a catalog of a big
/// board holds summaries and the same functions decide on either. A summary made by
/// summarize() leaves `run`'s policy at its default: a run's limits matter to its outcome,
/// not to what a query shows.
struct TicketSummary {
    std::string id;  ///< empty until the `created` event
    std::string title;
    TicketType type = TicketType::task;
    int priority = 2;
    std::vector<std::string> labels;
    std::string parent;
    std::vector<std::string> blocked_by;

    Status status = Status::backlog;
    std::optional<Resolution> resolution;
    std::optional<Awaiting> awaiting;
    Handoff handoff = Handoff::signal;  ///< meaningful only while `awaiting` is set
    /// When the ticket was handed to a person as it awaits now (the event that set `awaiting`
    /// or changed its type); 0 while it is the agent's turn. Handoff service levels count
    /// from it. The fields below it describe the same handoff and are reset with it.
    UnixMillis awaiting_since = 0;
    int reminders = 0;                      ///< `handoff-reminded` events of this handoff
    UnixMillis reminded_at = 0;             ///< the last of them
    UnixMillis escalated_at = 0;            ///< `handoff-escalated`: when; 0 when not escalated
    std::vector<std::string> escalated_to;  ///< and to whom (empty: to whoever reads the board)
    std::optional<Awaiting> requires_;      ///< wire name `requires` (a C++20 keyword)

    int phase_attempts = 0;
    int phase_iterations = 0;
    UnixMillis phase_started_at = 0;
    std::optional<UnixMillis> last_failure_at;  ///< for retry backoff
    std::optional<Run> run;
    double cost_usd = 0.0;
    int runs_total = 0;

    /// The git branch its implementing work is on (`board/<ID>`), from the last run that ran
    /// in a worktree; empty when none did.
    std::string branch;
    /// Done with a branch not yet shipped: the daemon owes it a `shipped` (or `ship-failed`).
    bool ship_owed = false;

    UnixMillis created_at = 0;
    UnixMillis updated_at = 0;
    std::int64_t seq = 0;

    friend bool operator==(const TicketSummary&, const TicketSummary&) = default;
};

/// The whole ticket: its summary, and the bulk `show` reads and queries do not.
struct Ticket : TicketSummary {
    std::string description;
    ArtifactSlots artifacts;
    std::vector<Note> notes;
    std::vector<Question> questions;
    UnixMillis last_run_ended_at = 0;  ///< when the last run finished or was interrupted
    std::string last_session;          ///< the agent's own session id from its last run
    std::optional<Shipment> shipped;

    /// The reducer's lookup of `questions` by id: not state, not serialized, ignored by ==.
    detail::QuestionIndex question_index;

    const std::optional<Artifact>& artifact(ArtifactKind k) const {
        return artifacts[static_cast<std::size_t>(k)];
    }

    std::optional<Artifact>& artifact(ArtifactKind k) {
        return artifacts[static_cast<std::size_t>(k)];
    }

    friend bool operator==(const Ticket&, const Ticket&) = default;
};

/// True if `id` matches `^[A-Z][A-Z0-9]{0,15}-[0-9]{1,9}$`: safe to use as a folder name.
bool is_valid_ticket_id(std::string_view id);

/// The artifact an agent phase must produce, if any.
std::optional<ArtifactKind> artifact_of(Status phase);

/// Wire spellings. parse_* return nullopt for anything else (case-sensitive).
std::string_view to_string(Status);
std::string_view to_string(Resolution);
std::string_view to_string(ShipMethod);
std::string_view to_string(Awaiting);
std::string_view to_string(Handoff);
std::string_view to_string(Gate);
std::string_view to_string(TicketType);
std::string_view to_string(ArtifactKind);
std::string_view to_string(ArtifactStatus);
std::string_view to_string(ActorKind);
std::string_view to_string(QuestionKind);
std::string_view to_string(ResponseType);
std::string_view to_string(QuestionStatus);

template <class Enum>
std::optional<Enum> parse(std::string_view text);

/// `board/<id>`: the git branch a ticket's work is done on, in its worktree.
std::string ticket_branch(std::string_view id);

/// `human:ana`, `agent:research`, `system`.
std::string to_string(const Actor&);
/// The inverse of to_string; nullopt when is_valid_actor would be false.
std::optional<Actor> parse_actor(std::string_view text);
/// A human or agent has a name of one or more printable, non-space characters; `system` has
/// none. Only such an actor can be written to a log and read back.
bool is_valid_actor(const Actor&);

}  // namespace board
