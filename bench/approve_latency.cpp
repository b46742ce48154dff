// board_approve_latency: from a person's verdict to the agent's start, as a distribution.
//
//   board_approve_latency DAEMON BOARD NULL_AGENT [--approvals 20] [--debounce-ms 200]
//                         [--poll-ms 1000]
//
// N tickets are taken through research and planning by `board-daemon --watch` with
// board_null_agent and wait for a planning approval; then `board approve` is run for each in
// turn and the time from the verdict's `at` to the next `run-started`'s `at` is taken. Twice:
// with inotify (the daemon watches every ticket folder) and on the poll path (the bench holds
// every inotify instance this user may have while the daemon starts, as a board on a file
// system without inotify or a user at the limit gets). Median, p95 and the extremes are
// printed with the goal: debounce + 100 ms on the inotify path.

#include "support/wait.hpp"

#include <board/event_log.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <string>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;  // NOLINT: POSIX

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

pid_t spawn(const std::vector<std::string>& argv, const fs::path& out_file) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(
        &actions, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT
    args.push_back(nullptr);
    pid_t pid = -1;
    if (::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) {
        std::perror(args[0]);
        std::exit(1);
    }
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

int run(const std::vector<std::string>& argv, const fs::path& out_file) {
    int status = 0;
    ::waitpid(spawn(argv, out_file), &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

board::Ticket ticket_at(const fs::path& dir) {
    auto loaded = board::load_ticket(dir);
    if (const auto* ok = std::get_if<board::Loaded>(&loaded)) return ok->ticket;
    return {};
}

/// Verdict `at` to the first `run-started` `at` after it, in ms; -1 if there is none.
long latency_of(const fs::path& dir) {
    std::vector<board::Event> events;
    board::read_log(dir / "events.jsonl", [&](const board::Event& e) { events.push_back(e); });
    board::UnixMillis approved = 0;
    for (const auto& e : events) {
        if (std::holds_alternative<board::VerdictGiven>(e.payload)) approved = e.at;
        if (approved && std::holds_alternative<board::RunStarted>(e.payload))
            return static_cast<long>(e.at - approved);
    }
    return -1;
}

struct Path {
    std::string name;
    std::vector<long> ms;
};

Path measure(const std::string& name,
             bool starve_inotify,
             const fs::path& root,
             const std::string& daemon,
             const std::string& cli,
             int approvals,
             int debounce_ms,
             int poll_ms) {
    fs::create_directories(root / "tickets");
    std::ofstream(root / "board.yaml")
        << "prefix: L\n"
           "auto: { research: true, planning: true }\n"
           "gates: { research: none, planning: approval }\n"
           "wip: { research: 0, planning: 0, implementing: 0 }\n"
           "daemon: { max_parallel: 4, poll: "
        << poll_ms << "ms, debounce: " << debounce_ms
        << "ms }\n"
           "agents:\n  default: { command: [board_null_agent], timeout: 1m }\n"
           "  implementing: { worktree: false }\n"
           "  review: { enabled: false }\n";
    const fs::path log = root / "bench.out";
    std::vector<std::string> ids;
    for (int i = 1; i <= approvals; ++i) {
        if (run({cli, "create", "approve me", "--board", root.string(), "--as", "bench"}, log) !=
            0) {
            std::fprintf(stderr, "board create failed; see %s\n", log.c_str());
            std::exit(1);
        }
        ids.push_back("L-" + std::to_string(i));
    }
    // Every inotify instance this user may have, held while the daemon starts.
    std::vector<int> held;
    while (starve_inotify) {
        const int fd = ::inotify_init1(IN_CLOEXEC);
        if (fd < 0) break;
        held.push_back(fd);
    }
    const pid_t d = spawn({daemon, "--board", root.string(), "--watch"}, root / "daemon.out");
    std::vector<fs::path> folders;
    for (const auto& id : ids) folders.push_back(root / "tickets" / id);
    const bool waiting = board::testing::wait_until(folders, 120s, [&] {
        return std::all_of(ids.begin(), ids.end(), [&](const std::string& id) {
            return ticket_at(root / "tickets" / id).awaiting == board::Awaiting::approval;
        });
    });
    for (const int fd : held) ::close(fd);
    Path path{name, {}};
    if (!waiting) {
        std::fprintf(stderr, "%s: the tickets did not reach the approval\n", name.c_str());
        std::exit(1);
    }
    for (const auto& id : ids) {
        run({cli, "approve", id, "--board", root.string(), "--as", "bench"}, log);
        const fs::path dir = root / "tickets" / id;
        board::testing::wait_until({dir}, 60s, [&] { return latency_of(dir) >= 0; });
        path.ms.push_back(latency_of(dir));
    }
    ::kill(d, SIGTERM);
    ::waitpid(d, nullptr, 0);
    std::sort(path.ms.begin(), path.ms.end());
    return path;
}

long at_fraction(const std::vector<long>& sorted, double fraction) {
    const auto i = static_cast<std::size_t>(fraction * static_cast<double>(sorted.size() - 1));
    return sorted[i];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr,
                     "usage: %s DAEMON BOARD NULL_AGENT [--approvals N] [--debounce-ms D] "
                     "[--poll-ms P]\n",
                     argv[0]);
        return 2;
    }
    const std::string daemon = fs::absolute(argv[1]).string();
    const std::string cli = fs::absolute(argv[2]).string();
    const std::string agent = fs::absolute(argv[3]).string();
    int approvals = 20, debounce_ms = 200, poll_ms = 1000;
    for (int i = 4; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        const int value = std::atoi(argv[i + 1]);
        if (flag == "--approvals") approvals = std::max(1, value);
        if (flag == "--debounce-ms") debounce_ms = value;
        if (flag == "--poll-ms") poll_ms = value;
    }
    const std::string path_env = fs::path(agent).parent_path().string() + ":" + std::getenv("PATH");
    ::setenv("PATH", path_env.c_str(), 1);
    const fs::path scratch =
        fs::temp_directory_path() / ("board-approve-latency-" + std::to_string(::getpid()));
    std::vector<Path> paths;
    paths.push_back(measure(
        "inotify", false, scratch / "inotify", daemon, cli, approvals, debounce_ms, poll_ms));
    paths.push_back(
        measure("poll", true, scratch / "poll", daemon, cli, approvals, debounce_ms, poll_ms));
    std::printf("verdict -> run-started, %d approvals each, debounce %d ms, poll %d ms:\n",
                approvals,
                debounce_ms,
                poll_ms);
    for (const auto& p : paths) {
        std::printf("  %-8s median %4ld ms, p95 %4ld ms, min %4ld ms, max %4ld ms\n",
                    p.name.c_str(),
                    at_fraction(p.ms, 0.5),
                    at_fraction(p.ms, 0.95),
                    p.ms.front(),
                    p.ms.back());
    }
    std::printf("  goal (inotify): median <= debounce + 100 ms = %d ms: %s\n",
                debounce_ms + 100,
                at_fraction(paths[0].ms, 0.5) <= debounce_ms + 100 ? "met" : "NOT met");
    fs::remove_all(scratch);
    return 0;
}
