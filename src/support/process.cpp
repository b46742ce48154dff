#include "support/process.hpp"

#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;  // NOLINT: POSIX declares it nowhere in a header

namespace board {

Captured run_captured(const std::vector<std::string>& argv,
                      std::chrono::milliseconds limit,
                      std::size_t max_output) {
    Captured ran;
    if (argv.empty()) return ran;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return ran;
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawnattr_t attributes;
    ::posix_spawnattr_init(&attributes);
    ::posix_spawnattr_setpgroup(&attributes, 0);
    ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT: POSIX
    args.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        return ran;
    }
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char buffer[65536];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{fds[0], POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
        if (n <= 0) break;
        const std::size_t room = max_output - std::min(max_output, ran.output.size());
        ran.output.append(buffer, std::min(room, static_cast<std::size_t>(n)));
    }
    ::close(fds[0]);
    // Its output ended; its exit follows, or the deadline does.
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(-pid, SIGKILL);  // not done in time: it and what it started
            ::waitpid(pid, &status, 0);
            return ran;
        }
        ::poll(nullptr, 0, 10);
    }
    ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return ran;
}

std::vector<std::string> git_argv(const std::filesystem::path& dir,
                                  const std::vector<std::string>& args) {
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
    return argv;
}

}  // namespace board
