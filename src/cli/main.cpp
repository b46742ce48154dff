// `board`: the command line for people and scripts (spec/cli.md). This first cut reads the
// board: `show`, `log`, `replay`, `verify`. Exit codes: 0 done, 1 refused or unknown id, 2 usage, 3
// storage.

#include "cli/history.hpp"
#include "cli/verify.hpp"
#include "cli/write_commands.hpp"

#include <board/board_dir.hpp>
#include <board/codec.hpp>
#include <board/reduce.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace {

enum class ExitCode { ok = 0, refused = 1, usage = 2, storage = 3 };

struct Options {
    std::string board_dir;
    std::string as;
    bool json = false;
};

int report(const board::cli::CommandOutcome& outcome) {
    std::cout << outcome.output;
    if (!outcome.message.empty()) std::cerr << "board: " << outcome.message << '\n';
    return outcome.exit_code;
}

/// `--board`, else `$BOARD_DIR`, else the nearest ancestor with a board.yaml.
std::optional<fs::path> find_board(const Options& options) {
    if (!options.board_dir.empty()) return fs::path{options.board_dir};
    if (const char* env = std::getenv("BOARD_DIR"); env && *env) return fs::path{env};
    std::error_code ec;
    const fs::path here = fs::current_path(ec);
    if (ec) return std::nullopt;
    return board::find_board(here);
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size() && !text.empty()) {
        const auto comma = std::min(text.find(',', start), text.size());
        if (comma > start) out.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

int fail(ExitCode code, std::string_view command, std::string_view message) {
    std::cerr << fmt::format("board: {}: {}\n", command, message);
    return static_cast<int>(code);
}

std::optional<board::cli::History> load(const Options& options,
                                        const std::string& id,
                                        std::string_view command,
                                        int& exit_code) {
    const auto board_dir = find_board(options);
    if (!board_dir) {
        exit_code = fail(ExitCode::usage,
                         command,
                         "no board here (no board.yaml above this folder); use --board DIR");
        return std::nullopt;
    }
    auto history = board::cli::read_history(*board_dir, id);
    for (const auto& warning : history.warnings) std::cerr << "board: warning: " << warning << '\n';
    if (history.error) {
        const bool unknown = history.error->kind == board::cli::HistoryError::Kind::unknown_ticket;
        exit_code =
            fail(unknown ? ExitCode::refused : ExitCode::storage, command, history.error->message);
        return std::nullopt;
    }
    return history;
}

int run_log(const Options& options, const std::string& id) {
    int exit_code = 0;
    const auto history = load(options, id, "log", exit_code);
    if (!history) return exit_code;
    for (const auto& event : history->events) {
        std::cout << (options.json ? board::encode_event(event) : board::cli::describe(event))
                  << '\n';
    }
    return 0;
}

int run_replay(const Options& options, const std::string& id, std::int64_t until, bool diff) {
    int exit_code = 0;
    const auto history = load(options, id, "replay", exit_code);
    if (!history) return exit_code;
    board::Ticket ticket;
    boost::json::array steps;
    for (const auto& event : history->events) {
        if (until > 0 && event.seq > until) break;
        board::Reduced next = board::reduce(ticket, event);
        if (!next) {
            return fail(ExitCode::storage,
                        "replay",
                        fmt::format("{} seq {}: the log holds an event the reducer refuses: {}",
                                    id,
                                    event.seq,
                                    next.error().message));
        }
        if (options.json) {
            steps.push_back(boost::json::object{{"event", board::event_to_json(event)},
                                                {"ticket", board::ticket_to_json(next.value())}});
        } else {
            std::cout << board::cli::describe(event) << '\n';
            if (diff) {
                for (const auto& change : board::cli::describe_changes(ticket, next.value()))
                    std::cout << "        " << change << '\n';
            } else {
                std::cout << "        → " << board::cli::describe_state(next.value()) << '\n';
            }
        }
        ticket = std::move(next).value();
    }
    if (options.json) {
        std::cout << boost::json::serialize(steps) << '\n';
    } else {
        std::cout << fmt::format("{} \"{}\" after seq {}: {}\n",
                                 ticket.id,
                                 ticket.title,
                                 ticket.seq,
                                 board::cli::describe_state(ticket));
    }
    return 0;
}

int run_show(const Options& options, const std::string& id) {
    int exit_code = 0;
    const auto history = load(options, id, "show", exit_code);
    if (!history) return exit_code;
    const board::Folded folded = board::fold(history->events);
    if (folded.failure) {
        return fail(ExitCode::storage,
                    "show",
                    fmt::format("{}: the log does not replay at seq {}: {}",
                                id,
                                history->events[folded.failure->first].seq,
                                folded.failure->second.message));
    }
    const board::Ticket& t = folded.ticket;
    if (options.json) {
        std::cout << board::encode_ticket(t) << '\n';
        return 0;
    }
    std::cout << fmt::format("{}  {}\n", t.id, t.title);
    std::cout << fmt::format("  {}\n", board::cli::describe_state(t));
    std::cout << fmt::format("  {} · priority {}", board::to_string(t.type), t.priority);
    if (!t.labels.empty()) std::cout << fmt::format(" · labels {}", fmt::join(t.labels, ","));
    if (!t.parent.empty()) std::cout << fmt::format(" · parent {}", t.parent);
    if (!t.blocked_by.empty())
        std::cout << fmt::format(" · blocked by {}", fmt::join(t.blocked_by, ","));
    if (t.requires_) std::cout << fmt::format(" · requires {}", board::to_string(*t.requires_));
    std::cout << fmt::format(" · {} runs, ${:.2f}\n", t.runs_total, t.cost_usd);
    if (!t.description.empty()) std::cout << '\n' << t.description << '\n';
    bool any_artifact = false;
    for (const auto kind : board::all_artifact_kinds) {
        if (const auto& a = t.artifact(kind)) {
            if (!any_artifact) std::cout << "\nArtifacts\n";
            any_artifact = true;
            std::cout << fmt::format(
                "  {:<22} {:<12} {}\n", a->path, board::to_string(a->status), a->summary);
        }
    }
    if (!t.questions.empty()) std::cout << "\nQuestions\n";
    for (const auto& q : t.questions) {
        std::cout << fmt::format("  {}.{} [{}] {}{}\n",
                                 t.id,
                                 q.id,
                                 board::to_string(q.status),
                                 q.question,
                                 q.answer.empty() ? "" : " → " + q.answer);
    }
    if (!t.notes.empty()) std::cout << "\nNotes\n";
    const std::size_t shown_notes = std::min<std::size_t>(t.notes.size(), 10);
    for (auto it = t.notes.end() - static_cast<std::ptrdiff_t>(shown_notes); it != t.notes.end();
         ++it) {
        const std::string who = it->author.empty()
                                    ? std::string{board::to_string(it->from)}
                                    : fmt::format("{}:{}", board::to_string(it->from), it->author);
        std::cout << fmt::format("  {} {}: {}\n", board::format_timestamp(it->at), who, it->text);
    }
    std::cout << "\nRecent events\n";
    const std::size_t shown_events = std::min<std::size_t>(history->events.size(), 5);
    for (auto it = history->events.end() - static_cast<std::ptrdiff_t>(shown_events);
         it != history->events.end();
         ++it)
        std::cout << board::cli::describe(*it) << '\n';
    return 0;
}

int run_verify(const Options& options, const std::vector<std::string>& requested) {
    const auto board_dir = find_board(options);
    if (!board_dir)
        return fail(ExitCode::usage,
                    "verify",
                    "no board here (no board.yaml above this folder); use --board DIR");
    std::vector<board::cli::VerifyReport> reports;
    const auto ids =
        requested.empty() ? board::cli::list_ticket_ids(*board_dir, reports) : requested;
    for (const auto& id : ids) reports.push_back(board::cli::verify_ticket(*board_dir, id));
    bool all_hold = true;
    boost::json::array out;
    for (const auto& r : reports) {
        all_hold = all_hold && r.faults.empty();
        if (options.json) {
            out.push_back(boost::json::object{{"ticket", r.ticket},
                                              {"ok", r.faults.empty()},
                                              {"faults", boost::json::value_from(r.faults)},
                                              {"warnings", boost::json::value_from(r.warnings)}});
            continue;
        }
        std::cout << fmt::format("{:<8} {}\n", r.faults.empty() ? "ok" : "FAULT", r.ticket);
        for (const auto& f : r.faults) std::cout << "  fault: " << f << '\n';
        for (const auto& w : r.warnings) std::cout << "  warning: " << w << '\n';
    }
    if (options.json) std::cout << boost::json::serialize(out) << '\n';
    if (!options.json) {
        std::cout << fmt::format(
            "{} ticket(s) checked, {}\n", reports.size(), all_hold ? "all hold" : "faults found");
    }
    return all_hold ? 0 : static_cast<int>(ExitCode::storage);
}

int run(int argc, char** argv) {
    CLI::App app{"board: a kanban board that AI agents and humans share"};
    app.require_subcommand(1);
    Options options;
    app.add_option("--board",
                   options.board_dir,
                   "the board folder (default: $BOARD_DIR, else the nearest board.yaml)");
    app.add_flag("--json", options.json, "machine output on stdout");
    app.set_version_flag("--version", "board 0.1.0");

    std::string id;
    std::int64_t until = 0;
    bool diff = false;
    auto* log = app.add_subcommand("log", "the event log of a ticket, one readable line per event");
    log->add_option("ID", id, "ticket id, e.g. PROJ-12")->required();
    log->footer("Example:\n  board log PROJ-12\n  board log PROJ-12 --json | jq .type");
    auto* replay = app.add_subcommand(
        "replay", "fold a ticket's log step by step: each event and the state after it");
    replay->add_option("ID", id, "ticket id, e.g. PROJ-12")->required();
    replay->add_option("--until", until, "stop after this seq")->check(CLI::PositiveNumber);
    replay->add_flag("--diff", diff, "show what each event changed instead of the state");
    replay->footer("Examples:\n  board replay PROJ-12\n  board replay PROJ-12 --until 7 --diff");
    auto* show =
        app.add_subcommand("show", "a ticket: fields, artifacts, questions, notes, recent events");
    show->add_option("ID", id, "ticket id, e.g. PROJ-12")->required();
    show->footer("Examples:\n  board show PROJ-12\n  board show PROJ-12 --json | jq .awaiting");
    std::vector<std::string> verify_ids;
    auto* verify = app.add_subcommand("verify",
                                      "check every log parses and replays, snapshots match, "
                                      "artifacts unchanged; exit 0 only if all hold");
    verify->add_option("ID", verify_ids, "ticket ids (default: every ticket)");
    verify->footer("Examples:\n  board verify\n  board verify PROJ-3 PROJ-4 --json");
    std::string init_dir = ".";
    std::string prefix = "PROJ";
    auto* init = app.add_subcommand("init", "create board.yaml (commented defaults) and tickets/");
    init->add_option("DIR", init_dir, "where (default: here)");
    init->add_option("--prefix", prefix, "ticket id prefix, e.g. PROJ for PROJ-1");
    init->footer("Example:\n  board init . --prefix WEB");

    board::cli::CreateRequest request;
    std::string labels, blocked_by;
    auto* create = app.add_subcommand("create", "a new ticket in backlog; prints its id");
    create->add_option("TITLE", request.title, "one line saying what is wanted")->required();
    create->add_option("-d,--description", request.description, "the intent, for the agents");
    create->add_option("-t,--type", request.type, "task, bug, feature, chore or epic");
    create->add_option("-p,--priority", request.priority, "0 critical … 4 backlog (default 2)");
    create->add_option("-l,--labels", labels, "comma-separated");
    create->add_option("--parent", request.parent, "the epic it belongs to");
    create->add_option("--blocked-by", blocked_by, "comma-separated ticket ids");
    create->add_option(
        "--requires", request.requires_, "final human gate: approval, review or content");
    create->add_option(
        "--awaiting", request.awaiting, "hand it to a human from the start, e.g. work");
    auto* manual =
        create->add_flag("--manual", request.manual, "deprecated: same as --awaiting work");
    create->footer(
        "Examples:\n  board create \"Retry uploads\" -t feature -p 1 -l backend\n"
        "  board create \"Rotate the keys\" --awaiting work   # a human does it");

    for (auto* sub : {log, replay, show, verify, create}) {
        sub->add_option("--board", options.board_dir, "the board folder");
        sub->add_flag("--json", options.json, "machine output on stdout");
    }
    create->add_option("--as", options.as, "who the event is by (default: $USER)");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : static_cast<int>(ExitCode::usage);
    }
    if (init->parsed()) return report(board::cli::init_board(init_dir, prefix));
    if (create->parsed()) {
        if (manual->count() > 0)
            std::cerr << "board: warning: --manual is deprecated; use --awaiting work\n";
        request.labels = split_list(labels);
        request.blocked_by = split_list(blocked_by);
        const auto board_dir = find_board(options);
        if (!board_dir)
            return fail(
                ExitCode::usage,
                "create",
                "no board here (no board.yaml above this folder); use --board DIR or board init");
        return report(board::cli::create_ticket(
            *board_dir, request, board::cli::invoking_actor(options.as), options.json));
    }
    if (log->parsed()) return run_log(options, id);
    if (show->parsed()) return run_show(options, id);
    if (verify->parsed()) return run_verify(options, verify_ids);
    return run_replay(options, id, until, diff);
}

}  // namespace

int main(int argc, char** argv) {
    // Anything unexpected (disk, memory) ends in one line and the storage exit code, never a
    // crash report.
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "board: " << e.what() << '\n';
        return static_cast<int>(ExitCode::storage);
    }
}
