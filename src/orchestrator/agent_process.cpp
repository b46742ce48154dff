#include "orchestrator/agent_process.hpp"

#include "orchestrator/disk_work.hpp"
#include "orchestrator/strays.hpp"
#include "support/unique_fd.hpp"

#include <board/board_config.hpp>
#include <board/sandbox.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/process.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;  // NOLINT: POSIX

namespace board::orchestrator {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process::v2;
using namespace boost::asio::experimental::awaitable_operators;

/// What the child does between clone and exec, all of it made beforehand: the child shares
/// the daemon's memory until it execs, so it allocates nothing, takes no lock and calls no
/// function a sanitizer intercepts.
struct ChildPlan {
    const char* exe = nullptr;
    char* const* argv = nullptr;
    char* const* envp = nullptr;
    const char* cwd = nullptr;  ///< null: the daemon's
    int input_fd = -1;
    int output_fd = -1;
    int reading_fd = -1;  ///< prepared Landlock rulesets, or -1: unconfined
    int writing_fd = -1;
    bool filter_inherited = false;  ///< the launching thread is filtered (LaunchingThread)
    int highest_fd = 0;             ///< where closing descriptors one by one stops (no close_range)
    // Written by the child when a step fails, read by the parent once the clone returns.
    int failed_errno = 0;
    const char* failed_step = nullptr;
};

/// The kernel's own sigaction layout, for the raw call (glibc's wrapper is intercepted by
/// ASan, whose handler bookkeeping must not run in a child that shares the parent's memory).
struct KernelSigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    std::uint64_t mask;
};

// The child's code is not instrumented: a sanitizer's frame bookkeeping would poison the
// shadow of a stack it does not know (child_stack), which the next launch runs on again.
#define BOARD_CHILD_CODE __attribute__((no_sanitize("address", "undefined")))

[[noreturn]] BOARD_CHILD_CODE void child_fails(ChildPlan& plan, const char* step) {
    plan.failed_errno = errno;
    plan.failed_step = step;
    ::_exit(127);
}

BOARD_CHILD_CODE int run_child(void* argument) {
    auto& plan = *static_cast<ChildPlan*>(argument);
    // A session of its own (so also a process group of its own, the session id): no
    // controlling terminal, so an agent cannot push keystrokes into the person's shell, and
    // one kill(-pgid) stops everything it starts.
    if (::setsid() < 0) child_fails(plan, "setsid");
    if (const int error =
            enforce_confinement(plan.reading_fd, plan.writing_fd, plan.filter_inherited);
        error != 0) {
        errno = error;
        child_fails(plan, "Landlock");
    }
    if (::dup2(plan.input_fd, STDIN_FILENO) < 0 || ::dup2(plan.output_fd, STDOUT_FILENO) < 0 ||
        ::dup2(plan.output_fd, STDERR_FILENO) < 0)
        child_fails(plan, "dup2");
    if (plan.cwd && ::chdir(plan.cwd) != 0) child_fails(plan, "chdir");
    // Exactly stdin, stdout and stderr: whatever else the daemon holds (its HTTP listener and
    // clients, the board lock, Asio's own descriptors) never reaches an agent, so an agent
    // that outlives the daemon cannot keep its port or read its connections.
    if (::syscall(SYS_close_range, STDERR_FILENO + 1, ~0U, 0) != 0) {
        // A kernel before 5.9, or a filter that refuses the call: one by one.
        for (int fd = STDERR_FILENO + 1; fd < plan.highest_fd; ++fd) ::syscall(SYS_close, fd);
    }
    // Default dispositions, then an empty mask (the parent blocked every signal around the
    // clone so that none of its handlers runs here).
    KernelSigaction default_action{SIG_DFL, 0, nullptr, 0};
    for (int signal = 1; signal < NSIG; ++signal) {
        if (signal == SIGKILL || signal == SIGSTOP) continue;
        ::syscall(SYS_rt_sigaction, signal, &default_action, nullptr, sizeof(std::uint64_t));
    }
    const std::uint64_t no_signals = 0;
    ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &no_signals, nullptr, sizeof no_signals);
    ::execve(plan.exe, plan.argv, plan.envp);
    child_fails(plan, "execve");
}

constexpr std::size_t child_stack_bytes = 256 * 1024;

/// Whether this thread ran filter_this_thread (LaunchingThread): what it starts has the filter.
thread_local bool this_thread_filtered = false;

/// The stack a launch's child runs on until its exec: one per launching thread, kept for the
/// thread's life. The clone returns only once the child has exec'd or exited (CLONE_VFORK
/// suspends the calling thread until then), so no two children of one thread are on it at
/// once; and no launch unmaps memory, which would make every other thread of the daemon flush
/// its TLB. Null, and `problem`, when it cannot be had.
char* child_stack(std::string& problem) {
    struct Kept {
        void* at = MAP_FAILED;

        ~Kept() {
            if (at != MAP_FAILED) ::munmap(at, child_stack_bytes);
        }
    };

    thread_local Kept kept;
    if (kept.at == MAP_FAILED) {
        kept.at = ::mmap(nullptr,
                         child_stack_bytes,
                         PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
                         -1,
                         0);
        if (kept.at == MAP_FAILED) {
            problem = std::string{"mmap: "} + std::strerror(errno);
            return nullptr;
        }
    }
    return static_cast<char*>(kept.at);
}

/// Starts `exe` with `spec.argv` as run_child describes, confined by the spec's rulesets. Like
/// posix_spawn, the clone shares the daemon's memory and the daemon waits until the child has
/// exec'd or exited (vfork speed at any daemon size); unlike it, the child can confine itself
/// before the exec. Returns the pid, or -1 and `problem`.
pid_t spawn_in_own_group(const std::filesystem::path& exe,
                         const LaunchSpec& spec,
                         const std::vector<std::string>& env,
                         int input_fd,
                         int output_fd,
                         std::string& problem) {
    // A daemon started with its standard descriptors closed can get 0-2 for these: above
    // them, dup2 in the child neither clobbers one with another nor keeps close-on-exec.
    UniqueFd input_above, output_above;
    if (input_fd <= STDERR_FILENO) {
        input_above.reset(::fcntl(input_fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1));
        input_fd = input_above.get();
    }
    if (output_fd <= STDERR_FILENO) {
        output_above.reset(::fcntl(output_fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1));
        output_fd = output_above.get();
    }
    if (input_fd < 0 || output_fd < 0) {
        problem = std::string{"fcntl: "} + std::strerror(errno);
        return -1;
    }
    std::vector<char*> argv;
    for (const auto& a : spec.argv)
        argv.push_back(const_cast<char*>(a.c_str()));  // NOLINT: POSIX API
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& kv : env) envp.push_back(const_cast<char*>(kv.c_str()));  // NOLINT: POSIX API
    envp.push_back(nullptr);
    ChildPlan plan;
    plan.exe = exe.c_str();
    plan.argv = argv.data();
    plan.envp = envp.data();
    plan.cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
    plan.input_fd = input_fd;
    plan.output_fd = output_fd;
    plan.reading_fd = spec.reading_rules ? spec.reading_rules->get() : -1;
    plan.writing_fd = spec.writing_rules ? spec.writing_rules->get() : -1;
    plan.filter_inherited = this_thread_filtered;
    if (this_thread_filtered && plan.reading_fd < 0 && plan.writing_fd < 0) {
        // It would run filtered all the same: an agent set to `sandbox: none` is not.
        problem = "an unconfined agent cannot start from the confined launching thread";
        return -1;
    }
    rlimit open_files{};
    plan.highest_fd = ::getrlimit(RLIMIT_NOFILE, &open_files) == 0 && open_files.rlim_cur < 65536
                          ? static_cast<int>(open_files.rlim_cur)
                          : 65536;

    // The child's own stack: it never writes the daemon's.
    char* const stack = child_stack(problem);
    if (!stack) return -1;
    sigset_t all_signals;
    sigset_t before;
    ::sigfillset(&all_signals);
    ::pthread_sigmask(SIG_SETMASK, &all_signals, &before);
    const pid_t pid =
        ::clone(run_child, stack + child_stack_bytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
    const int clone_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (pid < 0) {
        problem = std::string{"clone: "} + std::strerror(clone_errno);
        return -1;
    }
    if (plan.failed_step) {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        problem = std::string{plan.failed_step} + ": " + std::strerror(plan.failed_errno);
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

constexpr auto sweep_again_after = std::chrono::milliseconds{20};

/// Sweeps, a pause between passes, while a sweep finds strays (one stopped may leave
/// children of its own to us). Returns whether the last sweep left children to a later one.
asio::awaitable<bool> sweep_while_found(asio::any_io_executor executor) {
    asio::steady_timer again{executor};
    for (int pass = 0; pass < 100; ++pass) {
        const StraySweep sweep = sweep_strays();
        if (sweep.found() == 0) co_return sweep.deferred;
        again.expires_after(sweep_again_after);
        co_await again.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    co_return false;
}

/// Sweeps every little while, on its own, until a sweep leaves nothing to a later one: a
/// sweep that met another run's launch in flight left that thread's unnoted children, which
/// may hold a stray, and the run that ended does not wait for another's launch; one that met
/// a child whose environment read empty (inside execve, or none at all) judges it again.
asio::awaitable<void> sweep_after_launches(asio::any_io_executor executor) {
    asio::steady_timer again{executor};
    for (int pass = 0; pass < 100; ++pass) {
        again.expires_after(sweep_again_after);
        co_await again.async_wait(asio::as_tuple(asio::use_awaitable));
        if (!co_await sweep_while_found(executor)) co_return;
    }
}

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

AgentProcess::AgentProcess(asio::any_io_executor executor, asio::any_io_executor launch_confined_on)
    : executor_(std::move(executor))
    , launch_confined_on_(std::move(launch_confined_on))
    , timer_(executor_)
    , capture_(std::in_place) {}

AgentProcess::~AgentProcess() {
    const int pid = pid_ > 0 ? pid_ : launched_pid_.load();
    if (pid > 0 && !exited_) signal_group(pid, SIGKILL);
}

asio::awaitable<ProcessOutcome> AgentProcess::run(LaunchSpec spec,
                                                  std::function<void(int pid)> on_started) {
    auto keep_alive = shared_from_this();
    become_subreaper();  // so what an agent leaves running comes back to us (strays.hpp)
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

    if (interrupted_) {
        // Stopped before it began (the daemon is shutting down): nothing to launch or kill.
        out.interrupted = true;
        co_return finish();
    }
    // Launched with a vfork-style clone (design/toolchain.md §5), a confined one on the
    // launching thread, then handed to Boost.Process v2, which waits for it on the io_context.
    const std::vector<std::string> env = child_environment(spec);
    RunOfProcess works_for;
    for (const auto& [key, value] : spec.env) {
        if (key == "BOARD_TICKET_DIR") works_for.ticket_dir = value;
        if (key == "BOARD_RUN") works_for.run = value;
    }
    std::string launch_problem;
    const bool confined = spec.reading_rules || spec.writing_rules;
    const auto launch_on = confined ? launch_confined_on_ : asio::any_io_executor{};
    // 0: stopped while the launch waited its turn, nothing started.
    const pid_t child = co_await on_disk(launch_on, [&]() -> pid_t {
        if (stop_asked_.load() != StopAsked::no) return 0;
        const pid_t pid = launch_noted(
            [&] {
                return spawn_in_own_group(
                    *exe, spec, env, input.get(), write_end.get(), launch_problem);
            },
            std::move(works_for));
        // kill_now() on the io thread meanwhile: one of the two sees the other's write.
        launched_pid_.store(pid);
        if (pid > 0 && stop_asked_.load() == StopAsked::kill) signal_group(pid, SIGKILL);
        return pid;
    });
    if (child == 0) {
        out.interrupted = true;
        co_return finish();
    }
    input.reset();
    write_end.reset();  // the child holds the only write end now: EOF when it (and its tree) end
    spec.reading_rules.reset();
    spec.writing_rules.reset();
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

    std::uint64_t logged = 0;  // output bytes written to the log
    auto reader = [&]() -> asio::awaitable<void> {
        std::vector<char> buffer(64 * 1024);
        for (;;) {
            auto [read_ec, n] = co_await output.async_read_some(
                asio::buffer(buffer), asio::as_tuple(asio::use_awaitable));
            if (n > 0) {
                const std::string_view chunk{buffer.data(), n};
                const std::uint64_t room = spec.max_output - std::min(spec.max_output, logged);
                const std::size_t kept = static_cast<std::size_t>(std::min<std::uint64_t>(n, room));
                write_all(log.get(), chunk.substr(0, kept));
                logged += kept;
                if (kept < n) {
                    if (out.output_dropped == 0)
                        write_all(log.get(),
                                  "\n[board-daemon] the output passed this run's cap of " +
                                      format_size(spec.max_output) +
                                      " (max_output in board.yaml): the rest of it is not kept\n");
                    out.output_dropped += n - kept;
                }
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
        note_waited(pid_);
        // Nor what left its group: once the agent is gone, its strays are our children. A
        // stray stopped now may leave children of its own to us: sweep until none is left.
        if (co_await sweep_while_found(executor_))
            asio::co_spawn(executor_, sweep_after_launches(executor_), asio::detached);
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
    interrupted_ = true;  // kill_now() sets it too: a kill is never weakened here
    stop_asked_.store(StopAsked::interrupt);
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
    stop_asked_.store(StopAsked::kill);
    // A launch still on the launching thread has no `pid_` yet, and the io_context may stop
    // before it hands one over.
    const int pid = pid_ > 0 ? pid_ : launched_pid_.load();
    if (pid > 0 && !exited_) signal_group(pid, SIGKILL);
}

LaunchingThread::LaunchingThread() {
    std::promise<bool> filtered;
    auto result = filtered.get_future();
    asio::post(thread_, [&] {
        thread_id_ = ::gettid();
        this_thread_filtered = filter_this_thread() == 0;
        filtered.set_value(this_thread_filtered);
    });
    filtered_ = result.get();
    sweep_children_of(thread_id_);
}

LaunchingThread::~LaunchingThread() {
    // Before the join: once the thread is gone its id may be another thread's.
    stop_sweeping_children_of(thread_id_);
    thread_.join();
}

asio::any_io_executor LaunchingThread::executor() {
    if (!filtered_) return {};
    return thread_.get_executor();
}

}  // namespace board::orchestrator
