// The commands that read a board's history: one ticket's events (log, replay), its runs (runs,
// run, diff), why it is where it is (why), the board's timeline (log --all) and its figures
// (stats). Each parses, asks the application layer, renders.

#include "cli/command.hpp"
#include "cli/history.hpp"
#include "cli/reading.hpp"
#include "cli/render.hpp"

#include <board/board_config.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>
#include <board/reduce.hpp>
#include <board/stats.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <poll.h>
#include <sys/inotify.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <variant>

namespace board::cli {
namespace {

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
    return app::parse_since(text, wall_clock_now());
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

struct StatsArgs {
    std::string since = "168h";
};

Run declare_stats(CLI::App& sub) {
    auto args = std::make_shared<StatsArgs>();
    sub.add_option("--since",
                   args->since,
                   "the window's start: a time (2026-11-01T00:00:00Z) or how long ago (24h); "
                   "default 168h, the last week");
    sub.footer(join_lines({"Throughput, cycle time, where the time of completed tickets went, how",
                           "fast people answered, questions, runs and cost, measured from the",
                           "logs.",
                           "Examples:",
                           "  board stats",
                           "  board stats --since 720h --json | jq .cycle_time"}));
    return [args](const GlobalOptions& options) {
        const auto since = since_time(args->since);
        if (!since)
            return fail(Exit::usage,
                        "stats",
                        fmt::format("--since \"{}\" is neither a time like 2026-11-26T05:00:00Z "
                                    "nor a duration like 24h",
                                    args->since));
        auto session = reading(options, "stats");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto stats = std::get<Session>(session).board().stats(*since, wall_clock_now());
        if (!stats) return report(stats.error(), "stats");
        warn_all(stats.value().warnings);
        std::cout << (options.json ? app::to_json(stats.value().stats)
                                   : app::render(stats.value().stats));
        return 0;
    };
}

constexpr Command history_command_table[] = {
    {"log",
     "the event log of a ticket (or --all: the board's), one readable line per event",
     declare_log},
    {"replay",
     "fold a ticket's log step by step: each event and the state after it",
     declare_replay},
    {"why", "why a ticket is where it is, and what would move it", declare_why},
    {"runs", "a ticket's agent runs: phase, try, length, cost, how each ended", declare_runs},
    {"diff", "a ticket's branch against the branch it ships into (--stat)", declare_diff},
    {"run", "what one agent run printed (or --prompt: what it was given); --follow", declare_run},
    {"stats", "throughput, cycle time, where the time went, answer times, cost", declare_stats},
};

}  // namespace

std::span<const Command> history_commands() {
    return history_command_table;
}

}  // namespace board::cli
