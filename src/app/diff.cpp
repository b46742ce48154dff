// `board diff`: the ticket's branch as a reviewer reads it. git runs from an argv list, with
// the repository's hooks, external diff drivers and text conversions off, in the board's
// checkout.

#include "support/process.hpp"

#include <board/app.hpp>
#include <board/board_config.hpp>
#include <board/event_log.hpp>

#include <fmt/format.h>

#include <chrono>

namespace board::app {
namespace {

/// `git ARGS` in `dir` (git_argv: nothing the repository names runs).
Captured run_git(const std::filesystem::path& dir, const std::vector<std::string>& args) {
    return run_captured(git_argv(dir, args), std::chrono::minutes{2}, 256u << 20);
}

std::string last_line(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    const auto start = text.rfind('\n');
    return start == std::string::npos ? text : text.substr(start + 1);
}

}  // namespace

Result<std::string> Board::diff(const std::string& id, bool stat) {
    auto dir = ticket_folder("diff", id);
    if (!dir) return std::move(dir).error();
    auto loaded = load_ticket(dir.value());
    if (const auto* error = std::get_if<LogError>(&loaded))
        return Refusal{Refusal::Kind::storage, fmt::format("diff {}: {}", id, error->message), {}};
    const Ticket& ticket = std::get<Loaded>(loaded).ticket;
    if (ticket.branch.empty())
        return Refusal{Refusal::Kind::refused,
                       fmt::format("diff {}: the ticket has no branch (its work was not done in "
                                   "a worktree: agents.implementing.worktree)",
                                   id),
                       {}};
    auto config = load_board_config(root_ / "board.yaml");
    std::string base = config ? config.value().ship.base : std::string{};
    if (base.empty()) {
        const auto head = run_git(root_, {"symbolic-ref", "--quiet", "--short", "HEAD"});
        if (head.exit_code != 0)
            return Refusal{Refusal::Kind::refused,
                           fmt::format("diff {}: the board's checkout is not on a branch; set "
                                       "ship.base in board.yaml",
                                       id),
                           {}};
        base = last_line(head.output);
    }
    // No text conversion: a textconv filter is a program the repository's config names.
    std::vector<std::string> args{"diff", "--no-color", "--no-ext-diff", "--no-textconv"};
    if (stat) args.emplace_back("--stat");
    args.push_back(base + "..." + ticket.branch);
    args.emplace_back("--");
    auto diffed = run_git(root_, args);
    if (diffed.exit_code != 0)
        return Refusal{Refusal::Kind::storage,
                       fmt::format("diff {}: git diff {}...{} failed: {}",
                                   id,
                                   base,
                                   ticket.branch,
                                   diffed.output.empty() ? "git could not be run, or took too long"
                                                         : last_line(diffed.output)),
                       {}};
    return std::move(diffed.output);
}

}  // namespace board::app
