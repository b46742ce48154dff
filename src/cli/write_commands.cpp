#include "cli/write_commands.hpp"

#include <board/board_config.hpp>
#include <board/board_dir.hpp>
#include <board/catalog.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace fs = std::filesystem;

namespace board::cli {
namespace {

CommandOutcome refused(int code, std::string message) {
    return {code, {}, std::move(message), {}};
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

}  // namespace

Actor invoking_actor(const std::string& as_name) {
    if (const char* run = std::getenv("BOARD_RUN"); run && *run) {
        const char* phase = std::getenv("BOARD_PHASE");
        return {ActorKind::agent, phase && *phase ? phase : "run"};
    }
    if (!as_name.empty()) return {ActorKind::human, as_name};
    const char* user = std::getenv("USER");
    return {ActorKind::human, user && *user ? user : "unknown"};
}

CommandOutcome init_board(const fs::path& dir, const std::string& prefix) {
    if (!is_valid_prefix(prefix)) {
        return refused(
            2, fmt::format("init: prefix \"{}\" must match ^[A-Z][A-Z0-9]{{0,15}}$", prefix));
    }
    std::error_code ec;
    if (fs::exists(dir / "board.yaml", ec)) {
        return refused(1, fmt::format("init: {} already holds a board.yaml", dir.string()));
    }
    fs::create_directories(dir / "tickets", ec);
    if (ec)
        return refused(
            3, fmt::format("init: cannot create {}: {}", (dir / "tickets").string(), ec.message()));
    // Temp file + rename: a crash never leaves a half-written board.yaml behind.
    const fs::path temp = dir / ".board.yaml.tmp";
    {
        std::ofstream out{temp, std::ios::binary | std::ios::trunc};
        out << default_board_yaml(prefix);
        if (!out.flush()) return refused(3, fmt::format("init: cannot write {}", temp.string()));
    }
    fs::rename(temp, dir / "board.yaml", ec);
    if (ec)
        return refused(
            3,
            fmt::format("init: cannot write {}: {}", (dir / "board.yaml").string(), ec.message()));
    // A board is meant to be kept in git (spec/storage.md); its board-wide caches and locks
    // are per machine and would only make conflicts. Best effort: a board works without it.
    if (!fs::exists(dir / "tickets" / ".gitignore", ec))
        std::ofstream{dir / "tickets" / ".gitignore", std::ios::binary}
            << "# Per-machine caches and locks of the board tools, rebuilt from the logs.\n"
               ".index\n.last-id\n"
               ".lock\n.daemon.lock\n*.tmp\n*.tmp-*\n";
    return {
        0, fmt::format("Initialised a board in {} (prefix {})\n", dir.string(), prefix), {}, {}};
}

bool is_blank(std::string_view text) {
    return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

std::optional<std::string> title_error(std::string_view title) {
    if (is_blank(title)) return "the title is empty";
    const bool one_line = std::none_of(title.begin(), title.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
    if (!one_line) return "a title is one line, without control characters";
    return std::nullopt;
}

CommandOutcome create_ticket(const fs::path& board,
                             const CreateRequest& request,
                             const Actor& by,
                             bool json) {
    if (auto why = title_error(request.title)) return refused(1, fmt::format("create: {}", *why));
    const auto type = parse<TicketType>(request.type);
    if (!type)
        return refused(2,
                       fmt::format("create: unknown type \"{}\" (task, bug, feature, chore, epic)",
                                   request.type));
    const auto required = parse_optional<Awaiting>(request.requires_);
    const auto awaiting = parse_optional<Awaiting>(request.awaiting);
    if (!required.valid || !awaiting.valid)
        return refused(2,
                       "create: --requires and --awaiting take an awaiting type (work, approval, "
                       "input, review, content, escalation, checkpoint)");

    if (!request.parent.empty() || !request.blocked_by.empty()) {
        // Checked before an id is taken; the new ticket cannot be in a cycle yet, as nothing
        // on the board can name it.
        auto loaded = load_catalog(board);
        if (auto* error = std::get_if<CatalogError>(&loaded))
            return refused(3, fmt::format("create: {}", error->message));
        const Catalog& catalog = std::get<CatalogLoad>(loaded).catalog;
        if (auto why = catalog.blocked_by_error("", request.blocked_by))
            return refused(1, fmt::format("create: {}", *why));
        if (auto why = catalog.parent_error("", request.parent))
            return refused(1, fmt::format("create: {}", *why));
    }
    auto config = load_board_config(board / "board.yaml");
    if (!config)
        return refused(
            3,
            fmt::format("create: {}: {}", (board / "board.yaml").string(), config.error().message));
    auto id = allocate_ticket_id(board, config.value().prefix);
    if (!id) return refused(3, fmt::format("create: {}", id.error().message));

    Created created;
    created.ticket = id.value();
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
    const fs::path dir = board / "tickets" / id.value();
    auto result = transact(dir, by, [&](const Ticket&) { return std::vector<Payload>{created}; });

    if (const auto* committed = std::get_if<Committed>(&result)) {
        CommandOutcome out{
            0, json ? encode_ticket(*committed->ticket) + "\n" : id.value() + "\n", {}, {}};
        if (auto failed = write_snapshot(dir, *committed->ticket)) out.warnings.push_back(*failed);
        return out;
    }
    // Nothing was written for this id: give the folder back so the number is reused.
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (const auto* no = std::get_if<Refused>(&result)) {
        return refused(1, fmt::format("create: {}", no->rejection.message));
    }
    return refused(3, fmt::format("create: {}", std::get<LogError>(result).message));
}

}  // namespace board::cli
