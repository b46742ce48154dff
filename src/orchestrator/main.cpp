// `board-daemon`: runs the board's agents (spec/cli.md, spec/agents.md).
// Exit codes: 0 done, 1 refused to start (another daemon on the board), 2 usage, 3 storage or
// configuration error.

#include "orchestrator/daemon.hpp"

#include <board/app.hpp>
#include <board/board_config.hpp>
#include <board/board_dir.hpp>
#include <board/version.hpp>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace fs = std::filesystem;
using board::orchestrator::DaemonOptions;

namespace {

/// Parses a duration option; a bad one is a usage error naming the option.
std::optional<std::chrono::milliseconds> duration_option(const std::string& text,
                                                         const char* name,
                                                         bool& ok) {
    if (text.empty()) return std::nullopt;
    auto d = board::parse_duration(text);
    if (!d) {
        std::cerr << "board-daemon: " << name
                  << ": expected a duration like 500ms, 10s, 5m or 1h, at most 720h, got \"" << text
                  << "\"\n";
        ok = false;
    }
    return d;
}

int run(int argc, char** argv) {
    CLI::App app{
        "board-daemon: runs a focused agent per phase on the board's tickets, hands work to "
        "humans without waiting for them, and stops when no ticket can move without a human "
        "(or never, with --watch).",
        "board-daemon"};
    app.footer(
        "\nExamples:\n"
        "  board-daemon                      work the board until only humans can move it\n"
        "  board-daemon --once               give every runnable ticket one run, then stop\n"
        "  board-daemon PROJ-7 --watch       work only epic PROJ-7's tickets\n"
        "  board-daemon --watch --debounce 1s   run forever; pick up approvals within a second\n"
        "  board-daemon --max-parallel 4 --log-format json   four agents at once, JSON lines\n"
        "  board-daemon --http 8080 --no-agents   the page on 127.0.0.1:8080, no agent run\n"
        "\nAgents, gates, WIP limits and budgets come from board.yaml (see `board init`).");
    std::string board_dir, timeout, poll, debounce, log_format, epic;
    app.add_option("EPIC", epic, "Work only this epic's tickets (e.g. PROJ-7)");
    bool once = false, watch = false, version = false;
    int max_parallel = 0;
    app.add_option("--board",
                   board_dir,
                   "The board folder (default: $BOARD_DIR, else the nearest "
                   "folder with a board.yaml)");
    app.add_flag("--once", once, "One pass: each runnable ticket runs at most once");
    app.add_flag("--watch", watch, "Run forever, picking up changes as humans make them");
    app.add_option("--timeout", timeout, "Stop gracefully after this long (e.g. 30m)");
    app.add_option("--poll", poll, "How often to rescan the board (default daemon.poll, 10s)");
    app.add_option(
        "--debounce", debounce, "Wait before taking a ticket a human just changed (default 2s)");
    app.add_option(
           "--max-parallel", max_parallel, "Agents running at once (default daemon.max_parallel)")
        ->check(CLI::Range(1, 256));
    app.add_option("--log-format", log_format, "live (a terminal's default), text or json")
        ->check(CLI::IsMember({"live", "text", "json"}));
    std::string http_address;
    app.add_option("--http",
                   http_address,
                   "Serve the JSON API, live events and the web inbox: PORT (loopback) or "
                   "ADDR:PORT (any other address needs the token printed at start)");
    bool no_agents = false;
    app.add_flag("--no-agents",
                 no_agents,
                 "With --http: serve the page and the API only; run no agent, ship nothing, time "
                 "out no question, write nothing of its own. It still takes the board's lock "
                 "(one daemon per board), so no working daemon starts beside it");
    app.add_flag("--version", version, "Print the version");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    if (version) {
        std::cout << "board-daemon " << board::version_string << '\n';
        return 0;
    }
    if (once && watch) {
        std::cerr << "board-daemon: --once and --watch contradict each other; choose one\n";
        return 2;
    }
    if (no_agents && http_address.empty()) {
        std::cerr << "board-daemon: --no-agents serves the page alone; it needs --http ADDR\n";
        return 2;
    }
    DaemonOptions options;
    options.run_agents = !no_agents;
    bool ok = true;
    options.run_for = duration_option(timeout, "--timeout", ok);
    options.poll = duration_option(poll, "--poll", ok);
    options.debounce = duration_option(debounce, "--debounce", ok);
    if (!ok) return 2;
    if (options.poll && options.poll->count() <= 0) {
        std::cerr << "board-daemon: --poll must be more than 0\n";
        return 2;
    }
    if (max_parallel > 0) options.max_parallel = max_parallel;
    if (!http_address.empty()) {
        std::string error;
        options.http = board::http::parse_http_address(http_address, error);
        if (!options.http) {
            std::cerr << "board-daemon: --http " << http_address << ": " << error << '\n';
            return 2;
        }
        if (once) {
            std::cerr << "board-daemon: --http serves until stopped; it cannot go with --once\n";
            return 2;
        }
        watch = true;  // a page that vanishes when the board goes quiet would be no inbox
    }
    options.mode = watch  ? DaemonOptions::Mode::watch
                   : once ? DaemonOptions::Mode::once
                          : DaemonOptions::Mode::until_idle;
    if (log_format == "json")
        options.output = DaemonOptions::Output::json;
    else if (log_format == "text")
        options.output = DaemonOptions::Output::text;
    else if (log_format == "live" || ::isatty(STDOUT_FILENO))
        options.output = DaemonOptions::Output::live;
    else
        options.output = DaemonOptions::Output::text;

    std::optional<fs::path> root;
    if (!board_dir.empty())
        root = fs::path{board_dir};
    else if (const char* env = std::getenv("BOARD_DIR"); env && *env)
        root = fs::path{env};
    else
        root = board::find_board(fs::current_path());
    if (!root) {
        std::cerr << "board-daemon: no board.yaml here or in any parent folder; use --board DIR or "
                     "create one with `board init`\n";
        return 3;
    }
    std::error_code ec;
    options.board_root = fs::absolute(*root, ec).lexically_normal();
    const auto config = board::load_board_config(options.board_root / "board.yaml");
    if (!config) {
        std::cerr << "board-daemon: " << (options.board_root / "board.yaml").string() << ": "
                  << config.error().message << '\n';
        return 3;
    }
    if (!epic.empty()) {
        // Refused here with one line, rather than a daemon that quietly runs nothing.
        auto ticket = board::app::Board(options.board_root).show(epic);
        if (!ticket) {
            std::cerr << "board-daemon: EPIC " << epic << ": " << ticket.error().message << '\n';
            return 1;
        }
        if (ticket.value().ticket.type != board::TicketType::epic) {
            std::cerr << "board-daemon: " << epic << " is a "
                      << board::to_string(ticket.value().ticket.type)
                      << ", not an epic: give an epic's id to work its tickets\n";
            return 1;
        }
        options.epic = epic;
    }
    return board::orchestrator::run_daemon(options, config.value());
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "board-daemon: " << e.what() << '\n';
        return 3;
    }
}
