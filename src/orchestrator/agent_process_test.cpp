#include "orchestrator/agent_process.hpp"

#include "orchestrator/strays.hpp"
#include "support/wait.hpp"

#include <board/agent_output.hpp>
#include <board/sandbox.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <sstream>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace board::orchestrator;
namespace fs = std::filesystem;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("board-process-" + std::to_string(::getpid()));

    Scratch() {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }

    ~Scratch() { fs::remove_all(dir); }
};

LaunchSpec shell(const Scratch& s, std::string script, std::chrono::milliseconds timeout = 10s) {
    LaunchSpec spec;
    spec.argv = {"sh", "-c", std::move(script)};
    spec.cwd = s.dir;
    spec.log_file = s.dir / "run.log";
    spec.timeout = timeout;
    spec.grace = 200ms;
    return spec;
}

/// Runs `specs` at once to their ends; `started(i, pid)` as the i-th starts, when given.
std::vector<ProcessOutcome> run_all(std::vector<LaunchSpec> specs,
                                    asio::any_io_executor launch_confined_on = {},
                                    std::function<void(std::size_t, int)> started = {}) {
    asio::io_context io;
    std::vector<ProcessOutcome> out(specs.size());
    std::vector<std::shared_ptr<AgentProcess>> processes;  // alive while they run
    for (std::size_t i = 0; i < specs.size(); ++i) {
        auto& process = processes.emplace_back(
            std::make_shared<AgentProcess>(io.get_executor(), launch_confined_on));
        std::function<void(int)> on_started;
        if (started) on_started = [&started, i](int pid) { started(i, pid); };
        asio::co_spawn(io,
                       process->run(specs[i], std::move(on_started)),
                       [&out, i](std::exception_ptr e, ProcessOutcome o) {
                           REQUIRE_FALSE(e);
                           out[i] = std::move(o);
                       });
    }
    io.run();
    return out;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The value of `key` (`NoNewPrivs`, `Seccomp_filters`) in a /proc/<pid>/status text.
int status_field(const std::string& status_text, const std::string& key) {
    const auto at = status_text.find("\n" + key + ":\t");
    return at == std::string::npos ? -1 : std::atoi(status_text.c_str() + at + key.size() + 3);
}

/// True, with a warning, when this kernel has no Landlock: agents run unconfined there.
bool no_landlock() {
    if (board::landlock_abi() != 0) return false;
    WARN("this kernel has no Landlock: agents run unconfined here, nothing to test");
    return true;
}

/// `spec` confined as the daemon confines an agent, writing only in the scratch folder.
void confine(LaunchSpec& spec, const Scratch& s) {
    std::string problem;
    board::Confinement rules;
    rules.writable = {s.dir};
    spec.reading_rules =
        std::make_shared<const board::UniqueFd>(board::prepare_reading({}, problem));
    spec.writing_rules =
        std::make_shared<const board::UniqueFd>(board::prepare_writing(rules, problem));
    REQUIRE(problem.empty());
}

bool alive(int pid) {
    return ::kill(pid, 0) == 0;
}

}  // namespace

TEST_CASE("the agent's output is streamed to its log, with its exit code") {
    Scratch s;
    const auto out =
        run_all({shell(s, "echo out; echo err >&2; echo '<promise>COMPLETE</promise>'; exit 3")});
    CHECK(out[0].exit_code == 3);
    CHECK_FALSE(out[0].timed_out);
    CHECK(out[0].launch_error.empty());
    const std::string log = read_file(s.dir / "run.log");
    CHECK(log.find("out\n") != std::string::npos);
    CHECK(log.find("err\n") != std::string::npos);
    CHECK(board::scan_signals(out[0].output.report.message).signal == board::Signal::complete);
}

TEST_CASE("the prompt arrives on stdin, the environment and working directory are set") {
    Scratch s;
    { std::ofstream(s.dir / "prompt.md") << "the prompt text\n"; }
    LaunchSpec spec = shell(s,
                            "cat; echo \"ticket=$BOARD_TICKET\"; pwd; echo \"pgid=$(ps -o pgid= $$ "
                            "| tr -d ' ') pid=$$\"");
    spec.stdin_file = s.dir / "prompt.md";
    spec.env = {{"BOARD_TICKET", "PROJ-9"}};
    const auto out = run_all({spec});
    const std::string log = read_file(s.dir / "run.log");
    CHECK(log.find("the prompt text") != std::string::npos);
    CHECK(log.find("ticket=PROJ-9") != std::string::npos);
    CHECK(log.find(s.dir.string()) != std::string::npos);
    const std::string pid = std::to_string(out[0].pid);
    CHECK(log.find("pgid=" + pid + " pid=" + pid) != std::string::npos);  // its own group
}

TEST_CASE("a hung agent is stopped at its timeout with its grandchildren") {
    Scratch s;
    const auto pid_file = s.dir / "grandchild.pid";
    const auto started = std::chrono::steady_clock::now();
    // The scenario: an agent (and its grandchild) that would sleep far past the timeout.
    const auto out = run_all({shell(
        s, "sleep 300 & echo $! > " + pid_file.string() + "; trap '' TERM; sleep 300", 300ms)});
    const auto took = std::chrono::steady_clock::now() - started;
    CHECK(out[0].timed_out);
    CHECK(took < 5s);  // SIGTERM ignored: SIGKILL after the 200 ms grace
    const int grandchild = std::stoi(read_file(pid_file));
    CHECK(board::testing::wait_for_end(grandchild, 10s));
    CHECK_FALSE(alive(grandchild));
    CHECK(read_file(s.dir / "run.log").find("timed out after 300ms") != std::string::npos);
}

TEST_CASE("a grandchild that left the agent's session is stopped with the run") {
    // `setsid` takes it out of the agent's process group, so the group kill misses it.
    // Confined, the agent is the launching thread's child; its stray still comes back to the
    // main thread, the one a sweep reads.
    const bool confined = GENERATE(false, true);
    const bool hangs = GENERATE(true, false);
    CAPTURE(confined, hangs);
    if (confined && no_landlock()) return;
    Scratch s;
    const auto pid_file = s.dir / "stray.pid";
    const std::string script = "setsid sh -c 'echo $$ > " + pid_file.string() + ".tmp; mv " +
                               pid_file.string() + ".tmp " + pid_file.string() +
                               "; exec sleep 300' & until [ -e " + pid_file.string() +
                               " ]; do sleep 0.01; done; " + (hangs ? "sleep 300" : "exit 0");
    std::optional<LaunchingThread> launching;
    if (confined) launching.emplace();
    auto spec = shell(s, script, 2s);
    if (confined) confine(spec, s);
    const auto out = run_all({spec}, launching ? launching->executor() : asio::any_io_executor{});
    CHECK(out[0].timed_out == hangs);
    const int stray = std::stoi(read_file(pid_file));
    const bool ended = board::testing::wait_for_end(stray, 10s);
    if (!ended) ::kill(stray, SIGKILL);  // not leave it to sleep out its 300 s
    CHECK(ended);
    CHECK_FALSE(alive(stray));  // and reaped: no zombie left behind
}

TEST_CASE("a stray started with an empty environment is still stopped with the run") {
    // Its environment reads empty, as a helper's does inside execve: the sweep gives such a
    // child a little time, never a pass for good.
    Scratch s;
    const auto pid_file = s.dir / "stray.pid";
    // No shell in between: dash would export PWD into the stray's environment.
    const std::string script = "setsid env -i sleep 300 & echo $! > " + pid_file.string() +
                               ".tmp; mv " + pid_file.string() + ".tmp " + pid_file.string() +
                               "; exit 0";
    const auto out = run_all({shell(s, script, 5s)});
    CHECK(out[0].exit_code == 0);
    const int stray = std::stoi(read_file(pid_file));
    const bool ended = board::testing::wait_for_end(stray, 10s);
    if (!ended) ::kill(stray, SIGKILL);
    CHECK(ended);
    CHECK_FALSE(alive(stray));
}

TEST_CASE("a helper an agent daemonized lives while its run goes on, and ends with it") {
    // Agent B daemonizes a helper (a double fork: it becomes our child at once, in a session
    // of its own). Agent A ends meanwhile, and the sweep at A's end must leave B's helper be.
    Scratch s;
    const auto helper_file = s.dir / "helper.pid";
    const auto release = s.dir / "release";
    auto run_for = [&](std::string run, std::string script) {
        auto spec = shell(s, std::move(script));
        spec.env = {{"BOARD_TICKET_DIR", (s.dir / "T-1").string()}, {"BOARD_RUN", std::move(run)}};
        spec.log_file = s.dir / (spec.env[1].second + ".log");
        return spec;
    };
    const auto b = run_for("0002",
                           "(setsid sh -c 'echo $$ > " + helper_file.string() + ".tmp; mv " +
                               helper_file.string() + ".tmp " + helper_file.string() +
                               "; exec sleep 300' &); until [ -e " + release.string() +
                               " ]; do sleep 0.01; done");
    const auto a =
        run_for("0001", "until [ -e " + helper_file.string() + " ]; do sleep 0.01; done");
    asio::io_context io;
    int helper = 0;
    bool helper_outlived_a = false;
    ProcessOutcome b_out;
    auto first = std::make_shared<AgentProcess>(io.get_executor());
    auto second = std::make_shared<AgentProcess>(io.get_executor());
    asio::co_spawn(io, second->run(b), [&](std::exception_ptr e, ProcessOutcome o) {
        REQUIRE_FALSE(e);
        b_out = std::move(o);
    });
    asio::co_spawn(io, first->run(a), [&](std::exception_ptr e, ProcessOutcome o) {
        REQUIRE_FALSE(e);
        CHECK(o.exit_code == 0);
        helper = std::stoi(read_file(helper_file));
        helper_outlived_a = alive(helper);
        std::ofstream{release} << "";
    });
    io.run();
    REQUIRE(helper > 0);
    CHECK(helper_outlived_a);
    CHECK(b_out.exit_code == 0);
    const bool ended = board::testing::wait_for_end(helper, 10s);
    if (!ended) ::kill(helper, SIGKILL);
    CHECK(ended);  // B's run is over: its helper goes with it
}

TEST_CASE("a second agent in the same io_context is still killed at its timeout") {
    // The Boost.Process v2 pidfd trap (design/toolchain.md §3, snag 5).
    Scratch s;
    auto quick = shell(s, "true");
    auto hung = shell(s, "sleep 30", 200ms);  // the scenario: an agent hung past its timeout
    const auto started = std::chrono::steady_clock::now();
    const auto out = run_all({quick, hung, shell(s, "exit 4")});
    CHECK(std::chrono::steady_clock::now() - started < 5s);
    CHECK_FALSE(out[0].timed_out);
    CHECK(out[1].timed_out);
    CHECK(out[2].exit_code == 4);
}

TEST_CASE("many agents at once each get their own outcome") {
    // Confined, they start on the launching thread while the io thread sweeps for strays as
    // each one ends: none is taken for a stray before it is noted.
    const bool confined = GENERATE(false, true);
    CAPTURE(confined);
    if (confined && no_landlock()) return;
    Scratch s;
    std::optional<LaunchingThread> launching;
    if (confined) launching.emplace();
    std::vector<LaunchSpec> specs;
    for (int i = 0; i < 24; ++i) {
        // The scenario: every fourth agent hangs past its timeout, the others exit at once.
        auto spec =
            i % 4 == 0 ? shell(s, "sleep 5", 150ms) : shell(s, "exit " + std::to_string(i % 7));
        spec.log_file = s.dir / ("run-" + std::to_string(i) + ".log");
        if (confined) confine(spec, s);
        specs.push_back(spec);
    }
    const auto out = run_all(specs, launching ? launching->executor() : asio::any_io_executor{});
    for (int i = 0; i < 24; ++i) {
        CAPTURE(i);
        CHECK(out[static_cast<std::size_t>(i)].timed_out == (i % 4 == 0));
        if (i % 4 != 0) CHECK(out[static_cast<std::size_t>(i)].exit_code == i % 7);
    }
}

TEST_CASE("an agent that prints a lot keeps the daemon's memory flat") {
    Scratch s;
    const auto out = run_all({shell(s,
                                    "head -c 30000000 /dev/zero | tr '\\0' 'x' | fold -w 1000; "
                                    "echo; echo '<promise>COMPLETE</promise>'")});
    CHECK(out[0].output.bytes > 30'000'000);
    CHECK(out[0].output.report.message.size() < 1024);
    CHECK(fs::file_size(s.dir / "run.log") == out[0].output.bytes);
    CHECK(board::scan_signals(out[0].output.report.message).signal == board::Signal::complete);
}

TEST_CASE("output past the run's cap is read but not kept, and the log says where it stops") {
    Scratch s;
    LaunchSpec spec = shell(s,
                            "head -c 3000000 /dev/zero | tr '\\0' 'x' | fold -w 1000; "
                            "echo; echo '<promise>COMPLETE</promise>'");
    spec.max_output = 1u << 20;
    const auto out = run_all({spec});
    CHECK(out[0].exit_code == 0);
    CHECK(out[0].output.bytes > 3'000'000);
    CHECK(out[0].output_dropped == out[0].output.bytes - (1u << 20));
    const std::string log = read_file(s.dir / "run.log");
    const std::string marker =
        "\n[board-daemon] the output passed this run's cap of 1MB (max_output in board.yaml): "
        "the rest of it is not kept\n";
    CHECK(log.size() == (1u << 20) + marker.size());
    CHECK(log.substr(1u << 20) == marker);
    // The reader saw it all: the signal at the very end still counts.
    CHECK(board::scan_signals(out[0].output.report.message).signal == board::Signal::complete);
}

TEST_CASE("an agent that exits before reading its prompt is just a run that ended") {
    Scratch s;
    { std::ofstream(s.dir / "prompt.md") << std::string(1 << 20, 'p'); }
    auto spec = shell(s, "exit 0");
    spec.stdin_file = s.dir / "prompt.md";
    const auto out = run_all({spec});
    CHECK(out[0].exit_code == 0);
    CHECK(out[0].launch_error.empty());
}

TEST_CASE("a command that cannot start says why") {
    Scratch s;
    LaunchSpec missing = shell(s, "");
    missing.argv = {"board-no-such-agent-xyz"};
    LaunchSpec not_executable = shell(s, "");
    not_executable.argv = {"./run.log"};
    const auto out = run_all({missing, not_executable});
    CHECK(out[0].launch_error == "`board-no-such-agent-xyz` was not found on PATH");
    CHECK(out[1].launch_error.find("run.log") != std::string::npos);
}

TEST_CASE("interrupt stops the group gracefully, then by force") {
    Scratch s;
    asio::io_context io;
    auto process = std::make_shared<AgentProcess>(io.get_executor());
    ProcessOutcome out;
    asio::co_spawn(io,
                   // The scenario: an agent that ignores SIGTERM and would run on.
                   process->run(shell(s, "trap '' TERM; sleep 30")),
                   [&](std::exception_ptr, ProcessOutcome o) { out = std::move(o); });
    asio::steady_timer later(io, 200ms);
    later.async_wait([&](auto) { process->interrupt(100ms); });
    const auto started = std::chrono::steady_clock::now();
    io.run();
    CHECK(out.interrupted);
    CHECK_FALSE(out.timed_out);
    CHECK(std::chrono::steady_clock::now() - started < 5s);
}

TEST_CASE("an agent its dialect calls hopeless is stopped at once, with its own error") {
    // Codex reconnects for ever while the model service refuses connections.
    Scratch s;
    LaunchSpec spec = shell(s,
                            "echo '{\"type\":\"thread.started\",\"thread_id\":\"t\"}'; "
                            "echo '{\"type\":\"error\",\"message\":\"Reconnecting... waiting for "
                            "network (Connection failed: error sending request)\"}'; "
                            "exec sleep 600");  // the scenario: it waits for a network
    spec.reader = board::make_output_reader(board::DialectKind::codex, {});
    spec.timeout = std::chrono::minutes{5};
    spec.grace = std::chrono::seconds{2};
    const auto started = std::chrono::steady_clock::now();
    const auto out = run_all({spec});
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds{30});
    CHECK_FALSE(out[0].timed_out);
    CHECK(out[0].exit_code != 0);
    CHECK(out[0].output.report.error ==
          "Reconnecting... waiting for network (Connection failed: error sending request)");
    CHECK(out[0].output.report.retry == board::Retry::helps);
    CHECK(read_file(s.dir / "run.log").find("[board-daemon] stopping the agent") !=
          std::string::npos);
}

TEST_CASE("agents launched from the launching thread have its one filter, unconfined ones none") {
    if (no_landlock()) return;
    Scratch s;
    LaunchingThread launching;
    REQUIRE(launching.executor());
    const auto report = [&](const std::string& name) {
        // A leading newline, as every field but the first of the whole file has one.
        return shell(s,
                     "(echo; grep -E '^(NoNewPrivs|Seccomp_filters):' /proc/self/status) > " +
                         name + ".txt");
    };
    LaunchSpec confined = report("confined");
    confine(confined, s);
    // Whose child each agent is, seen as it starts.
    const auto child_of_launching_thread = [&](int pid) {
        const std::string children =
            " " +
            read_file("/proc/self/task/" + std::to_string(launching.thread_id()) + "/children");
        return children.find(" " + std::to_string(pid) + " ") != std::string::npos;
    };
    std::vector<int> launching_thread_child(2, -1);
    const auto out = run_all(
        {confined, report("unconfined")}, launching.executor(), [&](std::size_t i, int pid) {
            launching_thread_child[i] = child_of_launching_thread(pid) ? 1 : 0;
        });
    CHECK(launching_thread_child[0] == 1);
    CHECK(launching_thread_child[1] == 0);
    for (const auto& o : out) {
        CHECK(o.launch_error.empty());
        CHECK(o.exit_code == 0);
    }
    const std::string mine = read_file("/proc/self/status");
    const std::string confined_status = read_file(s.dir / "confined.txt");
    const std::string unconfined_status = read_file(s.dir / "unconfined.txt");
    INFO(confined_status << unconfined_status);
    // The filter the thread installed once, inherited: no second one made by the child.
    // Counted against this process's own filters (a container may add its own).
    CHECK(status_field(confined_status, "NoNewPrivs") == 1);
    CHECK(status_field(confined_status, "Seccomp_filters") ==
          status_field(mine, "Seccomp_filters") + 1);
    // An agent set to `sandbox: none` starts elsewhere, with nothing of the thread's.
    CHECK(status_field(unconfined_status, "NoNewPrivs") == status_field(mine, "NoNewPrivs"));
    CHECK(status_field(unconfined_status, "Seccomp_filters") ==
          status_field(mine, "Seccomp_filters"));
}

TEST_CASE("a sweep while another thread launches leaves that launch alone and does not wait") {
    std::promise<void> launched;
    std::promise<StraySweep> swept;
    const std::shared_future<StraySweep> sweep = swept.get_future().share();
    pid_t child = -1;
    std::thread launching([&] {
        // As a LaunchingThread: sweeps judge its children.
        sweep_children_of(::gettid());
        launch_noted([&] {
            child = ::fork();
            if (child == 0) {
                ::execl("/bin/sleep", "sleep", "30", nullptr);
                ::_exit(127);
            }
            launched.set_value();
            sweep.wait();  // the sweep happens while this launch is not noted yet
            return child;
        });
        stop_sweeping_children_of(::gettid());
    });
    launched.get_future().wait();
    swept.set_value(sweep_strays());
    launching.join();
    CHECK(sweep.get().found() == 0);
    CHECK(sweep.get().deferred);  // a stray among them is left to a later sweep, not for good
    int status = 0;
    CHECK(::waitpid(child, &status, WNOHANG) == 0);  // still running
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    note_waited(child);
}

TEST_CASE("a sweep leaves another thread's own child alone, one never noted as a launch") {
    // As the page's `git diff` on a worker thread: started and waited for by that thread.
    std::promise<pid_t> started;
    std::promise<void> swept;
    int status = -1;
    std::thread worker([&] {
        // Told of the exec by the end of a pipe the exec closes: a signal before it would run
        // this process's handlers in the forked copy.
        int exec_done[2];
        if (::pipe2(exec_done, O_CLOEXEC) != 0) {
            started.set_value(-1);
            return;
        }
        const pid_t child = ::fork();
        if (child == 0) {
            ::execl("/bin/sleep", "sleep", "30", nullptr);
            ::_exit(127);
        }
        ::close(exec_done[1]);
        char byte = 0;
        while (::read(exec_done[0], &byte, 1) < 0 && errno == EINTR) {
        }
        ::close(exec_done[0]);
        started.set_value(child);
        if (child < 0) return;
        swept.get_future().wait();
        ::kill(child, SIGTERM);
        ::waitpid(child, &status, 0);
    });
    const pid_t child = started.get_future().get();
    if (child <= 0) worker.join();
    REQUIRE(child > 0);
    const StraySweep sweep = sweep_strays();
    swept.set_value();
    worker.join();
    CHECK(sweep.found() == 0);
    // Ended by its own thread's SIGTERM, not by the sweep's SIGKILL.
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGTERM);
}

TEST_CASE("a process an agent made its own sibling is swept as a stray") {
    // clone(CLONE_PARENT) makes it a child of the thread that launched the agent; with
    // setsid it also leaves the agent's group, which the end of a run kills.
    LaunchingThread launching;
    if (!launching.executor()) {
        WARN("the launching thread could not filter itself: no confined launch from it here");
        return;
    }
    int report[2];
    REQUIRE(::pipe2(report, O_CLOEXEC) == 0);
    std::promise<pid_t> launched;
    asio::post(launching.executor(), [&] {
        launched.set_value(launch_noted([&] {
            const pid_t agent = ::fork();
            if (agent != 0) return agent;
            const long sibling = ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
            if (sibling == 0) {
                ::setsid();
                const pid_t self = ::getpid();
                if (::write(report[1], &self, sizeof self) != sizeof self) ::_exit(126);
                ::execl("/bin/sleep", "sleep", "300", nullptr);
                ::_exit(127);
            }
            ::_exit(sibling > 0 ? 0 : 1);
        }));
    });
    const pid_t agent = launched.get_future().get();
    ::close(report[1]);
    pid_t sibling = -1;
    const bool reported = ::read(report[0], &sibling, sizeof sibling) == sizeof sibling;
    char more = 0;
    while (::read(report[0], &more, 1) > 0) {  // the end: the agent gone, the sibling exec'd
    }
    ::close(report[0]);
    int status = 0;
    REQUIRE(agent > 0);
    ::waitpid(agent, &status, 0);
    note_waited(agent);
    REQUIRE(reported);
    const std::string launcher_children =
        read_file("/proc/self/task/" + std::to_string(launching.thread_id()) + "/children");
    // Where the kernel put it: the launching thread's, not the main thread's.
    CHECK((" " + launcher_children).find(" " + std::to_string(sibling) + " ") != std::string::npos);
    int found = 0;
    for (int pass = 0; pass < 3; ++pass) found += sweep_strays().found();
    const bool ended = board::testing::wait_for_end(sibling, 10s);
    if (!ended) ::kill(sibling, SIGKILL);
    // Killed by a sweep that ended before it was a zombie: reaped here, not left to the next.
    ::waitpid(sibling, &status, ended ? WNOHANG : 0);
    CHECK(found >= 1);
    CHECK(ended);
}

TEST_CASE("a run stopped while its launch waits for the launching thread starts nothing") {
    if (no_landlock()) return;
    Scratch s;
    LaunchingThread launching;
    REQUIRE(launching.executor());
    LaunchSpec spec = shell(s, "echo started > started.txt");
    confine(spec, s);
    // The thread busy with another launch until the run is stopped.
    std::promise<void> stopped;
    asio::post(launching.executor(), [done = stopped.get_future()]() mutable { done.wait(); });
    asio::io_context io;
    auto process = std::make_shared<AgentProcess>(io.get_executor(), launching.executor());
    bool started = false;
    ProcessOutcome out;
    asio::co_spawn(io,
                   process->run(spec, [&](int) { started = true; }),
                   [&](std::exception_ptr e, ProcessOutcome o) {
                       REQUIRE_FALSE(e);
                       out = std::move(o);
                   });
    // Runs once the run waits for its launch (the coroutine started first).
    asio::post(io, [&] {
        process->interrupt(100ms);
        stopped.set_value();
    });
    io.run();
    CHECK(out.interrupted);
    CHECK(out.launch_error.empty());
    CHECK_FALSE(started);
    CHECK_FALSE(fs::exists(s.dir / "started.txt"));
}
