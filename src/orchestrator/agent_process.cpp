#include "orchestrator/agent_process.hpp"

#include "support/unique_fd.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/process.hpp>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/types.h>
#include <unistd.h>

extern char** environ;  // NOLINT: POSIX

namespace board::orchestrator {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process::v2;
using namespace boost::asio::experimental::awaitable_operators;

/// Starts `exe` with `spec.argv` in a process group of its own (so the whole tree it starts
/// can be stopped with one kill(-pgid): an agent's compiler or test run must not outlive it),
/// stdin from `input_fd`, stdout and stderr to `output_fd` and no other descriptor, in
/// `spec.cwd`, with default signal dispositions and an empty signal mask. Returns the pid, or
/// -1 and `problem`.
pid_t spawn_in_own_group(const std::filesystem::path& exe,
                         const LaunchSpec& spec,
                         const std::vector<std::string>& env,
                         int input_fd,
                         int output_fd,
                         std::string& problem) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawnattr_init(&attributes);
    ::posix_spawn_file_actions_adddup2(&actions, input_fd, STDIN_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, output_fd, STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, output_fd, STDERR_FILENO);
    // Exactly stdin, stdout and stderr: whatever else the daemon holds (its HTTP listener and
    // clients, the board lock, Asio's own descriptors) never reaches an agent, so an agent
    // that outlives the daemon cannot keep its port or read its connections.
    ::posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
    if (!spec.cwd.empty()) ::posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
    sigset_t all_signals;
    sigset_t no_signals;
    ::sigfillset(&all_signals);
    ::sigemptyset(&no_signals);
    ::posix_spawnattr_setsigdefault(&attributes, &all_signals);
    ::posix_spawnattr_setsigmask(&attributes, &no_signals);
    // A session of its own (so also a process group of its own, the session id): no
    // controlling terminal, so an agent cannot push keystrokes into the person's shell.
    ::posix_spawnattr_setflags(
        &attributes,
        static_cast<short>(POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK));
    std::vector<char*> argv;
    for (const auto& a : spec.argv)
        argv.push_back(const_cast<char*>(a.c_str()));  // NOLINT: POSIX API
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& kv : env) envp.push_back(const_cast<char*>(kv.c_str()));  // NOLINT: POSIX API
    envp.push_back(nullptr);
    pid_t pid = -1;
    const int rc =
        ::posix_spawn(&pid, exe.c_str(), &actions, &attributes, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
    if (rc != 0) {
        problem = std::strerror(rc);
        return -1;
    }
    return pid;
}

void write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const auto n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // a full disk loses log text, never the run
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

std::string errno_text() {
    return std::strerror(errno);
}

}  // namespace

std::optional<std::filesystem::path> find_program(const LaunchSpec& spec, std::string& error) {
    const std::string& name = spec.argv.front();
    if (name.find('/') != std::string::npos) {
        std::filesystem::path exe{name};
        if (exe.is_relative()) exe = spec.cwd / exe;
        if (::access(exe.c_str(), X_OK) != 0) {
            error = exe.string() + ": " + errno_text();
            return std::nullopt;
        }
        return exe;
    }
    const auto found = bp::environment::find_executable(name);
    if (found.empty()) {
        error = "`" + name + "` was not found on PATH";
        return std::nullopt;
    }
    return std::filesystem::path{found.string()};
}

namespace {

std::vector<std::string> child_environment(const LaunchSpec& spec) {
    std::vector<std::string> env;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string_view kv{*entry};
        const auto key = kv.substr(0, kv.find('='));
        const bool replaced = std::any_of(
            spec.env.begin(), spec.env.end(), [&](const auto& e) { return e.first == key; });
        if (!replaced) env.emplace_back(kv);
    }
    for (const auto& [key, value] : spec.env) env.push_back(key + "=" + value);
    return env;
}

std::string describe(std::chrono::milliseconds d) {
    return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + "s"
                                 : std::to_string(d.count()) + "ms";
}

}  // namespace

bool signal_group(int pgid, int signal) {
    return pgid > 0 && ::kill(-pgid, signal) == 0;
}

AgentProcess::AgentProcess(asio::any_io_executor executor)
    : executor_(std::move(executor))
    , timer_(executor_)
    , capture_(std::in_place) {}

asio::awaitable<ProcessOutcome> AgentProcess::run(LaunchSpec spec,
                                                  std::function<void(int pid)> on_started) {
    auto keep_alive = shared_from_this();
    ProcessOutcome out;
    const auto started = std::chrono::steady_clock::now();
    capture_.emplace(spec.reader, spec.max_line_bytes);
    auto finish = [&] {
        out.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - started);
        out.output = capture_->finish(out.exit_code);
        return std::move(out);
    };

    UniqueFd log{::open(spec.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)};
    if (log.get() < 0) {
        out.launch_error = spec.log_file.string() + ": " + errno_text();
        co_return finish();
    }
    if (spec.argv.empty() || spec.argv.front().empty()) {
        out.launch_error = "the agent command is empty";
        co_return finish();
    }
    auto exe = find_program(spec, out.launch_error);
    if (!exe) {
        write_all(log.get(), "[board-daemon] could not start: " + out.launch_error + "\n");
        co_return finish();
    }
    const auto stdin_path =
        spec.stdin_file.empty() ? std::filesystem::path{"/dev/null"} : spec.stdin_file;
    UniqueFd input{::open(stdin_path.c_str(), O_RDONLY | O_CLOEXEC)};
    int pipe_fds[2] = {-1, -1};
    if (input.get() < 0 || ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        out.launch_error = (input.get() < 0 ? stdin_path.string() + ": " : "pipe: ") + errno_text();
        co_return finish();
    }
    UniqueFd read_end{pipe_fds[0]};
    UniqueFd write_end{pipe_fds[1]};

    // Launched with posix_spawn (vfork speed, whatever the daemon's size; design/toolchain.md
    // §5), then handed to Boost.Process v2, which waits for it on the io_context.
    const std::vector<std::string> env = child_environment(spec);
    std::string launch_problem;
    const pid_t child =
        spawn_in_own_group(*exe, spec, env, input.get(), write_end.get(), launch_problem);
    input.reset();
    write_end.reset();  // the child holds the only write end now: EOF when it (and its tree) end
    if (child < 0) {
        out.launch_error = exe->string() + ": " + launch_problem;
        write_all(log.get(), "[board-daemon] could not start: " + out.launch_error + "\n");
        co_return finish();
    }
    bp::process process(executor_, child);
    pid_ = process.id();
    out.pid = pid_;
    if (on_started) on_started(pid_);
    if (interrupted_) signal_group(pid_, SIGTERM);  // interrupted while it was launching

    asio::readable_pipe output{executor_, read_end.release()};
    asio::steady_timer drain{executor_};
    bool drained = false;
    timer_.expires_after(stage_ == Stage::running ? spec.timeout : grace_);

    auto reader = [&]() -> asio::awaitable<void> {
        std::vector<char> buffer(64 * 1024);
        for (;;) {
            auto [read_ec, n] = co_await output.async_read_some(
                asio::buffer(buffer), asio::as_tuple(asio::use_awaitable));
            if (n > 0) {
                const std::string_view chunk{buffer.data(), n};
                write_all(log.get(), chunk);
                capture_->feed(chunk);
                if (!capture_->hopeless().empty() && stage_ == Stage::running && !exited_) {
                    // The agent will not stop by itself: as at a timeout, TERM then KILL.
                    stage_ = Stage::terminating;
                    write_all(
                        log.get(),
                        "\n[board-daemon] stopping the agent: " + capture_->hopeless() + "\n");
                    signal_group(pid_, SIGTERM);
                    timer_.expires_after(spec.grace);
                }
            }
            if (read_ec) break;
        }
        drained = true;
        drain.cancel();
    };
    // Never cancelled: completes whenever the process exits (toolchain.md §3, snag 6).
    auto waiter = [&]() -> asio::awaitable<void> {
        auto [wait_ec, code] = co_await process.async_wait(asio::as_tuple(asio::use_awaitable));
        out.exit_code = wait_ec ? -1 : code;
        exited_ = true;
        timer_.cancel();
        signal_group(pid_, SIGKILL);  // nothing the agent started outlives it
        if (!drained) {
            // A grandchild that left the group may still hold the pipe: stop reading soon.
            drain.expires_after(std::chrono::seconds{2});
            co_await drain.async_wait(asio::as_tuple(asio::use_awaitable));
            if (!drained) {
                boost::system::error_code ignored;
                output.close(ignored);
            }
        }
    };
    // Kills from the timer branch (snag 6); `exited_` guards the race of snag 7.
    auto killer = [&]() -> asio::awaitable<void> {
        for (;;) {
            auto [timer_ec] = co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
            if (exited_) co_return;
            if (timer_ec) continue;  // re-armed by interrupt()
            if (stage_ == Stage::running) {
                timed_out_ = true;
                stage_ = Stage::terminating;
                write_all(log.get(),
                          "\n[board-daemon] timed out after " + describe(spec.timeout) +
                              ": SIGTERM to the agent's process group\n");
                signal_group(pid_, SIGTERM);
                timer_.expires_after(spec.grace);
            } else if (stage_ == Stage::terminating) {
                stage_ = Stage::killed;
                write_all(log.get(),
                          "\n[board-daemon] still running after the grace period: SIGKILL\n");
                signal_group(pid_, SIGKILL);
                timer_.expires_after(std::chrono::hours{24});
            }
        }
    };
    co_await (reader() && waiter() && killer());
    out.timed_out = timed_out_ && !interrupted_;
    out.interrupted = interrupted_;
    co_return finish();
}

void AgentProcess::interrupt(std::chrono::milliseconds grace) {
    if (interrupted_ || exited_) return;
    interrupted_ = true;
    grace_ = grace;
    if (stage_ == Stage::running) stage_ = Stage::terminating;
    if (pid_ > 0) {
        signal_group(pid_, SIGTERM);
        timer_.expires_after(grace);
    }
}

void AgentProcess::kill_now() {
    interrupted_ = true;
    stage_ = Stage::killed;
    if (pid_ > 0 && !exited_) signal_group(pid_, SIGKILL);
}

}  // namespace board::orchestrator
