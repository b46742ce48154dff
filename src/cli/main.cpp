// `board`: the command line for people and scripts (spec/cli.md). This file parses the
// command line and prints; the commands live in commands.hpp and write_commands.hpp. Exit
// codes: 0 done, 1 refused, unknown id or nothing next, 2 usage, 3 storage.

#include "cli/commands.hpp"
#include "cli/doctor.hpp"
#include "cli/history.hpp"
#include "cli/import_ticks.hpp"
#include "cli/render.hpp"
#include "cli/verify.hpp"
#include "cli/write_commands.hpp"

#include <board/board_dir.hpp>
#include <board/codec.hpp>
#include <board/reduce.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <variant>

namespace fs = std::filesystem;

namespace {

enum class ExitCode { ok = 0, refused = 1, usage = 2, storage = 3 };

struct Options {
    std::string board_dir;
    std::string as;
    bool json = false;
};

/// One line on stderr, `board: ` first. What it quotes (a title, an id, a path) is shown
/// printable, so a newline in someone's input cannot make it two lines.
void say(std::string_view line) {
    std::cerr << "board: " << board::cli::printable(line) << '\n';
}

void warn(std::string_view warning) {
    say(fmt::format("warning: {}", warning));
}

int report(const board::cli::CommandOutcome& outcome) {
    std::cout << outcome.output << std::flush;
    for (const auto& warning : outcome.warnings) warn(warning);
    if (!outcome.message.empty()) say(outcome.message);
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

int fail(ExitCode code, std::string_view command, std::string_view message) {
    say(fmt::format("{}: {}", command, message));
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
    for (const auto& warning : history.warnings) warn(warning);
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
                                 board::cli::printable(ticket.title),
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
    const auto board_dir = find_board(options);
    if (board_dir) {
        const fs::path ticket_dir = *board_dir / "tickets" / id;
        if (auto long_log = board::cli::long_log_warning(ticket_dir, history->events.size()))
            warn(fmt::format("{}: {}", id, *long_log));
    }
    // §7: an epic is done when all its children are (derived, not stored). Its own log cannot
    // say so, the board can: show it as list does.
    std::optional<board::EpicProgress> progress;
    bool derived_done = false;
    if (t.type == board::TicketType::epic && board_dir) {
        auto loaded = board::load_catalog(*board_dir);
        if (const auto* load = std::get_if<board::CatalogLoad>(&loaded)) {
            progress = load->catalog.epic_progress(t.id);
            derived_done = t.status != board::Status::done &&
                           load->catalog.shown_status(t) == board::Status::done;
        } else {
            warn(fmt::format("{}: its children are not counted: {}",
                             id,
                             std::get<board::CatalogError>(loaded).message));
        }
    }
    if (options.json) {
        if (!progress) {
            std::cout << board::encode_ticket(t) << '\n';
            return 0;
        }
        auto json = board::ticket_to_json(t);
        json["children"] = progress->children;
        json["children_done"] = progress->done;
        if (derived_done) json["status"] = "done";
        std::cout << boost::json::serialize(json) << '\n';
        return 0;
    }
    using board::cli::printable;
    const auto block = board::cli::printable_block;
    std::cout << fmt::format("{}  {}\n", t.id, printable(t.title));
    std::cout << fmt::format(
        "  {}\n", derived_done ? "done (every child is done)" : board::cli::describe_state(t));
    if (progress) {
        std::cout << fmt::format(
            "  epic: {} of {} children done\n", progress->done, progress->children);
    }
    std::cout << fmt::format("  {} · priority {}", board::to_string(t.type), t.priority);
    if (!t.labels.empty())
        std::cout << fmt::format(" · labels {}",
                                 printable(fmt::format("{}", fmt::join(t.labels, ","))));
    if (!t.parent.empty()) std::cout << fmt::format(" · parent {}", t.parent);
    if (!t.blocked_by.empty())
        std::cout << fmt::format(" · blocked by {}", fmt::join(t.blocked_by, ","));
    if (t.requires_) std::cout << fmt::format(" · requires {}", board::to_string(*t.requires_));
    std::cout << fmt::format(" · {} runs, ${:.2f}\n", t.runs_total, t.cost_usd);
    if (!t.description.empty()) std::cout << '\n' << block(t.description, "") << '\n';
    bool any_artifact = false;
    for (const auto kind : board::all_artifact_kinds) {
        if (const auto& a = t.artifact(kind)) {
            if (!any_artifact) std::cout << "\nArtifacts\n";
            any_artifact = true;
            std::cout << fmt::format("  {:<22} {:<12} {}\n",
                                     a->path,
                                     board::to_string(a->status),
                                     printable(a->summary));
        }
    }
    if (!t.questions.empty()) std::cout << "\nQuestions\n";
    for (const auto& q : t.questions) {
        std::cout << fmt::format("  {}.{} [{}] {}{}\n",
                                 t.id,
                                 q.id,
                                 board::to_string(q.status),
                                 block(q.question, "    "),
                                 q.answer.empty() ? "" : " → " + printable(q.answer));
    }
    if (!t.notes.empty()) std::cout << "\nNotes\n";
    const std::size_t shown_notes = std::min<std::size_t>(t.notes.size(), 10);
    for (auto it = t.notes.end() - static_cast<std::ptrdiff_t>(shown_notes); it != t.notes.end();
         ++it) {
        const std::string who = it->author.empty()
                                    ? std::string{board::to_string(it->from)}
                                    : fmt::format("{}:{}", board::to_string(it->from), it->author);
        std::cout << fmt::format(
            "  {} {}: {}\n", board::format_timestamp(it->at), who, block(it->text, "    "));
    }
    std::cout << "\nRecent events\n";
    const std::size_t shown_events = std::min<std::size_t>(history->events.size(), 5);
    for (auto it = history->events.end() - static_cast<std::ptrdiff_t>(shown_events);
         it != history->events.end();
         ++it)
        std::cout << board::cli::describe(*it) << '\n';
    return 0;
}

int run_doctor(const Options& options) {
    const auto board_dir = find_board(options);
    if (!board_dir)
        return fail(ExitCode::usage,
                    "doctor",
                    "no board here (no board.yaml above this folder); use --board DIR");
    const auto checks = board::cli::check_board(*board_dir);
    bool failed = false;
    boost::json::array out;
    for (const auto& c : checks) {
        using V = board::cli::DoctorCheck::Verdict;
        failed = failed || c.verdict == V::failure;
        const std::string_view word = c.verdict == V::ok        ? "ok"
                                      : c.verdict == V::warning ? "warning"
                                                                : "FAIL";
        if (options.json) {
            out.push_back(
                boost::json::object{{"check", c.topic}, {"verdict", word}, {"detail", c.detail}});
        } else {
            std::cout << fmt::format("{:<8} {}: {}\n",
                                     word,
                                     board::cli::printable(c.topic),
                                     board::cli::printable(c.detail));
        }
    }
    if (options.json) std::cout << boost::json::serialize(out) << '\n';
    return failed ? 1 : 0;
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
    bool storage_fault = false;  // else only ids that name no ticket: refused, not storage
    boost::json::array out;
    for (const auto& r : reports) {
        all_hold = all_hold && r.faults.empty();
        storage_fault = storage_fault || (!r.faults.empty() && !r.unknown);
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
    if (all_hold) return 0;
    return static_cast<int>(storage_fault ? ExitCode::storage : ExitCode::refused);
}

/// `--board`, `--as`, `--json` on every command, so they may come after the command name.
void add_common(CLI::App* sub, Options& options) {
    if (!sub) return;  // not built: another command was invoked
    sub->add_option("--board",
                    options.board_dir,
                    "the board folder (default: $BOARD_DIR, else the nearest board.yaml)");
    sub->add_option("--as", options.as, "who a human event is by (default: $USER)");
    sub->add_flag("--json", options.json, "machine output on stdout; messages stay on stderr");
}

/// The context of a command that needs a board, or the exit code of why not.
std::variant<board::cli::Context, int> context_for(const Options& options,
                                                   std::string_view command) {
    const auto board_dir = find_board(options);
    if (!board_dir)
        return fail(
            ExitCode::usage,
            command,
            "no board here (no board.yaml above this folder); use --board DIR or board init");
    std::error_code ec;
    if (!fs::exists(*board_dir / "board.yaml", ec))
        return fail(ExitCode::usage,
                    command,
                    fmt::format("{} holds no board.yaml (not a board; create one with board init)",
                                board_dir->string()));
    if (!options.as.empty() && !board::cli::is_valid_actor_name(options.as))
        return fail(
            ExitCode::usage,
            command,
            fmt::format("--as \"{}\": a name is one word of printable characters, without ':'",
                        options.as));
    board::cli::Context ctx;
    ctx.board = *board_dir;
    ctx.by = board::cli::invoking_actor(options.as);
    const bool only_reads =
        command == "list" || command == "next" || command == "ready" || command == "questions";
    // $USER or $BOARD_PHASE, which --as did not override: refused before anything is written.
    if (!only_reads && !board::is_valid_actor(ctx.by))
        return fail(ExitCode::usage,
                    command,
                    fmt::format("\"{}\" cannot sign an event: a name is one word of printable "
                                "characters ({})",
                                board::to_string(ctx.by),
                                ctx.by.kind == board::ActorKind::agent
                                    ? "$BOARD_PHASE names the run's phase"
                                    : "set one with --as NAME"));
    ctx.json = options.json;
    ctx.colour = !options.json && board::cli::stdout_wants_colour();
    ctx.one_shot = true;
    return ctx;
}

/// `--awaiting` takes an optional list of types. A value that is not one (a ticket id, a
/// typo) must not be swallowed silently, as `tk` did: `next` reads an id as its EPIC
/// argument; anything else is a usage error naming the value.
struct AwaitingArg {
    bool given = false;
    std::vector<board::Awaiting> types;
};

std::variant<AwaitingArg, int> awaiting_arg(const CLI::Option* option,
                                            const std::string& text,
                                            std::string_view command,
                                            std::string* epic) {
    AwaitingArg arg;
    arg.given = option->count() > 0;
    if (!arg.given || text.empty()) return arg;
    if (auto types = board::cli::parse_awaiting_list(text)) {
        arg.types = std::move(*types);
        return arg;
    }
    if (epic && epic->empty() && board::is_valid_ticket_id(text)) {
        *epic = text;
        return arg;
    }
    return fail(ExitCode::usage,
                command,
                fmt::format("--awaiting \"{}\": expected awaiting types separated by commas (work, "
                            "approval, input, review, content, escalation, checkpoint)",
                            text));
}

std::string join_lines(std::initializer_list<std::string_view> lines) {
    std::string out;
    for (const auto line : lines) {
        out += line;
        out += '\n';
    }
    return out;
}

/// `board completion bash`: a completion script made from the command table itself, so it
/// never falls behind a new command or flag. Ticket ids come from the board's tickets/.
std::string bash_completion(const CLI::App& app) {
    std::string commands;
    std::string cases;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        const std::string& name = sub->get_name();
        if (!commands.empty()) commands += ' ';
        commands += name;
        std::string flags;
        for (const CLI::Option* option : sub->get_options()) {
            for (const auto& l : option->get_lnames()) flags += (flags.empty() ? "--" : " --") + l;
            for (const auto& s : option->get_snames()) flags += " -" + s;
        }
        cases += fmt::format("        {}) opts=\"{}\" ;;\n", name, flags);
    }
    return fmt::format(R"sh(# bash completion for board (generated by `board completion bash`)
# Install: board completion bash > ~/.local/share/bash-completion/completions/board
_board_tickets() {{
    local dir="${{BOARD_DIR:-}}" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        [[ "${{COMP_WORDS[i]}}" == --board ]] && dir="${{COMP_WORDS[i+1]}}"
    done
    if [[ -z "$dir" ]]; then
        dir="$PWD"
        while [[ "$dir" != / && ! -f "$dir/board.yaml" ]]; do dir="$(dirname "$dir")"; done
    fi
    [[ -d "$dir/tickets" ]] && ls "$dir/tickets" 2>/dev/null
}}
_board() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local cmd="${{COMP_WORDS[1]}}" opts=""
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "{} --help --version" -- "$cur")); return
    fi
    case "$prev" in
        --board) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --awaiting|--requires) COMPREPLY=($(compgen -W "work approval input review content escalation checkpoint none" -- "$cur")); return ;;
        -s|--status) COMPREPLY=($(compgen -W "backlog research ready planning implementing review done" -- "$cur")); return ;;
        -t|--type) COMPREPLY=($(compgen -W "task bug feature chore epic" -- "$cur")); return ;;
        --from) COMPREPLY=($(compgen -W "human agent" -- "$cur")); return ;;
    esac
    case "$cmd" in
{}    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ "$cmd" == move && $COMP_CWORD -eq 3 ]]; then
        COMPREPLY=($(compgen -W "backlog research ready planning implementing" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$(_board_tickets)" -- "$cur"))
    fi
}}
complete -F _board board
)sh",
                       commands,
                       cases);
}

/// The commands registered lazily: when the command line names one of them, only that one is
/// built (CLI11 builds every option of every subcommand up front, which was a quarter of a
/// `board show`). Parsing, errors and `COMMAND --help` are the same, as the invoked command is
/// built exactly as before.
constexpr std::array<std::string_view, 22> lazy_commands{
    "log",   "replay",  "show",   "verify", "init",         "create",    "list",   "next",
    "ready", "approve", "reject", "note",   "answer",       "questions", "update", "start",
    "move",  "cancel",  "reopen", "fork",   "import-ticks", "doctor"};

/// The command `argv` invokes, if it is one of lazy_commands and nothing before it asks for
/// the whole table; else empty: build every command. Before the command only the global
/// options may come (`--board DIR`, `--as NAME`, `--json`); anything else there (`--help`,
/// `--version`, an unknown flag, `--`) or no command at all needs every command (the help
/// lists them, and an error must read as before).
std::string_view invoked_command(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg{argv[i]};
        if (arg == "--board" || arg == "--as") {
            ++i;  // its value, whatever it looks like
            continue;
        }
        if (arg == "--json" || arg.rfind("--board=", 0) == 0 || arg.rfind("--as=", 0) == 0)
            continue;
        if (std::find(lazy_commands.begin(), lazy_commands.end(), arg) != lazy_commands.end())
            return arg;
        return {};
    }
    return {};
}

/// A command line CLI11 could not parse, as one line like every other refusal:
/// `board: reject: FEEDBACK is required (board reject --help)`.
int usage_error(
    const CLI::App& app, int argc, char** argv, std::string_view only, std::string_view what) {
    std::string command{only};
    if (command.empty()) {
        const auto chosen = app.get_subcommands();  // those it got to before the error
        if (!chosen.empty()) command = chosen.front()->get_name();
    }
    const std::string help = command.empty() ? "board --help" : "board " + command + " --help";
    const std::string where = command.empty() ? std::string{} : command + ": ";
    std::string message{what};
    if (message == "A subcommand is required") {
        message = "a command is required";
        for (int i = 1; i < argc; ++i) {  // the word meant as one, if there is one
            const std::string_view arg{argv[i]};
            if (arg == "--board" || arg == "--as") {
                ++i;  // its value
                continue;
            }
            if (arg.empty() || arg.front() != '-') {
                message = fmt::format("\"{}\" is not a command", argv[i]);
                break;
            }
        }
    }
    for (const auto& [lead, plain] :
         {std::pair{"The following argument was not expected: ", "unexpected argument "},
          std::pair{"The following arguments were not expected: ", "unexpected arguments "}}) {
        const std::string_view prefix{lead};
        if (message.rfind(prefix, 0) == 0) message = plain + message.substr(prefix.size());
    }
    say(fmt::format("{}{} ({})", where, message, help));
    return static_cast<int>(ExitCode::usage);
}

/// `--until`, `--at`: a seq, 1 or more (CLI11's own range check printed DBL_MAX).
std::string a_seq(const std::string& text) {
    const bool digits = !text.empty() && text.size() <= 18 &&
                        text.find_first_not_of("0123456789") == std::string::npos;
    if (digits && text.find_first_not_of('0') != std::string::npos) return {};
    return fmt::format("\"{}\" is not a seq (1, 2, 3...: board log ID shows them)", text);
}

bool parsed(const CLI::App* sub) {
    return sub && sub->parsed();
}

int run(int argc, char** argv) {
    const std::string_view only = invoked_command(argc, argv);
    const auto wanted = [&](std::string_view name) { return only.empty() || only == name; };
    // Named, so that usage lines say `board`, not the path it was started by.
    CLI::App app{"board: a kanban board that AI agents and humans share", "board"};
    app.require_subcommand(1);
    Options options;
    app.add_option("--board",
                   options.board_dir,
                   "the board folder (default: $BOARD_DIR, else the nearest board.yaml)");
    app.add_option("--as", options.as, "who a human event is by (default: $USER)");
    app.add_flag("--json", options.json, "machine output on stdout");
    app.set_version_flag("--version", "board 0.1.0");
    app.footer(join_lines(
        {"",
         "Exit codes: 0 done, 1 refused (or unknown id, or nothing next), 2 usage, 3 storage.",
         "Run `board COMMAND --help` for a command's flags and examples."}));

    std::string id;
    std::int64_t until = 0;
    bool diff = false;
    CLI::App* log = nullptr;
    if (wanted("log")) {
        log = app.add_subcommand("log", "the event log of a ticket, one readable line per event");
        log->add_option("ID", id, "ticket id, e.g. PROJ-12")->required();
        log->footer("Example:\n  board log PROJ-12\n  board log PROJ-12 --json | jq .type");
    }
    CLI::App* replay = nullptr;
    if (wanted("replay")) {
        replay = app.add_subcommand(
            "replay", "fold a ticket's log step by step: each event and the state after it");
        replay->add_option("ID", id, "ticket id, e.g. PROJ-12")->required();
        replay->add_option("--until", until, "stop after this seq")->check(a_seq);
        replay->add_flag("--diff", diff, "show what each event changed instead of the state");
        replay->footer(
            "Examples:\n  board replay PROJ-12\n  board replay PROJ-12 --until 7 --diff");
    }
    CLI::App* show = nullptr;
    if (wanted("show")) {
        show = app.add_subcommand("show",
                                  "a ticket: fields, artifacts, questions, notes, recent events");
        show->add_option("ID", id, "ticket id, e.g. PROJ-12")->required();
        show->footer("Examples:\n  board show PROJ-12\n  board show PROJ-12 --json | jq .awaiting");
    }
    std::vector<std::string> verify_ids;
    CLI::App* verify = nullptr;
    if (wanted("verify")) {
        verify = app.add_subcommand("verify",
                                    "check every log parses and replays, snapshots match, "
                                    "artifacts unchanged; exit 0 only if all hold");
        verify->add_option("ID", verify_ids, "ticket ids (default: every ticket)");
        verify->footer("Examples:\n  board verify\n  board verify PROJ-3 PROJ-4 --json");
    }
    CLI::App* doctor = nullptr;
    if (wanted("doctor")) {
        doctor = app.add_subcommand("doctor",
                                    "can the agents run here? programs, credentials, git, "
                                    "folders, sandbox; exit 0 unless something fails");
        doctor->footer("Examples:\n  board doctor\n  board doctor --json");
    }
    std::string init_dir = ".";
    std::string prefix = "PROJ";
    CLI::App* init = nullptr;
    if (wanted("init")) {
        init = app.add_subcommand("init", "create board.yaml (commented defaults) and tickets/");
        init->add_option("DIR", init_dir, "where (default: here)");
        init->add_option("--prefix", prefix, "ticket id prefix, e.g. PROJ for PROJ-1");
        init->footer("Example:\n  board init . --prefix WEB");
    }

    board::cli::CreateRequest request;
    std::string labels, blocked_by;
    CLI::App* create = nullptr;
    CLI::Option* manual = nullptr;
    if (wanted("create")) {
        create = app.add_subcommand("create", "a new ticket in backlog; prints its id");
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
        manual =
            create->add_flag("--manual", request.manual, "deprecated: same as --awaiting work");
        create->footer(
            "Examples:\n  board create \"Retry uploads\" -t feature -p 1 -l backend\n"
            "  board create \"Checkout v2\" -t epic\n"
            "  board create \"Pay with cards\" --parent PROJ-7 --blocked-by PROJ-8 --requires "
            "review\n"
            "  board create \"Rotate the keys\" --awaiting work   # a human does it");
    }

    // list
    std::string list_status, list_awaiting, list_labels;
    board::ListFilter list_filter;
    CLI::App* list = nullptr;
    CLI::Option* list_awaiting_opt = nullptr;
    if (wanted("list")) {
        list = app.add_subcommand(
            "list", "tickets in `next` order (done ones only with --all or --status done)");
        list->add_option("-s,--status", list_status, "only these columns, comma-separated");
        list_awaiting_opt =
            list->add_option("--awaiting",
                             list_awaiting,
                             "only tickets awaiting a human (optionally of these types)")
                ->expected(0, 1);
        list->add_option("--parent", list_filter.parent, "only the children of this epic");
        list->add_flag("--standalone", list_filter.standalone, "only tickets without an epic");
        list->add_flag("--orphan", list_filter.orphan, "only tickets whose epic is done");
        list->add_option("-l,--label", list_labels, "only tickets with all these labels");
        list->add_flag("--all", list_filter.all, "include done tickets");
        list->footer(
            join_lines({"Examples:",
                        "  board list",
                        "  board list --awaiting              # everything a human must look at",
                        "  board list --awaiting review,approval --json",
                        "  board list --status implementing,review -l backend",
                        "  board list --parent PROJ-7 --all"}));
    }

    // next
    std::string next_epic, next_awaiting;
    board::NextFilter next_filter;
    CLI::App* next = nullptr;
    CLI::Option* next_awaiting_opt = nullptr;
    if (wanted("next")) {
        next = app.add_subcommand(
            "next", "the ticket the agent takes next, or with --awaiting the next one for a human");
        next->add_option("EPIC", next_epic, "only this epic's children");
        next_awaiting_opt =
            next->add_option("--awaiting",
                             next_awaiting,
                             "the human side: tickets awaiting a human (optionally of these types)")
                ->expected(0, 1);
        next->add_flag("--standalone", next_filter.standalone, "only tickets without an epic");
        next->add_flag("--orphan", next_filter.orphan, "only tickets whose epic is done");
        next->footer(join_lines({"Exit code 1 (and `null` with --json) when there is nothing.",
                                 "Examples:",
                                 "  board next",
                                 "  board next PROJ-7 --json          # within the epic PROJ-7",
                                 "  board next --awaiting             # what should I look at?",
                                 "  board next --awaiting input,escalation"}));
    }

    // ready
    std::string ready_epic;
    board::NextFilter ready_filter;
    CLI::App* ready = nullptr;
    if (wanted("ready")) {
        ready =
            app.add_subcommand("ready", "every ticket the agent could take now, in `next` order");
        ready->add_option("EPIC", ready_epic, "only this epic's children");
        ready->add_flag("--standalone", ready_filter.standalone, "only tickets without an epic");
        ready->add_flag("--orphan", ready_filter.orphan, "only tickets whose epic is done");
        ready->footer("Examples:\n  board ready\n  board ready --json | jq -r '.[].id'");
    }

    // verdicts
    std::string text;
    CLI::App* approve = nullptr;
    if (wanted("approve")) {
        approve = app.add_subcommand(
            "approve",
            "the human verdict yes: passes a gate, accepts work or answers a request for input");
        approve->add_option("ID", id, "ticket id")->required();
        approve->add_option("NOTE", text, "a note for the agent (the answer, for awaiting input)");
        approve->footer(
            join_lines({"Examples:",
                        "  board approve PROJ-4",
                        "  board approve PROJ-4 \"Ship it; watch the error rate\"",
                        "  board approve PROJ-9 \"Use Postgres\"      # answers awaiting input"}));
    }
    CLI::App* reject = nullptr;
    if (wanted("reject")) {
        reject = app.add_subcommand(
            "reject", "the human verdict no, with the feedback the agent needs (required)");
        reject->add_option("ID", id, "ticket id")->required();
        reject->add_option("FEEDBACK", text, "what to change; an agent cannot act on a bare no")
            ->required();
        reject->footer("Example:\n  board reject PROJ-4 \"Use the existing retry helper\"");
    }

    std::string from = "agent";
    CLI::App* note = nullptr;
    if (wanted("note")) {
        note =
            app.add_subcommand("note", "add a note to a ticket (the agent's by default, as in tk)");
        note->add_option("ID", id, "ticket id")->required();
        note->add_option("TEXT", text, "the note")->required();
        note->add_option("--from", from, "human or agent (default agent)")
            ->check(CLI::IsMember({"human", "agent"}));
        note->footer(
            "Examples:\n  board note PROJ-4 \"Tried the retry helper; flaky on CI\"\n"
            "  board note PROJ-4 \"Customer confirmed the fix\" --from human");
    }

    std::string qid, value;
    CLI::App* answer = nullptr;
    if (wanted("answer")) {
        answer = app.add_subcommand("answer", "answer an agent's question (ids like PROJ-12.q1)");
        answer->add_option("QID", qid, "question id, e.g. PROJ-12.q1 (see board questions)")
            ->required();
        answer
            ->add_option(
                "VALUE", value, "text; an option id, value or label; true/false; approve/reject")
            ->required();
        answer->add_option("--note", text, "a note for the agent with the answer");
        answer->footer(
            "Examples:\n  board questions --pending\n  board answer PROJ-12.q1 postgres\n"
            "  board answer PROJ-12.q2 true --note \"only on staging\"");
    }
    bool pending_only = false;
    CLI::App* questions = nullptr;
    if (wanted("questions")) {
        questions =
            app.add_subcommand("questions", "agent questions on the board, answered or not");
        questions->add_flag("--pending", pending_only, "only those still waiting for an answer");
        questions->footer(
            "Examples:\n  board questions --pending\n  board questions --json | jq '.[] | "
            "select(.status==\"pending\")'");
    }

    // update
    board::cli::UpdateRequest update_request;
    std::string update_title, update_description, update_labels, update_parent, update_blocked,
        update_requires, update_awaiting;
    int update_priority = 0;
    CLI::App* update = nullptr;
    CLI::Option* u_title = nullptr;
    CLI::Option* u_description = nullptr;
    CLI::Option* u_priority = nullptr;
    CLI::Option* u_labels = nullptr;
    CLI::Option* u_parent = nullptr;
    CLI::Option* u_blocked = nullptr;
    CLI::Option* u_requires = nullptr;
    CLI::Option* u_awaiting = nullptr;
    if (wanted("update")) {
        update = app.add_subcommand(
            "update", "edit a ticket's fields; --awaiting none releases it to the agent");
        update->add_option("ID", id, "ticket id")->required();
        u_title = update->add_option("--title", update_title, "new title");
        u_description =
            update->add_option("-d,--description", update_description, "new description");
        u_priority = update->add_option("-p,--priority", update_priority, "0 critical … 4 backlog");
        u_labels = update->add_option(
            "-l,--labels", update_labels, "replace the labels (comma-separated; \"\" clears)");
        u_parent = update->add_option("--parent", update_parent, "the epic (\"\" clears)");
        u_blocked = update->add_option(
            "--blocked-by", update_blocked, "replace the blockers (comma-separated; \"\" clears)");
        u_requires = update->add_option(
            "--requires", update_requires, "final gate: approval, review, content or none");
        u_awaiting = update->add_option(
            "--awaiting", update_awaiting, "hand to a human (work, ...) or none");
        update->footer(
            join_lines({"Examples:",
                        "  board update PROJ-4 -p 0 -l backend,urgent",
                        "  board update PROJ-4 --blocked-by PROJ-2,PROJ-3",
                        "  board update PROJ-4 --requires review",
                        "  board update PROJ-4 --awaiting work     # I will do it myself",
                        "  board update PROJ-4 --awaiting none     # back to the agent"}));
    }

    // moves
    CLI::App* start = nullptr;
    if (wanted("start")) {
        start = app.add_subcommand("start",
                                   "start a ticket by hand: backlog → research, ready → planning");
        start->add_option("ID", id, "ticket id")->required();
        start->footer("Example:\n  board start PROJ-4");
    }
    std::string status, reason;
    CLI::App* move = nullptr;
    if (wanted("move")) {
        move = app.add_subcommand("move", "move a ticket back to an earlier column, with a reason");
        move->add_option("ID", id, "ticket id")->required();
        move->add_option("STATUS", status, "backlog, research, ready, planning or implementing")
            ->required();
        move->add_option("--reason", reason, "why (required)")->required();
        move->footer(
            "Example:\n  board move PROJ-4 planning --reason \"the plan missed the migration\"");
    }
    CLI::App* cancel = nullptr;
    if (wanted("cancel")) {
        cancel =
            app.add_subcommand("cancel", "close a ticket as won't do (cancels pending questions)");
        cancel->add_option("ID", id, "ticket id")->required();
        cancel->add_option("REASON", reason, "why");
        cancel->footer("Example:\n  board cancel PROJ-4 \"superseded by PROJ-9\"");
    }
    CLI::App* reopen = nullptr;
    if (wanted("reopen")) {
        reopen = app.add_subcommand("reopen", "reopen a done ticket into backlog");
        reopen->add_option("ID", id, "ticket id")->required();
        reopen->add_option("REASON", reason, "why");
        reopen->footer("Example:\n  board reopen PROJ-4 \"the bug is back on Safari\"");
    }
    std::int64_t at_seq = 0;
    CLI::App* fork = nullptr;
    if (wanted("fork")) {
        fork = app.add_subcommand("fork",
                                  "a new ticket whose log is a copy of the first SEQ events of ID");
        fork->add_option("ID", id, "ticket id")->required();
        fork->add_option("--at", at_seq, "how many events to copy")->required()->check(a_seq);
        fork->footer(
            "Example:\n  board replay PROJ-4 --diff      # find the seq to go back to\n"
            "  board fork PROJ-4 --at 12        # rerun planning differently; PROJ-4 is untouched");
    }

    board::cli::ImportTicksRequest import_request;
    std::string import_path;
    CLI::App* import_ticks = nullptr;
    if (wanted("import-ticks")) {
        import_ticks = app.add_subcommand(
            "import-ticks",
            "import a tk .tick folder: each tick becomes a ticket; PATH is only read");
        import_ticks
            ->add_option("PATH", import_path, "tk's .tick folder, or the folder that holds it")
            ->required();
        import_ticks->add_flag(
            "--dry-run", import_request.dry_run, "report what it would do; write nothing");
        import_ticks->footer(board::cli::import_ticks_help());
    }

    std::string shell;
    // Never lazy: its script is made from the whole table.
    CLI::App* completion = nullptr;
    if (wanted("completion")) {
        completion = app.add_subcommand("completion", "print a shell completion script");
        completion->add_option("SHELL", shell, "bash")->required()->check(CLI::IsMember({"bash"}));
        completion->footer(
            "Example:\n  board completion bash > ~/.local/share/bash-completion/completions/board\n"
            "  source <(board completion bash)");
    }

    for (auto* sub : {log,   replay,  show,   verify, create,       init,      list,   next,
                      ready, approve, reject, note,   answer,       questions, update, start,
                      move,  cancel,  reopen, fork,   import_ticks, doctor})
        add_common(sub, options);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version are "errors" that succeed: CLI11 prints them.
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
        return usage_error(app, argc, argv, only, e.what());
    }
    if (parsed(completion)) {
        std::cout << bash_completion(app);
        return 0;
    }
    if (parsed(init)) {
        auto outcome = board::cli::init_board(init_dir, prefix);
        if (options.json && outcome.exit_code == 0) {
            std::error_code ec;
            const fs::path where = fs::absolute(init_dir, ec);
            outcome.output = boost::json::serialize(boost::json::object{
                                 {"board", ec ? init_dir : where.lexically_normal().string()},
                                 {"prefix", prefix}}) +
                             "\n";
        }
        return report(outcome);
    }
    if (parsed(create)) {
        if (manual->count() > 0) warn("--manual is deprecated; use --awaiting work");
        request.labels = board::cli::split_list(labels);
        request.blocked_by = board::cli::split_list(blocked_by);
        auto ctx = context_for(options, "create");
        if (const int* code = std::get_if<int>(&ctx)) return *code;
        const auto& c = std::get<board::cli::Context>(ctx);
        return report(board::cli::create_ticket(c.board, request, c.by, options.json));
    }
    if (parsed(log)) return run_log(options, id);
    if (parsed(show)) return run_show(options, id);
    if (parsed(verify)) return run_verify(options, verify_ids);
    if (parsed(doctor)) return run_doctor(options);
    if (parsed(replay)) return run_replay(options, id, until, diff);

    // Everything below works on a board.
    const CLI::App* chosen = app.get_subcommands().front();
    auto found = context_for(options, chosen->get_name());
    if (const int* code = std::get_if<int>(&found)) return *code;
    const auto& ctx = std::get<board::cli::Context>(found);
    namespace cli = board::cli;

    if (parsed(list)) {
        if (!list_status.empty()) {
            auto statuses = cli::parse_status_list(list_status);
            if (!statuses)
                return fail(
                    ExitCode::usage,
                    "list",
                    fmt::format("--status \"{}\": expected columns separated by commas (backlog, "
                                "research, ready, planning, implementing, review, done)",
                                list_status));
            list_filter.statuses = std::move(*statuses);
        }
        auto awaiting = awaiting_arg(list_awaiting_opt, list_awaiting, "list", nullptr);
        if (const int* code = std::get_if<int>(&awaiting)) return *code;
        list_filter.awaiting_any = std::get<AwaitingArg>(awaiting).given;
        list_filter.awaiting = std::get<AwaitingArg>(awaiting).types;
        list_filter.labels = board::cli::split_list(list_labels);
        return report(cli::list_tickets(ctx, list_filter));
    }
    if (parsed(next)) {
        cli::NextRequest next_request;
        auto awaiting = awaiting_arg(next_awaiting_opt, next_awaiting, "next", &next_epic);
        if (const int* code = std::get_if<int>(&awaiting)) return *code;
        next_request.human = std::get<AwaitingArg>(awaiting).given;
        next_request.types = std::get<AwaitingArg>(awaiting).types;
        next_request.filter = next_filter;
        next_request.filter.epic = next_epic;
        return report(cli::next_ticket(ctx, next_request));
    }
    if (parsed(ready)) {
        ready_filter.epic = ready_epic;
        return report(cli::ready_tickets(ctx, ready_filter));
    }
    if (parsed(approve)) return report(cli::approve(ctx, id, text));
    if (parsed(reject)) return report(cli::reject(ctx, id, text));
    if (parsed(note)) return report(cli::add_note(ctx, id, text, from == "human"));
    if (parsed(answer)) return report(cli::answer(ctx, qid, value, text));
    if (parsed(questions)) return report(cli::list_questions(ctx, pending_only));
    if (parsed(update)) {
        if (u_title->count()) update_request.title = update_title;
        if (u_description->count()) update_request.description = update_description;
        if (u_priority->count()) update_request.priority = update_priority;
        if (u_labels->count()) update_request.labels = board::cli::split_list(update_labels);
        if (u_parent->count()) update_request.parent = update_parent;
        if (u_blocked->count()) update_request.blocked_by = board::cli::split_list(update_blocked);
        if (u_requires->count()) update_request.requires_ = update_requires;
        if (u_awaiting->count()) update_request.awaiting = update_awaiting;
        return report(cli::update(ctx, id, update_request));
    }
    if (parsed(start)) return report(cli::start(ctx, id));
    if (parsed(move)) return report(cli::move(ctx, id, status, reason));
    if (parsed(cancel)) return report(cli::cancel(ctx, id, reason));
    if (parsed(reopen)) return report(cli::reopen(ctx, id, reason));
    if (parsed(import_ticks)) {
        import_request.source = import_path;
        return report(cli::import_ticks(ctx, import_request));
    }
    return report(cli::fork(ctx, id, at_seq));
}

}  // namespace

int main(int argc, char** argv) {
    // Anything unexpected (disk, memory) ends in one line and the storage exit code, never a
    // crash report.
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        say(e.what());
        return static_cast<int>(ExitCode::storage);
    }
}
