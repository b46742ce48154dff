#include "cli/session.hpp"

#include "cli/history.hpp"
#include "cli/render.hpp"

#include <board/board_dir.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

namespace fs = std::filesystem;

namespace board::cli {
namespace {

/// The board of one command. The process ends with the command, so the last board a read
/// loaded is left for the exit to drop with the rest of the process instead of being freed
/// string by string (clang's -disable-free is the same idea). Only the last: a command that
/// reads again and again keeps one board, not all of them. The slot is never destroyed and
/// stays reachable, so a leak checker does not count it.
class OneCommandBoard final : public app::Board {
public:
    using Board::Board;

protected:
    app::Result<std::shared_ptr<const CatalogLoad>> board_wide(std::string_view action) override {
        auto load = Board::board_wide(action);
        static auto* const last_load = new std::shared_ptr<const CatalogLoad>;
        if (load) *last_load = load.value();
        return load;
    }
};

}  // namespace

void say(std::string_view line) {
    std::cerr << "board: " << printable(line) << '\n';
}

void warn(std::string_view warning) {
    say(fmt::format("warning: {}", warning));
}

void warn_all(const std::vector<std::string>& warnings) {
    for (const auto& w : warnings) warn(w);
}

int fail(Exit code, std::string_view command, std::string_view message) {
    say(fmt::format("{}: {}", command, message));
    return static_cast<int>(code);
}

int report(const app::Refusal& refusal, std::string_view command) {
    warn_all(refusal.warnings);
    say(command.empty() ? refusal.message : fmt::format("{}: {}", command, refusal.message));
    return app::exit_code_of(refusal.kind);
}

std::optional<fs::path> find_board(const GlobalOptions& options) {
    if (!options.board_dir.empty()) return fs::path{options.board_dir};
    if (const char* env = std::getenv("BOARD_DIR"); env && *env) return fs::path{env};
    std::error_code ec;
    const fs::path here = fs::current_path(ec);
    if (ec) return std::nullopt;
    return board::find_board(here);
}

Actor invoking_actor(const std::string& as_name) {
    if (const char* run = std::getenv("BOARD_RUN"); run && *run) {
        const char* phase = std::getenv("BOARD_PHASE");
        return {ActorKind::agent, phase && *phase ? phase : "run"};
    }
    if (!as_name.empty()) return {ActorKind::human, as_name};
    const char* user = std::getenv("USER");
    return {ActorKind::human, user && *user ? user : "unknown"};
}

std::variant<Session, int> Session::open(const GlobalOptions& options,
                                         std::string_view command,
                                         bool writes) {
    const auto root = find_board(options);
    if (!root)
        return fail(
            Exit::usage,
            command,
            "no board here (no board.yaml above this folder); use --board DIR or board init");
    std::error_code ec;
    if (!fs::exists(*root / "board.yaml", ec))
        return fail(Exit::usage,
                    command,
                    fmt::format("{} holds no board.yaml (not a board; create one with board init)",
                                root->string()));
    if (!options.as.empty() && !app::is_valid_person_name(options.as))
        return fail(
            Exit::usage,
            command,
            fmt::format("--as \"{}\": a name is one word of printable characters, without ':'",
                        options.as));
    Session session;
    session.board_ = std::make_unique<OneCommandBoard>(*root);
    session.by_ = invoking_actor(options.as);
    // $USER or $BOARD_PHASE, which --as did not override: refused before anything is written.
    if (writes && !is_valid_actor(session.by_))
        return fail(
            Exit::usage,
            command,
            fmt::format("\"{}\" cannot sign an event: a name is one word of printable "
                        "characters ({})",
                        to_string(session.by_),
                        session.by_.kind == ActorKind::agent ? "$BOARD_PHASE names the run's phase"
                                                             : "set one with --as NAME"));
    session.json_ = options.json;
    session.colour_ = !options.json && stdout_wants_colour();
    return session;
}

int Session::print(const app::Result<app::Written>& written) const {
    if (!written) return report(written.error());
    const Ticket& ticket = written.value().ticket;
    std::cout << (json_ ? app::to_json(written.value())
                        : fmt::format("{}: {}\n", ticket.id, describe_state(ticket)))
              << std::flush;
    warn_all(written.value().warnings);
    return 0;
}

}  // namespace board::cli
