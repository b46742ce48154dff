#pragma once
// One agent process (spec/agents.md step 3): launched from an argv list (never a shell) in
// its own process group, the prompt file on stdin, stdout and stderr streamed to the run's
// log file as they arrive, a timeout after which the whole group gets SIGTERM, then SIGKILL
// after the grace period. Memory stays bounded however much the agent prints.
//
// The launch is a vfork-style clone (vfork speed at any daemon size; the child sets its
// session, stdio, working directory and signal state, and enforces the Landlock rules the
// daemon prepared, before the exec); Boost.Process v2 then waits for the process on the
// io_context. Process v2 1.81 on this kernel (design/toolchain.md §3): built
// with BOOST_PROCESS_V2_DISABLE_PIDFD_OPEN, the kill comes from the timer branch, and the wait
// on the process is never cancelled.

#include "orchestrator/output_capture.hpp"
#include "support/unique_fd.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace board::orchestrator {

struct LaunchSpec {
    std::vector<std::string> argv;  ///< argv[0] is looked up on PATH unless it has a `/`
    /// Set or replaced in the daemon's own environment for the child.
    std::vector<std::pair<std::string, std::string>> env;
    std::filesystem::path cwd;
    std::filesystem::path stdin_file;  ///< empty: /dev/null
    std::filesystem::path log_file;    ///< appended to; created if missing
    std::chrono::milliseconds timeout{std::chrono::minutes{30}};
    std::chrono::milliseconds grace{std::chrono::seconds{30}};
    /// The Landlock rulesets the agent runs under (prepare_reading, prepare_writing), enforced
    /// between fork and exec; null: that half unconfined.
    std::shared_ptr<const UniqueFd> reading_rules;
    std::shared_ptr<const UniqueFd> writing_rules;
    /// Reads the output as it arrives (the agent's dialect); null: as plain text.
    std::shared_ptr<OutputReader> reader;
    /// A longer output line reaches the reader in pieces: a JSON line then no longer parses,
    /// so a structured dialect needs room for its largest event.
    std::size_t max_line_bytes = 1u << 20;
    /// Bytes of output written to `log_file`; past them a marker line is written and the rest
    /// only read (the reader still sees every byte, so the run is judged as usual).
    std::uint64_t max_output = std::uint64_t{50} << 20;
};

struct ProcessOutcome {
    int exit_code = 0;
    bool timed_out = false;
    bool interrupted = false;  ///< stopped by interrupt(), e.g. the daemon shutting down
    std::string launch_error;  ///< non-empty: the agent never ran (`claude: not found on PATH`)
    std::chrono::milliseconds duration{0};
    int pid = 0;
    CapturedOutput output;
    std::uint64_t output_dropped = 0;  ///< bytes of output past `max_output`, not in the log
};

/// A thread of its own for confined launches. It filters itself once (sandbox.hpp,
/// filter_this_thread), so each agent cloned from it inherits the filter instead of having
/// the kernel build it again; and the io thread goes on with the other runs while a child
/// confines itself and execs (the clone holds its caller until then).
class LaunchingThread {
public:
    LaunchingThread();
    /// Waits for the launches it holds (those of stopped runs start nothing).
    ~LaunchingThread();
    LaunchingThread(const LaunchingThread&) = delete;
    LaunchingThread& operator=(const LaunchingThread&) = delete;

    /// Where confined launches run; null when the thread could not be filtered, and each
    /// child then filters itself.
    boost::asio::any_io_executor executor();

    /// The thread's id: the agents it starts are its children in /proc/self/task/<id>/children.
    pid_t thread_id() const { return thread_id_; }

private:
    boost::asio::thread_pool thread_{1};
    bool filtered_ = false;
    pid_t thread_id_ = 0;
};

/// Runs one process to its end. Create with std::make_shared; keep it alive while run() is
/// awaited. Single-threaded: call everything from the io_context's thread.
class AgentProcess : public std::enable_shared_from_this<AgentProcess> {
public:
    /// Confined launches run on `launch_confined_on` (a LaunchingThread's executor), the
    /// others, and all when it is null, on the caller's thread.
    explicit AgentProcess(boost::asio::any_io_executor executor,
                          boost::asio::any_io_executor launch_confined_on = {});
    /// A process still running when its holder goes (the daemon's loop ended by an internal
    /// error) is stopped with its whole group, never left behind.
    ~AgentProcess();
    AgentProcess(const AgentProcess&) = delete;
    AgentProcess& operator=(const AgentProcess&) = delete;

    /// Launches and waits for the process, its output drained. `on_started(pid)` is called
    /// once the process runs (its pid is its process group id).
    boost::asio::awaitable<ProcessOutcome> run(LaunchSpec spec,
                                               std::function<void(int pid)> on_started = {});

    /// Stops the group: SIGTERM now, SIGKILL after `grace`. The outcome says `interrupted`.
    void interrupt(std::chrono::milliseconds grace);
    /// SIGKILL to the group now.
    void kill_now();

    const std::string& last_line() const { return capture_->last_line(); }

private:
    enum class Stage { running, terminating, killed };

    boost::asio::any_io_executor executor_;
    boost::asio::any_io_executor launch_confined_on_;
    boost::asio::steady_timer timer_;
    std::optional<OutputCapture> capture_;
    Stage stage_ = Stage::running;
    bool exited_ = false;
    bool interrupted_ = false;
    bool timed_out_ = false;
    int pid_ = 0;
    /// The child's pid as soon as the launching thread has it, before this thread takes it
    /// into `pid_`: kill_now() and the destructor stop a child whose launch they interrupted.
    std::atomic<int> launched_pid_{0};
    /// What the launching thread must know of a stop: interrupt() or kill_now() before the
    /// clone starts nothing; kill_now() during it kills what it started.
    enum class StopAsked { no, interrupt, kill };
    std::atomic<StopAsked> stop_asked_{StopAsked::no};
    std::chrono::milliseconds grace_{0};
};

/// Where `spec.argv[0]` lives: a path with a `/` is taken relative to `spec.cwd`, a bare name
/// is looked up on PATH (never through a shell). nullopt and `error` when it is not there or
/// cannot be executed.
std::optional<std::filesystem::path> find_program(const LaunchSpec& spec, std::string& error);

/// Sends `signal` to the process group `pgid`. Returns false if no such group.
bool signal_group(int pgid, int signal);

}  // namespace board::orchestrator
