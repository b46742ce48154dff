#pragma once
// board-daemon: runs the board's agents (spec/agents.md). One Asio io_context, one thread.
// It executes what next_action() says and nothing else: every rule lives in the reducer, the
// daemon only launches processes and turns their outcomes into events.
//
// Guarantees: at most one run per ticket, max_parallel in all, WIP limits per column; never
// waits on a human; a second daemon on the same board refuses to start; on start, every run
// left in flight by a crash is resolved from its saved output or recorded as interrupted (and
// then runs again); SIGINT/SIGTERM stop gracefully, a second signal kills at once.

#include <board/board_config.hpp>
#include <board/http.hpp>

#include <chrono>
#include <filesystem>
#include <iosfwd>
#include <optional>

namespace board::orchestrator {

struct DaemonOptions {
    std::filesystem::path board_root;
    enum class Mode {
        until_idle,  ///< default: until no ticket can move without a human
        once,        ///< each ticket runs at most once, then as until_idle
        watch,       ///< forever (or --timeout), picking up what humans change
    } mode = Mode::until_idle;
    std::optional<std::chrono::milliseconds> run_for;   ///< --timeout: stop gracefully after
    std::optional<std::chrono::milliseconds> poll;      ///< overrides daemon.poll
    std::optional<std::chrono::milliseconds> debounce;  ///< overrides daemon.debounce
    std::optional<int> max_parallel;                    ///< overrides daemon.max_parallel
    enum class Output {
        live,  ///< a terminal: event lines plus a status block redrawn in place
        text,  ///< one readable line per event
        json,  ///< one JSON object per event or message, for log collectors
    } output = Output::text;
    /// --http: serve the API, live events and the page on the daemon's io_context
    /// (docs/http.md). The daemon then runs until stopped, as with --watch.
    std::optional<http::HttpAddress> http;
    /// false (--no-agents): serve the page alone. No agent is checked or run, nothing is
    /// shipped, recovered or cleaned up, no question is timed out: the daemon writes nothing
    /// of its own, so a person can use the page on a board no daemon works. It still takes
    /// the board's lock, so no working daemon starts beside it.
    bool run_agents = true;
    /// `board-daemon EPIC`: agents run only on that epic's children. Question timeouts,
    /// handoff reminders and shipping stay board-wide: one daemon holds a board.
    std::string epic;
};

/// Runs the daemon on a board whose board.yaml is already loaded. Prints to stdout (events)
/// and stderr (problems). Before anything else, every configured agent is checked
/// (preflight.hpp). Returns the exit code: 0 done, 1 refused to start (another daemon), 2 an
/// agent cannot run (not installed, or its `--version` fails), 3 storage or configuration
/// error, including the end of a run the daemon could not record (the disk refused it).
int run_daemon(const DaemonOptions& options, const BoardConfig& config);

}  // namespace board::orchestrator
