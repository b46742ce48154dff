// The commands that write: init, create, the human moves on one ticket, fork, import-ticks.
// Each parses, asks the application layer, and prints the ticket written or the refusal.

#include "cli/command.hpp"
#include "cli/render.hpp"

#include <boost/json.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

namespace fs = std::filesystem;

namespace board::cli {
namespace {

/// Runs `write` on the board the options name, as the invoking actor, and prints the outcome.
template <class Write>
int writing(const GlobalOptions& options, std::string_view command, Write write) {
    auto opened = Session::open(options, command, true);
    if (auto* code = std::get_if<int>(&opened)) return *code;
    auto& session = std::get<Session>(opened);
    return session.print(write(session.board(), session.by()));
}

/// ID and an optional (or required) text: approve, reject, cancel, reopen.
struct IdText {
    std::string id, text;
};

Run declare_init(CLI::App& sub) {
    struct Args {
        std::string dir = ".";
        std::string prefix = "PROJ";
    };

    auto args = std::make_shared<Args>();
    sub.add_option("DIR", args->dir, "where (default: here)");
    sub.add_option("--prefix", args->prefix, "ticket id prefix, e.g. PROJ for PROJ-1");
    sub.footer("Example:\n  board init . --prefix WEB");
    return [args](const GlobalOptions& options) {
        auto made = app::init_board(args->dir, args->prefix);
        if (!made) return report(made.error());
        if (options.json) {
            std::error_code ec;
            const fs::path where = fs::absolute(args->dir, ec);
            std::cout << boost::json::serialize(boost::json::object{
                             {"board", ec ? args->dir : where.lexically_normal().string()},
                             {"prefix", args->prefix}})
                      << '\n';
        } else {
            std::cout << fmt::format(
                "Initialised a board in {} (prefix {})\n", args->dir, args->prefix);
        }
        return 0;
    };
}

Run declare_create(CLI::App& sub) {
    struct Args {
        app::CreateRequest request;
        std::string labels, blocked_by;
        CLI::Option* manual = nullptr;
    };

    auto args = std::make_shared<Args>();
    auto& r = args->request;
    sub.add_option("TITLE", r.title, "one line saying what is wanted")->required();
    sub.add_option("-d,--description", r.description, "the intent, for the agents");
    sub.add_option("-t,--type", r.type, "task, bug, feature, chore or epic");
    sub.add_option("-p,--priority", r.priority, "0 critical … 4 backlog (default 2)");
    sub.add_option("-l,--labels", args->labels, "comma-separated");
    sub.add_option("--parent", r.parent, "the epic it belongs to");
    sub.add_option("--blocked-by", args->blocked_by, "comma-separated ticket ids");
    sub.add_option("--requires", r.requires_, "final human gate: approval, review or content");
    sub.add_option("--awaiting", r.awaiting, "hand it to a human from the start, e.g. work");
    args->manual = sub.add_flag("--manual", r.manual, "deprecated: same as --awaiting work");
    sub.footer(
        "Examples:\n  board create \"Retry uploads\" -t feature -p 1 -l backend\n"
        "  board create \"Checkout v2\" -t epic\n"
        "  board create \"Pay with cards\" --parent PROJ-7 --blocked-by PROJ-8 --requires "
        "review\n"
        "  board create \"Rotate the keys\" --awaiting work   # a human does it");
    return [args](const GlobalOptions& options) {
        if (args->manual->count() > 0) warn("--manual is deprecated; use --awaiting work");
        app::CreateRequest request = args->request;
        request.labels = app::split_list(args->labels);
        request.blocked_by = app::split_list(args->blocked_by);
        auto opened = Session::open(options, "create", true);
        if (auto* code = std::get_if<int>(&opened)) return *code;
        auto& session = std::get<Session>(opened);
        auto made = session.board().create(request, session.by());
        if (!made || options.json) return session.print(made);
        std::cout << made.value().ticket.id << '\n';  // scripts take the id from a plain create
        warn_all(made.value().warnings);
        return 0;
    };
}

Run declare_approve(CLI::App& sub) {
    auto args = std::make_shared<IdText>();
    sub.add_option("ID", args->id, "ticket id")->required();
    sub.add_option("NOTE", args->text, "a note for the agent (the answer, for awaiting input)");
    sub.footer(
        join_lines({"Examples:",
                    "  board approve PROJ-4",
                    "  board approve PROJ-4 \"Ship it; watch the error rate\"",
                    "  board approve PROJ-9 \"Use Postgres\"      # answers awaiting input"}));
    return [args](const GlobalOptions& options) {
        return writing(options, "approve", [&](app::Board& b, const Actor& by) {
            return b.approve(args->id, args->text, by);
        });
    };
}

struct RejectArgs {
    std::string id;
    std::string text;
    std::vector<std::string> comments;
};

Run declare_reject(CLI::App& sub) {
    auto args = std::make_shared<RejectArgs>();
    sub.add_option("ID", args->id, "ticket id")->required();
    auto* feedback =
        sub.add_option("FEEDBACK", args->text, "what to change; an agent cannot act on a bare no");
    sub.add_option("--comment",
                   args->comments,
                   "FILE:LINE:TEXT, a remark on a line of `board diff` (repeatable)");
    sub.footer(
        "Examples:\n  board reject PROJ-4 \"Use the existing retry helper\"\n"
        "  board reject PROJ-4 \"Close to done\" --comment src/retry.cpp:42:\"no sleep here\"");
    return [args, feedback](const GlobalOptions& options) {
        // Given but blank is the reducer's refusal (exit 1); not given at all is usage.
        if (feedback->count() == 0 && args->comments.empty())
            return fail(Exit::usage, "reject", "FEEDBACK is required (board reject --help)");
        std::vector<app::LineComment> comments;
        for (const auto& text : args->comments) {
            std::string error;
            auto comment = app::parse_line_comment(text, error);
            if (!comment) return fail(Exit::usage, "reject", "--comment " + error);
            comments.push_back(std::move(*comment));
        }
        return writing(options, "reject", [&](app::Board& b, const Actor& by) {
            return b.reject(args->id, args->text, by, comments);
        });
    };
}

/// Inside an agent run the log is the board's, not the agent's (a confined agent cannot write
/// it): the note waits in the run's folder and the daemon records it when the run ends.
int note_for_the_run(const std::string& run_dir, const std::string& id, const std::string& text) {
    const char* run_ticket = std::getenv("BOARD_TICKET");
    if (!run_ticket || id != run_ticket)
        return fail(Exit::refused,
                    "note " + id,
                    fmt::format("inside a run an agent notes only its own ticket ({})",
                                run_ticket ? run_ticket : "none"));
    if (app::is_blank(text)) return fail(Exit::usage, "note " + id, "the text is blank");
    const fs::path file = fs::path{run_dir} / "notes.jsonl";
    std::ofstream out{file, std::ios::binary | std::ios::app};
    out << boost::json::serialize(boost::json::object{{"text", text}}) << '\n';
    if (!out.flush()) return fail(Exit::storage, "note " + id, "cannot write " + file.string());
    std::cout << id << ": noted; the board records it when this run ends\n";
    return 0;
}

Run declare_note(CLI::App& sub) {
    struct Args {
        IdText note;
        std::string from = "agent";
    };

    auto args = std::make_shared<Args>();
    sub.add_option("ID", args->note.id, "ticket id")->required();
    sub.add_option("TEXT", args->note.text, "the note")->required();
    sub.add_option("--from", args->from, "human or agent (default agent)")
        ->check(CLI::IsMember({"human", "agent"}));
    sub.footer(
        "Examples:\n  board note PROJ-4 \"Tried the retry helper; flaky on CI\"\n"
        "  board note PROJ-4 \"Customer confirmed the fix\" --from human");
    return [args](const GlobalOptions& options) {
        const bool from_human = args->from == "human";
        if (invoking_actor(options.as).kind == ActorKind::agent) {
            if (from_human) warn("inside an agent run a note is the agent's: --from human ignored");
            if (const char* run_dir = std::getenv("BOARD_RUN_DIR"); run_dir && *run_dir)
                return note_for_the_run(run_dir, args->note.id, args->note.text);
        }
        return writing(options, "note", [&](app::Board& b, const Actor& by) {
            return b.note(args->note.id,
                          args->note.text,
                          from_human ? app::NoteFrom::human : app::NoteFrom::agent,
                          by);
        });
    };
}

Run declare_answer(CLI::App& sub) {
    struct Args {
        std::string question, value, note;
    };

    auto args = std::make_shared<Args>();
    sub.add_option("QID", args->question, "question id, e.g. PROJ-12.q1 (see board questions)")
        ->required();
    sub.add_option(
           "VALUE", args->value, "text; an option id, value or label; true/false; approve/reject")
        ->required();
    sub.add_option("--note", args->note, "a note for the agent with the answer");
    sub.footer(
        "Examples:\n  board questions --pending\n  board answer PROJ-12.q1 postgres\n"
        "  board answer PROJ-12.q2 true --note \"only on staging\"");
    return [args](const GlobalOptions& options) {
        return writing(options, "answer", [&](app::Board& b, const Actor& by) {
            return b.answer(args->question, args->value, args->note, by);
        });
    };
}

Run declare_cancel_question(CLI::App& sub) {
    struct Args {
        std::string question, reason;
    };

    auto args = std::make_shared<Args>();
    sub.add_option("QID", args->question, "question id, e.g. PROJ-12.q1 (see board questions)")
        ->required();
    sub.add_option("REASON", args->reason, "why, for the agent (its next prompt has it)");
    sub.footer(
        "Examples:\n  board cancel-question PROJ-12.q1 \"the plan no longer needs a database\"");
    return [args](const GlobalOptions& options) {
        return writing(options, "cancel-question", [&](app::Board& b, const Actor& by) {
            return b.cancel_question(args->question, args->reason, by);
        });
    };
}

Run declare_update(CLI::App& sub) {
    struct Args {
        std::string id, title, description, labels, parent, blocked_by, requires_, awaiting;
        int priority = 0;
        std::vector<CLI::Option*> given;  // in the order of the fields above, then priority
    };

    auto args = std::make_shared<Args>();
    sub.add_option("ID", args->id, "ticket id")->required();
    args->given = {
        sub.add_option("--title", args->title, "new title"),
        sub.add_option("-d,--description", args->description, "new description"),
        sub.add_option(
            "-l,--labels", args->labels, "replace the labels (comma-separated; \"\" clears)"),
        sub.add_option("--parent", args->parent, "the epic (\"\" clears)"),
        sub.add_option("--blocked-by",
                       args->blocked_by,
                       "replace the blockers (comma-separated; \"\" clears)"),
        sub.add_option(
            "--requires", args->requires_, "final gate: approval, review, content or none"),
        sub.add_option("--awaiting", args->awaiting, "hand to a human (work, ...) or none"),
        sub.add_option("-p,--priority", args->priority, "0 critical … 4 backlog"),
    };
    sub.footer(join_lines({"Examples:",
                           "  board update PROJ-4 -p 0 -l backend,urgent",
                           "  board update PROJ-4 --blocked-by PROJ-2,PROJ-3",
                           "  board update PROJ-4 --requires review",
                           "  board update PROJ-4 --awaiting work     # I will do it myself",
                           "  board update PROJ-4 --awaiting none     # back to the agent"}));
    return [args](const GlobalOptions& options) {
        const auto given = [&](std::size_t i) { return args->given[i]->count() > 0; };
        app::UpdateRequest request;
        if (given(0)) request.title = args->title;
        if (given(1)) request.description = args->description;
        if (given(2)) request.labels = app::split_list(args->labels);
        if (given(3)) request.parent = args->parent;
        if (given(4)) request.blocked_by = app::split_list(args->blocked_by);
        if (given(5)) request.requires_ = args->requires_;
        if (given(6)) request.awaiting = args->awaiting;
        if (given(7)) request.priority = args->priority;
        return writing(options, "update", [&](app::Board& b, const Actor& by) {
            return b.update(args->id, request, by);
        });
    };
}

Run declare_start(CLI::App& sub) {
    auto id = std::make_shared<std::string>();
    sub.add_option("ID", *id, "ticket id")->required();
    sub.footer("Example:\n  board start PROJ-4");
    return [id](const GlobalOptions& options) {
        return writing(
            options, "start", [&](app::Board& b, const Actor& by) { return b.start(*id, by); });
    };
}

Run declare_move(CLI::App& sub) {
    struct Args {
        std::string id, status, reason;
    };

    auto args = std::make_shared<Args>();
    sub.add_option("ID", args->id, "ticket id")->required();
    sub.add_option("STATUS", args->status, "backlog, research, ready, planning or implementing")
        ->required();
    sub.add_option("--reason", args->reason, "why (required)")->required();
    sub.footer("Example:\n  board move PROJ-4 planning --reason \"the plan missed the migration\"");
    return [args](const GlobalOptions& options) {
        return writing(options, "move", [&](app::Board& b, const Actor& by) {
            return b.move(args->id, args->status, args->reason, by);
        });
    };
}

Run declare_cancel(CLI::App& sub) {
    auto args = std::make_shared<IdText>();
    sub.add_option("ID", args->id, "ticket id")->required();
    sub.add_option("REASON", args->text, "why");
    sub.footer("Example:\n  board cancel PROJ-4 \"superseded by PROJ-9\"");
    return [args](const GlobalOptions& options) {
        return writing(options, "cancel", [&](app::Board& b, const Actor& by) {
            return b.cancel(args->id, args->text, by);
        });
    };
}

Run declare_reopen(CLI::App& sub) {
    auto args = std::make_shared<IdText>();
    sub.add_option("ID", args->id, "ticket id")->required();
    sub.add_option("REASON", args->text, "why");
    sub.footer("Example:\n  board reopen PROJ-4 \"the bug is back on Safari\"");
    return [args](const GlobalOptions& options) {
        return writing(options, "reopen", [&](app::Board& b, const Actor& by) {
            return b.reopen(args->id, args->text, by);
        });
    };
}

Run declare_fork(CLI::App& sub) {
    struct Args {
        std::string id;
        std::int64_t at = 0;
    };

    auto args = std::make_shared<Args>();
    sub.add_option("ID", args->id, "ticket id")->required();
    sub.add_option("--at", args->at, "how many events to copy")->required()->check(a_seq);
    sub.footer(
        "Example:\n  board replay PROJ-4 --diff      # find the seq to go back to\n"
        "  board fork PROJ-4 --at 12        # rerun planning differently; PROJ-4 is untouched");
    return [args](const GlobalOptions& options) {
        auto opened = Session::open(options, "fork", true);
        if (auto* code = std::get_if<int>(&opened)) return *code;
        auto& session = std::get<Session>(opened);
        auto forked = session.board().fork(args->id, args->at, session.by());
        if (!forked || options.json) return session.print(forked);
        std::cout << forked.value().ticket.id << '\n';
        warn_all(forked.value().warnings);
        return 0;
    };
}

Run declare_import_ticks(CLI::App& sub) {
    auto request = std::make_shared<app::ImportTicksRequest>();
    auto path = std::make_shared<std::string>();
    sub.add_option("PATH", *path, "tk's .tick folder, or the folder that holds it")->required();
    sub.add_flag("--dry-run", request->dry_run, "report what it would do; write nothing");
    sub.footer(import_ticks_help());
    return [request, path](const GlobalOptions& options) {
        auto opened = Session::open(options, "import-ticks", true);
        if (auto* code = std::get_if<int>(&opened)) return *code;
        auto& session = std::get<Session>(opened);
        request->source = *path;
        const auto report = session.board().import_ticks(*request, session.by());
        if (!report) {
            say(report.error().message);
            return app::exit_code_of(report.error().kind);
        }
        const auto& done = report.value();
        std::cout << (options.json ? app::to_json(done) : import_report_text(done, session.by()))
                  << std::flush;
        warn_all(done.warnings);
        if (!done.stopped) return 0;
        say(done.stopped->message);
        return app::exit_code_of(done.stopped->kind);
    };
}

constexpr Command write_command_table[] = {
    {"init", "create board.yaml (commented defaults) and tickets/", declare_init},
    {"create", "a new ticket in backlog; prints its id", declare_create},
    {"approve",
     "the human verdict yes: passes a gate, accepts work or answers a request for input",
     declare_approve},
    {"reject",
     "the human verdict no, with the feedback the agent needs (required)",
     declare_reject},
    {"note", "add a note to a ticket (the agent's by default, as in tk)", declare_note},
    {"answer", "answer an agent's question (ids like PROJ-12.q1)", declare_answer},
    {"cancel-question",
     "withdraw an agent's pending question, with a reason for the agent",
     declare_cancel_question},
    {"update", "edit a ticket's fields; --awaiting none releases it to the agent", declare_update},
    {"start", "start a ticket by hand: backlog → research, ready → planning", declare_start},
    {"move", "move a ticket back to an earlier column, with a reason", declare_move},
    {"cancel", "close a ticket as won't do (cancels pending questions)", declare_cancel},
    {"reopen", "reopen a done ticket into backlog", declare_reopen},
    {"fork", "a new ticket whose log is a copy of the first SEQ events of ID", declare_fork},
    {"import-ticks",
     "import a tk .tick folder: each tick becomes a ticket; PATH is only read",
     declare_import_ticks},
};

}  // namespace

std::span<const Command> writing_commands() {
    return write_command_table;
}

}  // namespace board::cli
