// `board diff`: the ticket's branch as a reviewer reads it. git runs from an argv list, with
// the repository's hooks and external diff drivers off, in the board's checkout.

#include <board/app.hpp>
#include <board/board_config.hpp>
#include <board/event_log.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;  // NOLINT: POSIX declares it nowhere in a header

namespace board::app {
namespace {

struct GitOutput {
    int exit_code = -1;
    std::string out;
    std::string problem;  ///< could not run it at all
};

/// Runs `git ARGS` in `dir`, its stdout captured (stderr too, appended, for the reason).
GitOutput run_git(const std::filesystem::path& dir, std::vector<std::string> args) {
    std::vector<std::string> argv{"git",
                                  "-C",
                                  dir.string(),
                                  "-c",
                                  "core.hooksPath=/dev/null",
                                  "-c",
                                  "core.fsmonitor=false",
                                  "-c",
                                  "diff.external="};
    argv.insert(argv.end(), args.begin(), args.end());
    GitOutput result;
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        result.problem = std::string{"pipe: "} + std::strerror(errno);
        return result;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    pid_t pid = 0;
    const int rc = ::posix_spawnp(&pid, "git", &actions, nullptr, raw.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    if (rc != 0) {
        ::close(pipe_fds[0]);
        result.problem = std::string{"cannot run git: "} + std::strerror(rc);
        return result;
    }
    char buffer[65536];
    for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        result.out.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(pipe_fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
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
        base = last_line(head.out);
    }
    std::vector<std::string> args{"diff", "--no-color", "--no-ext-diff"};
    if (stat) args.emplace_back("--stat");
    args.push_back(base + "..." + ticket.branch);
    args.emplace_back("--");
    auto diffed = run_git(root_, args);
    if (!diffed.problem.empty() || diffed.exit_code != 0)
        return Refusal{Refusal::Kind::storage,
                       fmt::format("diff {}: git diff {}...{} failed: {}",
                                   id,
                                   base,
                                   ticket.branch,
                                   diffed.problem.empty() ? last_line(diffed.out) : diffed.problem),
                       {}};
    return std::move(diffed.out);
}

}  // namespace board::app
