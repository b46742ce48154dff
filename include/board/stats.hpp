#pragma once
// Metrics of a board (`board stats`): where the time of finished tickets went, how fast people
// answer, what it cost. Everything is measured from the logs, by folding each one through the
// reducer: nothing is stored beside them, so the figures of any past week can be asked again
// and always agree with `board log`.
//
// Pure: events in, figures out; the window's end (`now`) is an argument.

#include <board/event.hpp>
#include <board/ticket.hpp>

#include <array>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace board::app {

/// One ticket's life, measured from its log.
struct TicketMetrics {
    std::string id;
    UnixMillis created_at = 0;
    std::optional<UnixMillis> done_at;  ///< when it last became done
    std::optional<Resolution> resolution;
    /// Time until done (or the log's end), split by whose turn it was: an agent at work in a
    /// phase, the agent's turn with nothing running (queued: WIP, backoff, auto off, a daemon
    /// that was down), a person per awaited kind.
    std::array<UnixMillis, all_statuses.size()> agent_ms{};
    std::array<UnixMillis, all_statuses.size()> queued_ms{};
    std::array<UnixMillis, all_awaitings.size()> human_ms{};

    /// Each handoff a person ended (a verdict, an answer, an update): its kind, how long it
    /// had waited, and when it ended.
    struct Response {
        Awaiting kind = Awaiting::work;
        UnixMillis waited_ms = 0;
        UnixMillis at = 0;
    };

    std::vector<Response> responses;

    /// Each question the agents asked: when, how long until a person answered (none if not
    /// answered by a person), and whether it timed out.
    struct Asked {
        UnixMillis at = 0;
        std::optional<UnixMillis> answered_after_ms;
        bool timed_out = false;
    };

    std::vector<Asked> questions;
    int runs = 0;
    int failed_runs = 0;  ///< runs that ended in a failure (exit, timeout, no artifact)
    double cost_usd = 0.0;
};

/// Folds `log` (one ticket's events, in order) and measures it. A log the reducer refuses is
/// measured up to the refused event.
TicketMetrics measure(std::span<const Event> log);

/// Percentiles of a set of durations (nearest rank); all zero when there are none.
struct Spread {
    int count = 0;
    UnixMillis p50 = 0;
    UnixMillis p90 = 0;
    UnixMillis max = 0;
};

Spread spread_of(std::vector<UnixMillis> durations);

/// The board over a window `[since, now]`.
struct BoardStats {
    UnixMillis since = 0;
    UnixMillis now = 0;
    int created = 0;    ///< tickets created in the window
    int completed = 0;  ///< done (completed) in the window: the throughput
    int cancelled = 0;  ///< done (won't do) in the window
    Spread cycle;       ///< created → done, of the completed ones
    /// Where the completed tickets' time went (sums over them).
    std::array<UnixMillis, all_statuses.size()> agent_ms{};
    UnixMillis queued_ms = 0;
    std::array<UnixMillis, all_awaitings.size()> human_ms{};
    /// How long people took to answer, per kind, for handoffs they ended in the window.
    std::array<Spread, all_awaitings.size()> responses{};
    int questions = 0;  ///< asked in the window
    int questions_answered = 0;
    int questions_timed_out = 0;
    Spread answer_time;
    int tickets_asking = 0;  ///< tickets that asked any of them
    int runs = 0;            ///< of the completed tickets
    int failed_runs = 0;
    double cost_usd = 0.0;  ///< of the completed tickets
};

BoardStats aggregate(std::span<const TicketMetrics> tickets, UnixMillis since, UnixMillis now);

/// `2h05m`, `3d4h`, `45s`, `0s`: the two largest units, for people.
std::string short_duration(UnixMillis ms);

/// The report `board stats` prints: figures, then a bar per place the time went.
std::string render(const BoardStats& stats);

/// The same as one JSON object (durations in milliseconds).
std::string to_json(const BoardStats& stats);

}  // namespace board::app
