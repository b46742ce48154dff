// The commands that read: one ticket (show), the board (list, next, ready, questions), and
// checks (verify, doctor); history (log, replay, runs, why, stats) is in commands_history.cpp. Each
// parses, asks the application layer, renders.

#include "cli/command.hpp"
#include "cli/doctor.hpp"
#include "cli/history.hpp"
#include "cli/reading.hpp"
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

/// A `--json` board-wide query: answered by the board's daemon when one runs (it watches every
/// log), else from the logs. Both give the same bytes (app::answer_query).
int print_query(const GlobalOptions& options, std::string_view command, const app::BoardQuery& q) {
    auto session = reading(options, command);
    if (auto* code = std::get_if<int>(&session)) return *code;
    auto& s = std::get<Session>(session);
    // The output goes to stdout as it arrives from the daemon, or as it is written from the logs.
    auto answer = app::ask_daemon(s.root(), q, std::chrono::seconds{2}, &std::cout);
    if (!answer) answer = app::answer_query(s.board(), q, &std::cout);
    std::cout << std::flush;
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
    std::string status, awaiting, labels, for_person;
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
    sub.add_option("--for",
                   args->for_person,
                   "only requests for this person: board.yaml's reviewers of the kind (a kind "
                   "with none is everyone's) or escalated to them");
    sub.footer(join_lines({"Examples:",
                           "  board list",
                           "  board list --awaiting              # everything a human must look at",
                           "  board list --awaiting --for alice  # what is alice's to answer",
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
        if (!args->for_person.empty() && !is_valid_actor(Actor{ActorKind::human, args->for_person}))
            return fail(
                Exit::usage,
                "list",
                fmt::format("--for \"{}\": expected a person's name (one word)", args->for_person));
        if (options.json) {
            app::BoardQuery query;
            query.list = filter;
            query.for_person = args->for_person;
            return print_query(options, "list", query);
        }
        auto session = reading(options, "list");
        if (auto* code = std::get_if<int>(&session)) return *code;
        auto& s = std::get<Session>(session);
        return print_picked(s, s.board().list(filter, args->for_person));
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
            // Names come from the disk: printable, so none can drive the terminal.
            std::cout << fmt::format(
                "{:<8} {}\n", r.faults.empty() ? "ok" : "FAULT", printable(r.ticket));
            for (const auto& f : r.faults) std::cout << "  fault: " << printable(f) << '\n';
            for (const auto& w : r.warnings) std::cout << "  warning: " << printable(w) << '\n';
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

constexpr Command read_command_table[] = {
    {"show", "a ticket: fields, artifacts, questions, notes, recent events", declare_show},
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
    return read_command_table;
}

}  // namespace board::cli
