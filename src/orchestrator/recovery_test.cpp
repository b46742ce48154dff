#include "orchestrator/recovery.hpp"

#include "orchestrator/run_executor.hpp"
#include "orchestrator/run_folder.hpp"
#include "support/temp_dir.hpp"
#include "support/wait.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <linux/sched.h>
#include <string>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace board::orchestrator;

namespace {

/// `/bin/sleep 60` with exactly `env`, as a child of this process; with `pid` set, under that
/// number (clone3's set_tid: it needs CAP_SYS_ADMIN). -1 with errno when it cannot be had.
pid_t start_sleeper(std::vector<std::string> env, pid_t pid = 0) {
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    char sleep_path[] = "/bin/sleep";
    char seconds[] = "60";
    char* argv[] = {sleep_path, seconds, nullptr};
    // Closed by the exec: until then /proc shows this process's environment, not `env`.
    int execed[2];
    if (::pipe2(execed, O_CLOEXEC) != 0) return -1;
    long made = 0;
    if (pid > 0) {
        clone_args args{};
        args.exit_signal = SIGCHLD;
        args.set_tid = reinterpret_cast<std::uintptr_t>(&pid);
        args.set_tid_size = 1;
        made = ::syscall(SYS_clone3, &args, sizeof args);
    } else {
        made = ::fork();
    }
    if (made == 0) {
        ::execve(sleep_path, argv, envp.data());
        ::_exit(127);
    }
    const int error = errno;
    ::close(execed[1]);
    char byte = 0;
    while (made > 0 && ::read(execed[0], &byte, 1) < 0 && errno == EINTR) {
    }
    ::close(execed[0]);
    errno = error;
    return static_cast<pid_t>(made);
}

/// A child of this test, killed and reaped when the test leaves, however it leaves.
struct Child {
    pid_t pid = -1;

    ~Child() { end(); }

    void end() {
        if (pid <= 0) return;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        pid = -1;
    }
};

/// A board whose ticket `id` has the run `run` started (its files in `runs/`) and an agent of
/// that run still going, as a dead daemon left it; and what the start-up scan found of it.
struct LeftoverAgent {
    board::testing::TempDir board{"board-recovery-"};
    Child agent;
    pid_t pid = -1;
    std::vector<AgentProcessFound> found;

    LeftoverAgent(const std::string& id, const std::string& run, const std::string& phase) {
        const fs::path ticket = board.path() / "tickets" / id;
        fs::create_directories(ticket / "runs" / (run + "-" + phase));
        pid = agent.pid = start_sleeper(
            {"BOARD_TICKET_DIR=" + ticket.string(), "BOARD_RUN=" + run, "PATH=/usr/bin:/bin"});
        REQUIRE(pid > 0);
        for (auto& process : processes_with_a_board_run())
            if (process.pid == pid) found.push_back(std::move(process));
        REQUIRE(found.size() == 1);
        CHECK(found[0].run == run);
    }

    /// The daemon's start-up stop of what it found; what it said.
    std::vector<std::string> stop() const {
        RunContext context;
        context.board_root = board.path();
        std::vector<std::string> said;
        stop_leftover_processes(
            context, found, [&](const std::string& line) { said.push_back(line); });
        return said;
    }
};

}  // namespace

TEST_CASE("a process given the number of a leftover agent after the scan is left alone",
          "[recovery]") {
    LeftoverAgent agent{"P-1", "0001", "research"};
    // The agent ends and its number is given to a bystander before the daemon acts.
    agent.agent.end();
    Child bystander{start_sleeper({"PATH=/usr/bin:/bin"}, agent.pid)};
    if (bystander.pid < 0) {
        // Choosing a process's number (clone3's set_tid) needs CAP_SYS_ADMIN, kernel 5.5 and
        // the number still free.
        WARN("not checked: no process could be given number " << agent.pid << ": "
                                                              << std::strerror(errno));
        return;
    }
    REQUIRE(bystander.pid == agent.pid);

    CHECK(agent.stop().empty());
    // Still running: ended now by this test's own signal, not by the daemon's SIGKILL.
    ::kill(bystander.pid, SIGTERM);
    int status = 0;
    REQUIRE(::waitpid(bystander.pid, &status, 0) == bystander.pid);
    bystander.pid = -1;
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGTERM);
}

TEST_CASE("a leftover agent found at start is stopped, and said to be", "[recovery]") {
    LeftoverAgent agent{"P-2", "0003", "implementing"};
    const auto said = agent.stop();
    REQUIRE(board::testing::wait_for_end(agent.pid, std::chrono::seconds{10}));
    int status = 0;
    REQUIRE(::waitpid(agent.pid, &status, 0) == agent.pid);
    agent.agent.pid = -1;
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    REQUIRE(said.size() == 1);
    CHECK(said[0] == "P-2: stopped a process of run 0003 left by the last daemon (pid " +
                         std::to_string(agent.pid) + ")");
}
