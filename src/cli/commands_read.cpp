// The commands that read: one ticket (log, replay, show), the board (list, next, ready,
// questions), and checks (verify, doctor). Each parses, asks the application layer, renders.

#include "cli/command.hpp"
#include "cli/doctor.hpp"
#include "cli/history.hpp"
#include "cli/render.hpp"

#include <board/board_config.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>
#include <board/reduce.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <poll.h>
#include <sys/inotify.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <variant>

namespace board::cli {
namespace {

/// The session for a read, or the exit code of why there is none.
std::variant<Session, int> reading(const GlobalOptions& options, std::string_view command) {
    return Session::open(options, command, false);
}

/// `--awaiting` takes an optional list of types. A value that is not one (a ticket id, a typo)
/// must not be swallowed silently, as `tk` did: `next` reads an id as its EPIC argument;
/// anything else is a usage error naming the value.
std::variant<std::vector<Awaiting>, int> awaiting_types(const std::string& text,
                                                        std::string_view command,
                                                        std::string* epic) {
    if (text.empty()) return std::vector<Awaiting>{};
    if (auto types = app::parse_awaiting_list(text)) return std::move(*types);
    if (epic && epic->empty() && is_valid_ticket_id(text)) {
        *epic = text;
        return std::vector<Awaiting>{};
    }
    return fail(Exit::usage,
                command,
                fmt::format("--awaiting \"{}\": expected awaiting types separated by commas (work, "
                            "approval, input, review, content, escalation, checkpoint)",
                            text));
}

/// How long ago `since` was, roughly: `40s`, `12m`, `3h 5m`, `2d 4h`.
std::string waited(UnixMillis since) {
    const auto seconds = std::max<UnixMillis>(0, (wall_clock_now() - since) / 1000);
    if (seconds < 60) return fmt::format("{}s", seconds);
    if (seconds < 3600) return fmt::format("{}m", seconds / 60);
    if (seconds < 86400) return fmt::format("{}h {}m", seconds / 3600, seconds % 3600 / 60);
    return fmt::format("{}d {}h", seconds / 86400, seconds % 86400 / 3600);
}

/// What a ticket that awaits a person asks of them, indented under its heading: who asked,
/// their words, the questions with their choices, the artifact to judge, what to type.
std::string request_text(const Ticket& t) {
    const auto request = app::request_of(t);
    if (!request) return {};
    std::string out =
        fmt::format("  awaiting {} for {}", to_string(request->kind), waited(request->since));
    if (!request->asked_by.empty()) out += fmt::format(" · asked by {}", request->asked_by);
    out += "\n";
    if (!request->words.empty())
        out += fmt::format("  │ {}\n", printable_block(request->words, "  │ "));
    for (const auto& q : request->questions) {
        out += fmt::format("  ? {}.{} ({}): {}\n",
                           t.id,
                           q.id,
                           to_string(q.kind),
                           printable_block(q.question, "    "));
        for (const auto& option : q.options)
            out += fmt::format(
                "      {} = {}{}\n",
                printable(option.id),
                printable(option.label.empty() ? option.value : option.label),
                q.default_response && *q.default_response == option.id ? "  (the default)" : "");
    }
    if (request->artifact)
        out += fmt::format("  {} ({}): {}\n",
                           request->artifact->path,
                           to_string(request->artifact->status),
                           printable(request->artifact->summary));
    for (const auto& command : request->commands) out += fmt::format("  → {}\n", command);
    return out;
}

/// A `--json` board-wide query: answered by the board's daemon when one runs (it watches every
/// log), else from the logs. Both give the same bytes (app::answer_query).
int print_query(const GlobalOptions& options, std::string_view command, const app::BoardQuery& q) {
    auto session = reading(options, command);
    if (auto* code = std::get_if<int>(&session)) return *code;
    auto& s = std::get<Session>(session);
    auto answer = app::ask_daemon(s.root(), q);
    if (!answer) answer = app::answer_query(s.board(), q);
    std::cout << answer->output << std::flush;
    warn_all(answer->warnings);
    if (!answer->message.empty()) say(answer->message);
    return answer->exit_code;
}

/// Prints a board-wide selection as a table.
int print_picked(const Session& session, const app::Result<app::Picked>& picked) {
    if (!picked) return report(picked.error());
    const auto& p = picked.value();
    std::cout << entries_table(p, session.colour());
    warn_all(p.warnings);
    return 0;
}

std::string show_text(const app::TicketView& view) {
    const Ticket& t = view.ticket;
    const auto block = printable_block;
    std::string out = fmt::format("{}  {}\n", t.id, printable(t.title));
    using Kind = app::Standing::Kind;
    std::string state = view.done_by_children ? "done (every child is done)" : describe_state(t);
    // Not the agent's turn after all: held by the board (WIP, a blocker, a backoff, a gate).
    const bool held = view.standing && view.standing->kind != Kind::agent_next &&
                      view.standing->kind != Kind::running && !t.awaiting;
    if (const auto at = state.find(", agent's turn"); held && at != std::string::npos)
        state.replace(at, 14, ", " + view.standing->turn);
    out += fmt::format("  {}\n", state);
    if (view.standing && view.standing->kind != Kind::awaiting && view.standing->kind != Kind::done)
        out += fmt::format("  why: {}\n", view.standing->why);
    out += request_text(t);
    if (view.epic)
        out +=
            fmt::format("  epic: {} of {} children done\n", view.epic->done, view.epic->children);
    out += fmt::format("  {} · priority {}", to_string(t.type), t.priority);
    if (!t.labels.empty())
        out += fmt::format(" · labels {}", printable(fmt::format("{}", fmt::join(t.labels, ","))));
    if (!t.parent.empty()) out += fmt::format(" · parent {}", t.parent);
    if (!t.blocked_by.empty()) out += fmt::format(" · blocked by {}", fmt::join(t.blocked_by, ","));
    if (t.requires_) out += fmt::format(" · requires {}", to_string(*t.requires_));
    out += fmt::format(" · {} runs, ${:.2f}\n", t.runs_total, t.cost_usd);
    if (!t.description.empty()) out += "\n" + block(t.description, "") + "\n";
    bool any_artifact = false;
    for (const auto kind : all_artifact_kinds) {
        if (const auto& a = t.artifact(kind)) {
            if (!any_artifact) out += "\nArtifacts\n";
            any_artifact = true;
            out += fmt::format(
                "  {:<22} {:<12} {}\n", a->path, to_string(a->status), printable(a->summary));
        }
    }
    if (!t.questions.empty()) out += "\nQuestions\n";
    for (const auto& q : t.questions)
        out += fmt::format("  {}.{} [{}] {}{}\n",
                           t.id,
                           q.id,
                           to_string(q.status),
                           block(q.question, "    "),
                           q.answer.empty() ? "" : " → " + printable(q.answer));
    if (!t.notes.empty()) out += "\nNotes\n";
    const std::size_t shown_notes = std::min<std::size_t>(t.notes.size(), 10);
    for (auto it = t.notes.end() - static_cast<std::ptrdiff_t>(shown_notes); it != t.notes.end();
         ++it) {
        const std::string who = it->author.empty()
                                    ? std::string{to_string(it->from)}
                                    : fmt::format("{}:{}", to_string(it->from), it->author);
        out += fmt::format("  {} {}: {}\n", format_timestamp(it->at), who, block(it->text, "    "));
    }
    out += "\nRecent events\n";
    const std::size_t shown_events = std::min<std::size_t>(view.events.size(), 5);
    for (auto it = view.events.end() - static_cast<std::ptrdiff_t>(shown_events);
         it != view.events.end();
         ++it)
        out += describe(*it) + "\n";
    return out;
}

std::string questions_table(const app::Asked& asked, bool colour) {
    Table table;
    table.header = {"QUESTION", "STATUS", "KIND", "ANSWER", "TEXT"};
    for (const Ticket& ticket : asked.tickets) {
        for (const Question& q : ticket.questions) {
            if (asked.pending_only && q.status != QuestionStatus::pending) continue;
            std::string answer_type{to_string(q.response_type)};
            if (q.response_type == ResponseType::choice) {
                std::vector<std::string> ids;
                for (const auto& o : q.options) ids.push_back(o.id);
                answer_type = fmt::format("choice: {}", fmt::join(ids, "|"));
            }
            std::string text = q.question;
            if (q.status == QuestionStatus::answered) text += fmt::format("  → {}", q.answer);
            table.rows.push_back({fmt::format("{}.{}", ticket.id, q.id),
                                  std::string{to_string(q.status)},
                                  std::string{to_string(q.kind)},
                                  std::move(answer_type),
                                  std::move(text)});
            table.colours.push_back(
                {"", q.status == QuestionStatus::pending ? "1;33" : "2", "", "", ""});
        }
    }
    return render(table, colour);
}

// ---------------------------------------------------------------------------------------------
// One ticket

/// Returns when something is written, made or renamed in one of `folders`, or after
/// `longest` (a look every second where inotify cannot be had).
void wait_for_change(const std::vector<std::filesystem::path>& folders,
                     std::chrono::milliseconds longest) {
    const int watch = ::inotify_init1(IN_CLOEXEC);
    if (watch >= 0) {
        for (const auto& folder : folders)
            ::inotify_add_watch(
                watch, folder.c_str(), IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE);
        pollfd changed{watch, POLLIN, 0};
        ::poll(&changed, 1, static_cast<int>(longest.count()));
        ::close(watch);
        return;
    }
    std::this_thread::sleep_for(longest);
}

template <std::size_t... I>
bool is_event_type_of(std::string_view type, std::index_sequence<I...>) {
    return ((std::variant_alternative_t<I, Payload>::type == type) || ...);
}

/// A `type` some event has (`verdict`, `run-finished`): a typo in --type is a usage error,
/// not an empty answer.
bool is_event_type(std::string_view type) {
    return is_event_type_of(type, std::make_index_sequence<std::variant_size_v<Payload>>{});
}

struct LogArgs {
    std::string id;
    bool all = false;
    std::string since, types, by;
    bool follow = false;
};

/// `--since`: a time (`2026-11-26T05:00:00Z`) or how long ago (`2h`, `30m`).
std::optional<UnixMillis> since_time(const std::string& text) {
    if (auto at = parse_timestamp(text)) return at;
    if (auto ago = parse_duration(text)) return wall_clock_now() - ago->count();
    return std::nullopt;
}

Run declare_log(CLI::App& sub) {
    auto args = std::make_shared<LogArgs>();
    sub.add_option("ID", args->id, "ticket id, e.g. PROJ-12 (or --all)");
    sub.add_flag("--all", args->all, "every ticket's events, merged by time: the board's timeline");
    sub.add_option(
        "--since", args->since, "only events since a time (2026-11-26T05:00:00Z) or ago (2h)");
    sub.add_option("--type", args->types, "only these event types, e.g. verdict,run-finished");
    sub.add_option(
        "--by", args->by, "only events by human, human:ana, agent, agent:planning or system");
    sub.add_flag("--follow,-f", args->follow, "keep printing events as they are appended");
    sub.footer(join_lines({"Examples:",
                           "  board log PROJ-12",
                           "  board log PROJ-12 --json | jq .type",
                           "  board log --all --since 2h --by human",
                           "  board log --all --type verdict,run-finished --follow"}));
    return [args](const GlobalOptions& options) {
        if (args->all == !args->id.empty())
            return fail(Exit::usage, "log", "name one ticket, or --all for every ticket");
        app::TimelineFilter filter;
        if (!args->since.empty()) {
            filter.since = since_time(args->since);
            if (!filter.since)
                return fail(Exit::usage,
                            "log",
                            fmt::format("--since \"{}\" is neither a time like "
                                        "2026-11-26T05:00:00Z nor a duration like 2h",
                                        args->since));
        }
        filter.types = app::split_list(args->types);
        for (const auto& type : filter.types)
            if (!is_event_type(type))
                return fail(
                    Exit::usage, "log", fmt::format("--type: \"{}\" is not an event type", type));
        filter.by = args->by;
        auto session = reading(options, "log");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto& board = std::get<Session>(session).board();
        // What was printed, per ticket: a follow prints only what is new.
        std::map<std::string, std::int64_t, std::less<>> printed;
        const auto print = [&](const std::string& ticket, const Event& e) {
            if (options.json) {
                std::string line = encode_event(e);
                if (args->all) line.insert(1, "\"ticket\":\"" + ticket + "\",");
                std::cout << line << '\n';
            } else {
                std::cout << (args->all ? fmt::format("{:<10} ", ticket) : std::string{})
                          << describe(e) << '\n';
            }
            printed[ticket] = e.seq;
        };
        const auto once = [&]() -> int {
            if (args->all) {
                auto timeline = board.timeline(filter);
                if (!timeline) return report(timeline.error(), "log");
                warn_all(timeline.value().warnings);
                for (const auto& entry : timeline.value().entries)
                    if (entry.event.seq > printed[entry.ticket]) print(entry.ticket, entry.event);
            } else {
                auto history = board.history(args->id);
                if (!history) return report(history.error(), "log");
                warn_all(history.value().warnings);
                for (const auto& e : history.value().events)
                    if (e.seq > printed[args->id] && app::keeps(filter, e)) print(args->id, e);
            }
            std::cout.flush();
            return 0;
        };
        if (const int code = once(); code != 0 || !args->follow) return code;
        const auto tickets = std::get<Session>(session).root() / "tickets";
        for (;;) {
            std::vector<std::filesystem::path> folders{tickets};
            if (!args->all) {
                folders.push_back(tickets / args->id);
            } else {
                std::error_code ec;
                for (const auto& entry : std::filesystem::directory_iterator(tickets, ec))
                    if (entry.is_directory()) folders.push_back(entry.path());
            }
            wait_for_change(folders, std::chrono::seconds{1});
            if (const int code = once(); code != 0) return code;
        }
    };
}

/// `12.3s`, `4m 05s`: a run's length.
std::string run_length(std::int64_t ms) {
    if (ms < 60'000) return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000.0);
    return fmt::format("{}m {:02}s", ms / 60'000, ms % 60'000 / 1000);
}

/// How a run ended, in a few words.
std::string run_end(const app::RunView& r) {
    if (r.end.empty()) return "running";
    if (r.end == "interrupted") return "interrupted";
    if (r.timed_out) return "timed out";
    if (r.exit_code != 0) return fmt::format("exit {}", r.exit_code);
    if (!r.error.empty()) return "failed";
    return r.signal ? std::string{to_string(*r.signal)} : std::string{"no signal"};
}

Run declare_why(CLI::App& sub) {
    auto id = std::make_shared<std::string>();
    sub.add_option("ID", *id, "ticket id, e.g. PROJ-12")->required();
    sub.footer(join_lines({"The one reason a ticket is where it is, and what would move it.",
                           "Examples:",
                           "  board why PROJ-7",
                           "  board why PROJ-7 --json | jq -r .standing.why"}));
    return [id](const GlobalOptions& options) {
        auto session = reading(options, "why");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto why = std::get<Session>(session).board().why(*id);
        if (!why) return report(why.error(), "why");
        const auto& w = why.value();
        warn_all(w.warnings);
        if (options.json) {
            std::cout << app::to_json(w);
            return 0;
        }
        const Ticket& t = w.ticket;
        std::cout << fmt::format("{} {}: {}\n", t.id, to_string(t.status), w.standing.turn);
        std::cout << fmt::format("  {}\n", w.standing.why);
        if (w.gate)
            std::cout << fmt::format("  the gate of {}: {} (gates.{} in board.yaml)\n",
                                     to_string(t.status),
                                     to_string(*w.gate),
                                     to_string(t.status));
        std::cout << request_text(t);
        const Policy& p = w.policy;
        if (t.status != Status::done)
            std::cout << fmt::format(
                "  budget: ${} of {} · attempts {} of {} · iterations {} of {}\n",
                t.cost_usd,
                p.max_cost_usd > 0 ? fmt::format("${}", p.max_cost_usd) : "unlimited",
                t.phase_attempts,
                p.max_attempts,
                t.phase_iterations,
                p.max_iterations);
        if (!w.last_failure.empty())
            std::cout << fmt::format("  last failure: {}\n", printable(w.last_failure));
        return 0;
    };
}

Run declare_runs(CLI::App& sub) {
    auto id = std::make_shared<std::string>();
    sub.add_option("ID", *id, "ticket id, e.g. PROJ-12")->required();
    sub.footer(join_lines({"Examples:",
                           "  board runs PROJ-12",
                           "  board run PROJ-12 0003          # what run 0003 printed",
                           "  board runs PROJ-12 --json | jq '.[] | select(.end == null)'"}));
    return [id](const GlobalOptions& options) {
        auto session = reading(options, "runs");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto runs = std::get<Session>(session).board().runs(*id);
        if (!runs) return report(runs.error(), "runs");
        if (options.json) {
            std::cout << app::runs_json(runs.value());
            return 0;
        }
        Table table;
        table.header = {"RUN", "PHASE", "TRY", "STARTED", "TOOK", "COST", "END"};
        for (const auto& r : runs.value()) {
            table.rows.push_back({r.id,
                                  std::string{to_string(r.phase)},
                                  fmt::format("{}.{}", r.attempt, r.iteration),
                                  format_timestamp(r.started_at),
                                  r.end.empty() ? "-" : run_length(r.duration_ms),
                                  fmt::format("${:.2f}", r.cost_usd),
                                  run_end(r) + (r.error.empty() ? "" : ": " + printable(r.error))});
            table.colours.push_back({"", "", "", "2", "", "", r.end.empty() ? "1;33" : ""});
        }
        std::cout << render(table, std::get<Session>(session).colour());
        return 0;
    };
}

struct DiffArgs {
    std::string id;
    bool stat = false;
};

Run declare_diff(CLI::App& sub) {
    auto args = std::make_shared<DiffArgs>();
    sub.add_option("ID", args->id, "ticket id, e.g. PROJ-12")->required();
    sub.add_flag("--stat", args->stat, "only the files changed and how much");
    sub.footer(join_lines({"The ticket's branch board/<ID> against the branch it ships into",
                           "(ship.base, else the branch this checkout is on).",
                           "Examples:",
                           "  board diff PROJ-12 --stat",
                           "  board diff PROJ-12 | less -R"}));
    return [args](const GlobalOptions& options) {
        auto session = reading(options, "diff");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto diff = std::get<Session>(session).board().diff(args->id, args->stat);
        if (!diff) return report(diff.error(), "diff");
        // Whatever the agent committed is shown, never obeyed: tabs kept, escapes written out.
        std::size_t start = 0;
        const std::string& text = diff.value();
        for (std::size_t nl; start < text.size(); start = nl + 1) {
            nl = text.find('\n', start);
            if (nl == std::string::npos) nl = text.size();
            const std::string_view line{text.data() + start, nl - start};
            std::size_t piece = 0;
            for (std::size_t tab; (tab = line.find('\t', piece)) != std::string_view::npos;
                 piece = tab + 1)
                std::cout << printable(line.substr(piece, tab - piece)) << '\t';
            std::cout << printable(line.substr(piece)) << '\n';
        }
        return 0;
    };
}

struct RunArgs {
    std::string id;
    std::string run;
    bool prompt = false;
    bool follow = false;
};

Run declare_run(CLI::App& sub) {
    auto args = std::make_shared<RunArgs>();
    sub.add_option("ID", args->id, "ticket id, e.g. PROJ-12")->required();
    sub.add_option("RUN", args->run, "run id, as `board runs` lists it (e.g. 0003)")->required();
    sub.add_flag("--prompt", args->prompt, "the prompt the agent was given, not its output");
    sub.add_flag("--follow,-f", args->follow, "keep printing its output until the run ends");
    sub.footer(join_lines({"What the agent printed, control characters shown, never obeyed.",
                           "Examples:",
                           "  board run PROJ-12 0003",
                           "  board run PROJ-12 0003 --prompt",
                           "  board run PROJ-12 0004 --follow"}));
    return [args](const GlobalOptions& options) {
        auto session = reading(options, "run");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto& board = std::get<Session>(session).board();
        const auto find = [&]() -> app::Result<app::RunView> {
            auto runs = board.runs(args->id);
            if (!runs) return std::move(runs).error();
            for (auto& r : runs.value())
                if (r.id == args->run) return std::move(r);
            return app::Refusal{
                app::Refusal::Kind::not_found,
                fmt::format(
                    "run: {} has no run {} (see board runs {})", args->id, args->run, args->id),
                {}};
        };
        auto run = find();
        if (!run) return report(run.error(), "run");
        const std::filesystem::path file =
            args->prompt ? run.value().prompt_file : run.value().log_file;
        std::ifstream in(file, std::ios::binary);
        if (!in && !(args->follow && !args->prompt))
            return fail(
                Exit::refused,
                "run",
                fmt::format("{} is not there (a run that never began, or removed)", file.string()));
        // Whole lines, each made safe for a terminal; the rest waits for its newline.
        std::string pending;
        const auto drain = [&] {
            char chunk[65536];
            while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
                pending.append(chunk, static_cast<std::size_t>(in.gcount()));
                std::size_t start = 0;
                for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos;
                     start = nl + 1)
                    std::cout << printable(std::string_view{pending}.substr(start, nl - start))
                              << '\n';
                pending.erase(0, start);
            }
            in.clear();
            std::cout.flush();
        };
        drain();
        while (args->follow && !args->prompt && run.value().end.empty()) {
            // The log grows while the run goes on; its end is an event on the ticket's log.
            wait_for_change({file.parent_path(), file.parent_path().parent_path()},
                            std::chrono::seconds{1});
            if (!in.is_open()) in.open(file, std::ios::binary);
            drain();
            run = find();
            if (!run) return report(run.error(), "run");
        }
        drain();
        if (!pending.empty()) std::cout << printable(pending) << '\n';
        return 0;
    };
}

struct ReplayArgs {
    std::string id;
    std::int64_t until = 0;
    bool diff = false;
};

Run declare_replay(CLI::App& sub) {
    auto args = std::make_shared<ReplayArgs>();
    sub.add_option("ID", args->id, "ticket id, e.g. PROJ-12")->required();
    sub.add_option("--until", args->until, "stop after this seq")->check(a_seq);
    sub.add_flag("--diff", args->diff, "show what each event changed instead of the state");
    sub.footer("Examples:\n  board replay PROJ-12\n  board replay PROJ-12 --until 7 --diff");
    return [args](const GlobalOptions& options) {
        auto session = reading(options, "replay");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto history = std::get<Session>(session).board().history(args->id);
        if (!history) return report(history.error(), "replay");
        warn_all(history.value().warnings);
        const auto& events = history.value().events;
        const std::int64_t last = events.empty() ? 0 : events.back().seq;
        if (args->until > last)
            return fail(
                Exit::refused,
                "replay",
                fmt::format(
                    "{} has no seq {}: its log ends at seq {}", args->id, args->until, last));
        Ticket ticket;
        boost::json::array steps;
        for (const auto& event : history.value().events) {
            if (args->until > 0 && event.seq > args->until) break;
            Reduced next = reduce(ticket, event);
            if (!next)
                return fail(Exit::storage,
                            "replay",
                            fmt::format("{} seq {}: the log holds an event the reducer refuses: {}",
                                        args->id,
                                        event.seq,
                                        next.error().message));
            if (options.json) {
                steps.push_back(boost::json::object{{"event", event_to_json(event)},
                                                    {"ticket", ticket_to_json(next.value())}});
            } else {
                std::cout << describe(event) << '\n';
                if (args->diff) {
                    for (const auto& change : describe_changes(ticket, next.value()))
                        std::cout << "        " << change << '\n';
                } else {
                    std::cout << "        → " << describe_state(next.value()) << '\n';
                }
            }
            ticket = std::move(next).value();
        }
        if (options.json)
            std::cout << boost::json::serialize(steps) << '\n';
        else
            std::cout << fmt::format("{} \"{}\" after seq {}: {}\n",
                                     ticket.id,
                                     printable(ticket.title),
                                     ticket.seq,
                                     describe_state(ticket));
        return 0;
    };
}

Run declare_show(CLI::App& sub) {
    auto id = std::make_shared<std::string>();
    sub.add_option("ID", *id, "ticket id, e.g. PROJ-12")->required();
    sub.footer("Examples:\n  board show PROJ-12\n  board show PROJ-12 --json | jq .awaiting");
    return [id](const GlobalOptions& options) {
        auto session = reading(options, "show");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto view = std::get<Session>(session).board().show(*id);
        if (!view) return report(view.error(), "show");
        warn_all(view.value().warnings);
        std::cout << (options.json ? app::to_json(view.value()) : show_text(view.value()));
        return 0;
    };
}

// ---------------------------------------------------------------------------------------------
// The board

/// `--awaiting [TYPES]`: a flag that may take a list.
CLI::Option* add_awaiting(CLI::App& sub, std::string& types, const std::string& help) {
    return sub.add_option("--awaiting", types, help)->expected(0, 1);
}

/// `--standalone` and `--orphan`: tickets without an epic, or whose epic is done.
void add_epic_flags(CLI::App& sub, bool& standalone, bool& orphan) {
    sub.add_flag("--standalone", standalone, "only tickets without an epic");
    sub.add_flag("--orphan", orphan, "only tickets whose epic is done");
}

struct ListArgs {
    std::string status, awaiting, labels;
    ListFilter filter;
    CLI::Option* awaiting_given = nullptr;
};

Run declare_list(CLI::App& sub) {
    auto args = std::make_shared<ListArgs>();
    sub.add_option("-s,--status", args->status, "only these columns, comma-separated");
    args->awaiting_given = add_awaiting(
        sub, args->awaiting, "only tickets awaiting a human (optionally of these types)");
    sub.add_option("--parent", args->filter.parent, "only the children of this epic");
    add_epic_flags(sub, args->filter.standalone, args->filter.orphan);
    sub.add_option("-l,--label", args->labels, "only tickets with all these labels");
    sub.add_flag("--all", args->filter.all, "include done tickets");
    sub.footer(join_lines({"Examples:",
                           "  board list",
                           "  board list --awaiting              # everything a human must look at",
                           "  board list --awaiting review,approval --json",
                           "  board list --status implementing,review -l backend",
                           "  board list --parent PROJ-7 --all"}));
    return [args](const GlobalOptions& options) {
        ListFilter filter = args->filter;
        if (!args->status.empty()) {
            auto statuses = app::parse_status_list(args->status);
            if (!statuses)
                return fail(
                    Exit::usage,
                    "list",
                    fmt::format("--status \"{}\": expected columns separated by commas (backlog, "
                                "research, ready, planning, implementing, review, done)",
                                args->status));
            filter.statuses = std::move(*statuses);
        }
        auto types = awaiting_types(args->awaiting, "list", nullptr);
        if (auto* code = std::get_if<int>(&types)) return *code;
        filter.awaiting_any = args->awaiting_given->count() > 0;
        filter.awaiting = std::get<std::vector<Awaiting>>(types);
        filter.labels = app::split_list(args->labels);
        if (options.json) {
            app::BoardQuery query;
            query.list = filter;
            return print_query(options, "list", query);
        }
        auto session = reading(options, "list");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto& s = std::get<Session>(session);
        return print_picked(s, s.board().list(filter));
    };
}

struct NextArgs {
    std::string epic, awaiting;
    NextFilter filter;
    CLI::Option* awaiting_given = nullptr;
};

Run declare_next(CLI::App& sub) {
    auto args = std::make_shared<NextArgs>();
    sub.add_option("EPIC", args->epic, "only this epic's children");
    args->awaiting_given =
        add_awaiting(sub,
                     args->awaiting,
                     "the human side: tickets awaiting a human (optionally of these types)");
    add_epic_flags(sub, args->filter.standalone, args->filter.orphan);
    sub.footer(join_lines({"Exit code 1 (and `null` with --json) when there is nothing.",
                           "Examples:",
                           "  board next",
                           "  board next PROJ-7 --json          # within the epic PROJ-7",
                           "  board next --awaiting             # what should I look at?",
                           "  board next --awaiting input,escalation"}));
    return [args](const GlobalOptions& options) {
        app::NextRequest request;
        std::string epic = args->epic;
        auto types = awaiting_types(args->awaiting, "next", &epic);
        if (auto* code = std::get_if<int>(&types)) return *code;
        request.human = args->awaiting_given->count() > 0;
        request.types = std::get<std::vector<Awaiting>>(types);
        request.filter = args->filter;
        request.filter.epic = epic;
        if (options.json) {
            app::BoardQuery query;
            query.kind = app::BoardQuery::Kind::next;
            query.next = request;
            return print_query(options, "next", query);
        }
        auto session = reading(options, "next");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto next = std::get<Session>(session).board().next(request);
        if (!next) return report(next.error());
        const auto& ticket = next.value().ticket;
        if (!ticket) {
            warn_all(next.value().warnings);
            return fail(Exit::refused,
                        "next",
                        request.human ? "nothing awaits a human" : "nothing for the agent now");
        }
        std::cout << fmt::format("{}  {}\n  {} · {} · priority {}\n",
                                 ticket->id,
                                 printable(ticket->title),
                                 describe_state(*ticket),
                                 to_string(ticket->type),
                                 ticket->priority);
        if (!ticket->description.empty())
            std::cout << fmt::format("  {}\n", printable_block(ticket->description, "  "));
        std::cout << request_text(*ticket);
        warn_all(next.value().warnings);
        return 0;
    };
}

Run declare_ready(CLI::App& sub) {
    auto args = std::make_shared<NextArgs>();
    sub.add_option("EPIC", args->epic, "only this epic's children");
    add_epic_flags(sub, args->filter.standalone, args->filter.orphan);
    sub.footer("Examples:\n  board ready\n  board ready --json | jq -r '.[].id'");
    return [args](const GlobalOptions& options) {
        NextFilter filter = args->filter;
        filter.epic = args->epic;
        if (options.json) {
            app::BoardQuery query;
            query.kind = app::BoardQuery::Kind::ready;
            query.next.filter = filter;
            return print_query(options, "ready", query);
        }
        auto session = reading(options, "ready");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto& s = std::get<Session>(session);
        return print_picked(s, s.board().ready(filter));
    };
}

Run declare_questions(CLI::App& sub) {
    auto pending = std::make_shared<bool>(false);
    sub.add_flag("--pending", *pending, "only those still waiting for an answer");
    sub.footer(
        "Examples:\n  board questions --pending\n  board questions --json | jq '.[] | "
        "select(.status==\"pending\")'");
    return [pending](const GlobalOptions& options) {
        auto session = reading(options, "questions");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto& s = std::get<Session>(session);
        auto asked = s.board().questions(*pending);
        if (!asked) return report(asked.error());
        std::cout << (options.json ? app::to_json(asked.value())
                                   : questions_table(asked.value(), s.colour()));
        warn_all(asked.value().warnings);
        return 0;
    };
}

// ---------------------------------------------------------------------------------------------
// Checks

Run declare_verify(CLI::App& sub) {
    auto ids = std::make_shared<std::vector<std::string>>();
    sub.add_option("ID", *ids, "ticket ids (default: every ticket)");
    sub.footer("Examples:\n  board verify\n  board verify PROJ-3 PROJ-4 --json");
    return [ids](const GlobalOptions& options) {
        auto session = reading(options, "verify");
        if (auto* code = std::get_if<int>(&session)) return *code;
        const auto reports = std::get<Session>(session).board().verify(*ids);
        bool all_hold = true;
        bool storage_fault = false;  // else only ids that name no ticket: refused, not storage
        boost::json::array out;
        for (const auto& r : reports) {
            all_hold = all_hold && r.faults.empty();
            storage_fault = storage_fault || (!r.faults.empty() && !r.unknown);
            if (options.json) {
                out.push_back(
                    boost::json::object{{"ticket", r.ticket},
                                        {"ok", r.faults.empty()},
                                        {"faults", boost::json::value_from(r.faults)},
                                        {"warnings", boost::json::value_from(r.warnings)}});
                continue;
            }
            std::cout << fmt::format("{:<8} {}\n", r.faults.empty() ? "ok" : "FAULT", r.ticket);
            for (const auto& f : r.faults) std::cout << "  fault: " << f << '\n';
            for (const auto& w : r.warnings) std::cout << "  warning: " << w << '\n';
        }
        if (options.json)
            std::cout << boost::json::serialize(out) << '\n';
        else
            std::cout << fmt::format("{} ticket(s) checked, {}\n",
                                     reports.size(),
                                     all_hold ? "all hold" : "faults found");
        if (all_hold) return 0;
        return static_cast<int>(storage_fault ? Exit::storage : Exit::refused);
    };
}

Run declare_doctor(CLI::App& sub) {
    sub.footer("Examples:\n  board doctor\n  board doctor --json");
    return [](const GlobalOptions& options) {
        const auto root = find_board(options);
        if (!root)
            return fail(Exit::usage,
                        "doctor",
                        "no board here (no board.yaml above this folder); use --board DIR");
        bool failed = false;
        boost::json::array out;
        for (const auto& c : check_board(*root)) {
            using V = DoctorCheck::Verdict;
            failed = failed || c.verdict == V::failure;
            const std::string_view word = c.verdict == V::ok        ? "ok"
                                          : c.verdict == V::warning ? "warning"
                                                                    : "FAIL";
            if (options.json)
                out.push_back(boost::json::object{
                    {"check", c.topic}, {"verdict", word}, {"detail", c.detail}});
            else
                std::cout << fmt::format(
                    "{:<8} {}: {}\n", word, printable(c.topic), printable(c.detail));
        }
        if (options.json) std::cout << boost::json::serialize(out) << '\n';
        return failed ? 1 : 0;
    };
}

constexpr Command table[] = {
    {"log", "the event log of a ticket, one readable line per event", declare_log},
    {"replay",
     "fold a ticket's log step by step: each event and the state after it",
     declare_replay},
    {"show", "a ticket: fields, artifacts, questions, notes, recent events", declare_show},
    {"why", "why a ticket is where it is, and what would move it", declare_why},
    {"runs", "a ticket's agent runs: phase, try, length, cost, how each ended", declare_runs},
    {"diff", "a ticket's branch against the branch it ships into (--stat)", declare_diff},
    {"run", "what one agent run printed (or --prompt: what it was given); --follow", declare_run},
    {"list", "tickets in `next` order (done ones only with --all or --status done)", declare_list},
    {"next",
     "the ticket the agent takes next, or with --awaiting the next one for a human",
     declare_next},
    {"ready", "every ticket the agent could take now, in `next` order", declare_ready},
    {"questions", "agent questions on the board, answered or not", declare_questions},
    {"verify",
     "check every log parses and replays, snapshots match, artifacts unchanged; exit 0 only if "
     "all hold",
     declare_verify},
    {"doctor",
     "can the agents run here? programs, credentials, git, folders, sandbox; exit 0 unless "
     "something fails",
     declare_doctor},
};

}  // namespace

std::span<const Command> reading_commands() {
    return table;
}

}  // namespace board::cli
