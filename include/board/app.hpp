#pragma once
// The application layer: the board as a service, under every front end. The `board` CLI parses
// flags, calls it and renders; the HTTP API routes to it and encodes JSON; the daemon reads
// through it. Each call takes a typed request and returns a typed result or a Refusal (a kind
// and one sentence): never an exit code, never rendered text. Every rule a front end would
// otherwise restate (who may write what, what an id must look like, which tickets a query
// names, how an epic's completion is derived) is here, once.
//
// Writes go through board::transact (the reducer decides under the ticket's lock; a refusal
// writes nothing), then refresh the ticket's `ticket.json` for people and tools.
//
// Threading: a Board is used from one thread at a time. LiveBoard (below) is the one kept,
// live board a long-running process (board-daemon and its HTTP server) shares.

#include <board/catalog.hpp>
#include <board/event.hpp>
#include <board/expected.hpp>
#include <board/stats.hpp>
#include <board/ticket.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace board::app {

/// Why a request was not carried out.
struct Refusal {
    enum class Kind {
        invalid,    ///< the request is malformed (an unknown status, a bad question id)
        not_found,  ///< no such ticket or question (or an id that cannot name one)
        refused,    ///< the rules say no (the reducer, a cycle, a blank rejection)
        conflict,   ///< the ticket moved on since the caller decided: decide again
        storage,    ///< the disk or board.yaml failed; nothing was decided
    };
    Kind kind = Kind::refused;
    /// One sentence naming the action and the cause, e.g. `approve P-4: the ticket is not
    /// awaiting a human`.
    std::string message;
    std::vector<std::string> warnings;  ///< what a caller should still show (tickets left out)
};

template <class T>
using Result = Expected<T, Refusal>;

/// The `board` command's exit code for a refusal of this kind (spec/cli.md: 1 refused or
/// unknown, 2 usage, 3 storage); the HTTP API reports it too, beside its status code.
int exit_code_of(Refusal::Kind kind);

using board::Authored;

/// Builds the events to append from the ticket as it is on disk now; empty: nothing to do.
/// Called under the ticket's lock: quick, and no I/O on that ticket.
using Author = std::function<std::vector<Authored>(const Ticket&)>;

/// Events appended, and the ticket after them.
struct Recorded {
    std::shared_ptr<const Ticket> ticket;
    std::vector<Event> events;
    std::vector<std::string> warnings;
};

/// A write that was carried out.
struct Written {
    Ticket ticket;  ///< after the write
    std::vector<std::string> warnings;
};

// ---------------------------------------------------------------------------------------------
// Requests

struct CreateRequest {
    std::string title;
    std::string description;
    std::string type = "task";
    int priority = 2;
    std::vector<std::string> labels;
    std::string parent;
    std::vector<std::string> blocked_by;
    std::string requires_;  ///< wire spelling, empty for none
    std::string awaiting;   ///< wire spelling, empty for none
    bool manual = false;    ///< deprecated: means awaiting work
};

/// `update` as given; absent = unchanged. `requires_`/`awaiting` take a type or `none`.
struct UpdateRequest {
    std::optional<std::string> title, description;
    std::optional<int> priority;
    std::optional<std::vector<std::string>> labels;
    std::optional<std::string> parent;
    std::optional<std::vector<std::string>> blocked_by;
    std::optional<std::string> requires_;
    std::optional<std::string> awaiting;
};

/// Whose a note is. A person's note by default comes from the agent of the ticket's column
/// (the seeds' default: notes are the agent's unless said otherwise).
enum class NoteFrom { human, agent };

/// `import-ticks`: a `.tick/` folder of `tk` (ticks) becomes tickets on this board.
struct ImportTicksRequest {
    std::filesystem::path source;  ///< the `.tick` folder, or the folder that holds it
    bool dry_run = false;          ///< parse, check and report; write nothing
};

struct NextRequest {
    NextFilter filter;
    bool human = false;           ///< the human side: the next ticket awaiting a person
    std::vector<Awaiting> types;  ///< with `human`: only these (empty: any)
};

/// A reviewer's remark on one line of a ticket's diff (`board reject --comment`, the page's
/// diff view).
struct LineComment {
    std::string file;  ///< as the diff names it, e.g. `src/retry.cpp`
    int line = 0;      ///< in the new version of the file, from 1
    std::string text;
};

/// `FILE:LINE:TEXT` (the CLI's `--comment`); nullopt with `error` set otherwise.
std::optional<LineComment> parse_line_comment(std::string_view text, std::string& error);

/// The feedback with the comments after it, one `- file:line: text` bullet each; the feedback
/// alone when there are none. Refused (a sentence) when a comment has no file, a line below
/// 1 or blank text.
Result<std::string> feedback_with_comments(const std::string& feedback,
                                           const std::vector<LineComment>& comments);

// ---------------------------------------------------------------------------------------------
// Results of reads

/// What a ticket awaiting a person asks of them (the inbox, `next --awaiting`, `show`, the
/// notify payload): the kind, who asked and in what words, the questions to answer or the
/// artifact to judge, since when, and what to type.
struct HumanRequest {
    Awaiting kind = Awaiting::work;
    Handoff handoff = Handoff::signal;
    std::string asked_by;  ///< `agent:planning`, `system`; empty when a person set it
    /// The asker's last note since the phase began: a signal's context, an escalation's
    /// reason with the last error, a failed shipping. Empty when they said nothing.
    std::string words;
    std::vector<Question> questions;    ///< pending questions awaiting an answer
    std::optional<Artifact> artifact;   ///< what to judge: the phase's own artifact
    UnixMillis since = 0;               ///< the ticket's last change
    std::vector<std::string> commands;  ///< what to type, e.g. `board answer PROJ-3.q1 VALUE`
};

/// The request of a ticket that awaits a person; nullopt when it does not.
std::optional<HumanRequest> request_of(const Ticket& ticket);

/// How the board has chased the ticket's request (handoff service levels), for people:
/// `reminded 2 times`, `escalated to carol`; empty when it has not.
std::vector<std::string> handoff_chases(const TicketSummary& ticket);

/// The request as one JSON object (`kind`, `handoff`, `asked_by`, `words`, `questions` with
/// their options, `artifact`, `since`, `commands`).
std::string request_json(const HumanRequest& request);

/// Why a ticket is where it is and what would move it: the one answer `show`, `list`'s TURN
/// column, the page's cards and the daemon's status line give (docs/semantics.md, "Why a
/// ticket is not moving"). Derived from the board and its policy alone.
struct Standing {
    enum class Kind : std::uint8_t {
        done,
        shipping,     ///< done; the daemon owes its branch a ship
        epic,         ///< a container: moves when its children do
        awaiting,     ///< a person's turn (request_of says what for)
        running,      ///< an agent is at work on it
        blocked,      ///< a `blocked_by` ticket is not done
        manual,       ///< backlog/ready with its auto flag off: a person starts it
        wip_held,     ///< the column it would enter is full, or its agents are all busy
        backing_off,  ///< its last attempt failed: no run before `until`
        agent_next,   ///< the daemon starts its next run when it gets to it
    };
    Kind kind = Kind::agent_next;
    /// A few characters for a table cell or a card: `agent`, `wip 2/2`, `blocked`, `review`.
    std::string turn;
    /// One sentence: what it waits for, since when or until when, and what would move it.
    std::string why;
    std::vector<std::string> blockers;  ///< blocked: the blocking tickets not done
    UnixMillis until = 0;               ///< backing_off: no run before this
};

std::string_view to_string(Standing::Kind kind);

/// Standings of tickets on one board under one policy at wall time `now`: the columns are
/// counted once, then each ticket is answered in O(its blockers).
class Standings {
public:
    Standings(const Catalog& catalog, const Policy& policy, UnixMillis now);
    Standing of(const TicketSummary& ticket) const;

private:
    const Catalog& catalog_;
    const Policy& policy_;
    UnixMillis now_;
    BoardFacts counts_;
};

/// `{"kind","turn","why","blockers","until"}` (`until` only while backing off).
std::string standing_json(const Standing& standing);

/// Which events a timeline (`board log --all`) keeps. Empty members do not filter.
struct TimelineFilter {
    std::optional<UnixMillis> since;  ///< at or after
    std::vector<std::string> types;   ///< any of these event types (`verdict`, `run-finished`)
    /// The actor: `human` (any person), `human:ana`, `agent`, `agent:planning`, `system`.
    std::string by;
};

/// Whether `event` passes `filter`.
bool keeps(const TimelineFilter& filter, const Event& event);

/// One event of the board's timeline, with the ticket it belongs to.
struct TimelineEntry {
    std::string ticket;
    Event event;
};

struct Timeline {
    std::vector<TimelineEntry> entries;  ///< by time, then ticket, then seq
    std::vector<std::string> warnings;   ///< tickets whose logs did not read
};

/// `--since` (log, stats) and `?since=`: a time (`2026-11-26T05:00:00Z`) or how long before
/// `now` (`2h`, `168h`); nullopt for anything else.
std::optional<UnixMillis> parse_since(std::string_view text, UnixMillis now);

/// `board stats`: the figures, and the tickets whose logs did not read.
struct StatsReport {
    BoardStats stats;
    std::vector<std::string> warnings;
};

/// `board stats --json`: the figures alone (warnings go where the caller's go).
inline std::string to_json(const StatsReport& report) {
    return to_json(report.stats);
}

/// `board why ID`: the one reason a ticket is where it is and what would move it, with what a
/// person weighs next to it: what it asks (if anything), its budget spent of its limits, the
/// gate of its phase, and the last failed run.
struct Why {
    Ticket ticket;
    Standing standing;
    std::optional<HumanRequest> request;
    Policy policy;  ///< board.yaml's, which the daemon applies now
    /// The phase's gate when the ticket waits at it (`gates.planning: approval`), else none.
    std::optional<Gate> gate;
    /// The newest run that failed (exit, timeout, error), as `run 0003 (research): ...`.
    std::string last_failure;
    std::vector<std::string> warnings;
};

/// `{id, status, standing, request?, budget: {cost_usd, max_cost_usd, attempts, max_attempts,
/// iterations, max_iterations}, gate?, last_failure?}`.
std::string to_json(const Why& why);

/// Tickets a board-wide query picked, and the board they were picked from (rendering asks it
/// for an epic's progress, whether a blocker is done, whose turn it is).
struct Picked {
    std::shared_ptr<const Catalog> catalog;
    std::vector<const CatalogEntry*> entries;  ///< into *catalog
    std::vector<std::string> warnings;         ///< tickets left out and why
    /// inbox(): what each entry asks of a person (request_of), in `entries` order; written
    /// as each entry's `request`. Empty for the other queries.
    std::vector<std::optional<HumanRequest>> requests;
    /// The board's policy and the time of the read: each entry is written with its
    /// `standing`. None when board.yaml did not load (a warning says so).
    std::optional<Policy> policy;
    UnixMillis now = 0;
};

/// The earliest time after `picked.now` at which a standing written for `picked` changes with
/// nothing else changing (a backoff ends); none when none will.
std::optional<UnixMillis> standings_change_at(const Picked& picked);

/// `next`: the whole ticket, or none.
struct Next {
    std::optional<Ticket> ticket;
    std::vector<std::string> warnings;
};

/// Tickets with questions (every question, or only pending ones), in `list` order.
struct Asked {
    std::vector<Ticket> tickets;
    bool pending_only = false;
    std::vector<std::string> warnings;
};

/// One ticket with its log.
struct TicketView {
    Ticket ticket;              ///< the fold of the first `folded` events
    std::vector<Event> events;  ///< the whole log
    std::size_t folded = 0;
    /// For an epic: its children (state-machine.md §7: an epic is done when all its children
    /// are, derived not stored), and whether that makes it done though its log does not say so.
    std::optional<EpicProgress> epic;
    bool done_by_children = false;
    /// Why it is where it is (the current state only, not a replay step); none when the
    /// board or board.yaml did not load (a warning says so).
    std::optional<Standing> standing;
    std::vector<std::string> warnings;
};

/// One agent run of a ticket, from its log: how it started and ended, and its files.
struct RunView {
    std::string id;  ///< `0003`
    Status phase = Status::research;
    int attempt = 1;
    int iteration = 1;
    std::string branch;  ///< the git branch it worked on, if any
    UnixMillis started_at = 0;
    /// finished, interrupted, or empty while in flight.
    std::string end;
    UnixMillis ended_at = 0;
    std::optional<Signal> signal;
    int exit_code = 0;
    bool timed_out = false;
    std::string error;  ///< why it failed, or was interrupted
    double cost_usd = 0.0;
    std::int64_t duration_ms = 0;
    std::filesystem::path prompt_file;  ///< `tickets/<ID>/runs/<run>-<phase>.prompt.md`
    std::filesystem::path log_file;     ///< what the agent printed: `...<run>-<phase>.log`
};

/// The runs as one JSON array (`board runs --json`).
std::string runs_json(const std::vector<RunView>& runs);

/// A ticket's log as read: the events before any fault, the fault, what was recovered.
struct History {
    std::vector<Event> events;
    std::vector<std::string> warnings;  ///< e.g. a torn tail recovered into events.jsonl.torn
    std::uint64_t torn_bytes = 0;       ///< bytes of a torn tail this read moved aside
};

/// Every check `verify` makes of one ticket without trusting any cache.
struct VerifyReport {
    std::string ticket;
    std::vector<std::string> faults;    ///< real problems
    std::vector<std::string> warnings;  ///< worth knowing: edited artifacts, long logs
    bool unknown = false;               ///< no such ticket (or not an id): nothing to check
};

/// A field or value of a tick the board has no place for.
struct UnmappedField {
    std::string tick;   ///< the tick's id
    std::string field;  ///< e.g. `after`, `blocked_by`, `unknown field x`
    std::string value;  ///< the value as JSON text
    std::string why;
    friend bool operator==(const UnmappedField&, const UnmappedField&) = default;
};

/// What an import of ticks did (or, dry, would do).
struct ImportReport {
    struct Imported {
        std::string tick;  ///< the tick's id
        std::string id;    ///< the ticket it became
        std::string title;
        std::string status;  ///< as people read it: `done/completed`, `backlog (awaiting work)`
    };

    std::filesystem::path source;  ///< the `.tick` folder read
    bool dry_run = false;
    std::vector<Imported> imported;
    std::vector<UnmappedField> unmapped;       ///< every field the board cannot say, never dropped
    std::vector<std::string> fields_not_kept;  ///< tk's fields no tick keeps (owner...)
    std::vector<std::string> warnings;
    /// Writing stopped part way (the board became unwritable): the tickets above were
    /// written, the rest were not.
    std::optional<Refusal> stopped;
};

// ---------------------------------------------------------------------------------------------

/// Creates `dir/board.yaml` (commented defaults) and `dir/tickets/`. Refuses an existing board.
Result<std::filesystem::path> init_board(const std::filesystem::path& dir,
                                         const std::string& prefix);

/// Why `title` cannot be a ticket's title, or nullopt: one line with something on it. Checked
/// where people and agents type titles, not by the reducer, so that no log that replayed
/// yesterday stops replaying today.
std::optional<std::string> title_error(std::string_view title);

/// Nothing but spaces, tabs and line breaks.
bool is_blank(std::string_view text);

/// A person's name as an actor: non-empty, printable, no spaces, no `:` (it becomes
/// `human:<name>`).
bool is_valid_person_name(std::string_view name);

/// A comma-separated value: `a, b,,c` → a, b, c (spaces around an item are not part of it).
std::vector<std::string> split_list(std::string_view text);
/// `backlog,review` → the statuses; nullopt if any is unknown.
std::optional<std::vector<Status>> parse_status_list(std::string_view text);
/// `work,approval` → the types; nullopt if any is unknown. Empty text is the empty list.
std::optional<std::vector<Awaiting>> parse_awaiting_list(std::string_view text);

/// The board at a root folder (holding board.yaml). Every board-wide read loads the board
/// afresh from its logs (see load_catalog: the index is checked against every log).
class Board {
public:
    explicit Board(std::filesystem::path root);
    virtual ~Board() = default;
    Board(const Board&) = delete;
    Board& operator=(const Board&) = delete;

    const std::filesystem::path& root() const { return root_; }

    // Board-wide reads.
    /// With `for_person`, only the requests that are theirs (is_for: board.yaml's
    /// `reviewers` of the kind, or escalated to them); a board.yaml that does not load refuses.
    Result<Picked> list(const ListFilter& filter, std::string_view for_person = {});
    Result<Picked> ready(const NextFilter& filter);
    /// Everything awaiting a person, the longest waiting first.
    Result<Picked> inbox();
    Result<Next> next(const NextRequest& request);
    Result<Asked> questions(bool pending_only);

    // One ticket.
    /// The ticket and its log; with `until`, its state after that seq (a replay step).
    Result<TicketView> show(const std::string& id, std::optional<std::int64_t> until = {});
    Result<History> history(const std::string& id);
    /// Every agent run of a ticket, oldest first.
    Result<std::vector<RunView>> runs(const std::string& id);
    /// Every ticket's events that pass `filter`, merged by time (`board log --all`).
    Result<Timeline> timeline(const TimelineFilter& filter);
    /// Every ticket's log measured and summed over `[since, now]` (`board stats`).
    Result<StatsReport> stats(UnixMillis since, UnixMillis now);
    /// Why the ticket is where it is and what would move it (`board why`).
    Result<Why> why(const std::string& id);
    /// The ticket's branch against the branch it ships into (`git diff BASE...board/<ID>`,
    /// `--stat` when `stat`): what a reviewer reads. Refused when the ticket has no branch.
    Result<std::string> diff(const std::string& id, bool stat);
    /// Each of `ids` (every ticket folder when empty, and any folder that is not a ticket id).
    std::vector<VerifyReport> verify(const std::vector<std::string>& ids);
    /// The folder of a ticket on this board, or not_found.
    Result<std::filesystem::path> ticket_folder(std::string_view action, const std::string& id);

    // Writes, as `by`.
    Result<Written> create(const CreateRequest& request, const Actor& by);
    Result<Written> approve(const std::string& id, const std::string& note, const Actor& by);
    /// `comments` (a reviewer's remarks on lines of the diff) are written into the feedback,
    /// each as `file:line: text`, so the next run's prompt carries them with the rest.
    Result<Written> reject(const std::string& id,
                           const std::string& feedback,
                           const Actor& by,
                           const std::vector<LineComment>& comments = {});
    Result<Written> note(const std::string& id,
                         const std::string& text,
                         NoteFrom from,
                         const Actor& by);
    /// `question` is `PROJ-12.q1`.
    /// Withdraws a pending question (`TICKET.qN`), with an optional reason for the agent.
    Result<Written> cancel_question(const std::string& question,
                                    const std::string& reason,
                                    const Actor& by);
    Result<Written> answer(const std::string& question,
                           const std::string& value,
                           const std::string& note,
                           const Actor& by);
    Result<Written> update(const std::string& id, const UpdateRequest& request, const Actor& by);
    Result<Written> start(const std::string& id, const Actor& by);
    Result<Written> move(const std::string& id,
                         const std::string& status,
                         const std::string& reason,
                         const Actor& by);
    Result<Written> cancel(const std::string& id, const std::string& reason, const Actor& by);
    Result<Written> reopen(const std::string& id, const std::string& reason, const Actor& by);
    /// A new ticket whose log is the first `at_seq` events of `id`'s and a `forked` marker.
    Result<Written> fork(const std::string& id, std::int64_t at_seq, const Actor& by);
    /// Each tick of `request.source` as a ticket, its log reproducing the tick's state. The
    /// source is only read. Every tick file is parsed and every ticket's events are folded
    /// before anything is written: a malformed tick, an event the reducer refuses, or ticks
    /// already on the board (their `tk:<id>` label) refuse the whole import, nothing written
    /// (`refused`; `invalid` when the folder holds no `.tick/issues`). Then each ticket is one
    /// durable append, parents and blockers first. Only a person imports (a verdict is among
    /// the events). A write that fails part way ends the report with `stopped`.
    Result<ImportReport> import_ticks(const ImportTicksRequest& request, const Actor& by);

    /// The write of a program acting on the board (board-daemon): what `build` makes of the
    /// ticket as it is on disk, appended as one durable batch; `build` is called once, under
    /// the log's lock, so no other writer comes between what it read and what it appends.
    /// With `expected_seq`, only while the ticket is still at that seq (else `conflict`). An empty
    /// batch is `conflict` too: nothing left to do. `ticket.json` is refreshed unless
    /// `refresh_snapshot` is false (a run's start leaves it to the run's end).
    Result<Recorded> record(const std::string& id,
                            const Author& build,
                            std::optional<std::int64_t> expected_seq = {},
                            bool refresh_snapshot = true);

protected:
    /// The board's tickets for a board-wide read. This class loads them afresh every time.
    virtual Result<std::shared_ptr<const CatalogLoad>> board_wide(std::string_view action);

    /// The board loaded afresh from its logs (load_catalog).
    Result<CatalogLoad> load_fresh(std::string_view action);

    /// Called after every write through this board, with the ticket written.
    virtual void written(const std::string& id) { (void)id; }

private:
    Result<Written> write(std::string_view action,
                          const std::string& id,
                          const Actor& by,
                          const std::vector<Payload>& payloads);
    Result<Written> committed(const std::filesystem::path& dir, Ticket ticket);
    /// Why `ticket` (as folded now) is where it is; loads the board only when it matters.
    std::optional<Standing> standing_now(const Ticket& ticket, std::vector<std::string>& warnings);
    /// Every ticket's whole log, handed to `visit(id, events)` (which may move from them);
    /// a log that does not read is a warning. A refusal only when `tickets/` cannot be listed.
    std::optional<Refusal> each_history(
        std::string_view action,
        std::vector<std::string>& warnings,
        const std::function<void(const std::string&, std::vector<Event>&)>& visit);

    std::filesystem::path root_;
};

/// The one kept board of a long-running process: loaded once, then kept current ticket by
/// ticket as the process learns of changes (the daemon's inotify watch and its own writes, the
/// HTTP server's writes). A board-wide read folds only the tickets changed since the last; a
/// ticket the board has not seen, or one whose log no longer reads, reloads the board.
class LiveBoard : public Board {
public:
    using Board::Board;

    /// `id`'s log may have changed: the next board-wide read reads it again.
    void ticket_changed(std::string_view id);
    /// `ticket` is the fold of its log as it is now (the caller just folded or wrote it).
    void ticket_is(const Ticket& ticket);
    /// Anything may have changed (a rescan found logs nobody reported): reload everything.
    void everything_changed();

    /// The board now, as every board-wide read sees it. Holding it keeps it alive, and makes
    /// the next change copy it: let go of it between reads.
    Result<std::shared_ptr<const CatalogLoad>> current() { return board_wide("board"); }

protected:
    Result<std::shared_ptr<const CatalogLoad>> board_wide(std::string_view action) override;

    void written(const std::string& id) override { ticket_changed(id); }

private:
    std::shared_ptr<CatalogLoad> kept_;
    std::set<std::string, std::less<>> stale_;                ///< to read again
    std::map<std::string, CatalogEntry, std::less<>> known_;  ///< already folded by the caller
};

// ---------------------------------------------------------------------------------------------
// Board-wide queries as data: what `list`, `ready` and `next` print with --json. The `board`
// command answers them from the logs, or asks a running board-daemon over the Unix socket
// `.board/query.sock` (the daemon watches every log, so it answers without a stat per log; it
// reads every notification pending before it answers, so a write that finished before the
// question is in the answer). Only these reads are served there: nothing is written.

struct BoardQuery {
    enum class Kind { list, ready, next } kind = Kind::list;
    ListFilter list;         ///< for list
    std::string for_person;  ///< for list: only this person's requests (Board::list)
    NextRequest next;        ///< for ready (its filter) and next
};

/// What a query prints: its output (JSON), its exit code, and what goes to stderr.
struct QueryAnswer {
    int exit_code = 0;
    std::string output;
    std::string message;  ///< one line, or empty
    std::vector<std::string> warnings;
    /// When the same query, with no log and no board.yaml changed, would answer otherwise
    /// by time alone (a backoff shown ends); none: never. Not sent on the socket.
    std::optional<UnixMillis> changes_at;
};

/// With `output_to`, the output goes there as it is written instead of into the answer (a big
/// board's list is not held whole).
QueryAnswer answer_query(Board& board, const BoardQuery& query, std::ostream* output_to = nullptr);

/// One line of JSON; decode_query is nullopt for anything that is not one.
std::string encode_query(const BoardQuery& query);
std::optional<BoardQuery> decode_query(std::string_view line);
/// What goes before the output on the socket: one JSON line (exit, message, warnings, and the
/// output's length in bytes, so that a reply cut short is told from a whole one).
std::string answer_header(const QueryAnswer& answer);

/// `<root>/.board/query.sock`.
std::filesystem::path query_socket_path(const std::filesystem::path& root);

/// The answer of the board-daemon running on `root`, or nullopt when none answers within
/// `timeout` (none runs, it died, its socket path is too long to name): then ask the logs.
/// With `output_to`, the output goes there as it arrives instead of into the answer (a big
/// board's list is not held whole); once some of it went there, a reply cut short is not
/// nullopt but an answer with exit 3 that says the output is incomplete.
std::optional<QueryAnswer> ask_daemon(const std::filesystem::path& root,
                                      const BoardQuery& query,
                                      std::chrono::milliseconds timeout = std::chrono::seconds{2},
                                      std::ostream* output_to = nullptr);

// ---------------------------------------------------------------------------------------------
// JSON forms of the results: what `board --json` prints is what the HTTP API answers.

/// One entry as a JSON object with the field names of state-machine.md §2 (the bulk left out:
/// see CatalogEntry) plus what a board-wide view adds: `blocked` (a blocker is not done),
/// `notes_count`, `questions_pending`, and for epics `children` and `children_done`. `status`
/// is the status shown to people (an epic whose children are all done is `done`).
void append_entry_json(std::string& out, const Catalog& catalog, const CatalogEntry& entry);
/// `[ {...}, ... ]` and a newline, handed to `sink` in order in pieces of 256 entries (from
/// four pieces on they are written on two threads; `sink` is called on this one).
void write_json(const Picked& picked, const std::function<void(std::string_view)>& sink);
/// `[ {...}, ... ]` and a newline.
std::string to_json(const Picked& picked);
/// The ticket written.
std::string to_json(const Written& written);
/// The ticket; an epic's with `children`, `children_done` and its derived status.
std::string to_json(const TicketView& view);
/// A replay step: `{seq, last_seq, ticket, event}` (the event is the last one folded).
std::string replay_step_json(const TicketView& view);
/// Every question of `asked`, each with `id` (`PROJ-12.q1`) and `ticket`.
std::string to_json(const Asked& asked);
/// `{source, dry_run, imported, tickets, unmapped, not_kept}`.
std::string to_json(const ImportReport& report);

}  // namespace board::app
