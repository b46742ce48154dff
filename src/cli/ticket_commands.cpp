// The human moves on one ticket. Each builds one event and hands it to board::transact, which
// folds the log and runs the event through reduce() under the ticket's lock: the reducer is
// the only judge (provenance, status, feedback), and a refusal writes nothing.

#include "cli/commands.hpp"
#include "cli/history.hpp"

#include <board/board_config.hpp>
#include <board/board_dir.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <chrono>
#include <fstream>

namespace fs = std::filesystem;

namespace board::cli {
namespace {

CommandOutcome refused(int code, std::string message) {
    return {code, {}, std::move(message), {}};
}

/// The reducer names the ticket first (`PROJ-4 is not awaiting a human (...)`); the CLI
/// names it after the command, so say "the ticket" instead of repeating it.
std::string refusal_line(std::string_view command, const std::string& id, std::string message) {
    if (message.rfind(id + " ", 0) == 0) message = "the ticket " + message.substr(id.size() + 1);
    return fmt::format("{} {}: {}", command, id, message);
}

/// The ticket's folder, or the refusal for an id that is malformed or not on the board.
std::variant<fs::path, CommandOutcome> existing_ticket(const Context& ctx,
                                                       std::string_view command,
                                                       const std::string& id) {
    const auto dir = ticket_dir(ctx.board, id);
    if (!dir)
        return refused(
            1, fmt::format("{}: \"{}\" is not a ticket id (expected PREFIX-N)", command, id));
    std::error_code ec;
    if (!fs::exists(*dir / std::string{log_file_name}, ec))
        return refused(1, fmt::format("{}: no ticket {} on this board", command, id));
    return *dir;
}

CommandOutcome committed(const Context& ctx, const fs::path& dir, const Ticket& ticket) {
    CommandOutcome out;
    // The snapshot is a cache: a failure to refresh it is worth a warning, not a failure.
    if (auto failed = write_snapshot(dir, ticket)) out.warnings.push_back(*failed);
    out.output = ctx.json ? encode_ticket(ticket) + "\n"
                          : fmt::format("{}: {}\n", ticket.id, describe_state(ticket));
    return out;
}

/// Appends the payloads `build` makes from the current ticket, as `by`.
CommandOutcome write(const Context& ctx,
                     std::string_view command,
                     const std::string& id,
                     const Actor& by,
                     const BatchBuilder& build) {
    auto dir = existing_ticket(ctx, command, id);
    if (auto* no = std::get_if<CommandOutcome>(&dir)) return *no;
    const fs::path& path = std::get<fs::path>(dir);
    auto result = transact(path, by, build);
    if (const auto* ok = std::get_if<Committed>(&result)) return committed(ctx, path, *ok->ticket);
    if (const auto* no = std::get_if<Refused>(&result))
        return refused(1, refusal_line(command, id, no->rejection.message));
    const auto& error = std::get<LogError>(result);
    const int code = error.kind == LogError::Kind::not_found ? 1 : 3;
    return refused(code, fmt::format("{} {}: {}", command, id, error.message));
}

CommandOutcome write_one(const Context& ctx,
                         std::string_view command,
                         const std::string& id,
                         Payload payload) {
    return write(
        ctx, command, id, ctx.by, [&](const Ticket&) { return std::vector<Payload>{payload}; });
}

/// `type` or `none` for update's --requires and --awaiting. nullopt: not a valid spelling.
std::optional<std::optional<Awaiting>> parse_or_none(const std::string& text) {
    std::optional<std::optional<Awaiting>> out;
    if (text == "none") {
        out.emplace();
        return out;
    }
    const auto value = parse<Awaiting>(text);
    if (!value) return out;
    out.emplace();
    out->emplace(*value);
    return out;
}

UnixMillis now_millis() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

CommandOutcome approve(const Context& ctx, const std::string& id, const std::string& note) {
    return write_one(ctx, "approve", id, VerdictGiven{Verdict::approved, note});
}

CommandOutcome reject(const Context& ctx, const std::string& id, const std::string& feedback) {
    if (is_blank(feedback))
        return refused(1,
                       fmt::format("reject {}: the feedback is blank: an agent cannot act on a "
                                   "bare no",
                                   id));
    return write_one(ctx, "reject", id, VerdictGiven{Verdict::rejected, feedback});
}

CommandOutcome add_note(const Context& ctx,
                        const std::string& id,
                        const std::string& text,
                        bool from_human) {
    Actor by = ctx.by;
    CommandOutcome early;
    if (by.kind == ActorKind::agent && from_human)
        early.warnings.push_back("inside an agent run a note is the agent's: --from human ignored");
    if (by.kind == ActorKind::agent) {
        // Inside a run the log is the board's, not the agent's (a confined agent cannot write
        // it): the note waits in the run's folder and the daemon records it when the run ends.
        const char* run_dir = std::getenv("BOARD_RUN_DIR");
        const char* run_ticket = std::getenv("BOARD_TICKET");
        if (run_dir && *run_dir) {
            if (!run_ticket || id != run_ticket)
                return refused(1,
                               fmt::format("note {}: inside a run an agent notes only its own "
                                           "ticket ({})",
                                           id,
                                           run_ticket ? run_ticket : "none"));
            if (is_blank(text)) return refused(2, fmt::format("note {}: the text is blank", id));
            const std::string line =
                boost::json::serialize(boost::json::object{{"text", text}}) + "\n";
            const fs::path file = fs::path{run_dir} / "notes.jsonl";
            std::ofstream out{file, std::ios::binary | std::ios::app};
            out << line;
            if (!out.flush())
                return refused(3, fmt::format("note {}: cannot write {}", id, file.string()));
            early.output = fmt::format("{}: noted; the board records it when this run ends\n", id);
            return early;
        }
    }
    if (by.kind == ActorKind::human && !from_human) {
        // The seeds' default: a note is the agent's unless --from human. It is written as the
        // agent of the ticket's column, which is what a prompt shows it as.
        auto dir = existing_ticket(ctx, "note", id);
        if (auto* no = std::get_if<CommandOutcome>(&dir)) return *no;
        auto loaded = load_ticket(std::get<fs::path>(dir));
        const auto* ok = std::get_if<board::Loaded>(&loaded);
        by = Actor{ActorKind::agent,
                   std::string{ok ? to_string(ok->ticket.status) : std::string_view{"agent"}}};
    }
    auto out = write(
        ctx, "note", id, by, [&](const Ticket&) { return std::vector<Payload>{NoteAdded{text}}; });
    out.warnings.insert(out.warnings.begin(), early.warnings.begin(), early.warnings.end());
    return out;
}

CommandOutcome answer(const Context& ctx,
                      const std::string& qid,
                      const std::string& value,
                      const std::string& note) {
    const auto dot = qid.rfind('.');
    if (dot == std::string::npos || dot + 1 == qid.size() ||
        !is_valid_ticket_id(qid.substr(0, dot)))
        return refused(
            2,
            fmt::format("answer: \"{}\" is not a question id (expected TICKET.qN, e.g. PROJ-12.q1)",
                        qid));
    const std::string id = qid.substr(0, dot);
    QuestionAnswered answered;
    answered.question_id = qid.substr(dot + 1);
    answered.value = value;
    answered.note = note;
    return write_one(ctx, "answer", id, answered);
}

CommandOutcome update(const Context& ctx, const std::string& id, const UpdateRequest& request) {
    if (request.title) {
        if (auto why = title_error(*request.title))
            return refused(1, fmt::format("update {}: {}", id, *why));
    }
    Updated u;
    u.title = request.title;
    u.description = request.description;
    u.priority = request.priority;
    u.labels = request.labels;
    u.parent = request.parent;
    u.blocked_by = request.blocked_by;
    if (request.requires_) {
        u.requires_ = parse_or_none(*request.requires_);
        if (!u.requires_)
            return refused(2,
                           fmt::format("update: --requires takes approval, review, content or "
                                       "none, not \"{}\"",
                                       *request.requires_));
    }
    if (request.awaiting) {
        u.awaiting = parse_or_none(*request.awaiting);
        if (!u.awaiting)
            return refused(2,
                           fmt::format("update: --awaiting takes work, approval, input, review, "
                                       "content, escalation, checkpoint or none, not \"{}\"",
                                       *request.awaiting));
    }
    if (u == Updated{})
        return refused(2,
                       "update: nothing to change; give at least one of --title, -d, -p, -l, "
                       "--parent, --blocked-by, --requires, --awaiting");
    if (u.blocked_by || (u.parent && !u.parent->empty())) {
        auto dir = existing_ticket(ctx, "update", id);
        if (auto* no = std::get_if<CommandOutcome>(&dir)) return *no;
        auto loaded = load_catalog(ctx.board);
        if (auto* error = std::get_if<CatalogError>(&loaded))
            return refused(3, fmt::format("update {}: {}", id, error->message));
        const Catalog& catalog = std::get<CatalogLoad>(loaded).catalog;
        if (u.blocked_by) {
            if (auto why = catalog.blocked_by_error(id, *u.blocked_by))
                return refused(1, fmt::format("update {}: {}", id, *why));
        }
        if (u.parent) {
            if (auto why = catalog.parent_error(id, *u.parent))
                return refused(1, fmt::format("update {}: {}", id, *why));
        }
    }
    return write_one(ctx, "update", id, u);
}

CommandOutcome start(const Context& ctx, const std::string& id) {
    return write_one(ctx, "start", id, Started{});
}

CommandOutcome move(const Context& ctx,
                    const std::string& id,
                    const std::string& status,
                    const std::string& reason) {
    const auto to = parse<Status>(status);
    if (!to)
        return refused(2,
                       fmt::format("move: unknown status \"{}\" (backlog, research, ready, "
                                   "planning, implementing, review)",
                                   status));
    return write_one(ctx, "move", id, Moved{*to, reason});
}

CommandOutcome cancel(const Context& ctx, const std::string& id, const std::string& reason) {
    return write_one(ctx, "cancel", id, Cancelled{reason});
}

CommandOutcome reopen(const Context& ctx, const std::string& id, const std::string& reason) {
    return write_one(ctx, "reopen", id, Reopened{reason});
}

CommandOutcome fork(const Context& ctx, const std::string& id, std::int64_t at_seq) {
    auto source = existing_ticket(ctx, "fork", id);
    if (auto* no = std::get_if<CommandOutcome>(&source)) return *no;
    auto history = read_history(ctx.board, id);
    if (history.error) {
        const bool unknown = history.error->kind == HistoryError::Kind::unknown_ticket;
        return refused(unknown ? 1 : 3, fmt::format("fork {}: {}", id, history.error->message));
    }
    const auto last = static_cast<std::int64_t>(history.events.size());
    if (at_seq < 1 || at_seq > last)
        return refused(
            1, fmt::format("fork {}: --at {} is outside the log (seq 1 to {})", id, at_seq, last));

    auto config = load_board_config(ctx.board / "board.yaml");
    if (!config) return refused(3, fmt::format("fork: board.yaml: {}", config.error().message));
    auto new_id = allocate_ticket_id(ctx.board, config.value().prefix);
    if (!new_id) return refused(3, fmt::format("fork: {}", new_id.error().message));
    const fs::path dir = ctx.board / "tickets" / new_id.value();

    std::vector<Event> events(history.events.begin(), history.events.begin() + at_seq);
    Event marker;
    marker.seq = at_seq + 1;
    marker.id = random_event_id();
    marker.at = now_millis();
    marker.by = ctx.by;
    marker.payload = Forked{id, at_seq, new_id.value()};
    events.push_back(std::move(marker));
    auto result = append_events(dir, std::move(events), 0);
    if (const auto* ok = std::get_if<Committed>(&result)) {
        auto out = committed(ctx, dir, *ok->ticket);
        if (!ctx.json) out.output = new_id.value() + "\n";
        return out;
    }
    // Nothing was written: give the number back.
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (const auto* no = std::get_if<Refused>(&result))
        return refused(1, refusal_line("fork", id, no->rejection.message));
    if (const auto* conflict = std::get_if<Conflict>(&result))
        return refused(3, fmt::format("fork {}: {}", id, conflict->message));
    return refused(3, fmt::format("fork {}: {}", id, std::get<LogError>(result).message));
}

}  // namespace board::cli
