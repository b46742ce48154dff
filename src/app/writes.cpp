// Every write to the board. Each builds its events and hands them to board::transact, which
// folds the log and runs them through reduce() under the ticket's lock: the reducer is the
// only judge (provenance, status, feedback), and a refusal writes nothing.

#include "support/files.hpp"

#include <board/app.hpp>
#include <board/board_config.hpp>
#include <board/board_dir.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>
#include <board/sha256.hpp>

#include <fmt/format.h>

#include <charconv>
#include <chrono>

namespace fs = std::filesystem;

namespace board::app {
namespace {

using Kind = Refusal::Kind;

Refusal refusal(Kind kind, std::string message) {
    return Refusal{kind, std::move(message), {}};
}

/// The reducer names the ticket first (`PROJ-4 is not awaiting a human (...)`); a refusal
/// names it after the action, so say "the ticket" instead of repeating it.
std::string refusal_line(std::string_view action, const std::string& id, std::string message) {
    if (message.rfind(id + " ", 0) == 0) message = "the ticket " + message.substr(id.size() + 1);
    return fmt::format("{} {}: {}", action, id, message);
}

/// A wire spelling that may be empty (none). `valid` is false for an unknown spelling.
template <class Enum>
struct OptionalField {
    bool valid = true;
    std::optional<Enum> value;
};

template <class Enum>
OptionalField<Enum> parse_optional(const std::string& text) {
    if (text.empty()) return {};
    const auto value = parse<Enum>(text);
    return {value.has_value(), value};
}

/// `type` or `none` for update's requires and awaiting. nullopt: not a valid spelling.
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

/// The catalog for checking `blocked_by` and `parent` against the board.
Result<Catalog> catalog_for_checks(const fs::path& root, std::string_view action) {
    auto loaded = load_catalog(root);
    if (auto* error = std::get_if<CatalogError>(&loaded))
        return refusal(Kind::storage, fmt::format("{}: {}", action, error->message));
    return std::move(std::get<CatalogLoad>(loaded).catalog);
}

}  // namespace

Result<fs::path> init_board(const fs::path& dir, const std::string& prefix) {
    if (!is_valid_prefix(prefix))
        return refusal(
            Kind::invalid,
            fmt::format("init: prefix \"{}\" must match ^[A-Z][A-Z0-9]{{0,15}}$", prefix));
    std::error_code ec;
    if (fs::exists(dir / "board.yaml", ec))
        return refusal(Kind::refused,
                       fmt::format("init: {} already holds a board.yaml", dir.string()));
    fs::create_directories(dir / "tickets", ec);
    if (ec)
        return refusal(
            Kind::storage,
            fmt::format("init: cannot create {}: {}", (dir / "tickets").string(), ec.message()));
    if (auto failed = write_file_atomically(dir / "board.yaml", default_board_yaml(prefix));
        !failed.empty())
        return refusal(Kind::storage, fmt::format("init: cannot write {}", failed));
    // A board is meant to be kept in git (spec/storage.md); its board-wide caches and locks
    // are per machine and would only make conflicts. Best effort: a board works without it.
    if (!fs::exists(dir / "tickets" / ".gitignore", ec))
        (void)write_file_atomically(
            dir / "tickets" / ".gitignore",
            "# Per-machine caches and locks of the board tools, rebuilt from the logs.\n"
            ".index\n.last-id\n.lock\n.daemon.lock\n.creating/\n*.tmp\n*.tmp-*\n",
            Durability::unsynced);
    // `.board/` holds the HTTP token, the query socket and worktrees: never for git.
    if (const auto private_dir = private_folder(dir);
        private_dir && !fs::exists(private_dir.value() / ".gitignore", ec))
        (void)write_file_atomically(private_dir.value() / ".gitignore",
                                    "# The board's private folder (token, socket, worktrees).\n*\n",
                                    Durability::unsynced);
    return dir;
}

Result<fs::path> Board::ticket_folder(std::string_view action, const std::string& id) {
    const auto dir = ticket_dir(root_, id);
    if (!dir)
        return refusal(
            Kind::not_found,
            fmt::format("{}: \"{}\" is not a ticket id (expected PREFIX-N)", action, id));
    std::error_code ec;
    if (!fs::exists(*dir / std::string{log_file_name}, ec))
        return refusal(Kind::not_found, fmt::format("{}: no ticket {} on this board", action, id));
    return *dir;
}

Result<Written> Board::committed(const fs::path& dir, Ticket ticket) {
    Written out{std::move(ticket), {}};
    // The snapshot is for people and tools: a failure to refresh it is a warning.
    if (auto failed = write_snapshot(dir, out.ticket)) out.warnings.push_back(*failed);
    written(out.ticket.id);
    return out;
}

Result<Written> Board::write(std::string_view action,
                             const std::string& id,
                             const Actor& by,
                             const std::vector<Payload>& payloads) {
    auto dir = ticket_folder(action, id);
    if (!dir) return std::move(dir).error();
    auto result = transact(dir.value(), by, [&](const Ticket&) { return payloads; });
    if (const auto* ok = std::get_if<Committed>(&result))
        return committed(dir.value(), *ok->ticket);
    if (const auto* no = std::get_if<Refused>(&result))
        return refusal(Kind::refused, refusal_line(action, id, no->rejection.message));
    const auto& error = std::get<LogError>(result);
    return refusal(error.kind == LogError::Kind::not_found ? Kind::not_found : Kind::storage,
                   fmt::format("{} {}: {}", action, id, error.message));
}

Result<Written> Board::create(const CreateRequest& request, const Actor& by) {
    if (auto why = title_error(request.title))
        return refusal(Kind::refused, fmt::format("create: {}", *why));
    const auto type = parse<TicketType>(request.type);
    if (!type)
        return refusal(Kind::invalid,
                       fmt::format("create: unknown type \"{}\" (task, bug, feature, chore, epic)",
                                   request.type));
    const auto required = parse_optional<Awaiting>(request.requires_);
    const auto awaiting = parse_optional<Awaiting>(request.awaiting);
    if (!required.valid || !awaiting.valid)
        return refusal(Kind::invalid,
                       "create: --requires and --awaiting take an awaiting type (work, approval, "
                       "input, review, content, escalation, checkpoint)");
    if (!request.parent.empty() || !request.blocked_by.empty()) {
        // Checked before an id is taken; the new ticket cannot be in a cycle yet, as nothing
        // on the board can name it.
        auto catalog = catalog_for_checks(root_, "create");
        if (!catalog) return std::move(catalog).error();
        if (auto why = catalog.value().blocked_by_error("", request.blocked_by))
            return refusal(Kind::refused, fmt::format("create: {}", *why));
        if (auto why = catalog.value().parent_error("", request.parent))
            return refusal(Kind::refused, fmt::format("create: {}", *why));
    }
    auto config = load_board_config(root_ / "board.yaml");
    if (!config)
        return refusal(
            Kind::storage,
            fmt::format("create: {}: {}", (root_ / "board.yaml").string(), config.error().message));
    Created created;
    created.title = request.title;
    created.description = request.description;
    created.kind = *type;
    created.priority = request.priority;
    created.labels = request.labels;
    created.parent = request.parent;
    created.blocked_by = request.blocked_by;
    created.requires_ = required.value;
    created.awaiting = awaiting.value;
    created.manual = request.manual;
    std::optional<TransactResult> result;
    std::vector<std::string> warnings;
    const TicketFiller fill = [&](const std::string& new_id, const fs::path& folder) {
        created.ticket = new_id;
        result = transact(folder, by, [&](const Ticket&) { return std::vector<Payload>{created}; });
        const auto* ok = std::get_if<Committed>(&*result);
        if (!ok) return false;
        // The snapshot is for people and tools: a failure to write it is a warning.
        if (auto failed = write_snapshot(folder, *ok->ticket)) warnings.push_back(*failed);
        return true;
    };
    auto id = create_ticket_folder(root_, config.value().prefix, fill);
    if (id) {
        written(id.value());
        return Written{*std::get<Committed>(*result).ticket, std::move(warnings)};
    }
    if (id.error().kind != BoardDirError::Kind::declined || !result)
        return refusal(Kind::storage, fmt::format("create: {}", id.error().message));
    if (const auto* no = std::get_if<Refused>(&*result))
        return refusal(Kind::refused, fmt::format("create: {}", no->rejection.message));
    return refusal(Kind::storage, fmt::format("create: {}", std::get<LogError>(*result).message));
}

Result<Written> Board::approve(const std::string& id, const std::string& note, const Actor& by) {
    return write("approve", id, by, {VerdictGiven{Verdict::approved, note}});
}

std::optional<LineComment> parse_line_comment(std::string_view text, std::string& error) {
    const auto first = text.find(':');
    const auto second = first == std::string_view::npos ? first : text.find(':', first + 1);
    if (second == std::string_view::npos) {
        error = fmt::format("\"{}\" is not FILE:LINE:TEXT", text);
        return std::nullopt;
    }
    LineComment comment;
    comment.file = std::string{text.substr(0, first)};
    const auto line = text.substr(first + 1, second - first - 1);
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), comment.line);
    if (ec != std::errc{} || end != line.data() + line.size()) {
        error = fmt::format("\"{}\": the line \"{}\" is not a number", text, line);
        return std::nullopt;
    }
    comment.text = std::string{text.substr(second + 1)};
    return comment;
}

Result<std::string> feedback_with_comments(const std::string& feedback,
                                           const std::vector<LineComment>& comments) {
    std::string out = feedback;
    for (const auto& c : comments) {
        if (c.file.empty() || c.file.find('\n') != std::string::npos)
            return refusal(Kind::invalid, "a comment names no file (or a file with a line break)");
        if (c.line < 1)
            return refusal(
                Kind::invalid,
                fmt::format("a comment on {} has line {}: lines count from 1", c.file, c.line));
        if (is_blank(c.text))
            return refusal(Kind::invalid,
                           fmt::format("the comment on {}:{} is blank", c.file, c.line));
    }
    if (comments.empty()) return out;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    out += out.empty() ? "Comments on the diff:\n" : "\n\nComments on the diff:\n";
    for (const auto& c : comments) out += fmt::format("- {}:{}: {}\n", c.file, c.line, c.text);
    out.pop_back();
    return out;
}

Result<Written> Board::reject(const std::string& id,
                              const std::string& feedback,
                              const Actor& by,
                              const std::vector<LineComment>& comments) {
    auto full = feedback_with_comments(feedback, comments);
    if (!full) {
        Refusal refused = std::move(full).error();
        refused.message = fmt::format("reject {}: {}", id, refused.message);
        return refused;
    }
    if (is_blank(full.value()))
        return refusal(
            Kind::refused,
            fmt::format("reject {}: the feedback is blank: an agent cannot act on a bare no", id));
    return write("reject", id, by, {VerdictGiven{Verdict::rejected, full.value()}});
}

Result<Written> Board::note(const std::string& id,
                            const std::string& text,
                            NoteFrom from,
                            const Actor& by) {
    Actor author = by;
    if (by.kind == ActorKind::human && from == NoteFrom::agent) {
        // Written as the agent of the ticket's column, which is what a prompt shows it as.
        auto dir = ticket_folder("note", id);
        if (!dir) return std::move(dir).error();
        auto loaded = load_ticket(dir.value());
        const auto* ok = std::get_if<Loaded>(&loaded);
        author = Actor{ActorKind::agent,
                       std::string{ok ? to_string(ok->ticket.status) : std::string_view{"agent"}}};
    }
    return write("note", id, author, {NoteAdded{text}});
}

namespace {

/// `PROJ-12.q1` split at its last dot, or nullopt when it is not a question id.
std::optional<std::pair<std::string, std::string>> split_question_id(const std::string& question) {
    const auto dot = question.rfind('.');
    if (dot == std::string::npos || dot + 1 == question.size() ||
        !is_valid_ticket_id(question.substr(0, dot)))
        return std::nullopt;
    return std::pair{question.substr(0, dot), question.substr(dot + 1)};
}

Refusal not_a_question_id(std::string_view action, const std::string& question) {
    return refusal(
        Kind::invalid,
        fmt::format("{}: \"{}\" is not a question id (expected TICKET.qN, e.g. PROJ-12.q1)",
                    action,
                    question));
}

}  // namespace

Result<Written> Board::cancel_question(const std::string& question,
                                       const std::string& reason,
                                       const Actor& by) {
    const auto id = split_question_id(question);
    if (!id) return not_a_question_id("cancel-question", question);
    return write("cancel-question", id->first, by, {QuestionCancelled{id->second, reason}});
}

Result<Written> Board::answer(const std::string& question,
                              const std::string& value,
                              const std::string& note,
                              const Actor& by) {
    const auto id = split_question_id(question);
    if (!id) return not_a_question_id("answer", question);
    QuestionAnswered answered;
    answered.question_id = id->second;
    answered.value = value;
    answered.note = note;
    return write("answer", id->first, by, {answered});
}

Result<Written> Board::update(const std::string& id,
                              const UpdateRequest& request,
                              const Actor& by) {
    if (request.title) {
        if (auto why = title_error(*request.title))
            return refusal(Kind::refused, fmt::format("update {}: {}", id, *why));
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
            return refusal(Kind::invalid,
                           fmt::format("update: --requires takes approval, review, content or "
                                       "none, not \"{}\"",
                                       *request.requires_));
    }
    if (request.awaiting) {
        u.awaiting = parse_or_none(*request.awaiting);
        if (!u.awaiting)
            return refusal(Kind::invalid,
                           fmt::format("update: --awaiting takes work, approval, input, review, "
                                       "content, escalation, checkpoint or none, not \"{}\"",
                                       *request.awaiting));
    }
    if (u == Updated{})
        return refusal(Kind::invalid,
                       "update: nothing to change; give at least one of --title, -d, -p, -l, "
                       "--parent, --blocked-by, --requires, --awaiting");
    if (u.blocked_by || (u.parent && !u.parent->empty())) {
        if (auto dir = ticket_folder("update", id); !dir) return std::move(dir).error();
        auto catalog = catalog_for_checks(root_, fmt::format("update {}", id));
        if (!catalog) return std::move(catalog).error();
        if (u.blocked_by) {
            if (auto why = catalog.value().blocked_by_error(id, *u.blocked_by))
                return refusal(Kind::refused, fmt::format("update {}: {}", id, *why));
        }
        if (u.parent) {
            if (auto why = catalog.value().parent_error(id, *u.parent))
                return refusal(Kind::refused, fmt::format("update {}: {}", id, *why));
        }
    }
    return write("update", id, by, {u});
}

Result<Written> Board::start(const std::string& id, const Actor& by) {
    return write("start", id, by, {Started{}});
}

Result<Written> Board::move(const std::string& id,
                            const std::string& status,
                            const std::string& reason,
                            const Actor& by) {
    const auto to = parse<Status>(status);
    if (!to)
        return refusal(Kind::invalid,
                       fmt::format("move: unknown status \"{}\" (backlog, research, ready, "
                                   "planning, implementing, review)",
                                   status));
    return write("move", id, by, {Moved{*to, reason}});
}

Result<Written> Board::cancel(const std::string& id, const std::string& reason, const Actor& by) {
    return write("cancel", id, by, {Cancelled{reason}});
}

Result<Written> Board::reopen(const std::string& id, const std::string& reason, const Actor& by) {
    return write("reopen", id, by, {Reopened{reason}});
}

namespace {

/// A fork is a rerun from seq N: it needs the artifacts the log records at N, not only their
/// names. Each is copied when the source's file still has the recorded hash; one edited or
/// rewritten since then is not the one recorded, and is named in a warning instead of being
/// passed off as it.
void copy_forked_artifacts(const fs::path& source,
                           const fs::path& fork,
                           const Ticket& forked,
                           std::int64_t at_seq,
                           std::vector<std::string>& warnings) {
    for (const auto kind : all_artifact_kinds) {
        const auto& artifact = forked.artifact(kind);
        if (!artifact || artifact->path.empty()) continue;
        const fs::path name{artifact->path};
        if (name.has_parent_path() || artifact->path.front() == '.') {
            warnings.push_back(
                fmt::format("fork: artifact path {} is not a file name in the "
                            "ticket's folder: not copied",
                            artifact->path));
            continue;
        }
        const auto text = read_whole_file(source / name, AT_FDCWD, 64u << 20);
        if (!text) {
            warnings.push_back(fmt::format(
                "fork: {} is missing from the source ticket: the fork's {} must be redone",
                artifact->path,
                to_string(kind)));
            continue;
        }
        if (!artifact->sha256.empty() && sha256_hex(*text) != artifact->sha256) {
            warnings.push_back(
                fmt::format("fork: {} changed after seq {} (its hash differs from "
                            "the one recorded): not copied; the fork's {} must be "
                            "redone",
                            artifact->path,
                            at_seq,
                            to_string(kind)));
            continue;
        }
        if (auto failed = write_file_atomically(fork / name, *text); !failed.empty())
            warnings.push_back("fork: " + failed);
    }
}

}  // namespace

Result<Written> Board::fork(const std::string& id, std::int64_t at_seq, const Actor& by) {
    if (auto source = ticket_folder("fork", id); !source) return std::move(source).error();
    auto history = this->history(id);
    if (!history) {
        auto refused = std::move(history).error();
        refused.message = fmt::format("fork {}: {}", id, refused.message);
        return refused;
    }
    const auto last = static_cast<std::int64_t>(history.value().events.size());
    if (at_seq < 1 || at_seq > last)
        return refusal(
            Kind::refused,
            fmt::format("fork {}: --at {} is outside the log (seq 1 to {})", id, at_seq, last));
    auto config = load_board_config(root_ / "board.yaml");
    if (!config)
        return refusal(Kind::storage, fmt::format("fork: board.yaml: {}", config.error().message));
    const auto& source_events = history.value().events;
    std::optional<AppendResult> result;
    std::vector<std::string> warnings;
    const TicketFiller fill = [&](const std::string& new_id, const fs::path& folder) {
        std::vector<Event> events(source_events.begin(), source_events.begin() + at_seq);
        Event marker;
        marker.seq = at_seq + 1;
        marker.id = random_event_id();
        marker.at = wall_clock_now();
        marker.by = by;
        marker.payload = Forked{id, at_seq, new_id};
        events.push_back(std::move(marker));
        result = append_events(folder, std::move(events), 0);
        const auto* ok = std::get_if<Committed>(&*result);
        if (!ok) return false;
        if (auto failed = write_snapshot(folder, *ok->ticket)) warnings.push_back(*failed);
        copy_forked_artifacts(root_ / "tickets" / id, folder, *ok->ticket, at_seq, warnings);
        return true;
    };
    auto new_id = create_ticket_folder(root_, config.value().prefix, fill);
    if (new_id) {
        written(new_id.value());
        return Written{*std::get<Committed>(*result).ticket, std::move(warnings)};
    }
    if (new_id.error().kind != BoardDirError::Kind::declined || !result)
        return refusal(Kind::storage, fmt::format("fork {}: {}", id, new_id.error().message));
    if (const auto* no = std::get_if<Refused>(&*result))
        return refusal(Kind::refused, refusal_line("fork", id, no->rejection.message));
    if (const auto* conflict = std::get_if<Conflict>(&*result))
        return refusal(Kind::storage, fmt::format("fork {}: {}", id, conflict->message));
    return refusal(Kind::storage,
                   fmt::format("fork {}: {}", id, std::get<LogError>(*result).message));
}

Result<Recorded> Board::record(const std::string& id,
                               const Author& build,
                               std::optional<std::int64_t> expected_seq,
                               bool refresh_snapshot) {
    auto dir = ticket_folder("record", id);
    if (!dir) return std::move(dir).error();
    // Read once, under the lock the append takes: what `build` sees is what it appends to.
    bool moved_on = false;
    auto result = transact_existing(dir.value(), [&](const Ticket& now) {
        moved_on = expected_seq && now.seq != *expected_seq;
        return moved_on ? std::vector<Authored>{} : build(now);
    });
    if (auto* done = std::get_if<Committed>(&result)) {
        if (moved_on) return refusal(Kind::conflict, fmt::format("{}: the ticket moved on", id));
        if (done->events.empty())
            return refusal(Kind::conflict, fmt::format("{}: nothing to do", id));
        Recorded out{done->ticket, std::move(done->events), {}};
        if (refresh_snapshot) {
            if (auto failed = write_snapshot(dir.value(), *out.ticket))
                out.warnings.push_back(*failed);
        }
        written(id);
        return out;
    }
    if (auto* no = std::get_if<Refused>(&result))
        return refusal(
            Kind::refused,
            fmt::format("{}: the reducer refused the event: {}", id, no->rejection.message));
    return refusal(Kind::storage, fmt::format("{}: {}", id, std::get<LogError>(result).message));
}

}  // namespace board::app
