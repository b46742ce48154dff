#pragma once
// One agent run from start to end (spec/agents.md step 3): the prompt rendered and saved, the
// worktree made for implementing, the launch planned by the agent's dialect and confined, the
// agent run through an AgentLauncher, and what it left behind gathered into a RunRecord. The
// daemon appends the events (run_outcome.hpp decides which); this decides nothing about the
// ticket.

#include "orchestrator/agent_process.hpp"
#include "orchestrator/prompt.hpp"
#include "orchestrator/run_folder.hpp"
#include "orchestrator/run_outcome.hpp"

#include <board/board_config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace board::orchestrator {

/// One launched agent, as the daemon sees it: run it, stop it, see what it said last.
class AgentRun {
public:
    virtual ~AgentRun() = default;
    /// Runs the agent to its end (or until stopped), its output read by `spec.reader`.
    virtual boost::asio::awaitable<ProcessOutcome> run(LaunchSpec spec) = 0;
    /// Stops it: SIGTERM now, SIGKILL after `grace`. The outcome says `interrupted`.
    virtual void interrupt(std::chrono::milliseconds grace) = 0;
    virtual void kill_now() = 0;
    /// The last thing the agent said or did (for a live view).
    virtual const std::string& last_line() const = 0;
};

/// Where agents come from: processes for board-daemon (AgentProcess), a script in tests.
class AgentLauncher {
public:
    virtual ~AgentLauncher() = default;
    virtual std::shared_ptr<AgentRun> prepare(boost::asio::any_io_executor executor) = 0;
};

/// Launches each agent as a process of its own (agent_process.hpp).
std::unique_ptr<AgentLauncher> process_launcher();

/// What every run of one daemon shares.
struct RunContext {
    std::filesystem::path board_root;
    const BoardConfig* config = nullptr;
    const PromptTemplates* templates = nullptr;
    std::filesystem::path repository_git_dir;  ///< the board's repository's `.git`, if any
    bool sandbox_ok = false;                   ///< the sandbox probe passed at start
    SharedConfinement confinement;             ///< what every confined run shares
    boost::asio::any_io_executor executor;
    /// Where its file work runs (disk_work.hpp); null: on the caller's thread.
    boost::asio::any_io_executor disk;

    /// Whether runs of `phase` are confined.
    bool confined(Status phase) const;
};

/// A run whose `run-started` is on the log.
struct StartedRun {
    std::shared_ptr<AgentRun> agent;
    Status phase = Status::research;
    std::string run_id;
};

/// Runs `running` on `ticket` (as its `run-started` commit left it) to its end. nullopt: it
/// was interrupted (the daemon is stopping), and the caller records that.
boost::asio::awaitable<std::optional<RunRecord>> execute_run(const RunContext& context,
                                                             std::string id,
                                                             Ticket ticket,
                                                             StartedRun running);

}  // namespace board::orchestrator
