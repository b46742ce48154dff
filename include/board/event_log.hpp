#pragma once
// The event log: `tickets/<ID>/events.jsonl`, the only source of truth (spec/storage.md).
//
// Write path: a batch of events is checked by reduce() against the folded log, encoded, written
// with ONE write() and made durable with ONE fdatasync() before the call returns, all under an
// exclusive flock on the log file. Only accepted events are ever written, so a replay never
// meets a rejection unless the file was edited by hand.
//
// Read path: the file is streamed through a reusable buffer (a 100 MB log is never one string).
// Every line must decode and `seq` must count 1, 2, 3... A torn tail (the last line lacks its
// `\n`, or is not even well-formed JSON: a crash mid-write) is moved aside to
// `events.jsonl.torn` and the log truncated to its last complete line, with a warning. Anything
// wrong before the tail is corruption: an error naming the file and line, never skipped.
//
// Errors are values: nothing here throws except std::bad_alloc (and whatever a caller's builder
// throws, which propagates with nothing written).

#include <board/codec.hpp>
#include <board/event.hpp>
#include <board/reduce.hpp>
#include <board/ticket.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace board {

/// The log file's name inside a ticket folder, and the file a torn tail is moved to.
inline constexpr std::string_view log_file_name = "events.jsonl";
inline constexpr std::string_view torn_file_name = "events.jsonl.torn";

/// The longest line a log may hold, newline excluded. A reader refuses a longer one as
/// corrupt (file:line) having held at most this much of it; a writer refuses to write one.
/// Every field an agent fills is cut well below it (spec/agents.md), so only a hand-made
/// line or a runaway human text can reach it.
inline constexpr std::size_t max_event_line_bytes = 8u << 20;

/// Why a log could not be read or written.
struct LogError {
    enum class Kind : std::uint8_t {
        not_found,      ///< no events.jsonl (reading) or no ticket folder (writing)
        io,             ///< a system call failed; the message carries errno's text
        corrupt,        ///< a bad line before the tail, a seq gap or duplicate, a rejected event
        newer_version,  ///< a line written by a newer schema version (names both versions)
        lock_timeout,   ///< another writer held the ticket's lock for longer than allowed
        invalid_batch,  ///< the caller's batch is malformed (empty or duplicate ids)
    };
    Kind kind = Kind::io;
    /// One sentence with the place first, e.g.
    /// `tickets/PROJ-1/events.jsonl:7: seq 9 follows seq 7 (a gap: 8 is missing)`.
    std::string message;
};

/// What a read noticed that is not an error. Print the warnings; nothing was lost.
struct ReadReport {
    std::int64_t events = 0;            ///< complete events read (the whole log, for a fold)
    std::int64_t last_seq = 0;          ///< 0 for an empty log
    bool empty = false;                 ///< the file exists and holds no event: a ticket with none
    std::uint64_t torn_bytes = 0;       ///< bytes moved aside to events.jsonl.torn (0: none)
    std::vector<std::string> warnings;  ///< e.g. `...events.jsonl:12: recovered a torn tail ...`
};

/// A read of a log folded to its ticket.
struct Loaded {
    Ticket ticket;  ///< default-constructed (empty id) for an empty log
    ReadReport report;
};

/// The reducer refused `events[index]` of a batch; nothing was written.
struct Refused {
    std::size_t index = 0;
    Rejection rejection;
};

/// The log moved on since the caller read it: re-read, rebuild the batch, retry.
struct Conflict {
    std::int64_t expected_last_seq = 0;
    std::int64_t actual_last_seq = 0;
    std::string message;  ///< names the file and both seqs
};

/// A batch that is durable on disk (or was already: a retried append).
struct Committed {
    /// The ticket after the batch, never null, never changed afterwards. Shared with the
    /// EventLog's cache (copy-on-write) because copying a long history on every append costs
    /// more than the append: holding it is safe, it only makes the next append copy it.
    std::shared_ptr<const Ticket> ticket;
    std::vector<Event> events;  ///< the events as written (seq, v filled in); empty if no-op
    bool duplicate = false;     ///< the batch's first id was already in the log: nothing written
    ReadReport report;          ///< what reading the log under the lock noticed
};

template <class T>
using LogResult = std::variant<T, LogError>;
using AppendResult = std::variant<Committed, Conflict, Refused, LogError>;
using TransactResult = std::variant<Committed, Refused, LogError>;

/// Seams for tests and knobs for callers.
struct LogOptions {
    /// Stamps `at` on events built by transact() and transact_existing(). Default: the
    /// system clock, UTC milliseconds.
    std::function<UnixMillis()> clock;
    /// Makes a fresh event id for transact() and transact_existing(). Default: 128 random
    /// bits as 32 hex digits,
    /// reseeded after a fork so a parent and child never share ids.
    std::function<std::string()> new_id;
    /// How long a writer waits for another writer's lock before giving up with lock_timeout.
    std::chrono::milliseconds lock_timeout{10'000};
};

/// Builds the payloads of a batch from the ticket as it is under the lock. Every payload is
/// stamped with the same `by` and the clock's `at`. Returning none is a no-op success.
using BatchBuilder = std::function<std::vector<Payload>(const Ticket&)>;
/// The same for a batch whose events have authors of their own.
using AuthoredBuilder = std::function<std::vector<Authored>(const Ticket&)>;

/// One ticket's log. Keeps what it has read (offset, last seq, folded ticket, the ids of the
/// last events) so that a long-lived writer (daemon, CLI session) re-reads only what other
/// processes appended since, not the whole history on every append. The cache is checked
/// against the file's identity and size under the lock, and dropped if the file was replaced
/// or shrank. Not thread-safe: one instance per thread; any number of processes.
class EventLog {
public:
    explicit EventLog(std::filesystem::path ticket_dir, LogOptions options = {});
    ~EventLog();
    EventLog(EventLog&&) noexcept;
    EventLog& operator=(EventLog&&) noexcept;
    EventLog(const EventLog&) = delete;
    EventLog& operator=(const EventLog&) = delete;

    /// Reads and folds the log. Takes no lock unless it meets a torn tail: then it takes the
    /// writers' lock and looks again, because the "tail" may be a write still in progress.
    /// Errors: not_found, io, corrupt (file:line), newer_version, lock_timeout.
    LogResult<Loaded> load();

    /// Appends `events` after `expected_last_seq`, the last seq the caller read.
    /// - Each event's `v` is set to event_schema_version and `seq` to expected_last_seq + 1 + i;
    ///   `id`, `at`, `by` and the payload are written as given. Ids must be non-empty and
    ///   distinct within the batch (else invalid_batch).
    /// - If the first event's id is already among the log's last events, the batch is a
    ///   retry of an append that landed: a no-op Committed with duplicate = true.
    /// - Else if the log's last seq is not expected_last_seq: a Conflict, nothing written.
    /// - Each event goes through reduce(); a refusal writes nothing and returns Refused.
    /// - Else one write(), one fdatasync(), then Committed. Creates the file if the ticket
    ///   folder exists but has no log yet (and syncs the folder so the new name is durable).
    AppendResult append(std::vector<Event> events, std::int64_t expected_last_seq);

    /// "Append after accept", for the CLI and the daemon: under the lock, brings the folded
    /// ticket up to date, calls `build` with it, stamps the payloads (next seqs, fresh ids,
    /// the clock's `at`, `by`), runs each through reduce(), and appends them durably.
    /// Never conflicts (the read and the write share one lock). `build` is called once, under
    /// the lock, so keep it quick and free of I/O on this ticket.
    TransactResult transact(const Actor& by, const BatchBuilder& build);

    /// transact() on a ticket someone made: each event carries its own author, and a log
    /// that is not there is not_found (`<path>: no such log`) with nothing created, where
    /// transact() would start one. The log is read once, under the lock.
    TransactResult transact_existing(const AuthoredBuilder& build);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Streams the events of a log file to `visit`, in order, with the continuity checks and the
/// torn-tail recovery of EventLog::load() but no fold. For `log`, `verify`, exports.
/// `visit` sees each event once; a line that fails stops the read with an error naming it.
LogResult<ReadReport> read_log(const std::filesystem::path& log_file,
                               const std::function<void(const Event&)>& visit,
                               const LogOptions& options = {});

/// Convenience wrappers around a one-shot EventLog: each call reads and folds the whole log.
/// (board-daemon keeps each ticket's fold, not an EventLog, and reads a log again only when
/// it changed: src/orchestrator/known_tickets.hpp.)
LogResult<Loaded> load_ticket(const std::filesystem::path& ticket_dir,
                              const LogOptions& options = {});
AppendResult append_events(const std::filesystem::path& ticket_dir,
                           std::vector<Event> events,
                           std::int64_t expected_last_seq,
                           const LogOptions& options = {});
TransactResult transact(const std::filesystem::path& ticket_dir,
                        const Actor& by,
                        const BatchBuilder& build,
                        const LogOptions& options = {});
TransactResult transact_existing(const std::filesystem::path& ticket_dir,
                                 const AuthoredBuilder& build,
                                 const LogOptions& options = {});

/// A fresh random event id (what LogOptions::new_id defaults to).
std::string random_event_id();

/// The wall clock in Unix milliseconds (what LogOptions::clock defaults to): the time an event
/// written now carries.
UnixMillis wall_clock_now();

}  // namespace board
